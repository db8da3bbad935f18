-- generate.sql: fills the Star Schema Benchmark tables of test/ssb/schema.sql
-- in SQL, with no external dbgen, for test/bench_workload.sh and
-- test/workloads.sh.
--
-- Run with search_path set to the schema that holds the tables, in steps
-- (psql variables), as every workload's generator (test/workload.sh):
--
--   -v step=setup -v sf=SF        ssb_info (the row counts of scale factor
--                                 SF, which may be fractional) and ssb_date
--   -v step=dimensions            customer, supplier and part
--   -v step=facts -v first=A -v last=B
--                                 the lines of orders A..B (1-based); the
--                                 loaders of disjoint ranges run in parallel
--
-- Every value is a function of its row's key (ssb_rand, a hash), so the data
-- are the same whatever the number of loaders and on every run.  The value
-- distributions follow the SSB specification and its dbgen: 25 nations in 5
-- regions, cities of 10 per nation named by the nation's first 9 letters and
-- a digit; parts of 5 manufacturers x 5 categories x 40 brands; orders of 1
-- to 7 lines dated uniformly from 1992-01-01 to 1998-08-02, customers whose
-- key is divisible by 3 placing none; quantity 1..50, discount 0..10, tax
-- 0..8; prices from TPC-H's retail price formula, in cents.  Free-text
-- columns (names, addresses, phones) have the spec's shapes, not its text.

SELECT :'step' = 'setup' AS is_setup, :'step' = 'dimensions' AS is_dimensions,
       :'step' = 'facts' AS is_facts \gset

\if :is_setup

INSERT INTO ssb_info (sf, orders, customers, suppliers, parts)
SELECT sf, greatest(1, round(1500000 * sf)), greatest(1, round(30000 * sf)),
       greatest(1, round(2000 * sf)),
       CASE WHEN sf >= 1 THEN 200000 * floor(1 + log(2, sf) + 1e-9)
            ELSE greatest(1, round(200000 * sf)) END
FROM (SELECT (:'sf')::numeric AS sf) s;

INSERT INTO ssb_date
SELECT to_char(d, 'YYYYMMDD')::int4,
       to_char(d, 'FMMonth FMDD, YYYY'),
       to_char(d, 'FMDay'),
       to_char(d, 'FMMonth'),
       extract(year FROM d)::int4,
       to_char(d, 'YYYYMM')::int4,
       to_char(d, 'Mon') || extract(year FROM d),
       extract(dow FROM d)::int4 + 1,
       extract(day FROM d)::int4,
       extract(doy FROM d)::int4,
       extract(month FROM d)::int4,
       extract(doy FROM d)::int4 / 7 + 1,
       CASE WHEN m IN (11, 12) THEN 'Christmas' WHEN m BETWEEN 5 AND 8 THEN 'Summer'
            WHEN m BETWEEN 1 AND 3 THEN 'Winter' WHEN m = 4 THEN 'Spring' ELSE 'Fall' END,
       (extract(dow FROM d) = 6)::int4,
       (extract(day FROM d + 1) = 1)::int4,
       ((m, extract(day FROM d)) IN ((12, 24), (1, 1), (2, 20), (4, 20), (5, 20), (7, 20),
                                     (8, 20), (9, 20), (10, 20), (11, 20)))::int4,
       (extract(dow FROM d) BETWEEN 1 AND 5)::int4
FROM generate_series(date '1992-01-01', date '1998-12-31', interval '1 day') AS g(t),
     LATERAL (SELECT t::date AS d, extract(month FROM t)::int4 AS m) x
ORDER BY d;

\elif :is_dimensions

-- TPC-H's nations, regions, segments, colours, types and containers
\ir ../tpch/words.sql

-- an address: 10 to 40 characters; a phone: the nation's country code and digits
INSERT INTO customer
SELECT k, 'Customer#' || lpad(k::text, 9, '0'),
       left(md5(k || 'ca') || md5(k || 'cb'), 10 + ssb_rand(k, 101, 31)),
       rpad(left(w.nation[n + 1], 9), 9) || ssb_rand(k, 102, 10),
       w.nation[n + 1], w.region[w.regionkey[n + 1] + 1],
       (10 + n) || '-' || 100 + ssb_rand(k, 103, 900) || '-' || 100 + ssb_rand(k, 104, 900)
           || '-' || 1000 + ssb_rand(k, 105, 9000),
       w.segment[1 + ssb_rand(k, 106, 5)]
FROM tpch_words w, generate_series(1, (SELECT customers FROM ssb_info)) AS k,
     LATERAL (SELECT ssb_rand(k, 100, 25) AS n) x;

INSERT INTO supplier
SELECT k, 'Supplier#' || lpad(k::text, 9, '0'),
       left(md5(k || 'sa') || md5(k || 'sb'), 10 + ssb_rand(k, 201, 31)),
       rpad(left(w.nation[n + 1], 9), 9) || ssb_rand(k, 202, 10),
       w.nation[n + 1], w.region[w.regionkey[n + 1] + 1],
       (10 + n) || '-' || 100 + ssb_rand(k, 203, 900) || '-' || 100 + ssb_rand(k, 204, 900)
           || '-' || 1000 + ssb_rand(k, 205, 9000)
FROM tpch_words w, generate_series(1, (SELECT suppliers FROM ssb_info)) AS k,
     LATERAL (SELECT ssb_rand(k, 200, 25) AS n) x;

INSERT INTO part
SELECT k, w.color[c1 + 1] || ' ' || w.color[1 + ssb_rand(k, 302, 92)],
       'MFGR#' || mfgr, 'MFGR#' || mfgr || cat, 'MFGR#' || mfgr || cat || 1 + ssb_rand(k, 305, 40),
       w.color[c1 + 1],
       w.type1[1 + ssb_rand(k, 306, 6)] || ' ' || w.type2[1 + ssb_rand(k, 307, 5)] || ' '
           || w.type3[1 + ssb_rand(k, 308, 5)],
       1 + ssb_rand(k, 309, 50),
       w.container1[1 + ssb_rand(k, 310, 5)] || ' ' || w.container2[1 + ssb_rand(k, 311, 8)]
FROM tpch_words w, generate_series(1, (SELECT parts FROM ssb_info)) AS k,
     LATERAL (SELECT ssb_rand(k, 301, 92) AS c1, 1 + ssb_rand(k, 303, 5) AS mfgr,
                     1 + ssb_rand(k, 304, 5) AS cat) x;

\elif :is_facts

-- Per order (key o): customer, date, priority, number of lines; per line
-- (key o * 8 + line): part, supplier, quantity, discount, tax, commit date,
-- ship mode.  Dates are indexes into the sorted date keys: orders on days
-- 0 .. 2405 (1992-01-01 .. 1998-08-02), commits 30 to 90 days later.
INSERT INTO lineorder
SELECT o, l.line, oa.custkey, l.partkey, l.suppkey, i.datekeys[oa.day + 1],
       (ARRAY['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'])[oa.priority + 1],
       '0', l.quantity, l.extendedprice, l.total::int4, l.discount, l.revenue,
       l.supplycost, l.tax, i.datekeys[oa.day + l.commit + 1], l.shipmode
FROM (SELECT array_agg(d_datekey ORDER BY d_datekey) AS datekeys, min(customers) AS customers,
             min(suppliers) AS suppliers, min(parts) AS parts
      FROM ssb_date, ssb_info) i,
     generate_series(:first::int4, :last::int4) AS o,
     LATERAL (SELECT c + CASE WHEN c % 3 <> 0 THEN 0 WHEN c < i.customers THEN 1 ELSE -1 END
                         AS custkey,
                     ssb_rand(o, 2, 2406) AS day, ssb_rand(o, 3, 5) AS priority,
                     1 + ssb_rand(o, 4, 7) AS lines
              FROM (SELECT 1 + ssb_rand(o, 1, i.customers) AS c) r) oa,
     LATERAL (SELECT *, sum(charge) OVER () AS total
              FROM (SELECT line, partkey, 1 + ssb_rand(k, 12, i.suppliers) AS suppkey,
                           quantity, quantity * price AS extendedprice, discount,
                           quantity * price * (100 - discount) / 100 AS revenue,
                           6 * price / 10 AS supplycost, tax,
                           30 + ssb_rand(k, 16, 61) AS commit,
                           (ARRAY['REG AIR', 'AIR', 'RAIL', 'SHIP', 'TRUCK', 'MAIL', 'FOB'])
                               [1 + ssb_rand(k, 17, 7)] AS shipmode,
                           (quantity * price * (100 - discount) / 100)::int8
                               * (100 + tax) / 100 AS charge
                    FROM generate_series(1, oa.lines) AS line,
                         LATERAL (SELECT o::int8 * 8 + line AS k) k,
                         LATERAL (SELECT 1 + ssb_rand(k, 11, i.parts) AS partkey,
                                         1 + ssb_rand(k, 13, 50) AS quantity,
                                         ssb_rand(k, 14, 11) AS discount,
                                         ssb_rand(k, 15, 9) AS tax) r,
                         LATERAL (SELECT 90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000)
                                         AS price) p) x) l;

\else
DO $$ BEGIN RAISE EXCEPTION 'generate.sql: step must be setup, dimensions or facts'; END $$;
\endif
