-- Aggregations fused with their join: a GROUP BY or plain aggregate over an
-- inner equi-join on an exact key, each grouping column and
-- aggregate reading one side, runs as a single GpuHashAgg that joins and
-- aggregates in the engine.  EXPLAIN shows "Fused Join".  The plan is forced
-- (gpuhash.force); results are ordered so the output is the same on every
-- backend.
SET gpuhash.force = on;
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 0;

CREATE TABLE fo (id int, k int, v bigint, c smallint);
CREATE TABLE fi (id int, k bigint, w int, nk int, price numeric(8,2));
INSERT INTO fo SELECT g, CASE WHEN g % 10 = 0 THEN NULL ELSE g % 23 END, g * 3,
                     CASE WHEN g % 7 = 0 THEN NULL ELSE g % 3 END
  FROM generate_series(1, 400) g;
INSERT INTO fi SELECT g, CASE WHEN g % 9 = 0 THEN NULL ELSE g % 29 END, g % 4,
                     CASE WHEN g % 5 = 0 THEN NULL ELSE g % 2 END, g * 1.25
  FROM generate_series(1, 120) g;
CREATE TABLE fe (k int, w int);
ANALYZE fo, fi, fe;

-- a plain aggregate: one row
EXPLAIN (COSTS OFF)
SELECT count(*), sum(fi.w), min(fo.v), max(fi.w), sum(fi.price), avg(fo.v)
  FROM fo JOIN fi ON fo.k = fi.k;
SELECT count(*), sum(fi.w), min(fo.v), max(fi.w), sum(fi.price), avg(fo.v)
  FROM fo JOIN fi ON fo.k = fi.k;

-- grouping columns from both sides, NULL groups included
EXPLAIN (COSTS OFF)
SELECT fo.c, fi.nk, count(*), sum(fi.w), sum(fi.price), avg(fo.v)
  FROM fo JOIN fi ON fo.k = fi.k GROUP BY fo.c, fi.nk;
SELECT fo.c, fi.nk, count(*), sum(fi.w), sum(fi.price), avg(fo.v)
  FROM fo JOIN fi ON fo.k = fi.k GROUP BY fo.c, fi.nk ORDER BY 1, 2;

-- expressions, FILTER and HAVING
SELECT fo.v % 4 AS m, count(*) FILTER (WHERE fi.w > 1), sum(fo.v) FILTER (WHERE fo.v > 600)
  FROM fo JOIN fi ON fo.k = fi.k GROUP BY 1 HAVING count(*) > 1 ORDER BY 1;

-- an argument that would fail on rows no row of the other side joins (fi.k
-- 25; fo.k is at most 22): PostgreSQL evaluates it only for joined rows,
-- and a fused node would for every row of its side, so the join is not fused;
-- an integer modulo a constant cannot fail, and is
EXPLAIN (COSTS OFF)
SELECT fo.c, sum(100 / (fi.k - 25)) FROM fo JOIN fi ON fo.k = fi.k GROUP BY fo.c;
SELECT fo.c, sum(100 / (fi.k - 25)) FROM fo JOIN fi ON fo.k = fi.k GROUP BY fo.c ORDER BY 1;
EXPLAIN (COSTS OFF)
SELECT fo.v % 4 AS m, count(*) FROM fo JOIN fi ON fo.k = fi.k GROUP BY 1;

-- empty inner side: the plain aggregate still gives its row, GROUP BY none
SELECT count(*), sum(fe.w), max(fo.v) FROM fo JOIN fe ON fo.k = fe.k;
SELECT fe.w, count(*) FROM fo JOIN fe ON fo.k = fe.k GROUP BY fe.w;

-- EXPLAIN ANALYZE counts the pairs the engine joined
CREATE FUNCTION fused_pairs(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ '(Join Pairs|Groups|Fused Join)' THEN RETURN NEXT btrim(line); END IF;
  END LOOP;
END $$;
SELECT fused_pairs('SELECT fi.w, count(*) FROM fo JOIN fi ON fo.k = fi.k GROUP BY fi.w');
SELECT (SELECT count(*) FROM fo JOIN fi ON fo.k = fi.k) AS pairs;

-- gpuhash.enable_fusion = off: the join and the aggregation apart
SET gpuhash.enable_fusion = off;
EXPLAIN (COSTS OFF) SELECT fi.w, count(*) FROM fo JOIN fi ON fo.k = fi.k GROUP BY fi.w;
RESET gpuhash.enable_fusion;

-- not fused: an argument or key reading both sides, another join clause, an outer join
EXPLAIN (COSTS OFF) SELECT fi.w, sum(fo.v + fi.w) FROM fo JOIN fi ON fo.k = fi.k GROUP BY fi.w;
EXPLAIN (COSTS OFF) SELECT fi.w, count(*) FROM fo JOIN fi ON fo.k = fi.k AND fo.v < fi.id GROUP BY fi.w;
EXPLAIN (COSTS OFF) SELECT fi.w, count(fo.id) FROM fi LEFT JOIN fo ON fo.k = fi.k GROUP BY fi.w;
SELECT fi.w, sum(fo.v + fi.w) FROM fo JOIN fi ON fo.k = fi.k GROUP BY fi.w ORDER BY 1;

DROP FUNCTION fused_pairs(text);
DROP TABLE fo, fi, fe;
