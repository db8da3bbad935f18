-- Differential tests for aggregations fused with their join: a GROUP BY or
-- plain aggregate over an inner equi-join runs as one GpuHashAgg that joins
-- and aggregates on the device.  Every query runs with gpuhash off and
-- forced on and must return the same rows; the "on" plan must show the
-- fused join ("Fused Join"), or, for the queries that cannot be fused, must
-- not.  Random data with duplicates, skew, NULL join keys, NULL grouping
-- columns, empty sides, several chunks, partitions and simulated devices.
BEGIN;
SELECT plan(105);

SET LOCAL max_parallel_workers_per_gather = 0;
SELECT setseed(0.2718);

CREATE TEMP TABLE fact AS
  SELECT g AS id,
         CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 5000)::int END AS k,
         (random() * 1000)::bigint AS v,
         CASE WHEN g % 11 = 0 THEN NULL ELSE (g % 7)::smallint END AS c,
         CASE WHEN g % 19 = 0 THEN NULL ELSE (g % 13)::text END AS ft
  FROM generate_series(1, 30000) g;
CREATE TEMP TABLE dim AS
  SELECT g AS id,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 6000)::bigint END AS k,
         (random() * 100)::int AS w,
         CASE WHEN g % 3 = 0 THEN NULL ELSE g % 5 END AS nk,
         (random() * 1000)::numeric(10,2) AS price,
         random() * 10 AS f,
         md5((g % 40)::text) AS t
  FROM generate_series(1, 8000) g;
-- skew: a third of the rows share one key, which dim holds many times
CREATE TEMP TABLE skew AS
  SELECT g AS id,
         CASE WHEN g % 3 = 0 THEN 7 ELSE (power(random(), 4) * 3000)::int END AS k,
         g % 17 AS w
  FROM generate_series(1, 12000) g;
INSERT INTO dim SELECT 9000 + g, 7, g % 10, NULL, 1.5, 0.5, 'hot' FROM generate_series(1, 200) g;
CREATE TEMP TABLE none_t (k int, w int);
CREATE TEMP TABLE nn (k int NOT NULL, g8 bigint NOT NULL, s smallint NOT NULL);
INSERT INTO nn SELECT g % 5000, (g % 37) * 1000000000000, g % 3 FROM generate_series(1, 6000) g;
ANALYZE fact, dim, skew, none_t, nn;

\ir lib/digests.sql

CREATE FUNCTION pg_temp.all_cases(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' plain',
    'SELECT count(*), sum(d.w), min(f.v), max(d.w), avg(f.v), count(f.c) FROM fact f JOIN dim d ON f.k = d.k', 'Fused Join');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' by inner column',
    'SELECT d.w, count(*), sum(f.v), max(f.v) FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.w', 'Fused Join');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' by outer expression',
    'SELECT f.v % 10, count(*), sum(d.w), min(d.id) FROM fact f JOIN dim d ON f.k = d.k GROUP BY 1', 'Fused Join');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' by both sides, NULL groups',
    'SELECT f.c, d.nk, count(*), sum(d.w), avg(f.v::bigint) FROM fact f JOIN dim d ON f.k = d.k GROUP BY f.c, d.nk', 'Fused Join');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' dictionary keys on one side',
    'SELECT d.t, f.c, count(*), sum(f.v), max(d.w) FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.t, f.c', 'Fused Join');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' NULL dictionary keys',
    'SELECT f.ft, d.nk > 2, count(*), avg(d.w) FROM fact f JOIN dim d ON f.k = d.k GROUP BY 1, 2', 'Fused Join');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' int8 grouping columns (dictionary)',
    'SELECT f.v, f.c, count(*), sum(d.w) FROM fact f JOIN dim d ON f.k = d.k GROUP BY 1, 2', 'Fused Join');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' skew',
    'SELECT s.w, count(*), sum(d.w), max(d.id) FROM skew s JOIN dim d ON s.k = d.k GROUP BY s.w', 'Fused Join');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' numeric and float',
    'SELECT d.nk, sum(d.price), avg(d.price), round(sum(d.f)::numeric, 6), sum(f.v::numeric / 8) FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.nk', 'Fused Join');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' filter and having',
    'SELECT d.w % 5, count(*) FILTER (WHERE d.w > 50), sum(f.v) FILTER (WHERE f.v > 500) FROM fact f JOIN dim d ON f.k = d.k GROUP BY 1 HAVING count(*) > 10', 'Fused Join');
END $$;

-- one chunk, default memory
SELECT * FROM pg_temp.all_cases('default');

-- many chunks and an engine memory limit small enough to partition
SET LOCAL gpuhash.chunk_rows = 777;
SET LOCAL gpuhash.memory_limit = '1MB';
SELECT * FROM pg_temp.all_cases('partitioned');
SET LOCAL gpuhash.memory_limit = 0;

-- several devices (simulated by the CPU backend; on a GPU machine, its GPUs)
SELECT set_config('gpuhash.devices',
                  CASE WHEN current_setting('gpuhash.device') = 'cpu' THEN '0,1,2' ELSE 'all' END,
                  true) IS NOT NULL AS devices_set;
SELECT * FROM pg_temp.same_rows('devices by both sides',
  'SELECT f.c, d.nk, count(*), sum(d.w), avg(f.v) FROM fact f JOIN dim d ON f.k = d.k GROUP BY f.c, d.nk', 'Fused Join');
SELECT set_config('gpuhash.devices', 'all', true) IS NOT NULL AS devices_reset;

-- expressions that may fail for a row that joins nothing (an int4 sum's
-- argument that overflows, a division by a column, a text cast, a narrowing
-- cast): PostgreSQL evaluates them only for joined rows, a fused node would
-- for every row of its side, so the join is not fused and no error is raised
INSERT INTO dim VALUES (99001, 777777, 2147483647, 0, 1, 1, 'x'), (99002, 777778, -1, 40000, 1, 1, 'y');
SELECT * FROM pg_temp.same_rows('overflow on an unjoined row',
  'SELECT f.c, count(*), sum(d.w + 1) FROM fact f JOIN dim d ON f.k = d.k GROUP BY f.c', 'Fused Join', false);
SELECT * FROM pg_temp.same_rows('division by zero on an unjoined row',
  'SELECT d.nk, count(*), max(100 / (d.w + 1)) FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.nk', 'Fused Join', false);
SELECT * FROM pg_temp.same_rows('text cast on an unjoined row',
  'SELECT f.c, sum(length(d.t)), max((CASE WHEN d.t = ''y'' THEN ''z'' ELSE ''1'' END)::int) FROM fact f JOIN dim d ON f.k = d.k GROUP BY f.c', 'Fused Join', false);
SELECT * FROM pg_temp.same_rows('narrowing cast on an unjoined row',
  'SELECT d.nk::smallint, count(*) FROM fact f JOIN dim d ON f.k = d.k GROUP BY 1', 'Fused Join', false);
DELETE FROM dim WHERE id > 99000;

-- empty sides: a plain aggregate still returns its one row, GROUP BY none
SELECT * FROM pg_temp.same_rows('empty inner plain', 'SELECT count(*), sum(n.w), max(f.v) FROM fact f JOIN none_t n ON f.k = n.k', 'Fused Join');
SELECT * FROM pg_temp.same_rows('empty inner grouped', 'SELECT n.w, count(*) FROM fact f JOIN none_t n ON f.k = n.k GROUP BY n.w', 'Fused Join');
SELECT * FROM pg_temp.same_rows('no matches plain', 'SELECT count(*), avg(d.price) FROM fact f JOIN dim d ON f.k = d.k + 100000', 'Fused Join');
-- keys of different integer types, and a join of joins below the aggregate
SELECT * FROM pg_temp.same_rows('int4 = int8 keys', 'SELECT d.w, count(*) FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.w HAVING min(f.v) > 3', 'Fused Join');
SELECT * FROM pg_temp.same_rows('three-way',
  'SELECT d.w, count(*), sum(s.w) FROM fact f JOIN dim d ON f.k = d.k JOIN skew s ON s.id = f.id GROUP BY d.w', 'Fused Join');
SELECT * FROM pg_temp.same_rows('two key columns',
  'SELECT d.w, count(*), sum(f.v) FROM fact f JOIN dim d ON f.k = d.k::int AND (f.v % 3)::int - 1 = d.w % 3 - 1 GROUP BY d.w', 'Fused Join');
-- NOT NULL columns need no NULL flag: an int8 one packs whole; nulled by an
-- outer join below the fused join, it needs one again
SELECT * FROM pg_temp.same_rows('NOT NULL int8 grouping column',
  'SELECT n.g8, count(*), sum(f.v), max(n.s) FROM fact f JOIN nn n ON f.k = n.k GROUP BY n.g8', 'Fused Join');
SELECT ok(position('Dictionary' IN plan) = 0, 'NOT NULL int8 grouping column: packed, no dictionary')
  FROM digests WHERE name = 'NOT NULL int8 grouping column' AND mode = 'on';
SELECT * FROM pg_temp.same_rows('NOT NULL column under an outer join',
  'SELECT n.g8, count(*), sum(d.w) FROM (fact f LEFT JOIN nn n ON f.id = n.k) JOIN dim d ON f.k = d.k GROUP BY n.g8', 'Fused Join');
SELECT ok(position('Dictionary' IN plan) > 0, 'NOT NULL column under an outer join: NULL flag, so the dictionary')
  FROM digests WHERE name = 'NOT NULL column under an outer join' AND mode = 'on';

-- correlated: the fused node is rescanned with a new parameter
SELECT * FROM pg_temp.same_rows('correlated',
  'SELECT o.x, (SELECT count(*) FROM fact f JOIN dim d ON f.k = d.k WHERE d.w = o.x) FROM generate_series(1, 4) o(x)', 'Fused Join');

SELECT * FROM pg_temp.same_rows('correlated join key',
  'SELECT x, (SELECT count(*) FROM dim a JOIN skew b ON a.k = b.k + x) FROM generate_series(1, 4) x', 'Fused Join');

-- not fusable: still right, planned otherwise
SELECT * FROM pg_temp.same_rows('argument reads both sides',
  'SELECT d.w, sum(f.v + d.w) FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.w', 'Fused Join', false);
SELECT * FROM pg_temp.same_rows('key reads both sides',
  'SELECT f.v + d.w, count(*) FROM fact f JOIN dim d ON f.k = d.k GROUP BY 1', 'Fused Join', false);
SELECT * FROM pg_temp.same_rows('left join',
  'SELECT d.w, count(f.id) FROM dim d LEFT JOIN fact f ON f.k = d.k GROUP BY d.w', 'Fused Join', false);
SELECT * FROM pg_temp.same_rows('extra join clause',
  'SELECT d.w, count(*) FROM fact f JOIN dim d ON f.k = d.k AND f.v < d.id GROUP BY d.w', 'Fused Join', false);
SELECT * FROM pg_temp.same_rows('CPU aggregate',
  'SELECT d.w, min(d.price) FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.w', 'Fused Join', false);
SELECT * FROM pg_temp.same_rows('dictionary keys on both sides',
  'SELECT f.ft, d.t, count(*) FROM fact f JOIN dim d ON f.k = d.k GROUP BY 1, 2', 'Fused Join', false);
SELECT * FROM pg_temp.same_rows('int8 grouping columns of both sides',
  'SELECT f.v, d.k, count(*) FROM fact f JOIN dim d ON f.k = d.k GROUP BY 1, 2', 'Fused Join', false);

-- Under Gather: each worker joins and aggregates its share of a parallel
-- outer scan; a final GpuHashAgg combines.  Ordinary tables: workers cannot
-- read temporary ones.
CREATE TABLE gh_ffact AS SELECT * FROM fact;
CREATE TABLE gh_fdim AS SELECT * FROM dim;
ANALYZE gh_ffact, gh_fdim;
-- larger copies, so that every process gets a share of both sides
CREATE TABLE gh_sfact AS SELECT * FROM fact, generate_series(1, 12) r;
CREATE TABLE gh_sdim AS SELECT * FROM dim, generate_series(1, 12) r;
ANALYZE gh_sfact, gh_sdim;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL parallel_leader_participation = off;
SELECT * FROM pg_temp.same_rows('parallel plain',
  'SELECT count(*), sum(d.w), avg(f.v), min(d.w), sum(d.price) FROM gh_ffact f JOIN gh_fdim d ON f.k = d.k', 'Fused Join');
SELECT * FROM pg_temp.same_rows('parallel grouped',
  'SELECT d.nk, f.c, count(*), sum(d.price), avg(f.v) FROM gh_ffact f JOIN gh_fdim d ON f.k = d.k GROUP BY 1, 2', 'Fused Join');
SELECT * FROM pg_temp.same_rows('parallel empty',
  'SELECT count(*), sum(d.w) FROM gh_ffact f JOIN gh_fdim d ON f.k = d.k WHERE f.v < 0', 'Fused Join');
-- each process reads a share of the inner side too, and they share it
SELECT * FROM pg_temp.same_rows('parallel shared inner',
  'SELECT count(*), sum(d.w), max(d.f), avg(f.v), count(d.nk) FROM gh_sfact f JOIN gh_sdim d ON f.k = d.k', 'Shared Inner Side');
SELECT * FROM pg_temp.same_rows('parallel shared inner grouped',
  'SELECT d.w % 7 > 3, f.c, d.nk > 2, count(*), sum(f.v), min(d.id), sum(f.v::numeric) FROM gh_sfact f JOIN gh_sdim d ON f.k = d.k GROUP BY 1, 2, 3', 'Shared Inner Side');
SELECT * FROM pg_temp.same_rows('parallel shared small inner',
  'SELECT count(*), sum(d.w) FROM gh_sfact f JOIN gh_sdim d ON f.k = d.k WHERE d.id % 1000 = 3', 'Shared Inner Side');
SELECT * FROM pg_temp.same_rows('parallel shared empty inner',
  'SELECT d.w, count(*) FROM gh_sfact f JOIN gh_sdim d ON f.k = d.k WHERE d.id < 0 GROUP BY 1', 'Shared Inner Side');
SET LOCAL enable_material = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SELECT * FROM pg_temp.same_rows('parallel shared rescanned',
  'SELECT x, s.c, s.w FROM generate_series(1, 3) x LEFT JOIN (SELECT count(*) c, sum(d.w) w FROM gh_ffact f JOIN gh_fdim d ON f.k = d.k) s ON x < s.c', 'Shared Inner Side');
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;
SELECT * FROM pg_temp.same_rows('parallel numeric sum of dim',
  'SELECT count(*), sum(d.price) FROM gh_ffact f JOIN gh_fdim d ON f.k = d.k', 'Fused Join');
SELECT ok(position('Gather' IN plan) > 0 AND position('Fused Join' IN plan) > 0,
          'parallel grouped: fused partial aggregation under Gather')
  FROM digests WHERE name = 'parallel grouped' AND mode = 'on';

SELECT * FROM finish();
ROLLBACK;
