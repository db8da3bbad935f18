-- pgTAP: gpuhash's SQL functions, gpuhash_devices(), gpuhash_service() and gpuhash_bench(), and
-- its settings.  What pg_regress output cannot say: SQLSTATEs of every bad
-- argument, behaviour that depends on whether a GPU is present (checked both
-- ways, whichever this machine has), and that a long benchmark stops on
-- cancel.
BEGIN;
SELECT plan(73);

-- ---- the extension's objects ----
SELECT has_extension('gpuhash');
SELECT has_function('gpuhash_devices', ARRAY[]::text[]);
SELECT has_function('gpuhash_bench',
                    ARRAY['text', 'bigint', 'text', 'text', 'integer', 'double precision', 'text']);
SELECT function_returns('gpuhash_devices', ARRAY[]::text[], 'setof record');
SELECT function_returns('gpuhash_bench',
                        ARRAY['text', 'bigint', 'text', 'text', 'integer', 'double precision', 'text'],
                        'setof gpuhash_bench_result');
SELECT function_lang_is('gpuhash_bench',
                        ARRAY['text', 'bigint', 'text', 'text', 'integer', 'double precision', 'text'], 'c');
SELECT volatility_is('gpuhash_bench',
                     ARRAY['text', 'bigint', 'text', 'text', 'integer', 'double precision', 'text'], 'volatile');
SELECT has_composite('gpuhash_bench_result');
SELECT columns_are('gpuhash_bench_result',
                   ARRAY['structure', 'operation', 'keys', 'device', 'milliseconds',
                         'mkeys_per_s', 'gb_per_s', 'devices', 'device_id', 'exchange_ms']);
SELECT col_type_is('gpuhash_bench_result', 'keys', 'bigint');
SELECT col_type_is('gpuhash_bench_result', 'milliseconds', 'double precision');

-- ---- gpuhash_service ----
SELECT has_function('gpuhash_service', ARRAY[]::text[]);
SELECT is(pg_get_function_result('gpuhash_service()'::regprocedure),
          'TABLE(worker integer, pid integer, requests bigint, objects integer, engines integer, '
          'operation text, device_bytes bigint, page_cache_bytes bigint, page_cache_pages bigint, '
          'page_cache_hits bigint, page_cache_misses bigint)',
          'gpuhash_service() returns the documented columns');
SELECT is((SELECT count(*) FROM gpuhash_service()),
          CASE WHEN current_setting('shared_preload_libraries') ~ 'gpuhash'
               THEN current_setting('gpuhash.service_workers')::bigint ELSE 0 END,
          'gpuhash_service(): a row per service worker when preloaded, none otherwise');

-- ---- gpuhash_devices ----
SELECT lives_ok('SELECT * FROM gpuhash_devices()', 'gpuhash_devices() runs with or without a GPU');
SELECT is(pg_get_function_result('gpuhash_devices()'::regprocedure),
          'TABLE(id integer, name text, compute_capability text, sm_count integer, '
          'memory_total_mb bigint, memory_free_mb bigint, driver_version text, runtime_version text)',
          'gpuhash_devices() returns the documented columns');
SELECT is((SELECT count(*) FROM gpuhash_devices() WHERE memory_free_mb > memory_total_mb), 0::bigint,
          'no device has more free memory than it has memory');
SELECT is((SELECT count(DISTINCT id) FROM gpuhash_devices()), (SELECT count(*) FROM gpuhash_devices()),
          'device ids are distinct');
SELECT lives_ok('SELECT count(*) FROM gpuhash_devices(); SELECT count(*) FROM gpuhash_devices()',
                'gpuhash_devices() can be called again in the same session');

-- ---- gpuhash_bench on the CPU backend ----
CREATE TEMP TABLE cpu_run AS
  SELECT * FROM gpuhash_bench(keys => 4096, device => 'cpu', repetitions => 1);

SELECT results_eq(
  'SELECT structure, operation FROM cpu_run',
  $$VALUES ('hashgraph', 'build'), ('hashgraph', 'probe'), ('hashgraph', 'join'),
           ('bcht', 'build'), ('bcht', 'find_hit'), ('bcht', 'find_miss'),
           ('hash_agg', 'aggregate'), ('hash_agg', 'aggregate_few')$$,
  'all: one row per structure and operation, in a fixed order');
SELECT is((SELECT count(*) FROM cpu_run WHERE keys = 4096 AND device = 'cpu'), 8::bigint,
          'every row names the size and the CPU backend');
SELECT ok((SELECT bool_and(milliseconds > 0 AND milliseconds < 60000) FROM cpu_run),
          'every time is positive and finite');
SELECT ok((SELECT bool_and(mkeys_per_s > 0 AND gb_per_s > 0) FROM cpu_run),
          'every rate is positive');
SELECT ok((SELECT bool_and(abs(mkeys_per_s * milliseconds * 1e3 - keys) <= 1e-6 * keys) FROM cpu_run),
          'mkeys_per_s = keys / milliseconds / 1000');

SELECT set_eq(
  $$SELECT structure FROM gpuhash_bench(operation => 'build', keys => 512, device => 'cpu', repetitions => 1)$$,
  ARRAY['hashgraph', 'bcht'],
  'operation => build measures both tables');
SELECT set_eq(
  $$SELECT operation FROM gpuhash_bench(structure => 'hashgraph', keys => 512, device => 'cpu', repetitions => 1)$$,
  ARRAY['build', 'probe', 'join'],
  'structure => hashgraph: build, probe, join');
SELECT set_eq(
  $$SELECT operation FROM gpuhash_bench(structure => 'bcht', keys => 512, device => 'cpu', repetitions => 1)$$,
  ARRAY['build', 'find_hit', 'find_miss'],
  'structure => bcht: build, find_hit, find_miss');
SELECT set_eq(
  $$SELECT structure || '/' || operation FROM gpuhash_bench('aggregate', 512, 'all', 'cpu', 1)$$,
  ARRAY['hash_agg/aggregate'],
  'operation => aggregate: the hash aggregation');
SELECT set_eq(
  $$SELECT structure || '/' || operation FROM gpuhash_bench('aggregate_few', 512, 'all', 'cpu', 1)$$,
  ARRAY['hash_agg/aggregate_few'],
  'operation => aggregate_few: the hash aggregation into few groups');
SELECT is_empty(
  $$SELECT * FROM gpuhash_bench('find_miss', 512, 'hashgraph', 'cpu', 1)$$,
  'a structure without the operation gives no rows');
SELECT is((SELECT count(*) FROM gpuhash_bench(keys => 1, device => 'cpu', repetitions => 1)), 8::bigint,
          'a single key is a valid benchmark');
SELECT lives_ok($$SELECT * FROM gpuhash_bench('build', 3000, 'bcht', 'cpu', 3, 0.99)$$,
                'BCHT builds at load factor 0.99');
SELECT lives_ok($$SELECT * FROM gpuhash_bench('build', 3000, 'bcht', 'cpu', 1, 0.01)$$,
                'BCHT builds at load factor 0.01');
SELECT lives_ok($$SELECT * FROM gpuhash_bench('join', 3000, 'all', 'cpu', 100)$$,
                '100 repetitions are allowed');

-- ---- several (simulated) devices ----
CREATE TEMP TABLE multi_run AS
  SELECT * FROM gpuhash_bench('join', 50000, 'hashgraph', 'cpu', 1, devices => '0,1,2');
SELECT results_eq(
  'SELECT device_id, devices, exchange_ms >= 0 FROM multi_run',
  $$VALUES (NULL::int, '0,1,2', true), (0, '0,1,2', NULL), (1, '0,1,2', NULL), (2, '0,1,2', NULL)$$,
  'devices => 0,1,2: a row for the whole join with its exchange time, then one per device');
SELECT is((SELECT sum(keys) FROM multi_run WHERE device_id IS NOT NULL),
          (SELECT keys FROM multi_run WHERE device_id IS NULL)::numeric,
          'the devices'' keys add up to the keys of the whole join');
SELECT throws_ok($$SELECT * FROM gpuhash_bench('build', 100, 'all', 'cpu', 1, devices => '0,0')$$,
                 '22023', 'invalid devices "0,0"', 'a device listed twice is an error');

-- ---- device selection: GPU present or not ----
SELECT CASE WHEN (SELECT count(*) FROM gpuhash_devices()) = 0 THEN
  throws_ok($$SELECT * FROM gpuhash_bench(keys => 4096, device => 'gpu', repetitions => 1)$$,
            '0A000', 'gpuhash found no usable GPU',
            'device => gpu without a GPU is a clear error')
ELSE
  is((SELECT count(*) FROM gpuhash_bench(keys => 4096, device => 'gpu', repetitions => 1)
      WHERE device = 'gpu' AND milliseconds > 0
        AND (device_id IS NULL OR devices = device_id::text)), 8::bigint,
     'device => gpu measures every operation on the GPU')
END;
SELECT is(
  (SELECT array_agg(DISTINCT device ORDER BY device)
   FROM gpuhash_bench(keys => 4096, device => 'all', repetitions => 1)),
  CASE WHEN (SELECT count(*) FROM gpuhash_devices()) = 0 THEN ARRAY['cpu'] ELSE ARRAY['cpu', 'gpu'] END,
  'device => all: the CPU, and the GPU where there is one');
SELECT CASE WHEN (SELECT count(*) FROM gpuhash_devices()) = 0 THEN
  throws_ok($$SELECT * FROM gpuhash_bench(keys => 67108865)$$, '22023',
            'keys must be at most 67108864 for the CPU backend',
            'device => all without a GPU is held to the CPU limit')
ELSE
  pass('device => all with a GPU skips the CPU above its limit (not run: it is slow)')
END;

-- ---- bad arguments: SQLSTATE and message ----
SELECT throws_ok($$SELECT * FROM gpuhash_bench(operation => 'insert', device => 'cpu')$$,
                 '22023', 'unknown operation "insert"', 'unknown operation');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(structure => 'slabhash', device => 'cpu')$$,
                 '22023', 'unknown structure "slabhash"', 'unknown structure');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(device => 'tpu')$$,
                 '22023', 'unknown device "tpu"', 'unknown device');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(operation => '', device => 'cpu')$$,
                 '22023', 'unknown operation ""', 'empty operation');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 0, device => 'cpu')$$,
                 '22023', 'keys must be between 1 and 2147483648', 'keys = 0');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => -1, device => 'cpu')$$,
                 '22023', 'keys must be between 1 and 2147483648', 'negative keys');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 2147483649, device => 'gpu')$$,
                 '22023', 'keys must be between 1 and 2147483648', 'keys above 2^31');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 67108865, device => 'cpu')$$,
                 '22023', 'keys must be at most 67108864 for the CPU backend', 'keys above the CPU limit');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 10, device => 'cpu', repetitions => 0)$$,
                 '22023', 'repetitions must be between 1 and 100', 'repetitions = 0');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 10, device => 'cpu', repetitions => 101)$$,
                 '22023', 'repetitions must be between 1 and 100', 'repetitions = 101');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 10, device => 'cpu', load_factor => 0)$$,
                 '22023', 'load_factor must be greater than 0 and at most 0.99', 'load_factor = 0');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 10, device => 'cpu', load_factor => 0.995)$$,
                 '22023', 'load_factor must be greater than 0 and at most 0.99', 'load_factor above 0.99');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 10, device => 'cpu', load_factor => 'NaN')$$,
                 '22023', 'load_factor must be greater than 0 and at most 0.99', 'load_factor NaN');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(keys => 10, device => 'cpu', load_factor => 'Infinity')$$,
                 '22023', 'load_factor must be greater than 0 and at most 0.99', 'load_factor infinite');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(NULL)$$,
                 '22004', 'arguments of gpuhash_bench must not be null', 'NULL operation');
SELECT throws_ok($$SELECT * FROM gpuhash_bench(device => NULL)$$,
                 '22004', 'arguments of gpuhash_bench must not be null', 'NULL device');

-- ---- cancel: a long benchmark stops between runs ----
CREATE FUNCTION pg_temp.cancel_state(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'finished';
EXCEPTION WHEN query_canceled THEN
  RETURN SQLSTATE;
END $$;
CREATE TEMP TABLE cancel_clock (started timestamptz);
INSERT INTO cancel_clock VALUES (clock_timestamp());
SET LOCAL statement_timeout = '300ms';
SELECT is(pg_temp.cancel_state(
            $$SELECT * FROM gpuhash_bench(keys => 4194304, device => 'cpu', repetitions => 100)$$),
          '57014', 'statement_timeout cancels a long benchmark');
SET LOCAL statement_timeout = 0;
SELECT cmp_ok((SELECT clock_timestamp() - started FROM cancel_clock), '<', interval '60 seconds',
              'the benchmark stopped soon after the cancel (uninterrupted it runs for minutes)');
SELECT lives_ok($$SELECT * FROM gpuhash_bench(keys => 100, device => 'cpu', repetitions => 1)$$,
                'the session works after a cancelled benchmark');

-- ---- settings ----
SELECT is((SELECT count(*) FROM pg_settings WHERE name LIKE 'gpuhash.%'
           AND name NOT IN ('gpuhash.service_workers', 'gpuhash.register_buffers')),
          22::bigint, 'twenty-two settings, and two more where gpuhash is preloaded');
SELECT is((SELECT count(*) FROM pg_settings WHERE name IN ('gpuhash.service_workers', 'gpuhash.register_buffers')),
          CASE WHEN current_setting('shared_preload_libraries') ~ 'gpuhash' THEN 2 ELSE 0 END::bigint,
          'gpuhash.service_workers and gpuhash.register_buffers exist exactly where gpuhash is preloaded (server-start settings)');
SELECT set_eq($$SELECT name FROM pg_settings WHERE name LIKE 'gpuhash.%'
                AND name NOT IN ('gpuhash.service_workers', 'gpuhash.register_buffers')$$,
              ARRAY['gpuhash.enabled', 'gpuhash.enable_join', 'gpuhash.enable_groupby', 'gpuhash.enable_fusion',
                    'gpuhash.device', 'gpuhash.hash_table', 'gpuhash.devices', 'gpuhash.min_rows',
                    'gpuhash.memory_limit', 'gpuhash.chunk_rows', 'gpuhash.force', 'gpuhash.service',
                    'gpuhash.enable_pool', 'gpuhash.read_pages', 'gpuhash.ship_pages',
                    'gpuhash.pool_pages', 'gpuhash.enable_star', 'gpuhash.cpu_fallback',
                    'gpuhash.max_memory', 'gpuhash.memory_wait', 'gpuhash.page_cache_size',
                    'gpuhash.unique_key_estimates'],
              'the documented settings');
SELECT is((SELECT coalesce(array_agg(name ORDER BY name), '{}') FROM pg_settings WHERE name LIKE 'gpuhash.%' AND context <> 'user'),
          CASE WHEN current_setting('shared_preload_libraries') ~ 'gpuhash'
               THEN ARRAY['gpuhash.max_memory', 'gpuhash.page_cache_size', 'gpuhash.register_buffers', 'gpuhash.service_workers']
               ELSE ARRAY['gpuhash.max_memory', 'gpuhash.page_cache_size'] END::text[],
          'every setting but max_memory (superusers), page_cache_size (the server''s configuration), service_workers and register_buffers (set at server start) can be changed by any user in a session');
SELECT is((SELECT unit FROM pg_settings WHERE name = 'gpuhash.memory_limit'), 'MB',
          'memory_limit is in megabytes');
SELECT throws_ok($$SET gpuhash.device = 'tpu'$$, '22023', NULL, 'device takes auto, gpu or cpu');
SELECT throws_ok($$SET gpuhash.hash_table = 'cuckoo'$$, '22023', NULL, 'hash_table takes auto, hashgraph or bcht');
SELECT throws_ok($$SET gpuhash.devices = '0,,1'$$, '22023', NULL, 'devices: empty entry');
SELECT throws_ok($$SET gpuhash.devices = '3,3'$$, '22023', NULL, 'devices: repeated GPU');
SELECT throws_ok($$SET gpuhash.devices = 'first'$$, '22023', NULL, 'devices: not a number');
SELECT lives_ok($$SET LOCAL gpuhash.devices = '0, 1'$$, 'devices: a list with spaces');
SELECT throws_ok($$SET gpuhash.memory_limit = '-1'$$, '22023', NULL, 'memory_limit is not negative');
SELECT throws_ok($$SET gpuhash.chunk_rows = 0$$, '22023', NULL, 'chunk_rows is at least 1');
SELECT throws_ok($$SET gpuhash.enable_joins = on$$, '42602', NULL, 'the gpuhash prefix is reserved');

SELECT * FROM finish();
ROLLBACK;
