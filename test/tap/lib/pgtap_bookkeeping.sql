-- pgTAP's bookkeeping functions (the plan, the results, the notes and the
-- state of its todo blocks, kept in temporary tables) run without gpuhash: under
-- gpuhash.force their aggregates over those tables would be planned as
-- gpuhash nodes, and tests that inject device failures or hold device memory
-- would fail pgTAP itself rather than the query under test.  The functions
-- that run a test's own SQL (results_eq, throws_ok, ...) keep the session's
-- settings.  Run once, as the owner, in the database the tests use, after
-- CREATE EXTENSION pgtap and gpuhash (run-tests.sh).
DO $$
DECLARE
  f regprocedure;
BEGIN
  FOR f IN
    SELECT p.oid::regprocedure
    FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
    JOIN pg_extension e ON d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
    WHERE e.extname = 'pgtap'
      AND p.proname IN ('_add', '_cleanup', '_currtest', '_get', '_get_latest', '_get_note',
                        '_set', '_todo', 'add_result', 'plan', 'todo_end', 'num_failed', 'finish',
                        '_finish')
  LOOP
    EXECUTE format('ALTER FUNCTION %s SET gpuhash.enabled = off', f);
  END LOOP;
END $$;
