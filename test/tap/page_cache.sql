-- pgTAP: the GPU service's page cache (gpuhash.page_cache_size).  A star
-- query over a fact table reads its shipped pages once across the bus and
-- from the cache's copies after that, given by name alone where the
-- visibility map shows them all-visible; a page changed since is read again
-- (its bit cleared, or its map page's LSN moved), and the results are
-- PostgreSQL's every time; pages that are not all-visible are named by their
-- own LSN, which a change moves; pages of an unlogged table are never cached;
-- a new size empties the cache.  The test clusters give each service worker a
-- cache of 4MB (test/pgcluster.sh).
-- Runs outside a transaction block: VACUUM and ALTER SYSTEM are part of it.
SET client_min_messages = warning;
-- committed at once, so that VACUUM can make the pages all-visible right after
SET synchronous_commit = on;
DROP TABLE IF EXISTS pc_dim, pc_fact, pc_unlogged, pc_fresh;
CREATE TABLE pc_dim (k int PRIMARY KEY, g text);
INSERT INTO pc_dim SELECT g, 'g' || (g % 7) FROM generate_series(0, 99) g;
-- about 200 pages: they fit a cache of 4MB
CREATE TABLE pc_fact (id int, k int, v int, pad text);
INSERT INTO pc_fact SELECT g, g % 100, g % 1000, repeat('x', 40) FROM generate_series(1, 20000) g;
CREATE UNLOGGED TABLE pc_unlogged AS SELECT * FROM pc_fact;
-- never vacuumed: no page all-visible; its tuples' hint bits set by a read
CREATE TABLE pc_fresh WITH (autovacuum_enabled = false) AS SELECT * FROM pc_fact;
VACUUM (FREEZE, ANALYZE) pc_dim, pc_fact, pc_unlogged;
ANALYZE pc_fresh;
SET gpuhash.enabled = off;
SELECT count(*) > 0 AS hinted FROM pc_fresh;
RESET gpuhash.enabled;
-- a backend of the suite's previous file, not gone yet, may have held back
-- what VACUUM could mark all-visible (pages not all-visible are not shipped):
-- once more after a pause where it did
DO $$ BEGIN
  IF (SELECT relallvisible < relpages FROM pg_class WHERE relname = 'pc_fact') THEN
    PERFORM pg_sleep(1);
  END IF;
END $$;
VACUUM (FREEZE) pc_fact, pc_unlogged;

\ir lib/digests.sql

SET gpuhash.enable_star = on;
SET max_parallel_workers_per_gather = 0;
CREATE FUNCTION pg_temp.cache(OUT hits bigint, OUT misses bigint, OUT pages bigint, OUT bytes bigint)
LANGUAGE sql AS $$
  SELECT coalesce(sum(page_cache_hits), 0)::bigint, coalesce(sum(page_cache_misses), 0)::bigint,
         coalesce(sum(page_cache_pages), 0)::bigint, coalesce(sum(page_cache_bytes), 0)::bigint
    FROM gpuhash_service() $$;
CREATE TEMP TABLE marks AS SELECT 'start'::text AS mark, * FROM pg_temp.cache();
CREATE FUNCTION pg_temp.since(m text, OUT hits bigint, OUT misses bigint)
LANGUAGE sql AS $$
  SELECT c.hits - s.hits, c.misses - s.misses FROM pg_temp.cache() c, marks s WHERE s.mark = m $$;
CREATE FUNCTION pg_temp.mark(m text) RETURNS void
LANGUAGE sql AS $$ INSERT INTO marks SELECT m, * FROM pg_temp.cache() $$;
SELECT (current_setting('shared_preload_libraries') ~ 'gpuhash'
        AND current_setting('gpuhash.page_cache_size') <> '0') AS cached \gset
SELECT relpages AS fact_pages FROM pg_class WHERE relname = 'pc_fact' \gset
SELECT relpages AS fresh_pages FROM pg_class WHERE relname = 'pc_fresh' \gset

SELECT plan(46);

\if :cached
SELECT * FROM pg_temp.same_rows('first read',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT cmp_ok((SELECT misses FROM pg_temp.since('start')), '>=', :fact_pages::bigint,
              'the first read ships every page across the bus');
SELECT pg_temp.mark('second');
SELECT * FROM pg_temp.same_rows('second read',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT cmp_ok((SELECT hits FROM pg_temp.since('second')), '>=', :fact_pages::bigint,
              'the second read takes every page from the cache');

-- several devices (three simulated by the CPU backend; on a GPU machine, its
-- GPUs): each has a cache of its own, holding the pages it reads, so a second
-- read takes every page from the devices' caches
SELECT set_config('gpuhash.devices',
                  CASE WHEN current_setting('gpuhash.device') = 'cpu' THEN '0,1,2' ELSE 'all' END,
                  false) IS NOT NULL AS devices_set;
SELECT pg_temp.mark('devices');
SELECT * FROM pg_temp.same_rows('several devices, first read',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT pg_temp.mark('devices again');
SELECT * FROM pg_temp.same_rows('several devices, second read',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT cmp_ok((SELECT hits FROM pg_temp.since('devices again')), '>=', :fact_pages::bigint,
              'several devices: the second read takes every page from their caches');
RESET gpuhash.devices;

-- one row changes: its page is no longer all-visible, so it is read with
-- visibility checks, the others from their copies (where clearing a bit leaves
-- the map page's LSN as it was, as in PostgreSQL 15; releases that WAL-log
-- the clearing with the map page, as 17 and 18 do, name every page anew)
UPDATE pc_fact SET v = v + 7 WHERE id = 5000;
SELECT pg_temp.mark('one row');
SELECT * FROM pg_temp.same_rows('one row changed',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT cmp_ok((SELECT hits FROM pg_temp.since('one row')), '<', :fact_pages::bigint,
              'one row changed: its page is not read from a copy');
DELETE FROM pc_fact WHERE id = 15000;
SELECT * FROM pg_temp.same_rows('one row deleted',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
BEGIN;
UPDATE pc_fact SET v = v + 1 WHERE id = 100;
SELECT * FROM pg_temp.same_rows('a change of this transaction, not yet committed',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
COMMIT;
-- VACUUM sets the changed pages' bits again, which moves the map page's LSN:
-- every page it maps has a new name.  A page VACUUM leaves as it was and not
-- all-visible (another snapshot still sees a row it would remove) keeps its
-- name, its own LSN, and its copy rightly: at most those are read from copies
VACUUM pc_fact;
SELECT pg_temp.mark('vacuumed');
SELECT * FROM pg_temp.same_rows('after VACUUM',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT cmp_ok((SELECT hits FROM pg_temp.since('vacuumed')), '<=',
              (SELECT (relpages - relallvisible)::bigint FROM pg_class WHERE relname = 'pc_fact'),
              'a map page whose LSN moved names its pages anew: no copy of an all-visible page is read');

-- every page changes (and is made all-visible again): a new LSN on each
UPDATE pc_fact SET v = v + 1000 WHERE id % 10 = 0;
VACUUM (FREEZE) pc_fact;
SELECT pg_temp.mark('changed');
SELECT * FROM pg_temp.same_rows('after every page changed',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT is((SELECT hits FROM pg_temp.since('changed')), 0::bigint,
          'no copy of a page that changed is read');

SELECT pg_temp.mark('unlogged');
SELECT * FROM pg_temp.same_rows('an unlogged table',
  'SELECT d.g, count(*), sum(f.v) FROM pc_unlogged f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT * FROM pg_temp.same_rows('an unlogged table again',
  'SELECT d.g, count(*), sum(f.v) FROM pc_unlogged f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT is((SELECT hits || ' ' || misses FROM pg_temp.since('unlogged')), '0 0',
          'pages of an unlogged table do not go through the cache');

-- pages that are not all-visible, judged by their tuples' hint bits: named by
-- their own LSN, read from their copies the second time, and a page changed
-- since (its LSN moved) read again
SELECT pg_temp.mark('fresh');
SELECT * FROM pg_temp.same_rows('pages not all-visible, first read',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fresh f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT cmp_ok((SELECT misses FROM pg_temp.since('fresh')), '>=', :fresh_pages::bigint,
              'pages not all-visible: the first read ships every page across the bus');
-- a page the first read could not judge (a tuple whose hint bit PostgreSQL
-- 17 and 18 had not set yet) leaves no copy: the second read makes its copy
-- (and sets the bits, reading it on the CPU); the full cache's clock may pass
-- over a copy a read made before it ended: most pages, not all
SELECT * FROM pg_temp.same_rows('pages not all-visible, second read',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fresh f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT pg_temp.mark('fresh again');
SELECT * FROM pg_temp.same_rows('pages not all-visible, third read',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fresh f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT cmp_ok((SELECT hits FROM pg_temp.since('fresh again')), '>=', (:fresh_pages / 2)::bigint,
              'pages not all-visible: a later read takes most pages from the cache');
UPDATE pc_fresh SET v = v + 3 WHERE id = 7000;
SET gpuhash.enabled = off;
SELECT count(*) > 0 AS hinted FROM pc_fresh;
RESET gpuhash.enabled;
SELECT pg_temp.mark('fresh changed');
SELECT * FROM pg_temp.same_rows('a page not all-visible changed',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fresh f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT cmp_ok((SELECT hits FROM pg_temp.since('fresh changed')), '<', :fresh_pages::bigint,
              'a page not all-visible that changed is not read from its copy');

-- several devices (three simulated by the CPU backend; on a GPU machine, its
-- GPUs), each reading its share of the pages through the cache: the second
-- read takes every page from it
SELECT set_config('gpuhash.devices',
                  CASE WHEN current_setting('gpuhash.device') = 'cpu' THEN '0,1,2' ELSE 'all' END,
                  false) IS NOT NULL AS devices_set \gset
SELECT pg_temp.mark('devices');
SELECT * FROM pg_temp.same_rows('several devices, first read',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT * FROM pg_temp.same_rows('several devices, second read',
  'SELECT d.g, count(*), sum(f.v) FROM pc_fact f JOIN pc_dim d ON f.k = d.k GROUP BY 1', 'GpuStarAgg');
SELECT cmp_ok((SELECT hits FROM pg_temp.since('devices')), '>=', :fact_pages::bigint,
              'several devices: the second read takes every page from the cache');
RESET gpuhash.devices;

-- the DBA's setting: a new size (here none) empties every worker's cache
ALTER SYSTEM SET gpuhash.page_cache_size = 0;
DO $$
BEGIN
  PERFORM pg_reload_conf();
  FOR i IN 1..100 LOOP
    EXIT WHEN (SELECT bytes FROM pg_temp.cache()) = 0;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $$;
SELECT is((SELECT pages || ' ' || bytes FROM pg_temp.cache()), '0 0',
          'gpuhash.page_cache_size = 0, reloaded: the caches hold nothing');
ALTER SYSTEM RESET gpuhash.page_cache_size;
DO $$ BEGIN PERFORM pg_reload_conf(); END $$;
\else
SELECT skip('no GPU service with a page cache (gpuhash not preloaded, or gpuhash.page_cache_size = 0)', 46);
\endif

SELECT * FROM finish();
DROP TABLE pc_dim, pc_fact, pc_unlogged;
