-- Shared by the differential pgTAP files (included with \ir): runs a query with
-- gpuhash off (PostgreSQL's own plan) or forced on and records its rows' digest
-- and its plan in the temporary table digests, for the files' same_rows tests.

CREATE TEMP TABLE digests (name text, mode text, nrows bigint, digest text, plan text);

CREATE FUNCTION pg_temp.run_mode(name text, q text, mode text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  p text := '';
  line text;
BEGIN
  PERFORM set_config('gpuhash.enabled', CASE WHEN mode = 'on' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('gpuhash.force', CASE WHEN mode = 'on' THEN 'on' ELSE 'off' END, true);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    p := p || line || E'\n';
  END LOOP;
  EXECUTE format($f$INSERT INTO digests
      SELECT %L, %L, count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')), %L
      FROM (%s) x$f$, name, mode, p, q);
END $$;
