-- schema.sql: the tables of the differential fuzzer (fuzz.py), schema fz: a
-- fact table of 200,000 rows with NULLs, skewed and missing keys, extremes and
-- a column added after the load (short tuples); dimensions with and without
-- primary keys, duplicate and NULL keys, an empty one, a snowflake; a copy
-- of the fact table with dead and updated rows, and a partitioned copy.
DROP SCHEMA IF EXISTS fz CASCADE;
CREATE SCHEMA fz;
SET search_path = fz;
-- dimension with PK
CREATE TABLE d1 (k int4 PRIMARY KEY, name text, grp int4, w numeric(15,2), dt date, flag bool, cat text, g5 int4, i8 int8);
INSERT INTO d1 SELECT g, 'name' || (g % 37), g % 10,
  CASE WHEN g % 13 = 0 THEN NULL ELSE (g * 7 % 1000) / 100.0 END,
  date '2020-01-01' + (g % 400),
  CASE WHEN g % 11 = 0 THEN NULL ELSE g % 2 = 0 END,
  CASE WHEN g % 17 = 0 THEN NULL ELSE (ARRAY['red','green','blue','Red ','gr%en'])[1 + g % 5] END,
  CASE WHEN g % 19 = 0 THEN NULL ELSE g % 7 END,
  g::int8 * 1000000007
FROM generate_series(1, 1000) g;
-- dimension without PK, unique int2 keys, some null keys
CREATE TABLE d2 (k int2, label text, v int4, m numeric(10,3), ts timestamp);
INSERT INTO d2 SELECT CASE WHEN g % 50 = 0 THEN NULL ELSE g END, 'L' || (g % 9), g * 3 - 100,
  CASE WHEN g % 7 = 0 THEN NULL ELSE g / 8.0 END,
  timestamp '2021-03-04 05:06:07' + g * interval '37 minutes'
FROM generate_series(-20, 300) g;
-- dimension without PK, duplicate int8 keys
CREATE TABLE d3 (k int8, s text, v int4, n numeric(12,4));
INSERT INTO d3 SELECT g % 150, 's' || (g % 4), g, g / 3.0 FROM generate_series(1, 200) g;
-- empty dimension
CREATE TABLE d4 (k int4 PRIMARY KEY, s text, v int4);
-- date dimension
CREATE TABLE dd (d date PRIMARY KEY, yr int4, mon int4, q text, wk int4, hol bool);
INSERT INTO dd SELECT d::date, extract(year FROM d)::int, extract(month FROM d)::int,
   'Q' || extract(quarter FROM d), extract(week FROM d)::int, extract(dow FROM d) IN (0,6)
FROM generate_series(date '2019-06-01', date '2022-12-31', interval '1 day') d;
-- snowflake: d1.g5 -> d5.g
CREATE TABLE d5 (g int4 PRIMARY KEY, gname text, gv int8);
INSERT INTO d5 SELECT g, 'G' || g, g * 100 FROM generate_series(0, 5) g;
-- timestamp dimension
CREATE TABLE dt (t timestamp PRIMARY KEY, hr int4, label text);
INSERT INTO dt SELECT t, extract(hour FROM t)::int, 'h' || extract(hour FROM t) FROM generate_series(timestamp '2021-01-01', timestamp '2021-03-01', interval '1 hour') t;
-- fact table: skewed keys, nulls
CREATE TABLE f (id int8, k1 int4, k2 int2, k3 int8, kd date, kt timestamp,
  i2 int2, i4 int4, i8 int8, n numeric(15,2), nu numeric, fl float8, t text, b bool, d date);
INSERT INTO f SELECT g,
  CASE WHEN g % 23 = 0 THEN NULL WHEN g % 3 = 0 THEN 1 + (g % 7) WHEN g % 5 = 0 THEN 1001 + g % 10 ELSE 1 + (hashint8(g) & 1023) END,
  CASE WHEN g % 29 = 0 THEN NULL ELSE ((hashint8(g * 3) & 511) - 100)::int2 END,
  CASE WHEN g % 31 = 0 THEN NULL ELSE (hashint8(g * 5) & 255)::int8 END,
  CASE WHEN g % 37 = 0 THEN NULL ELSE date '2019-01-01' + (hashint8(g * 7) & 2047) END,
  CASE WHEN g % 41 = 0 THEN NULL ELSE timestamp '2021-01-01' + ((hashint8(g * 11) & 2047)) * interval '1 hour' END,
  CASE WHEN g % 43 = 0 THEN NULL ELSE ((hashint8(g * 13) & 65535) - 32768)::int2 END,
  CASE WHEN g % 47 = 0 THEN NULL WHEN g % 1000 = 1 THEN 2147483600 + (g % 40)::int ELSE (hashint8(g * 17) % 100000)::int4 END,
  CASE WHEN g % 53 = 0 THEN NULL WHEN g % 997 = 0 THEN 9223372036854775000 ELSE hashint8(g * 19)::int8 * 1000 END,
  CASE WHEN g % 59 = 0 THEN NULL ELSE (hashint8(g * 23) % 10000000) / 100.0 END,
  CASE WHEN g % 61 = 0 THEN NULL ELSE (hashint8(g * 29) % 100000) / 1000.0 END,
  CASE WHEN g % 67 = 0 THEN NULL ELSE (hashint8(g * 31) % 1000) / 8.0 END,
  CASE WHEN g % 71 = 0 THEN NULL ELSE (ARRAY['alpha','beta','gamma','delta','','x y'])[1 + (g % 6)] END,
  CASE WHEN g % 73 = 0 THEN NULL ELSE g % 3 = 0 END,
  CASE WHEN g % 79 = 0 THEN NULL ELSE date '2020-06-01' + (g % 500) END
FROM generate_series(1, 200000) g;
-- small fact
CREATE TABLE fs (id int4, k1 int4, k2 int2, v int4, n numeric(15,2));
INSERT INTO fs SELECT g, CASE WHEN g % 5 = 0 THEN NULL ELSE g % 20 END, (g % 30)::int2, g % 17 - 8, g / 7.0 FROM generate_series(1, 3000) g;
VACUUM ANALYZE;

ALTER TABLE f ADD COLUMN ktz timestamptz;
UPDATE f SET ktz = CASE WHEN id % 43 = 0 THEN NULL ELSE timestamptz '2021-03-10 00:00:00+00' + ((hashint8(id * 41) & 4095)) * interval '17 minutes' END;
VACUUM (FREEZE, ANALYZE) f;
-- non-vacuumed copy with dead and updated rows
DROP TABLE IF EXISTS fv;
CREATE TABLE fv (LIKE f);
ALTER TABLE fv SET (autovacuum_enabled = off);
INSERT INTO fv SELECT * FROM f;
DELETE FROM fv WHERE id % 10 = 3;
UPDATE fv SET i4 = i4 + 1, n = n + 1 WHERE id % 10 = 4;
BEGIN; UPDATE fv SET k1 = 5 WHERE id % 100 = 7; ROLLBACK;
ANALYZE fv;
-- partitioned copy
DROP TABLE IF EXISTS fp;
CREATE TABLE fp (LIKE f) PARTITION BY RANGE (d);
CREATE TABLE fp1 PARTITION OF fp FOR VALUES FROM (MINVALUE) TO ('2020-09-01');
CREATE TABLE fp2 PARTITION OF fp FOR VALUES FROM ('2020-09-01') TO ('2021-03-01');
CREATE TABLE fp3 PARTITION OF fp FOR VALUES FROM ('2021-03-01') TO ('2021-06-01');
CREATE TABLE fpd PARTITION OF fp DEFAULT;
INSERT INTO fp SELECT * FROM f;
VACUUM ANALYZE fp;
-- dimension keyed by timestamptz
CREATE TABLE dz (z timestamptz PRIMARY KEY, zl text, zh int4);
INSERT INTO dz SELECT z, 'z' || (extract(epoch FROM z)::int8 / 3600 % 7), extract(epoch FROM z)::int8 % 100
FROM generate_series(timestamptz '2021-03-10 00:00:00+00', timestamptz '2021-04-30 00:00:00+00', interval '17 minutes') z;
ANALYZE dz;
