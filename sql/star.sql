-- GpuStarAgg: an aggregation over a star of inner joins (a fact table joined
-- to dimensions on keys they are unique on) runs as one node: the fact
-- table's pages go to the device, its quals, the dimension lookups, the
-- group key and the aggregates' arguments are evaluated there.  EXPLAIN
-- shows the node, the fact table, the quals on the device, the dimensions
-- and their join clauses.  The plans are forced (gpuhash.force); results are
-- ordered so the output is the same on every backend, and each is checked
-- against PostgreSQL's own plan (gpuhash off) in the same file.
SET gpuhash.force = on;
SET max_parallel_workers_per_gather = 0;
SET extra_float_digits = 0;

CREATE TABLE st_date (d_key int PRIMARY KEY, d_year int NOT NULL, d_month text NOT NULL);
CREATE TABLE st_part (p_key int PRIMARY KEY, p_brand text, p_cat char(3), p_size int,
                      p_price numeric(10,2));
CREATE TABLE st_cust (c_key bigint PRIMARY KEY, c_region text, c_nation int);
CREATE TABLE st_nation (n_key int PRIMARY KEY, n_name text);
-- varying-width columns before the fixed-width ones the queries read
CREATE TABLE st_fact (f_id int, f_note text, f_date int, f_part int, f_cust int,
                      f_flag char(1), f_qty int, f_price numeric(12,2), f_disc numeric(4,2),
                      f_ratio float8, f_small smallint, f_when date);
INSERT INTO st_date SELECT 19940000 + g, 1994 + g % 4, to_char(g % 12 + 1, 'FM00')
  FROM generate_series(1, 400) g;
INSERT INTO st_part SELECT g, 'b' || (g % 7), 'c' || (g % 3),
                           CASE WHEN g % 10 = 0 THEN NULL ELSE g % 5 END, g * 1.25
  FROM generate_series(1, 300) g;
INSERT INTO st_cust SELECT g, CASE g % 4 WHEN 0 THEN 'east' WHEN 1 THEN 'west'
                                         WHEN 2 THEN 'north' ELSE NULL END, g % 6
  FROM generate_series(1, 200) g;
INSERT INTO st_nation SELECT g, 'n' || g FROM generate_series(0, 5) g;
INSERT INTO st_fact
  SELECT g, repeat('x', g % 37),
         CASE WHEN g % 97 = 0 THEN NULL ELSE 19940000 + 1 + (g * 7) % 420 END,
         1 + (g * 13) % 310,
         CASE WHEN g % 53 = 0 THEN NULL ELSE 1 + (g * 11) % 200 END,
         CASE g % 3 WHEN 0 THEN 'A' WHEN 1 THEN 'R' ELSE NULL END,
         CASE WHEN g % 41 = 0 THEN NULL ELSE g % 50 END,
         (g % 1000) * 1.5, (g % 11) / 100.0,
         CASE WHEN g % 29 = 0 THEN NULL ELSE (g % 400) / 4.0 END,
         (g % 7)::smallint, date '1994-01-01' + g % 1500
  FROM generate_series(1, 6000) g;
VACUUM (FREEZE, ANALYZE) st_date, st_part, st_cust, st_nation, st_fact;

-- three dimensions, a qual on the fact table, groups from two dimensions
EXPLAIN (COSTS OFF)
SELECT d_year, p_brand, sum(f_qty), count(*)
  FROM st_fact, st_date, st_part, st_cust
 WHERE f_date = d_key AND f_part = p_key AND f_cust = c_key
   AND p_cat = 'c1' AND c_region = 'east' AND f_qty BETWEEN 2 AND 40
 GROUP BY d_year, p_brand;
SELECT d_year, p_brand, sum(f_qty), count(*)
  FROM st_fact, st_date, st_part, st_cust
 WHERE f_date = d_key AND f_part = p_key AND f_cust = c_key
   AND p_cat = 'c1' AND c_region = 'east' AND f_qty BETWEEN 2 AND 40
 GROUP BY d_year, p_brand ORDER BY 1, 2;

-- a plain aggregate of a product, as SSB's first queries
SELECT sum(f_qty * f_small) AS revenue, count(*)
  FROM st_fact, st_date WHERE f_date = d_key AND d_year = 1995 AND f_small < 3;

-- numerics: products and sums byte for byte, averages, with NULLs
SELECT c_region, sum(f_price * (1 - f_disc)), avg(f_price), sum(f_disc), min(f_qty),
       max(f_ratio), count(f_ratio)
  FROM st_fact JOIN st_cust ON f_cust = c_key GROUP BY c_region ORDER BY 1;

-- a group key of the fact table (char(1), NULLs) and a dimension's value
-- inside a fact expression (the LIKE runs on the CPU, per part)
EXPLAIN (COSTS OFF)
SELECT f_flag, sum(CASE WHEN p_brand LIKE 'b1%' THEN f_price ELSE 0 END), count(*)
  FROM st_fact JOIN st_part ON f_part = p_key GROUP BY f_flag;
SELECT f_flag, sum(CASE WHEN p_brand LIKE 'b1%' THEN f_price ELSE 0 END), count(*)
  FROM st_fact JOIN st_part ON f_part = p_key GROUP BY f_flag ORDER BY 1;

-- quals of every kind on the device: IN, OR, IS NULL, COALESCE, dates, numerics
SELECT p_size, count(*), sum(f_qty), sum(f_small)
  FROM st_fact JOIN st_part ON f_part = p_key
 WHERE (f_small IN (1, 3, 5) OR f_qty IS NULL) AND coalesce(f_ratio, 0) < 90
   AND f_when >= date '1995-01-01' AND f_price > 100.50 AND NOT f_flag = 'A'
 GROUP BY p_size ORDER BY 1;

-- a qual the device cannot evaluate stays on the Seq Scan
EXPLAIN (COSTS OFF)
SELECT d_month, count(*) FROM st_fact JOIN st_date ON f_date = d_key
 WHERE f_note ~ 'x{5}' AND f_qty > 10 GROUP BY d_month;
SELECT d_month, count(*) FROM st_fact JOIN st_date ON f_date = d_key
 WHERE f_note ~ 'x{5}' AND f_qty > 10 GROUP BY d_month ORDER BY 1;

-- HAVING, FILTER, an expression of the fact as a group key
SELECT f_small % 3 AS m, count(*) FILTER (WHERE d_year > 1995), sum(f_qty) FILTER (WHERE f_qty > 25)
  FROM st_fact JOIN st_date ON f_date = d_key
 GROUP BY 1 HAVING count(*) > 100 ORDER BY 1;

-- the fact table alone: its quals and expressions on the device
EXPLAIN (COSTS OFF)
SELECT f_flag, sum(f_price * (1 + f_disc)), count(*) FROM st_fact WHERE f_when < date '1996-06-01'
 GROUP BY f_flag;
SELECT f_flag, sum(f_price * (1 + f_disc)), count(*) FROM st_fact WHERE f_when < date '1996-06-01'
 GROUP BY f_flag ORDER BY 1;

-- the fact table alone, no quals: GpuHashAgg reads integer columns from the
-- pages itself; a numeric argument (which it splits into limbs on the CPU)
-- or a text key makes it read PostgreSQL's scan, so the pipeline is offered
EXPLAIN (COSTS OFF)
SELECT f_small, sum(f_qty), count(*) FROM st_fact GROUP BY f_small;
EXPLAIN (COSTS OFF)
SELECT f_small, sum(f_price), count(*) FROM st_fact GROUP BY f_small;
SELECT f_small, sum(f_price), count(*) FROM st_fact GROUP BY f_small ORDER BY 1;
-- and a plain aggregate, which GpuHashAgg leaves to PostgreSQL
EXPLAIN (COSTS OFF)
SELECT count(*), sum(f_qty), max(f_when) FROM st_fact;
SELECT count(*), sum(f_qty), max(f_when) FROM st_fact;

-- no matching row: a plain aggregate still returns its row, a GROUP BY none
SELECT count(*), sum(f_qty), avg(f_price) FROM st_fact JOIN st_date ON f_date = d_key
 WHERE d_year = 3000;
SELECT d_year, count(*) FROM st_fact JOIN st_date ON f_date = d_key
 WHERE d_year = 3000 GROUP BY d_year;

-- a parameter, evaluated once per execution
PREPARE star_q(int) AS
  SELECT d_year, count(*) FROM st_fact JOIN st_date ON f_date = d_key
   WHERE f_qty > $1 GROUP BY d_year ORDER BY 1;
EXECUTE star_q(45);
EXECUTE star_q(48);
DEALLOCATE star_q;

-- errors are PostgreSQL's, and only for rows PostgreSQL evaluates
SELECT sum(f_qty / (f_small - f_small)) FROM st_fact JOIN st_date ON f_date = d_key;
SELECT sum(f_qty * 2147483647) FROM st_fact JOIN st_date ON f_date = d_key;
SELECT sum(f_qty / f_small) FROM st_fact JOIN st_date ON f_date = d_key WHERE f_small <> 0;
SELECT count(*) FROM st_fact JOIN st_date ON f_date = d_key
 WHERE f_small > 0 AND 100 / f_small > 20;

-- join clauses no dimension applies alone run on the device after the
-- probes: a customer's nation equal to the part's size (across dimensions,
-- as TPC-H's Q5 compares the customer's nation with the supplier's), and an
-- OR over the fact table and a dimension (as Q19)
SELECT n_name, count(*), sum(f_qty) FROM st_fact, st_cust, st_nation, st_part
 WHERE f_cust = c_key AND c_nation = n_key AND f_part = p_key AND n_key = p_size
 GROUP BY n_name ORDER BY 1;
EXPLAIN (COSTS OFF)
SELECT count(*), sum(f_price) FROM st_fact JOIN st_part ON f_part = p_key
 WHERE (f_flag = 'A' AND p_cat = 'c1' AND f_qty < 20) OR (f_flag = 'R' AND p_size > 2);
SELECT count(*), sum(f_price) FROM st_fact JOIN st_part ON f_part = p_key
 WHERE (f_flag = 'A' AND p_cat = 'c1' AND f_qty < 20) OR (f_flag = 'R' AND p_size > 2);
-- a customer's columns beside its key in the GROUP BY, which the planner
-- drops from it (the key determines them): grouped by again on the device
SELECT c_key, c_region, c_nation, count(*), sum(f_qty) FROM st_fact JOIN st_cust ON f_cust = c_key
 WHERE c_key < 8 GROUP BY c_key, c_region, c_nation ORDER BY 1;

-- not a star: a dimension not unique on its key; a LEFT JOIN of the fact
-- table is (the dimension's values NULL where it finds no row), and a
-- snowflake (customers and their nations: unique on the customer's key)
EXPLAIN (COSTS OFF)
SELECT p_size, count(*) FROM st_fact JOIN st_part ON f_small = p_size GROUP BY p_size;
EXPLAIN (COSTS OFF)
SELECT d_year, count(*) FROM st_fact LEFT JOIN st_date ON f_date = d_key GROUP BY d_year;
SELECT d_year, count(*), count(d_key) FROM st_fact LEFT JOIN st_date ON f_date = d_key AND d_year > 1995
 GROUP BY d_year ORDER BY 1;
-- where it finds no row: a grouping value not NULL, a WHERE over its text true
EXPLAIN (COSTS OFF)
SELECT COALESCE(d_month, 'none'), count(*) FROM st_fact LEFT JOIN st_date ON f_date = d_key AND d_year > 1995
 WHERE d_month IS NULL OR d_month LIKE '1%' GROUP BY 1;
SELECT COALESCE(d_month, 'none'), count(*) FROM st_fact LEFT JOIN st_date ON f_date = d_key AND d_year > 1995
 WHERE d_month IS NULL OR d_month LIKE '1%' GROUP BY 1 ORDER BY 1;
EXPLAIN (COSTS OFF)
SELECT n_name, count(*) FROM st_fact JOIN st_cust ON f_cust = c_key
  JOIN st_nation ON c_nation = n_key GROUP BY n_name;
-- a dimension unique on two int4 columns is joined on both; a fact column
-- equal to two dimensions' keys joins each of them
CREATE TABLE st_offer (o_part int, o_date int, o_rebate int, PRIMARY KEY (o_part, o_date));
INSERT INTO st_offer SELECT p, 19940000 + d, (p + d) % 9 FROM generate_series(1, 300, 2) p,
                                                           generate_series(1, 400, 5) d;
ANALYZE st_offer;
EXPLAIN (COSTS OFF)
SELECT p_brand, sum(f_qty * o_rebate), count(*) FROM st_fact
  JOIN st_offer ON f_part = o_part AND f_date = o_date JOIN st_part ON f_part = p_key
 GROUP BY p_brand;
SELECT p_brand, sum(f_qty * o_rebate), count(*) FROM st_fact
  JOIN st_offer ON f_part = o_part AND f_date = o_date JOIN st_part ON o_part = p_key
 GROUP BY p_brand ORDER BY p_brand;

-- EXPLAIN ANALYZE: what the device kept, the groups, how the key was formed
CREATE FUNCTION star_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ '(Rows Kept|Groups|Group Key Form|Dimensions|GpuStarAgg)' THEN
      -- (PostgreSQL 18 shows rows per loop with two decimals)
      RETURN NEXT regexp_replace(btrim(line), 'rows=([0-9]+)\.00 ', 'rows=\1 ', 'g');
    END IF;
  END LOOP;
END $$;
SELECT star_explain('SELECT d_year, p_cat, count(*) FROM st_fact, st_date, st_part
                     WHERE f_date = d_key AND f_part = p_key GROUP BY d_year, p_cat');
SELECT count(*) FROM st_fact, st_date, st_part WHERE f_date = d_key AND f_part = p_key;
-- two dimensions on one fact column: the larger one's rows are checked against
-- the smaller one's keys as its scan reads them (star_dim_filter.c)
SELECT star_explain('SELECT c_region, n_name, count(*), sum(f_qty) FROM st_fact
                     JOIN st_cust ON f_cust = c_key JOIN st_nation ON f_cust = n_key
                     GROUP BY c_region, n_name');
SELECT c_region, n_name, count(*), sum(f_qty) FROM st_fact
  JOIN st_cust ON f_cust = c_key JOIN st_nation ON f_cust = n_key
 GROUP BY c_region, n_name ORDER BY 1, 2;

-- gpuhash.enable_star = off: gpuhash's other nodes
SET gpuhash.enable_star = off;
EXPLAIN (COSTS OFF)
SELECT d_year, count(*) FROM st_fact JOIN st_date ON f_date = d_key GROUP BY d_year;
RESET gpuhash.enable_star;

-- every query above, gpuhash on and off: the same rows
CREATE FUNCTION star_same(q text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE a text; b text;
BEGIN
  SET LOCAL gpuhash.enabled = off;
  EXECUTE format('SELECT md5(string_agg(x::text, ''|'' ORDER BY x::text)) FROM (%s) x', q) INTO a;
  SET LOCAL gpuhash.enabled = on;
  EXECUTE format('SELECT md5(string_agg(x::text, ''|'' ORDER BY x::text)) FROM (%s) x', q) INTO b;
  RETURN a IS NOT DISTINCT FROM b;
END $$;
SELECT star_same($$SELECT d_year, p_brand, sum(f_qty), count(*) FROM st_fact, st_date, st_part, st_cust
  WHERE f_date = d_key AND f_part = p_key AND f_cust = c_key AND p_cat = 'c1' AND c_region = 'east'
    AND f_qty BETWEEN 2 AND 40 GROUP BY d_year, p_brand$$) AS three_dimensions,
       star_same($$SELECT sum(f_qty * f_small) AS revenue, count(*) FROM st_fact, st_date
  WHERE f_date = d_key AND d_year = 1995 AND f_small < 3$$) AS plain,
       star_same($$SELECT c_region, sum(f_price * (1 - f_disc)), avg(f_price), sum(f_disc), min(f_qty),
  max(f_ratio), count(f_ratio) FROM st_fact JOIN st_cust ON f_cust = c_key GROUP BY c_region$$) AS numerics,
       star_same($$SELECT f_flag, sum(CASE WHEN p_brand LIKE 'b1%' THEN f_price ELSE 0 END), count(*)
  FROM st_fact JOIN st_part ON f_part = p_key GROUP BY f_flag$$) AS payload,
       star_same($$SELECT p_brand, sum(f_qty * o_rebate), count(*) FROM st_fact
  JOIN st_offer ON f_part = o_part AND f_date = o_date JOIN st_part ON o_part = p_key
 GROUP BY p_brand$$) AS two_columns;
SELECT star_same($$SELECT p_size, count(*), sum(f_qty), sum(f_small) FROM st_fact JOIN st_part ON f_part = p_key
  WHERE (f_small IN (1, 3, 5) OR f_qty IS NULL) AND coalesce(f_ratio, 0) < 90
    AND f_when >= date '1995-01-01' AND f_price > 100.50 AND NOT f_flag = 'A' GROUP BY p_size$$) AS quals,
       star_same($$SELECT d_month, count(*) FROM st_fact JOIN st_date ON f_date = d_key
  WHERE f_note ~ 'x{5}' AND f_qty > 10 GROUP BY d_month$$) AS cpu_qual,
       star_same($$SELECT f_small % 3 AS m, count(*) FILTER (WHERE d_year > 1995),
  sum(f_qty) FILTER (WHERE f_qty > 25) FROM st_fact JOIN st_date ON f_date = d_key
  GROUP BY 1 HAVING count(*) > 100$$) AS having_filter,
       star_same($$SELECT f_flag, sum(f_price * (1 + f_disc)), count(*) FROM st_fact
  WHERE f_when < date '1996-06-01' GROUP BY f_flag$$) AS fact_alone,
       star_same($$SELECT n_name, count(*) FROM st_fact JOIN st_cust ON f_cust = c_key
  JOIN st_nation ON c_nation = n_key GROUP BY n_name$$) AS snowflake;
SELECT star_same($$SELECT n_name, count(*), sum(f_qty) FROM st_fact, st_cust, st_nation, st_part
  WHERE f_cust = c_key AND c_nation = n_key AND f_part = p_key AND n_key = p_size
  GROUP BY n_name$$) AS across_dimensions,
       star_same($$SELECT count(*), sum(f_price) FROM st_fact JOIN st_part ON f_part = p_key
  WHERE (f_flag = 'A' AND p_cat = 'c1' AND f_qty < 20) OR (f_flag = 'R' AND p_size > 2)$$) AS join_or,
       star_same($$SELECT c_key, c_region, c_nation, count(*), sum(f_qty) FROM st_fact
  JOIN st_cust ON f_cust = c_key WHERE c_key < 8 GROUP BY c_key, c_region, c_nation$$) AS regrouped;

-- NULL text constants beside text columns: an IN list holding NULL, a CASE
-- without ELSE compared with text, of text and of bpchar
EXPLAIN (COSTS OFF)
SELECT d_year, count(*) FROM st_fact JOIN st_date ON f_date = d_key
 WHERE f_note IN ('xx', NULL) GROUP BY d_year;
SELECT star_same($$SELECT d_year, count(*) FROM st_fact JOIN st_date ON f_date = d_key
  WHERE f_note IN ('xx', NULL) GROUP BY d_year$$) AS in_null,
       star_same($$SELECT d_year, count(*) FROM st_fact JOIN st_date ON f_date = d_key
  WHERE f_flag NOT IN ('A', NULL) GROUP BY d_year$$) AS not_in_null,
       star_same($$SELECT d_year, count(*) FROM st_fact JOIN st_date ON f_date = d_key
  WHERE CASE WHEN f_qty > 10 THEN f_flag END = 'R' GROUP BY d_year$$) AS case_bpchar,
       star_same($$SELECT d_year, count(*) FROM st_fact JOIN st_date ON f_date = d_key
  WHERE CASE WHEN f_qty > 10 THEN f_note ELSE NULL END = 'xxx' GROUP BY d_year$$) AS case_text;

-- a dimension's row that no fact row joins (o_key 1000) whose values would
-- fail an expression: PostgreSQL evaluates it only for joined rows, so the
-- dimension's plan does not compute it; the device does, after the probe
CREATE TABLE st_odd (o_key int PRIMARY KEY, o_div int, o_text text);
INSERT INTO st_odd SELECT g, CASE WHEN g = 1000 THEN 0 ELSE g % 5 + 1 END,
                          CASE WHEN g = 1000 THEN 'x' ELSE (g % 9)::text END
  FROM generate_series(1, 1000) g;
ANALYZE st_odd;
EXPLAIN (COSTS OFF)
SELECT 60 / o_div, count(*) FROM st_fact JOIN st_odd ON f_part = o_key GROUP BY 1;
SELECT 60 / o_div, count(*) FROM st_fact JOIN st_odd ON f_part = o_key GROUP BY 1 ORDER BY 1;
SELECT star_same($$SELECT o_text, sum(f_qty * (60 / o_div)) FROM st_fact JOIN st_odd ON f_part = o_key
  GROUP BY o_text$$) AS payload_division,
       star_same($$SELECT f_flag, sum(o_text::int) FROM st_fact JOIN st_odd ON f_part = o_key
  GROUP BY f_flag$$) AS cast_of_text,
       star_same($$SELECT o_text::int % 4, count(*) FROM st_fact JOIN st_odd ON f_part = o_key
  GROUP BY 1$$) AS grouped_by_cast;

-- a column added with a default after its rows were written: their value is
-- the table's, not in their pages, which the pipeline does not read
ALTER TABLE st_fact ADD COLUMN f_added int DEFAULT 7;
SELECT star_same($$SELECT d_year, sum(f_added), count(*) FROM st_fact JOIN st_date ON f_date = d_key
  WHERE f_added > 5 GROUP BY d_year$$) AS added_column;

-- a partitioned fact table: the partitions planning keeps, each a Seq Scan
-- under an Append, read one after another; where a partition is laid out
-- otherwise than the table, PostgreSQL's plan
CREATE TABLE st_pfact (f_id int, f_date int, f_part int, f_qty int, f_price numeric(12,2))
  PARTITION BY RANGE (f_date);
CREATE TABLE st_pfact_1 PARTITION OF st_pfact FOR VALUES FROM (MINVALUE) TO (19940200);
CREATE TABLE st_pfact_2 PARTITION OF st_pfact FOR VALUES FROM (19940200) TO (MAXVALUE);
CREATE TABLE st_pfact_n PARTITION OF st_pfact DEFAULT;
INSERT INTO st_pfact SELECT f_id, f_date, f_part, f_qty, f_price FROM st_fact;
ANALYZE st_pfact;
EXPLAIN (COSTS OFF) SELECT d_year, sum(f_price), count(*) FROM st_pfact JOIN st_date ON f_date = d_key
  GROUP BY d_year;
SELECT star_explain($$SELECT d_year, sum(f_price), count(*) FROM st_pfact JOIN st_date ON f_date = d_key
  WHERE f_date < 19940100 GROUP BY d_year$$);
SELECT star_same($$SELECT d_year, p_cat, sum(f_price), count(*), min(f_qty) FROM st_pfact, st_date, st_part
  WHERE f_date = d_key AND f_part = p_key GROUP BY d_year, p_cat$$) AS partitioned,
       star_same($$SELECT d_year, sum(f_price), count(*) FROM st_pfact JOIN st_date ON f_date = d_key
  WHERE f_date < 19940100 GROUP BY d_year$$) AS one_partition,
       star_same($$SELECT f_qty % 5, sum(f_price), count(*) FROM st_pfact GROUP BY 1$$) AS alone;
CREATE TABLE st_pfact_3 (f_id int, f_date int, f_part int, f_qty int, f_price numeric(12,2), f_more int);
ALTER TABLE st_pfact_3 DROP COLUMN f_more;
INSERT INTO st_pfact_3 SELECT * FROM st_pfact_2;
ALTER TABLE st_pfact DETACH PARTITION st_pfact_2;
ALTER TABLE st_pfact ATTACH PARTITION st_pfact_3 FOR VALUES FROM (19940200) TO (MAXVALUE);
ANALYZE st_pfact;
EXPLAIN (COSTS OFF) SELECT d_year, sum(f_price), count(*) FROM st_pfact JOIN st_date ON f_date = d_key
  GROUP BY d_year;

-- date and time functions on the device: date_trunc of a date made a
-- timestamp, EXTRACT's ISO weekday, days between dates; a numeric key of a
-- declared scale
EXPLAIN (COSTS OFF) SELECT date_trunc('month', f_when::timestamp), extract(isodow FROM f_when), f_price,
    count(*), sum(f_when - date '1994-01-01') FROM st_fact GROUP BY 1, 2, 3;
SELECT star_same($$SELECT date_trunc('month', f_when::timestamp), extract(isodow FROM f_when), f_price,
    count(*), sum(f_when - date '1994-01-01') FROM st_fact GROUP BY 1, 2, 3$$) AS date_functions;

DROP FUNCTION star_explain(text), star_same(text);
DROP TABLE st_fact, st_date, st_part, st_cust, st_nation, st_offer, st_odd, st_pfact, st_pfact_2;
