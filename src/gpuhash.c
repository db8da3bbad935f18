/*-------------------------------------------------------------------------
 *
 * gpuhash.c
 *	  Module entry point: the settings (GUCs) and the planner hooks.
 *
 * _PG_init may run in the postmaster (shared_preload_libraries): it only
 * defines settings, installs hooks and, when preloaded, asks for the GPU
 * service's shared memory and workers (service_client.c).  It never touches
 * CUDA, because a CUDA context does not survive fork(): the service workers
 * and, without them, each backend open their own engines on first use.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "utils/guc.h"
#include <limits.h>

#include "gpuhash.h"
#include "star.h"
#include "service.h"

PG_MODULE_MAGIC;

bool		gpuhash_enabled = true;
bool		gpuhash_enable_join = true;
bool		gpuhash_enable_groupby = true;
bool		gpuhash_enable_fusion = true;
bool		gpuhash_enable_star = true;
bool		gpuhash_unique_key_estimates = true;
int			gpuhash_device = GPUHASH_DEVICE_AUTO;
int			gpuhash_hash_table = GH_KIND_AUTO;
char	   *gpuhash_devices_setting = NULL;
int			gpuhash_min_rows = 1000000;
int			gpuhash_memory_limit_mb = 0;
int			gpuhash_chunk_rows = 1048576;
bool		gpuhash_force = false;
bool		gpuhash_cpu_fallback = true;
int			gpuhash_max_memory_mb = 0;
int			gpuhash_memory_wait_ms = 5000;
int			gpuhash_debug_device_memory_mb = 0;
int			gpuhash_debug_fail_after = -1;
int			gpuhash_service_workers = 1;
int			gpuhash_page_cache_mb = -1;
bool		gpuhash_enable_pool = true;
bool		gpuhash_use_service = true;
bool		gpuhash_read_pages = true;
bool		gpuhash_ship_pages = true;
bool		gpuhash_enable_pool_pages = true;
bool		gpuhash_register_buffers = true;
bool		gpuhash_debug_reread_pages = false;
int			gpuhash_debug_pool_batch = 0;
bool		gpuhash_debug_pool_relay = false;
int			gpuhash_debug_star_key_bits = 0;
bool		gpuhash_debug_star_compile_fails = false;
int			gpuhash_debug_dim_pages_min = 0;
int			gpuhash_debug_snowflakes = GPUHASH_SNOWFLAKES_AUTO;

static const struct config_enum_entry device_options[] = {
	{"auto", GPUHASH_DEVICE_AUTO, false},
	{"gpu", GPUHASH_DEVICE_GPU, false},
	{"cpu", GPUHASH_DEVICE_CPU, false},
	{NULL, 0, false}
};

static const struct config_enum_entry table_options[] = {
	{"auto", GH_KIND_AUTO, false},
	{"hashgraph", GH_KIND_HASHGRAPH, false},
	{"bcht", GH_KIND_BCHT, false},
	{NULL, 0, false}
};

static const struct config_enum_entry snowflake_options[] = {
	{"auto", GPUHASH_SNOWFLAKES_AUTO, false},
	{"whole", GPUHASH_SNOWFLAKES_WHOLE, false},
	{"split", GPUHASH_SNOWFLAKES_SPLIT, false},
	{NULL, 0, false}
};

void		_PG_init(void);

static bool
check_devices(char **newval, void **extra, GucSource source)
{
	int			ids[GH_MAX_DEVICES];
	int			n;
	const char *problem;

	if (!gpuhash_parse_devices(*newval, ids, &n, &problem))
	{
		GUC_check_errdetail("%s", problem);
		GUC_check_errhint("Use \"all\" or a comma-separated list of GPU numbers, such as \"0,1\".");
		return false;
	}
	return true;
}

void
_PG_init(void)
{
	DefineCustomBoolVariable("gpuhash.enabled",
							 "Lets the planner use gpuhash's GPU joins and aggregation.",
							 NULL, &gpuhash_enabled, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.enable_join",
							 "Lets the planner use GpuHashJoin.",
							 NULL, &gpuhash_enable_join, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.enable_groupby",
							 "Lets the planner use GpuHashAgg.",
							 NULL, &gpuhash_enable_groupby, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.enable_fusion",
							 "Lets the planner run an aggregation and the join below it as one GpuHashAgg.",
							 "Needs gpuhash.enable_join and gpuhash.enable_groupby too.",
							 &gpuhash_enable_fusion, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.enable_star",
							 "Lets the planner run an aggregation over a star of joins as one GpuStarAgg.",
							 "Needs gpuhash.enable_groupby too.",
							 &gpuhash_enable_star, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.unique_key_estimates",
							 "Estimates joins on every column of a unique key of several columns as over a foreign key.",
							 "Each row of the other side is taken to meet one row of the unique side, instead of the product of the columns' selectivities.",
							 &gpuhash_unique_key_estimates, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuhash.device",
							 "Where gpuhash runs: auto (a GPU when one is present, else nothing), gpu, or cpu.",
							 "cpu runs the same algorithms on the CPU: for testing and comparison.",
							 &gpuhash_device, GPUHASH_DEVICE_AUTO, device_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuhash.hash_table",
							 "Hash table for joins: auto, hashgraph or bcht.",
							 NULL, &gpuhash_hash_table, GH_KIND_AUTO, table_options,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("gpuhash.devices",
							   "The GPUs gpuhash uses: \"all\" or a comma-separated list of GPU numbers.",
							   NULL, &gpuhash_devices_setting, "all",
							   PGC_USERSET, 0, check_devices, NULL, NULL);
	DefineCustomIntVariable("gpuhash.min_rows",
							"Joins and groupings with fewer input rows stay on PostgreSQL's own plans.",
							NULL, &gpuhash_min_rows, 1000000, 0, INT_MAX,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.memory_limit",
							"Device memory one operation may use; larger inputs are processed in hash-range partitions.",
							"0 means 90% of the GPU's free memory (4 GB with gpuhash.device = cpu).",
							&gpuhash_memory_limit_mb, 0, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.max_memory",
							"The most device memory any session's gpuhash.memory_limit may give one operation (0: no cap).",
							"Set by superusers or in postgresql.conf; it caps gpuhash.memory_limit, including the limit 0 resolves to.",
							&gpuhash_max_memory_mb, 0, 0, INT_MAX,
							PGC_SUSET, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.page_cache_size",
							"Device memory on each GPU that each GPU service worker may keep copies of shipped heap pages in, so that a table read again does not cross the bus (-1: a third of the GPU's memory, shared by the workers; 0: none).",
							"The copies are of pages of permanent tables, checked against the shared buffers at every read; a change of size empties the caches.",
							&gpuhash_page_cache_mb, -1, -1, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.memory_wait",
							"How long an operation waits for room in device memory that concurrent operations hold.",
							"Where gpuhash is preloaded; when the time is up the operation runs out of device memory (see gpuhash.cpu_fallback).",
							&gpuhash_memory_wait_ms, 5000, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_MS, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.chunk_rows",
							"Outer rows a GpuHashJoin probes per batch, and joined pairs it fetches per batch.",
							NULL, &gpuhash_chunk_rows, 1048576, 1, 1 << 27,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.force",
							 "Plans gpuhash wherever it applies, whatever PostgreSQL's plans cost (for testing).",
							 NULL, &gpuhash_force, false,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.cpu_fallback",
							 "Lets a gpuhash node finish on the CPU when the device cannot run an operation.",
							 "When the device runs out of memory, fails or is gone, the node goes on with the engine's CPU backend, with the same results; off: the query fails with the device's error.",
							 &gpuhash_cpu_fallback, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.service",
							 "Sends gpuhash's work to the GPU service processes when they run.",
							 "Off: each backend and parallel worker runs gpuhash's engine itself.",
							 &gpuhash_use_service, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.enable_pool",
							 "Lets the processes of a parallel GROUP BY pool their rows in the GPU service, to be aggregated once.",
							 "Off: each process aggregates its share and the partial groups go through the Gather.",
							 &gpuhash_enable_pool, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.read_pages",
							 "Lets gpuhash nodes read the heap pages of a plain sequential scan below them themselves.",
							 "Only the columns the query needs are taken from each page, without going through the scan; off: every row comes through the Seq Scan.",
							 &gpuhash_read_pages, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.ship_pages",
							 "Sends the all-visible heap pages gpuhash reads to the engine (the GPU) by page number, to have their columns taken there.",
							 "Needs gpuhash.read_pages; off: the backend takes the columns itself.",
							 &gpuhash_ship_pages, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.pool_pages",
							 "Has the GPU service append the rows of shipped pages to a parallel aggregation's pool itself.",
							 "Needs gpuhash.ship_pages and the pool; off: the rows come back to the backend, which appends them.",
							 &gpuhash_enable_pool_pages, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	/* a server-start setting can only be defined while the server starts */
	if (process_shared_preload_libraries_in_progress)
		DefineCustomBoolVariable("gpuhash.register_buffers",
								 "Has the GPU service register PostgreSQL's shared buffers with the GPU once, so that shipped pages cross the bus without a copy.",
								 "Off: shipped pages are copied into a staging buffer first.",
								 &gpuhash_register_buffers, true,
								 PGC_POSTMASTER, 0, NULL, NULL, NULL);
	if (process_shared_preload_libraries_in_progress)
		DefineCustomIntVariable("gpuhash.service_workers",
							"GPU service processes started with the server (gpuhash in shared_preload_libraries).",
							"Each holds its own engines and serves one request at a time; 0 starts none.",
							&gpuhash_service_workers, 1, 0, GHS_MAX_WORKERS,
							PGC_POSTMASTER, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.debug_fail_after",
							"Developer option: fail the engine's N-th device operation of each node as if device memory ran out (-1: never).",
							"For testing how queries clean up after device failures.",
							&gpuhash_debug_fail_after, -1, -1, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.debug_device_memory",
							"Developer option: the size of the CPU backend's simulated devices, for the wait for room in device memory (0: unlimited).",
							"For testing that wait without a GPU.",
							&gpuhash_debug_device_memory_mb, 0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL | GUC_UNIT_MB, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.debug_reread_pages",
							 "Developer option: treat every other page shipped to the engine as changed while it was read, so that it is read again on the CPU.",
							 "For testing the recheck of shipped pages.",
							 &gpuhash_debug_reread_pages, false,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.debug_dim_pages_min",
							"Developer option: the fewest pages of a table a star's dimension is read from directly (0: the default, 16384).",
							"For testing small dimensions read from their pages.",
							&gpuhash_debug_dim_pages_min, 0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomEnumVariable("gpuhash.debug_snowflakes",
							 "Developer option: a star's snowflakes as one dimension each (whole), each of their tables a dimension (split), or both offered (auto: the cheaper).",
							 "For testing each way on the same queries.",
							 &gpuhash_debug_snowflakes, GPUHASH_SNOWFLAKES_AUTO, snowflake_options,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.debug_pool_batch",
							"Developer option: rows a pooled aggregation sends to the GPU service's pool at a time (0: the default, 2M).",
							"For testing appends made while the input is read.",
							&gpuhash_debug_pool_batch, 0, 0, INT_MAX,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.debug_pool_relay",
							 "Developer option: the last process of a pooled parallel aggregation returns the pool's groups through the Gather, instead of the final node taking them from the GPU service.",
							 "For testing that way of returning a pool's groups.",
							 &gpuhash_debug_pool_relay, false,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomIntVariable("gpuhash.debug_star_key_bits",
							"Developer option: the bits a GpuStarAgg's hashed group key keeps (0: all 64).",
							"For testing groups that collide under one hashed key.",
							&gpuhash_debug_star_key_bits, 0, 0, 63,
							PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	DefineCustomBoolVariable("gpuhash.debug_star_compile_fails",
							 "Developer option: a GpuStarAgg's program does not compile once its dimensions are read.",
							 "For testing the plan a GpuStarAgg runs instead, as where the dimensions read widen its group key past what the planner compiled.",
							 &gpuhash_debug_star_compile_fails, false,
							 PGC_SUSET, GUC_NOT_IN_SAMPLE | GUC_NO_SHOW_ALL, NULL, NULL, NULL);
	MarkGUCPrefixReserved("gpuhash");

	gpuhash_join_init();
	gpuhash_agg_init();
	gpuhash_fuse_init();
	gpuhash_star_init();
	gpuhash_join_estimates_init();
	gpuhash_shmem_init();
	gpuhash_service_init();
}
