-- Differential tests of grouping sets (ROLLUP, CUBE, GROUPING SETS) planned
-- over the groups by all their columns (agg_twolevel.c): every query runs
-- with gpuhash off (PostgreSQL's own grouping sets over every row) and
-- forced on, and must return the same rows; the "on" plan must group the rows
-- on the device below PostgreSQL's grouping sets (or, where the query is not
-- one to rewrite, keep PostgreSQL's plan).  The data has NULLs in the
-- grouping columns (told from a set's NULLs by GROUPING()), skew, duplicates,
-- text keys under two collations; an empty table; a star's dimensions;
-- count(DISTINCT x); window functions over the sets; WITH queries; serial and
-- parallel plans.
BEGIN;
SELECT plan(90);
SELECT setseed(0.47);
CREATE TABLE gs_fact AS
  SELECT g AS id,
         CASE WHEN random() < 0.1 THEN NULL ELSE (power(random(), 2) * 40)::int END AS a,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 6)::int2 END AS b,
         (random() * 3)::int8 AS c,
         (random() * 1000)::int AS v,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 1000)::numeric(10,2) END AS n,
         ((random() * 400)::int / 4.0)::float8 AS f,
         (ARRAY['a', 'B', 'c', NULL])[g % 4 + 1] AS s,
         (g % 50) AS dk
    FROM generate_series(1, 60000) g;
CREATE TABLE gs_dim (dk int PRIMARY KEY, region text, nation text, w int);
INSERT INTO gs_dim SELECT g, 'region' || (g % 3), 'nation' || (g % 11), g % 4
  FROM generate_series(0, 49) g;
CREATE TABLE gs_empty (a int, b int, v int);
ANALYZE gs_fact, gs_dim, gs_empty;

\ir lib/digests.sql
\ir lib/helpers.sql

CREATE FUNCTION pg_temp.sets_cases(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' ROLLUP',
    'SELECT a, b, count(*), sum(v), GROUPING(a, b) FROM gs_fact GROUP BY ROLLUP (a, b)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' CUBE, every aggregate it splits',
    'SELECT a, b, count(*), count(n), sum(v), sum(b), sum(c), sum(n), sum(f), avg(v), avg(b),
            avg(c), avg(n), avg(f), min(v), max(n), min(s), max(s COLLATE "C"), GROUPING(b)
       FROM gs_fact GROUP BY CUBE (a, b)', 'Gpu');
  -- -0s alone: their sum -0 (float8pl's), their average 0 (float8_accum's)
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' ROLLUP of float sums and averages of -0s',
    'SELECT a, b, sum(CASE WHEN a < 20 THEN -0.0::float8 ELSE f END), avg(CASE WHEN a < 20 THEN -0.0::float8 ELSE f END),
            avg(-0.0::float8 * v), sum(-0.0::float8 * v)
       FROM gs_fact GROUP BY ROLLUP (a, b)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' GROUPING SETS with ()',
    'SELECT a, s, c, count(*), sum(n) FROM gs_fact GROUP BY GROUPING SETS ((a), (s, c), ())', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a column beside a ROLLUP',
    'SELECT c, a, b, count(*), max(v) FROM gs_fact GROUP BY c, ROLLUP (a, b)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' GROUP BY DISTINCT',
    'SELECT a, b, count(*) FROM gs_fact GROUP BY DISTINCT ROLLUP (a, b), ROLLUP (a)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a set repeated',
    'SELECT b, count(*) FROM gs_fact GROUP BY GROUPING SETS ((b), (b), ())', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' no aggregate',
    'SELECT a, b FROM gs_fact GROUP BY ROLLUP (a, b)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' expressions, FILTER, HAVING, ORDER BY, LIMIT',
    'SELECT a % 7 AS m, s, count(*) FILTER (WHERE v > 500), sum(v) + max(v), GROUPING(s)
       FROM gs_fact WHERE v > 10 GROUP BY ROLLUP (a % 7, s)
     HAVING sum(v) > 1000 OR GROUPING(s) = 1 ORDER BY 1, 2 LIMIT 20', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' text keys under a collation',
    'SELECT s COLLATE "C", count(*), min(s) FROM gs_fact GROUP BY CUBE (s COLLATE "C")', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' over no rows',
    'SELECT a, b, count(*), sum(v), avg(v), max(a) FROM gs_empty GROUP BY ROLLUP (a, b)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' over no rows, no empty set',
    'SELECT a, count(*) FROM gs_empty GROUP BY GROUPING SETS ((a), (b))', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' dimension keys of a star',
    'SELECT d.region, d.nation, count(*), sum(f.v), avg(f.n), GROUPING(d.region, d.nation)
       FROM gs_fact f JOIN gs_dim d ON f.dk = d.dk WHERE d.w < 3
      GROUP BY ROLLUP (d.region, d.nation)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a dimension key and a fact key',
    'SELECT d.region, f.b, sum(f.v * d.w) FROM gs_fact f JOIN gs_dim d ON f.dk = d.dk
      GROUP BY CUBE (d.region, f.b)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' window functions over the sets',
    'SELECT s, c, sum(v) AS t, GROUPING(s) + GROUPING(c) AS level,
            rank() OVER (PARTITION BY GROUPING(s) + GROUPING(c),
                         CASE WHEN GROUPING(c) = 0 THEN s END ORDER BY sum(v) DESC, s, c),
            sum(sum(v)) OVER (PARTITION BY s)
       FROM gs_fact GROUP BY ROLLUP (s, c) ORDER BY level DESC, s, c LIMIT 9', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' in a WITH query',
    'WITH r AS (SELECT a, b, sum(v) t FROM gs_fact GROUP BY ROLLUP (a, b))
     SELECT count(*), max(t), sum(t) FILTER (WHERE a IS NULL) FROM r', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' in a sub-select of FROM',
    'SELECT max(t), count(*) FROM (SELECT a, b, sum(v) t FROM gs_fact GROUP BY ROLLUP (a, b)) q',
    'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' count(DISTINCT) with grouping sets',
    'SELECT a, count(DISTINCT b) FROM gs_fact GROUP BY ROLLUP (a)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' count(DISTINCT) of a grouping column, CUBE',
    'SELECT a, c, count(DISTINCT c), count(DISTINCT c) + 1, count(*), sum(v), avg(n),
            GROUPING(a, c) FROM gs_fact GROUP BY CUBE (a, c)', 'Gpu');
  -- not rewritten: PostgreSQL's plan
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' an aggregate it does not split',
    'SELECT b, string_agg(s, '','' ORDER BY id) FROM gs_fact WHERE id < 100 GROUP BY ROLLUP (b)',
    'Gpu', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a volatile target',
    'SELECT b, count(*) + (random() * 0)::int FROM gs_fact GROUP BY ROLLUP (b)', 'Gpu', false);
  RETURN NEXT throws_ok('SELECT a, sum(10 / (v - v)) FROM gs_fact GROUP BY ROLLUP (a)', '22012',
                        'division by zero', tag || ' an error in an argument is PostgreSQL''s');
END $$;
SET LOCAL gpuhash.force = on;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.sets_cases('serial,');
SELECT pg_temp.parallel_plans(2);
SELECT * FROM pg_temp.sets_cases('parallel,');
SELECT ok(pg_temp.plan_text('SELECT a, b, count(*), sum(v) FROM gs_fact GROUP BY ROLLUP (a, b)')
          ~ 'Group Key: \(\)(.|\n)*Gather(.|\n)*Gpu',
          'parallel: the finest groups are made in the workers, the sets above the Gather');
SELECT set_config('gpuhash.force', 'off', true) IS NOT NULL AS by_cost;
SELECT is((SELECT count(*) FROM regexp_matches(
             pg_temp.plan_text('SELECT a, b, count(*), sum(v) FROM gs_fact GROUP BY ROLLUP (a, b)'),
             'Aggregate', 'g')), 1::bigint,
          'by cost, below gpuhash.min_rows (no gpuhash node): PostgreSQL''s grouping sets alone');
SELECT set_config('gpuhash.min_rows', '0', true) IS NOT NULL AS any_size;
SELECT ok(pg_temp.plan_text('SELECT a, b, count(*), sum(v) FROM gs_fact GROUP BY ROLLUP (a, b)') ~ 'Gpu',
          'by cost: a ROLLUP into few groups is planned over the finest groups');
SELECT set_config('gpuhash.enable_groupby', 'off', true) IS NOT NULL AS groupby_off;
SELECT ok(pg_temp.plan_text('SELECT a, b, count(*) FROM gs_fact GROUP BY ROLLUP (a, b)') !~ 'Gpu',
          'gpuhash.enable_groupby = off: the query as written');
SELECT * FROM finish();
ROLLBACK;
