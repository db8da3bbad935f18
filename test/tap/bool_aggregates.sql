-- Differential tests of bool_and, bool_or and every planned in two levels
-- (agg_twolevel.c): a GROUP BY on the device makes each group's minimum (or
-- maximum) of CASE WHEN x THEN 1 WHEN NOT x THEN 0 END, and the outer level
-- takes the minimum (maximum) of those and makes it bool again.  Every query
-- runs with gpuhash off and forced on and must return the same rows; the "on"
-- plan must group on the device.  NULL arguments (left out, as the aggregate
-- leaves them: a group of NULLs only is NULL), groups of one and of none, no
-- rows at all, FILTER, HAVING, an argument of several columns, with other
-- aggregates, grouping sets, count(DISTINCT) and a variance, over a star, in
-- a WITH query, serial and parallel; bool_and(DISTINCT x) stays PostgreSQL's.
BEGIN;
SELECT plan(45);
SELECT setseed(0.61);
CREATE TABLE ba_fact AS
  SELECT g AS id,
         CASE WHEN random() < 0.1 THEN NULL ELSE (random() * 30)::int END AS k,
         CASE WHEN random() < 0.1 THEN NULL ELSE random() < 0.97 END AS b,
         CASE WHEN random() < 0.05 THEN NULL ELSE (random() * 1000)::int END AS v,
         g % 40 AS dk
    FROM generate_series(1, 40000) g;
-- a group of one row, one whose b are all NULL, one all false
INSERT INTO ba_fact VALUES (40001, 100, true, 1, 1), (40002, 101, NULL, 2, 1),
  (40003, 101, NULL, 3, 2), (40004, 102, false, 4, 3), (40005, 102, false, 5, 3);
CREATE TABLE ba_dim (dk int PRIMARY KEY, region text);
INSERT INTO ba_dim SELECT g, 'region' || (g % 4) FROM generate_series(0, 39) g;
CREATE TABLE ba_empty (k int, b bool, v int);
ANALYZE ba_fact, ba_dim, ba_empty;

\ir lib/digests.sql
\ir lib/helpers.sql

CREATE FUNCTION pg_temp.bool_cases(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' bool_and, bool_or, every',
    'SELECT k, bool_and(b), bool_or(b), every(b), count(b) FROM ba_fact GROUP BY k', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' of expressions, with sums and averages',
    'SELECT k % 7, bool_and(v < 990), bool_or(v > 995 AND b), sum(v), avg(v) FROM ba_fact GROUP BY 1',
    'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' FILTER, HAVING, ORDER BY',
    'SELECT k, bool_or(b) FILTER (WHERE v > 500), every(v IS NOT NULL) FROM ba_fact
      GROUP BY k HAVING bool_and(v < 999) OR count(*) < 5 ORDER BY k', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a plain aggregate',
    'SELECT bool_and(b), bool_or(NOT b), every(v >= 0), count(*) FROM ba_fact', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' over no rows',
    'SELECT bool_and(b), bool_or(b) FROM ba_empty', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' grouped over no rows',
    'SELECT k, bool_and(b) FROM ba_empty GROUP BY k', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' with ROLLUP',
    'SELECT k % 3, dk % 2, bool_and(b), bool_or(v > 998), GROUPING(k % 3) FROM ba_fact
      GROUP BY ROLLUP (k % 3, dk % 2)', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' with count(DISTINCT) and a variance',
    'SELECT k % 4, count(DISTINCT dk), bool_or(v = 7), stddev(v) FROM ba_fact GROUP BY 1', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' over a star',
    'SELECT d.region, bool_and(f.b), every(f.v < 1000) FROM ba_fact f JOIN ba_dim d ON f.dk = d.dk
      GROUP BY d.region', 'Gpu');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' in a WITH query',
    'WITH g AS (SELECT k, bool_or(b) anyb, bool_and(b) allb FROM ba_fact GROUP BY k)
     SELECT count(*) FILTER (WHERE anyb), count(*) FILTER (WHERE allb), count(*) FROM g', 'Gpu');
  -- not rewritten: PostgreSQL's plan
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' bool_and(DISTINCT)',
    'SELECT k, bool_and(DISTINCT b) FROM ba_fact GROUP BY k', 'Gpu', false);
END $$;
SELECT * FROM pg_temp.forced_serial_then_parallel('pg_temp.bool_cases');
SELECT set_config('gpuhash.force', 'off', true) IS NOT NULL AS by_cost;
SELECT set_config('gpuhash.min_rows', '0', true) IS NOT NULL AS any_size;
SELECT ok(pg_temp.plan_text('SELECT k, bool_and(b), bool_or(b) FROM ba_fact GROUP BY k') ~ 'Gpu',
          'by cost: bool_and and bool_or into few groups are planned in two levels');
SELECT * FROM finish();
ROLLBACK;
