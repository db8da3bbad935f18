-- Shared by pgTAP files (included with \ir): a query's plan as text, its
-- rows' digest, waiting for the GPU service to hold and run nothing, and
-- parallel plans for small tables.

-- EXPLAIN of q as text: (COSTS OFF), or analyzed (ANALYZE, COSTS ON,
-- TIMING OFF, SUMMARY OFF), which shows where the engine ran and what fell back
CREATE FUNCTION pg_temp.plan_text(q text, analyzed boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  p text := '';
  line text;
BEGIN
  FOR line IN EXECUTE CASE WHEN analyzed THEN 'EXPLAIN (ANALYZE, COSTS ON, TIMING OFF, SUMMARY OFF) '
                           ELSE 'EXPLAIN (COSTS OFF) ' END || q LOOP
    p := p || line || E'\n';
  END LOOP;
  RETURN p;
END $$;

-- q's rows: their number and a digest (of the rows sorted as text); or the
-- error it raised
CREATE FUNCTION pg_temp.rows_digest(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  r text;
BEGIN
  EXECUTE format($f$SELECT count(*) || ' ' || md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), ''))
      FROM (%s) x$f$, q) INTO r;
  RETURN r;
EXCEPTION WHEN OTHERS THEN
  RETURN 'error ' || SQLSTATE || ': ' || SQLERRM;
END $$;

-- wait (up to 10 s) until the GPU service holds nothing and runs nothing: the
-- frees a query posts without waiting are served after it ends
CREATE FUNCTION pg_temp.service_settle() RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  FOR i IN 1..1000 LOOP
    EXIT WHEN (SELECT coalesce(sum(objects), 0) = 0 AND count(operation) = 0
               FROM gpuhash_service());
    PERFORM pg_sleep(0.01);
  END LOOP;
END $$;

-- parallel plans of up to n workers for the rest of the transaction, whatever
-- the tables' sizes (n = 0: serial plans again)
CREATE FUNCTION pg_temp.parallel_plans(n int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('max_parallel_workers_per_gather', n::text, true);
  PERFORM set_config('parallel_setup_cost', '0', true);
  PERFORM set_config('parallel_tuple_cost', '0', true);
  PERFORM set_config('min_parallel_table_scan_size', '0', true);
END $$;

-- the tests of a cases function (a tag's prefix -> its tests' lines) with
-- gpuhash forced on, serial plans first, then parallel ones of two workers
-- (for the rest of the transaction)
CREATE FUNCTION pg_temp.forced_serial_then_parallel(cases regproc) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('gpuhash.force', 'on', true);
  PERFORM pg_temp.parallel_plans(0);
  RETURN QUERY EXECUTE format('SELECT * FROM %s($1)', cases) USING 'serial,';
  PERFORM pg_temp.parallel_plans(2);
  RETURN QUERY EXECUTE format('SELECT * FROM %s($1)', cases) USING 'parallel,';
END $$;
