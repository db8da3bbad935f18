-- Differential tests of count(DISTINCT x) rewritten as a GROUP BY that adds x
-- (agg_twolevel.c): every query runs with gpuhash off (PostgreSQL's own
-- DISTINCT aggregate, sorted per group) and forced on, and must return the
-- same rows; the "on" plan must group on the device (or, where the query is
-- not one to rewrite, keep PostgreSQL's plan).  The data has NULLs in the
-- grouping columns and in x, skewed x, duplicates, text x; an empty table;
-- serial and parallel plans.
BEGIN;
SELECT plan(97);
SELECT setseed(0.31);
CREATE TABLE dt_fact AS
  SELECT g AS id,
         CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 50)::int END AS k,
         CASE WHEN random() < 0.05 THEN NULL ELSE (power(random(), 2) * 3000)::int END AS x,
         (random() * 1000)::int AS v,
         (random() * 1000)::numeric(10,2) AS n,
         ((random() * 400)::int / 4.0)::float8 AS f,
         md5((g % 700)::text) AS t,
         (ARRAY['a', 'B', 'c', NULL])[g % 4 + 1] AS s
    FROM generate_series(1, 60000) g;
CREATE TABLE dt_dim (k int PRIMARY KEY, grp text, w int);
INSERT INTO dt_dim SELECT g, 'grp' || (g % 7), g % 3 FROM generate_series(0, 50) g;
CREATE TABLE dt_empty (k int, x int);
ANALYZE dt_fact, dt_dim, dt_empty;

\ir lib/digests.sql
\ir lib/helpers.sql

CREATE FUNCTION pg_temp.distinct_cases(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' grouped',
    'SELECT k, count(DISTINCT x) FROM dt_fact GROUP BY k', 'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' with the other aggregates',
    'SELECT k, count(DISTINCT x), count(*), count(x), sum(v), sum(n), sum(x::int8), sum(v::int2),
            avg(v), avg(n), avg(x::int8), avg(f), sum(f), min(v), max(n)
       FROM dt_fact GROUP BY k', 'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' text, min and max of text, collations',
    'SELECT s, count(DISTINCT t), min(t), max(t COLLATE "C"), count(*) FROM dt_fact GROUP BY s',
    'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' of a grouping column',
    'SELECT k, count(DISTINCT k), count(*) FROM dt_fact GROUP BY k', 'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a plain aggregate',
    'SELECT count(DISTINCT x), count(*), sum(v), min(x), avg(n) FROM dt_fact', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a plain aggregate over no rows',
    'SELECT count(DISTINCT x), count(*), count(x), sum(x), avg(x), max(k) FROM dt_empty', 'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' grouped over no rows',
    'SELECT k, count(DISTINCT x) FROM dt_empty GROUP BY k', 'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' HAVING, ORDER BY and LIMIT',
    'SELECT k, count(DISTINCT x) AS u, sum(v) FROM dt_fact GROUP BY k
     HAVING count(DISTINCT x) > 900 AND sum(v) > 0 ORDER BY u DESC, k LIMIT 5', 'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' FILTER on the others',
    'SELECT k, count(DISTINCT x), count(*) FILTER (WHERE v > 500),
            sum(v) FILTER (WHERE x IS NULL), avg(n) FILTER (WHERE s = ''a'') FROM dt_fact GROUP BY k',
    'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' expressions',
    'SELECT k % 5, count(DISTINCT x / 10), sum(v) + count(DISTINCT x / 10), max(v) - min(v)
       FROM dt_fact WHERE v > 10 GROUP BY 1', 'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' over a join',
    'SELECT d.grp, count(DISTINCT f.x), sum(f.v), avg(f.n) FROM dt_fact f JOIN dt_dim d ON f.k = d.k
      GROUP BY d.grp', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' of a dimension column',
    'SELECT f.s, count(DISTINCT d.grp), count(*) FROM dt_fact f JOIN dt_dim d ON f.k = d.k
      GROUP BY f.s', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' SELECT DISTINCT over it',
    'SELECT DISTINCT count(DISTINCT x) > 700 FROM dt_fact GROUP BY k', 'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' in a sub-select of FROM',
    'SELECT max(u), min(u) FROM (SELECT k, count(DISTINCT x) u FROM dt_fact GROUP BY k) q',
    'GpuHashAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a sub-select in WHERE',
    'SELECT k, count(DISTINCT x) FROM dt_fact WHERE k IN (SELECT k FROM dt_dim WHERE w = 1)
      GROUP BY k', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' sum, avg, min and max of DISTINCT x',
    'SELECT k, sum(DISTINCT x), avg(DISTINCT x), min(DISTINCT x), max(DISTINCT x), count(DISTINCT x),
            sum(v) FROM dt_fact GROUP BY k', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' sum(DISTINCT) of a numeric expression',
    'SELECT k % 5, sum(DISTINCT x::numeric / 4), avg(DISTINCT x::numeric / 4) FROM dt_fact GROUP BY 1',
    'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' sum(DISTINCT) over no rows',
    'SELECT sum(DISTINCT x), avg(DISTINCT x) FROM dt_empty', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' sum(DISTINCT) with ROLLUP',
    'SELECT k % 3, v % 2, sum(DISTINCT x), avg(DISTINCT x) FROM dt_fact GROUP BY ROLLUP (k % 3, v % 2)',
    'Gpu');
  -- not rewritten: PostgreSQL's plan
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' two DISTINCT arguments',
    'SELECT k, count(DISTINCT x), count(DISTINCT v) FROM dt_fact GROUP BY k', 'Gpu', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' float avg(DISTINCT)',
    'SELECT k, avg(DISTINCT f) FROM dt_fact GROUP BY k', 'Gpu', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a DISTINCT aggregate with FILTER',
    'SELECT k, count(DISTINCT x) FILTER (WHERE v > 3) FROM dt_fact GROUP BY k', 'Gpu', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' an aggregate it does not split',
    'SELECT k, count(DISTINCT x), string_agg(s, '','' ORDER BY id) FROM dt_fact WHERE id < 100 GROUP BY k',
    'Gpu', false);
  RETURN NEXT throws_ok('SELECT k, count(DISTINCT 10 / (x - x)) FROM dt_fact GROUP BY k', '22012',
                        'division by zero', tag || ' an error in x is PostgreSQL''s');
END $$;
SET LOCAL gpuhash.force = on;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.distinct_cases('serial,');
SELECT pg_temp.parallel_plans(2);
SELECT * FROM pg_temp.distinct_cases('parallel,');
SELECT ok(pg_temp.plan_text('SELECT k, count(DISTINCT x), sum(v) FROM dt_fact GROUP BY k')
          ~ 'Gather(.|\n)*GpuHashAgg',
          'parallel: the subquery''s GROUP BY runs in the workers');
SELECT set_config('gpuhash.force', 'off', true) IS NOT NULL AS by_cost;
SELECT ok(pg_temp.plan_text('SELECT s, count(DISTINCT t) FROM dt_fact GROUP BY s') !~ 'Gpu',
          'by cost: text keys, which would go through the dictionary, leave the query as written');
SELECT set_config('gpuhash.enable_groupby', 'off', true) IS NOT NULL AS groupby_off;
SELECT ok(pg_temp.plan_text('SELECT k, count(DISTINCT x) FROM dt_fact GROUP BY k') !~ 'distinct_groups',
          'gpuhash.enable_groupby = off: the query as written');
SELECT * FROM finish();
ROLLBACK;
