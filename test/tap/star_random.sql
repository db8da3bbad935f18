-- GpuStarAgg over queries a seeded generator makes: one to four dimensions
-- out of five (a primary key, none but unique data, none and no statistics of
-- a small table, a semi or anti join's right side holding keys twice, a LEFT
-- JOIN's (its values in WHERE and GROUP BY through COALESCE, IS NULL, LIKE), a
-- subquery grouped on its key), each joined or left out at random,
-- with random quals on the dimensions and the fact table, grouping columns
-- from both, and two or three aggregates of fact expressions (numeric,
-- integer, CASE, FILTER, numeric min and max; a text key of no declared
-- length).  The fact table has NULL keys, keys no dimension holds and a
-- skewed date.  Every query runs with gpuhash off, then forced serial,
-- parallel, parallel with the leader not taking part, and serial on several
-- devices (three simulated by the CPU backend; on a GPU machine, its GPUs),
-- each reading its share of the fact table's pages: the same rows each time
-- (a test per mode, naming the queries that differ), and most queries must be
-- stars (so that a generator that makes none cannot pass).
SET client_min_messages = warning;
DROP TABLE IF EXISTS rs_fact, rs_day, rs_item, rs_shop, rs_tag, rs_promo;
SELECT setseed(0.3141);
CREATE TABLE rs_day (day int PRIMARY KEY, yr int, mon int, qtr text);
INSERT INTO rs_day SELECT g, 2000 + g / 365, g % 12 + 1, 'Q' || (g % 4 + 1)
  FROM generate_series(0, 2000) g;
-- no key: unique by its statistics, checked as it is read
CREATE TABLE rs_item (item int, brand text, cat text, size int, price numeric(8,2));
INSERT INTO rs_item SELECT g, 'b' || (g % 30), CASE WHEN g % 11 = 0 THEN NULL ELSE 'c' || (g % 5) END,
                           g % 40, (g % 997) / 3.0
  FROM generate_series(1, 3000) g;
CREATE TABLE rs_shop (shop int PRIMARY KEY, region text NOT NULL, city text);
INSERT INTO rs_shop SELECT g, (ARRAY['N', 'S', 'E', 'W'])[g % 4 + 1],
                           CASE WHEN g % 13 = 0 THEN NULL ELSE 'city' || (g % 17) END
  FROM generate_series(1, 200) g;
-- keys twice: only ever the right side of a semi join
CREATE TABLE rs_tag (item int, tag text);
INSERT INTO rs_tag SELECT g % 700, 't' || (g % 7) FROM generate_series(1, 2500) g;
-- no key and never analyzed
CREATE TABLE rs_promo (shop int, promo text);
INSERT INTO rs_promo SELECT g, CASE WHEN g % 3 = 0 THEN 'none' ELSE 'p' || (g % 5) END
  FROM generate_series(1, 150) g;
CREATE TABLE rs_fact (id int, day int, item int, shop int, qty int, amount numeric(10,2),
                      disc numeric(4,2), flag int, note text);
INSERT INTO rs_fact
  SELECT g, CASE WHEN g % 50 = 0 THEN NULL ELSE (power(random(), 2) * 2000)::int END,
         CASE WHEN g % 37 = 0 THEN NULL ELSE (random() * 3100)::int END,
         (random() * 210)::int, (random() * 50)::int,
         CASE WHEN g % 29 = 0 THEN NULL ELSE (random() * 10000)::numeric(10,2) END,
         (g % 11) / 100.0, CASE WHEN g % 7 = 0 THEN NULL ELSE g % 5 END,
         CASE WHEN g % 19 = 0 THEN NULL WHEN g % 5 = 0 THEN 'a note ' || (g % 9) ELSE 'n' || (g % 3) END
  FROM generate_series(1, 40000) g;
VACUUM (FREEZE, ANALYZE) rs_fact, rs_day, rs_item, rs_shop, rs_tag;
VACUUM (FREEZE) rs_promo;

BEGIN;
SELECT plan(5);
SET LOCAL gpuhash.enable_star = on;
SET LOCAL statement_timeout = '5min';
\ir lib/helpers.sql

-- n queries, the same ones on every run (setseed)
CREATE FUNCTION pg_temp.rs_queries(n int) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  dims text[] := ARRAY['day', 'item', 'shop', 'tag', 'promo'];
  pick text;
  q text;
  sel text[];
  frm text[];
  cond text[];
  grp text[];
  qaggs text[];
  aggs text[] := ARRAY['sum(f.amount)', 'count(*)', 'avg(f.qty)', 'min(f.qty)', 'max(f.qty)',
                       'sum(f.amount * f.disc)', 'sum(f.amount * (1 - f.disc))', 'count(f.flag)',
                       'sum(f.qty) FILTER (WHERE f.disc > 0.04)',
                       'sum(CASE WHEN f.qty > 25 THEN f.amount ELSE 0 END)', 'min(f.amount)',
                       'max(f.disc) FILTER (WHERE f.qty > 10)'];
  fquals text[] := ARRAY['f.qty < 30', 'f.disc BETWEEN 0.02 AND 0.07', '(f.qty > 40 OR f.flag = 1)',
                         'f.flag IS NOT NULL', 'f.amount > 500', 'f.id % 3 <> 1'];
  fgroups text[] := ARRAY['f.flag', 'f.qty / 10', 'f.shop % 4', 'f.note'];
BEGIN
  PERFORM setseed(0.2718);
  FOR i IN 1..n LOOP
    sel := '{}'; frm := ARRAY['rs_fact f']; cond := '{}'; grp := '{}'; qaggs := aggs;
    FOREACH pick IN ARRAY dims LOOP
      CONTINUE WHEN random() < 0.45;
      CASE pick
        WHEN 'day' THEN
          frm := frm || 'rs_day d'::text; cond := cond || 'f.day = d.day'::text;
          IF random() < 0.5 THEN cond := cond || (ARRAY['d.yr BETWEEN 2001 AND 2003', 'd.mon IN (1, 6, 12)', 'd.qtr <> ''Q2'''])[1 + floor(random() * 3)::int]; END IF;
          IF random() < 0.6 THEN grp := grp || (ARRAY['d.yr', 'd.qtr', 'd.mon'])[1 + floor(random() * 3)::int]; END IF;
        WHEN 'item' THEN
          frm := frm || 'rs_item i'::text; cond := cond || 'f.item = i.item'::text;
          IF random() < 0.5 THEN cond := cond || (ARRAY['i.cat = ''c2''', 'i.size > 20', 'i.brand LIKE ''b1%'''])[1 + floor(random() * 3)::int]; END IF;
          IF random() < 0.6 THEN grp := grp || (ARRAY['i.cat', 'i.brand', 'i.size / 10'])[1 + floor(random() * 3)::int]; END IF;
          IF random() < 0.3 THEN qaggs := qaggs || 'sum(f.qty * i.price)'::text; END IF;
        WHEN 'shop' THEN
          IF random() < 0.3 THEN
            frm[1] := frm[1] || ' LEFT JOIN rs_shop s ON f.shop = s.shop AND s.region <> ''N''';
            IF random() < 0.4 THEN cond := cond || (ARRAY['(s.city IS NULL OR s.city LIKE ''city1%'')', 'COALESCE(s.city, ''city2'') <> ''city3'''])[1 + floor(random() * 2)::int]; END IF;
            IF random() < 0.6 THEN grp := grp || (ARRAY['s.region', 's.city', 'COALESCE(s.city, ''none'')', 'COALESCE(s.region, ''S'')'])[1 + floor(random() * 4)::int]; END IF;
          ELSE
            frm := frm || 'rs_shop s'::text; cond := cond || 'f.shop = s.shop'::text;
            IF random() < 0.5 THEN cond := cond || (ARRAY['s.region = ''N''', 's.city IS NOT NULL', 's.region IN (''E'', ''W'')'])[1 + floor(random() * 3)::int]; END IF;
            IF random() < 0.6 THEN grp := grp || (ARRAY['s.region', 's.city'])[1 + floor(random() * 2)::int]; END IF;
          END IF;
        WHEN 'tag' THEN
          cond := cond || (ARRAY['f.item IN (SELECT t.item FROM rs_tag t WHERE t.tag <> ''t3'')',
                                 'EXISTS (SELECT 1 FROM rs_tag t WHERE t.item = f.item)',
                                 'NOT EXISTS (SELECT 1 FROM rs_tag t WHERE t.item = f.item AND t.tag = ''t1'')'])[1 + floor(random() * 3)::int];
        WHEN 'promo' THEN
          frm := frm || '(SELECT shop, min(promo) AS promo FROM rs_promo GROUP BY shop) p'::text;
          cond := cond || 'f.shop = p.shop'::text;
          IF random() < 0.5 THEN grp := grp || 'p.promo'::text; END IF;
      END CASE;
    END LOOP;
    IF random() < 0.5 THEN cond := cond || fquals[1 + floor(random() * array_length(fquals, 1))::int]; END IF;
    IF random() < 0.3 THEN grp := grp || fgroups[1 + floor(random() * array_length(fgroups, 1))::int]; END IF;
    SELECT coalesce(array_agg(DISTINCT x), '{}') INTO grp FROM unnest(grp) x;
    sel := grp;
    FOR k IN 1..2 + floor(random() * 2)::int LOOP
      sel := sel || qaggs[1 + floor(random() * array_length(qaggs, 1))::int];
    END LOOP;
    q := 'SELECT ' || array_to_string(sel, ', ') || ' FROM ' || array_to_string(frm, ', ');
    IF cardinality(cond) > 0 THEN q := q || ' WHERE ' || array_to_string(cond, ' AND '); END IF;
    IF cardinality(grp) > 0 THEN
      q := q || ' GROUP BY ' || array_to_string(grp, ', ');
      IF random() < 0.2 THEN q := q || ' HAVING count(*) > 3'; END IF;
    END IF;
    RETURN NEXT q;
  END LOOP;
END $$;

CREATE TEMP TABLE rs_runs (n int, q text, mode text, digest text, star boolean);

CREATE FUNCTION pg_temp.rs_run(mode text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  q text;
  n int := 0;
  p text;
BEGIN
  PERFORM set_config('gpuhash.enabled', (mode <> 'off')::text, true);
  PERFORM set_config('gpuhash.force', (mode <> 'off')::text, true);
  PERFORM set_config('max_parallel_workers_per_gather', CASE WHEN mode IN ('off', 'serial', 'devices') THEN '0' ELSE '2' END, true);
  PERFORM set_config('parallel_setup_cost', CASE WHEN mode IN ('off', 'serial', 'devices') THEN '1000' ELSE '0' END, true);
  PERFORM set_config('parallel_tuple_cost', CASE WHEN mode IN ('off', 'serial', 'devices') THEN '0.1' ELSE '0' END, true);
  PERFORM set_config('min_parallel_table_scan_size', '0', true);
  PERFORM set_config('parallel_leader_participation', (mode <> 'leaderless')::text, true);
  PERFORM set_config('gpuhash.devices',
                     CASE WHEN mode = 'devices' AND current_setting('gpuhash.device') = 'cpu'
                          THEN '0,1,2' ELSE 'all' END, true);
  FOR q IN SELECT * FROM pg_temp.rs_queries(60) LOOP
    n := n + 1;
    p := CASE WHEN mode = 'serial' THEN pg_temp.plan_text(q) ELSE '' END;
    INSERT INTO rs_runs VALUES (n, q, mode, pg_temp.rows_digest(q), p ~ 'GpuStarAgg');
  END LOOP;
  PERFORM set_config('parallel_leader_participation', 'on', true);
  PERFORM set_config('gpuhash.devices', 'all', true);
END $$;

SELECT pg_temp.rs_run(m) FROM unnest(ARRAY['off', 'serial', 'parallel', 'leaderless', 'devices']) m;

SELECT is((SELECT coalesce(string_agg(r.n || ' (' || r.digest || ' against ' || o.digest || '): ' || r.q, E'\n' ORDER BY r.n), '')
             FROM rs_runs r JOIN rs_runs o ON o.n = r.n AND o.mode = 'off'
            WHERE r.mode = m AND r.digest IS DISTINCT FROM o.digest), '',
          format('random stars, forced %s: PostgreSQL''s rows for every query', m))
  FROM unnest(ARRAY['serial', 'parallel', 'leaderless', 'devices']) m;
SELECT cmp_ok((SELECT count(*)::int FROM rs_runs WHERE mode = 'serial' AND star), '>=', 50,
              'random stars: at least 50 of the 60 queries are GpuStarAggs');

SELECT * FROM finish();
ROLLBACK;

DROP TABLE rs_fact, rs_day, rs_item, rs_shop, rs_tag, rs_promo;
