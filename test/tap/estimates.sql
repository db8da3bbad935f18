-- Join sizes over unique keys of several columns (src/join_estimates.c):
-- with gpuhash.unique_key_estimates on, a join that equates every column of
-- a unique index of several columns is estimated as over a foreign key of
-- those columns (each row of the other side meets one row), instead of the
-- product of the columns' selectivities, which correlated columns make far
-- too small.  Partial and expression indexes, keys not fully equated, and
-- the setting or gpuhash.enabled off leave PostgreSQL's estimate alone; a
-- real foreign key is not counted twice; results never change.
BEGIN;
SELECT plan(12);

SET LOCAL max_parallel_workers_per_gather = 0;
SELECT setseed(0.31);

-- pairs of correlated columns, unique together: 1000 values of a, each with
-- four of b, b alone nearly as varied as a (as TPC-H's partsupp)
CREATE TEMP TABLE pairs (a int, b int, v int, PRIMARY KEY (a, b));
INSERT INTO pairs SELECT a, (a * 7 + k) % 1000, a + k FROM generate_series(1, 1000) a, generate_series(0, 3) k;
-- 100000 rows each meeting one pair (as lineitem)
CREATE TEMP TABLE facts (id int, a int, b int, w int);
INSERT INTO facts SELECT g, a, (a * 7 + g % 4) % 1000, g % 10
  FROM (SELECT g, 1 + (random() * 999)::int AS a FROM generate_series(1, 100000) g) s;
-- the same pairs under a partial index, and under an index on an expression
CREATE TEMP TABLE pairs_part (a int, b int, v int);
INSERT INTO pairs_part SELECT * FROM pairs;
CREATE UNIQUE INDEX ON pairs_part (a, b) WHERE v > 0;
CREATE TEMP TABLE pairs_expr (a int, b int, v int);
INSERT INTO pairs_expr SELECT * FROM pairs;
CREATE UNIQUE INDEX ON pairs_expr (a, (b + 0));
-- the same pairs with a real foreign key from facts_fk
CREATE TEMP TABLE facts_fk (id int, a int, b int, w int, FOREIGN KEY (a, b) REFERENCES pairs (a, b));
INSERT INTO facts_fk SELECT * FROM facts;
ANALYZE pairs, facts, pairs_part, pairs_expr, facts_fk;

-- the planner's row estimate of q's top node
CREATE FUNCTION pg_temp.est(q text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
  j json;
BEGIN
  EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO j;
  RETURN (j -> 0 -> 'Plan' ->> 'Plan Rows')::float8;
END $$;

SET LOCAL gpuhash.enable_join = off;
SET LOCAL gpuhash.enable_groupby = off;

SELECT ok(abs(pg_temp.est('SELECT * FROM facts f JOIN pairs p ON f.a = p.a AND f.b = p.b') - 100000) < 1000,
  'a join on both columns of a unique key: each fact row meets one pair');
SELECT ok(abs(pg_temp.est('SELECT * FROM facts f JOIN pairs p ON f.a = p.a AND f.b = p.b WHERE p.v % 4 = 0') -
              100000 * pg_temp.est('SELECT * FROM pairs p WHERE p.v % 4 = 0') / 4000) < 100,
  '... times the fraction of pairs their own quals are estimated to keep');
SELECT cmp_ok(pg_temp.est('SELECT * FROM facts f JOIN pairs p ON f.b = p.a AND f.a = p.b'), '>', 50000::float8,
  'the columns equated in another order: the same estimate (taken as a key)');
SELECT cmp_ok(pg_temp.est('SELECT * FROM facts f, pairs p, facts g WHERE f.a = p.a AND g.b = p.b AND f.id = g.id'), '<', 5000::float8,
  'the key''s columns equated to two relations: not a reference, PostgreSQL''s estimate');
SELECT cmp_ok(pg_temp.est('SELECT * FROM facts f JOIN pairs_part p ON f.a = p.a AND f.b = p.b'), '<', 5000::float8,
  'a partial unique index: PostgreSQL''s estimate');
SELECT cmp_ok(pg_temp.est('SELECT * FROM facts f JOIN pairs_expr p ON f.a = p.a AND f.b = p.b'), '<', 5000::float8,
  'a unique index on an expression: PostgreSQL''s estimate');
SELECT is(pg_temp.est('SELECT * FROM facts_fk f JOIN pairs p ON f.a = p.a AND f.b = p.b'),
          (SELECT pg_temp.est('SELECT * FROM facts_fk f JOIN pairs p ON f.a = p.a AND f.b = p.b')
             FROM set_config('gpuhash.unique_key_estimates', 'off', true)),
  'a real foreign key: the same estimate, not counted twice');
RESET gpuhash.unique_key_estimates;
SELECT cmp_ok(pg_temp.est('SELECT * FROM facts f JOIN pairs p ON f.a = p.a'), '<', 500000::float8,
  'one column of the key: PostgreSQL''s estimate (four pairs a value)');

SET LOCAL gpuhash.unique_key_estimates = off;
SELECT cmp_ok(pg_temp.est('SELECT * FROM facts f JOIN pairs p ON f.a = p.a AND f.b = p.b'), '<', 5000::float8,
  'gpuhash.unique_key_estimates off: PostgreSQL''s product of selectivities');
RESET gpuhash.unique_key_estimates;
SET LOCAL gpuhash.enabled = off;
SELECT cmp_ok(pg_temp.est('SELECT * FROM facts f JOIN pairs p ON f.a = p.a AND f.b = p.b'), '<', 5000::float8,
  'gpuhash.enabled off: PostgreSQL''s own estimate');
RESET gpuhash.enabled;

-- the plans the estimates make return the same rows
\ir lib/digests.sql
SELECT * FROM pg_temp.same_rows('a join of three on a key of two columns, grouped',
  'SELECT f.w, count(*), sum(p.v), sum(g.w) FROM facts f JOIN pairs p ON f.a = p.a AND f.b = p.b
     JOIN facts g ON g.id = f.id + 1 GROUP BY f.w', 'Agg');

SELECT * FROM finish();
ROLLBACK;
