-- Sharing the GPU: functions that occupy it or describe the hardware are not
-- for every user; gpuhash.max_memory caps what a session's
-- gpuhash.memory_limit gives an operation; and operations wait for room in
-- device memory that other sessions hold (device_gate.c), at most
-- gpuhash.memory_wait and cancellably, then fall back on the CPU.  The wait
-- needs gpuhash preloaded (its reservations are in shared memory) and runs
-- here on the CPU backend, whose simulated devices gpuhash.debug_device_memory
-- gives a size; a second session (dblink) holds device memory meanwhile.
SET client_min_messages = warning;
DROP TABLE IF EXISTS gv_fact, gv_big;
CREATE TABLE gv_fact AS SELECT g AS id, (g % 5000)::int8 AS k, g % 100 AS v
  FROM generate_series(1, 40000) g;
-- its hash table (about 1 MB) stays in a session's device memory while a cursor is open
CREATE TABLE gv_big AS SELECT g::int8 AS k, g % 7 AS w FROM generate_series(1, 150000) g;
ANALYZE gv_fact, gv_big;
RESET client_min_messages;

BEGIN;
SELECT plan(17);
\ir lib/helpers.sql

-- ---- privileges ----
CREATE ROLE gv_user;
CREATE ROLE gv_monitor IN ROLE pg_monitor;
SELECT ok(NOT has_function_privilege('public', 'gpuhash_bench(text, bigint, text, text, int, float8, text)', 'EXECUTE'),
          'gpuhash_bench is not executable by PUBLIC');
SELECT ok(NOT has_function_privilege('public', 'gpuhash_devices()', 'EXECUTE'),
          'gpuhash_devices is not executable by PUBLIC');
SELECT ok(NOT has_function_privilege('public', 'gpuhash_service()', 'EXECUTE'),
          'gpuhash_service is not executable by PUBLIC');
SET LOCAL ROLE gv_user;
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 1000, device => 'cpu', repetitions => 1)$$,
                 '42501', NULL, 'a user without the grant cannot run gpuhash_bench');
SELECT throws_ok('SELECT * FROM gpuhash_devices()', '42501', NULL,
                 'a user without the grant cannot list the devices');
SELECT throws_ok('SET gpuhash.max_memory = 1024', '42501', NULL,
                 'only superusers set gpuhash.max_memory');
RESET ROLE;
SET LOCAL ROLE gv_monitor;
SELECT lives_ok('SELECT (SELECT count(*) FROM gpuhash_devices()) + (SELECT count(*) FROM gpuhash_service())',
                'members of pg_monitor list the devices and the GPU service');
RESET ROLE;
GRANT EXECUTE ON FUNCTION gpuhash_bench(text, bigint, text, text, int, float8, text) TO gv_user;
SET LOCAL ROLE gv_user;
SELECT lives_ok($$SELECT * FROM gpuhash_bench(keys => 1000, device => 'cpu', repetitions => 1)$$,
                'GRANT EXECUTE lets a user run gpuhash_bench');
RESET ROLE;

-- ---- gpuhash.max_memory ----
SET LOCAL gpuhash.force = on;
SET LOCAL gpuhash.service = off;
SET LOCAL max_parallel_workers_per_gather = 0;
SELECT matches(pg_temp.plan_text('SELECT count(*) FROM gv_fact f JOIN gv_big b ON f.k = b.k', true),
               'Partitions: 1\n', 'without a cap, the join''s table is built in one partition');
SET LOCAL gpuhash.max_memory = 1;
SET LOCAL gpuhash.memory_limit = '1GB';
SELECT matches(pg_temp.plan_text('SELECT count(*) FROM gv_fact f JOIN gv_big b ON f.k = b.k', true),
               'Partitions: ([2-9]|\d\d+)\n', 'gpuhash.max_memory = 1MB caps gpuhash.memory_limit = 1GB: partitions');
SET LOCAL gpuhash.max_memory = 0;
SET LOCAL gpuhash.memory_limit = 0;

-- ---- waiting for room ----
CREATE FUNCTION pg_temp.gv_wait_tests() RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  conn text := 'gv_holder';
  q text := 'SELECT k % 10, count(*), sum(v) FROM gv_fact GROUP BY 1';
  expected text;
  t0 timestamptz;
  p text;
  outcome text;
BEGIN
  IF current_setting('shared_preload_libraries') !~ 'gpuhash' THEN
    RETURN QUERY SELECT skip('gpuhash is not preloaded: operations do not wait for room', 7);
    RETURN;
  END IF;
  CREATE EXTENSION IF NOT EXISTS dblink;
  SET LOCAL gpuhash.enabled = off;
  EXECUTE format('SELECT string_agg(x::text, %L ORDER BY x::text) FROM (%s) x', '|', q) INTO expected;
  SET LOCAL gpuhash.enabled = on;
  -- the other session keeps a join's table (about 1 MB) on its "device" of 4 MB
  PERFORM dblink_connect(conn, format('host=%s port=%s dbname=%s user=%s',
                                      split_part(current_setting('unix_socket_directories'), ',', 1),
                                      current_setting('port'), current_database(), current_user));
  PERFORM dblink_exec(conn, 'SET gpuhash.device = cpu');
  PERFORM dblink_exec(conn, 'SET gpuhash.force = on');
  PERFORM dblink_exec(conn, 'SET gpuhash.service = off');
  PERFORM dblink_exec(conn, 'SET gpuhash.debug_device_memory = 4');
  PERFORM dblink_exec(conn, 'SET max_parallel_workers_per_gather = 0');
  PERFORM dblink_exec(conn, 'BEGIN');
  PERFORM dblink_exec(conn, 'DECLARE c CURSOR FOR SELECT f.id, b.w FROM gv_fact f JOIN gv_big b ON f.k = b.k');
  PERFORM * FROM dblink(conn, 'FETCH 1 FROM c') AS t(id int, w int);
  -- this session's operations may take 4 MB each: 1 + 4 > 4 (on the CPU
  -- backend, whatever the suite runs on: the other session's reservation is there)
  SET LOCAL gpuhash.device = cpu;
  SET LOCAL gpuhash.debug_device_memory = 4;
  SET LOCAL gpuhash.memory_limit = 4;
  SET LOCAL gpuhash.memory_wait = 200;
  p := pg_temp.plan_text(q, true);
  RETURN NEXT matches(p, 'CPU Fallback: out of device memory: no room on the device within gpuhash.memory_wait',
                      'no room within gpuhash.memory_wait: the operation falls back on the CPU');
  RETURN NEXT is((SELECT string_agg(x::text, '|' ORDER BY x::text) FROM (SELECT k % 10, count(*), sum(v) FROM gv_fact GROUP BY 1) x),
                 expected, '... with PostgreSQL''s rows');
  SET LOCAL gpuhash.cpu_fallback = off;
  RETURN NEXT throws_ok(q, '53200', 'gpuhash ran out of device memory',
                        'no room and gpuhash.cpu_fallback off: out of device memory');
  SET LOCAL gpuhash.cpu_fallback = on;
  SET LOCAL gpuhash.memory_wait = '60s';
  PERFORM dblink_send_query(conn, format('SELECT pg_sleep(0.3), pg_cancel_backend(%s)', pg_backend_pid()));
  t0 := clock_timestamp();
  BEGIN
    EXECUTE q;
    outcome := 'finished';
  EXCEPTION WHEN query_canceled THEN
    outcome := 'cancelled';
  END;
  RETURN NEXT is(outcome, 'cancelled', 'a cancel ends the wait');
  RETURN NEXT cmp_ok(clock_timestamp() - t0, '<', interval '10 s', '... at once, not after gpuhash.memory_wait');
  PERFORM * FROM dblink_get_result(conn, false) AS t(x text, y boolean);
  PERFORM * FROM dblink_get_result(conn, false) AS t(x text, y boolean);
  -- the other session closes its cursor after 1 s: the operation waits for it,
  -- then runs on the device
  PERFORM dblink_send_query(conn, 'SELECT pg_sleep(1); CLOSE c; COMMIT');
  t0 := clock_timestamp();
  p := pg_temp.plan_text(q, true);
  RETURN NEXT ok(p !~ 'CPU Fallback' AND clock_timestamp() - t0 > interval '0.5 s',
                 'an operation waits for room another session frees, then runs on the device');
  PERFORM * FROM dblink_get_result(conn, false) AS t(x text);
  PERFORM dblink_disconnect(conn);
  -- alone, an operation never waits, even for more than the device has
  SET LOCAL gpuhash.memory_limit = 16;
  SET LOCAL gpuhash.memory_wait = 0;
  RETURN NEXT ok(pg_temp.plan_text(q, true) !~ 'CPU Fallback',
                 'an operation alone on the device does not wait, whatever it may take');
END $$;
SELECT * FROM pg_temp.gv_wait_tests();

SELECT * FROM finish();
ROLLBACK;
