-- gpuhash's settings: their types, defaults, ranges and units, and how bad
-- values are refused.  gpuhash.device's current value is never shown: test
-- runs choose it (CPU or GPU) and the output must be the same for both.

-- every setting, as pg_settings describes it (gpuhash.service_workers and
-- gpuhash.register_buffers exist only where gpuhash is preloaded: the pgTAP
-- suite checks them)
SELECT name, vartype, unit, boot_val, min_val, max_val, enumvals, context
FROM pg_settings
WHERE name LIKE 'gpuhash.%' AND name NOT IN ('gpuhash.service_workers', 'gpuhash.register_buffers')
ORDER BY name COLLATE "C";

-- every setting has a description
SELECT count(*) FILTER (WHERE short_desc IS NULL OR short_desc = '') AS undescribed
FROM pg_settings
WHERE name LIKE 'gpuhash.%';

-- booleans
SHOW gpuhash.enabled;
SET gpuhash.enabled = off;
SHOW gpuhash.enabled;
RESET gpuhash.enabled;
SHOW gpuhash.enabled;
SET gpuhash.enable_join = false;
SHOW gpuhash.enable_join;
SET gpuhash.enable_groupby = 0;
SHOW gpuhash.enable_groupby;
SET gpuhash.enable_fusion = off;
SHOW gpuhash.enable_fusion;
SET gpuhash.force = yes;
SHOW gpuhash.force;
SET gpuhash.enabled = maybe;
RESET ALL;

-- gpuhash.device: auto, gpu or cpu (setting it does not touch a device)
BEGIN;
SET LOCAL gpuhash.device = cpu;
SHOW gpuhash.device;
SET LOCAL gpuhash.device = 'GPU';
SHOW gpuhash.device;
SET LOCAL gpuhash.device = auto;
SHOW gpuhash.device;
COMMIT;
SET gpuhash.device = tpu;
SET gpuhash.device = '';

-- gpuhash.hash_table: auto, hashgraph or bcht, set without quotes (there is
-- no gpuhash.table)
SHOW gpuhash.hash_table;
SET gpuhash.hash_table = bcht;
SHOW gpuhash.hash_table;
SELECT set_config('gpuhash.hash_table', 'hashgraph', false);
SELECT current_setting('gpuhash.hash_table');
SET gpuhash.hash_table = cuckoo;
SELECT set_config('gpuhash.table', 'bcht', false);
RESET gpuhash.hash_table;

-- gpuhash.devices: "all" or a list of distinct GPU numbers
SHOW gpuhash.devices;
SET gpuhash.devices = '0';
SHOW gpuhash.devices;
SET gpuhash.devices = '0,1,3';
SHOW gpuhash.devices;
SET gpuhash.devices = ' 2 , 7 ';
SHOW gpuhash.devices;
SET gpuhash.devices = 'ALL';
SHOW gpuhash.devices;
SET gpuhash.devices = '0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15';
SET gpuhash.devices = '';
SET gpuhash.devices = 'gpu0';
SET gpuhash.devices = '-1';
SET gpuhash.devices = '0,,1';
SET gpuhash.devices = '0,';
SET gpuhash.devices = ',0';
SET gpuhash.devices = '0 1';
SET gpuhash.devices = '0;1';
SET gpuhash.devices = '1,1';
SET gpuhash.devices = '1024';
SET gpuhash.devices = '99999999999999999999';
SET gpuhash.devices = 'all,0';
SET gpuhash.devices = '0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16';
SHOW gpuhash.devices;
RESET gpuhash.devices;

-- gpuhash.memory_limit: megabytes, with units; 0 = automatic
SHOW gpuhash.memory_limit;
SET gpuhash.memory_limit = 512;
SHOW gpuhash.memory_limit;
SET gpuhash.memory_limit = '2GB';
SHOW gpuhash.memory_limit;
SET gpuhash.memory_limit = '1.5GB';
SHOW gpuhash.memory_limit;
SET gpuhash.memory_limit = '3TB';
SHOW gpuhash.memory_limit;
-- out of range (the message's wording of the range differs between releases)
\set VERBOSITY sqlstate
SET gpuhash.memory_limit = -1;
\set VERBOSITY default
SET gpuhash.memory_limit = '10 parsecs';
RESET gpuhash.memory_limit;

-- gpuhash.min_rows and gpuhash.chunk_rows
SHOW gpuhash.min_rows;
SET gpuhash.min_rows = 0;
SHOW gpuhash.min_rows;
SET gpuhash.min_rows = -1;
SET gpuhash.min_rows = 'many';
SHOW gpuhash.chunk_rows;
SET gpuhash.chunk_rows = 1;
SHOW gpuhash.chunk_rows;
SET gpuhash.chunk_rows = 0;
SET gpuhash.chunk_rows = 134217729;
RESET ALL;

-- the gpuhash prefix is reserved: a misspelt setting is an error
SET gpuhash.enable_joins = on;
SET gpuhash.memory = '1GB';

-- settings apply per transaction like PostgreSQL's own
BEGIN;
SET LOCAL gpuhash.hash_table = bcht;
SHOW gpuhash.hash_table;
ROLLBACK;
SHOW gpuhash.hash_table;
BEGIN;
SET gpuhash.min_rows = 5;
SAVEPOINT a;
SET gpuhash.min_rows = 6;
ROLLBACK TO a;
SHOW gpuhash.min_rows;
COMMIT;
SHOW gpuhash.min_rows;
RESET gpuhash.min_rows;

-- set_config and current_setting see them too
SELECT set_config('gpuhash.chunk_rows', '4096', false);
SELECT current_setting('gpuhash.chunk_rows');
SELECT current_setting('gpuhash.no_such_setting', true) IS NULL AS missing_ok;
RESET ALL;
