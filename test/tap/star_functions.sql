-- Differential tests of the date and time functions GpuStarAgg evaluates on
-- the device (star_compile.c, c_datefunc; GH_OP_DATEPART): EXTRACT and
-- date_part of every field it computes, date_trunc to every unit it
-- truncates to, a date cast to a timestamp, and the days between two dates,
-- of timestamptz too in time zones of one offset; abs(), NULLIF, GREATEST,
-- LEAST, numerics made doubles, min and max of numerics; round, floor, ceil
-- and trunc of floats and numerics, floats and numerics made integers,
-- timestamps made dates, mod(); and of the fact
-- table's grouping columns it packs beside integers, dates and short text: numerics of a declared
-- scale and date_part's doubles.  Every query runs with gpuhash off and
-- forced on and must return the same rows, and the "on" plan must use
-- GpuStarAgg.  The dates span 4000 BC to 5874897 AD, the timestamps 4000 BC
-- to 294276 AD; a second table holds infinite dates and timestamps, where
-- PostgreSQL's answer is not an integer (EXTRACT's infinity) or is an error:
-- the node runs its alternative plan there and gives PostgreSQL's rows or
-- error, as it does for a numeric beyond 2^53 made a double.
SET client_min_messages = warning;
DROP TABLE IF EXISTS sfn_fact, sfn_inf, sfn_store;
SELECT setseed(0.31);
CREATE TABLE sfn_store (store int PRIMARY KEY, region text, rate numeric(6,2));
INSERT INTO sfn_store
  SELECT g, (ARRAY['N', 'S', 'E', NULL])[g % 4 + 1],
         CASE WHEN g % 9 = 0 THEN NULL ELSE (g * 7 % 23 - 11) * 0.25 END
  FROM generate_series(0, 40) g;
CREATE TABLE sfn_fact (id int, store int, d date, ts timestamp, f8 float8,
                       n numeric(10,3), n0 numeric(12,0), v int, tz timestamptz, i4 int,
                       nb numeric(20,0), f4 float4);
INSERT INTO sfn_fact
  SELECT g, g % 45,
         CASE WHEN g % 41 = 0 THEN NULL
              WHEN g % 7 = 0 THEN date '4000-01-01 BC' + (random() * 2000000)::int
              WHEN g % 11 = 0 THEN date '5874897-12-31' - (random() * 2000000)::int
              ELSE date '1990-01-01' + (random() * 20000)::int END,
         CASE WHEN g % 43 = 0 THEN NULL
              WHEN g % 5 = 0 THEN timestamp '4000-01-01 00:00 BC' + random() * interval '80000000 days'
              WHEN g % 13 = 0 THEN timestamp '294276-12-31 23:59:59' - random() * interval '200000 days'
              ELSE timestamp '1999-12-31 23:00' + random() * interval '3000 days' END,
         (ARRAY[0.0, -0.0, 'NaN', '-Infinity', 'Infinity', 1.5, -2.25, NULL, 1e300,
                -1e-300]::float8[])[1 + g % 10],
         CASE WHEN g % 13 = 0 THEN NULL ELSE ((g % 2001) - 1000) / 7.0 END,
         CASE WHEN g % 17 = 0 THEN NULL ELSE (g % 300)::int8 * 1000000007 - 150000000000 END,
         g % 10, NULL, CASE WHEN g % 1000 = 0 THEN -2147483648 ELSE g - 30000 END,
         CASE WHEN g % 500 = 0 THEN 12345678901234567890 ELSE g::int8 * 1000003 END,
         CASE WHEN g % 19 = 0 THEN NULL WHEN g % 7 = 3 THEN '-0'::float4 ELSE (g % 7 - 3) * 0.75 END
  FROM generate_series(1, 60000) g;
UPDATE sfn_fact SET tz = ts AT TIME ZONE 'America/New_York' WHERE ts > timestamp '1000-01-01';
-- the same with infinite dates and timestamps among them
CREATE TABLE sfn_inf AS SELECT * FROM sfn_fact;
UPDATE sfn_inf SET n = 'NaN' WHERE id % 89 = 0;
UPDATE sfn_inf SET d = CASE WHEN id % 2 = 0 THEN 'infinity' ELSE '-infinity' END::date,
                   ts = CASE WHEN id % 3 = 0 THEN '-infinity' ELSE 'infinity' END::timestamp
 WHERE id % 97 = 0;
VACUUM (FREEZE, ANALYZE) sfn_store, sfn_fact, sfn_inf;

BEGIN;
SELECT plan(191);
SET LOCAL gpuhash.enable_star = on;
SET LOCAL gpuhash.min_rows = 0;

\ir lib/digests.sql
\ir lib/helpers.sql

CREATE FUNCTION pg_temp.function_cases(tag text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' EXTRACT of every field of a date',
    'SELECT extract(year FROM f.d), extract(quarter FROM f.d), s.region, count(*),
            sum(extract(month FROM f.d)), sum(extract(day FROM f.d)), sum(extract(dow FROM f.d)),
            sum(extract(isodow FROM f.d)), sum(extract(doy FROM f.d)), avg(extract(doy FROM f.d))
       FROM sfn_fact f JOIN sfn_store s ON f.store = s.store GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' ISO weeks and years of dates, in the key',
    'SELECT extract(isoyear FROM f.d), extract(week FROM f.d), extract(dow FROM f.d), count(*), sum(f.v)
       FROM sfn_fact f GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' EXTRACT of a timestamp''s fields, hours and minutes',
    'SELECT extract(hour FROM f.ts), extract(minute FROM f.ts) < 30, count(*),
            sum(extract(year FROM f.ts)), sum(extract(week FROM f.ts)), sum(extract(isoyear FROM f.ts)),
            sum(extract(doy FROM f.ts)), avg(extract(isodow FROM f.ts))
       FROM sfn_fact f GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' date_part: doubles, of timestamps and dates',
    'SELECT date_part(''dow'', f.ts), date_part(''month'', f.d), count(*),
            sum(date_part(''year'', f.d)), sum(date_part(''hour'', f.d)), avg(date_part(''minute'', f.ts))
       FROM sfn_fact f WHERE f.d < date ''294276-01-01'' GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' date_trunc to years, quarters, months and weeks',
    'SELECT date_trunc(''year'', f.ts), date_trunc(''quarter'', f.ts), s.region, count(*),
            min(date_trunc(''month'', f.ts)), max(date_trunc(''week'', f.ts))
       FROM sfn_fact f JOIN sfn_store s ON f.store = s.store GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' date_trunc to days, hours, minutes and seconds',
    'SELECT date_trunc(''day'', f.ts), count(*), min(date_trunc(''hour'', f.ts)),
            max(date_trunc(''minute'', f.ts)), min(date_trunc(''second'', f.ts))
       FROM sfn_fact f GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' units spelled as PostgreSQL also reads them',
    'SELECT date_trunc(''MONS'', f.ts), date_trunc(''weeks'', f.ts) < timestamp ''2001-01-01'',
            extract(YEARS FROM f.d), count(*)
       FROM sfn_fact f GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a date cast to a timestamp, truncated, in a qual',
    'SELECT date_trunc(''month'', f.d::timestamp), count(*) FROM sfn_fact f
      WHERE f.d < date ''294276-01-01'' AND date_trunc(''year'', f.d::timestamp) <> timestamp ''2000-01-01''
      GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' days between dates: sums, a qual, a key',
    'SELECT (f.d - date ''2000-01-01'') % 7, count(*), sum(f.d - date ''1990-01-01''),
            min(date ''2020-02-29'' - f.d)
       FROM sfn_fact f JOIN sfn_store s ON f.store = s.store
      WHERE f.d - date ''1999-06-01'' > -5000000 GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' date_part''s doubles as keys, with a dimension''s',
    'SELECT date_part(''year'', f.ts), s.region, date_part(''isodow'', f.d), count(*)
       FROM sfn_fact f JOIN sfn_store s ON f.store = s.store WHERE f.d < date ''294276-01-01''
      GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a float column as a key',
    'SELECT f.f8, count(*), sum(f.v) FROM sfn_fact f GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' numeric keys of a declared scale, negative and NULL',
    'SELECT f.n, f.n0, count(*), sum(f.v) FROM sfn_fact f GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' min and max of numerics of a declared scale, of the fact and a dimension',
    'SELECT s.region, f.v, min(f.n), max(f.n), min(f.n0), max(f.n0), max(s.rate), min(s.rate),
            min(f.n) FILTER (WHERE f.n IS NULL), max(f.n0) FILTER (WHERE f.v > 4), count(*)
       FROM sfn_fact f JOIN sfn_store s ON f.store = s.store GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' min and max of numerics in HAVING, of no rows',
    'SELECT f.v, max(f.n) FROM sfn_fact f WHERE f.n0 > 0 GROUP BY 1 HAVING min(f.n) < -100
     UNION ALL SELECT -1, max(f.n) FROM sfn_fact f WHERE f.v > 100', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' min and max of numerics in a correlated subquery, run again per row',
    'SELECT f.v, (SELECT max(s.rate) - min(s.rate) FROM sfn_store s WHERE s.store > f.v * 3)
       FROM (SELECT DISTINCT v FROM sfn_fact) f', 'SubPlan');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a numeric NaN''s maximum: the alternative''s rows',
    'SELECT f.v, max(f.n), min(f.n) FROM sfn_inf f GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: min of a numeric of no declared scale',
    'SELECT f.v, min(f.n * 2) FROM sfn_fact f GROUP BY 1', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: max of a numeric of 20 digits',
    'SELECT f.v, max(f.nb) FROM sfn_fact f GROUP BY 1', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a numeric key with a dimension''s, in a qual',
    'SELECT f.n, s.region, count(*) FROM sfn_fact f JOIN sfn_store s ON f.store = s.store
      WHERE f.n > -50 GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' infinite dates and timestamps: the alternative''s rows',
    'SELECT extract(year FROM f.d), extract(month FROM f.ts), count(*) FROM sfn_inf f GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' date_trunc of infinite values',
    'SELECT date_trunc(''month'', f.ts), count(*) FROM sfn_inf f
      WHERE f.ts < timestamp ''2000-06-01'' OR f.ts = ''infinity'' GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' not a star: a field the device does not compute',
    'SELECT extract(epoch FROM f.d), count(*) FROM sfn_fact f GROUP BY 1', 'GpuStarAgg', false);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' abs() of integers, numerics and floats (-0 made 0)',
    'SELECT abs(f.v - 5), count(*), sum(abs(f.n)), max(abs(f.f8)), min(abs(f.f8)), sum(abs(f.i4)),
            sum(abs(f.f8)) FILTER (WHERE f.f8 = 0)
       FROM sfn_fact f WHERE f.i4 > -2147483648 GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' NULLIF of integers and numerics',
    'SELECT f.v, sum(f.i4 / NULLIF(f.id % 7, 0)), count(NULLIF(f.n, 0)), sum(NULLIF(f.n, 1.000)),
            count(*) FILTER (WHERE NULLIF(f.v, 3) IS NULL)
       FROM sfn_fact f GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' GREATEST and LEAST (NULLs left out, numerics'' scales kept)',
    'SELECT greatest(f.v, 4), least(f.v, 7, f.store), count(*), sum(greatest(f.n, 1.5555, NULL)),
            sum(least(f.n, f.n0, 2)), max(greatest(f.f8, -1)), min(least(f.d, date ''2000-01-01'')),
            count(greatest(f.n, NULL))
       FROM sfn_fact f GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' numerics made doubles (the nearest, as PostgreSQL''s)',
    'SELECT f.v, max(f.n::float8), min(f.n0::float8 / 3), count(*) FILTER (WHERE f.n::float8 > 12.5),
            max((f.n * f.n)::float8), min((f.v * 0.1)::float8)
       FROM sfn_fact f GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a numeric beyond 2^53 made a double: the alternative''s rows',
    'SELECT f.v, max(f.nb::float8), min(f.nb::float8) FROM sfn_fact f GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' round, floor, ceil and trunc of floats (-0, NaN, infinities; ties to even)',
    'SELECT f.v, count(*), max(round(f.f8)), min(floor(f.f8)), max(ceil(f.f8)), min(trunc(f.f8)),
            max(ceiling(f.f8)), sum(round(f.v * 0.5::float8)), sum(trunc(f.n::float8)),
            count(*) FILTER (WHERE floor(f.f8) = -3), sum(round(f.f8)) FILTER (WHERE f.f8 < 2), avg(trunc(f.f8)) FILTER (WHERE f.f8 < 2),
            sum(-0.0::float8 * f.v), avg(-0.0::float8 * f.v)
       FROM sfn_fact f GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' round and trunc of numerics to scales, floor and ceil (ties away from zero), in the key',
    'SELECT round(f.n), trunc(f.n0, -6), count(*), sum(round(f.n, 1)), sum(trunc(f.n, 2)),
            sum(round(f.n, -1)), sum(floor(f.n)), sum(ceil(f.n)), sum(round(f.v * 0.5)),
            sum(round(f.n * 0.5, 2)), sum(round(f.n, 5)), sum(ceiling(f.n)), sum(trunc(f.n)),
            sum(round(f.n0, -2)), sum(round(f.n, 0)), count(*) FILTER (WHERE round(f.n, 1) = 0.5)
       FROM sfn_fact f GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' floats and numerics made integers (ties to even, ties away), in the key',
    'SELECT f.n::int, (f.v * 0.5)::float8::int, count(*), sum(f.n0::int8), sum(f.n::int2),
            sum((f.v * 1.5)::int8), sum((f.v * 2.5)::float8::int2)
       FROM sfn_fact f WHERE f.f8 IS NOT NULL GROUP BY 1, 2', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' timestamps made dates: in the key and a qual',
    'SELECT f.ts::date, count(*), min(f.ts::date), sum(f.ts::date - date ''2000-01-01'')
       FROM sfn_fact f WHERE f.ts::date > date ''1999-12-31'' GROUP BY 1', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' infinite timestamps made dates: the alternative''s rows',
    'SELECT f.ts::date < date ''2000-01-01'', count(*) FROM sfn_inf f GROUP BY 1', 'GpuStarAgg');
  -- floats in the key: NaN (one group), infinities, NULL, a group of -0s alone
  -- (shown -0), of a float8 and a float4; where a group holds both 0 and -0
  -- it shows its first row's, which only PostgreSQL's plan tells: the
  -- alternative runs (serially: in parallel PostgreSQL's first row varies)
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' floats in the key: NaN, infinities, NULL, -0s alone',
    'SELECT f.f8 * 2, (f.v - 5) / -4.0::float8, f.f4, count(*), sum(f.v), min(f.f8)
       FROM sfn_fact f WHERE f.f8 <> 0 OR f.f8 IS NULL GROUP BY 1, 2, 3', 'GpuStarAgg');
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a float key beside a dimension''s, packed',
    'SELECT s.region, f.v / 4.0::float8, count(*) FROM sfn_fact f JOIN sfn_store s ON f.store = s.store
      WHERE f.v < 9 GROUP BY 1, 2', 'GpuStarAgg');
  RETURN NEXT matches(pg_temp.plan_text('SELECT f.f8 * 2, f.f4, (f.v - 5) / -4.0::float8, count(*)
                                          FROM sfn_fact f GROUP BY 1, 2, 3', true),
                      'Alternative Plan: not needed',
                      tag || ' floats in the key: the groups are the device''s');
  IF tag LIKE 'serial%' THEN
    RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' a float key''s group of 0 and -0: the alternative''s rows',
      'SELECT f.f8 * 0, count(*), sum(f.v) FROM sfn_fact f GROUP BY 1', 'GpuStarAgg');
    RETURN NEXT matches(pg_temp.plan_text('SELECT f.f8 * 0, count(*) FROM sfn_fact f GROUP BY 1', true),
                        'Alternative Plan: ran: a group of a float grouping column held both 0 and -0',
                        tag || ' EXPLAIN ANALYZE says why the alternative ran');
  ELSE
    RETURN NEXT skip('a group of 0 and -0 shows the first row PostgreSQL''s parallel plan meets', 3);
  END IF;
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ' mod() of integers',
    'SELECT mod(f.v, 3), count(*), sum(mod(f.i4, 7)), sum(mod(f.id::int8, -5)), sum(mod(f.v::int2, 4::int2))
       FROM sfn_fact f GROUP BY 1', 'GpuStarAgg');
  RETURN NEXT is(pg_temp.rows_digest('SELECT sum(f.f8::int) FROM sfn_fact f'),
                 'error 22003: integer out of range',
                 tag || ' a float''s NaN, infinity or 1e300 made an integer: PostgreSQL''s error');
  RETURN NEXT is(pg_temp.rows_digest('SELECT sum(f.nb::int8) FROM sfn_fact f'),
                 'error 22003: bigint out of range',
                 tag || ' a numeric past the bigints made one: PostgreSQL''s error');
  RETURN NEXT is(pg_temp.rows_digest('SELECT sum(mod(f.v, f.v - f.v)) FROM sfn_fact f'),
                 'error 22012: division by zero',
                 tag || ' mod() by zero: PostgreSQL''s error');
  RETURN NEXT is(pg_temp.rows_digest('SELECT sum(abs(f.i4)) FROM sfn_fact f'),
                 'error 22003: integer out of range',
                 tag || ' abs() of the smallest integer: PostgreSQL''s error');
  -- PostgreSQL's errors, from the alternative plan
  RETURN NEXT is(pg_temp.rows_digest('SELECT sum(f.d - date ''2000-01-01'') FROM sfn_inf f'),
                 'error 22008: cannot subtract infinite dates',
                 tag || ' days to an infinite date: PostgreSQL''s error');
  RETURN NEXT is(pg_temp.rows_digest('SELECT date_trunc(''month'', f.d::timestamp), count(*) FROM sfn_fact f GROUP BY 1'),
                 'error 22008: date out of range for timestamp',
                 tag || ' a date past the timestamps: PostgreSQL''s error');
  RETURN NEXT is(pg_temp.rows_digest('SELECT date_trunc(''week'', f.ts), count(*) FROM sfn_fact f
                                       WHERE f.ts < timestamp ''4714-11-30 BC'' GROUP BY 1'),
                 '0 ' || md5(''),
                 tag || ' nothing before the first timestamp');
END $$;

-- a timestamptz's fields are those of its local time: on the device where the
-- session's time zone has one offset, PostgreSQL's own plan where it has several
CREATE FUNCTION pg_temp.zone_cases(zone text, star boolean) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  tag text := 'time zone ' || zone;
BEGIN
  PERFORM set_config('timezone', zone, true);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': date_trunc of a timestamptz, in the key',
    'SELECT date_trunc(''week'', f.tz), date_trunc(''hour'', f.tz) < timestamptz ''2001-01-01 12:00+00'',
            count(*), min(date_trunc(''day'', f.tz)), max(date_trunc(''month'', f.tz))
       FROM sfn_fact f GROUP BY 1, 2', 'GpuStarAgg', star);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': EXTRACT and date_part of a timestamptz',
    'SELECT extract(hour FROM f.tz), extract(dow FROM f.tz), count(*), sum(date_part(''doy'', f.tz)),
            sum(extract(minute FROM f.tz))
       FROM sfn_fact f GROUP BY 1, 2', 'GpuStarAgg', star);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': a timestamptz made a date (its local day)',
    'SELECT f.tz::date, count(*) FROM sfn_fact f GROUP BY 1', 'GpuStarAgg', star);
  RETURN QUERY SELECT * FROM pg_temp.same_rows(tag || ': date_trunc of a date (a timestamptz)',
    'SELECT date_trunc(''month'', f.d), s.region, count(*) FROM sfn_fact f JOIN sfn_store s ON f.store = s.store
      WHERE f.d < date ''294276-01-01'' GROUP BY 1, 2', 'GpuStarAgg', star);
END $$;

SET LOCAL max_parallel_workers_per_gather = 0;
SELECT * FROM pg_temp.function_cases('serial');
SELECT * FROM pg_temp.zone_cases('UTC', true);
SELECT * FROM pg_temp.zone_cases('-08', true);
SELECT * FROM pg_temp.zone_cases('America/New_York', false);

-- a generic plan made in one zone runs in another: compiled for the zone of the
-- execution, or PostgreSQL's own plan where that zone's offset changes
SET LOCAL gpuhash.force = on;
SET LOCAL plan_cache_mode = force_generic_plan;
SET LOCAL timezone = 'UTC';
PREPARE sfn_zone AS SELECT date_trunc('month', f.tz), count(*) FROM sfn_fact f GROUP BY 1;
CREATE FUNCTION pg_temp.prepared_rows() RETURNS TABLE (m timestamptz, n bigint)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE 'EXECUTE sfn_zone';
END $$;
-- the prepared statement's rows in zone, or (prepared false) those of the same
-- query planned afresh with gpuhash off
CREATE FUNCTION pg_temp.zone_rows(zone text, prepared boolean) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
  r text;
BEGIN
  PERFORM set_config('timezone', zone, true);
  IF prepared THEN
    SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) INTO r FROM pg_temp.prepared_rows() x;
  ELSE
    PERFORM set_config('gpuhash.enabled', 'off', true);
    SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) INTO r
      FROM (SELECT date_trunc('month', f.tz), count(*) FROM sfn_fact f GROUP BY 1) x;
    PERFORM set_config('gpuhash.enabled', 'on', true);
  END IF;
  RETURN r;
END $$;
SELECT ok(pg_temp.plan_text('EXECUTE sfn_zone') ~ 'GpuStarAgg', 'the generic plan is a GpuStarAgg');
SELECT is(pg_temp.zone_rows('+03', true), pg_temp.zone_rows('+03', false),
          'a generic plan of UTC run at +03: the same rows as PostgreSQL''s');
SELECT is(pg_temp.zone_rows('America/New_York', true), pg_temp.zone_rows('America/New_York', false),
          'a generic plan of UTC run in a zone of changing offsets: the same rows as PostgreSQL''s');
DEALLOCATE sfn_zone;
RESET plan_cache_mode;
RESET gpuhash.force;
SET LOCAL timezone = 'UTC';

SET LOCAL statement_timeout = '2min';
SELECT pg_temp.parallel_plans(2);
SELECT * FROM pg_temp.function_cases('parallel');

-- the alternative ran where a row held an infinite value, and not where none did
SET LOCAL gpuhash.force = on;
SELECT matches(pg_temp.plan_text('SELECT extract(year FROM f.d), count(*) FROM sfn_inf f GROUP BY 1', true),
  'Alternative Plan: ran', 'EXPLAIN ANALYZE: the alternative ran for an infinite date');
SELECT doesnt_match(pg_temp.plan_text('SELECT extract(year FROM f.d), count(*) FROM sfn_fact f GROUP BY 1', true),
  'Alternative Plan: ran', 'EXPLAIN ANALYZE: no alternative where every date is finite');
RESET gpuhash.force;

SELECT * FROM finish();
ROLLBACK;

DROP TABLE sfn_fact, sfn_inf, sfn_store;
