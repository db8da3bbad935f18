-- The gpuhash_stats view: per database, the queries that used each kind of
-- gpuhash node (once a statement), rows and heap pages sent to the device,
-- time in device operations, plan nodes that fell back on the CPU, and
-- engine errors raised to queries; gpuhash_stats_reset() clears them and is
-- not for every user.  The counters live in shared memory: where gpuhash is
-- not preloaded the view is empty (test/lifecycle.sh checks that), and the
-- counting tests are skipped.  The table is ordinary and vacuumed (parallel
-- workers read it, and its pages are shipped).
SET client_min_messages = warning;
DROP TABLE IF EXISTS st_fact, st_dim, st_udim;
CREATE TABLE st_fact AS SELECT g AS id, (g % 500)::int8 AS k, g % 100 AS v FROM generate_series(1, 20000) g;
CREATE TABLE st_dim AS SELECT g::int8 AS k, g % 7 AS w FROM generate_series(1, 500) g;
CREATE TABLE st_udim (k int8 PRIMARY KEY, w int4);
INSERT INTO st_udim SELECT g, g % 7 FROM generate_series(0, 499) g;
VACUUM (FREEZE, ANALYZE) st_fact, st_dim, st_udim;
VACUUM st_fact, st_dim, st_udim;
RESET client_min_messages;

BEGIN;
SELECT plan(21);

SELECT has_view('gpuhash_stats');
SELECT columns_are('gpuhash_stats',
  ARRAY['datid', 'datname', 'join_queries', 'groupby_queries', 'fused_queries', 'pooled_queries',
        'star_queries', 'rows_to_gpu', 'pages_to_gpu', 'gpu_time', 'cpu_fallbacks', 'errors', 'stats_reset'],
  'gpuhash_stats has the documented columns');
SELECT ok(NOT has_function_privilege('public', 'gpuhash_stats_reset()', 'EXECUTE'),
          'gpuhash_stats_reset is not executable by PUBLIC');
SELECT ok(has_table_privilege('public', 'gpuhash_stats', 'SELECT'),
          'gpuhash_stats is readable by every user, as pg_stat_database is');

SET LOCAL gpuhash.force = on;
SET LOCAL max_parallel_workers_per_gather = 0;

-- this database's counters now
CREATE FUNCTION pg_temp.st() RETURNS gpuhash_stats
LANGUAGE sql AS $$ SELECT * FROM gpuhash_stats WHERE datname = current_database() $$;

-- run q, and say how each counter moved: 'join_queries+1 rows_to_gpu+ ...'
-- (counts exact, other figures only whether they grew)
CREATE FUNCTION pg_temp.st_moved(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  a gpuhash_stats;
  b gpuhash_stats;
  r text := '';
BEGIN
  a := pg_temp.st();
  BEGIN
    EXECUTE q;
  EXCEPTION WHEN OTHERS THEN
    r := 'error ';
  END;
  b := pg_temp.st();
  r := r || concat_ws(' ',
    CASE WHEN b.join_queries > a.join_queries THEN 'join_queries+' || (b.join_queries - a.join_queries) END,
    CASE WHEN b.groupby_queries > a.groupby_queries THEN 'groupby_queries+' || (b.groupby_queries - a.groupby_queries) END,
    CASE WHEN b.fused_queries > a.fused_queries THEN 'fused_queries+' || (b.fused_queries - a.fused_queries) END,
    CASE WHEN b.pooled_queries > a.pooled_queries THEN 'pooled_queries+' || (b.pooled_queries - a.pooled_queries) END,
    CASE WHEN b.star_queries > a.star_queries THEN 'star_queries+' || (b.star_queries - a.star_queries) END,
    CASE WHEN b.rows_to_gpu > a.rows_to_gpu THEN 'rows_to_gpu+' END,
    CASE WHEN b.pages_to_gpu > a.pages_to_gpu THEN 'pages_to_gpu+' END,
    CASE WHEN b.gpu_time > a.gpu_time THEN 'gpu_time+' END,
    CASE WHEN b.cpu_fallbacks > a.cpu_fallbacks THEN 'cpu_fallbacks+' || (b.cpu_fallbacks - a.cpu_fallbacks) END,
    CASE WHEN b.errors > a.errors THEN 'errors+' || (b.errors - a.errors) END);
  RETURN r;
END $$;

-- Each query runs as a statement of its own: gpuhash_stats counts a query
-- once a (top-level) statement.  Where nothing is counted, the tests are
-- skipped.
-- (gpuhash.debug_fail_after disarmed while pgTAP's own queries run: under
-- gpuhash.force they may plan a GpuStarAgg); with pattern, want is a regular
-- expression the moves must match
CREATE FUNCTION pg_temp.st_is(q text, want text, description text,
                               pattern boolean DEFAULT false) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  fail_after text := current_setting('gpuhash.debug_fail_after');
  moved text;
  r text;
BEGIN
  IF current_setting('shared_preload_libraries') !~ 'gpuhash' THEN
    RETURN skip('gpuhash is not preloaded: nothing is counted', 1);
  END IF;
  moved := pg_temp.st_moved(q);
  PERFORM set_config('gpuhash.debug_fail_after', '-1', true);
  r := CASE WHEN pattern THEN matches(moved, want, description) ELSE is(moved, want, description) END;
  PERFORM set_config('gpuhash.debug_fail_after', fail_after, true);
  RETURN r;
END $$;

SET LOCAL gpuhash.service = off;
-- the statistics of this database exist once it has used gpuhash
SELECT count(*) FROM st_fact f JOIN st_dim d ON f.k = d.k;
SELECT CASE WHEN current_setting('shared_preload_libraries') ~ 'gpuhash'
  THEN is((SELECT count(*) FROM gpuhash_stats WHERE datname = current_database()), 1::bigint,
          'a row for this database')
  ELSE is((SELECT count(*) FROM gpuhash_stats), 0::bigint, 'not preloaded: no rows') END;
SELECT pg_temp.st_is('SELECT f.id, d.w FROM st_fact f JOIN st_dim d ON f.k = d.k',
                     'join_queries+1 rows_to_gpu+ pages_to_gpu+ gpu_time+',
                     'a GpuHashJoin: a join query, rows, pages and time on the device');
SELECT pg_temp.st_is('SELECT f.id FROM st_fact f JOIN st_dim d ON f.k = d.k JOIN st_dim e ON f.k = e.k',
                     'join_queries+1 rows_to_gpu+ pages_to_gpu+ gpu_time+',
                     'two GpuHashJoins in one statement: one join query');
SELECT pg_temp.st_is('SELECT k % 10, count(*) FROM st_fact GROUP BY 1',
                     'groupby_queries+1 rows_to_gpu+ pages_to_gpu+ gpu_time+',
                     'a GpuHashAgg: a GROUP BY query');
-- (st_dim has no key but its statistics find none twice: not a star here)
SET LOCAL gpuhash.enable_star = off;
SELECT pg_temp.st_is('SELECT d.w, count(*) FROM st_fact f JOIN st_dim d ON f.k = d.k GROUP BY 1',
                     'fused_queries+1 rows_to_gpu+ pages_to_gpu+ gpu_time+',
                     'a fused join and aggregation: a fused query');
RESET gpuhash.enable_star;
SET LOCAL gpuhash.service = on;
SELECT pg_temp.st_is('SELECT k % 10, count(*) FROM st_fact GROUP BY 1',
                     'groupby_queries+1 rows_to_gpu+ pages_to_gpu+ gpu_time+',
                     'through the GPU service: the same');
SELECT pg_temp.st_is('SELECT d.w, count(*), sum(f.v) FROM st_fact f JOIN st_udim d ON f.k = d.k GROUP BY 1',
                     'star_queries+1 pages_to_gpu+ gpu_time+',
                     'a GpuStarAgg: a star query, its pages and time on the device');
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT pg_temp.st_is('SELECT k % 10, count(*) FROM st_fact GROUP BY 1',
                     'groupby_queries+1 pooled_queries+1 pages_to_gpu+ gpu_time+',
                     'a parallel GROUP BY, its pages into a pool: one GROUP BY query, one pooled query');
SET LOCAL gpuhash.debug_fail_after = 0;
-- (each process of the query whose own operation meets the failure counts a
-- fallback: the leader, and a worker where it started in time)
SELECT pg_temp.st_is('SELECT k % 10, count(*) FROM st_fact GROUP BY 1',
                     '^groupby_queries\+1 pooled_queries\+1 rows_to_gpu\+ gpu_time\+ cpu_fallbacks\+[123]$',
                     'a failure in a pooled GROUP BY: the pool fell back (its pages come back as rows)',
                     pattern => true);
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT pg_temp.st_is('SELECT k % 10, count(*) FROM st_fact GROUP BY 1',
                     'groupby_queries+1 gpu_time+ cpu_fallbacks+1',
                     'a device failure falls back: counted, and no rows or pages went to the device');
SET LOCAL gpuhash.cpu_fallback = off;
SELECT pg_temp.st_is('SELECT k % 10, count(*) FROM st_fact GROUP BY 1',
                     'error groupby_queries+1 errors+1',
                     'with gpuhash.cpu_fallback off the failure is an error, counted');
SET LOCAL gpuhash.service = off;
SELECT pg_temp.st_is('SELECT k % 10, count(*) FROM st_fact GROUP BY 1',
                     'error groupby_queries+1 gpu_time+ errors+1',
                     '... in the backend''s engine too');
SET LOCAL gpuhash.cpu_fallback = on;
SET LOCAL gpuhash.debug_fail_after = -1;
SET LOCAL gpuhash.enabled = off;
SELECT pg_temp.st_is('SELECT k % 10, count(*) FROM st_fact GROUP BY 1', '',
                     'a query without gpuhash counts nothing');
SET LOCAL gpuhash.enabled = on;

SELECT gpuhash_stats_reset();
SELECT CASE WHEN current_setting('shared_preload_libraries') ~ 'gpuhash' THEN
  is((SELECT ARRAY[join_queries, groupby_queries, fused_queries, pooled_queries, star_queries,
                   rows_to_gpu, pages_to_gpu, cpu_fallbacks, errors]::text || ' ' || gpu_time
      FROM pg_temp.st()),
     '{0,0,0,0,0,0,0,0,0} 0', 'gpuhash_stats_reset() sets the counters back to 0')
  ELSE skip('gpuhash is not preloaded: nothing is counted', 1) END;
SELECT CASE WHEN current_setting('shared_preload_libraries') ~ 'gpuhash' THEN
  cmp_ok((SELECT stats_reset FROM pg_temp.st()), '>', now() - interval '1 minute', '... and says when')
  ELSE skip('gpuhash is not preloaded: nothing is counted', 1) END;
SELECT pg_temp.st_is('SELECT k % 10, count(*) FROM st_fact GROUP BY 1',
                     'groupby_queries+1 rows_to_gpu+ pages_to_gpu+ gpu_time+',
                     'and counting goes on');
SELECT ok((SELECT count(*) = count(DISTINCT datid) FROM gpuhash_stats), 'one row per database');

SELECT * FROM finish();
ROLLBACK;
