-- Differential tests of variance and standard deviation planned in two
-- levels (agg_twolevel.c, agg_variance.c): a GROUP BY on the device makes
-- each group's count, sum and sum of squares, and the aggregate's own final
-- function finishes them.  Every query runs with gpuhash off and forced on and
-- must return the same rows, digit for digit; the "on" plan must group on the
-- device.  int2, int4, int8 and numeric values with NULLs, groups of one and of
-- none, NaN and infinities, FILTER, HAVING, with grouping sets and
-- count(DISTINCT), over a star, in a WITH query, serial and parallel; float
-- arguments stay PostgreSQL's (whose float results a parallel plan's order of
-- rows moves in the last digits: compared rounded).
BEGIN;
SELECT plan(65);
SELECT setseed(0.53);
CREATE TABLE vr_fact AS
  SELECT g AS id,
         CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 30)::int END AS k,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 32767)::int2 END AS i2,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 2e9 - 1e9)::int END AS i4,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 9e18 - 4.5e18)::int8 END AS i8,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 1e7)::numeric(12,3) END AS n,
         (random() * 100)::float8 AS f,
         g % 40 AS dk
    FROM generate_series(1, 40000) g;
-- a group of one row, and groups whose numerics are NaN or infinite
INSERT INTO vr_fact VALUES (40001, 100, 7, 7, 7, 7.5, 1, 1),
  (40002, 101, 1, 1, 1, 'NaN', 1, 1), (40003, 101, 2, 2, 2, 1, 1, 1),
  (40004, 102, 1, 1, 1, 'Infinity', 1, 1), (40005, 102, 1, 1, 1, '-Infinity', 1, 1),
  (40006, 103, NULL, NULL, NULL, NULL, NULL, 1);
CREATE TABLE vr_dim (dk int PRIMARY KEY, region text);
INSERT INTO vr_dim SELECT g, 'region' || (g % 4) FROM generate_series(0, 39) g;
CREATE TABLE vr_empty (k int, i4 int, n numeric(10,2));
ANALYZE vr_fact, vr_dim, vr_empty;

\ir lib/digests.sql
\ir lib/helpers.sql

CREATE FUNCTION pg_temp.variance_cases(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' every function of int4',
    'SELECT k, variance(i4), var_samp(i4), var_pop(i4), stddev(i4), stddev_samp(i4), stddev_pop(i4)
       FROM vr_fact GROUP BY k', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' int2 and int8',
    'SELECT k, stddev(i2), var_pop(i2), stddev_pop(i8), variance(i8), count(*) FROM vr_fact GROUP BY k',
    'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' numeric, NaN and infinities',
    'SELECT k, stddev(n), var_samp(n), stddev_pop(n), var_pop(n), sum(n), avg(n) FROM vr_fact GROUP BY k',
    'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' an expression, FILTER, HAVING, ORDER BY',
    'SELECT k % 5 AS m, stddev(i4 / 7) FILTER (WHERE i2 > 1000), variance(n * 2) FROM vr_fact
      GROUP BY 1 HAVING stddev(i4) > 0 ORDER BY m', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a plain aggregate',
    'SELECT stddev(i4), var_pop(i4), variance(i2), count(*) FROM vr_fact', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' over no rows',
    'SELECT stddev(i4), var_pop(n), stddev_pop(i4) FROM vr_empty', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' grouped over no rows',
    'SELECT k, stddev(i4), var_pop(n) FROM vr_empty GROUP BY k', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' with ROLLUP',
    'SELECT k % 3, dk % 2, stddev(i4), var_samp(n), GROUPING(k % 3) FROM vr_fact
      GROUP BY ROLLUP (k % 3, dk % 2)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' with count(DISTINCT)',
    'SELECT k % 4, count(DISTINCT dk), stddev(i4), variance(i2) FROM vr_fact GROUP BY 1', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' over a star',
    'SELECT d.region, stddev(f.i4), var_pop(f.n) FROM vr_fact f JOIN vr_dim d ON f.dk = d.dk
      GROUP BY d.region', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' in a sub-select of FROM',
    'SELECT max(s), min(s) FROM (SELECT k, stddev(i8) s FROM vr_fact GROUP BY k) q', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' in a WITH query read twice',
    'WITH inv AS (SELECT k, dk, stddev_samp(i4) sd, avg(i4) mean FROM vr_fact GROUP BY k, dk)
     SELECT a.k, a.dk, a.sd, a.mean, b.sd FROM inv a JOIN inv b ON a.k = b.k AND a.dk = b.dk + 1
      WHERE a.sd > 0', 'Agg)');  -- a GpuHashAgg or GpuStarAgg, not only the join's node
  -- not rewritten: PostgreSQL's plan
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' float arguments',
    'SELECT k, round(stddev(f)::numeric, 4) FROM vr_fact GROUP BY k', 'Gpu', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' stddev(DISTINCT)',
    'SELECT k, stddev(DISTINCT i4) FROM vr_fact GROUP BY k', 'Gpu', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a volatile target',
    'SELECT k, stddev(i4) + random() * 0 FROM vr_fact GROUP BY k', 'Gpu', false);
END $$;
SET LOCAL gpuhash.force = on;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.variance_cases('serial,');
SELECT pg_temp.parallel_plans(2);
SELECT * FROM pg_temp.variance_cases('parallel,');
SELECT set_config('gpuhash.force', 'off', true) IS NOT NULL AS by_cost;
SELECT set_config('gpuhash.min_rows', '0', true) IS NOT NULL AS any_size;
SELECT ok(pg_temp.plan_text('SELECT k, stddev(i4) FROM vr_fact GROUP BY k') ~ 'Gpu',
          'by cost: a standard deviation into few groups is planned in two levels');
-- the final function itself, called with what no aggregate makes
SELECT throws_ok($$SELECT gpuhash_variance_final('sum(int4)'::regprocedure, 1, 1, 1)$$, '22023', NULL,
                 'gpuhash_variance_final: not a variance');
SELECT throws_ok($$SELECT gpuhash_variance_final('stddev(numeric)'::regprocedure, -1, 1, 1)$$, '22023',
                 NULL, 'gpuhash_variance_final: a negative count');
SELECT throws_ok($$SELECT gpuhash_variance_final('stddev(int4)'::regprocedure, 2, 'NaN', 1)$$, '22023',
                 NULL, 'gpuhash_variance_final: NaN where no integer makes it');
SELECT is(gpuhash_variance_final('var_samp(int4)'::regprocedure, 3, 6, 14), variance(x),
          'gpuhash_variance_final: var_samp of 1, 2, 3')
  FROM (VALUES (1), (2), (3)) v(x);
SELECT * FROM finish();
ROLLBACK;
