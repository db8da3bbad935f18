-- Heap pages read directly (src/page_scan.c): a gpuhash node over a plain
-- Seq Scan of an ordinary table reads its pages itself, shipping them to the
-- engine (gpuhash.ship_pages) or taking their columns in the backend; pages
-- not all-visible (of a logged table, when shipped) have their tuples judged
-- by their hint bits, and those the hint bits do not tell are read with
-- visibility checks.  Every query must
-- return the same rows with gpuhash off and forced on, with shipping on and
-- off, through the GPU service and the backend's own engine, serial and in
-- parallel.  EXPLAIN ANALYZE's "Heap Pages" must account for every page of
-- the table exactly once, and must be absent where the columns cannot be
-- read from pages (a variable-width column before a used one, a column
-- added with a default, a temporary table).  The tables are ordinary (temporary
-- ones use local buffers) and are frozen before the tests, outside the
-- test's transaction.
SET client_min_messages = warning;
DROP TABLE IF EXISTS ps_fact, ps_dim, ps_wide, ps_added, ps_dropped, ps_dirty, ps_big, ps_fresh, ps_fresh_u;
SELECT setseed(0.31);
-- 70000 rows: NULLs in every column, skewed and duplicated keys
CREATE TABLE ps_fact AS
  SELECT CASE WHEN g % 23 = 0 THEN NULL
              WHEN g % 5 = 0 THEN 7
              ELSE (random() * 3000)::int8 END AS k,
         CASE WHEN g % 11 = 0 THEN NULL ELSE (random() * 1e6)::int4 - 500000 END AS v,
         CASE WHEN g % 13 = 0 THEN NULL ELSE (g % 30000 - 15000)::int2 END AS s,
         CASE WHEN g % 17 = 0 THEN NULL ELSE date '2000-01-01' + (g % 9000) END AS d,
         CASE WHEN g % 19 = 0 THEN NULL ELSE g % 3 = 0 END AS b,
         -- quarters: float sums are exact whatever order the GPU adds them in
         CASE WHEN g % 29 = 0 THEN NULL ELSE (g % 1000) / 4.0 END::float8 AS f
  FROM generate_series(1, 70000) g;
CREATE UNLOGGED TABLE ps_dim AS
  SELECT CASE WHEN g % 97 = 0 THEN NULL ELSE g END::int8 AS k, g * 3 AS w
  FROM generate_series(1, 2500) g;
-- fixed-width columns that are not read (uuid, char(1)) before the used
-- ones, and text, walked over to the columns after it or read itself
CREATE TABLE ps_wide AS
  SELECT (g % 400)::int4 AS a, md5(g::text)::uuid AS u, 'x'::"char" AS c, (g % 5)::int8 AS k,
         repeat('t', g % 40) AS t, g::int8 AS v
  FROM generate_series(1, 20000) g;
CREATE TABLE ps_added AS SELECT (g % 50)::int8 AS k, g AS v FROM generate_series(1, 20000) g;
ALTER TABLE ps_added ADD COLUMN m int4 DEFAULT 7, ADD COLUMN n int4;
INSERT INTO ps_added SELECT g % 50, g, g % 3, g % 4 FROM generate_series(1, 5000) g;
CREATE TABLE ps_dropped AS
  SELECT (g % 70)::int8 AS a, g::int8 AS x, (g % 9)::int4 AS k, g::int8 AS v
  FROM generate_series(1, 20000) g;
ALTER TABLE ps_dropped DROP COLUMN x;
-- larger than a quarter of the test server's 128 MB of shared buffers: read through a
-- buffer ring, as a Seq Scan of it would be
CREATE TABLE ps_big AS SELECT (g % 5000)::int4 AS k, g::int4 AS v FROM generate_series(1, 1500000) g;
CREATE TABLE ps_dirty AS SELECT (g % 300)::int8 AS k, g::int8 AS v FROM generate_series(1, 60000) g;
VACUUM (FREEZE, ANALYZE) ps_fact, ps_dim, ps_wide, ps_added, ps_dropped, ps_dirty, ps_big;
-- (a first VACUUM right after the load may freeze without setting pages
-- all-visible; the second does)
VACUUM ps_fact, ps_dim, ps_wide, ps_added, ps_dropped, ps_dirty, ps_big;
-- pages that are no longer all-visible, and dead tuples in them
UPDATE ps_dirty SET v = -v WHERE v <= 3000 AND v % 7 = 0;
DELETE FROM ps_dirty WHERE v BETWEEN 30000 AND 31000 AND v % 3 = 0;
ANALYZE ps_dirty;
-- never vacuumed (nor by autovacuum): no page all-visible; rows deleted,
-- updated, and inserted by a transaction rolled back
CREATE TABLE ps_fresh (k int8, v int8, d date) WITH (autovacuum_enabled = off);
INSERT INTO ps_fresh
  SELECT CASE WHEN g % 31 = 0 THEN NULL ELSE g % 700 END, g, date '2020-01-01' + g % 400
  FROM generate_series(1, 60000) g;
DELETE FROM ps_fresh WHERE v % 11 = 0;
UPDATE ps_fresh SET v = -v, d = NULL WHERE v % 13 = 0;
BEGIN;
INSERT INTO ps_fresh SELECT 5, 1000000, NULL FROM generate_series(1, 3000);
ROLLBACK;
ANALYZE ps_fresh;
-- the same, unlogged: its pages that are not all-visible are not shipped (no
-- LSN tells a change) but taken out in the backend, judged the same way
CREATE UNLOGGED TABLE ps_fresh_u (k int8, v int8, d date) WITH (autovacuum_enabled = off);
INSERT INTO ps_fresh_u SELECT * FROM ps_fresh;
DELETE FROM ps_fresh_u WHERE v % 7 = 0;
ANALYZE ps_fresh_u;
RESET client_min_messages;

BEGIN;
SELECT plan(171);
-- GpuHashAgg's page reading (GpuStarAgg's is tested in test/tap/star.sql)
SET LOCAL gpuhash.enable_star = off;

SET LOCAL max_parallel_workers_per_gather = 0;
\ir lib/digests.sql

-- run q with gpuhash forced on: the numbers of EXPLAIN ANALYZE's Heap Pages line(s),
-- summed, and the rows taken in runs straight from the page columns (taken)
CREATE FUNCTION pg_temp.pages(q text, OUT shipped bigint, OUT direct bigint,
                              OUT checked bigint, OUT reread bigint, OUT lines int,
                              OUT taken bigint, OUT pooled bigint, OUT nav bigint,
                              OUT und bigint)
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  m text[];
BEGIN
  shipped := 0; direct := 0; checked := 0; reread := 0; lines := 0; taken := 0; pooled := 0;
  nav := 0; und := 0;
  PERFORM set_config('gpuhash.enabled', 'on', true);
  PERFORM set_config('gpuhash.force', 'on', true);
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS ON, TIMING OFF, SUMMARY OFF) ' || q LOOP
    m := regexp_match(line, 'Heap Pages: shipped=(\d+) read in backend=(\d+) with visibility checks=(\d+) reread after a change=(\d+)');
    IF m IS NOT NULL THEN
      shipped := shipped + m[1]::bigint;
      direct := direct + m[2]::bigint;
      checked := checked + m[3]::bigint;
      reread := reread + m[4]::bigint;
      lines := lines + 1;
    END IF;
    m := regexp_match(line, 'not all-visible=(\d+) visibility undecided=(\d+)');
    IF m IS NOT NULL THEN
      nav := nav + m[1]::bigint;
      und := und + m[2]::bigint;
    END IF;
    IF line ~ 'Heap Rows Taken Directly: ' THEN
      taken := taken + substring(line FROM 'Heap Rows Taken Directly: ([0-9]+)')::bigint;
    END IF;
    IF line ~ 'Heap Rows Pooled by the GPU Service: ' THEN
      pooled := pooled + substring(line FROM 'Heap Rows Pooled by the GPU Service: ([0-9]+)')::bigint;
    END IF;
  END LOOP;
END $$;

CREATE FUNCTION pg_temp.relpages(VARIADIC rels regclass[]) RETURNS bigint
LANGUAGE sql AS $$ SELECT sum(pg_relation_size(r) / current_setting('block_size')::int)::bigint FROM unnest(rels) r $$;

-- the pages VACUUM (or ANALYZE) last found all-visible.  The others are read
-- with visibility checks: since PostgreSQL 16 a bulk load extends a table by
-- several pages at once, and VACUUM leaves those never used unset.
CREATE FUNCTION pg_temp.visible_pages(VARIADIC rels regclass[]) RETURNS bigint
LANGUAGE sql AS $$ SELECT sum(relallvisible)::bigint FROM pg_class WHERE oid = ANY (rels) $$;

-- same rows, and every page of rels read once, as expected: the all-visible
-- ones shipped, or in the backend, and so those not all-visible (nav) whose
-- tuples' hint bits told (all but und of them), the others checked; or some
-- pages not all-visible read so (tables with changed pages); or some read
-- again
CREATE FUNCTION pg_temp.reads_pages(name text, q text, node text, rels regclass[], how text)
RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  p record;
  want bigint := pg_temp.relpages(VARIADIC rels);
  visible bigint := pg_temp.visible_pages(VARIADIC rels);
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(name, q, node);
  p := pg_temp.pages(q);
  RETURN NEXT is(p.shipped + p.direct + p.checked, want, name || ': every page read once');
  RETURN NEXT ok(CASE how WHEN 'shipped' THEN p.shipped = visible + p.nav - p.und AND p.checked = want - p.shipped
                          WHEN 'direct' THEN p.direct = visible + p.nav - p.und AND p.checked = want - p.direct
                          WHEN 'mixed' THEN p.nav > p.und AND p.shipped + p.direct > visible
                          WHEN 'reread' THEN p.reread > 0 AND p.reread <= p.checked END,
                 name || ': pages ' || how || ' (shipped ' || p.shipped || ', in backend ' || p.direct ||
                 ', checked ' || p.checked || ', reread ' || p.reread || ' of ' || want ||
                 ', all-visible ' || visible || ', not all-visible read ' || p.nav ||
                 ', undecided ' || p.und || ')');
END $$;

-- the columns cannot be read from pages: same rows, no Heap Pages line
CREATE FUNCTION pg_temp.no_pages(name text, q text, node text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(name, q, node);
  RETURN NEXT is((pg_temp.pages(q)).lines, 0, name || ': read through the scan');
END $$;

-- GROUP BY over every column type, with a filter and expressions
SELECT pg_temp.reads_pages('group by k', $$
  SELECT k, count(*), count(v), sum(v), min(v), max(v), sum(s), min(d), max(d),
         count(*) FILTER (WHERE b), sum(f) FROM ps_fact GROUP BY k$$, 'GpuHashAgg', '{ps_fact}', 'shipped');
SELECT pg_temp.reads_pages('group by expressions, scan filter', $$
  SELECT k % 100, d, count(*), sum(v::int8 * 2) FROM ps_fact WHERE s > -3000 AND b GROUP BY 1, 2$$,
  'GpuHashAgg', '{ps_fact}', 'shipped');
SELECT pg_temp.reads_pages('group by a boolean', $$
  SELECT b, count(*), sum(v), min(k), max(d), sum(s) FROM ps_fact GROUP BY b$$, 'GpuHashAgg', '{ps_fact}', 'shipped');
-- a fused join: both sides read from pages
SELECT pg_temp.reads_pages('fused join', $$
  SELECT d.w % 10, count(*), sum(f.v) FROM ps_fact f JOIN ps_dim d ON f.k = d.k GROUP BY 1$$,
  'Fused Join', '{ps_fact,ps_dim}', 'shipped');
SELECT pg_temp.reads_pages('fused join, outer grouping columns with NULLs', $$
  SELECT f.s, f.b, count(*), sum(d.w), max(f.d) FROM ps_fact f JOIN ps_dim d ON f.k = d.k GROUP BY 1, 2$$,
  'Fused Join', '{ps_fact,ps_dim}', 'shipped');
-- a GpuHashJoin returning rows: its outer rows come from pages
SET LOCAL gpuhash.enable_fusion = off;
SELECT pg_temp.reads_pages('join', $$
  SELECT f.k, f.s, d.w FROM ps_fact f JOIN ps_dim d ON f.k = d.k WHERE f.v > 0$$,
  'GpuHashJoin', '{ps_fact,ps_dim}', 'shipped');
SELECT pg_temp.reads_pages('left join', $$
  SELECT f.k, f.d, d.w FROM ps_fact f LEFT JOIN ps_dim d ON f.k = d.k$$,
  'GpuHashJoin', '{ps_fact,ps_dim}', 'shipped');
RESET gpuhash.enable_fusion;

-- plain columns are taken in runs, without a slot per row; expressions,
-- filters and the scan's quals go row by row
SELECT is((pg_temp.pages($$SELECT k, count(*), sum(v), max(d), min(f) FROM ps_fact GROUP BY k$$)).taken,
          (SELECT count(*) FROM ps_fact), 'group by plain columns: every row taken directly');
SELECT is((pg_temp.pages($$SELECT f.s, f.b, count(*), sum(d.w) FROM ps_fact f JOIN ps_dim d ON f.k = d.k GROUP BY 1, 2$$)).taken,
          (SELECT count(*) FROM ps_fact) + (SELECT count(*) FROM ps_dim), 'fused join on plain columns: every row of both sides taken directly');
SELECT is((pg_temp.pages($$SELECT k % 100, count(*), sum(v) FROM ps_fact GROUP BY 1$$)).taken,
          (SELECT count(*) FROM ps_fact), 'group by an int8 column modulo a constant: every row taken directly');
SELECT is((pg_temp.pages($$SELECT v % -1, s % (-7)::int2, count(*), sum(k) FROM ps_fact GROUP BY 1, 2$$)).taken,
          (SELECT count(*) FROM ps_fact), 'group by int4 and int2 columns modulo constants: every row taken directly');
SELECT pg_temp.reads_pages('group by columns modulo constants', $$
  SELECT k % 100, s % (-7)::int2, v % -1, k % -3, count(*), sum(v) FROM ps_fact GROUP BY 1, 2, 3, 4$$,
  'GpuHashAgg', '{ps_fact}', 'shipped');
SELECT is((pg_temp.pages($$SELECT k % 100, count(*) FROM ps_fact WHERE b GROUP BY 1$$)).taken,
          0::bigint, 'a scan filter and an expression: rows one by one');

-- columns taken out in the backend
SET LOCAL gpuhash.ship_pages = off;
SELECT pg_temp.reads_pages('group by k, in the backend', $$
  SELECT k, count(*), sum(v), min(d), sum(f) FROM ps_fact GROUP BY k$$, 'GpuHashAgg', '{ps_fact}', 'direct');
SELECT pg_temp.reads_pages('fused join, in the backend', $$
  SELECT count(*), sum(d.w) FROM ps_fact f JOIN ps_dim d ON f.k = d.k$$, 'Fused Join', '{ps_fact,ps_dim}', 'direct');
SELECT pg_temp.reads_pages('never vacuumed, in the backend', $$
  SELECT k, count(*), sum(v), max(d) FROM ps_fresh GROUP BY k$$, 'GpuHashAgg', '{ps_fresh}', 'mixed');
RESET gpuhash.ship_pages;

-- shipped to the backend's own engine
SET LOCAL gpuhash.service = off;
SELECT pg_temp.reads_pages('group by k, own engine', $$
  SELECT k, count(*), sum(v), max(d) FROM ps_fact GROUP BY k$$, 'GpuHashAgg', '{ps_fact}', 'shipped');
RESET gpuhash.service;

-- skipped fixed-width columns and a dropped column are walked over
SELECT pg_temp.reads_pages('uuid and "char" before the key', $$
  SELECT k, count(*), sum(a) FROM ps_wide GROUP BY k$$, 'GpuHashAgg', '{ps_wide}', 'shipped');
SELECT pg_temp.reads_pages('a dropped column before the key', $$
  SELECT k, count(*), sum(v), max(a) FROM ps_dropped GROUP BY k$$, 'GpuHashAgg', '{ps_dropped}', 'shipped');
-- a column added without a default reads as NULL in the older rows
SELECT pg_temp.reads_pages('a column added without a default', $$
  SELECT n, count(*), sum(v) FROM ps_added GROUP BY n$$, 'GpuHashAgg', '{ps_added}', 'shipped');

SELECT pg_temp.reads_pages('a table read through a buffer ring', $$
  SELECT k, count(*), sum(v), min(v) FROM ps_big GROUP BY k$$, 'GpuHashAgg', '{ps_big}', 'shipped');

-- pages changed since the last VACUUM: their tuples judged by their hint bits
SELECT pg_temp.reads_pages('changed pages', $$
  SELECT k, count(*), sum(v) FROM ps_dirty GROUP BY k$$, 'GpuHashAgg', '{ps_dirty}', 'mixed');
-- a table never vacuumed: the first read (PostgreSQL's, for the same rows)
-- sets the hint bits by which the engine then judges every tuple
SELECT pg_temp.reads_pages('never vacuumed', $$
  SELECT k, count(*), sum(v), min(d), count(d) FROM ps_fresh GROUP BY k$$, 'GpuHashAgg', '{ps_fresh}', 'mixed');
SELECT pg_temp.reads_pages('never vacuumed, fused join', $$
  SELECT d.w % 10, count(*), sum(f.v) FROM ps_fresh f JOIN ps_dim d ON f.k = d.k GROUP BY 1$$,
  'Fused Join', '{ps_fresh,ps_dim}', 'mixed');
-- unlogged and never vacuumed: judged in the backend, none shipped
SELECT pg_temp.reads_pages('never vacuumed, unlogged', $$
  SELECT k, count(*), sum(v), min(d), count(d) FROM ps_fresh_u GROUP BY k$$, 'GpuHashAgg', '{ps_fresh_u}', 'mixed');
SELECT pg_temp.reads_pages('never vacuumed, unlogged, fused join', $$
  SELECT d.w % 10, count(*), sum(f.v) FROM ps_fresh_u f JOIN ps_dim d ON f.k = d.k GROUP BY 1$$,
  'Fused Join', '{ps_fresh_u,ps_dim}', 'mixed');
-- shipped pages taken as changed: their rows are dropped and read again
SET LOCAL gpuhash.debug_reread_pages = on;
SELECT pg_temp.reads_pages('shipped pages read again', $$
  SELECT k, count(*), sum(v), min(d) FROM ps_fact GROUP BY k$$, 'GpuHashAgg', '{ps_fact}', 'reread');
SELECT pg_temp.reads_pages('fused join, pages read again', $$
  SELECT count(*), sum(f.v), sum(d.w) FROM ps_fact f JOIN ps_dim d ON f.k = d.k$$,
  'Fused Join', '{ps_fact,ps_dim}', 'reread');
RESET gpuhash.debug_reread_pages;

-- varlenas: walked over, or read as pointers into the pinned pages (a text
-- grouping column through the CPU's dictionary, a qual on text)
SELECT pg_temp.reads_pages('a text column before the column read', $$
  SELECT k, count(*), sum(v) FROM ps_wide GROUP BY k$$, 'GpuHashAgg', '{ps_wide}', 'shipped');
SELECT pg_temp.reads_pages('a text grouping column', $$
  SELECT t, count(*), sum(v), min(k) FROM ps_wide GROUP BY t$$, 'GpuHashAgg', '{ps_wide}', 'shipped');
SELECT pg_temp.reads_pages('a qual on a text column', $$
  SELECT k, count(*), sum(v) FROM ps_wide WHERE t LIKE '%ttt%' AND length(t) < 30 GROUP BY k$$,
  'GpuHashAgg', '{ps_wide}', 'shipped');

-- what cannot be read from pages goes through the scan, with the same rows
SELECT pg_temp.no_pages('a column added with a default', $$
  SELECT m, count(*), sum(v) FROM ps_added GROUP BY m$$, 'GpuHashAgg');
SELECT pg_temp.no_pages('a system column', $$
  SELECT k, count(*), max(xmin::text::int8) FROM ps_dim GROUP BY k$$, 'GpuHashAgg');
SET LOCAL gpuhash.read_pages = off;
SELECT pg_temp.no_pages('gpuhash.read_pages off', $$
  SELECT k, count(*), sum(v) FROM ps_fact GROUP BY k$$, 'GpuHashAgg');
RESET gpuhash.read_pages;
CREATE TEMP TABLE ps_temp AS SELECT * FROM ps_dirty;
ANALYZE ps_temp;
SELECT pg_temp.no_pages('a temporary table', $$
  SELECT k, count(*), sum(v) FROM ps_temp GROUP BY k$$, 'GpuHashAgg');

-- in parallel: the processes share the scan's blocks
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT * FROM pg_temp.same_rows('parallel group by k', $$
  SELECT k, count(*), sum(v), min(d), max(s) FROM ps_fact GROUP BY k$$, 'Parallel Seq Scan');
SELECT * FROM pg_temp.same_rows('parallel fused join', $$
  SELECT d.w % 7, count(*), sum(f.v) FROM ps_fact f JOIN ps_dim d ON f.k = d.k GROUP BY 1$$, 'Parallel Seq Scan');
SELECT * FROM pg_temp.same_rows('parallel, changed pages', $$
  SELECT k % 10, count(*), sum(v) FROM ps_dirty GROUP BY 1$$, 'Parallel Seq Scan');
SELECT * FROM pg_temp.same_rows('parallel, never vacuumed', $$
  SELECT k, count(*), sum(v), min(d) FROM ps_fresh GROUP BY k$$, 'Parallel Seq Scan');

-- a pooled aggregation: the GPU service reads the shipped pages' rows into
-- the pool itself (gpuhash.pool_pages).  With no worker to launch, the
-- leader reads every page, so its EXPLAIN figures cover the table.
SET LOCAL max_parallel_workers = 0;
SELECT * FROM pg_temp.same_rows('pool from pages: NULL keys and values, every integer type', $$
  SELECT k, count(*), count(v), sum(v), min(v), max(s), sum(s), min(d), max(d), count(b)
  FROM ps_fact GROUP BY k$$, 'Parallel Custom Scan (GpuHashAgg)');
SELECT is((pg_temp.pages($$SELECT k, count(*), count(v), sum(v), min(v), max(s), min(d) FROM ps_fact GROUP BY k$$)).pooled,
          (SELECT count(*) FROM ps_fact), 'pool from pages: every row put in the pool by the service');
SELECT * FROM pg_temp.same_rows('pool from pages: an int2 key modulo a constant, a boolean key', $$
  SELECT s % 100::int2, b, count(*), sum(v), max(d) FROM ps_fact GROUP BY 1, 2$$, 'Parallel Custom Scan (GpuHashAgg)');
SELECT * FROM pg_temp.same_rows('pool from pages: negative moduli, int2 and int4 keys', $$
  SELECT v % -7, s % 5::int2, count(*), sum(k) FROM ps_fact GROUP BY 1, 2$$, 'Parallel Custom Scan (GpuHashAgg)');
SELECT is((pg_temp.pages($$SELECT v % -7, s % 5::int2, count(*), sum(k) FROM ps_fact GROUP BY 1, 2$$)).pooled,
          (SELECT count(*) FROM ps_fact), 'pool from pages: int4 and int2 keys modulo constants pooled by the service');
SELECT * FROM pg_temp.same_rows('pool from pages: a date key', $$
  SELECT d, count(*), sum(v), min(k), count(s) FROM ps_fact GROUP BY d$$, 'Parallel Custom Scan (GpuHashAgg)');
SELECT * FROM pg_temp.same_rows('pool from pages: a table read through a buffer ring', $$
  SELECT k, count(*), sum(v), max(v) FROM ps_big GROUP BY k$$, 'Parallel Custom Scan (GpuHashAgg)');
SELECT is((pg_temp.pages($$SELECT k, count(*), sum(v) FROM ps_big GROUP BY k$$)).pooled,
          (SELECT count(*) FROM ps_big), 'pool from pages: a large table pooled by the service');
-- a float aggregate is converted on the CPU: the rows come back to the backend
SELECT is((pg_temp.pages($$SELECT k, count(*), sum(f) FROM ps_fact GROUP BY k$$)).pooled,
          0::bigint, 'pool from pages: a float aggregate is not encoded by the service');
SELECT * FROM pg_temp.same_rows('pool from pages: changed pages read with visibility checks', $$
  SELECT k, count(*), sum(v) FROM ps_dirty GROUP BY k$$, 'Parallel Custom Scan (GpuHashAgg)');
SELECT ok(p.pooled > 0 AND p.nav > p.und,
          'pool from pages: pages not all-visible judged by their hint bits and pooled by the service (' ||
          p.nav || ' of them, ' || p.und || ' undecided)')
FROM pg_temp.pages($$SELECT k, count(*), sum(v) FROM ps_dirty GROUP BY k$$) p;
SELECT * FROM pg_temp.same_rows('pool from pages: never vacuumed', $$
  SELECT k, count(*), sum(v), min(d), count(d) FROM ps_fresh GROUP BY k$$, 'Parallel Custom Scan (GpuHashAgg)');
-- a fused join's pool: both sides from pages, join keys made by the service
SELECT * FROM pg_temp.same_rows('pool from pages: fused join, NULL join keys', $$
  SELECT count(*), sum(d.w), sum(f.v), max(f.d) FROM ps_fact f JOIN ps_dim d ON f.k = d.k$$,
  'Parallel Custom Scan (GpuHashAgg)');
SELECT is((pg_temp.pages($$SELECT count(*), sum(d.w) FROM ps_fact f JOIN ps_dim d ON f.k = d.k$$)).pooled,
          (SELECT count(*) FROM ps_fact WHERE k IS NOT NULL) + (SELECT count(*) FROM ps_dim WHERE k IS NOT NULL),
          'pool from pages: a fused join''s rows with a join key pooled by the service, both sides');
SELECT * FROM pg_temp.same_rows('pool from pages: fused join, grouping columns of both sides with NULLs', $$
  SELECT f.s, f.b, d.w % 10, count(*), sum(d.w), max(f.d), count(f.v) FROM ps_fact f JOIN ps_dim d ON f.k = d.k GROUP BY 1, 2, 3$$,
  'Parallel Custom Scan (GpuHashAgg)');
SELECT * FROM pg_temp.same_rows('pool from pages: fused join on an int4 column', $$
  SELECT d.w % 7, count(*), sum(f.k) FROM ps_fact f JOIN ps_dim d ON f.v = d.w GROUP BY 1$$,
  'Parallel Custom Scan (GpuHashAgg)');
-- pages the service drops are read by the backend
SET LOCAL gpuhash.debug_reread_pages = on;
SELECT * FROM pg_temp.same_rows('pool from pages: fused join, dropped pages read again', $$
  SELECT d.w % 10, count(*), sum(f.v) FROM ps_fact f JOIN ps_dim d ON f.k = d.k GROUP BY 1$$,
  'Parallel Custom Scan (GpuHashAgg)');
SELECT * FROM pg_temp.same_rows('pool from pages: dropped pages read again', $$
  SELECT k, count(*), count(v), sum(v), min(d) FROM ps_fact GROUP BY k$$, 'Parallel Custom Scan (GpuHashAgg)');
SELECT ok(p.reread > 0 AND
          p.reread + p.und = p.checked - (pg_temp.relpages('ps_fact') - pg_temp.visible_pages('ps_fact') - p.nav) AND
          p.pooled BETWEEN 1 AND (SELECT count(*) - 1 FROM ps_fact),
          'pool from pages: dropped pages read again (' || p.reread || ' of them, ' || p.pooled || ' rows pooled)')
FROM pg_temp.pages($$SELECT k, count(*), sum(v) FROM ps_fact GROUP BY k$$) p;
RESET gpuhash.debug_reread_pages;
SET LOCAL gpuhash.pool_pages = off;
SELECT * FROM pg_temp.same_rows('pool from pages off', $$
  SELECT k, count(*), count(v), sum(v), min(d) FROM ps_fact GROUP BY k$$, 'Parallel Custom Scan (GpuHashAgg)');
SELECT is((pg_temp.pages($$SELECT k, count(*), sum(v) FROM ps_fact GROUP BY k$$)).pooled,
          0::bigint, 'gpuhash.pool_pages off: the rows come back to the backend');
RESET gpuhash.pool_pages;

-- a star in the backend (no GPU service) whose shipped pages are read again on
-- the CPU, every other one: the pages made of their rows go to the device while
-- the batch's statuses are still being gone through, each with arrays of its own
\set star_q 'SELECT d.w % 10, count(*), sum(f.v), min(f.d) FROM ps_fact f JOIN ps_dim d ON f.k = d.k GROUP BY 1'
SET LOCAL gpuhash.enable_star = on;
SET LOCAL gpuhash.service = off;
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpuhash.debug_reread_pages = on;
SELECT * FROM pg_temp.same_rows('star in the backend: every other shipped page read again', :'star_q', 'GpuStarAgg');
RESET gpuhash.service;
-- the same in the GPU service, where the synthetic pages' statuses come back
-- apart from the shipped pages'
SELECT * FROM pg_temp.same_rows('star in the service: every other shipped page read again', :'star_q', 'GpuStarAgg');
RESET gpuhash.debug_reread_pages;
-- pages changed by this transaction between all-visible ones: rows made into
-- pages on the CPU go to the device while a batch of shipped pages fills
UPDATE ps_fact SET v = v + 1
 WHERE (ctid::text::point)[0]::int % 2 = 0 AND (ctid::text::point)[1]::int % 2 = 0;
SET LOCAL gpuhash.service = off;
SELECT * FROM pg_temp.same_rows('star in the backend: changed pages between all-visible ones', :'star_q', 'GpuStarAgg');
RESET gpuhash.service;
SELECT * FROM pg_temp.same_rows('star in the service: changed pages between all-visible ones', :'star_q', 'GpuStarAgg');
RESET max_parallel_workers_per_gather;
SET LOCAL gpuhash.enable_star = off;

SELECT * FROM finish();
ROLLBACK;

SET client_min_messages = warning;
DROP TABLE ps_fact, ps_dim, ps_wide, ps_added, ps_dropped, ps_dirty, ps_big, ps_fresh, ps_fresh_u;
