-- The GpuHashJoin's filter of inner keys (src/join_filter.c): for inner, semi
-- and right joins, outer rows whose key no inner row has are dropped as they
-- are read.  Every query runs with gpuhash off and forced on and must return
-- the same rows; EXPLAIN ANALYZE's "Outer Rows Filtered" must count the
-- outer rows that cannot match (all of them but the filter's rare false
-- positives) for the joins that drop them, and be absent for the others.
-- Selective inner sides, NULL keys on both sides, hashed (text) and
-- multi-column keys, chunks smaller than the input; an empty inner side,
-- where the outer side is not read.
BEGIN;
SELECT plan(36);

SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpuhash.enable_fusion = off;
SELECT setseed(0.577);

CREATE TEMP TABLE big AS
  SELECT g AS id,
         CASE WHEN g % 17 = 0 THEN NULL ELSE (random() * 20000)::int END AS k,
         (g % 50)::text AS t,
         g % 3 AS c
  FROM generate_series(1, 40000) g;
-- a selective inner side: 300 of the 20000 keys, some twice, one NULL
CREATE TEMP TABLE few AS
  SELECT g AS id, (g * 61) % 20000 AS k, ((g * 61) % 50)::text AS t, g % 3 AS c
  FROM generate_series(1, 300) g
  UNION ALL SELECT 1000 + g, (g * 61) % 20000, 'x', 0 FROM generate_series(1, 40) g
  UNION ALL SELECT 2000, NULL, NULL, NULL;
CREATE TEMP TABLE nothing (id int, k int, t text, c int);
-- rows, but no key: no outer row can match them
CREATE TEMP TABLE nullkeys AS SELECT g AS id, NULL::int AS k FROM generate_series(1, 50) g;
ANALYZE big, few, nothing, nullkeys;

\ir lib/digests.sql

-- the outer rows that cannot match an inner row on k
CREATE TEMP TABLE unmatched AS
  SELECT count(*) AS n FROM big WHERE k IS NULL OR k NOT IN (SELECT k FROM few WHERE k IS NOT NULL);

-- run q with gpuhash forced on; the "Outer Rows Filtered" of its GpuHashJoin, or NULL
CREATE FUNCTION pg_temp.filtered(q text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  n bigint;
BEGIN
  PERFORM set_config('gpuhash.enabled', 'on', true);
  PERFORM set_config('gpuhash.force', 'on', true);
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ 'Outer Rows Filtered: ' THEN
      n := substring(line FROM 'Outer Rows Filtered: ([0-9]+)')::bigint;
    END IF;
  END LOOP;
  RETURN n;
END $$;

-- q's EXPLAIN ANALYZE with gpuhash forced on
CREATE FUNCTION pg_temp.explained(q text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  line text;
  p text := '';
BEGIN
  PERFORM set_config('gpuhash.enabled', 'on', true);
  PERFORM set_config('gpuhash.force', 'on', true);
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    p := p || line || E'\n';
  END LOOP;
  RETURN p;
END $$;

-- the filter drops between 95% and 100% of the rows that cannot match
CREATE FUNCTION pg_temp.drops_unmatched(name text, q text) RETURNS text
LANGUAGE sql AS $$
  SELECT ok(f <= u AND f >= u * 0.95,
            name || ': filtered ' || coalesce(f::text, 'nothing') || ' of ' || u || ' unmatched outer rows')
  FROM (SELECT pg_temp.filtered(q) AS f, (SELECT n FROM unmatched) AS u) x
$$;

SELECT * FROM pg_temp.same_rows('inner join, selective inner side',
  'SELECT b.id, f.id FROM big b JOIN few f ON b.k = f.k');
SELECT pg_temp.drops_unmatched('inner join', 'SELECT b.id, f.id FROM big b JOIN few f ON b.k = f.k');
SELECT * FROM pg_temp.same_rows('semi join',
  'SELECT b.id FROM big b WHERE EXISTS (SELECT 1 FROM few f WHERE f.k = b.k)');
SELECT pg_temp.drops_unmatched('semi join',
  'SELECT b.id FROM big b WHERE EXISTS (SELECT 1 FROM few f WHERE f.k = b.k)');
SELECT * FROM pg_temp.same_rows('semi join with another condition',
  'SELECT b.id FROM big b WHERE EXISTS (SELECT 1 FROM few f WHERE f.k = b.k AND f.c <> b.c)');
SELECT * FROM pg_temp.same_rows('inner join with another condition',
  'SELECT b.id, f.id FROM big b JOIN few f ON b.k = f.k AND f.id < b.id % 400');
-- hashed keys (text, rechecked) and two columns
SELECT * FROM pg_temp.same_rows('hashed key',
  'SELECT b.id, f.id FROM big b JOIN few f ON b.t = f.t');
SELECT * FROM pg_temp.same_rows('two key columns',
  'SELECT b.id, f.id FROM big b JOIN few f ON b.k = f.k AND b.c = f.c');
-- the joins that keep unmatched outer rows filter nothing
SELECT * FROM pg_temp.same_rows('left join',
  'SELECT b.id, f.id FROM big b LEFT JOIN few f ON b.k = f.k');
SELECT is(pg_temp.filtered('SELECT b.id, f.id FROM big b LEFT JOIN few f ON b.k = f.k'), NULL,
          'left join: no filter');
SELECT * FROM pg_temp.same_rows('anti join',
  'SELECT b.id FROM big b WHERE NOT EXISTS (SELECT 1 FROM few f WHERE f.k = b.k)');
SELECT * FROM pg_temp.same_rows('full join',
  'SELECT b.id, f.id FROM big b FULL JOIN few f ON b.k = f.k');
-- small chunks: a chunk fills with kept rows only
SET LOCAL gpuhash.chunk_rows = 100;
SELECT * FROM pg_temp.same_rows('inner join, small chunks',
  'SELECT b.id, f.id FROM big b JOIN few f ON b.k = f.k');
SELECT pg_temp.drops_unmatched('inner join, small chunks',
  'SELECT b.id, f.id FROM big b JOIN few f ON b.k = f.k');
SET LOCAL gpuhash.chunk_rows = 1048576;
-- an empty inner side: the outer side is not read at all, as PostgreSQL's
-- Hash Join does not read it (a left join's is: test/tap/differential.sql)
SELECT * FROM pg_temp.same_rows('inner join, empty inner side',
  'SELECT b.id, n.id FROM big b JOIN nothing n ON b.k = n.k');
SELECT ok(pg_temp.explained('SELECT b.id, n.id FROM big b JOIN nothing n ON b.k = n.k')
            ~ 'Seq Scan on big b \(never executed\)',
          'empty inner side: the outer side not read');
-- inner rows with NULL keys only: a right join still returns them
SELECT * FROM pg_temp.same_rows('right join, inner keys all NULL',
  'SELECT b.id, n.id FROM big b RIGHT JOIN nullkeys n ON b.k = n.k');
SELECT * FROM pg_temp.same_rows('semi join, inner keys all NULL',
  'SELECT b.id FROM big b WHERE b.k IN (SELECT k FROM nullkeys)');
SELECT * FROM pg_temp.same_rows('left join, inner keys all NULL',
  'SELECT b.id, n.id FROM big b LEFT JOIN nullkeys n ON b.k = n.k');
-- every outer key present: nothing but the NULLs goes
SELECT * FROM pg_temp.same_rows('inner join, every key present',
  'SELECT b.id, c.id FROM big b JOIN big c ON b.k = c.k');
SELECT is(pg_temp.filtered('SELECT b.id, c.id FROM big b JOIN big c ON b.k = c.k'),
          (SELECT count(*) FROM big WHERE k IS NULL), 'every key present: only NULL keys filtered');

SELECT * FROM finish();
ROLLBACK;
