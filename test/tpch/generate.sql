-- generate.sql: fills the tables of test/tpch/schema.sql in SQL, with no
-- external dbgen, for test/bench_workload.sh and test/workloads.sh.
--
-- Run with search_path set to the schema that holds the tables, in steps
-- (psql variables), as every workload's generator (test/workload.sh):
--
--   -v step=setup -v sf=SF        tpch_info: the row counts of scale factor
--                                 SF, which may be fractional
--   -v step=dimensions            region, nation, supplier, customer, part
--                                 and partsupp
--   -v step=facts -v first=A -v last=B
--                                 orders A..B (1-based) and their lines; the
--                                 loaders of disjoint ranges run in parallel
--
-- Every value is a function of its row's key (tpch_rand, a hash; the
-- functions are in schema.sql), so the data are the same whatever the
-- number of loaders and on every run.  The value distributions follow the
-- TPC-H specification (clause 4.2.3) and its dbgen: TPC-H's 25 nations in 5
-- regions; parts of 5 manufacturers with 5 brands each, 150 types, 40
-- containers, sizes 1..50, names of 5 colour words, retail prices from the
-- spec's formula; 4 suppliers per part; orders of 1 to 7 lines dated
-- uniformly from 1992-01-01 to 1998-08-02; the lines' dates, flags and
-- prices as tpch_lines derives them; the order's status and total price
-- from its lines.  Comments are pieces of a text pool made from TPC-H's
-- grammar words (tpch_text), so that Q13's '%special%requests%' and Q16's
-- '%Customer%Complaints%' select some rows; names, addresses and phones have
-- the spec's shapes.

SELECT :'step' = 'setup' AS is_setup, :'step' = 'dimensions' AS is_dimensions,
       :'step' = 'facts' AS is_facts \gset

\if :is_setup

INSERT INTO tpch_info (sf, orders, customers, suppliers, parts, clerks)
SELECT sf, greatest(1, round(1500000 * sf)), greatest(1, round(150000 * sf)),
       greatest(4, round(10000 * sf)), greatest(1, round(200000 * sf)),
       greatest(1, round(1000 * sf))
FROM (SELECT (:'sf')::numeric AS sf) s;

-- TPC-H's text pool (clause 4.2.2.10), here 1,000,000 characters: sentences
-- of its grammar (noun phrase, verb phrase, prepositional phrase "prep the
-- noun phrase", terminator) from its word lists, words drawn by tpch_rand;
-- the grammar's frequent words (packages, requests, accounts, deposits;
-- special, pending, unusual, express) listed more than once
UPDATE tpch_info SET pool = (
	WITH words AS (
		SELECT string_to_array('packages requests accounts deposits foxes ideas theodolites '
		           'pinto_beans instructions dependencies excuses platelets asymptotes courts '
		           'dolphins multipliers sauternes warthogs frets dinos attainments somas '
		           'Tiresias patterns forges braids hockey_players frays warhorses dugouts '
		           'notornis epitaphs pearls tithes waters orbits gifts sheaves depths '
		           'sentiments decoys realms pains grouches escapades packages requests '
		           'accounts deposits packages requests accounts deposits', ' ') AS noun,
		       string_to_array('sleep wake are cajole haggle nag use boost affix detect '
		           'integrate maintain nod was lose sublate solve thrash promise engage '
		           'hinder print x-ray breach eat grow impress mold poach serve run dazzle '
		           'snooze doze unwind kindle play hang believe doubt', ' ') AS verb,
		       string_to_array('special pending unusual express furious sly careful blithe '
		           'quick fluffy slow quiet ruthless thin close dogged daring brave stealthy '
		           'permanent enticing idle busy regular final ironic even bold silent special '
		           'pending unusual express', ' ') AS adjective,
		       string_to_array('sometimes always never furiously slyly carefully blithely '
		           'quickly fluffily slowly quietly ruthlessly thinly closely doggedly '
		           'daringly bravely stealthily permanently enticingly idly busily regularly '
		           'finally ironically evenly boldly silently', ' ') AS adverb,
		       string_to_array('about above according_to across after against along '
		           'alongside_of among around at atop before behind beneath beside besides '
		           'between beyond by despite during except for from in_place_of inside '
		           'instead_of into near of on outside over past since through throughout to '
		           'toward under until up upon without with within', ' ') AS preposition,
		       ARRAY['.', '.', '.', ';', ':', '?', '!', ' --'] AS terminator,
		       -- a sentence's parts: N noun phrase, V verb phrase, P prepositional phrase
		       ARRAY['NV', 'NVP', 'NVN', 'NPVN', 'NPVP'] AS shape
	), sentence AS (
		SELECT s, string_agg(CASE part WHEN 'N' THEN np WHEN 'V' THEN vp
		                               ELSE prep || ' the ' || np END, ' ' ORDER BY p)
		              || min(term) AS text
		FROM words w, generate_series(1, 30000) AS s,
		     LATERAL (SELECT w.shape[1 + tpch_rand(s, 1, cardinality(w.shape))] AS shape,
		                     w.terminator[1 + tpch_rand(s, 2, cardinality(w.terminator))] AS term) t,
		     LATERAL unnest(string_to_array(t.shape, NULL)) WITH ORDINALITY AS x(part, p),
		     LATERAL (SELECT s::int8 * 8 + p AS k) k,
		     -- noun phrase: [adjective [adjective]] noun; verb phrase: [adverb] verb [adverb]
		     LATERAL (SELECT CASE WHEN tpch_rand(k, 3, 3) > 0
		                          THEN w.adjective[1 + tpch_rand(k, 4, cardinality(w.adjective))] || ' '
		                          ELSE '' END
		                     || CASE WHEN tpch_rand(k, 5, 4) = 0
		                             THEN w.adjective[1 + tpch_rand(k, 6, cardinality(w.adjective))] || ' '
		                             ELSE '' END
		                     || replace(w.noun[1 + tpch_rand(k, 7, cardinality(w.noun))], '_', ' ') AS np,
		                     CASE WHEN tpch_rand(k, 8, 3) = 0
		                          THEN w.adverb[1 + tpch_rand(k, 9, cardinality(w.adverb))] || ' '
		                          ELSE '' END
		                     || w.verb[1 + tpch_rand(k, 10, cardinality(w.verb))]
		                     || CASE WHEN tpch_rand(k, 11, 2) = 0
		                             THEN ' ' || w.adverb[1 + tpch_rand(k, 12, cardinality(w.adverb))]
		                             ELSE '' END AS vp,
		                     replace(w.preposition[1 + tpch_rand(k, 13, cardinality(w.preposition))],
		                             '_', ' ') AS prep) phrase
		GROUP BY s
	)
	SELECT substring(convert_to(string_agg(text, ' ' ORDER BY s), 'UTF8') FOR 1000000)
	FROM sentence);

\elif :is_dimensions

\ir words.sql

INSERT INTO region
SELECT k, w.region[k + 1], tpch_text(k, 1, 31, 115)
FROM tpch_words w, generate_series(0, 4) AS k;

INSERT INTO nation
SELECT k, w.nation[k + 1], w.regionkey[k + 1], tpch_text(k, 3, 31, 114)
FROM tpch_words w, generate_series(0, 24) AS k;

-- an address: 10 to 40 characters; a phone: the nation's country code and
-- digits; 5 in 10,000 comments hold 'Customer ... Complaints' and 5
-- 'Customer ... Recommends' (Q16)
INSERT INTO supplier
SELECT k, 'Supplier#' || lpad(k::text, 9, '0'),
       left(md5(k || 'sa') || md5(k || 'sb'), 10 + tpch_rand(k, 101, 31)), n,
       tpch_phone(k, 103, n),
       (tpch_rand(k, 106, 1099999) - 99999) * 0.01,
       CASE WHEN special >= 2 THEN c
            ELSE left(c, p) || 'Customer ' || substr(c, p + 1, 10)
                 || (ARRAY['Complaints', 'Recommends'])[special + 1] END
FROM generate_series(1, (SELECT suppliers FROM tpch_info)) AS k,
     LATERAL (SELECT tpch_rand(k, 100, 25) AS n, tpch_text(k, 107, 25, 100) AS c,
                     tpch_rand(k, 109, 2000) AS special, tpch_rand(k, 110, 61) AS p) x;

INSERT INTO customer
SELECT k, 'Customer#' || lpad(k::text, 9, '0'),
       left(md5(k || 'ca') || md5(k || 'cb'), 10 + tpch_rand(k, 201, 31)), n,
       tpch_phone(k, 203, n),
       (tpch_rand(k, 206, 1099999) - 99999) * 0.01,
       w.segment[1 + tpch_rand(k, 207, 5)],
       tpch_text(k, 208, 29, 116)
FROM tpch_words w, generate_series(1, (SELECT customers FROM tpch_info)) AS k,
     LATERAL (SELECT tpch_rand(k, 200, 25) AS n) x;

INSERT INTO part
SELECT k, concat_ws(' ', w.color[1 + tpch_rand(k, 301, 92)], w.color[1 + tpch_rand(k, 302, 92)],
                    w.color[1 + tpch_rand(k, 303, 92)], w.color[1 + tpch_rand(k, 304, 92)],
                    w.color[1 + tpch_rand(k, 305, 92)]),
       'Manufacturer#' || m, 'Brand#' || m || 1 + tpch_rand(k, 307, 5),
       concat_ws(' ', w.type1[1 + tpch_rand(k, 308, 6)], w.type2[1 + tpch_rand(k, 309, 5)],
                 w.type3[1 + tpch_rand(k, 310, 5)]),
       1 + tpch_rand(k, 311, 50),
       w.container1[1 + tpch_rand(k, 312, 5)] || ' ' || w.container2[1 + tpch_rand(k, 313, 8)],
       (90000 + k / 10 % 20001 + 100 * (k % 1000)) * 0.01,
       tpch_text(k, 314, 5, 22)
FROM tpch_words w, generate_series(1, (SELECT parts FROM tpch_info)) AS k,
     LATERAL (SELECT 1 + tpch_rand(k, 306, 5) AS m) x;

INSERT INTO partsupp
SELECT k, tpch_suppkey(k, i, s.suppliers), 1 + tpch_rand(k * 4 + i, 401, 9999),
       (100 + tpch_rand(k * 4 + i, 402, 99901)) * 0.01, tpch_text(k * 4 + i, 403, 49, 198)
FROM tpch_info s, generate_series(1, s.parts) AS k, generate_series(0, 3) AS i;

\elif :is_facts

-- Orders first..last and their lines, each a function of the order's
-- number (tpch_order, tpch_lines); an order's status and total price are
-- those of its lines, generated again for them.
INSERT INTO orders
SELECT oa.orderkey, oa.custkey, t.status, t.totalprice, oa.orderdate, oa.priority, oa.clerk, 0,
       tpch_text(o, 6, 19, 78)
FROM tpch_info i, generate_series(:first::int4, :last::int4) AS o,
     LATERAL tpch_order(o, i.customers, i.clerks) oa,
     LATERAL (SELECT CASE WHEN bool_and(l.linestatus = 'F') THEN 'F'
                          WHEN bool_and(l.linestatus = 'O') THEN 'O' ELSE 'P' END AS status,
                     sum(round(l.extendedprice * (1 - l.discount) * (1 + l.tax), 2)) AS totalprice
              FROM tpch_lines(o, oa.lines, oa.orderdate, i.parts, i.suppliers) l) t;

INSERT INTO lineitem
SELECT oa.orderkey, l.partkey, l.suppkey, l.line, l.quantity, l.extendedprice, l.discount,
       l.tax, l.returnflag, l.linestatus, l.shipdate, l.commitdate, l.receiptdate,
       l.shipinstruct, l.shipmode, l.comment
FROM tpch_info i, generate_series(:first::int4, :last::int4) AS o,
     LATERAL tpch_order(o, i.customers, i.clerks) oa,
     LATERAL tpch_lines(o, oa.lines, oa.orderdate, i.parts, i.suppliers) l;

\else
DO $$ BEGIN RAISE EXCEPTION 'generate.sql: step must be setup, dimensions or facts'; END $$;
\endif
