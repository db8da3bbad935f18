-- Group keys as PostgreSQL shows them: a group's values are the first row's,
-- as PostgreSQL's HashAggregate shows them in a serial plan, where values
-- equal by the grouping equality print differently -- float -0 and 0,
-- numeric 1.0 and 1.00, citext 'ABC' and 'abc'.  Each query's rows, as
-- text, with gpuhash forced on must be those of PostgreSQL's HashAggregate
-- (gpuhash off, sorting off), through rows and straight from heap pages,
-- in the GPU service and the backend.  The tables are ordinary and vacuumed
-- (their pages are read directly).
SET client_min_messages = warning;
DROP TABLE IF EXISTS gk_float, gk_num;
-- groups by (f, g): some only -0, some -0 first, some 0 first, with NULLs
CREATE TABLE gk_float AS
  SELECT i AS id,
         CASE WHEN i % 11 = 0 THEN NULL
              WHEN i % 4 = 0 THEN '0'::float8
              WHEN i % 4 = 1 THEN '-0'::float8
              ELSE (i % 5)::float8 END AS f,
         (i % 3)::int4 AS g,
         CASE WHEN i % 7 = 0 THEN '-0'::float4 WHEN i % 7 = 1 THEN '0'::float4 ELSE (i % 2)::float4 END AS r,
         i % 100 AS v
  FROM generate_series(1, 3000) i;
-- a group whose rows are all -0, and one whose first row is -0 then 0
INSERT INTO gk_float VALUES (3001, '-0', 7, '-0', 1), (3002, '-0', 7, '-0', 2),
                            (3003, '-0', 8, '-0', 3), (3004, '0', 8, '0', 4);
CREATE TABLE gk_num AS
  SELECT i AS id,
         CASE i % 4 WHEN 0 THEN 1.00 WHEN 1 THEN 1.0 WHEN 2 THEN 2.000 ELSE 2 END::numeric AS n
  FROM generate_series(1, 400) i;
VACUUM (FREEZE, ANALYZE) gk_float, gk_num;
VACUUM gk_float, gk_num;
RESET client_min_messages;

BEGIN;
SELECT plan(57);
SET LOCAL max_parallel_workers_per_gather = 0;
\ir lib/helpers.sql
CREATE EXTENSION IF NOT EXISTS citext;
CREATE TEMP TABLE gk_text AS
  SELECT i AS id, (CASE i % 3 WHEN 0 THEN 'Abc' WHEN 1 THEN 'ABC' ELSE 'abc' END)::citext AS t
  FROM generate_series(1, 300) i;
ANALYZE gk_text;
-- equal values that look different in different groups of a packed column
-- (k): each group shows its own
CREATE TEMP TABLE gk_mixed AS
  SELECT i AS k,
         CASE i % 3 WHEN 0 THEN 1 WHEN 1 THEN 1.0 ELSE 1.00 END::numeric AS n,
         CASE i % 2 WHEN 0 THEN '1 day' ELSE '24 hours' END::interval AS iv,
         CASE i % 2 WHEN 0 THEN '0' ELSE '-0' END::float8 AS f
  FROM generate_series(1, 200) i;
ANALYZE gk_mixed;
CREATE TEMP TABLE gk_dim AS
  SELECT * FROM (VALUES (0, 'zero'), (1, 'one'), (2, 'two'), (7, 'seven'), (8, 'eight')) v(g, name);
ANALYZE gk_dim;

-- q's rows as text, sorted: with PostgreSQL's HashAggregate (mode pg) or
-- gpuhash forced on in the backend or the service (GpuHashAgg, unless the
-- session enables GpuStarAgg), or with GpuStarAgg enabled (mode star: float
-- keys on the device, PostgreSQL's plan where a group holds both -0 and 0)
CREATE FUNCTION pg_temp.gk_rows(q text, mode text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  r text;
  star text := current_setting('gpuhash.enable_star');
BEGIN
  PERFORM set_config('gpuhash.enabled', (mode <> 'pg')::text, true);
  PERFORM set_config('gpuhash.force', (mode <> 'pg')::text, true);
  PERFORM set_config('gpuhash.service', (mode IN ('service', 'star'))::text, true);
  PERFORM set_config('enable_sort', (mode <> 'pg')::text, true);
  IF mode = 'star' THEN
    PERFORM set_config('gpuhash.enable_star', 'on', true);
  END IF;
  EXECUTE format('SELECT string_agg(x::text, E''\n'' ORDER BY x::text) FROM (%s) x', q) INTO r;
  PERFORM set_config('enable_sort', 'on', true);
  PERFORM set_config('gpuhash.enable_star', star, true);
  RETURN r;
END $$;

-- three tests: the backend's, the service's and a star's rows are PostgreSQL's
CREATE FUNCTION pg_temp.gk_same(name text, q text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  pg text := pg_temp.gk_rows(q, 'pg');
BEGIN
  RETURN NEXT is(pg_temp.gk_rows(q, 'backend'), pg, name || ': the first row''s key, as PostgreSQL shows it (backend)');
  RETURN NEXT is(pg_temp.gk_rows(q, 'service'), pg, name || ': the same through the GPU service');
  RETURN NEXT is(pg_temp.gk_rows(q, 'star'), pg, name || ': the same with GpuStarAgg');
END $$;

SET LOCAL gpuhash.force = on;
SET LOCAL gpuhash.enable_star = off;
SELECT ok(pg_temp.plan_text('SELECT f, count(*) FROM gk_float GROUP BY f') ~ 'GpuHashAgg',
          'the GROUP BYs under test are GpuHashAggs');
SET LOCAL gpuhash.enable_star = on;
SELECT ok(pg_temp.plan_text('SELECT f, count(*) FROM gk_float GROUP BY f') ~ 'GpuStarAgg',
          'with GpuStarAgg enabled they are GpuStarAggs');
SELECT is(pg_temp.gk_rows('SELECT f, g, count(*) FROM gk_float WHERE id > 3000 GROUP BY f, g', 'star'),
          E'(-0,7,2)\n(-0,8,2)', 'a star: a group of -0 rows shows -0, and one whose first row is -0 too');
SET LOCAL gpuhash.enable_star = off;
SELECT is(pg_temp.gk_rows('SELECT f, g, count(*) FROM gk_float WHERE id > 3000 GROUP BY f, g', 'backend'),
          E'(-0,7,2)\n(-0,8,2)', 'a group of -0 rows shows -0, and one whose first row is -0 too');
SELECT * FROM pg_temp.gk_same('float8 -0 and 0, from the rows',
  'SELECT f, count(*), sum(v) FROM gk_float WHERE v >= 0 GROUP BY f');
SELECT * FROM pg_temp.gk_same('float8 -0 and 0, straight from the heap pages',
  'SELECT f, count(*), sum(v) FROM gk_float GROUP BY f');
SELECT * FROM pg_temp.gk_same('float8 and int4 (wider than the key: the dictionary)',
  'SELECT f, g, count(*), sum(v) FROM gk_float GROUP BY f, g');
SELECT * FROM pg_temp.gk_same('float4 -0 and 0, and a float8 beside it',
  'SELECT r, f, count(*) FROM gk_float GROUP BY r, f');
SELECT * FROM pg_temp.gk_same('a float expression',
  'SELECT f * -1, count(*) FROM gk_float GROUP BY 1');
SELECT * FROM pg_temp.gk_same('numeric display scale 1.0 and 1.00 (the dictionary)',
  'SELECT n, count(*) FROM gk_num GROUP BY n');
SELECT * FROM pg_temp.gk_same('citext ABC, Abc and abc (the dictionary)',
  'SELECT t, count(*) FROM gk_text GROUP BY t');
SELECT * FROM pg_temp.gk_same('-0 beside a dictionary column',
  'SELECT f, g::text, count(*) FROM gk_float GROUP BY f, g::text');
SELECT ok(pg_temp.plan_text('SELECT k, n FROM gk_mixed GROUP BY k, n') ~ 'GpuHashAgg',
          'a packed column beside one whose equal values look different: a GpuHashAgg');
SELECT * FROM pg_temp.gk_same('numeric 1, 1.0 and 1.00 in groups of their own',
  'SELECT k, n, count(*) FROM gk_mixed GROUP BY k, n');
SELECT * FROM pg_temp.gk_same('interval 1 day and 24 hours in groups of their own',
  'SELECT k, iv, count(*) FROM gk_mixed GROUP BY k, iv');
SELECT * FROM pg_temp.gk_same('float8 0 and -0 in groups of their own',
  'SELECT k, f, count(*) FROM gk_mixed GROUP BY k, f');
-- min and max of floats: -0 is just below 0, so a group of -0s gives -0 (as
-- PostgreSQL does), a group of -0 and 0 gives min -0 and max 0 (PostgreSQL
-- gives the later row's, which depends on the rows' order)
SELECT is(pg_temp.gk_rows('SELECT g, min(f), max(f), min(r), max(r) FROM gk_float WHERE id > 3000 GROUP BY g', mode),
          E'(7,-0,-0,-0,-0)\n(8,-0,0,-0,0)', 'min and max of -0 and 0 (' || mode || ')')
  FROM unnest(ARRAY['backend', 'service']) mode;
SELECT * FROM pg_temp.gk_same('min and max of float -0s only',
  'SELECT g, min(f), max(f), min(r), max(r), count(*) FROM gk_float WHERE f::text = ''-0'' AND r::text = ''-0'' GROUP BY g');
SELECT * FROM pg_temp.gk_same('min of floats whose least is -0',
  'SELECT g, min(f), max(f), count(*) FROM gk_float WHERE f::text <> ''0'' GROUP BY g');
SELECT * FROM pg_temp.gk_same('max of floats from the heap pages, a group of -0s',
  'SELECT g, max(f), max(r), count(*) FROM gk_float GROUP BY g');
SET LOCAL gpuhash.enable_star = on;
SELECT ok(pg_temp.plan_text('SELECT d.name, max(f) FROM gk_float JOIN gk_dim d USING (g) GROUP BY d.name') ~ 'GpuStarAgg',
          'the star queries under test are GpuStarAggs');
SELECT * FROM pg_temp.gk_same('min and max of -0 in a star',
  'SELECT d.name, min(f), max(f), min(r), max(r) FROM gk_float JOIN gk_dim d USING (g) WHERE d.name = ''seven'' GROUP BY d.name');
SET LOCAL gpuhash.enable_star = off;

-- the rows in another order: another first row
SELECT * FROM pg_temp.gk_same('-0 and 0 in the other order',
  'SELECT f, count(*) FROM (SELECT * FROM gk_float ORDER BY id DESC) x GROUP BY f');
SELECT is(pg_temp.gk_rows('SELECT f, count(*) FROM gk_float GROUP BY f', 'backend') ~ '\(-0,' AND
          pg_temp.gk_rows('SELECT f, count(*) FROM (SELECT * FROM gk_float ORDER BY id DESC) x GROUP BY f', 'backend') ~ '\(0,',
          true, 'the group of -0 and 0 shows -0 where a -0 row comes first, 0 where a 0 row does');

SELECT * FROM finish();
ROLLBACK;
