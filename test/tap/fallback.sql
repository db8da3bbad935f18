-- CPU fallback (gpuhash.cpu_fallback): when the device cannot run an
-- operation, the node finishes on the CPU with PostgreSQL's rows.  Every kind
-- of node -- joins (inner, outer, flags only, in runs of a chunk's probe keys),
-- GROUP BY, fused joins, heap pages shipped to the engine, and in parallel
-- plans the pools the GPU service holds, fed rows and pages -- runs with a
-- failure injected at its first device operation, then its second, and so on
-- (gpuhash.debug_fail_after: the N-th device operation of a node, or of each
-- request in the GPU service, runs out of device memory) until a run has no
-- node fall back (gpuhash_stats counts them, in parallel workers too); every
-- run must return PostgreSQL's rows.  A GpuStarAgg of a serial plan is made
-- again on the CPU wherever its device fails it (the fact table read again);
-- in a parallel plan only where its star is made, tested there.  Through the GPU
-- service and in the backend's own engine.  With gpuhash.cpu_fallback off the
-- failure is the query's error, as before.  The tables are ordinary (parallel
-- workers read them) and vacuumed, so that their pages are shipped.
SET client_min_messages = warning;
DROP TABLE IF EXISTS fb_fact, fb_dim, fb_sdim, fb_sfact;
CREATE TABLE fb_fact AS
  SELECT g AS id,
         CASE WHEN g % 23 = 0 THEN NULL WHEN g % 10 = 0 THEN 7 ELSE (g * 7919) % 700 END::int8 AS k,
         (g % 1000)::int8 AS v,
         CASE WHEN g % 13 = 0 THEN NULL ELSE g % 7 END::int4 AS c
  FROM generate_series(1, 6000) g;
CREATE TABLE fb_dim AS
  SELECT g AS id, CASE WHEN g % 97 = 0 THEN NULL ELSE g % 600 END::int8 AS k, (g % 50)::int4 AS w
  FROM generate_series(1, 650) g;
-- a hot key: 32 dim rows for a tenth of fact, more pairs per chunk than one fetch
INSERT INTO fb_dim SELECT 10000 + g, 7, g % 9 FROM generate_series(1, 30) g;
-- a dimension unique on its key, for GpuStarAgg
CREATE TABLE fb_sdim (k int8 PRIMARY KEY, w int4);
INSERT INTO fb_sdim SELECT g, g % 37 FROM generate_series(0, 650) g;
-- a fact table of a few batches of pages (a test cluster's 128 MB of shared
-- buffers: 128 pages a batch), for GpuStarAgg to fail part way through
CREATE TABLE fb_sfact AS
  SELECT g AS id, ((g * 7919) % 700)::int8 AS k, (g % 1000)::int8 AS v,
         CASE WHEN g % 13 = 0 THEN NULL ELSE g % 7 END::int4 AS c
  FROM generate_series(1, 60000) g;
VACUUM (FREEZE, ANALYZE) fb_fact, fb_dim, fb_sdim, fb_sfact;
VACUUM fb_fact, fb_dim, fb_sdim, fb_sfact;
RESET client_min_messages;

BEGIN;
SELECT plan(73);

SET LOCAL max_parallel_workers_per_gather = 0;
-- chunks of 2000 outer rows, a fetch of 2000 pairs: several chunks and runs
SET LOCAL gpuhash.chunk_rows = 2000;
\ir lib/helpers.sql

-- is a GPU service worker running?
CREATE FUNCTION pg_temp.fb_service_up() RETURNS boolean
LANGUAGE sql AS $$ SELECT EXISTS (SELECT 1 FROM gpuhash_service() WHERE pid IS NOT NULL) $$;

-- gpuhash forced on, in the backend's own engine or through the GPU service
CREATE FUNCTION pg_temp.fb_mode(mode text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('gpuhash.enabled', (mode <> 'pg')::text, true);
  PERFORM set_config('gpuhash.force', (mode <> 'pg')::text, true);
  PERFORM set_config('gpuhash.service', (mode LIKE '%service%')::text, true);
  -- GpuStarAgg in the modes 'backend star' and 'service star' only
  PERFORM set_config('gpuhash.enable_star', (mode LIKE '% star')::text, true);
END $$;

-- plan nodes of this database that fell back so far (gpuhash_stats, which
-- counts those of parallel workers too); NULL where gpuhash is not
-- preloaded and nothing is counted
CREATE FUNCTION pg_temp.fb_fallbacks() RETURNS bigint
LANGUAGE sql AS $$
  SELECT cpu_fallbacks FROM gpuhash_stats WHERE datname = current_database()
$$;

-- q run with a failure injected at device operation 0, 1, ... until ten runs
-- in a row have no node fall back (gpuhash_stats, or without it EXPLAIN
-- ANALYZE's "CPU Fallback" of the leader): past the last operation (a
-- failure of a device array's allocation alone does not fall back: the
-- engine moves the array to host memory).  Returns the failure points whose
-- rows were not PostgreSQL's (bad), how many points had a fallback, and
-- whether the first failure fell back on the CPU.
CREATE FUNCTION pg_temp.fb_sweep(q text, mode text,
                                 OUT bad text, OUT points int, OUT first_fell_back boolean)
LANGUAGE plpgsql AS $$
DECLARE
  expected text;
  before bigint;
  fell_back boolean;
  n int := 0;
  clean int := 0;
BEGIN
  bad := '';
  points := 0;
  PERFORM pg_temp.fb_mode('pg');
  expected := pg_temp.rows_digest(q);
  PERFORM pg_temp.fb_mode(mode);
  LOOP
    PERFORM set_config('gpuhash.debug_fail_after', n::text, true);
    before := pg_temp.fb_fallbacks();
    IF pg_temp.rows_digest(q) <> expected THEN
      bad := bad || ' ' || n;
    END IF;
    IF before IS NOT NULL THEN
      fell_back := pg_temp.fb_fallbacks() > before;
    ELSE
      BEGIN
        fell_back := pg_temp.plan_text(q, true) ~ 'CPU Fallback';
      EXCEPTION WHEN OTHERS THEN
        fell_back := true;
      END;
    END IF;
    IF n = 0 THEN
      first_fell_back := fell_back;
    END IF;
    points := points + fell_back::int;
    clean := CASE WHEN fell_back THEN 0 ELSE clean + 1 END;
    n := n + 1;
    EXIT WHEN clean = 10;
    IF n = 500 THEN
      bad := bad || ' (still falling back after 500 points)';
      EXIT;
    END IF;
  END LOOP;
  PERFORM set_config('gpuhash.debug_fail_after', '-1', true);
  PERFORM pg_temp.service_settle();
END $$;

-- two tests: PostgreSQL's rows at every failure point, and the first one fell back
CREATE FUNCTION pg_temp.fb_same(name text, q text, mode text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  SELECT * INTO r FROM pg_temp.fb_sweep(q, mode);
  RETURN NEXT is(r.bad, '', format('%s (%s): PostgreSQL''s rows with a failure at each device operation (%s fell back)',
                                    name, mode, r.points));
  RETURN NEXT ok(r.first_fell_back,
                 format('%s (%s): the first device operation''s failure fell back on the CPU', name, mode));
END $$;

CREATE FUNCTION pg_temp.fb_tests(mode text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  IF mode = 'service' AND NOT pg_temp.fb_service_up() THEN
    RETURN QUERY SELECT skip('gpuhash is not preloaded: no GPU service to test', 16);
    RETURN;
  END IF;
  RETURN QUERY SELECT * FROM pg_temp.fb_same('join rows, in runs of probe keys',
    'SELECT f.id, d.id FROM fb_fact f JOIN fb_dim d ON f.k = d.k', mode);
  RETURN QUERY SELECT * FROM pg_temp.fb_same('left join',
    'SELECT f.id, d.w FROM fb_fact f LEFT JOIN fb_dim d ON f.k = d.k', mode);
  RETURN QUERY SELECT * FROM pg_temp.fb_same('full join',
    'SELECT f.id, d.id FROM fb_fact f FULL JOIN fb_dim d ON f.k = d.k', mode);
  RETURN QUERY SELECT * FROM pg_temp.fb_same('anti join (match flags)',
    'SELECT id FROM fb_fact f WHERE NOT EXISTS (SELECT 1 FROM fb_dim d WHERE d.k = f.k)', mode);
  RETURN QUERY SELECT * FROM pg_temp.fb_same('group by, shipped pages',
    'SELECT k % 100, count(*), sum(v), min(v), max(c) FROM fb_fact GROUP BY 1', mode);
  RETURN QUERY SELECT * FROM pg_temp.fb_same('group by a dictionary column',
    'SELECT k::text, c, count(*), sum(v) FROM fb_fact GROUP BY 1, 2', mode);
  RETURN QUERY SELECT * FROM pg_temp.fb_same('fused join',
    'SELECT d.w, count(*), sum(f.v), max(f.c) FROM fb_fact f JOIN fb_dim d ON f.k = d.k GROUP BY 1', mode);
  RETURN QUERY SELECT * FROM pg_temp.fb_same('fused join, plain aggregate',
    'SELECT count(*), sum(d.w), min(f.v) FROM fb_fact f JOIN fb_dim d ON f.k = d.k', mode);
END $$;

SELECT * FROM pg_temp.fb_tests('backend');
SELECT * FROM pg_temp.fb_tests('service');

-- parallel plans: each process falls back alone; pools fall back in the service
CREATE FUNCTION pg_temp.fb_parallel_tests() RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT pg_temp.fb_service_up() THEN
    RETURN QUERY SELECT skip('gpuhash is not preloaded: no GPU service to test', 7);
    RETURN;
  END IF;
  PERFORM pg_temp.parallel_plans(2);
  PERFORM set_config('gpuhash.debug_pool_batch', '500', true);
  RETURN QUERY SELECT * FROM pg_temp.fb_same('pooled group by, pages into the pool',
    'SELECT k % 100, count(*), sum(v), max(c) FROM fb_fact GROUP BY 1', 'service');
  RETURN QUERY SELECT * FROM pg_temp.fb_same('pooled fused join',
    'SELECT d.w, count(*), sum(f.v) FROM fb_fact f JOIN fb_dim d ON f.k = d.k GROUP BY 1', 'service');
  RETURN QUERY SELECT * FROM pg_temp.fb_same('parallel join rows',
    'SELECT f.id, d.id FROM fb_fact f JOIN fb_dim d ON f.k = d.k', 'service');
  RETURN QUERY SELECT ok(pg_temp.plan_text('SELECT k % 100, count(*), sum(v), max(c) FROM fb_fact GROUP BY 1', true)
                         ~ 'Pool: its groups taken from the GPU service',
                         'the pooled group by under test is pooled');
  PERFORM set_config('max_parallel_workers_per_gather', '0', true);
END $$;
SELECT pg_temp.fb_mode('service');
SELECT * FROM pg_temp.fb_parallel_tests();

-- GpuStarAgg: a failure at any device operation (where the star is made, in
-- any batch of pages, taking the groups) has the star made again on the CPU
-- and the fact table read again, with PostgreSQL's rows, for pages read
-- directly and for rows that come through the Seq Scan (a qual the device
-- does not evaluate).  In parallel plans: a star in the GPU service that
-- every process feeds (given up, the process that returns the groups reads
-- the whole fact table alone: the leader, or with the leader not taking part
-- the last worker), and the leader's own star, fed by the leader alone.
CREATE FUNCTION pg_temp.fb_star_tests(mode text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  q text := 'SELECT d.w, count(*), sum(f.v * d.w), max(f.c) FROM fb_sfact f JOIN fb_sdim d ON f.k = d.k '
            'WHERE f.c > 1 GROUP BY 1';
  q_rows text := 'SELECT d.w, count(*), sum(f.v) FROM fb_sfact f JOIN fb_sdim d ON f.k = d.k '
                 'WHERE f.v::text LIKE ''1%'' GROUP BY 1';
  q_whole text := 'SELECT d.w, count(*), sum(f.v * d.w), max(f.c) FROM fb_sfact f '
                  'JOIN (SELECT k, max(w) AS w FROM fb_sdim GROUP BY k) d ON f.k = d.k WHERE f.c > 1 GROUP BY 1';
  expected text;
BEGIN
  IF mode <> 'backend' AND NOT pg_temp.fb_service_up() THEN
    RETURN QUERY SELECT skip('gpuhash is not preloaded: no GPU service to test',
                             CASE mode WHEN 'parallel' THEN 13 ELSE 8 END);
    RETURN;
  END IF;
  IF mode <> 'parallel' THEN
    PERFORM pg_temp.fb_mode(mode || ' star');
    RETURN NEXT ok(pg_temp.plan_text(q_rows, false) ~ 'GpuStarAgg'
                   AND pg_temp.plan_text(q_rows, false) !~ 'Device Filter',
                   format('star (%s): the query whose rows come through the Seq Scan is a GpuStarAgg', mode));
    RETURN QUERY SELECT * FROM pg_temp.fb_same('star, pages read directly', q, mode || ' star');
    RETURN QUERY SELECT * FROM pg_temp.fb_same('star, rows through the Seq Scan', q_rows, mode || ' star');
  END IF;
  IF mode = 'parallel' THEN
    PERFORM pg_temp.parallel_plans(2);
    PERFORM pg_temp.fb_mode('service star');
    RETURN NEXT ok(pg_temp.plan_text(q_rows, false) ~ 'Parallel Custom Scan \(GpuStarAgg\)',
                   'star (parallel): the query whose rows come through the Seq Scan is a parallel GpuStarAgg');
    RETURN QUERY SELECT * FROM pg_temp.fb_same('star, pages read directly', q, 'parallel service star');
    RETURN QUERY SELECT * FROM pg_temp.fb_same('star, rows through the Seq Scan', q_rows, 'parallel service star');
    -- the leader not taking part: the worker that made the star of the
    -- dimension's shares returns the groups; or, the dimension read whole
    -- by the leader (not a parallel plan), the last worker out
    PERFORM set_config('parallel_leader_participation', 'off', true);
    RETURN QUERY SELECT * FROM pg_temp.fb_same('star, leader not taking part', q, 'parallel service star');
    RETURN NEXT ok(pg_temp.plan_text(q_whole, false) ~ 'Parallel Custom Scan \(GpuStarAgg\)'
                   AND pg_temp.plan_text(q_whole, false) ~ 'Subquery Scan on d\s+->  GroupAggregate',
                   'star (parallel): the query with a dimension the leader reads is a parallel GpuStarAgg');
    RETURN QUERY SELECT * FROM pg_temp.fb_same('star, leader not taking part, a dimension it reads', q_whole,
                                               'parallel service star');
    PERFORM set_config('parallel_leader_participation', 'on', true);
  END IF;
  PERFORM pg_temp.fb_mode('pg');
  expected := pg_temp.rows_digest(q);
  PERFORM pg_temp.fb_mode(CASE mode WHEN 'parallel' THEN 'service' ELSE mode END);
  PERFORM set_config('gpuhash.enable_star', 'on', true);
  RETURN NEXT ok(pg_temp.plan_text(q, false) ~ CASE mode WHEN 'parallel' THEN 'Parallel Custom Scan \(GpuStarAgg\)' ELSE 'GpuStarAgg' END,
                 format('star (%s): the query under test is a GpuStarAgg', mode));
  PERFORM set_config('gpuhash.debug_fail_after', '0', true);
  RETURN NEXT is(pg_temp.rows_digest(q), expected,
                 format('star (%s): PostgreSQL''s rows with a failure where the star is made', mode));
  RETURN NEXT matches(pg_temp.plan_text(q, true), 'CPU Fallback: out of device memory',
                      format('star (%s): EXPLAIN ANALYZE shows the fallback', mode));
  PERFORM set_config('gpuhash.debug_fail_after', '-1', true);
  PERFORM set_config('max_parallel_workers_per_gather', '0', true);
  PERFORM pg_temp.service_settle();
END $$;
SELECT * FROM pg_temp.fb_star_tests('backend');
SELECT * FROM pg_temp.fb_star_tests('service');
SELECT * FROM pg_temp.fb_star_tests('parallel');

-- EXPLAIN ANALYZE says that a node fell back, and why
SELECT pg_temp.fb_mode('backend');
SET LOCAL gpuhash.debug_fail_after = 0;
SELECT matches(pg_temp.plan_text('SELECT k % 100, count(*) FROM fb_fact GROUP BY 1', true),
               'CPU Fallback: out of device memory: [^\n]*injected failure',
               'EXPLAIN ANALYZE shows the fallback and why');
SET LOCAL gpuhash.debug_fail_after = -1;

-- gpuhash.cpu_fallback off: the device's failure is the query's error
SELECT pg_temp.fb_mode('backend');
SET LOCAL gpuhash.cpu_fallback = off;
SET LOCAL gpuhash.debug_fail_after = 0;
SELECT throws_ok('SELECT k % 100, count(*) FROM fb_fact GROUP BY 1', '53200', NULL,
                 'gpuhash.cpu_fallback off: a device failure in a GpuHashAgg raises out_of_memory');
SELECT throws_ok('SELECT f.id, d.id FROM fb_fact f JOIN fb_dim d ON f.k = d.k', '53200', NULL,
                 'gpuhash.cpu_fallback off: a device failure in a GpuHashJoin raises out_of_memory');
SET LOCAL gpuhash.debug_fail_after = -1;
-- (the failure armed only while q runs: pgTAP's own queries may plan a GpuStarAgg)
CREATE FUNCTION pg_temp.fb_error_at_first(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('gpuhash.debug_fail_after', '0', true);
  BEGIN
    EXECUTE q;
  EXCEPTION WHEN OTHERS THEN
    PERFORM set_config('gpuhash.debug_fail_after', '-1', true);
    RETURN SQLSTATE;
  END;
  PERFORM set_config('gpuhash.debug_fail_after', '-1', true);
  RETURN 'no error';
END $$;
SET LOCAL gpuhash.enable_star = on;
SELECT is(pg_temp.fb_error_at_first('SELECT d.w, count(*) FROM fb_fact f JOIN fb_sdim d ON f.k = d.k GROUP BY 1'),
          '53200', 'gpuhash.cpu_fallback off: a device failure in a GpuStarAgg raises out_of_memory');
SET LOCAL gpuhash.enable_star = off;
SET LOCAL gpuhash.cpu_fallback = on;

-- nothing is left behind in the service: no object, and no device memory
-- but the 512-byte scratch area each open engine keeps on each of its GPUs
-- for its life (cuda_common.cuh, GH_CUDA_SCRATCH_WORDS; none on the CPU
-- backend) and the page caches
SELECT pg_temp.service_settle();
SELECT is((SELECT coalesce(sum(objects), 0) || ' objects, '
                  || (coalesce(sum(device_bytes - page_cache_bytes), 0)
                      <= coalesce(sum(engines), 0) * 512 * greatest((SELECT count(*) FROM gpuhash_devices()), 1))::text
           FROM gpuhash_service()), '0 objects, true',
          'after the fallbacks the GPU service holds no table, join or pool, and no device memory beyond its engines'' own');

SELECT * FROM finish();
ROLLBACK;
