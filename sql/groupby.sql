-- GpuHashAgg: every supported aggregate and type, NULL values and NULL
-- groups, empty input, one group, FILTER, HAVING, expressions as keys,
-- multi-column keys, grouping over joins, and what is not offered.  The plan
-- is forced (gpuhash.force); results are ordered so the output is the same on
-- every backend.
SET gpuhash.force = on;
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 0;

CREATE TABLE g (k int, k2 smallint, kb bigint, d date, ts timestamp,
                i2 smallint, i4 int, i8 bigint, f4 float4, f8 float8, t text);
INSERT INTO g VALUES
  (1, 1, 10, '2024-01-01', '2024-01-01 10:00', 1, 10, 100, 1.5, 2.25, 'a'),
  (1, 1, 10, '2024-01-01', '2024-01-01 10:00', 2, 20, 200, 2.5, 3.25, 'b'),
  (1, 2, 10, '2024-01-02', '2024-01-01 11:00', NULL, NULL, NULL, NULL, NULL, NULL),
  (2, 1, 20, '2024-01-02', '2024-01-01 11:00', -3, -30, -300, -1, -1, 'c'),
  (NULL, 1, NULL, NULL, NULL, 5, 50, 500, 5, 5, 'd'),
  (NULL, NULL, NULL, NULL, NULL, 6, 60, 600, 'NaN', 'NaN', 'e'),
  (3, 3, 9223372036854775807, '1999-12-31', '1999-12-31 23:59', 7, 70, 9223372036854775807, 7, 7, 'f'),
  (3, 3, 9223372036854775807, '1999-12-31', '1999-12-31 23:59', 8, 80, 9223372036854775807, 8, 8, 'g');
CREATE TABLE empty_g (k int, v int);
ANALYZE g, empty_g;

EXPLAIN (COSTS OFF) SELECT k, count(*) FROM g GROUP BY k;
SELECT k, count(*) FROM g GROUP BY k ORDER BY k;

-- every aggregate over every numeric type; NULL values skipped
SELECT k, count(*), count(i4), sum(i2), sum(i4), sum(i8), sum(f4), sum(f8)
  FROM g GROUP BY k ORDER BY k;
SELECT k, avg(i2), avg(i4), avg(i8), avg(f4), avg(f8) FROM g GROUP BY k ORDER BY k;
SELECT k, min(i2), max(i2), min(i4), max(i4), min(i8), max(i8) FROM g GROUP BY k ORDER BY k;
-- float min/max: NaN is the largest value, as in PostgreSQL
SELECT k, min(f4), max(f4), min(f8), max(f8) FROM g GROUP BY k ORDER BY k;
SELECT k, min(d), max(d), min(ts), max(ts) FROM g GROUP BY k ORDER BY k;

-- sum(bigint) is exact past 2^63 (numeric), as PostgreSQL's is
SELECT kb, sum(i8), avg(i8) FROM g GROUP BY kb ORDER BY kb;

-- key types: smallint, bigint, date, timestamp, float keys
SELECT k2, count(*) FROM g GROUP BY k2 ORDER BY k2;
SELECT d, count(*), sum(i4) FROM g GROUP BY d ORDER BY d;
SELECT ts, count(*) FROM g GROUP BY ts ORDER BY ts;
SELECT f8, count(*) FROM g GROUP BY f8 ORDER BY f8;

-- multi-column keys, NULLs in some columns forming their own groups
EXPLAIN (COSTS OFF) SELECT k, k2, count(*) FROM g GROUP BY k, k2;
SELECT k, k2, count(*), sum(i4) FROM g GROUP BY k, k2 ORDER BY k, k2;
SELECT k2, d, count(*) FROM g GROUP BY k2, d ORDER BY k2, d;

-- expressions as keys and around aggregates
SELECT k % 2 AS parity, count(*), sum(i4) * 2 AS twice FROM g GROUP BY k % 2 ORDER BY 1;
SELECT k + 1, sum(i4) / count(i4) FROM g GROUP BY k + 1 ORDER BY 1;
SELECT date_trunc('month', ts) AS m, count(*) FROM g GROUP BY 1 ORDER BY 1;

-- FILTER and HAVING
SELECT k, count(*) FILTER (WHERE i4 > 15), sum(i4) FILTER (WHERE f8 > 2.5),
       max(i8) FILTER (WHERE t <> 'b')
  FROM g GROUP BY k ORDER BY k;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM g GROUP BY k HAVING count(*) > 1;
SELECT k, count(*) FROM g GROUP BY k HAVING count(*) > 1 ORDER BY k;
SELECT k, sum(i4) FROM g GROUP BY k HAVING sum(i4) IS NULL OR min(i2) < 0 ORDER BY k;

-- empty input: no groups; one group
SELECT k, count(*), sum(v) FROM empty_g GROUP BY k;
SELECT 1 AS one, count(*), sum(i4) FROM g GROUP BY 1;

-- grouping over a join (a GpuHashJoin below a GpuHashAgg: an argument reads
-- both sides, so the join is not fused, see fused.sql)
EXPLAIN (COSTS OFF)
SELECT a.k, count(*), sum(b.i4 + a.i2) FROM g a JOIN g b ON a.k = b.k GROUP BY a.k;
SELECT a.k, count(*), sum(b.i4 + a.i2) FROM g a JOIN g b ON a.k = b.k GROUP BY a.k ORDER BY 1;

-- larger input: many groups, skewed
CREATE TABLE big_g AS
  SELECT g AS id, (g % 1000) AS k, (g * 7919) % 100003 AS v,
         CASE WHEN g % 10 = 0 THEN NULL ELSE g % 3 END AS n
  FROM generate_series(1, 50000) g;
ANALYZE big_g;
SELECT count(*), sum(c), sum(s) FROM (SELECT k, count(*) c, sum(v) s FROM big_g GROUP BY k) x;
SELECT n, count(*), sum(v), min(v), max(v) FROM big_g GROUP BY n ORDER BY n;
SELECT count(*) FROM (SELECT id, count(*) FROM big_g GROUP BY id) x;

-- sum of int4 beyond bigint is reported as PostgreSQL reports it
-- (not reachable with real tables; int8 sums become numeric instead)

-- grouping columns without a packed encoding go through the dictionary:
-- text, and int8 columns that do not fit 64 bits together (GpuStarAgg, which
-- groups short text itself, is off down to the count(DISTINCT)s: star.sql)
SET gpuhash.enable_star = off;
EXPLAIN (COSTS OFF) SELECT t, count(*) FROM g GROUP BY t;
SELECT t, count(*), sum(i4) FROM g GROUP BY t ORDER BY t;
EXPLAIN (COSTS OFF) SELECT kb, i8, count(*) FROM g GROUP BY kb, i8;
SELECT kb, i8, count(*) FROM g GROUP BY kb, i8 ORDER BY 1, 2;
SELECT k, t, count(*) FROM g GROUP BY k, t ORDER BY 1, 2;

-- exact numeric sums and averages, with the inputs' display scale
SELECT k, sum(i4::numeric / 8), avg(f8::numeric), sum(i8::numeric * 1000000) FROM g GROUP BY k ORDER BY k;
SELECT k2, sum(x), avg(x) FROM (VALUES (1::smallint, 1.5::numeric), (1, 'NaN'), (2, 'Infinity'),
  (2, 2.25), (3, 'Infinity'), (3, '-Infinity'), (4, NULL), (5, 0.000)) v(k2, x)
  GROUP BY k2 ORDER BY k2;

-- min and max of other types run on the CPU, per dictionary group
EXPLAIN (COSTS OFF) SELECT k, min(t), max(t) FROM g GROUP BY k;
SELECT k, min(t), max(t), count(*) FROM g GROUP BY k ORDER BY k;

-- SELECT DISTINCT without aggregates: a GROUP BY of its columns, NULLs,
-- -0 and NaN among them; DISTINCT ON keeps PostgreSQL's plan
EXPLAIN (COSTS OFF) SELECT DISTINCT k, t FROM g;
SELECT DISTINCT k, t FROM g ORDER BY 1, 2;
SELECT DISTINCT f8 FROM (SELECT f8 FROM g UNION ALL SELECT '-0' UNION ALL SELECT 0) x ORDER BY 1;
SELECT DISTINCT k2, d FROM g ORDER BY 1 DESC, 2 LIMIT 3;
SELECT DISTINCT k FROM empty_g;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (k) k, t FROM g ORDER BY k, t;

-- count(DISTINCT x): a GROUP BY of the grouping columns and x below one of
-- the grouping columns, its other aggregates made of partial values
-- (agg_twolevel.c); NULL keys and NULL x, int8 sums beyond 2^63, an empty table
EXPLAIN (COSTS OFF) SELECT k, count(DISTINCT t), sum(i8), avg(i4) FROM g GROUP BY k;
SELECT k, count(DISTINCT t), sum(i8), avg(i4),
       avg(f8), count(*), min(t), max(d) FROM g GROUP BY k ORDER BY k;
SELECT k2, count(DISTINCT k), sum(i2), sum(kb) FROM g GROUP BY k2 ORDER BY k2;
SELECT count(DISTINCT g.k), count(*), sum(i4) FROM empty_g, g WHERE false;
SELECT count(DISTINCT k), count(*), sum(v), avg(v) FROM empty_g;
SET gpuhash.enabled = off;
SELECT k, count(DISTINCT t), sum(i8), avg(i4),
       avg(f8), count(*), min(t), max(d) FROM g GROUP BY k ORDER BY k;
SELECT k2, count(DISTINCT k), sum(i2), sum(kb) FROM g GROUP BY k2 ORDER BY k2;
RESET gpuhash.enabled;
RESET gpuhash.enable_star;

-- grouping sets: PostgreSQL's own over the groups by all their columns,
-- which a GpuHashAgg makes with the partial values (agg_twolevel.c); NULL
-- keys told from a set's NULLs by GROUPING(), the empty set over no rows
EXPLAIN (COSTS OFF) SELECT k, k2, count(*) FROM g GROUP BY GROUPING SETS ((k), (k2));
SELECT k, k2, count(*), sum(i8), avg(i4), min(t), GROUPING(k, k2) FROM g
 GROUP BY ROLLUP (k, k2) ORDER BY 1, 2, 7;
SELECT k2, count(*), sum(i2), GROUPING(k2) FROM g GROUP BY CUBE (k2) ORDER BY 1, 4;
SELECT k, count(*), sum(v) FROM empty_g GROUP BY ROLLUP (k);
SET gpuhash.enabled = off;
SELECT k, k2, count(*), sum(i8), avg(i4), min(t), GROUPING(k, k2) FROM g
 GROUP BY ROLLUP (k, k2) ORDER BY 1, 2, 7;
SELECT k2, count(*), sum(i2), GROUPING(k2) FROM g GROUP BY CUBE (k2) ORDER BY 1, 4;
SELECT k, count(*), sum(v) FROM empty_g GROUP BY ROLLUP (k);
RESET gpuhash.enabled;

-- variance and stddev: a count, a sum and a sum of squares per group, finished
-- by PostgreSQL's own final functions (agg_variance.c)
EXPLAIN (COSTS OFF) SELECT k, stddev(i4) FROM g GROUP BY k;
SELECT k, stddev(i4), var_pop(i8), variance(i2), stddev_pop(k2) FROM g GROUP BY k ORDER BY k;
SELECT stddev_samp(i4), var_samp(i8) FROM empty_g, g WHERE false;
SET gpuhash.enabled = off;
SELECT k, stddev(i4), var_pop(i8), variance(i2), stddev_pop(k2) FROM g GROUP BY k ORDER BY k;
SELECT stddev_samp(i4), var_samp(i8) FROM empty_g, g WHERE false;
RESET gpuhash.enabled;

-- what is not offered: DISTINCT aggregates of two arguments (whose plan,
-- PostgreSQL's, differs between releases), functionally dependent columns
-- (GpuHashAgg's; GpuStarAgg groups by them again)
CREATE FUNCTION plan_has_gpu(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
    IF line ~ 'Gpu' THEN
      RETURN true;
    END IF;
  END LOOP;
  RETURN false;
END $$;
SELECT plan_has_gpu('SELECT k, count(DISTINCT k), count(DISTINCT t) FROM g GROUP BY k')
  AS two_distinct_arguments;
DROP FUNCTION plan_has_gpu(text);
CREATE TABLE pk (id int PRIMARY KEY, name text);
SET gpuhash.enable_star = off;
EXPLAIN (COSTS OFF) SELECT id, name, count(*) FROM pk GROUP BY id;
RESET gpuhash.enable_star;

-- float sums of finite values that overflow raise 22003 as float8pl and
-- float4pl do; an infinite input makes an infinite sum without error
CREATE TABLE fo (g int, x float8, y float4);
INSERT INTO fo SELECT i % 3, CASE i % 3 WHEN 0 THEN 1e308 WHEN 1 THEN 1.5 ELSE 'Infinity' END,
  CASE i % 3 WHEN 0 THEN 3e38 WHEN 1 THEN 1 ELSE '-Infinity' END FROM generate_series(1, 30) i;
ANALYZE fo;
EXPLAIN (COSTS OFF) SELECT g, sum(x) FROM fo GROUP BY g;
SELECT g, sum(x) FROM fo GROUP BY g;
SELECT g, avg(x) FROM fo GROUP BY g;
SELECT g, sum(y) FROM fo GROUP BY g;
SELECT g, avg(y) FROM fo GROUP BY g ORDER BY g;
SELECT g, sum(x), avg(x), sum(y), avg(y) FROM fo WHERE g > 0 GROUP BY g ORDER BY g;
SET gpuhash.enable_star = off;
EXPLAIN (COSTS OFF) SELECT g, sum(x) FROM fo GROUP BY g;
SELECT g, sum(x) FROM fo GROUP BY g;
SELECT g, sum(y) FROM fo GROUP BY g;
SELECT g, avg(x) FROM fo GROUP BY g;
SELECT g, sum(x), avg(x), sum(y), avg(y) FROM fo WHERE g > 0 GROUP BY g ORDER BY g;
RESET gpuhash.enable_star;

-- by cost, the dictionary (grouping columns that do not pack) is charged as
-- PostgreSQL charges a HashAggregate of them: two int8 columns of as many
-- groups as rows stay PostgreSQL's, one that packs goes to the device
SET gpuhash.force = off;
SET gpuhash.min_rows = 0;
SET max_parallel_workers_per_gather = 0;
CREATE TABLE gd AS SELECT g::int8 AS a, (g * 7)::int8 AS b, g % 10 AS v
  FROM generate_series(1, 300000) g;
ANALYZE gd;
EXPLAIN (COSTS OFF) SELECT a, b, count(*), sum(v) FROM gd GROUP BY a, b;
EXPLAIN (COSTS OFF) SELECT a, count(*), sum(v) FROM gd GROUP BY a;
RESET max_parallel_workers_per_gather;
RESET gpuhash.min_rows;
RESET gpuhash.force;
DROP TABLE gd;

-- turning it off gives PostgreSQL's own plan
SET gpuhash.enable_groupby = off;
EXPLAIN (COSTS OFF) SELECT k, count(*) FROM g GROUP BY k;
RESET gpuhash.enable_groupby;

DROP TABLE g, empty_g, big_g, pk, fo;
