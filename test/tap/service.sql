-- The GPU service: with gpuhash preloaded, service processes run the engine
-- for every backend and parallel worker.  Every query runs three ways --
-- PostgreSQL's own plan, gpuhash forced on in the backend (gpuhash.service
-- = off), gpuhash forced on through the service -- and must return the same
-- rows; EXPLAIN ANALYZE must show where the engine ran.  Then the service's
-- errors: an engine failure comes back with its SQLSTATE and the service
-- goes on; a cancelled query leaves no table or join behind.  Skipped where
-- the server was started without gpuhash in shared_preload_libraries.
BEGIN;
SELECT plan(108);
\ir lib/helpers.sql
-- GpuHashJoin's and GpuHashAgg's service operations (GpuStarAgg's: test/tap/star.sql)
SET LOCAL gpuhash.enable_star = off;

SELECT setseed(0.4142);
CREATE TABLE gh_sv_fact AS
  SELECT g AS id,
         CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 5000)::int END AS k,
         (random() * 1000)::bigint AS v,
         CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 7)::smallint END AS c,
         (random() * 100)::numeric(8,2) AS price,
         md5((g % 30)::text) AS t
  FROM generate_series(1, 60000) g;
CREATE TABLE gh_sv_dim AS
  SELECT g AS id,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 6000)::bigint END AS k,
         (random() * 100)::int AS w
  FROM generate_series(1, 8000) g;
-- a hot key: 40 dim rows match a tenth of fact, more pairs than one fetch holds
INSERT INTO gh_sv_dim SELECT 10000 + g, 7, g % 9 FROM generate_series(1, 40) g;
UPDATE gh_sv_fact SET k = 7 WHERE id % 10 = 0;
CREATE TABLE gh_sv_empty (k int, v bigint);
-- numeric values of declared precisions, NaN and NULLs among them (pooled sums)
CREATE TABLE gh_sv_num AS
  SELECT g AS id, g % 997 AS k,
         (CASE WHEN g % 13 = 0 THEN NULL WHEN g % 4999 = 0 THEN 'NaN'
               ELSE round(((random() - 0.5) * 2e8)::numeric, 3) END)::numeric(12,3) AS n,
         (g * 37 % 100000)::numeric(6,-2) AS m
  FROM generate_series(1, 60000) g;
ANALYZE gh_sv_fact, gh_sv_dim, gh_sv_empty, gh_sv_num;

-- is a GPU service worker running?
CREATE FUNCTION pg_temp.sv_up() RETURNS boolean
LANGUAGE sql AS $$ SELECT EXISTS (SELECT 1 FROM gpuhash_service() WHERE pid IS NOT NULL) $$;

CREATE TEMP TABLE sv (name text, mode text, nrows bigint, digest text, plan text, served bigint);

-- the settings of a mode: pg (gpuhash off), backend (forced, gpuhash.service
-- off) or service (forced, through the service)
CREATE FUNCTION pg_temp.sv_mode(mode text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('gpuhash.enabled', (mode <> 'pg')::text, true);
  PERFORM set_config('gpuhash.force', (mode <> 'pg')::text, true);
  PERFORM set_config('gpuhash.service', (mode = 'service')::text, true);
END $$;

-- run q as mode says (pg, backend, service) into sv
CREATE FUNCTION pg_temp.sv_run(name text, q text, mode text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  p text := '';
  line text;
  n bigint;
  d text;
  before bigint;
BEGIN
  PERFORM pg_temp.service_settle();
  before := (SELECT coalesce(sum(requests), 0) FROM gpuhash_service());
  PERFORM pg_temp.sv_mode(mode);
  EXECUTE format($f$SELECT count(*), md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), ''))
      FROM (%s) x$f$, q) INTO n, d;
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS ON, TIMING OFF, SUMMARY OFF) ' || q LOOP
    p := p || line || E'\n';
  END LOOP;
  PERFORM pg_temp.service_settle();
  INSERT INTO sv VALUES (name, mode, n, d, p,
    (SELECT coalesce(sum(requests), 0) FROM gpuhash_service()) - before);
END $$;

-- three tests: the service's rows are PostgreSQL's and the backend's, and the
-- service ran operations for it and none for the backend's run (with
-- engine_ran = false: none either way).  gpuhash_service() counts them: EXPLAIN
-- ANALYZE does not show the figures of parallel workers' nodes.
CREATE FUNCTION pg_temp.sv_same(name text, q text, engine_ran boolean DEFAULT true)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  a sv; b sv; c sv;
BEGIN
  PERFORM pg_temp.sv_run(name, q, 'pg');
  PERFORM pg_temp.sv_run(name, q, 'backend');
  PERFORM pg_temp.sv_run(name, q, 'service');
  SELECT * INTO a FROM sv WHERE sv.name = sv_same.name AND mode = 'pg';
  SELECT * INTO b FROM sv WHERE sv.name = sv_same.name AND mode = 'backend';
  SELECT * INTO c FROM sv WHERE sv.name = sv_same.name AND mode = 'service';
  RETURN NEXT is(c.nrows || ' ' || c.digest, a.nrows || ' ' || a.digest,
                 name || ': the service returns PostgreSQL''s rows');
  RETURN NEXT is(c.nrows || ' ' || c.digest, b.nrows || ' ' || b.digest,
                 name || ': the service returns the backend engine''s rows');
  RETURN NEXT ok(b.served = 0 AND (c.served > 0) = engine_ran AND c.plan !~ 'Engine: backend',
                 name || CASE WHEN engine_ran THEN ': the service ran the engine, and not with gpuhash.service off'
                         ELSE ': no engine operation was needed' END);
END $$;

-- q's plan (EXPLAIN, costs off) with gpuhash on and the cost model choosing
CREATE FUNCTION pg_temp.sv_plan(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  p text := '';
  line text;
BEGIN
  PERFORM set_config('gpuhash.enabled', 'on', true);
  PERFORM set_config('gpuhash.force', 'off', true);
  PERFORM set_config('gpuhash.service', 'on', true);
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    p := p || line || E'\n';
  END LOOP;
  RETURN p;
END $$;

CREATE FUNCTION pg_temp.sv_tests() RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_temp.sv_up() THEN
    RETURN QUERY SELECT skip('gpuhash is not preloaded: no GPU service to test', 92);
    RETURN;
  END IF;
  PERFORM set_config('max_parallel_workers_per_gather', '0', true);
  RETURN QUERY SELECT * FROM pg_temp.sv_same('group by expression',
    'SELECT k % 100, count(*), sum(v), min(v), max(v) FROM gh_sv_fact GROUP BY 1');
  RETURN QUERY SELECT ok(c.plan ~ 'Engine: GPU service' AND b.plan ~ 'Engine: backend',
                         'EXPLAIN ANALYZE shows where the engine ran')
    FROM sv c, sv b WHERE c.name = 'group by expression' AND c.mode = 'service'
                      AND b.name = c.name AND b.mode = 'backend';
  RETURN QUERY SELECT * FROM pg_temp.sv_same('group by a NULL-able smallint',
    'SELECT c, count(*), avg(v), sum(price) FROM gh_sv_fact GROUP BY c');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('group by text (dictionary)',
    'SELECT t, count(*), sum(v) FROM gh_sv_fact GROUP BY t');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('plain aggregate of an empty table',
    'SELECT k, count(*), sum(v) FROM gh_sv_empty GROUP BY k', false);
  RETURN QUERY SELECT * FROM pg_temp.sv_same('fused join, grouped',
    'SELECT d.w, count(*), sum(f.v) FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k GROUP BY 1');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('fused join, plain',
    'SELECT count(*), sum(d.w), max(f.price) FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('join rows',
    'SELECT f.id, d.id FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k');
  -- small chunks and pair fetches: many round trips to the service
  PERFORM set_config('gpuhash.chunk_rows', '1000', true);
  RETURN QUERY SELECT * FROM pg_temp.sv_same('join rows, small chunks',
    'SELECT f.id, d.id FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('left join, small chunks',
    'SELECT f.id, d.w FROM gh_sv_fact f LEFT JOIN gh_sv_dim d ON f.k = d.k');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('full join, small chunks',
    'SELECT f.id, d.id FROM gh_sv_fact f FULL JOIN gh_sv_dim d ON f.k = d.k');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('semi join (match flags only)',
    'SELECT id FROM gh_sv_fact f WHERE EXISTS (SELECT 1 FROM gh_sv_dim d WHERE d.k = f.k)');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('anti join (match flags only)',
    'SELECT id FROM gh_sv_fact f WHERE NOT EXISTS (SELECT 1 FROM gh_sv_dim d WHERE d.k = f.k)');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('join of an empty side',
    'SELECT f.id FROM gh_sv_fact f JOIN gh_sv_empty e ON f.k = e.k', false);
  PERFORM set_config('gpuhash.chunk_rows', '1048576', true);
  -- another engine shape in the service: a small memory limit (partitions) and,
  -- on the CPU backend, three simulated devices
  PERFORM set_config('gpuhash.memory_limit', '1', true);
  PERFORM set_config('gpuhash.devices',
    CASE WHEN current_setting('gpuhash.device') = 'cpu' THEN '0,1,2' ELSE 'all' END, true);
  RETURN QUERY SELECT * FROM pg_temp.sv_same('another engine shape',
    'SELECT d.w, count(*), sum(f.v) FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k GROUP BY 1');
  PERFORM set_config('gpuhash.devices', 'all', true);
  PERFORM set_config('gpuhash.memory_limit', '0', true);

  -- parallel workers are clients too
  PERFORM set_config('max_parallel_workers_per_gather', '2', true);
  PERFORM set_config('parallel_setup_cost', '0', true);
  PERFORM set_config('parallel_tuple_cost', '0', true);
  PERFORM set_config('min_parallel_table_scan_size', '0', true);
  PERFORM set_config('parallel_leader_participation', 'off', true);
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel group by',
    'SELECT k % 100, count(*), sum(v) FROM gh_sv_fact GROUP BY 1');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel fused join',
    'SELECT d.w, count(*), sum(f.v) FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k GROUP BY 1');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel join rows',
    'SELECT f.id, d.id FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k');
  RETURN QUERY SELECT ok(plan ~ 'Gather' AND plan ~ 'Workers Launched: 2',
                         'parallel fused join: ran in two parallel workers')
    FROM sv WHERE name = 'parallel fused join' AND mode = 'service';
  -- pooled: the processes append their rows to one pool in the service and the
  -- last one out returns every group, once (PostgreSQL 18 prints rows=0.00)
  RETURN QUERY SELECT ok(plan ~ 'Gather[^\n]*actual rows=0(\.00)? loops' AND plan ~ 'Pool: its groups taken from the GPU service',
                         'parallel group by: the final node takes the pooled groups from the service, none come through the Gather')
    FROM sv WHERE name = 'parallel group by' AND mode = 'service';
  -- or the last process returns them through the Gather, once
  PERFORM set_config('gpuhash.debug_pool_relay', 'on', true);
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel group by, relayed',
    'SELECT k % 100, count(*), sum(v) FROM gh_sv_fact GROUP BY 1');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel fused join, relayed',
    'SELECT f.c, count(*), sum(d.w), min(f.v), avg(f.v) FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k GROUP BY 1');
  PERFORM set_config('gpuhash.debug_pool_relay', 'off', true);
  RETURN QUERY SELECT ok(plan ~ 'Gather[^\n]*actual rows=101(\.00)? loops' AND plan ~ 'Pool: its groups taken as they are',
                         'parallel group by, relayed: the pooled groups come through the Gather once and are not aggregated again')
    FROM sv WHERE name = 'parallel group by, relayed' AND mode = 'service';
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel group by with NULL patterns',
    'SELECT c, k % 50, count(*), sum(v), max(v), avg(v) FROM gh_sv_fact GROUP BY 1, 2');
  -- numeric sums pool where the argument's declared precision fixes their columns
  -- (NaN, NULLs, negative values and a negative scale among them); without one, not
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel group by of numeric sums of a declared precision',
    'SELECT k, sum(n), avg(n), count(n), sum(m), avg(m) FROM gh_sv_num GROUP BY 1');
  RETURN QUERY SELECT ok(plan ~ 'Gather[^\n]*actual rows=0(\.00)? loops' AND plan ~ 'Pool: its groups taken from the GPU service',
                         'parallel group by of numeric sums of a declared precision: pooled, no group through the Gather')
    FROM sv WHERE name = 'parallel group by of numeric sums of a declared precision' AND mode = 'service';
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel group by of numeric sums of no declared precision',
    'SELECT k, sum(n * 2), count(*) FROM gh_sv_num GROUP BY 1');
  RETURN QUERY SELECT ok(plan !~ 'Pool: ',
                         'parallel group by of numeric sums of no declared precision: not pooled')
    FROM sv WHERE name = 'parallel group by of numeric sums of no declared precision' AND mode = 'service';
  PERFORM set_config('gpuhash.debug_pool_relay', 'on', true);
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel group by of numeric sums, relayed',
    'SELECT k, sum(n), avg(n), count(n), sum(m), avg(m) FROM gh_sv_num GROUP BY 1');
  PERFORM set_config('gpuhash.debug_pool_relay', 'off', true);
  -- rows go to the pool as they are read, a batch at a time: with batches of
  -- 1000 rows, many appends (each a request to the service), same rows
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel fused join, plain',
    'SELECT count(*), sum(d.w), max(f.v) FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k');
  PERFORM set_config('gpuhash.debug_pool_batch', '1000', true);
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel group by, batches of 1000',
    'SELECT c, k % 50, count(*), sum(v), max(v), avg(v) FROM gh_sv_fact GROUP BY 1, 2');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel fused join, batches of 1000',
    'SELECT d.w, count(*), sum(f.v) FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k GROUP BY 1');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel fused join by an outer column, batches of 1000',
    'SELECT f.c, count(*), sum(d.w), min(f.v) FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k GROUP BY 1');
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel fused join, plain, batches of 1000',
    'SELECT count(*), sum(d.w), max(f.v) FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k');
  -- a pooled aggregation whose processes fail after appending: the error is
  -- theirs, and the pool goes with the query, not with the transaction
  PERFORM pg_temp.service_settle();
  PERFORM pg_temp.sv_mode('service');
  RETURN QUERY SELECT throws_ok(
    'SELECT k % 10, count(*), sum(v / (id - 45000)) FROM gh_sv_fact GROUP BY 1', '22012', NULL,
    'a pooled aggregation failing in its processes raises their error');
  PERFORM pg_temp.service_settle();
  RETURN QUERY SELECT is((SELECT sum(objects) FROM gpuhash_service()), 0::bigint,
                         'a failed pooled aggregation leaves no pool in the service');
  PERFORM set_config('gpuhash.debug_pool_batch', '0', true);
  RETURN QUERY SELECT cmp_ok(b.served, '>=', a.served + 40,
                             'parallel group by: batches of 1000 rows are 40 and more appends more')
    FROM sv a, sv b WHERE a.name = 'parallel group by with NULL patterns' AND a.mode = 'service'
      AND b.name = 'parallel group by, batches of 1000' AND b.mode = 'service';
  RETURN QUERY SELECT cmp_ok(b.served, '>=', a.served + 40,
                             'parallel fused join: batches of 1000 rows of both sides are 40 and more appends more')
    FROM sv a, sv b WHERE a.name = 'parallel fused join, plain' AND a.mode = 'service'
      AND b.name = 'parallel fused join, plain, batches of 1000' AND b.mode = 'service';
  -- the cost model: pooled, no partial group crosses the Gather (by
  -- parallel_tuple_cost each), so with 5000 groups the parallel plan wins;
  -- without pools the single-process one does
  PERFORM set_config('gpuhash.min_rows', '1000', true);
  PERFORM set_config('parallel_tuple_cost', '0.1', true);
  RETURN QUERY SELECT ok(pg_temp.sv_plan('SELECT k, count(*), sum(v) FROM gh_sv_fact GROUP BY k')
                         ~ 'Parallel Custom Scan \(GpuHashAgg\)',
                         'cost model: a pooled parallel GROUP BY of 5000 groups is chosen on its own');
  PERFORM set_config('gpuhash.enable_pool', 'off', true);
  RETURN QUERY SELECT ok(pg_temp.sv_plan('SELECT k, count(*), sum(v) FROM gh_sv_fact GROUP BY k')
                         !~ 'Parallel Custom Scan \(GpuHashAgg\)',
                         'cost model: without pools, 5000 partial groups from every process through the Gather keep it in one process');
  PERFORM set_config('parallel_tuple_cost', '0', true);
  PERFORM set_config('gpuhash.min_rows',
    (SELECT reset_val FROM pg_settings WHERE name = 'gpuhash.min_rows'), true);
  RETURN QUERY SELECT * FROM pg_temp.sv_same('parallel group by, no pool',
    'SELECT c, k % 50, count(*), sum(v), max(v), avg(v) FROM gh_sv_fact GROUP BY 1, 2');
  RETURN QUERY SELECT ok(plan !~ 'Pool:', 'parallel group by, no pool: partial groups aggregated again')
    FROM sv WHERE name = 'parallel group by, no pool' AND mode = 'service';
  PERFORM set_config('gpuhash.enable_pool', 'on', true);
  PERFORM set_config('max_parallel_workers_per_gather', '0', true);

  -- an engine failure in the service is the backend's error (gpuhash.cpu_fallback
  -- off; fallback.sql tests it on), and the service goes on
  PERFORM pg_temp.sv_mode('service');
  PERFORM set_config('gpuhash.cpu_fallback', 'off', true);
  PERFORM set_config('gpuhash.debug_fail_after', '0', true);
  RETURN QUERY SELECT throws_ok(
    'SELECT k % 100, count(*) FROM gh_sv_fact GROUP BY 1', '53200', NULL,
    'a device memory failure in the service raises out_of_memory');
  RETURN QUERY SELECT throws_ok(
    'SELECT count(*) FROM (SELECT f.id FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k) x', '53200', NULL,
    'a failed build in the service raises out_of_memory');
  PERFORM set_config('gpuhash.debug_fail_after', '-1', true);
  PERFORM set_config('gpuhash.cpu_fallback', 'on', true);
  RETURN QUERY SELECT is((SELECT count(*) FROM (SELECT k % 100, count(*) FROM gh_sv_fact GROUP BY 1) x),
                         101::bigint, 'after a failure the service serves the next query');

END $$;

SELECT * FROM pg_temp.sv_tests();

-- a cancelled query: the error is the cancel's (statement_timeout is armed when
-- a statement starts, so it is set here, between statements), and its tables
-- and joins are freed
CREATE FUNCTION pg_temp.sv_cancelled(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_temp.sv_up() THEN
    RETURN skip('gpuhash is not preloaded: no GPU service to test');
  END IF;
  BEGIN
    EXECUTE q;
  EXCEPTION WHEN query_canceled THEN
    RETURN pass('a statement timeout while the service joins cancels the query');
  END;
  RETURN fail('a statement timeout while the service joins cancels the query');
END $$;

CREATE FUNCTION pg_temp.sv_after_cancel() RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_temp.sv_up() THEN
    RETURN QUERY SELECT skip('gpuhash is not preloaded: no GPU service to test', 4);
    RETURN;
  END IF;
  PERFORM pg_temp.service_settle();
  RETURN NEXT is((SELECT sum(s.objects) FROM gpuhash_service() s), 0::bigint,
                 'no table or join is left in the service');
  RETURN NEXT ok((SELECT bool_and(pid IS NOT NULL) FROM gpuhash_service()),
                 'every service worker still runs');
  RETURN NEXT ok((SELECT sum(requests) FROM gpuhash_service()) > 0,
                 'gpuhash_service() counts the operations served');
  RETURN NEXT ok((SELECT sum(engines) FROM gpuhash_service()) > 0 AND
                 (SELECT count(*) FROM gpuhash_service() WHERE operation IS NOT NULL) = 0,
                 'gpuhash_service() shows the engines open, and no operation running when idle');
END $$;

SET LOCAL gpuhash.enabled = on;
SET LOCAL gpuhash.force = on;
SET LOCAL gpuhash.service = on;
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpuhash.chunk_rows = 1000;
SET LOCAL statement_timeout = '50ms';
SELECT pg_temp.sv_cancelled($q$SELECT count(*), sum(x.a + x.b) FROM (SELECT f.id a, d.id b
  FROM gh_sv_fact f JOIN gh_sv_dim d ON f.k = d.k CROSS JOIN generate_series(1, 20)) x$q$);
SET LOCAL statement_timeout = 0;
SELECT * FROM pg_temp.sv_after_cancel();

SELECT * FROM finish();
ROLLBACK;
