-- GpuHashJoin: every join type, key types, NULLs, duplicates, empty sides,
-- multi-column keys, residual quals, rescans and multi-way joins.  The plan is
-- forced (gpuhash.force) so small tables exercise the node; results are
-- ordered so the output is the same on every backend.
SET gpuhash.force = on;
SET max_parallel_workers_per_gather = 0;

CREATE TABLE l (id int, k int, k8 bigint, t text, f float8, d date, v int);
CREATE TABLE r (id int, k int, k8 bigint, t text, f float8, d date, w int);
INSERT INTO l VALUES
  (1, 1, 1, 'a', 1.5, '2024-01-01', 10),
  (2, 2, 2, 'b', -0.0, '2024-01-02', 20),
  (3, 2, 2, 'b', 'NaN', '2024-01-02', 30),
  (4, NULL, NULL, NULL, NULL, NULL, 40),
  (5, 5, 5000000000, 'eeeee', 5.25, '1999-12-31', 50),
  (6, 7, 7, 'g', 7, '2000-02-29', 60);
INSERT INTO r VALUES
  (1, 1, 1, 'a', 1.5, '2024-01-01', 100),
  (2, 2, 2, 'b', 0.0, '2024-01-02', 200),
  (3, 2, 2, 'b', 'NaN', '2024-01-02', 300),
  (4, NULL, NULL, NULL, NULL, NULL, 400),
  (5, 5, 5000000000, 'eeeee', 5.25, '1999-12-31', 500),
  (6, 9, 9, 'z', 9, '2001-01-01', 600);
CREATE TABLE empty_t (k int, t text);
ANALYZE l, r, empty_t;

-- inner join, int4 keys, duplicates on both sides
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l JOIN r ON l.k = r.k;
SELECT l.id, r.id FROM l JOIN r ON l.k = r.k ORDER BY 1, 2;

-- outer joins: NULL keys never match but are preserved
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l LEFT JOIN r ON l.k = r.k;
SELECT l.id, r.id FROM l LEFT JOIN r ON l.k = r.k ORDER BY 1, 2;
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l RIGHT JOIN r ON l.k = r.k;
SELECT l.id, r.id FROM l RIGHT JOIN r ON l.k = r.k ORDER BY 1, 2;
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l FULL JOIN r ON l.k = r.k;
SELECT l.id, r.id FROM l FULL JOIN r ON l.k = r.k ORDER BY 1, 2;

-- semi and anti joins
EXPLAIN (COSTS OFF) SELECT id FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k = l.k);
SELECT id FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k = l.k) ORDER BY 1;
SELECT id FROM l WHERE k IN (SELECT k FROM r) ORDER BY 1;
EXPLAIN (COSTS OFF) SELECT id FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k);
SELECT id FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k) ORDER BY 1;
-- semi and anti joins with a residual join qual
SELECT id FROM l WHERE EXISTS (SELECT 1 FROM r WHERE r.k = l.k AND r.w > l.v * 12) ORDER BY 1;
SELECT id FROM l WHERE NOT EXISTS (SELECT 1 FROM r WHERE r.k = l.k AND r.w > l.v * 12) ORDER BY 1;

-- cross-type integer keys (int4 = int8), bigint beyond 32 bits
SELECT l.id, r.id FROM l JOIN r ON l.k = r.k8 ORDER BY 1, 2;
SELECT l.id, r.id FROM l JOIN r ON l.k8 = r.k8 ORDER BY 1, 2;

-- float keys: -0 = 0 and NaN = NaN, as PostgreSQL compares them
SELECT l.id, r.id FROM l JOIN r ON l.f = r.f ORDER BY 1, 2;
SELECT l.id, r.id FROM l JOIN r ON l.f::float4 = r.f ORDER BY 1, 2;

-- date keys, text keys (hashed and rechecked), multi-column keys
SELECT l.id, r.id FROM l JOIN r ON l.d = r.d ORDER BY 1, 2;
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l JOIN r ON l.t = r.t;
SELECT l.id, r.id FROM l JOIN r ON l.t = r.t ORDER BY 1, 2;
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l JOIN r ON l.k = r.k AND l.t = r.t;
SELECT l.id, r.id FROM l JOIN r ON l.k = r.k AND l.t = r.t ORDER BY 1, 2;
-- integer and date key columns are exact together when they fit 64 bits
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l LEFT JOIN r ON l.k = r.k AND l.d = r.d;
SELECT l.id, r.id FROM l LEFT JOIN r ON l.k = r.k AND l.d = r.d ORDER BY 1, 2;
-- int4 and int8 together take 96 bits: hashed
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l JOIN r ON l.k = r.k AND l.k8 = r.k8;

-- residual join quals: decide matching in outer joins; WHERE filters after
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l LEFT JOIN r ON l.k = r.k AND r.w > 150;
SELECT l.id, r.id FROM l LEFT JOIN r ON l.k = r.k AND r.w > 150 ORDER BY 1, 2;
SELECT l.id, r.id FROM l LEFT JOIN r ON l.k = r.k WHERE r.w IS NULL OR r.w > 150 ORDER BY 1, 2;
SELECT l.id, r.id FROM l FULL JOIN r ON l.k = r.k AND l.v * 10 = r.w ORDER BY 1, 2;

-- empty sides
SELECT count(*) FROM l JOIN empty_t e ON l.k = e.k;
SELECT l.id, e.k FROM l LEFT JOIN empty_t e ON l.k = e.k ORDER BY 1;
SELECT e.k, r.id FROM empty_t e RIGHT JOIN r ON e.k = r.k ORDER BY 2;
SELECT count(*) FROM empty_t e FULL JOIN empty_t e2 ON e.k = e2.k;

-- expressions as keys and in the output
SELECT l.id, r.id, l.v + r.w AS s FROM l JOIN r ON l.k + 1 = r.k + 1 ORDER BY 1, 2;

-- a three-way join becomes a tree of GpuHashJoins
EXPLAIN (COSTS OFF)
SELECT l.id, r.id, r2.id FROM l JOIN r ON l.k = r.k JOIN r r2 ON r.t = r2.t;
SELECT l.id, r.id, r2.id FROM l JOIN r ON l.k = r.k JOIN r r2 ON r.t = r2.t ORDER BY 1, 2, 3;

-- joins of subqueries
SELECT a.k, a.n, b.m FROM (SELECT k, count(*) n FROM l GROUP BY k) a
  JOIN (SELECT k, max(w) m FROM r GROUP BY k) b ON a.k = b.k ORDER BY 1;

-- rescans: inside a correlated subplan and under LATERAL
SELECT l.id, (SELECT count(*) FROM r JOIN r r2 ON r.k = r2.k WHERE r.w > l.v * 5) c
  FROM l ORDER BY 1;
SELECT l.id, x.c FROM l, LATERAL (SELECT count(*) c FROM r JOIN r r2 ON r.k = r2.k
  WHERE r2.id <= l.id) x ORDER BY 1;

-- prepared statements keep the right answer across executions
PREPARE q(int) AS SELECT l.id, r.id FROM l JOIN r ON l.k = r.k WHERE l.v > $1 ORDER BY 1, 2;
EXECUTE q(0);
EXECUTE q(25);
EXECUTE q(100);
DEALLOCATE q;

-- larger inputs: more rows than one chunk, many duplicates
SET gpuhash.chunk_rows = 1000;
CREATE TABLE big_l AS SELECT g AS id, g % 997 AS k FROM generate_series(1, 20000) g;
CREATE TABLE big_r AS SELECT g AS id, g % 1009 AS k FROM generate_series(1, 5000) g;
ANALYZE big_l, big_r;
SELECT count(*), sum(big_l.id::bigint * big_r.id) FROM big_l JOIN big_r ON big_l.k = big_r.k;
SELECT count(*) FROM big_l LEFT JOIN big_r ON big_l.k = big_r.k AND big_r.id < 100;
SELECT count(*) FROM big_l WHERE NOT EXISTS (SELECT 1 FROM big_r WHERE big_r.k = big_l.k);
RESET gpuhash.chunk_rows;

-- turning it off gives PostgreSQL's own plan
SET gpuhash.enable_join = off;
EXPLAIN (COSTS OFF) SELECT l.id, r.id FROM l JOIN r ON l.k = r.k;
RESET gpuhash.enable_join;

-- types without an exact or hashed encoding are simply not offered
CREATE TABLE pt (p point);
EXPLAIN (COSTS OFF) SELECT * FROM pt a JOIN pt b ON a.p ~= b.p;

DROP TABLE l, r, empty_t, big_l, big_r, pt;
