/* gpuhash--0.1.0.sql: install script */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION gpuhash" to load this file. \quit

-- The planner hooks live in the library, which PostgreSQL loads only when
-- asked.  Load it now for this session.  Every other session loads it only
-- if the DBA preloads it (shared_preload_libraries, which also starts the
-- GPU service; or session_preload_libraries): the extension changes no
-- setting itself, since a preload setting that names a library outlives
-- DROP EXTENSION and stops every connection once the library's file is
-- gone.  (CREATE EXTENSION shows only warnings of its script, hence one.)
-- In a database without the extension the library plans nothing.
LOAD 'MODULE_PATHNAME';
DO $$
DECLARE
  preloaded boolean := false;
  s text;
BEGIN
  FOREACH s IN ARRAY ARRAY['shared_preload_libraries', 'session_preload_libraries',
                           'local_preload_libraries'] LOOP
    preloaded := preloaded OR 'gpuhash' = ANY (string_to_array(replace(replace(replace(
      current_setting(s), ' ', ''), '"', ''), '$libdir/', ''), ','));
  END LOOP;
  IF NOT preloaded THEN
    RAISE WARNING 'gpuhash is loaded in this session only'
      USING DETAIL = 'Other sessions use gpuhash once the library is preloaded.',
            HINT = 'Add gpuhash to shared_preload_libraries in postgresql.conf (this also starts '
                   'the GPU service; restart the server), or run ALTER DATABASE '
                   || quote_ident(current_database())
                   || ' SET session_preload_libraries = ''gpuhash''; remove it there before '
                   'the library is uninstalled.';
  END IF;
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
    operation text,
    device_bytes bigint,
    page_cache_bytes bigint,
    page_cache_pages bigint,
    page_cache_hits bigint,
    page_cache_misses bigint)
AS 'MODULE_PATHNAME', 'gpuhash_service_status'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuhash_service() IS
'the GPU service processes (gpuhash in shared_preload_libraries): pid (NULL while one is not running), operations served, tables, joins and pools held, engines open, the operation running now (NULL: idle), device memory its engines hold (their page caches included), and of their page caches (gpuhash.page_cache_size): the device memory, the copies of pages kept, the shipped pages read from a copy and those read from shared buffers since the worker started';

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

-- Statistics of gpuhash's use, per database, since the server started or
-- gpuhash_stats_reset() (kept in shared memory: only where gpuhash is in
-- shared_preload_libraries; elsewhere the view is empty).
CREATE FUNCTION gpuhash_stats_read(
    OUT datid oid,
    OUT datname name,
    OUT join_queries bigint,
    OUT groupby_queries bigint,
    OUT fused_queries bigint,
    OUT pooled_queries bigint,
    OUT star_queries bigint,
    OUT rows_to_gpu bigint,
    OUT pages_to_gpu bigint,
    OUT gpu_time float8,
    OUT cpu_fallbacks bigint,
    OUT errors bigint,
    OUT stats_reset timestamptz)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'gpuhash_stats_read'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- (not a join with pg_database: gpuhash itself would plan it)
CREATE VIEW gpuhash_stats AS
  SELECT * FROM gpuhash_stats_read() WHERE datname IS NOT NULL;

COMMENT ON VIEW gpuhash_stats IS
'per database: queries that used a GpuHashJoin, a GpuHashAgg, a fused join, a pool, a GpuStarAgg; rows and heap pages sent to the GPU; milliseconds in device operations; plan nodes that fell back on the CPU; engine errors raised to queries';

CREATE FUNCTION gpuhash_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'gpuhash_stats_reset'
LANGUAGE C VOLATILE PARALLEL RESTRICTED;

COMMENT ON FUNCTION gpuhash_stats_reset() IS
'set every database''s gpuhash_stats counters back to 0';

-- variance and standard deviation of integers and numerics from a count, a
-- sum and a sum of squares, by the aggregate's own final function: the outer
-- level of a query planned in two levels calls it (src/agg_variance.c)
CREATE FUNCTION gpuhash_variance_final(aggregate regprocedure, n bigint, sx numeric, sxx numeric)
RETURNS numeric
AS 'MODULE_PATHNAME', 'gpuhash_variance_final'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION gpuhash_variance_final(regprocedure, bigint, numeric, numeric) IS
'the result of aggregate (variance, var_samp, var_pop, stddev, stddev_samp or stddev_pop of int2, int4, int8 or numeric) over n values whose sum is sx and sum of squares sxx';

-- Who may use what.  gpuhash_bench occupies the GPUs (up to 2^31 keys, 100
-- repetitions), gpuhash_devices and gpuhash_service describe the hardware
-- and what the GPU service does, and gpuhash_stats_reset clears every
-- database's statistics: none is for every user (the gpuhash_stats view
-- is, as pg_stat_database is).  Members of pg_monitor may call the two that
-- only read; grant the rest as needed:
--   GRANT EXECUTE ON FUNCTION gpuhash_bench(text, bigint, text, text, int, float8, text) TO some_role;
REVOKE ALL ON FUNCTION gpuhash_devices() FROM PUBLIC;
REVOKE ALL ON FUNCTION gpuhash_service() FROM PUBLIC;
REVOKE ALL ON FUNCTION gpuhash_bench(text, bigint, text, text, int, float8, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION gpuhash_stats_reset() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gpuhash_devices() TO pg_monitor;
GRANT EXECUTE ON FUNCTION gpuhash_service() TO pg_monitor;
GRANT SELECT ON gpuhash_stats TO PUBLIC;
