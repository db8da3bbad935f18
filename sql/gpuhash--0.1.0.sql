/* gpuhash--0.1.0.sql: install script */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gpuhash" to load this file. \quit

-- The planner hooks live in the library, which PostgreSQL loads only when
-- asked: load it now for this session, and have every new session of this
-- database load it (session_preload_libraries, appended to what is there).
-- In a database without the extension the library plans nothing.
LOAD 'MODULE_PATHNAME';
DO $$
DECLARE
  cur text;
BEGIN
  SELECT substr(s, length('session_preload_libraries=') + 1) INTO cur
    FROM pg_db_role_setting d, unnest(d.setconfig) s
   WHERE d.setdatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
     AND d.setrole = 0 AND s LIKE 'session_preload_libraries=%';
  IF cur IS NULL OR cur = '' THEN
    cur := 'gpuhash';
  ELSIF NOT 'gpuhash' = ANY (string_to_array(replace(cur, ' ', ''), ',')) THEN
    cur := cur || ',gpuhash';
  END IF;
  EXECUTE format('ALTER DATABASE %I SET session_preload_libraries = %L', current_database(), cur);
END $$;

CREATE FUNCTION gpuhash_devices()
RETURNS TABLE (
    id int,
    name text,
    compute_capability text,
    sm_count int,
    memory_total_mb bigint,
    memory_free_mb bigint,
    driver_version text,
    runtime_version text)
AS 'MODULE_PATHNAME', 'gpuhash_devices'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuhash_devices() IS
'the GPUs gpuhash can use (no rows where there is none)';

CREATE FUNCTION gpuhash_service()
RETURNS TABLE (
    worker int,
    pid int,
    requests bigint,
    objects int,
    engines int,
    operation text)
AS 'MODULE_PATHNAME', 'gpuhash_service_status'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuhash_service() IS
'the GPU service processes (gpuhash in shared_preload_libraries): pid (NULL while one is not running), operations served, tables, joins and pools held, engines open, the operation running now (NULL: idle)';

-- One measurement of gpuhash_bench.  A named type rather than RETURNS TABLE:
-- its columns share names with the function's arguments, which RETURNS TABLE
-- does not allow.
CREATE TYPE gpuhash_bench_result AS (
    structure text,
    operation text,
    keys bigint,
    device text,
    milliseconds float8,
    mkeys_per_s float8,
    gb_per_s float8,
    devices text,
    device_id int,
    exchange_ms float8);

CREATE FUNCTION gpuhash_bench(
    operation text DEFAULT 'all',
    keys bigint DEFAULT 16777216,
    structure text DEFAULT 'all',
    device text DEFAULT 'all',
    repetitions int DEFAULT 5,
    load_factor float8 DEFAULT 0.9,
    devices text DEFAULT NULL)
RETURNS SETOF gpuhash_bench_result
AS 'MODULE_PATHNAME', 'gpuhash_bench'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuhash_bench(text, bigint, text, text, int, float8, text) IS
'time the engine''s hash tables, join and aggregation on random keys';
