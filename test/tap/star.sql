-- Differential tests of GpuStarAgg (star.h): aggregations over a fact table
-- joined to dimensions on keys they are unique on run as one pipeline on
-- the device.  Every query runs with gpuhash off and forced on and must
-- return the same rows, and the "on" plan must use GpuStarAgg (or, where the
-- query is not a star, must not).  The data has duplicates, skew, NULLs in
-- keys, quals, grouping columns and aggregated values, empty dimensions,
-- varying-width columns before the ones read, numerics of several scales;
-- the queries run serially and in parallel, through the GPU service and the
-- backend's own engine, from pages shipped by buffer number and from rows
-- read on the CPU (pages not all-visible, quals the device cannot evaluate,
-- temporary tables).  The ordinary tables are frozen before the test's
-- transaction, so their pages are all-visible, but one, whose tuples the
-- device judges by their hint bits.
SET client_min_messages = warning;
DROP TABLE IF EXISTS sf_big, sf_fact, sf_day, sf_item, sf_store, sf_empty, sf_multi, sf_pair, sf_pair8,
                     sf_store_nk, sf_big_nk, sf_day_na, sf_zone, sf_part, sf_inh, sf_inh_1, sf_inh_2,
                     sf_lay, sf_fresh, sf_kv, sf_tv, sf_link;
SELECT setseed(0.577);
CREATE TABLE sf_day (day int PRIMARY KEY, yr int, mon text, season char(6), holiday bool);
INSERT INTO sf_day SELECT g, 2000 + g / 366, to_char(g % 12 + 1, 'FM00'),
                          (ARRAY['winter', 'spring', 'summer', 'fall'])[g % 4 + 1],
                          CASE WHEN g % 50 = 0 THEN NULL ELSE g % 7 = 0 END
  FROM generate_series(0, 3000) g;
CREATE TABLE sf_item (item bigint PRIMARY KEY, brand text, cat text, size int,
                      price numeric(9,2), weight float8);
INSERT INTO sf_item SELECT g, 'brand' || (g % 40), CASE WHEN g % 13 = 0 THEN NULL ELSE 'cat' || (g % 6) END,
                           g % 50, (random() * 1000)::numeric(9,2),
                           CASE WHEN g % 17 = 0 THEN NULL ELSE g % 100 / 8.0 END
  FROM generate_series(1, 5000) g;
CREATE TABLE sf_store (store int PRIMARY KEY, region text NOT NULL, manager text, zone int);
INSERT INTO sf_store SELECT g, (ARRAY['N', 'S', 'E', 'W', 'C'])[g % 5 + 1],
                            CASE WHEN g % 9 = 0 THEN NULL ELSE 'm' || (g % 11) END,
                            CASE WHEN g % 13 = 0 THEN NULL ELSE g * 7 % 50 END
  FROM generate_series(1, 120) g;
-- a store's zone, as a customer's nation: a snowflake's second table
CREATE TABLE sf_zone (zone int PRIMARY KEY, zname text);
INSERT INTO sf_zone SELECT g, 'z' || (g % 7) FROM generate_series(0, 49) g;
-- without a key, unique by their statistics only, or without statistics (not
-- analyzed): the star checks what it reads
CREATE TABLE sf_store_nk AS SELECT * FROM sf_store;
CREATE TABLE sf_day_na AS SELECT * FROM sf_day;
CREATE TABLE sf_empty (k int PRIMARY KEY, v int);
-- large enough that every process of a parallel plan reads a share of it; unique
-- on k with NULL keys (a unique index), NULL grouping values and payloads
CREATE TABLE sf_big (k int, grp text, price numeric(8,2), w int);
INSERT INTO sf_big SELECT CASE WHEN g % 997 = 0 THEN NULL ELSE g END,
                          CASE WHEN g % 29 = 0 THEN NULL ELSE 'grp' || (g * 7919 % 31) END,
                          CASE WHEN g % 13 = 0 THEN NULL ELSE (g % 9973) / 7.0 END, g % 50
  FROM generate_series(1, 150000) g;
CREATE TABLE sf_big_nk AS SELECT * FROM sf_big;
CREATE UNIQUE INDEX ON sf_big (k);
-- unique on two columns: a dimension joined on both (made one 64-bit key)
CREATE TABLE sf_pair (store smallint, day int, bonus int, tag text, PRIMARY KEY (store, day));
INSERT INTO sf_pair SELECT s, d, CASE WHEN d % 11 = 0 THEN NULL ELSE s * d % 97 - 40 END,
                           'tag' || ((s + d) % 5)
  FROM generate_series(-2, 130) s, generate_series(-1, 3100, 3) d;
INSERT INTO sf_pair VALUES (32767, 2147483647, 1, 'edge'), (-32768, -2147483648, 2, 'edge');
-- the same of an int8 column: not a dimension of this pipeline
CREATE TABLE sf_pair8 (item bigint, store int, bonus int, PRIMARY KEY (item, store));
INSERT INTO sf_pair8 SELECT i, s, i + s FROM generate_series(1, 300) i, generate_series(0, 20) s;
-- a fact row's link to a pair of sf_pair: a snowflake joined on two columns
CREATE TABLE sf_link (id int PRIMARY KEY, s smallint, d int);
INSERT INTO sf_link SELECT g, (g % 140 - 5)::smallint, CASE WHEN g % 19 = 0 THEN NULL ELSE g * 3 % 3200 - 1 END
  FROM generate_series(1, 90000) g;
-- not unique on its key: not a dimension
CREATE TABLE sf_multi (k int, v int);
INSERT INTO sf_multi SELECT g % 40, g FROM generate_series(1, 200) g;
-- 120000 rows: keys with NULLs, missing in their dimension, skewed
CREATE TABLE sf_fact (id int, note text, day int, item bigint, store int, qty int,
                      amount numeric(12,2), disc numeric(4,2), delta smallint, ratio float8,
                      flag char(1), shipped date, mode char(10), tag varchar(12));
INSERT INTO sf_fact
  SELECT g, repeat('n', (g % 60)),
         CASE WHEN g % 101 = 0 THEN NULL WHEN g % 3 = 0 THEN 77
              ELSE (random() * 3100)::int END,
         CASE WHEN g % 89 = 0 THEN NULL ELSE (power(random(), 3) * 5200)::bigint END,
         CASE WHEN g % 7 = 0 THEN 5 ELSE (random() * 125)::int END,
         CASE WHEN g % 23 = 0 THEN NULL ELSE (random() * 100)::int END,
         CASE WHEN g % 31 = 0 THEN NULL ELSE (random() * 100000)::numeric(12,2) END,
         (g % 21) / 100.0,
         CASE WHEN g % 37 = 0 THEN NULL ELSE (g % 1000 - 500) END,
         CASE WHEN g % 43 = 0 THEN NULL ELSE (g % 800) / 16.0 END,
         (ARRAY['A', 'B', 'C', NULL])[g % 4 + 1],
         date '2000-01-01' + g % 3000,
         (ARRAY['MAIL', 'SHIP', 'REG AIR', 'TRUCK', 'FOB', 'ÄIR λ', NULL, ''])[g % 8 + 1],
         CASE g % 5 WHEN 0 THEN NULL ELSE 'tag ' || (g % 13) || repeat(' ', g % 3) END
  FROM generate_series(1, 120000) g;
-- the fact rows again: range-partitioned by day (one partition hash-partitioned
-- by store, NULL days in the default one); as an inheritance tree; and with a
-- partition laid out otherwise (attached after a column of the table was dropped)
CREATE TABLE sf_part (LIKE sf_fact) PARTITION BY RANGE (day);
CREATE TABLE sf_part_a PARTITION OF sf_part FOR VALUES FROM (MINVALUE) TO (1000);
CREATE TABLE sf_part_b PARTITION OF sf_part FOR VALUES FROM (1000) TO (2000) PARTITION BY HASH (store);
CREATE TABLE sf_part_b0 PARTITION OF sf_part_b FOR VALUES WITH (MODULUS 2, REMAINDER 0);
CREATE TABLE sf_part_b1 PARTITION OF sf_part_b FOR VALUES WITH (MODULUS 2, REMAINDER 1);
CREATE TABLE sf_part_c PARTITION OF sf_part FOR VALUES FROM (2000) TO (2500);
CREATE TABLE sf_part_d PARTITION OF sf_part DEFAULT;
INSERT INTO sf_part SELECT * FROM sf_fact;
CREATE TABLE sf_inh (LIKE sf_fact);
CREATE TABLE sf_inh_1 () INHERITS (sf_inh);
CREATE TABLE sf_inh_2 () INHERITS (sf_inh);
INSERT INTO sf_inh SELECT * FROM sf_fact WHERE id % 3 = 0;
INSERT INTO sf_inh_1 SELECT * FROM sf_fact WHERE id % 3 = 1;
INSERT INTO sf_inh_2 SELECT * FROM sf_fact WHERE id % 3 = 2;
CREATE TABLE sf_lay (gone int, id int, day int, store int, qty int) PARTITION BY RANGE (id);
ALTER TABLE sf_lay DROP COLUMN gone;
CREATE TABLE sf_lay_1 PARTITION OF sf_lay FOR VALUES FROM (MINVALUE) TO (60000);
CREATE TABLE sf_lay_2 (id int, day int, store int, qty int);
ALTER TABLE sf_lay ATTACH PARTITION sf_lay_2 FOR VALUES FROM (60000) TO (MAXVALUE);
INSERT INTO sf_lay SELECT id, day, store, qty FROM sf_fact;
VACUUM (FREEZE, ANALYZE) sf_big, sf_day, sf_item, sf_store, sf_empty, sf_multi, sf_pair, sf_pair8, sf_fact,
                         sf_store_nk, sf_big_nk, sf_zone, sf_part, sf_inh, sf_inh_1, sf_inh_2, sf_lay, sf_link;
-- never vacuumed: its pages are not all-visible, and the device judges their
-- tuples by their hint bits (set by the count below, once the WAL of the
-- transactions that wrote them is flushed): rows of two transactions,
-- updated and deleted rows, rows of a transaction rolled back
CREATE TABLE sf_fresh WITH (autovacuum_enabled = false) AS SELECT * FROM sf_fact WHERE id % 2 = 0;
INSERT INTO sf_fresh SELECT * FROM sf_fact WHERE id % 10 = 1;
UPDATE sf_fresh SET qty = qty + 1 WHERE id % 11 = 0;
DELETE FROM sf_fresh WHERE id % 13 = 0;
BEGIN;
INSERT INTO sf_fresh SELECT * FROM sf_fact WHERE id % 10 = 3;
ROLLBACK;
ANALYZE sf_fresh;
-- a dimension of fixed-width columns, read from its pages (page_scan.h), not
-- all-visible either: updated, deleted and rolled-back rows, NULL keys and
-- values, and grouping values beyond the dictionary's memo (agg_dict.c)
CREATE TABLE sf_kv WITH (autovacuum_enabled = false) AS
  SELECT CASE WHEN g % 211 = 0 THEN NULL ELSE g END AS k, g % 37 AS w,
         CASE WHEN g % 19 = 0 THEN NULL ELSE g % 101 / 4.0 END::float8 AS x, g * 7919 % 9001 AS c
    FROM generate_series(1, 60000) g;
UPDATE sf_kv SET w = w + 100 WHERE k % 17 = 0;
DELETE FROM sf_kv WHERE k % 23 = 0;
BEGIN;
INSERT INTO sf_kv SELECT g, 1, 1, 1 FROM generate_series(60001, 62000) g;
ROLLBACK;
ANALYZE sf_kv;
-- a never-vacuumed dimension of varlenas read from its pages: short and long
-- text (1- and 4-byte headers), values compressed inline and stored out of
-- line (TOAST), numerics, char(n), NULLs, and a column after them all
CREATE TABLE sf_tv WITH (autovacuum_enabled = false) AS
  SELECT CASE WHEN g % 199 = 0 THEN NULL ELSE g END AS k,
         CASE WHEN g % 31 = 0 THEN NULL WHEN g % 13 = 0 THEN repeat('long name ' || g % 5, 20)
              ELSE 'n' || g % 41 END AS name,
         CASE WHEN g % 300 = 1 THEN repeat('compressible ' || g % 3, 400)
              WHEN g % 300 = 2 THEN (SELECT string_agg(md5((g % 4 * 1000 + i)::text), '')
                                       FROM generate_series(1, 80) i)
              WHEN g % 11 = 0 THEN NULL ELSE 'note ' || g % 6 END AS note,
         CASE WHEN g % 17 = 0 THEN NULL ELSE (g % 1000) / 8.0 END::numeric(12, 2) AS p,
         (ARRAY['ab', 'cd  ', NULL])[1 + g % 3]::char(4) AS tag,
         g % 23 AS g
    FROM generate_series(1, 30000) g;
UPDATE sf_tv SET name = name || '!' WHERE k % 29 = 0;
DELETE FROM sf_tv WHERE k % 37 = 0;
BEGIN;
INSERT INTO sf_tv SELECT g, 'gone', 'gone', 1, 'zz', 1 FROM generate_series(30001, 31000) g;
ROLLBACK;
ANALYZE sf_tv;
-- rows no one has read yet: their hint bits unset, their pages read on the CPU
INSERT INTO sf_tv SELECT g, 'late ' || g % 3, NULL, 2.5, 'ab', 7 FROM generate_series(30001, 30600) g;
CHECKPOINT;
SET gpuhash.enabled = off;
SELECT count(*) > 0 AS hinted FROM sf_fresh;
SELECT count(*) > 0 AS hinted FROM sf_kv;
RESET gpuhash.enabled;

BEGIN;
SELECT plan(1004);
SET LOCAL gpuhash.enable_star = on;

\ir lib/digests.sql
\ir lib/helpers.sql

CREATE FUNCTION pg_temp.star_cases(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' one dimension, grouped by it',
    'SELECT d.yr, count(*), sum(f.qty), avg(f.qty), min(f.delta), max(f.ratio)
       FROM sf_fact f JOIN sf_day d ON f.day = d.day GROUP BY d.yr', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' three dimensions, quals on each',
    'SELECT d.season, i.brand, s.region, sum(f.amount), count(f.qty)
       FROM sf_fact f, sf_day d, sf_item i, sf_store s
      WHERE f.day = d.day AND f.item = i.item AND f.store = s.store
        AND d.yr BETWEEN 2001 AND 2005 AND i.cat IN (''cat1'', ''cat2'') AND s.region <> ''C''
        AND f.qty > 10 GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' plain aggregate of products',
    'SELECT sum(f.qty * f.delta), sum(f.amount * f.disc), count(*)
       FROM sf_fact f JOIN sf_day d ON f.day = d.day
      WHERE d.yr = 2003 AND f.disc BETWEEN 0.05 AND 0.15 AND f.qty < 60', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' numeric of three scales',
    'SELECT s.region, sum(f.amount * (1 - f.disc) * (1 + f.disc)), avg(f.amount * f.disc),
            sum(f.amount - i.price), sum(i.price)
       FROM sf_fact f JOIN sf_item i ON f.item = i.item JOIN sf_store s ON f.store = s.store
      GROUP BY s.region', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' NULL grouping columns from both sides',
    'SELECT i.cat, f.flag, s.manager, count(*), sum(f.qty)
       FROM sf_fact f JOIN sf_item i ON f.item = i.item JOIN sf_store s ON f.store = s.store
      GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' grouping by fact expressions',
    'SELECT f.delta % 7, f.qty / 10, f.shipped, count(*), sum(i.size)
       FROM sf_fact f JOIN sf_item i ON f.item = i.item GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a dimension value in the fact expressions',
    'SELECT d.mon, sum(CASE WHEN i.brand LIKE ''brand1%'' THEN f.amount ELSE 0 END),
            sum(f.qty * i.size), sum(f.ratio * i.weight), count(*) FILTER (WHERE d.holiday)
       FROM sf_fact f JOIN sf_day d ON f.day = d.day JOIN sf_item i ON f.item = i.item
      GROUP BY d.mon', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' quals with OR, NOT, IS NULL, COALESCE, dates',
    'SELECT s.region, count(*), sum(f.delta)
       FROM sf_fact f JOIN sf_store s ON f.store = s.store
      WHERE (f.flag = ''A'' OR f.flag IS NULL) AND NOT coalesce(f.ratio, 0) > 40
        AND f.shipped < date ''2006-06-01'' AND f.amount IS NOT NULL
      GROUP BY s.region', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' CASE, HAVING, FILTER',
    'SELECT CASE WHEN f.qty > 50 THEN 2 WHEN f.qty > 20 THEN 1 ELSE 0 END AS band, d.yr,
            count(*) FILTER (WHERE f.delta > 0), sum(f.amount) FILTER (WHERE f.flag = ''B'')
       FROM sf_fact f JOIN sf_day d ON f.day = d.day
      GROUP BY 1, 2 HAVING count(*) > 50', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' dimensions without a key, unique by their statistics',
    'SELECT s.region, b.grp, count(*), sum(f.qty) FROM sf_fact f
       JOIN sf_store_nk s ON f.store = s.store JOIN sf_big_nk b ON f.id = b.k
      GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a dimension without a key or statistics',
    'SELECT d.yr, count(*), sum(f.qty) FROM sf_fact f JOIN sf_day_na d ON f.day = d.day
      GROUP BY d.yr', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' semi joins (IN, EXISTS) with keys twice on the right',
    'SELECT d.yr, count(*), sum(f.qty) FROM sf_fact f JOIN sf_day d ON f.day = d.day
      WHERE f.qty IN (SELECT k FROM sf_multi WHERE v % 3 <> 1)
        AND EXISTS (SELECT 1 FROM sf_store_nk s WHERE s.store = f.store AND s.region <> ''C'')
      GROUP BY d.yr', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' an anti join',
    'SELECT d.yr, count(*) FROM sf_fact f JOIN sf_day d ON f.day = d.day
      WHERE NOT EXISTS (SELECT 1 FROM sf_multi m WHERE m.k = f.qty) GROUP BY d.yr', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: NOT IN (a subplan, NULL-aware)',
    'SELECT d.yr, count(*) FROM sf_fact f JOIN sf_day d ON f.day = d.day
      WHERE f.qty NOT IN (SELECT k FROM sf_multi) GROUP BY d.yr', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a subquery as a dimension',
    'SELECT d.yr, count(*), sum(f.qty) FROM sf_fact f
       JOIN (SELECT day, max(yr) AS yr FROM sf_day GROUP BY day) d ON f.day = d.day
      GROUP BY d.yr', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' lengths of text, bpchar and varchar (UTF-8 characters, bpchar''s padding)',
    'SELECT length(f.mode), octet_length(f.mode), char_length(f.tag), count(*), sum(length(f.note)),
            max(octet_length(f.tag)), sum(character_length(f.mode)), min(length(f.tag))
       FROM sf_fact f JOIN sf_store s ON f.store = s.store
      WHERE length(f.note) BETWEEN 3 AND 50 OR octet_length(f.tag) = 7 GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' substrings of text, bpchar and varchar (UTF-8 characters, bpchar''s cast to text), keys, quals and arguments',
    'SELECT substring(f.mode from 2 for 3), left(f.tag, 5), count(*),
            sum(length(substring(f.note, f.qty % 7 - 2, 4))), max(octet_length(substr(f.mode, f.qty % 3)))
       FROM sf_fact f JOIN sf_store s ON f.store = s.store
      WHERE substr(f.mode, 1, 1) <> ''T'' OR f.mode::text = ''FOB'' GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' substrings to the end, from before the first character, past the end, of a huge count',
    'SELECT substring(f.tag from f.delta % 4), substr(f.mode, -2, 5), left(f.note, 0), count(*)
       FROM sf_fact f
      WHERE substring(f.note, 50) = ''nnnn'' OR substr(f.tag, 3, 100000) LIKE ''g 1%''
         OR substring(f.mode from 20 for 2) IS NULL GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' an empty dimension',
    'SELECT count(*), sum(f.qty), max(e.v) FROM sf_fact f JOIN sf_empty e ON f.qty = e.k', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' no row passes the quals',
    'SELECT d.yr, count(*) FROM sf_fact f JOIN sf_day d ON f.day = d.day
      WHERE f.qty > 1000 GROUP BY d.yr', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a qual the device cannot evaluate',
    'SELECT d.yr, count(*), sum(f.qty) FROM sf_fact f JOIN sf_day d ON f.day = d.day
      WHERE f.note LIKE ''%nnnnnnnnnn%'' AND f.qty > 5 GROUP BY d.yr', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' the fact table alone',
    'SELECT f.flag, sum(f.amount * (1 - f.disc)), avg(f.qty), count(*)
       FROM sf_fact f WHERE f.shipped <= date ''2007-01-01'' GROUP BY f.flag', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' the fact table alone, numeric sums, no quals',
    'SELECT f.flag, sum(f.amount), avg(f.disc), count(*) FROM sf_fact f GROUP BY f.flag', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a plain aggregate of the fact table alone',
    'SELECT count(*), sum(f.qty), min(f.shipped), max(f.delta), sum(f.amount) FROM sf_fact f', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a dimension joined on two columns',
    'SELECT p.tag, s.region, count(*), sum(f.qty * p.bonus), min(p.bonus)
       FROM sf_fact f JOIN sf_pair p ON f.store = p.store AND f.day = p.day
       JOIN sf_store s ON f.store = s.store
      WHERE p.bonus > -30 GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' two columns, both sides int4 and int2',
    'SELECT count(*), sum(p.bonus) FROM sf_fact f, sf_pair p
      WHERE p.day = f.store AND p.store = f.delta', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: two key columns, one int8',
    'SELECT count(*), sum(q.bonus) FROM sf_fact f JOIN sf_pair8 q ON f.item = q.item AND f.store = q.store',
    'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: a dimension not unique on its key',
    'SELECT m.v % 3, count(*) FROM sf_fact f JOIN sf_multi m ON f.qty = m.k GROUP BY 1', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a snowflake, its table equal to another dimension''s column',
    'SELECT z.zname, i.cat, count(*), sum(f.qty) FROM sf_fact f, sf_store s, sf_zone z, sf_item i
      WHERE f.store = s.store AND s.zone = z.zone AND f.item = i.item AND i.size = z.zone
      GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' an OR over the fact table and two dimensions',
    'SELECT d.yr, count(*), sum(f.amount) FROM sf_fact f, sf_item i, sf_day d
      WHERE f.item = i.item AND f.day = d.day
        AND ((f.flag = ''A'' AND i.cat IN (''cat1'', ''cat2'') AND f.qty < 50)
          OR (f.flag = ''B'' AND i.size > 20 AND d.season = ''summer'')
          OR (f.flag IS NULL AND i.brand = ''brand7''))
      GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' comparisons with dimensions, one product',
    'SELECT s.region, count(*), sum(f.delta) FROM sf_fact f, sf_item i, sf_store s
      WHERE f.item = i.item AND f.store = s.store AND f.qty > i.size AND f.delta < s.store
        AND f.qty * 3 > i.size + s.store
      GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' the fact table equal to a sum of two dimensions'' columns',
    'SELECT s.region, count(*), sum(f.qty) FROM sf_fact f, sf_item i, sf_store s
      WHERE f.item = i.item AND f.store = s.store AND f.qty = i.size + s.zone
      GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' LIKE and NOT LIKE on the device (bpchar''s padding, a UTF-8 character''s _)',
    'SELECT s.region, f.mode LIKE ''ÄIR _%'', count(*), sum(f.qty) FROM sf_fact f JOIN sf_store s ON f.store = s.store
      WHERE (f.tag LIKE ''tag 1%'' AND f.mode NOT LIKE ''%A%'') OR f.mode LIKE ''_IR%'' OR f.note LIKE ''%n_n''
         OR f.mode LIKE ''FOB''
      GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' LIKE of a pattern with escapes, on the CPU',
    'SELECT s.region, count(*) FROM sf_fact f JOIN sf_store s ON f.store = s.store
      WHERE f.tag LIKE ''tag\_1%'' GROUP BY 1', 'GpuStarAgg');
  -- a class of no member over the fact table alone: its equality is no key's
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a dimension''s column equal to a sum over the fact table and another',
    'SELECT s.region, count(*), sum(f.qty) FROM sf_fact f, sf_item i, sf_store s
      WHERE f.item = i.item AND f.store = s.store AND f.qty - i.size = s.zone
      GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' the same, the dimensions the other way round',
    'SELECT s.region, count(*), sum(f.qty) FROM sf_fact f, sf_item i, sf_store s
      WHERE f.item = i.item AND f.store = s.store AND f.qty - s.zone = i.size
      GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a sum over the fact table and a dimension equal to the fact table''s',
    'SELECT d.season, count(*), sum(f.amount) FROM sf_fact f JOIN sf_item i ON f.item = i.item
       JOIN sf_day d ON f.day = d.day
      WHERE f.qty + i.size = f.delta + 60 GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: two join clauses that may raise errors',
    'SELECT count(*) FROM sf_fact f, sf_item i, sf_store s
      WHERE f.item = i.item AND f.store = s.store AND f.qty * 2 > i.size AND f.delta * 3 < s.store',
    'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' columns the planner takes out of the GROUP BY',
    'SELECT s.store, s.region, s.manager, z.zname, count(*), sum(f.qty)
       FROM sf_fact f JOIN sf_store s ON f.store = s.store JOIN sf_zone z ON s.zone = z.zone
      GROUP BY s.store, s.region, s.manager, z.zname', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: a join clause of a semi join''s dimension',
    'SELECT count(*) FROM sf_fact f
      WHERE EXISTS (SELECT 1 FROM sf_multi m WHERE m.k = f.qty AND m.v > f.store)', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' wide text grouping columns of the fact table',
    'SELECT f.mode, f.tag, d.yr, count(*), sum(f.qty) FROM sf_fact f JOIN sf_day d ON f.day = d.day
      GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' wide text under the C collation, a qual on it',
    'SELECT f.tag COLLATE "C", count(*), min(f.qty) FROM sf_fact f JOIN sf_day d ON f.day = d.day
      WHERE f.mode IN (''MAIL'', ''ÄIR λ'', '''') GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: a text key whose statistics show values over 56 bytes',
    'SELECT f.note, count(*) FROM sf_fact f JOIN sf_day d ON f.day = d.day GROUP BY 1', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' EXTRACT of the fact table''s dates',
    'SELECT extract(year FROM f.shipped), extract(QUARTER FROM f.shipped), s.region, count(*),
            sum(extract(day FROM f.shipped)), avg(extract(month FROM f.shipped))
       FROM sf_fact f JOIN sf_store s ON f.store = s.store
      WHERE extract(month FROM f.shipped) <> 3 GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a LEFT JOIN of the fact table',
    'SELECT d.yr, count(*) FROM sf_fact f LEFT JOIN sf_day d ON f.day = d.day GROUP BY d.yr', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: a dimension''s LEFT JOIN of the fact table',
    'SELECT d.yr, count(*), sum(f.qty) FROM sf_fact f RIGHT JOIN sf_day d ON f.day = d.day GROUP BY d.yr',
    'GpuStarAgg', false);
END $$;

SET LOCAL max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.star_cases('serial');

-- in parallel: the processes share the fact table's blocks and one star
-- (a wait that never ends, between the processes, fails the test instead of hanging it)
SET LOCAL statement_timeout = '2min';
SET LOCAL max_parallel_workers_per_gather = 2;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
SET LOCAL min_parallel_table_scan_size = 0;
SELECT * FROM pg_temp.star_cases('parallel');
SELECT matches(pg_temp.plan_text('SELECT d.yr, count(*) FROM sf_fact f
    JOIN (SELECT day, max(yr) AS yr FROM sf_day GROUP BY day) d ON f.day = d.day GROUP BY d.yr', false),
  'Dimensions: d on \(f.day = (d\.)?day\)',
  'EXPLAIN names a subquery dimension by its alias');
SELECT matches(pg_temp.plan_text('SELECT count(*) FROM sf_fact f WHERE f.qty IN (SELECT k FROM sf_multi)', false),
  'Dimensions: sf_multi \(semi join\) on',
  'EXPLAIN shows a semi join''s dimension');
SELECT matches(pg_temp.plan_text('SELECT count(*) FROM sf_fact f JOIN sf_store s ON f.store = s.store
    WHERE f.mode LIKE ''_IR%'' AND f.tag NOT LIKE ''%1''', false),
  'Device Filter: .*~~.*!~~',
  'EXPLAIN: LIKE and NOT LIKE run on the device');
SELECT matches(pg_temp.plan_text('SELECT count(*) FROM sf_fact f JOIN sf_store s ON f.store = s.store
    WHERE length(f.mode) > 3 AND octet_length(f.tag) < 7', false),
  'Device Filter: .*length\(f\.mode\).*octet_length\(\(f\.tag\)::text\)',
  'EXPLAIN: length() and octet_length() run on the device');
SELECT matches(pg_temp.plan_text('SELECT count(*) FROM sf_fact f JOIN sf_store s ON f.store = s.store
    WHERE left(f.tag, 2) = ''ta'' AND substr(f.mode, 2, 2) <> ''IR''', false),
  'Device Filter: .*"left"\(\(f\.tag\)::text, 2\).*substr\(\(f\.mode\)::text, 2, 2\)',
  'EXPLAIN: left() and substr() run on the device');
SELECT matches(pg_temp.plan_text('SELECT count(*) FROM sf_fact f, sf_item i, sf_store s
    WHERE f.item = i.item AND f.store = s.store AND f.qty > i.size', false),
  'Device Join Filter: \(f.qty > i.size\)',
  'EXPLAIN shows the join clauses the device evaluates');
SELECT matches(pg_temp.plan_text('SELECT count(*) FROM sf_fact f, sf_item i, sf_store s
    WHERE f.item = i.item AND f.store = s.store AND f.qty = i.size + s.zone', false),
  'Device Join Filter: .*i\.size \+ s\.zone',
  'an equality with a sum of two dimensions'' columns is a join clause of the device''s');
-- a dimension without a key that holds a key twice after all (statistics are
-- estimates, and may be old): the plan PostgreSQL would have run runs instead
-- EXPLAIN ANALYZE of q matches pattern; without the leader taking part, the
-- leader's EXPLAIN ANALYZE has no figures of the node: skipped
CREATE FUNCTION pg_temp.analyzed_shows(q text, pattern text, name text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('parallel_leader_participation')::bool THEN
    RETURN matches(pg_temp.plan_text(q, true), pattern, name);
  END IF;
  RETURN skip('the leader does not run the node', 1);
END $$;
CREATE FUNCTION pg_temp.checked_keys(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  q text := 'SELECT s.region, b.grp, count(*), sum(f.qty), sum(b.price), min(f.qty) FROM sf_fact f
               JOIN sf_store_nk s ON f.store = s.store JOIN sf_big_nk b ON f.id = b.k
              GROUP BY 1, 2 HAVING count(*) > 1';
BEGIN
  RETURN NEXT ok(pg_temp.plan_text(q, false) ~ 'Keys Checked: sf_store_nk, sf_big_nk',
                 tag || ': EXPLAIN shows the dimensions whose keys are checked');
  RETURN NEXT pg_temp.analyzed_shows(q, 'Alternative Plan: not needed',
                                      tag || ': keys found unique, the star runs');
  INSERT INTO sf_big_nk SELECT * FROM sf_big_nk WHERE k = 4242;
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a checked dimension holding a key twice', q, 'GpuStarAgg');
  RETURN NEXT pg_temp.analyzed_shows(q, 'Alternative Plan: ran: sf_big_nk holds a key twice',
                                      tag || ': EXPLAIN ANALYZE says the alternative ran, and why');
  DELETE FROM sf_big_nk WHERE ctid = (SELECT max(ctid) FROM sf_big_nk WHERE k = 4242);
END $$;
-- the tests of function fn, serially, in parallel, and without the leader taking part
CREATE FUNCTION pg_temp.in_each_mode(fn text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  mode record;
BEGIN
  FOR mode IN VALUES ('serial', '0', 'on'), ('parallel', '2', 'on'),
                     ('parallel, leader not taking part', '2', 'off') LOOP
    PERFORM set_config('max_parallel_workers_per_gather', mode.column2, true);
    PERFORM set_config('parallel_leader_participation', mode.column3, true);
    RETURN QUERY EXECUTE format('SELECT * FROM pg_temp.%I(%L)', fn, mode.column1);
  END LOOP;
  PERFORM set_config('parallel_leader_participation', 'on', true);
END $$;
SELECT * FROM pg_temp.in_each_mode('checked_keys');
-- a dimension filtered as it is read by the keys of a smaller one on the
-- same fact column (star_dim_filter.c): an IN (subquery) on a dimension's
-- key, as TPC-H's Q18; two dimensions on one fact column, the smaller read
-- by the leader alone (sf_day without workers), so that in parallel every
-- process filters its share of sf_big by the leader's filter; and a filter
-- planned but not used, its source larger than half the estimate
CREATE FUNCTION pg_temp.filtered_dims(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  qin text := 'SELECT b.k, b.grp, count(*), sum(f.qty), sum(b.price) FROM sf_fact f
                 JOIN sf_big b ON f.id = b.k
                WHERE b.k IN (SELECT id FROM sf_fact GROUP BY id HAVING sum(qty) > 90)
                GROUP BY 1, 2';
  qtwo text := 'SELECT d.yr, b.grp, count(*), sum(f.qty), sum(b.price) FROM sf_fact f
                  JOIN sf_big b ON f.id = b.k JOIN sf_day d ON f.id = d.day
                 WHERE b.w <> 7 GROUP BY 1, 2';
  qall text := 'SELECT b.grp, count(*), sum(f.qty) FROM sf_fact f JOIN sf_big b ON f.id = b.k
                 WHERE b.k IN (SELECT id FROM sf_fact GROUP BY id HAVING count(*) > 0) GROUP BY 1';
  qjoin text := 'SELECT z.zname, b.grp, count(*), sum(f.qty), sum(b.price) FROM sf_fact f
                   JOIN sf_big b ON f.id = b.k JOIN sf_zone z ON b.w = z.zone
                  WHERE b.k IN (SELECT id FROM sf_fact GROUP BY id HAVING sum(qty) > 90) GROUP BY 1, 2';
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a dimension filtered by an IN''s keys', qin, 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', two dimensions on one fact column', qtwo, 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a filter whose source proves too large', qall, 'GpuStarAgg');
  -- a dimension joined by PostgreSQL's own join nodes: the scan of sf_big takes the filter (in
  -- parallel the join may run below a Gather of its own, in other processes: the star filters then)
  PERFORM set_config('gpuhash.enable_join', 'off', true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a joined dimension filtered at its key''s scan', qjoin, 'GpuStarAgg');
  RETURN NEXT pg_temp.analyzed_shows(qjoin, 'filtered by ANY_subquery''s keys: 150000 rows, \d+ filtered out' ||
                                      CASE WHEN current_setting('max_parallel_workers_per_gather') = '0'
                                           THEN ' at the scan of its key' ELSE '' END,
                                      tag || ': EXPLAIN ANALYZE says where the filter ran');
  PERFORM set_config('gpuhash.enable_join', 'on', true);
  RETURN NEXT ok(pg_temp.plan_text(qin) ~ 'sf_big \(a group per row\) on \(f.id = b.k\), filtered by ANY_subquery''s keys',
                 tag || ': EXPLAIN names the dimension whose keys filter another');
  RETURN NEXT pg_temp.analyzed_shows(qtwo, 'filtered by sf_day''s keys: 147000 rows, 14\d{4} filtered out',
                                      tag || ': EXPLAIN ANALYZE counts the rows the filter left out');
  RETURN NEXT pg_temp.analyzed_shows(qall, 'filtered by ANY_subquery''s keys: 150000 rows, filter not used',
                                      tag || ': EXPLAIN ANALYZE says where a filter was not used');
END $$;
ALTER TABLE sf_day SET (parallel_workers = 0);
SET LOCAL gpuhash.force = on;
SELECT * FROM pg_temp.in_each_mode('filtered_dims');
RESET gpuhash.force;
ALTER TABLE sf_day RESET (parallel_workers);
-- an inner dimension with no row: no fact row can join, and the fact table is
-- not read, as PostgreSQL's hash join reads no outer row over an empty inner
-- side; so a fact qual that would fail on a row (id 60000, not the first of
-- any page) fails neither.  A LEFT JOIN's empty dimension reads it all
CREATE FUNCTION pg_temp.empty_dims(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  qfail text := 'SELECT d.yr, count(*), sum(f.qty) FROM sf_fact f JOIN sf_day d ON f.day = d.day
                  WHERE d.yr < 0 AND f.qty / (f.id - 60000) >= 0 GROUP BY d.yr';
  qsemi text := 'SELECT count(*), sum(f.amount), max(s.zone) FROM sf_fact f JOIN sf_store s ON f.store = s.store
                  WHERE f.qty IN (SELECT k FROM sf_empty)';
  qleft text := 'SELECT e.v, count(*), sum(f.qty) FROM sf_fact f LEFT JOIN sf_empty e ON f.qty = e.k
                  GROUP BY e.v';
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a dimension empty after its filter, a fact qual failing on one row',
                                               qfail, 'GpuStarAgg');
  RETURN NEXT pg_temp.analyzed_shows(qfail, 'Fact Table Read: no \(sf_day has no row\)',
                                      tag || ': EXPLAIN ANALYZE says the fact table was not read, and why');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', an empty semi join, a plain aggregate', qsemi, 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', an empty LEFT JOIN dimension', qleft, 'GpuStarAgg');
  RETURN NEXT ok(pg_temp.plan_text(qleft, true) !~ 'Fact Table Read',
                 tag || ': an empty LEFT JOIN dimension reads the fact table');
END $$;
SET LOCAL gpuhash.force = on;
SELECT * FROM pg_temp.in_each_mode('empty_dims');
RESET gpuhash.force;
-- a dimension with a partial plan: every process reads its share, one merges them
SELECT * FROM pg_temp.same_rows('parallel, a dimension read by every process',
  'SELECT b.grp, s.region, count(*), sum(f.qty), sum(b.price), max(b.w), sum(f.amount * b.price)
     FROM sf_fact f JOIN sf_big b ON f.id = b.k JOIN sf_store s ON f.store = s.store
    WHERE b.w % 7 <> 3 GROUP BY 1, 2', 'GpuStarAgg');
SET LOCAL gpuhash.force = on;
SELECT ok(pg_temp.plan_text('SELECT b.grp, count(*) FROM sf_fact f JOIN sf_big b ON f.id = b.k GROUP BY 1')
          ~ 'Parallel Custom Scan \(GpuStarAgg\)[\s\S]*Parallel Seq Scan on sf_big',
          'parallel: a large dimension has a partial plan below the star');
RESET gpuhash.force;
-- rescanned under a nested loop: the shares read and merged again each time
SET LOCAL enable_material = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SELECT * FROM pg_temp.same_rows('parallel, rescanned with its dimension read by every process',
  'SELECT v.x, s.* FROM (VALUES (1), (2), (3)) v(x),
          (SELECT b.grp, count(*) AS c, sum(f.qty) AS q FROM sf_fact f JOIN sf_big b ON f.id = b.k
            GROUP BY b.grp) s
    WHERE s.c > 3732 + v.x', 'GpuStarAgg');
SELECT * FROM pg_temp.same_rows('parallel, rescanned with a joined dimension read by every process',
  'SELECT v.x, s.* FROM (VALUES (1), (2), (3)) v(x),
          (SELECT z.zname, count(*) AS c, sum(f.qty) AS q FROM sf_fact f JOIN sf_big b ON f.id = b.k
             JOIN sf_zone z ON b.w = z.zone GROUP BY z.zname) s
    WHERE s.c > 17000 + v.x * 100', 'GpuStarAgg');
ALTER TABLE sf_day SET (parallel_workers = 0);
SELECT * FROM pg_temp.same_rows('parallel, rescanned with its dimension read by the leader',
  'SELECT v.x, s.* FROM (VALUES (1), (2), (3)) v(x),
          (SELECT d.yr, count(*) AS c, sum(f.qty) AS q FROM sf_fact f JOIN sf_day d ON f.day = d.day
            GROUP BY d.yr) s
    WHERE s.c > 9300 + v.x * 50', 'GpuStarAgg');
ALTER TABLE sf_day RESET (parallel_workers);
-- the alternative run once per rescan: EXPLAIN ANALYZE counts one execution's groups
SET LOCAL max_parallel_workers_per_gather = 0;
INSERT INTO sf_store_nk SELECT * FROM sf_store_nk WHERE store = 7;
SELECT matches(pg_temp.plan_text('SELECT v.x, s.* FROM (VALUES (1), (2), (3)) v(x),
    (SELECT n.region, count(*) AS c FROM sf_fact f JOIN sf_store_nk n ON f.store = n.store
      GROUP BY 1) s WHERE s.c > v.x', true),
  'GpuStarAgg\)[^\n]*\(actual rows=5(\.00)? loops=3\)[\s\S]*Alternative Plan: ran[\s\S]*Groups: 5\n',
  'rescanned, the alternative run each time: Groups counts one execution''s');
DELETE FROM sf_store_nk WHERE ctid = (SELECT max(ctid) FROM sf_store_nk WHERE store = 7);
SET LOCAL max_parallel_workers_per_gather = 2;
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;
SET LOCAL parallel_leader_participation = off;
SELECT * FROM pg_temp.same_rows('parallel, leader not taking part',
  'SELECT d.season, i.brand, sum(f.amount), count(*) FROM sf_fact f, sf_day d, sf_item i
    WHERE f.day = d.day AND f.item = i.item GROUP BY 1, 2', 'GpuStarAgg');
-- the workers read the partial dimensions, the leader the others, and the
-- worker that makes the star returns the groups
ALTER TABLE sf_store SET (parallel_workers = 0);
SELECT * FROM pg_temp.same_rows('parallel, leader not taking part, dimensions read by the workers',
  'SELECT b.grp, s.region, count(*), sum(b.price), min(f.qty) FROM sf_fact f, sf_big b, sf_store s
    WHERE f.id = b.k AND f.store = s.store GROUP BY 1, 2', 'GpuStarAgg');
SELECT * FROM pg_temp.same_rows('parallel, leader not taking part, one dimension',
  'SELECT b.grp, count(*), sum(f.qty) FROM sf_fact f JOIN sf_big b ON f.id = b.k
    WHERE b.price > 100 GROUP BY 1', 'GpuStarAgg');
SET LOCAL enable_material = off;
SET LOCAL enable_hashjoin = off;
SET LOCAL enable_mergejoin = off;
SELECT * FROM pg_temp.same_rows('parallel, leader not taking part, rescanned',
  'SELECT v.x, s.* FROM (VALUES (1), (2), (3)) v(x),
          (SELECT b.grp, s.region, count(*) AS c, sum(b.price) AS p FROM sf_fact f, sf_big b, sf_store s
            WHERE f.id = b.k AND f.store = s.store GROUP BY 1, 2) s
    WHERE s.c > 560 + v.x * 40', 'GpuStarAgg');
RESET enable_material;
RESET enable_hashjoin;
RESET enable_mergejoin;
ALTER TABLE sf_store RESET (parallel_workers);
RESET parallel_leader_participation;

-- pages that are not all-visible, of transactions that ended before this one:
-- shipped, their tuples judged by their hint bits on the device, serial and
-- parallel, where no transaction older than those was running when this one
-- began (else their pages are read on the CPU)
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.same_rows('pages not all-visible, serial',
  'SELECT d.yr, s.region, count(*), sum(f.qty), sum(f.amount) FROM sf_fresh f, sf_day d, sf_store s
    WHERE f.day = d.day AND f.store = s.store GROUP BY 1, 2', 'GpuStarAgg');
SELECT CASE WHEN (SELECT max(xmin::text::bigint) FROM sf_fresh) <
                 pg_snapshot_xmin(pg_current_snapshot())::text::bigint
  THEN matches(pg_temp.plan_text('SELECT d.yr, count(*), sum(f.qty) FROM sf_fresh f
                                    JOIN sf_day d ON f.day = d.day GROUP BY d.yr', true),
               'not all-visible=[1-9][0-9]* .* visibility undecided=0',
               'pages not all-visible are shipped, their tuples judged on the device')
  ELSE skip('a transaction older than the table''s rows was running', 1) END;
SELECT pg_temp.parallel_plans(2);
SELECT * FROM pg_temp.same_rows('pages not all-visible, parallel',
  'SELECT f.flag, i.cat, count(*), sum(f.qty), avg(f.ratio) FROM sf_fresh f JOIN sf_item i ON f.item = i.item
    GROUP BY 1, 2', 'GpuStarAgg');
SELECT pg_temp.parallel_plans(0);

-- pages that are not all-visible: rows read on the CPU (in this transaction)
SET LOCAL max_parallel_workers_per_gather = 0;
RESET statement_timeout;
UPDATE sf_fact SET qty = qty + 1 WHERE id % 10 = 0;
DELETE FROM sf_fact WHERE id % 17 = 0;
SELECT * FROM pg_temp.same_rows('changed pages',
  'SELECT d.yr, s.region, count(*), sum(f.qty) FROM sf_fact f, sf_day d, sf_store s
    WHERE f.day = d.day AND f.store = s.store GROUP BY 1, 2', 'GpuStarAgg');

-- several devices: the dimensions on each, every device reading its share
-- of the fact table's pages, the groups merged (three devices simulated by
-- the CPU backend; on a GPU machine, the GPUs it has)
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT set_config('gpuhash.devices',
                  CASE WHEN current_setting('gpuhash.device') = 'cpu' THEN '0,1,2' ELSE 'all' END,
                  true) IS NOT NULL AS devices_set;
CREATE FUNCTION pg_temp.devices_named(description text) RETURNS text
LANGUAGE sql AS $$
  SELECT CASE WHEN current_setting('gpuhash.device') = 'cpu'
    THEN matches(pg_temp.plan_text('SELECT d.yr, count(*), sum(f.amount) FROM sf_fact f
                                      JOIN sf_day d ON f.day = d.day GROUP BY d.yr', true),
                 'Devices Used: 0, 1, 2', description)
    ELSE skip('the GPUs a machine has', 1) END
$$;
SELECT * FROM pg_temp.star_cases('devices');
SELECT pg_temp.devices_named('EXPLAIN ANALYZE names the devices a star ran on');
-- and in parallel: with a GPU service worker for each device (as the test
-- server has), a star split across them, every process sending each part
-- its pages (star_split.c)
SET LOCAL max_parallel_workers_per_gather = 2;
SELECT * FROM pg_temp.star_cases('devices, parallel');
SELECT pg_temp.devices_named('EXPLAIN ANALYZE names every device of a parallel star');
SELECT set_config('gpuhash.devices', 'all', true) IS NOT NULL AS devices_reset;
RESET max_parallel_workers_per_gather;

-- a temporary fact table: its rows come through its scan
CREATE TEMP TABLE sf_temp AS SELECT * FROM sf_fact WHERE id % 3 = 0;
ANALYZE sf_temp;
SELECT * FROM pg_temp.same_rows('a temporary fact table',
  'SELECT d.mon, count(*), sum(t.amount) FROM sf_temp t JOIN sf_day d ON t.day = d.day GROUP BY d.mon',
  'GpuStarAgg');

-- errors: PostgreSQL's, for the rows PostgreSQL evaluates
SET LOCAL gpuhash.force = on;
SELECT throws_ok($$SELECT sum(f.qty / (f.delta - f.delta)) FROM sf_fact f JOIN sf_day d ON f.day = d.day$$,
                 '22012', 'division by zero', 'division by zero in an argument');
SELECT throws_ok($$SELECT sum(f.qty * 100000000) FROM sf_fact f JOIN sf_day d ON f.day = d.day$$,
                 '22003', 'integer out of range', 'integer overflow in an argument');
SELECT throws_ok($$SELECT sum(f.delta * 1000::smallint) FROM sf_fact f JOIN sf_day d ON f.day = d.day$$,
                 '22003', 'smallint out of range', 'smallint overflow in an argument');
SELECT lives_ok($$SELECT count(*) FROM sf_fact f JOIN sf_day d ON f.day = d.day
                   WHERE f.delta <> 0 AND 1000 / f.delta > 2$$, 'a qual guarding a division');
SELECT lives_ok($$SELECT sum(10 / f.delta) FROM sf_fact f JOIN sf_day d ON f.day = d.day
                   WHERE f.delta > 0$$, 'an argument of rows the quals keep');
SELECT lives_ok($$SELECT sum(10 / i.size) FROM sf_fact f JOIN sf_item i ON f.item = i.item
                   WHERE i.size > 0$$, 'an argument of rows the join keeps');
SELECT throws_ok($$SELECT count(*) FROM sf_fact f JOIN sf_item i ON f.item = i.item
                   WHERE f.qty / (i.size - i.size) > 1$$,
                 '22012', 'division by zero', 'division by zero in a join clause');
SELECT lives_ok($$SELECT count(*) FROM sf_fact f JOIN sf_item i ON f.item = i.item
                   JOIN sf_store s ON f.store = s.store
                   WHERE i.size > 0 AND f.qty / i.size > 1 AND s.region = 'N'$$,
                'a join clause of rows the dimensions keep');
RESET gpuhash.force;

-- a row the device cannot evaluate (a numeric NaN, a product beyond 128 bits),
-- or a dimension's NaN: the plan PostgreSQL would have run runs instead, as for
-- a key given twice.  alternative_runs: q's rows are PostgreSQL's, and EXPLAIN
-- ANALYZE says the alternative ran and why
CREATE FUNCTION pg_temp.alternative_runs(name text, q text, why text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(name, q, 'GpuStarAgg');
  RETURN NEXT pg_temp.analyzed_shows(q, 'Alternative Plan: ran: ' || why,
                                      name || ': EXPLAIN ANALYZE says the alternative ran, and why');
END $$;
CREATE FUNCTION pg_temp.escapes(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  q text := 'SELECT s.region, count(*), sum(f.amount), max(f.qty) FROM sf_fact f
               JOIN sf_store s ON f.store = s.store GROUP BY 1';
  q4 text := 'SELECT d.yr, sum(w.a * w.b * w.c), count(*) FROM sf_wide w
                JOIN sf_day d ON w.day = d.day GROUP BY 1';
  qd text := 'SELECT b.grp, count(*), sum(b.price), sum(f.qty) FROM sf_fact f JOIN sf_big b ON f.id = b.k
                GROUP BY 1';
  old numeric := (SELECT amount FROM sf_fact WHERE id = 4242);
  oldp numeric := (SELECT price FROM sf_big WHERE k = 4242);
BEGIN
  PERFORM set_config('gpuhash.force', 'on', true);
  RETURN NEXT pg_temp.analyzed_shows(q, 'Alternative Plan: not needed',
                                      tag || ': every row evaluated on the device, the star runs');
  UPDATE sf_fact SET amount = 'NaN' WHERE id = 4242;
  RETURN QUERY SELECT * FROM pg_temp.alternative_runs(tag || ', a numeric NaN in the fact table', q,
    'a row of the fact table holds a value the device cannot evaluate');
  UPDATE sf_fact SET amount = old WHERE id = 4242;
  RETURN QUERY SELECT * FROM pg_temp.alternative_runs(tag || ', a product beyond 128 bits', q4,
    'a row of the fact table holds a value the device cannot evaluate');
  UPDATE sf_big SET price = 'NaN' WHERE k = 4242;
  RETURN QUERY SELECT * FROM pg_temp.alternative_runs(tag || ', a numeric NaN in a dimension', qd,
    'sf_big holds a numeric value the device cannot hold');
  UPDATE sf_big SET price = oldp WHERE k = 4242;
END $$;
-- three factors of 18 digits, one row's product of 54
CREATE TABLE sf_wide AS
  SELECT day, amount::numeric(18,6) AS a, (amount + 0.5)::numeric(18,6) AS b, 2::numeric(18,6) AS c
    FROM sf_fact;
UPDATE sf_wide SET a = 999999999999.999999, b = 999999999999.999999, c = 999999999999.999999
 WHERE day = 77 AND a = (SELECT max(a) FROM sf_wide WHERE day = 77);
ANALYZE sf_wide;
SELECT * FROM pg_temp.in_each_mode('escapes');

-- text grouping columns of no declared length (text, varchar, bpchar) are kept
-- in the bytes their statistics show, in one word where that is at most 7, else
-- in hashed 7-byte chunks; a value longer than the statistics saw escapes, and
-- the alternative runs (sf_words_later: analyzed before its longer values came)
CREATE TABLE sf_words AS
  SELECT day, qty, (ARRAY['ab', 'c', 'defg', '', NULL, 'x y'])[id % 6 + 1] AS w,
         ('word-number-' || id % 40)::varchar AS v, ('pad' || id % 5 || repeat(' ', id % 5 % 3))::bpchar AS b
    FROM sf_fact;
CREATE TABLE sf_words_later AS SELECT * FROM sf_words;
ANALYZE sf_words, sf_words_later;
UPDATE sf_words_later SET w = 'longer than seen', v = v || repeat('v', 60) WHERE qty = 42;
CREATE FUNCTION pg_temp.text_keys(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  q text := 'SELECT w.w, d.yr, count(*), sum(w.qty) FROM %s w JOIN sf_day d ON w.day = d.day
               GROUP BY 1, 2';
  qv text := 'SELECT w.v, d.yr, count(*), max(w.qty) FROM %s w JOIN sf_day d ON w.day = d.day
                GROUP BY 1, 2';
BEGIN
  PERFORM set_config('gpuhash.force', 'on', true);
  RETURN NEXT pg_temp.analyzed_shows(format(q, 'sf_words'),
                                      'Alternative Plan: not needed',
                                      tag || ': a short text of no declared length, on the device');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': a short text of no declared length',
                                               format(q, 'sf_words'), 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': a varchar of no declared length',
                                               format(qv, 'sf_words'), 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': not a star: a bpchar of no declared length (its trailing spaces, which equality ignores, show)',
    'SELECT w.b, count(*) FROM sf_words w JOIN sf_day d ON w.day = d.day GROUP BY 1', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.alternative_runs(tag || ', a text longer than its statistics showed',
    format(q, 'sf_words_later'), 'a row of the fact table holds a value the device cannot evaluate');
  RETURN QUERY SELECT * FROM pg_temp.alternative_runs(tag || ', a varchar longer than its statistics showed',
    format(qv, 'sf_words_later'), 'a row of the fact table holds a value the device cannot evaluate');
END $$;
SELECT * FROM pg_temp.in_each_mode('text_keys');

-- LEFT JOINs of the fact table (GH_PROBE_LEFT): a fact row whose key is NULL
-- or missing is kept, the dimension's values NULL; it takes the code of the
-- dimension's grouping values over NULLs (folded to constants when planned):
-- of its rows NULL in every grouping column, which show the same, or a NULL
-- code where there are none; a group added where they are not all NULL
CREATE FUNCTION pg_temp.left_joins(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('gpuhash.force', 'on', true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': LEFT JOIN, grouped by its column',
    'SELECT s.region, count(*), sum(f.qty), count(s.zone), max(s.zone) FROM sf_fact f
       LEFT JOIN sf_store s ON f.store = s.store AND s.zone < 30 GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': LEFT JOIN, a plain aggregate of its values',
    'SELECT count(*), count(s.zone), sum(s.zone), min(s.zone), sum(COALESCE(s.zone, -1)),
            count(*) FILTER (WHERE s.store IS NULL)
       FROM sf_fact f LEFT JOIN sf_store s ON f.store = s.store AND s.region <> ''C''', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': LEFT JOIN, a WHERE that keeps its missing rows',
    'SELECT d.yr, count(*), sum(f.qty) FROM sf_fact f JOIN sf_day d ON f.day = d.day
       LEFT JOIN sf_store s ON f.store = s.store AND s.zone > 20
      WHERE s.zone IS NULL OR f.qty > 90 GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': two LEFT JOINs and an inner one, a snowflake''s',
    'SELECT d.yr, i.brand, z.zname, count(*), sum(f.amount) FROM sf_fact f JOIN sf_day d ON f.day = d.day
       LEFT JOIN sf_item i ON f.item = i.item AND i.size < 10
       LEFT JOIN (sf_store s JOIN sf_zone z ON s.zone = z.zone) ON f.store = s.store
      GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': LEFT JOIN, its rows NULL in every grouping column one group with the missing',
    'SELECT i.cat, count(*), sum(f.qty), count(i.item) FROM sf_fact f LEFT JOIN sf_item i ON f.item = i.item
      GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': LEFT JOIN of a dimension read in shares, NULL groups',
    'SELECT b.grp, count(*), sum(b.w), count(b.price) FROM sf_fact f LEFT JOIN sf_big b ON f.id = b.k AND b.w > 3
      GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': LEFT JOIN, two grouping columns of it, NULL together in some rows',
    'SELECT i.cat, i.size % 3, d.yr, count(*) FROM sf_fact f LEFT JOIN sf_item i ON f.item = i.item
       AND i.size < 20 JOIN sf_day d ON f.day = d.day GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': not a star: an ON clause of the fact table alone',
    'SELECT s.region, count(*) FROM sf_fact f LEFT JOIN sf_store s ON f.store = s.store AND f.qty > 10
      GROUP BY 1', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': grouped by a value not NULL where it finds no row',
    'SELECT COALESCE(s.region, ''none''), count(*) FROM sf_fact f LEFT JOIN sf_store s ON f.store = s.store
       AND s.zone < 30 GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': where it finds no row, the group of some of its rows',
    'SELECT COALESCE(i.cat, ''cat1''), count(*), sum(f.qty), count(i.item) FROM sf_fact f
       LEFT JOIN sf_item i ON f.item = i.item AND i.size < 10 GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': a CASE over it and a column of it, one NULL where it finds no row',
    'SELECT CASE WHEN s.zone IS NULL THEN ''no zone'' ELSE s.region END, s.manager, d.yr, count(*)
       FROM sf_fact f JOIN sf_day d ON f.day = d.day
       LEFT JOIN sf_store s ON f.store = s.store AND s.zone > 10 GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': grouped by its key and a value not NULL where it finds no row',
    'SELECT s.store, COALESCE(s.manager, ''?''), count(*), sum(f.qty) FROM sf_fact f
       LEFT JOIN sf_store s ON f.store = s.store AND s.zone < 30 GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': a WHERE over its text, true where it finds no row',
    'SELECT d.yr, count(*), sum(f.qty) FROM sf_fact f JOIN sf_day d ON f.day = d.day
       LEFT JOIN sf_store s ON f.store = s.store AND s.zone > 20
      WHERE s.manager IS NULL OR s.manager LIKE ''m1%'' GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': aggregates over its text, not strict',
    'SELECT f.flag, count(*) FILTER (WHERE s.manager NOT LIKE ''m1%'' OR s.manager IS NULL),
            sum(CASE WHEN s.manager LIKE ''m%'' THEN s.zone END), count(*)
       FROM sf_fact f LEFT JOIN sf_store s ON f.store = s.store AND s.zone < 40 GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': a dimension read in shares, grouped and filtered where it finds no row',
    'SELECT COALESCE(b.grp, ''none''), count(*), sum(f.qty) FROM sf_fact f
       LEFT JOIN sf_big b ON f.id = b.k AND b.w > 3
      WHERE b.grp IS NULL OR b.grp LIKE ''grp1%'' GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': not a star: a WHERE over its text, known only when run where it finds no row',
    'SELECT count(*) FROM sf_fact f LEFT JOIN sf_store s ON f.store = s.store AND s.zone > 20
      WHERE COALESCE(s.manager, current_setting(''TimeZone'')) LIKE ''U%''', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': not a star: where it finds no row, a value known only when run',
    'SELECT COALESCE(s.region, current_setting(''TimeZone'')), count(*) FROM sf_fact f
       LEFT JOIN sf_store s ON f.store = s.store AND s.zone < 30 GROUP BY 1', 'GpuStarAgg', false);
END $$;
SELECT * FROM pg_temp.in_each_mode('left_joins');

-- columns read ungrouped because a primary key the query groups by determines
-- them (constraintDeps), or taken out of the GROUP BY for it: grouped by again,
-- changing no group; a column inside a grouped expression is not one of them
CREATE FUNCTION pg_temp.dependent_columns(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('gpuhash.force', 'on', true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': columns a grouped key determines',
    'SELECT s.store, s.region, upper(s.manager), count(*), sum(f.qty) FROM sf_fact f
       JOIN sf_store s ON f.store = s.store GROUP BY s.store', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': in HAVING and ORDER BY, two dimensions',
    'SELECT s.store, d.yr, s.zone, count(*), sum(f.amount) FROM sf_fact f
       JOIN sf_store s ON f.store = s.store JOIN sf_day d ON f.day = d.day
      GROUP BY s.store, d.yr HAVING s.manager IS NOT NULL ORDER BY s.region, 4 DESC', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': a column inside a grouped expression is not grouped by',
    'SELECT s.store, i.size % 3, s.region, count(*) FROM sf_fact f
       JOIN sf_store s ON f.store = s.store JOIN sf_item i ON f.item = i.item
      GROUP BY s.store, i.size % 3', 'GpuStarAgg');
  -- in a snowflake's dictionary, the columns a grouped key determines are
  -- carried with their group, not compared (agg_dict.c), the others compared
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': a snowflake''s columns its key determines, carried',
    'SELECT z.zone, z.zname, s.manager, count(*), sum(f.qty) FROM sf_fact f
       JOIN sf_store s ON f.store = s.store JOIN sf_zone z ON s.zone = z.zone
      GROUP BY z.zone, z.zname, s.manager', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': read ungrouped, carried',
    'SELECT z.zone, z.zname, upper(z.zname), count(*) FROM sf_fact f
       JOIN sf_store s ON f.store = s.store JOIN sf_zone z ON s.zone = z.zone
      GROUP BY z.zone ORDER BY z.zname, 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': carried in a dimension read in shares',
    'SELECT s.store, s.manager, s.region, b.w % 3, count(*), sum(f.qty) FROM sf_fact f
       JOIN sf_big b ON f.id = b.k JOIN sf_store s ON b.w = s.store
      GROUP BY s.store, s.manager, s.region, b.w % 3', 'GpuStarAgg');
END $$;
SELECT * FROM pg_temp.in_each_mode('dependent_columns');

-- anti joins of the fact table (NOT EXISTS; a LEFT JOIN kept where it finds
-- no row): a fact row whose key is NULL or missing is kept (GH_PROBE_ANTI);
-- the dimension need not be unique
CREATE FUNCTION pg_temp.anti_joins(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('gpuhash.force', 'on', true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': NOT EXISTS, with an inner join',
    'SELECT d.yr, count(*), sum(f.qty) FROM sf_fact f JOIN sf_day d ON f.day = d.day
      WHERE NOT EXISTS (SELECT 1 FROM sf_store s WHERE s.store = f.store AND s.zone < 25)
      GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': NOT EXISTS of keys held twice, NULL keys kept',
    'SELECT count(*), count(f.qty), sum(f.amount) FROM sf_fact f
      WHERE NOT EXISTS (SELECT 1 FROM sf_multi m WHERE m.k = f.qty AND m.v > 20)', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': a LEFT JOIN kept where it finds no row',
    'SELECT f.flag, count(*) FROM sf_fact f LEFT JOIN sf_item i ON f.item = i.item AND i.size > 5
      WHERE i.item IS NULL GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': not a star: NOT EXISTS with a clause over both sides',
    'SELECT count(*) FROM sf_fact f
      WHERE NOT EXISTS (SELECT 1 FROM sf_store s WHERE s.store = f.store AND s.zone > f.qty)',
    'GpuStarAgg', false);
  -- the LEFT JOIN made an anti join still shows the dimension's columns, all NULL
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': not a star: an anti join whose dimension''s columns are read above it',
    'SELECT i.size, count(*), count(i.size) FROM sf_fact f LEFT JOIN sf_item i ON f.item = i.item
      WHERE i.item IS NULL GROUP BY 1', 'GpuStarAgg', false);
END $$;
SELECT * FROM pg_temp.in_each_mode('anti_joins');

-- a group key wider than 64 bits is a hash of its fields, under which two
-- groups may collide (made certain by keeping 2 bits of it): the star carries
-- the alternative, which runs then
SET LOCAL max_parallel_workers_per_gather = 0;
SET LOCAL gpuhash.force = on;
SELECT ok(pg_temp.plan_text('SELECT f.item, f.store, d.yr, count(*) FROM sf_fact f
                               JOIN sf_day d ON f.day = d.day GROUP BY 1, 2, 3')
          ~ 'GpuStarAgg\)[\s\S]*->  \w*Aggregate',
          'a group key that may be hashed: the star carries the alternative');
SELECT ok(pg_temp.plan_text('SELECT f.store, f.delta, d.yr, count(*) FROM sf_fact f
                               JOIN sf_day d ON f.day = d.day GROUP BY 1, 2, 3')
          !~ '->  \w*Aggregate',
          'a group key packed (dimension codes counted by the table''s rows): no alternative');
RESET gpuhash.force;
CREATE FUNCTION pg_temp.key_collisions(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  q text := 'SELECT f.item, f.store, d.yr, count(*), sum(f.qty), max(f.delta) FROM sf_fact f
               JOIN sf_day d ON f.day = d.day GROUP BY 1, 2, 3 HAVING count(*) > 1';
  qt text := 'SELECT f.item, f.mode, count(*), min(f.qty) FROM sf_fact f
                JOIN sf_store s ON f.store = s.store WHERE s.region <> ''C'' GROUP BY 1, 2';
BEGIN
  PERFORM set_config('gpuhash.force', 'on', true);
  RETURN NEXT pg_temp.analyzed_shows(q, 'Alternative Plan: not needed[\s\S]*Group Key Form: hashed',
                                      tag || ': a hashed key without collisions, the star runs');
  PERFORM set_config('gpuhash.debug_star_key_bits', '2', true);
  RETURN QUERY SELECT * FROM pg_temp.alternative_runs(tag || ', groups collided under a hashed key', q,
    'two groups collided under one hashed key');
  RETURN QUERY SELECT * FROM pg_temp.alternative_runs(tag || ', groups with wide text collided', qt,
    'two groups collided under one hashed key');
  PERFORM set_config('gpuhash.debug_star_key_bits', '0', true);
END $$;
SELECT * FROM pg_temp.in_each_mode('key_collisions');
-- the program compiled at plan time but not with the dimensions as read (more
-- codes than estimated widen the key): the alternative where the star carries
-- one, else a clear error
CREATE FUNCTION pg_temp.compile_fails(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  q text := 'SELECT s.region, count(*), sum(f.amount), max(f.qty) FROM sf_fact f
               JOIN sf_store s ON f.store = s.store GROUP BY 1';
  qn text := 'SELECT f.store, f.delta, d.yr, count(*) FROM sf_fact f
                JOIN sf_day d ON f.day = d.day GROUP BY 1, 2, 3';
BEGIN
  PERFORM set_config('gpuhash.force', 'on', true);
  PERFORM set_config('gpuhash.debug_star_compile_fails', 'on', true);
  RETURN QUERY SELECT * FROM pg_temp.alternative_runs(tag || ', the program does not compile at run time', q,
    'the program does not compile for the dimensions read');
  RETURN NEXT throws_ok(qn, '0A000', 'GpuStarAgg could not compile its program for the dimensions read',
                        tag || ': no alternative carried, a clear error');
  PERFORM set_config('gpuhash.debug_star_compile_fails', 'off', true);
END $$;
SELECT * FROM pg_temp.in_each_mode('compile_fails');
-- a dimension joined of two tables (read in shares by every process where its
-- join has a partial plan), and one whose key is a grouping column: each of
-- its rows is a group, its code the row's number (its values not hashed)
CREATE FUNCTION pg_temp.joined_dimensions(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  q text := 'SELECT z.zname, b.grp, count(*), sum(f.qty), sum(b.price) FROM sf_fact f
               JOIN sf_big b ON f.id = b.k JOIN sf_zone z ON b.w = z.zone
              WHERE z.zone % 5 <> 2 GROUP BY 1, 2';
  qr text := 'SELECT b.k, z.zname, b.grp, b.price, count(*), sum(f.qty), max(f.qty) FROM sf_fact f
                JOIN sf_big b ON f.id = b.k JOIN sf_zone z ON b.w = z.zone
               WHERE f.qty > 40 GROUP BY 1, 2, 3, 4';
  qs text := 'SELECT i.item, i.brand, count(*), sum(f.qty) FROM sf_fact f
                JOIN sf_item i ON f.item = i.item WHERE i.size < 20 GROUP BY 1, 2';
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a dimension joined of two tables', q, 'GpuStarAgg');
  -- the same with PostgreSQL's join below the star (a Parallel Hash Join in parallel)
  PERFORM set_config('gpuhash.enable_join', 'off', true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a dimension joined by PostgreSQL', q, 'GpuStarAgg');
  PERFORM set_config('gpuhash.enable_join', 'on', true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a group per row of a joined dimension', qr, 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a group per row of a table', qs, 'GpuStarAgg');
  RETURN NEXT ok(pg_temp.plan_text(qr) ~ 'Dimensions: sf_big \(a group per row\) on'
                 AND pg_temp.plan_text(q) !~ 'a group per row',
                 tag || ': EXPLAIN says which dimension has a group per row');
  IF current_setting('max_parallel_workers_per_gather')::int > 0 THEN
    RETURN NEXT pg_temp.analyzed_shows(q, 'Parallel Seq Scan on sf_(big|zone) [^\n]*loops=[23]\)',
                                        tag || ': every process reads a share of the joined dimension');
  ELSE
    RETURN NEXT pass(tag || ': no partial plan serially');
  END IF;
END $$;
SET LOCAL gpuhash.force = on;
SELECT * FROM pg_temp.in_each_mode('joined_dimensions');
RESET gpuhash.force;

-- partitioned fact tables (star_fact.c): the partitions planning keeps, read
-- one after another, in parallel each shared by the processes; rows of one
-- partition not all-visible (read on the CPU)
INSERT INTO sf_part SELECT * FROM sf_fact WHERE id % 40 = 0 AND day >= 2000 AND day < 2500;
CREATE FUNCTION pg_temp.partitioned_facts(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a partitioned fact table',
    'SELECT d.yr, s.region, count(*), sum(f.amount), avg(f.qty), min(f.shipped)
       FROM sf_part f JOIN sf_day d ON f.day = d.day JOIN sf_store s ON f.store = s.store
      GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', partitions pruned to one partitioned one',
    'SELECT s.region, i.cat, count(*), sum(f.qty * f.delta), max(f.ratio)
       FROM sf_part f JOIN sf_store s ON f.store = s.store JOIN sf_item i ON f.item = i.item
      WHERE f.day >= 1200 AND f.day < 1900 GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a partitioned fact table, a qual on the CPU',
    'SELECT d.season, count(*), sum(f.amount)
       FROM sf_part f JOIN sf_day d ON f.day = d.day
      WHERE upper(f.mode) LIKE ''%AIR%'' GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a partitioned table alone',
    'SELECT f.flag, count(*), sum(f.qty), sum(f.amount) FROM sf_part f GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', an inheritance tree',
    'SELECT s.region, count(*), sum(f.amount), min(f.day)
       FROM sf_inh f JOIN sf_store s ON f.store = s.store GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a partition laid out otherwise',
    'SELECT s.region, count(*), sum(f.qty) FROM sf_lay f JOIN sf_store s ON f.store = s.store
      GROUP BY 1', 'GpuStarAgg', false);
END $$;
SET LOCAL gpuhash.force = on;
SELECT * FROM pg_temp.in_each_mode('partitioned_facts');
-- dimensions read from their pages: plain columns in runs, a column modulo a
-- constant, a qual the scan checks row by row, a grouping value of thousands
-- (two columns by value: the dictionary's memo and its collisions)
CREATE FUNCTION pg_temp.dims_from_pages(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  qruns text := 'SELECT v.w, count(*), sum(f.qty), sum(v.x) FROM sf_fact f JOIN sf_kv v ON f.id = v.k
                  GROUP BY v.w';
  qmemo text := 'SELECT v.c, v.k % 7, count(*), sum(f.qty), max(v.x) FROM sf_fact f
                   JOIN sf_kv v ON f.id = v.k GROUP BY 1, 2';
  qqual text := 'SELECT d.yr, v.w, count(*), sum(f.amount) FROM sf_fact f JOIN sf_kv v ON f.id = v.k
                   JOIN sf_day d ON f.day = d.day WHERE v.x > 10 AND d.yr > 2003 GROUP BY 1, 2';
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', a dimension read from its pages', qruns, 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', thousands of groups of two columns', qmemo, 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', dimensions read from pages with quals', qqual, 'GpuStarAgg');
  RETURN NEXT pg_temp.analyzed_shows(qruns, 'Dimension Pages: shipped=\d+ (.|\n)*Dimension Rows Taken Directly: \d+',
                                      tag || ': EXPLAIN ANALYZE counts the dimension''s pages and rows taken directly');
  PERFORM set_config('gpuhash.read_pages', 'off', true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', the same through the plan', qmemo, 'GpuStarAgg');
  PERFORM set_config('gpuhash.read_pages', 'on', true);
END $$;
SET LOCAL gpuhash.debug_dim_pages_min = 1;
SELECT * FROM pg_temp.in_each_mode('dims_from_pages');
-- varlenas read from the pages: pointers into them, the pages pinned while
-- their rows are taken (in runs, through a projection, under a qual)
CREATE FUNCTION pg_temp.varlena_dims_from_pages(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  qruns text := 'SELECT t.name, t.tag, count(*), sum(f.qty), sum(t.p), max(t.g) FROM sf_fact f
                   JOIN sf_tv t ON f.id = t.k GROUP BY 1, 2';
  qtoast text := 'SELECT md5(t.note), t.g, count(*), sum(f.qty), sum(t.p * f.qty) FROM sf_fact f
                    JOIN sf_tv t ON f.id = t.k GROUP BY t.note, t.g';
  qqual text := 'SELECT t.name, count(*), sum(f.amount) FROM sf_fact f JOIN sf_tv t ON f.id = t.k
                  WHERE t.name LIKE ''%1%'' AND t.tag <> ''cd'' AND length(t.note) > 6 GROUP BY 1';
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', varlenas of a dimension from its pages', qruns, 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', compressed and out-of-line values', qtoast, 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', quals on varlenas row by row', qqual, 'GpuStarAgg');
  RETURN NEXT pg_temp.analyzed_shows(qruns, 'Dimension Pages: shipped=\d+ (.|\n)*Dimension Rows Taken Directly: \d+',
                                      tag || ': a dimension of varlenas is taken from its pages in runs');
  PERFORM set_config('gpuhash.read_pages', 'off', true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', varlenas through the plan', qtoast, 'GpuStarAgg');
  PERFORM set_config('gpuhash.read_pages', 'on', true);
END $$;
SELECT * FROM pg_temp.in_each_mode('varlena_dims_from_pages');
SELECT ok(pg_temp.plan_text('SELECT i.brand, count(*) FROM sf_fact f JOIN sf_item i ON f.item = i.item
                              GROUP BY 1', true) ~ 'Dimension Pages: shipped=[1-9]',
          'a dimension of a text column is read from its pages');
SELECT ok(pg_temp.plan_text('SELECT d.yr, count(*) FROM sf_fact f JOIN sf_day d ON f.day = d.day GROUP BY 1', true)
          ~ 'Dimension Pages: shipped=[1-9]',
          'a dimension of integers is read from its pages');
RESET gpuhash.debug_dim_pages_min;
SELECT ok(pg_temp.plan_text('SELECT d.yr, count(*) FROM sf_fact f JOIN sf_day d ON f.day = d.day GROUP BY 1', true)
          !~ 'Dimension Pages',
          'a dimension of fewer pages than the least is read through its plan');

-- snowflakes split (star_path.c, find_components): each table of a snowflake
-- a dimension of its own, looked up by a column of the one it joins (NULL or
-- missing there: no row), against the same with each snowflake one dimension
-- (its join made below the star) and gpuhash off: chains of two and three
-- tables with quals on each, a key of two columns, a parent read in shares,
-- an equality of a split table's key class with another dimension's column
-- (kept: the key holds only its own), one of a split table's other column (first
-- met at that table), a table filtered by the keys of the one it joins (its
-- column NULL: left out), and a LEFT JOIN's snowflake, never split
CREATE FUNCTION pg_temp.snowflakes(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  qs text[] := ARRAY[
    'SELECT z.zname, s.region, count(*), sum(f.qty), sum(f.amount) FROM sf_fact f
       JOIN sf_store s ON f.store = s.store JOIN sf_zone z ON s.zone = z.zone
      WHERE s.manager IS NOT NULL AND z.zone < 40 GROUP BY 1, 2',
    'SELECT d.season, z.zname, count(*), sum(f.qty), max(d.yr) FROM sf_fact f
       JOIN sf_store s ON f.store = s.store JOIN sf_zone z ON s.zone = z.zone
       JOIN sf_day d ON d.day = z.zone WHERE d.holiday IS NOT NULL GROUP BY 1, 2',
    'SELECT p.tag, count(*), sum(p.bonus), sum(f.qty) FROM sf_fact f
       JOIN sf_link l ON f.id = l.id JOIN sf_pair p ON p.store = l.s AND p.day = l.d
      WHERE p.bonus > -35 GROUP BY 1',
    'SELECT s.region, b.grp, count(*), sum(f.qty), sum(b.price) FROM sf_fact f
       JOIN sf_big b ON f.id = b.k JOIN sf_store s ON b.w = s.store GROUP BY 1, 2',
    'SELECT z.zname, i.cat, count(*), sum(f.qty) FROM sf_fact f, sf_store s, sf_zone z, sf_item i
      WHERE f.store = s.store AND s.zone = z.zone AND f.item = i.item AND i.size = z.zone
      GROUP BY 1, 2',
    'SELECT d.yr, z.zname, count(*), sum(f.amount) FROM sf_fact f JOIN sf_day d ON f.day = d.day
       LEFT JOIN (sf_store s JOIN sf_zone z ON s.zone = z.zone) ON f.store = s.store
      GROUP BY 1, 2',
    'SELECT d.season, i.cat, count(*), sum(f.qty) FROM sf_fact f JOIN sf_store s ON f.store = s.store
       JOIN sf_day d ON d.day = s.zone JOIN sf_item i ON f.item = i.item
      WHERE i.size = d.yr - 2000 GROUP BY 1, 2',
    'SELECT s.region, z.zname, count(*), sum(f.qty), sum(s.store) FROM sf_fact f
       JOIN sf_store s ON f.store = s.store JOIN sf_zone z ON s.zone = z.zone
      WHERE z.zone % 5 = 1 GROUP BY 1, 2'];
  how text;
BEGIN
  FOREACH how IN ARRAY ARRAY['split', 'whole'] LOOP
    PERFORM set_config('gpuhash.debug_snowflakes', how, true);
    FOR i IN 1 .. array_length(qs, 1) LOOP
      RETURN QUERY SELECT * FROM pg_temp.same_rows(format('%s, %s: snowflake %s', tag, how, i), qs[i], 'GpuStarAgg');
    END LOOP;
  END LOOP;
  PERFORM set_config('gpuhash.debug_snowflakes', 'split', true);
  RETURN NEXT ok(pg_temp.plan_text(qs[2]) ~ 'Dimensions: sf_store on \(f\.store = s\.store\), sf_zone on \(s\.zone = z\.zone\), sf_day on \(s\.zone = d\.day\)',
                 tag || ': split, EXPLAIN shows each table a dimension joined to its parent');
  RETURN NEXT ok(pg_temp.plan_text(qs[3]) ~ 'sf_pair on \(\(l\.s = p\.store\) AND \(l\.d = p\.day\)\)',
                 tag || ': split, a key of two columns of the parent');
  RETURN NEXT ok(pg_temp.plan_text(qs[5]) ~ 'Device Join Filter: \(([sz]\.zone = i\.size|i\.size = [sz]\.zone)\)',
                 tag || ': split, the equality with another dimension is the device''s');
  -- (in parallel sf_zone is read in shares: no source)
  IF current_setting('max_parallel_workers_per_gather')::int = 0 THEN
    RETURN NEXT ok(pg_temp.plan_text(qs[8]) ~ 'sf_store on \(f\.store = s\.store\), filtered by sf_zone''s keys',
                   tag || ': split, a table filtered by the keys of the one it is joined to');
    RETURN NEXT pg_temp.analyzed_shows(qs[8], 'sf_store on \(f\.store = s\.store\), filtered by sf_zone''s keys: \d+ rows, [1-9]\d* filtered out',
                                        tag || ': split, rows of the parent left out by its child''s keys');
  ELSE
    RETURN NEXT pass(tag || ': a source read in shares filters nothing');
    RETURN NEXT pass(tag || ': so no row is left out');
  END IF;
  -- read from its pages, rows checked one by one: a NULL column never passes
  PERFORM set_config('gpuhash.debug_dim_pages_min', '1', true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ', split, the parent read from its pages, filtered by its child''s keys',
                                               qs[8], 'GpuStarAgg');
  PERFORM set_config('gpuhash.debug_dim_pages_min', '0', true);
  PERFORM set_config('gpuhash.debug_snowflakes', 'whole', true);
  RETURN NEXT ok(pg_temp.plan_text(qs[2]) !~ 'sf_zone on',
                 tag || ': whole, the snowflake is one dimension');
  PERFORM set_config('gpuhash.debug_snowflakes', 'auto', true);
END $$;
SELECT * FROM pg_temp.in_each_mode('snowflakes');

-- a generic plan: the Append prunes its partitions by the parameter as the
-- executor starts
SET LOCAL plan_cache_mode = force_generic_plan;
SET LOCAL max_parallel_workers_per_gather = 0;
PREPARE sf_part_q(int) AS
  SELECT d.yr, count(*), sum(f.amount) FROM sf_part f JOIN sf_day d ON f.day = d.day
   WHERE f.day >= $1 GROUP BY 1;
CREATE FUNCTION pg_temp.part_rows(lo int) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  r text;
BEGIN
  EXECUTE format('SELECT md5(string_agg(x::text, ''|'' ORDER BY x::text)) FROM (%s) x',
                 'SELECT d.yr, count(*), sum(f.amount) FROM sf_part f JOIN sf_day d ON f.day = d.day
                   WHERE f.day >= $1 GROUP BY 1') USING lo INTO r;
  RETURN r;
END $$;
SELECT ok(pg_temp.plan_text('EXECUTE sf_part_q(2100)') ~ 'GpuStarAgg(.|\n)*Subplans Removed: 3',
          'generic plan: GpuStarAgg over the partitions the parameter leaves');
SELECT set_config('gpuhash.enabled', 'off', true) IS NOT NULL AS off;
CREATE TEMP TABLE part_off AS SELECT pg_temp.part_rows(2100) AS r;
SELECT set_config('gpuhash.enabled', 'on', true) IS NOT NULL AS on;
SELECT is(pg_temp.part_rows(2100), (SELECT r FROM part_off), 'generic plan: same rows with gpuhash on and off');
RESET gpuhash.force;

SELECT * FROM finish();
ROLLBACK;

DROP TABLE sf_big, sf_fact, sf_day, sf_item, sf_store, sf_empty, sf_multi, sf_pair, sf_pair8,
           sf_store_nk, sf_big_nk, sf_day_na, sf_zone, sf_part, sf_inh, sf_inh_1, sf_inh_2, sf_lay,
           sf_fresh, sf_kv, sf_tv, sf_link;
