-- Shared by the differential pgTAP files (included with \ir): run a query with
-- gpuhash off (PostgreSQL's own plan) or forced on, recording its rows' digest and
-- its plan in the temporary table digests, and compare the two.

CREATE TEMP TABLE digests (name text, mode text, nrows bigint, digest text, plan text);

CREATE FUNCTION pg_temp.run_mode(name text, q text, mode text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  p text := '';
  line text;
  n bigint;
  d text;
BEGIN
  PERFORM set_config('gpuhash.enabled', CASE WHEN mode = 'on' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('gpuhash.force', CASE WHEN mode = 'on' THEN 'on' ELSE 'off' END, true);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    p := p || line || E'\n';
  END LOOP;
  -- a plain SELECT, so the query may run in parallel workers (an INSERT ...
  -- SELECT, or a loop over the rows, never would)
  EXECUTE format($f$SELECT count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), ''))
      FROM (%s) x$f$, q) INTO n, d;
  INSERT INTO digests VALUES (name, mode, n, d, p);
END $$;

-- Runs q both ways and emits two TAP tests: same rows, and a plan that shows
-- node (with present = false: that does not).
CREATE FUNCTION pg_temp.same_rows(name text, q text, node text DEFAULT 'GpuHashJoin',
                                  present boolean DEFAULT true)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  a digests;
  b digests;
BEGIN
  PERFORM pg_temp.run_mode(name, q, 'off');
  PERFORM pg_temp.run_mode(name, q, 'on');
  SELECT * INTO a FROM digests d WHERE d.name = same_rows.name AND mode = 'off';
  SELECT * INTO b FROM digests d WHERE d.name = same_rows.name AND mode = 'on';
  RETURN NEXT is(b.nrows::text || ' ' || b.digest, a.nrows::text || ' ' || a.digest,
                 name || ': same rows with gpuhash on and off');
  RETURN NEXT is(position(node IN b.plan) > 0, present,
                 name || CASE WHEN present THEN ': plan uses ' ELSE ': plan does not use ' END || node);
END $$;
