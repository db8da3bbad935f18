-- Faults in the middle of GPU plans: statement_timeout stops a long
-- GpuHashJoin, a long GpuHashAgg and a long fused join and aggregation (also
-- in parallel, its inner side shared), an error raised while joined rows are
-- formed aborts the query, an injected device failure raises a clean ERROR,
-- and after each the backend plans and runs the same
-- nodes again with the right answers (the engine's tables and results are
-- released with the aborted query's memory).
BEGIN;
SELECT plan(21);

SET LOCAL gpuhash.force = on;
SET LOCAL max_parallel_workers_per_gather = 0;

-- 20000 rows with one key: joined with itself, 400 million pairs
CREATE TEMP TABLE hot AS SELECT g AS id, 1 AS k FROM generate_series(1, 20000) g;
-- 400000 such rows: 160 billion pairs (an H200 joined 10 billion in under the
-- second the timeouts below allow)
CREATE TEMP TABLE hotter AS SELECT g AS id, 1 AS k FROM generate_series(1, 400000) g;
ANALYZE hot, hotter;

-- Runs q and says how it ended: 'finished', 'cancelled' or the SQLSTATE.
CREATE FUNCTION pg_temp.outcome(q text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'finished';
EXCEPTION
  WHEN query_canceled THEN
    RETURN 'cancelled';
  WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;

CREATE FUNCTION pg_temp.plan_of(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  p text := '';
  line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    p := p || line || E'\n';
  END LOOP;
  RETURN p;
END $$;

-- the plans under test really are gpuhash's
SELECT matches(pg_temp.plan_of('SELECT count(a.id + b.id) FROM hot a JOIN hot b ON a.k = b.k'),
               'GpuHashJoin', 'the join under test is a GpuHashJoin');
SELECT matches(pg_temp.plan_of('SELECT count(*), max(b.id) FROM hot a JOIN hot b ON a.k = b.k'),
               'Fused Join', 'the join and aggregation under test are fused');
SELECT matches(pg_temp.plan_of('SELECT g % 7, count(*) FROM generate_series(1, 200000000) g GROUP BY 1'),
               'GpuHashAgg', 'the grouping under test is a GpuHashAgg');

-- device memory in use once the engine has run a query: the faults below must
-- give all of it back (checked on the GPU backend; skipped on the CPU)
CREATE TEMP TABLE warm AS SELECT count(*) FROM hot a JOIN hot b ON a.k = b.k AND a.id = b.id;
CREATE TEMP TABLE mem_before AS
  SELECT coalesce(sum(memory_free_mb), 0) AS free_mb,
         (SELECT coalesce(sum(engines), 0) FROM gpuhash_service()) AS engines,
         (SELECT coalesce(sum(page_cache_bytes), 0) FROM gpuhash_service()) AS cache_bytes
  FROM gpuhash_devices();

SET LOCAL statement_timeout = '1s';
SELECT is(pg_temp.outcome('SELECT count(a.id + b.id) FROM hot a JOIN hot b ON a.k = b.k'),
          'cancelled', 'statement_timeout stops a GpuHashJoin producing 400 million rows');
SELECT is(pg_temp.outcome('SELECT count(*), max(b.id) FROM hotter a JOIN hotter b ON a.k = b.k'),
          'cancelled', 'statement_timeout stops a fused join aggregating 160 billion pairs');
SELECT is(pg_temp.outcome('SELECT count(*) FROM hot a WHERE NOT EXISTS (SELECT 1 FROM hot b WHERE b.k = a.k AND b.id < a.id - 1000000)'),
          'cancelled', 'statement_timeout stops an anti GpuHashJoin that never emits a row');
SELECT is(pg_temp.outcome('SELECT g % 7, count(*) FROM generate_series(1, 200000000) g GROUP BY 1'),
          'cancelled', 'statement_timeout stops a GpuHashAgg while it reads its input');
SET LOCAL statement_timeout = 0;

SELECT is(pg_temp.outcome('SELECT a.id / (a.id - 7) FROM hot a JOIN hot b ON a.k = b.k AND a.id = b.id'),
          '22012', 'an error while joined rows are formed aborts the query');

-- the device failing mid-query (gpuhash.debug_fail_after injects it into the
-- engine as running out of device memory would), with gpuhash.cpu_fallback
-- off (fallback.sql tests it on): a clean ERROR with SQLSTATE
SET LOCAL gpuhash.cpu_fallback = off;
SET LOCAL gpuhash.debug_fail_after = 0;
SELECT is(pg_temp.outcome('SELECT count(*) FROM hot a JOIN hot b ON a.k = b.k AND a.id = b.id'),
          '53200', 'a device failure while a GpuHashJoin builds raises out_of_memory');
SELECT is(pg_temp.outcome('SELECT id % 10, count(*) FROM hot GROUP BY 1'),
          '53200', 'a device failure in a GpuHashAgg raises out_of_memory');
SELECT is(pg_temp.outcome('SELECT count(*), max(b.id) FROM hot a JOIN hot b ON a.k = b.k'),
          '53200', 'a device failure in a fused join and aggregation raises out_of_memory');
SET LOCAL gpuhash.debug_fail_after = 2;
SELECT is(pg_temp.outcome('SELECT count(*) FROM hot a JOIN hot b ON a.k = b.k AND a.id = b.id'),
          '53200', 'a device failure later in a GpuHashJoin raises out_of_memory');
SET LOCAL gpuhash.debug_fail_after = -1;

SELECT is((SELECT count(*) FROM hot a JOIN hot b ON a.k = b.k AND a.id = b.id),
          20000::bigint, 'after the faults, a GpuHashJoin gives the right answer');
SELECT is((SELECT sum(c) FROM (SELECT id % 10, count(*) c FROM hot GROUP BY 1) x),
          20000::numeric, 'after the faults, a GpuHashAgg gives the right answer');
SELECT is((SELECT count(*) FROM hot a JOIN hot b ON a.k = b.k WHERE a.id <= 300 AND b.id <= 200),
          60000::bigint, 'after the faults, a fused join and aggregation gives the right answer');

-- the same faults in a parallel fused join whose processes share its inner
-- side (ordinary tables: parallel workers cannot read temporary ones)
CREATE TABLE gh_hot_f AS SELECT * FROM hotter;
CREATE TABLE gh_hot_d AS SELECT * FROM hotter;
ANALYZE gh_hot_f, gh_hot_d;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT matches(pg_temp.plan_of('SELECT count(*), max(b.id) FROM gh_hot_f a JOIN gh_hot_d b ON a.k = b.k'),
               'Gather(.|\n)*Shared Inner Side', 'the parallel fused join under test shares its inner side');
SET LOCAL statement_timeout = '1s';
SELECT is(pg_temp.outcome('SELECT count(*), max(b.id) FROM gh_hot_f a JOIN gh_hot_d b ON a.k = b.k'),
          'cancelled', 'statement_timeout stops a parallel fused join over 160 billion pairs');
SET LOCAL statement_timeout = 0;
SET LOCAL gpuhash.debug_fail_after = 0;
SELECT is(pg_temp.outcome('SELECT count(*), max(b.id) FROM gh_hot_f a JOIN gh_hot_d b ON a.k = b.k'),
          '53200', 'a device failure in the processes of a parallel fused join raises out_of_memory');
SET LOCAL gpuhash.debug_fail_after = -1;
SELECT is((SELECT count(*) FROM gh_hot_f a JOIN gh_hot_d b ON a.k = b.k WHERE a.id <= 3000 AND b.id <= 20),
          60000::bigint, 'after the faults, a parallel fused join gives the right answer');
SET LOCAL max_parallel_workers_per_gather = 0;

SELECT CASE WHEN current_setting('gpuhash.device') = 'gpu'
  THEN ok((SELECT count(*) FROM gpuhash_devices()) > 0, 'gpuhash.device = gpu sees a GPU')
  ELSE skip('the CPU backend has no device memory', 1) END;
-- the GPU service stops cancelled work at its engine's next poll: let it
-- finish, and go idle (an idle service worker gives back the device memory its
-- last operations freed after their last synchronisation)
DO $$
BEGIN
  FOR i IN 1..600 LOOP
    EXIT WHEN NOT EXISTS (SELECT 1 FROM gpuhash_service() WHERE operation IS NOT NULL);
    PERFORM pg_sleep(0.1);
  END LOOP;
  PERFORM pg_sleep(0.5);
END $$;
SELECT CASE WHEN current_setting('gpuhash.device') = 'gpu'
  THEN cmp_ok((SELECT coalesce(sum(memory_free_mb), 0) FROM gpuhash_devices()),
              '>=', (SELECT free_mb - 64
                        -- an engine the GPU service opened meanwhile holds a context
                        - 1024 * ((SELECT coalesce(sum(engines), 0) FROM gpuhash_service()) - engines)
                        -- and the page caches as they filled
                        - ((SELECT coalesce(sum(page_cache_bytes), 0) FROM gpuhash_service())
                           - cache_bytes) / 1048576
                     FROM mem_before),
              'device memory is given back after cancelled and failed queries')
  ELSE skip('the CPU backend has no device memory', 1) END;

SELECT * FROM finish();
ROLLBACK;
