-- Differential tests for GpuHashJoin and GpuHashAgg: every query runs with
-- gpuhash off (PostgreSQL's own plan) and forced on, and must return the same
-- multiset of rows.  Each "on" run is also checked to really use the node
-- named, so a planner that stopped offering a path would fail here, not pass
-- silently.
-- Random tables: uniform, skewed, duplicated, NULL-heavy; sizes that cross
-- the chunk size and, with a small memory limit, the engine's partitions.
BEGIN;
SELECT plan(217);

SET LOCAL max_parallel_workers_per_gather = 0;
-- GpuHashJoin and GpuHashAgg themselves (GpuStarAgg has test/tap/star.sql)
SET LOCAL gpuhash.enable_star = off;
SELECT setseed(0.4242);

CREATE TEMP TABLE fact AS
  SELECT g AS id,
         CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 5000)::int END AS k,
         (random() * 1000)::bigint AS v,
         md5((g % 3000)::text) AS t
  FROM generate_series(1, 30000) g;
CREATE TEMP TABLE dim AS
  SELECT g AS id,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 6000)::int END AS k,
         (random() * 100)::int AS w,
         md5((g % 4000)::text) AS t
  FROM generate_series(1, 8000) g;
-- skew: a third of the rows share one key
CREATE TEMP TABLE skew AS
  SELECT g AS id,
         CASE WHEN g % 3 = 0 THEN 7 ELSE (power(random(), 4) * 3000)::int END AS k,
         g % 17 AS w
  FROM generate_series(1, 12000) g;
CREATE TEMP TABLE nulls AS
  SELECT g AS id, CASE WHEN g % 2 = 0 THEN NULL ELSE g % 50 END AS k
  FROM generate_series(1, 3000) g;
CREATE TEMP TABLE none_t (k int, w int);
ANALYZE fact, dim, skew, nulls, none_t;

\ir lib/digests.sql
\ir lib/helpers.sql

-- one chunk, default memory
SELECT * FROM pg_temp.same_rows('inner', 'SELECT f.id, d.id FROM fact f JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('left', 'SELECT f.id, d.id FROM fact f LEFT JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('right', 'SELECT f.id, d.id FROM fact f RIGHT JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('full', 'SELECT f.id, d.id FROM fact f FULL JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('semi', 'SELECT f.id FROM fact f WHERE EXISTS (SELECT 1 FROM dim d WHERE d.k = f.k)');
SELECT * FROM pg_temp.same_rows('anti', 'SELECT f.id FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.k = f.k)');
SELECT * FROM pg_temp.same_rows('text keys', 'SELECT f.id, d.id FROM fact f JOIN dim d ON f.t = d.t');
SELECT * FROM pg_temp.same_rows('two keys', 'SELECT f.id, d.id FROM fact f JOIN dim d ON f.k = d.k AND f.t = d.t');
-- several integer key columns are exact together (signs included)
SELECT * FROM pg_temp.same_rows('two integer keys', 'SELECT f.id, d.id FROM fact f JOIN dim d ON f.k = d.k AND (f.v % 7)::int - 3 = d.w % 7 - 3', 'Keys: exact');
SELECT * FROM pg_temp.same_rows('int2 with int4 keys', 'SELECT f.id, d.id FROM fact f LEFT JOIN dim d ON f.k = d.k AND ((f.v % 5) - 2)::smallint = d.w % 5 - 2', 'Keys: exact');
SELECT * FROM pg_temp.same_rows('two integer keys anti', 'SELECT f.id FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.k = f.k AND d.w % 4 = (f.v % 4)::int)', 'Keys: exact');
SELECT * FROM pg_temp.same_rows('residual', 'SELECT f.id, d.id FROM fact f LEFT JOIN dim d ON f.k = d.k AND d.w > f.v % 100');
SELECT * FROM pg_temp.same_rows('skew inner', 'SELECT s.id, s2.id FROM skew s JOIN skew s2 ON s.k = s2.k WHERE s.w = 3');
SELECT * FROM pg_temp.same_rows('skew full', 'SELECT s.id, f.id FROM skew s FULL JOIN fact f ON s.k = f.k AND f.v < 500');
SELECT * FROM pg_temp.same_rows('nulls left', 'SELECT n.id, d.id FROM nulls n LEFT JOIN dim d ON n.k = d.k');
SELECT * FROM pg_temp.same_rows('nulls anti', 'SELECT n.id FROM nulls n WHERE NOT EXISTS (SELECT 1 FROM nulls m WHERE m.k = n.k AND m.id <> n.id)');
SELECT * FROM pg_temp.same_rows('empty inner', 'SELECT f.id, e.w FROM fact f LEFT JOIN none_t e ON f.k = e.k');
SELECT * FROM pg_temp.same_rows('empty outer', 'SELECT e.w, d.id FROM none_t e RIGHT JOIN dim d ON e.k = d.k');
SELECT * FROM pg_temp.same_rows('cross-type', 'SELECT f.id, d.id FROM fact f JOIN dim d ON f.v = d.k');
SELECT * FROM pg_temp.same_rows('three-way', 'SELECT f.id, d.id, s.id FROM fact f JOIN dim d ON f.k = d.k JOIN skew s ON s.k = d.w');

-- many chunks
SET LOCAL gpuhash.chunk_rows = 777;
SELECT * FROM pg_temp.same_rows('chunks inner', 'SELECT f.id, d.id FROM fact f JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('chunks left', 'SELECT f.id, d.id FROM fact f LEFT JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('chunks full', 'SELECT f.id, d.id FROM fact f FULL JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('chunks semi', 'SELECT f.id FROM fact f WHERE EXISTS (SELECT 1 FROM dim d WHERE d.k = f.k AND d.w < 50)');
SELECT * FROM pg_temp.same_rows('chunks anti', 'SELECT f.id FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.k = f.k)');
SELECT * FROM pg_temp.same_rows('chunks skew', 'SELECT s.id, s2.id FROM skew s JOIN skew s2 ON s.k = s2.k WHERE s2.w < 2');

-- many chunks and an engine memory limit small enough to partition
SET LOCAL gpuhash.memory_limit = '1MB';
SELECT * FROM pg_temp.same_rows('partitions inner', 'SELECT f.id, d.id FROM fact f JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('partitions right', 'SELECT f.id, d.id FROM fact f RIGHT JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('partitions skew', 'SELECT s.id, f.id FROM skew s JOIN fact f ON s.k = f.k');
SELECT * FROM pg_temp.same_rows('partitions text', 'SELECT f.id, d.id FROM fact f FULL JOIN dim d ON f.t = d.t');
SELECT * FROM pg_temp.same_rows('partitions anti', 'SELECT s.id FROM skew s WHERE NOT EXISTS (SELECT 1 FROM fact f WHERE f.k = s.k)');

-- both table kinds
SET LOCAL gpuhash.hash_table = 'bcht';
SELECT * FROM pg_temp.same_rows('bcht inner', 'SELECT f.id, d.id FROM fact f JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('bcht skew', 'SELECT s.id, s2.id FROM skew s JOIN skew s2 ON s.k = s2.k WHERE s.w = 5');
SELECT * FROM pg_temp.same_rows('bcht full', 'SELECT f.id, d.id FROM fact f FULL JOIN dim d ON f.k = d.k');
SET LOCAL gpuhash.hash_table = 'hashgraph';
SELECT * FROM pg_temp.same_rows('hashgraph semi', 'SELECT f.id FROM fact f WHERE f.k IN (SELECT k FROM skew)');
SELECT * FROM pg_temp.same_rows('hashgraph left', 'SELECT s.id, d.id FROM skew s LEFT JOIN dim d ON s.k = d.k');

-- GROUP BY: every aggregate, NULL groups and values, skew, FILTER, HAVING,
-- expressions, over joins; with and without partitioning
SET LOCAL gpuhash.hash_table = 'auto';
SET LOCAL gpuhash.memory_limit = 0;
SELECT * FROM pg_temp.same_rows('agg int keys', 'SELECT k, count(*), count(v), sum(v), min(v), max(v), avg(v) FROM fact GROUP BY k', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg all distinct', 'SELECT id, count(*), sum(v) FROM fact GROUP BY id', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg one group', 'SELECT k % 1 AS z, count(*), sum(v), max(k) FROM fact GROUP BY 1', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg skew', 'SELECT k, count(*), sum(w), avg(w) FROM skew GROUP BY k', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg nulls', 'SELECT k, count(*), sum(id) FROM nulls GROUP BY k', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg two keys', 'SELECT k % 7, w, count(*), sum(id) FROM skew GROUP BY 1, 2', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg filter having', 'SELECT k % 100, count(*) FILTER (WHERE v > 500), sum(v) FILTER (WHERE k > 10) FROM fact GROUP BY 1 HAVING count(*) > 3', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg floats', 'SELECT w, min(v::float8), max(v::float4), count(v::float8) FROM skew s JOIN fact f ON f.id = s.id GROUP BY w', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg over join', 'SELECT d.w, count(*), sum(f.v) FROM fact f JOIN dim d ON f.k = d.k GROUP BY d.w', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg empty', 'SELECT k, count(*) FROM none_t GROUP BY k', 'GpuHashAgg');
-- aggregates of one value share its engine column (same argument, FILTER and type)
-- sums of -0s alone are -0 (float8pl's), their averages 0 (float8_accum's)
SELECT * FROM pg_temp.same_rows('agg float sums of -0s', 'SELECT k % 10, sum(CASE WHEN k % 10 < 5 THEN -0.0::float8 ELSE v END), avg(CASE WHEN k % 10 < 5 THEN -0.0::float8 ELSE v END), sum((-0.0::float8 * abs(v))::float4), avg(-0.0::float8 * abs(v)) FROM fact GROUP BY 1', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg shared columns', 'SELECT k % 50, sum(v), min(v), max(v), avg(v), sum(v) FILTER (WHERE k > 10), max(v) FILTER (WHERE k > 10), min(v + 1), sum(v::float8), avg(v::float8), min(v::float8), max(v::float8), count(v), min(k), max(k) FROM fact GROUP BY 1', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg shared columns over a join', 'SELECT d.w % 10, sum(f.v), min(f.v), max(f.v), sum(d.w), min(d.w), max(d.w) FILTER (WHERE f.v > 100) FROM fact f JOIN dim d ON f.k = d.k GROUP BY 1', 'GpuHashAgg');
-- sum(int8) is a numeric built as numeric.c builds it: the same bytes, not
-- only the same value (*= compares the datums' images).  Sums of zero, with
-- trailing zero base-10000 digits, beyond int8, beyond 2^64, and NULL.
CREATE TEMP TABLE big8 (k int, v int8);
INSERT INTO big8 VALUES (1, 5), (1, -5), (2, 10000), (3, -100000000), (4, 99990000),
  (5, 9223372036854775807), (5, 9223372036854775807),
  (6, -9223372036854775808), (6, -9223372036854775808), (6, -9223372036854775808),
  (7, 123456789012345678), (7, 1), (8, 1), (9, NULL), (10, -1), (11, 0);
INSERT INTO big8 SELECT 12, 9223372036854775807 FROM generate_series(1, 1000);
INSERT INTO big8 SELECT 13, -1000000000000 * g FROM generate_series(1, 100) g;
ANALYZE big8;
SELECT * FROM pg_temp.same_rows('agg int8 sums', 'SELECT k, sum(v), avg(v), count(v) FROM big8 GROUP BY k', 'GpuHashAgg');
SELECT set_config('gpuhash.enabled', 'on', true), set_config('gpuhash.force', 'on', true);
CREATE TEMP TABLE sums_on AS SELECT k, sum(v) AS s, avg(v) AS a FROM big8 GROUP BY k;
SELECT set_config('gpuhash.enabled', 'off', true);
CREATE TEMP TABLE sums_off AS SELECT k, sum(v) AS s, avg(v) AS a FROM big8 GROUP BY k;
SELECT is((SELECT count(*) FROM sums_on a JOIN sums_off b USING (k) WHERE ROW(a.s, a.a)::record *= ROW(b.s, b.a)::record),
          (SELECT count(DISTINCT k) FROM big8),
          'agg int8 sums: the numerics are PostgreSQL''s byte for byte');
SET LOCAL gpuhash.memory_limit = '1MB';
SELECT * FROM pg_temp.same_rows('agg partitions', 'SELECT k, count(*), sum(v), min(id), max(id) FROM fact GROUP BY k', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg partitions distinct', 'SELECT id, sum(v) FROM fact GROUP BY id', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg partitions skew', 'SELECT k, count(*), sum(w) FROM skew GROUP BY k', 'GpuHashAgg');

-- grouping columns through the dictionary, numeric sums, CPU min/max
SET LOCAL gpuhash.memory_limit = 0;
CREATE TEMP TABLE nums AS
  SELECT g AS id, g % 37 AS k,
         CASE WHEN g % 13 = 0 THEN NULL
              WHEN g % 501 = 0 THEN 'NaN'::numeric
              WHEN g % 703 = 0 THEN 'Infinity'::numeric
              WHEN g % 907 = 0 THEN '-Infinity'::numeric
              ELSE round((random() - 0.5)::numeric * 10::numeric ^ (g % 9), g % 6) END AS n,
         CASE WHEN g % 17 = 0 THEN NULL ELSE md5((g % 400)::text) END AS t
  FROM generate_series(1, 6000) g;
ANALYZE nums;
SELECT * FROM pg_temp.same_rows('agg text key', 'SELECT t, count(*), sum(v), max(id) FROM fact GROUP BY t', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg text and int keys', 'SELECT k % 10, t, count(*), sum(id) FROM fact GROUP BY 1, 2', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg two int8 keys', 'SELECT v, id::int8, count(*) FROM fact GROUP BY 1, 2', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg null text keys', 'SELECT t, k % 3, count(*), sum(n) FROM nums GROUP BY 1, 2', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg numeric sum avg', 'SELECT k, sum(n), avg(n), count(n) FROM nums GROUP BY k', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg numeric one group', 'SELECT k % 1, sum(n), avg(n) FROM nums WHERE n IS NULL OR n < ''Infinity'' GROUP BY 1', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg numeric wide', 'SELECT id % 5, sum(n * 10::numeric ^ 40 + round(n / 10::numeric ^ 30, 40)), avg(v::numeric) FROM nums JOIN fact USING (id) GROUP BY 1', 'GpuHashAgg');
-- numeric sums built from their limbs in 128 bits (agg_numeric.c, limbs_sum) or, where they do
-- not fit (beyond 2^127, weights beyond the short format), by numeric arithmetic: byte for byte
CREATE TEMP TABLE nedge (k int, n numeric);
INSERT INTO nedge VALUES (1, '1.50'), (1, '-1.50'), (2, '0.0000000000000001'), (2, '0.9999999999999999'),
  (3, '123456789012345678901234567890.123456789'), (3, '123456789012345678901234567890.123456789'),
  (4, '1e-60'), (4, '2e-60'), (5, '1e-300'), (5, '3'), (6, '-0.5'), (6, '-0.25'), (7, NULL),
  (8, '0'), (8, '0.000'), (9, '-170141183460469231731687303715884105727'), (9, '-1');
INSERT INTO nedge SELECT 10, '99999999999999999999999999999999999999' FROM generate_series(1, 1000);
INSERT INTO nedge SELECT 11, n FROM nums;
SELECT set_config('gpuhash.enabled', 'on', true), set_config('gpuhash.force', 'on', true);
CREATE TEMP TABLE nsums_on AS SELECT k, sum(n) AS s, avg(n) AS a FROM nedge GROUP BY k;
SELECT set_config('gpuhash.enabled', 'off', true);
CREATE TEMP TABLE nsums_off AS SELECT k, sum(n) AS s, avg(n) AS a FROM nedge GROUP BY k;
SELECT is((SELECT count(*) FROM nsums_on a JOIN nsums_off b USING (k)
            WHERE ROW(a.s, a.a)::record *= ROW(b.s, b.a)::record OR (a.s IS NULL AND b.s IS NULL)),
          11::bigint, 'agg numeric sums: PostgreSQL''s byte for byte, in 128 bits or not');
SELECT * FROM pg_temp.same_rows('agg numeric filter', 'SELECT k % 4, sum(n) FILTER (WHERE id % 2 = 0), avg(n) FILTER (WHERE n > 0) FROM nums GROUP BY 1', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg text min max', 'SELECT k % 20, min(t), max(t), min(t COLLATE "C"), count(*) FROM fact GROUP BY 1', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('agg numeric min max', 'SELECT k, min(n), max(n), sum(n) FROM nums GROUP BY k', 'GpuHashAgg');
SET LOCAL gpuhash.memory_limit = '1MB';
SELECT * FROM pg_temp.same_rows('agg partitions text', 'SELECT t, count(*), sum(n), min(t) FROM nums GROUP BY t', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('distinct partitions', 'SELECT DISTINCT id % 5000, k FROM fact', 'GpuHashAgg');
SET LOCAL gpuhash.memory_limit = 0;
-- SELECT DISTINCT: a GROUP BY of its columns without aggregates
SELECT * FROM pg_temp.same_rows('distinct ints', 'SELECT DISTINCT k, v % 10 FROM fact', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('distinct text and nulls', 'SELECT DISTINCT t, k % 3 FROM nums', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('distinct over a join', 'SELECT DISTINCT d.w, f.k % 7 FROM fact f JOIN dim d ON f.k = d.k', 'GpuHashAgg');

-- rescans: the node's own expressions read an outer value
SELECT * FROM pg_temp.same_rows('agg correlated',
  'SELECT x, (SELECT array_agg(s ORDER BY s) FROM (SELECT sum(x + k) s FROM skew WHERE k < 5 GROUP BY k) q) FROM generate_series(1, 4) x', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('join correlated inner key',
  'SELECT x, (SELECT count(a.id + b.id) FROM dim a JOIN skew b ON a.k = b.k + x) FROM generate_series(1, 4) x');
-- an outer join's null-extended subquery column under an aggregate
SELECT * FROM pg_temp.same_rows('agg placeholder',
  'SELECT d.w, sum(s.one), count(s.one) FROM dim d LEFT JOIN (SELECT k, 1 AS one FROM skew) s ON d.k = s.k GROUP BY d.w', 'GpuHashAgg');

-- several devices: hash-range partitions spread over them (simulated by the
-- CPU backend; on a GPU machine, the GPUs it has)
SELECT set_config('gpuhash.devices',
                  CASE WHEN current_setting('gpuhash.device') = 'cpu' THEN '0,1,2' ELSE 'all' END,
                  true) IS NOT NULL AS devices_set;
SELECT * FROM pg_temp.same_rows('devices inner', 'SELECT f.id, d.id FROM fact f JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('devices full', 'SELECT f.id, d.id FROM fact f FULL JOIN dim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('devices skew', 'SELECT s.id, s2.id FROM skew s JOIN skew s2 ON s.k = s2.k WHERE s2.w < 3');
SELECT * FROM pg_temp.same_rows('devices text anti', 'SELECT f.id FROM fact f WHERE NOT EXISTS (SELECT 1 FROM dim d WHERE d.t = f.t)');
SELECT * FROM pg_temp.same_rows('devices agg', 'SELECT k, count(*), sum(v), min(t), avg(v) FROM fact GROUP BY k', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('devices agg numeric', 'SELECT t, sum(n), avg(n) FROM nums GROUP BY t', 'GpuHashAgg');
-- an inner side that fits a device is built on each; a larger one is split
-- by hash range (gpuhash.memory_limit: no device holds it)
SELECT CASE WHEN current_setting('gpuhash.device') = 'cpu'
  THEN matches(pg_temp.plan_text('SELECT f.id, d.id FROM fact f JOIN dim d ON f.k = d.k', true),
               'Inner Side: built on every device', 'devices: a small inner side is built on every device')
  ELSE skip('the GPUs a machine has', 1) END;
CREATE TEMP TABLE big AS SELECT g AS id, g * 7 AS k FROM generate_series(1, 200000) g;
ANALYZE big;
SET LOCAL gpuhash.memory_limit = '1MB';
SELECT CASE WHEN current_setting('gpuhash.device') = 'cpu'
  THEN doesnt_match(pg_temp.plan_text('SELECT a.id, b.id FROM big a JOIN big b ON a.k = b.k', true),
                    'Inner Side: built on every device', 'devices: an inner side larger than a device is split')
  ELSE skip('the GPUs a machine has', 1) END;
SELECT * FROM pg_temp.same_rows('devices split', 'SELECT a.id, b.id FROM big a JOIN big b ON a.k = b.k + 7 WHERE a.id % 3 <> 0');
SET LOCAL gpuhash.memory_limit = 0;
SELECT set_config('gpuhash.devices', 'all', true) IS NOT NULL AS devices_reset;

-- Under Gather: every process builds the inner side and probes its share of
-- a parallel outer scan.  Parallel workers cannot read temporary tables, so
-- these are ordinary tables (gone with the ROLLBACK).
SET LOCAL gpuhash.memory_limit = 0;
SET LOCAL gpuhash.chunk_rows = 1000;
CREATE TABLE gh_pfact AS SELECT * FROM fact;
CREATE TABLE gh_pdim AS SELECT * FROM dim;
CREATE TABLE gh_pskew AS SELECT * FROM skew;
ANALYZE gh_pfact, gh_pdim, gh_pskew;
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL parallel_leader_participation = off;

-- the forced plan of the named query runs a GpuHashJoin inside a Gather
CREATE FUNCTION pg_temp.under_gather(name text) RETURNS text
LANGUAGE sql AS $$
  SELECT ok(plan ~ 'Gather(.|\n)*GpuHashJoin', name || ': GpuHashJoin runs in parallel workers')
  FROM digests d WHERE d.name = under_gather.name AND mode = 'on'
$$;

SELECT * FROM pg_temp.same_rows('parallel inner', 'SELECT f.id, d.id FROM gh_pfact f JOIN gh_pdim d ON f.k = d.k');
SELECT pg_temp.under_gather('parallel inner');
SELECT * FROM pg_temp.same_rows('parallel left', 'SELECT f.id, d.w FROM gh_pfact f LEFT JOIN gh_pdim d ON f.k = d.k AND d.w > 20');
SELECT pg_temp.under_gather('parallel left');
SELECT * FROM pg_temp.same_rows('parallel semi', 'SELECT f.id FROM gh_pfact f WHERE EXISTS (SELECT 1 FROM gh_pdim d WHERE d.k = f.k)');
SELECT pg_temp.under_gather('parallel semi');
SELECT * FROM pg_temp.same_rows('parallel anti', 'SELECT f.id FROM gh_pfact f WHERE NOT EXISTS (SELECT 1 FROM gh_pdim d WHERE d.k = f.k)');
SELECT pg_temp.under_gather('parallel anti');
SELECT * FROM pg_temp.same_rows('parallel text', 'SELECT f.id, d.id FROM gh_pfact f JOIN gh_pdim d ON f.t = d.t');
SELECT pg_temp.under_gather('parallel text');
SELECT * FROM pg_temp.same_rows('parallel three-way', 'SELECT f.id, d.id, s.id FROM gh_pfact f JOIN gh_pdim d ON f.k = d.k JOIN gh_pskew s ON s.k = d.w');
SELECT pg_temp.under_gather('parallel three-way');
SELECT * FROM pg_temp.same_rows('parallel aggregate', 'SELECT count(*), sum(d.w + f.v), min(f.v) FROM gh_pfact f JOIN gh_pdim d ON f.k = d.k');
SELECT pg_temp.under_gather('parallel aggregate');
-- RIGHT and FULL joins need every outer row in one process: not partial
SELECT * FROM pg_temp.same_rows('parallel right', 'SELECT f.id, d.id FROM gh_pfact f RIGHT JOIN gh_pdim d ON f.k = d.k');
SELECT * FROM pg_temp.same_rows('parallel full', 'SELECT f.id, d.id FROM gh_pfact f FULL JOIN gh_pdim d ON f.k = d.k');
SELECT ok(plan !~ 'Gather(.|\n)*GpuHashJoin', 'parallel full: the FULL GpuHashJoin is not split among workers')
  FROM digests WHERE name = 'parallel full' AND mode = 'on';

-- GROUP BY in parallel: partial GpuHashAggs in the workers, a final one above
-- the Gather combining their partial values
CREATE TABLE gh_pnums AS SELECT * FROM nums;
ANALYZE gh_pnums;
CREATE FUNCTION pg_temp.agg_in_workers(name text) RETURNS text
LANGUAGE sql AS $$
  SELECT ok(plan ~ 'GpuHashAgg(.|\n)*Mode: finalize(.|\n)*Gather(.|\n)*Mode: partial',
            name || ': partial GpuHashAggs in the workers, a final one above')
  FROM digests d WHERE d.name = agg_in_workers.name AND mode = 'on'
$$;
SELECT * FROM pg_temp.same_rows('parallel agg ints', 'SELECT k, count(*), count(v), sum(v), min(v), max(v), avg(v), sum(id::int2), avg(id::int4) FROM gh_pfact GROUP BY k', 'GpuHashAgg');
SELECT pg_temp.agg_in_workers('parallel agg ints');
SELECT * FROM pg_temp.same_rows('parallel agg floats', 'SELECT k % 10, sum(v::float8), avg(v::float4), min(v::float4), max(v::float8) FROM gh_pfact GROUP BY 1', 'GpuHashAgg');
SELECT pg_temp.agg_in_workers('parallel agg floats');
SELECT * FROM pg_temp.same_rows('parallel agg float sums of -0s', 'SELECT k % 10, sum(CASE WHEN k % 10 < 5 THEN -0.0::float8 ELSE v END), avg(CASE WHEN k % 10 < 5 THEN -0.0::float8 ELSE v END), sum((-0.0::float8 * abs(v))::float4), avg(-0.0::float8 * abs(v)) FROM gh_pfact GROUP BY 1', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('parallel agg numeric', 'SELECT k, sum(n), avg(n), count(n), min(n), max(n) FROM gh_pnums GROUP BY k', 'GpuHashAgg');
SELECT pg_temp.agg_in_workers('parallel agg numeric');
SELECT * FROM pg_temp.same_rows('parallel agg text keys', 'SELECT t, k % 3, count(*), sum(n), min(t), max(t) FROM gh_pnums GROUP BY 1, 2', 'GpuHashAgg');
SELECT pg_temp.agg_in_workers('parallel agg text keys');
SELECT * FROM pg_temp.same_rows('parallel agg filter having', 'SELECT k % 100, count(*) FILTER (WHERE v > 500), sum(v) FILTER (WHERE k > 10), avg(v) FILTER (WHERE v < 100) FROM gh_pfact GROUP BY 1 HAVING count(*) > 3', 'GpuHashAgg');
SELECT pg_temp.agg_in_workers('parallel agg filter having');
SELECT * FROM pg_temp.same_rows('parallel agg empty', 'SELECT k, count(*), sum(v), avg(v) FROM gh_pfact WHERE v < 0 GROUP BY k', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('parallel agg nulls', 'SELECT k % 3, t IS NULL, count(n), sum(n), avg(n) FROM gh_pnums GROUP BY 1, 2', 'GpuHashAgg');
SELECT * FROM pg_temp.same_rows('parallel agg over join', 'SELECT d.w, count(*), sum(f.v), avg(f.v) FROM gh_pfact f JOIN gh_pdim d ON f.k = d.k GROUP BY d.w', 'GpuHashAgg');
SELECT pg_temp.agg_in_workers('parallel agg over join');
SELECT * FROM pg_temp.same_rows('parallel distinct', 'SELECT DISTINCT k, t IS NULL, n IS NULL FROM gh_pnums', 'GpuHashAgg');
SELECT pg_temp.agg_in_workers('parallel distinct');
SELECT throws_ok($$SELECT k % 10, sum(v::float8 * 1e304), avg(v::float8 * 1e304) FROM gh_pfact GROUP BY 1$$,
                 '22003', 'value out of range: overflow', 'parallel agg: finite float8 values whose sum overflows');
SELECT throws_ok($$SELECT k % 10, sum(v::float4 * 1e35::float4) FROM gh_pfact GROUP BY 1$$,
                 '22003', 'value out of range: overflow', 'parallel agg: finite float4 values whose sum overflows');

-- a join's other clauses in the order PostgreSQL's own plan checks them (by
-- cost): the cheap one that overflows on some rows first, as PostgreSQL
-- does, not the costly one written first, which would keep those rows from it
CREATE TEMP TABLE jq_a AS
  SELECT g AS k, CASE WHEN g % 100 = 0 THEN 9223372036854775000 ELSE g END::int8 AS big, g % 7 AS x
  FROM generate_series(1, 3000) g;
CREATE TEMP TABLE jq_b AS SELECT g AS k, (g % 13)::numeric(10,3) AS n FROM generate_series(1, 3000) g;
ANALYZE jq_a, jq_b;
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpuhash.force = on;
SELECT matches(pg_temp.plan_text($$SELECT count(*) FROM jq_a a JOIN jq_b b ON a.k = b.k
                 WHERE (a.x::numeric * b.n * 0.333) BETWEEN 100 AND 200 AND (a.big + b.k = 5 OR b.n >= 0)$$),
  'GpuHashJoin.*Join Filter: \(\(\(\(a\.big \+ b\.k\)', 'a GpuHashJoin checks its join clauses cheapest first');
SELECT throws_ok($$SELECT count(*) FROM jq_a a JOIN jq_b b ON a.k = b.k
                   WHERE (a.x::numeric * b.n * 0.333) BETWEEN 100 AND 200 AND (a.big + b.k = 5 OR b.n >= 0)$$,
                 '22003', 'bigint out of range', 'the overflow PostgreSQL''s plan raises in a join clause');

SELECT * FROM finish();
ROLLBACK;
