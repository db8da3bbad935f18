-- schema.sql: the tables of a TPC-H-shaped workload, for test/bench_workload.sh
-- and test/workloads.sh.
--
-- The eight tables of the TPC-H specification (TPC Benchmark H, revision
-- 3.0, clause 1.4) with its column types: identifiers int4, prices,
-- quantities, discounts, taxes and balances numeric(15,2), flags char(1),
-- fixed text char(n), variable text varchar(n), dates date.  Sizes at scale
-- factor SF (clause 4.2.5):
--
--   region     5
--   nation     25
--   supplier   10,000 x SF (at least 4: a part has 4 distinct suppliers)
--   customer   150,000 x SF
--   part       200,000 x SF
--   partsupp   4 per part: 800,000 x SF
--   orders     1,500,000 x SF
--   lineitem   1 to 7 per order: about 6,000,000 x SF
--
-- The data are generated, not the output of TPC's dbgen, and the results
-- are not TPC-H results: a workload of TPC-H's shape.  The tables are
-- ordinary (logged) tables, as a user's are (the GPU service's page cache
-- keeps only logged tables' pages); the primary keys are added after the
-- load (keys.sql).  Run with search_path set to the target
-- schema; test/tpch/generate.sql fills the tables.

CREATE TABLE region (
	r_regionkey int4 NOT NULL,			-- 0 .. 4
	r_name      char(25) NOT NULL,		-- 'AFRICA', 'AMERICA', 'ASIA', 'EUROPE', 'MIDDLE EAST'
	r_comment   varchar(152) NOT NULL
);

CREATE TABLE nation (
	n_nationkey int4 NOT NULL,			-- 0 .. 24
	n_name      char(25) NOT NULL,		-- 'ALGERIA' .. 'UNITED STATES'
	n_regionkey int4 NOT NULL,
	n_comment   varchar(152) NOT NULL
);

CREATE TABLE supplier (
	s_suppkey   int4 NOT NULL,
	s_name      char(25) NOT NULL,		-- 'Supplier#000000001'
	s_address   varchar(40) NOT NULL,
	s_nationkey int4 NOT NULL,
	s_phone     char(15) NOT NULL,		-- '17-123-456-7890': country code nationkey + 10
	s_acctbal   numeric(15,2) NOT NULL,	-- -999.99 .. 9999.99
	s_comment   varchar(101) NOT NULL	-- 5 x SF with 'Customer ... Complaints', 5 x SF 'Recommends'
);

CREATE TABLE customer (
	c_custkey    int4 NOT NULL,
	c_name       varchar(25) NOT NULL,	-- 'Customer#000000001'
	c_address    varchar(40) NOT NULL,
	c_nationkey  int4 NOT NULL,
	c_phone      char(15) NOT NULL,
	c_acctbal    numeric(15,2) NOT NULL,	-- -999.99 .. 9999.99
	c_mktsegment char(10) NOT NULL,		-- 'AUTOMOBILE', 'BUILDING', 'FURNITURE', 'MACHINERY', 'HOUSEHOLD'
	c_comment    varchar(117) NOT NULL
);

CREATE TABLE part (
	p_partkey     int4 NOT NULL,
	p_name        varchar(55) NOT NULL,	-- five of 92 colour words: 'forest green navy ...'
	p_mfgr        char(25) NOT NULL,		-- 'Manufacturer#1' .. 'Manufacturer#5'
	p_brand       char(10) NOT NULL,		-- 'Brand#11' .. 'Brand#55', the first digit the mfgr's
	p_type        varchar(25) NOT NULL,	-- 150 types: 'ECONOMY ANODIZED STEEL'
	p_size        int4 NOT NULL,			-- 1 .. 50
	p_container   char(10) NOT NULL,		-- 40 containers: 'MED BOX'
	p_retailprice numeric(15,2) NOT NULL,	-- (90000 + (key / 10) % 20001 + 100 * (key % 1000)) / 100
	p_comment     varchar(23) NOT NULL
);

CREATE TABLE partsupp (
	ps_partkey    int4 NOT NULL,
	ps_suppkey    int4 NOT NULL,			-- 4 distinct suppliers per part (tpch_suppkey)
	ps_availqty   int4 NOT NULL,			-- 1 .. 9999
	ps_supplycost numeric(15,2) NOT NULL,	-- 1.00 .. 1000.00
	ps_comment    varchar(199) NOT NULL
);

CREATE TABLE orders (
	o_orderkey      int4 NOT NULL,		-- sparse: the first 8 of every 32 keys
	o_custkey       int4 NOT NULL,		-- customers whose key is divisible by 3 place none
	o_orderstatus   char(1) NOT NULL,	-- 'F' all lines shipped by 1995-06-17, 'O' none, else 'P'
	o_totalprice    numeric(15,2) NOT NULL,	-- the lines' prices, discounted and taxed
	o_orderdate     date NOT NULL,		-- 1992-01-01 .. 1998-08-02, uniform
	o_orderpriority char(15) NOT NULL,	-- '1-URGENT' .. '5-LOW'
	o_clerk         char(15) NOT NULL,	-- 'Clerk#000000001', 1,000 x SF clerks
	o_shippriority  int4 NOT NULL,		-- 0
	o_comment       varchar(79) NOT NULL
);

CREATE TABLE lineitem (
	l_orderkey      int4 NOT NULL,
	l_partkey       int4 NOT NULL,
	l_suppkey       int4 NOT NULL,		-- one of the part's 4 suppliers
	l_linenumber    int4 NOT NULL,		-- 1 .. 7
	l_quantity      numeric(15,2) NOT NULL,	-- 1 .. 50
	l_extendedprice numeric(15,2) NOT NULL,	-- quantity x the part's retail price
	l_discount      numeric(15,2) NOT NULL,	-- 0.00 .. 0.10
	l_tax           numeric(15,2) NOT NULL,	-- 0.00 .. 0.08
	l_returnflag    char(1) NOT NULL,	-- 'R' or 'A' if received by 1995-06-17, else 'N'
	l_linestatus    char(1) NOT NULL,	-- 'O' if shipped after 1995-06-17, else 'F'
	l_shipdate      date NOT NULL,		-- the order's date + 1 .. 121 days
	l_commitdate    date NOT NULL,		-- the order's date + 30 .. 90 days
	l_receiptdate   date NOT NULL,		-- the ship date + 1 .. 30 days
	l_shipinstruct  char(25) NOT NULL,	-- 'DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'
	l_shipmode      char(10) NOT NULL,	-- 'REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'
	l_comment       varchar(44) NOT NULL
);

-- What was loaded: the scale factor, the row counts it implies, and (set by
-- the loader once the load is complete, test/workload.sh) a digest of this
-- file, generate.sql and keys.sql and the rows of every table, so a changed
-- generator or an interrupted load is noticed and the data generated again.
CREATE TABLE tpch_info (
	sf          numeric NOT NULL,
	orders      int4 NOT NULL,
	customers   int4 NOT NULL,
	suppliers   int4 NOT NULL,
	parts       int4 NOT NULL,
	clerks      int4 NOT NULL,
	pool        bytea,		-- the text of comments (tpch_text)
	generator   text,
	loaded_rows int8
);

-- tpch_rand(key, stream, n): a uniform pseudo-random integer in 0 .. n-1
-- that depends only on (key, stream), so any session can generate any row,
-- the data are the same on every run, and parallel loaders need no
-- coordination.  A plain SQL expression, inlined by the planner.
CREATE FUNCTION tpch_rand(key int8, stream int8, n int4) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((hashint8extended(key, stream) & 2147483647) % n)::int4;

-- tpch_suppkey(partkey, i, suppliers): the i-th (0 .. 3) supplier of a part:
-- four distinct suppliers a quarter of the suppliers apart (TPC-H's
-- clause 4.2.3 spaces them so too; its formula can repeat a supplier when
-- there are few suppliers, as at small scale factors).
CREATE FUNCTION tpch_suppkey(partkey int4, i int4, suppliers int4) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((partkey - 1 + (partkey - 1) / suppliers + i * (suppliers / 4)) % suppliers + 1)::int4;

-- tpch_phone(key, stream, nation): a phone number, the nation's country
-- code (its key + 10) and three groups of digits.
CREATE FUNCTION tpch_phone(key int8, stream int8, nation int4) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (10 + nation) || '-' || 100 + tpch_rand(key, stream, 900)
       || '-' || 100 + tpch_rand(key, stream + 1, 900)
       || '-' || 1000 + tpch_rand(key, stream + 2, 9000);

-- tpch_pool(): the text pool that comments are taken from (tpch_info.pool,
-- written by generate.sql's setup step before any other step runs).
-- Declared immutable so that the planner reads it once per statement, as a
-- constant, rather than once per row.
CREATE FUNCTION tpch_pool() RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (SELECT pool FROM tpch_info);

-- tpch_text(key, stream, min, max): a comment of min to max characters, a
-- piece of the text pool at a random offset (as TPC-H's dbgen takes them;
-- the pool is ASCII, so its bytes are its characters).
CREATE FUNCTION tpch_text(key int8, stream int8, min int4, max int4) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN encode(substring(tpch_pool()
                        FROM 1 + tpch_rand(key, stream, length(tpch_pool()) - max)
                        FOR min + tpch_rand(key, stream + 1, max - min + 1)), 'escape');

-- tpch_order(o, customers, clerks): the o-th order (1-based): its sparse key
-- (dbgen's: the first 8 of every 32 keys), a customer whose key is not
-- divisible by 3, a date from 1992-01-01 to 1998-08-02, a priority, a
-- clerk, and 1 to 7 lines.  One row, a function of o alone.
CREATE FUNCTION tpch_order(o int4, customers int4, clerks int4)
RETURNS TABLE (orderkey int4, custkey int4, orderdate date, priority text, clerk text, lines int4)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
	SELECT (o >> 3 << 5) | (o & 7),
	       c + CASE WHEN c % 3 <> 0 THEN 0 WHEN c < customers THEN 1 ELSE -1 END,
	       date '1992-01-01' + tpch_rand(o, 2, 2406),
	       (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])
	           [1 + tpch_rand(o, 3, 5)],
	       'Clerk#' || lpad((1 + tpch_rand(o, 5, clerks))::text, 9, '0'),
	       1 + tpch_rand(o, 4, 7)
	FROM (SELECT 1 + tpch_rand(o, 1, customers) AS c) r
$$;

-- tpch_lines(o, lines, orderdate, parts, suppliers): the lines of the o-th
-- order (key o * 8 + line): a part and one of its 4 suppliers, quantity 1..50, the
-- part's retail price times the quantity, discount 0.00..0.10, tax
-- 0.00..0.08, ship date 1 to 121 days after the order, commit date 30 to
-- 90, receipt 1 to 30 days after shipping, and the flags TPC-H derives from
-- them and its current date, 1995-06-17 (clause 4.2.3).  A function of o
-- and the order's date alone.
CREATE FUNCTION tpch_lines(o int4, lines int4, orderdate date, parts int4, suppliers int4)
RETURNS TABLE (line int4, partkey int4, suppkey int4, quantity numeric, extendedprice numeric,
               discount numeric, tax numeric, returnflag text, linestatus text, shipdate date,
               commitdate date, receiptdate date, shipinstruct text, shipmode text, comment text)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
	SELECT line, partkey, tpch_suppkey(partkey, tpch_rand(k, 12, 4), suppliers),
	       quantity::numeric, quantity * (90000 + partkey / 10 % 20001 + 100 * (partkey % 1000)) * 0.01,
	       tpch_rand(k, 14, 11) * 0.01, tpch_rand(k, 15, 9) * 0.01,
	       CASE WHEN shipdate + 1 + tpch_rand(k, 18, 30) > date '1995-06-17' THEN 'N'
	            WHEN tpch_rand(k, 19, 2) = 0 THEN 'R' ELSE 'A' END,
	       CASE WHEN shipdate > date '1995-06-17' THEN 'O' ELSE 'F' END,
	       shipdate, orderdate + 30 + tpch_rand(k, 17, 61), shipdate + 1 + tpch_rand(k, 18, 30),
	       (ARRAY['DELIVER IN PERSON', 'COLLECT COD', 'NONE', 'TAKE BACK RETURN'])
	           [1 + tpch_rand(k, 20, 4)],
	       (ARRAY['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'])[1 + tpch_rand(k, 21, 7)],
	       tpch_text(k, 22, 10, 43)
	FROM generate_series(1, lines) AS line,
	     LATERAL (SELECT o::int8 * 8 + line AS k) k,
	     LATERAL (SELECT 1 + tpch_rand(k, 11, parts) AS partkey, 1 + tpch_rand(k, 13, 50) AS quantity,
	                     orderdate + 1 + tpch_rand(k, 16, 121) AS shipdate) r
$$;
