-- schema.sql: the tables of the Star Schema Benchmark, for test/bench_workload.sh
-- and test/workloads.sh.
--
-- P. O'Neil, E. O'Neil, X. Chen and S. Revilak, "The Star Schema Benchmark
-- and Augmented Fact Table Indexing", TPCTC 2009 (LNCS 5895).  SSB turns
-- TPC-H into a star: the fact table lineorder (TPC-H's orders and lineitem
-- merged) and four dimensions.  Sizes at scale factor SF:
--
--   lineorder  about 6,000,000 x SF rows (1,500,000 x SF orders of 1 to 7 lines)
--   customer   30,000 x SF
--   supplier   2,000 x SF
--   part       200,000 x floor(1 + log2 SF)  (200,000 x SF below SF 1)
--   ssb_date   every day of 1992 to 1998, 2557 rows (the paper's "date";
--              renamed so that it reads as no type name)
--
-- Keys and measures are int4 (prices in cents), the descriptive columns
-- text, as in common SSB ports.  The tables are ordinary (logged) tables, as
-- a user's are: the GPU service's page cache keeps only logged tables'
-- pages; the dimensions' primary keys are added after the load (keys.sql).  Run with search_path set to the target schema;
-- test/ssb/generate.sql fills them.

CREATE TABLE ssb_date (
	d_datekey          int4 NOT NULL,	-- yyyymmdd, 19920101 .. 19981231
	d_date             text NOT NULL,	-- 'January 1, 1992'
	d_dayofweek        text NOT NULL,	-- 'Sunday' .. 'Saturday'
	d_month            text NOT NULL,	-- 'January' .. 'December'
	d_year             int4 NOT NULL,	-- 1992 .. 1998
	d_yearmonthnum     int4 NOT NULL,	-- 199201
	d_yearmonth        text NOT NULL,	-- 'Jan1992'
	d_daynuminweek     int4 NOT NULL,	-- 1 (Sunday) .. 7
	d_daynuminmonth    int4 NOT NULL,
	d_daynuminyear     int4 NOT NULL,
	d_monthnuminyear   int4 NOT NULL,
	d_weeknuminyear    int4 NOT NULL,	-- d_daynuminyear / 7 + 1, as SSB's dbgen
	d_sellingseason    text NOT NULL,	-- 'Winter', 'Spring', 'Summer', 'Fall', 'Christmas'
	d_lastdayinweekfl  int4 NOT NULL,
	d_lastdayinmonthfl int4 NOT NULL,
	d_holidayfl        int4 NOT NULL,
	d_weekdayfl        int4 NOT NULL
);

CREATE TABLE customer (
	c_custkey    int4 NOT NULL,
	c_name       text NOT NULL,		-- 'Customer#000000001'
	c_address    text NOT NULL,
	c_city       text NOT NULL,		-- first 9 letters of the nation, padded, and a digit: 'UNITED KI1'
	c_nation     text NOT NULL,		-- one of TPC-H's 25 nations: 'UNITED STATES'
	c_region     text NOT NULL,		-- 'AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'
	c_phone      text NOT NULL,
	c_mktsegment text NOT NULL
);

CREATE TABLE supplier (
	s_suppkey int4 NOT NULL,
	s_name    text NOT NULL,		-- 'Supplier#000000001'
	s_address text NOT NULL,
	s_city    text NOT NULL,
	s_nation  text NOT NULL,
	s_region  text NOT NULL,
	s_phone   text NOT NULL
);

CREATE TABLE part (
	p_partkey   int4 NOT NULL,
	p_name      text NOT NULL,		-- two colour words
	p_mfgr      text NOT NULL,		-- 'MFGR#1' .. 'MFGR#5'
	p_category  text NOT NULL,		-- mfgr and 1..5: 'MFGR#12' (25 values)
	p_brand1    text NOT NULL,		-- category and 1..40: 'MFGR#1221' (1000 values)
	p_color     text NOT NULL,
	p_type      text NOT NULL,		-- TPC-H's 150 types: 'PROMO BRUSHED TIN'
	p_size      int4 NOT NULL,		-- 1 .. 50
	p_container text NOT NULL		-- TPC-H's 40 containers: 'SM CASE'
);

CREATE TABLE lineorder (
	lo_orderkey      int4 NOT NULL,
	lo_linenumber    int4 NOT NULL,	-- 1 .. 7
	lo_custkey       int4 NOT NULL,	-- customer; keys divisible by 3 never order (TPC-H)
	lo_partkey       int4 NOT NULL,	-- part, uniform
	lo_suppkey       int4 NOT NULL,	-- supplier, uniform
	lo_orderdate     int4 NOT NULL,	-- ssb_date, uniform over 1992-01-01 .. 1998-08-02
	lo_orderpriority text NOT NULL,	-- '1-URGENT' .. '5-LOW'
	lo_shippriority  text NOT NULL,	-- '0'
	lo_quantity      int4 NOT NULL,	-- 1 .. 50
	lo_extendedprice int4 NOT NULL,	-- quantity x the part's retail price, in cents
	lo_ordtotalprice int4 NOT NULL,	-- the order's lines, discounted and taxed
	lo_discount      int4 NOT NULL,	-- 0 .. 10 (percent)
	lo_revenue       int4 NOT NULL,	-- extendedprice x (100 - discount) / 100
	lo_supplycost    int4 NOT NULL,	-- 6/10 of the retail price
	lo_tax           int4 NOT NULL,	-- 0 .. 8 (percent)
	lo_commitdate    int4 NOT NULL,	-- ssb_date, 30 to 90 days after the order
	lo_shipmode      text NOT NULL	-- 'REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'
);

-- What was loaded: the scale factor, the row counts it implies, and (set by
-- the loader once the load is complete, test/workload.sh) a digest of this
-- file, generate.sql and keys.sql and the rows of every table, so a changed
-- generator or an interrupted load is noticed and the data generated again.
CREATE TABLE ssb_info (
	sf             numeric NOT NULL,
	orders         int4 NOT NULL,
	customers      int4 NOT NULL,
	suppliers      int4 NOT NULL,
	parts          int4 NOT NULL,
	generator      text,
	loaded_rows    int8
);

-- ssb_rand(key, stream, n): a uniform pseudo-random integer in 0 .. n-1 that
-- depends only on (key, stream), so any session can generate any row, the
-- data are the same on every run, and parallel loaders need no coordination.
-- A plain SQL expression, inlined by the planner.
CREATE FUNCTION ssb_rand(key int8, stream int8, n int4) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((hashint8extended(key, stream) & 2147483647) % n)::int4;
