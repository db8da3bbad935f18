-- gpuhash's SQL functions: gpuhash_devices() and gpuhash_bench().
-- The output must not depend on whether the machine has a GPU, so device rows
-- are only checked for sanity, timings only for being positive, and the
-- benchmark runs on the CPU backend alone.

-- gpuhash_devices: its columns and their types
SELECT pg_get_function_result('gpuhash_devices()'::regprocedure);
SELECT * FROM gpuhash_devices() LIMIT 0;

-- gpuhash_devices answers with or without a GPU (no rows, no error without one)
SELECT count(*) >= 0 AS answered FROM gpuhash_devices();

-- every device it lists is described sensibly
SELECT count(*) FILTER (WHERE id < 0 OR name = '' OR compute_capability !~ '^[0-9]+\.[0-9]+$'
                          OR sm_count <= 0 OR memory_total_mb <= 0
                          OR memory_free_mb NOT BETWEEN 0 AND memory_total_mb
                          OR driver_version !~ '^[0-9]+\.[0-9]+$'
                          OR runtime_version !~ '^[0-9]+\.[0-9]+$') AS odd_devices
FROM gpuhash_devices();

-- gpuhash_bench: its arguments, defaults and result type
SELECT pg_get_function_arguments('gpuhash_bench'::regproc);
SELECT pg_get_function_result('gpuhash_bench'::regproc);
SELECT attname, format_type(atttypid, atttypmod)
FROM pg_attribute
WHERE attrelid = 'gpuhash_bench_result'::regclass AND attnum > 0
ORDER BY attnum;

-- every structure and operation on the CPU backend, one run each
SELECT structure, operation, keys, device,
       milliseconds > 0 AS timed,
       mkeys_per_s > 0 AS keys_rate_positive,
       gb_per_s > 0 AS bandwidth_positive
FROM gpuhash_bench(keys => 4096, device => 'cpu', repetitions => 1);

-- the rates follow from the time: keys per millisecond / 1000 = Mkeys/s
SELECT bool_and(abs(mkeys_per_s - keys / milliseconds / 1e3) <= 1e-9 * mkeys_per_s) AS rates_consistent
FROM gpuhash_bench(keys => 4096, device => 'cpu', repetitions => 3);

-- one operation across structures
SELECT structure, operation, keys, device
FROM gpuhash_bench(operation => 'build', keys => 1000, device => 'cpu', repetitions => 1);

-- one structure, every operation, at the highest load factor
SELECT structure, operation, keys, device, milliseconds > 0 AS timed
FROM gpuhash_bench(structure => 'bcht', keys => 20000, device => 'cpu', repetitions => 2,
                   load_factor => 0.99);

-- positional arguments; the aggregation benchmark
SELECT structure, operation, keys, device
FROM gpuhash_bench('aggregate', 5000, 'hash_agg', 'cpu', 1, 0.5);

-- a structure without that operation: no rows
SELECT count(*) FROM gpuhash_bench('probe', 100, 'bcht', 'cpu', 1);

-- the smallest input
SELECT structure, operation, keys
FROM gpuhash_bench(keys => 1, device => 'cpu', repetitions => 1);

-- several simulated devices: the whole operation (device_id NULL, with the
-- exchange), then each device's share of the keys
SELECT structure, operation, devices, device_id, keys > 0 AS has_keys,
       milliseconds > 0 AS timed, exchange_ms >= 0 AS exchange_timed
FROM gpuhash_bench('build', 30000, 'hashgraph', 'cpu', 1, devices => '0,1,2');
SELECT operation, count(*) AS rows, sum(keys) FILTER (WHERE device_id IS NOT NULL) AS device_keys
FROM gpuhash_bench('aggregate', 40000, 'all', 'cpu', 1, 0.9, '0,1')
GROUP BY operation;

-- bad device lists
SELECT * FROM gpuhash_bench('build', 100, 'all', 'cpu', 1, devices => 'x');
SELECT * FROM gpuhash_bench('build', 100, 'all', 'cpu', 1, devices => '1,1');

-- unknown names
SELECT * FROM gpuhash_bench(operation => 'insert', device => 'cpu');
SELECT * FROM gpuhash_bench(structure => 'slabhash', device => 'cpu');
SELECT * FROM gpuhash_bench(device => 'tpu');
SELECT * FROM gpuhash_bench(operation => 'BUILD', device => 'cpu');

-- sizes, repetitions and load factors out of range
SELECT * FROM gpuhash_bench(keys => 0, device => 'cpu');
SELECT * FROM gpuhash_bench(keys => -5, device => 'cpu');
SELECT * FROM gpuhash_bench(keys => 2147483649, device => 'cpu');
SELECT * FROM gpuhash_bench(keys => 67108865, device => 'cpu');
SELECT * FROM gpuhash_bench(keys => 100, device => 'cpu', repetitions => 0);
SELECT * FROM gpuhash_bench(keys => 100, device => 'cpu', repetitions => 101);
SELECT * FROM gpuhash_bench(keys => 100, device => 'cpu', load_factor => 0);
SELECT * FROM gpuhash_bench(keys => 100, device => 'cpu', load_factor => -0.5);
SELECT * FROM gpuhash_bench(keys => 100, device => 'cpu', load_factor => 1);
SELECT * FROM gpuhash_bench(keys => 100, device => 'cpu', load_factor => 'NaN');

-- NULL arguments
SELECT * FROM gpuhash_bench(NULL);
SELECT * FROM gpuhash_bench(keys => NULL, device => 'cpu');
SELECT * FROM gpuhash_bench(keys => 100, device => 'cpu', load_factor => NULL);

-- the SQLSTATE of a bad argument
DO $$
BEGIN
  PERFORM * FROM gpuhash_bench(operation => 'insert', device => 'cpu');
EXCEPTION WHEN invalid_parameter_value THEN
  RAISE NOTICE 'invalid_parameter_value (%)', SQLSTATE;
END $$;
