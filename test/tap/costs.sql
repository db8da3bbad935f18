-- The cost model's choices between gpuhash's plans and PostgreSQL's, by cost
-- (gpuhash.force off), where opening the engine costs nothing (the CPU
-- backend's, or the GPU service's): a GpuStarAgg over a dimension half as
-- large as its fact table, with a selective filter on the fact table, is
-- chosen (each dimension row's way to the device costs what it was measured
-- to, star_path.c); one twice as large as the fact table is not (reading it
-- costs more than the fact table's scan saves); the rows are PostgreSQL's
-- either way.
BEGIN;
SELECT plan(6);

SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpuhash.min_rows = 0;
\ir lib/digests.sql
\ir lib/helpers.sql

CREATE TABLE cost_fact (k int8, d date, q int4, v int8);
INSERT INTO cost_fact
  SELECT 1 + (g * 7919) % 100000, date '2020-01-01' + g % 1000, g % 47, g
    FROM generate_series(1, 200000) g;
CREATE TABLE cost_dim (k int8 PRIMARY KEY, prio int4, w int8);
INSERT INTO cost_dim SELECT g, g % 5, g % 100 FROM generate_series(1, 100000) g;
CREATE TABLE cost_big (k int8 PRIMARY KEY, prio int4, w int8);
INSERT INTO cost_big SELECT g, g % 5, g % 100 FROM generate_series(1, 400000) g;
ANALYZE cost_fact, cost_dim, cost_big;

CREATE FUNCTION pg_temp.q(dim text) RETURNS text LANGUAGE sql AS $$
  SELECT format('SELECT d.prio, count(*), sum(f.v), sum(d.w) FROM cost_fact f JOIN %s d ON f.k = d.k
                  WHERE f.d >= date ''2020-03-01'' AND f.d < date ''2020-03-08'' AND f.q < 10
                  GROUP BY d.prio', dim)
$$;

SELECT ok(pg_temp.plan_text(pg_temp.q('cost_dim')) ~ 'GpuStarAgg',
          'by cost: a star over a dimension half the fact table''s size, the fact table filtered');
SELECT ok(pg_temp.plan_text(pg_temp.q('cost_big')) !~ 'Gpu',
          'by cost: PostgreSQL''s plan where the dimension is twice the fact table''s size');
SELECT set_config('gpuhash.enabled', 'off', true) IS NOT NULL AS off;
CREATE TEMP TABLE pg_rows AS
  SELECT 'cost_dim' AS dim, pg_temp.rows_digest(pg_temp.q('cost_dim')) AS digest
  UNION ALL SELECT 'cost_big', pg_temp.rows_digest(pg_temp.q('cost_big'));
SELECT ok(pg_temp.plan_text(pg_temp.q('cost_dim')) !~ 'Gpu', 'gpuhash off: PostgreSQL''s plan');
SELECT set_config('gpuhash.enabled', 'on', true) IS NOT NULL AS on_again;
SELECT is(pg_temp.rows_digest(pg_temp.q('cost_dim')),
          (SELECT digest FROM pg_rows WHERE dim = 'cost_dim'),
          'the star''s rows are PostgreSQL''s');
SELECT is(pg_temp.rows_digest(pg_temp.q('cost_big')),
          (SELECT digest FROM pg_rows WHERE dim = 'cost_big'),
          'the other plan''s rows are PostgreSQL''s');
SELECT ok((SELECT count(*) FROM pg_rows WHERE digest ~ '^[1-9]') = 2, 'both queries return rows');

SELECT * FROM finish();
ROLLBACK;
