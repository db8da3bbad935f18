/*-------------------------------------------------------------------------
 *
 * functions.c
 *	  SQL functions: gpuhash_devices() and gpuhash_bench().
 *
 * gpuhash_bench runs the engine's own benchmark (gh_bench: keys generated
 * on the device, only the operation timed, median of several runs after a
 * warm-up) for each requested structure, operation and backend, and returns
 * one row per measurement.  Each backend gets a fresh engine for the call,
 * on the GPUs of the devices argument (gpuhash.devices when it is NULL; for
 * the CPU backend, that many simulated devices), closed again on error or
 * cancel (PG_FINALLY), so nothing leaks.  On several devices a measurement
 * is one row for the whole operation (device_id NULL, with the time of the
 * all-to-all exchange) followed by one row per device.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "gpuhash.h"

PG_FUNCTION_INFO_V1(gpuhash_devices);
PG_FUNCTION_INFO_V1(gpuhash_bench);

/* Largest bench sizes: the GPU's, and the CPU backend's (it is slower). */
#define BENCH_MAX_KEYS		(INT64CONST(1) << 31)
#define BENCH_MAX_CPU_KEYS	(INT64CONST(1) << 26)

Datum
gpuhash_devices(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	gh_device_info info[GH_MAX_DEVICES];
	int			n;

	InitMaterializedSRF(fcinfo, 0);
	n = gh_list_devices(info, GH_MAX_DEVICES);
	for (int i = 0; i < n; i++)
	{
		Datum		values[8];
		bool		nulls[8] = {0};

		values[0] = Int32GetDatum(info[i].id);
		values[1] = CStringGetTextDatum(info[i].name);
		values[2] = CStringGetTextDatum(psprintf("%d.%d", info[i].cc_major, info[i].cc_minor));
		values[3] = Int32GetDatum(info[i].sm_count);
		values[4] = Int64GetDatum((int64) (info[i].mem_total >> 20));
		values[5] = Int64GetDatum((int64) (info[i].mem_free >> 20));
		values[6] = CStringGetTextDatum(psprintf("%d.%d", info[i].driver_version / 1000,
												 (info[i].driver_version % 1000) / 10));
		values[7] = CStringGetTextDatum(psprintf("%d.%d", info[i].runtime_version / 1000,
												 (info[i].runtime_version % 1000) / 10));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

typedef struct BenchCase
{
	const char *structure;
	const char *operation;
	gh_kind		kind;
	gh_bench_op op;
} BenchCase;

static const BenchCase bench_cases[] = {
	{"hashgraph", "build", GH_KIND_HASHGRAPH, GH_BENCH_BUILD},
	{"hashgraph", "probe", GH_KIND_HASHGRAPH, GH_BENCH_PROBE},
	{"hashgraph", "join", GH_KIND_HASHGRAPH, GH_BENCH_JOIN},
	{"bcht", "build", GH_KIND_BCHT, GH_BENCH_BUILD},
	{"bcht", "find_hit", GH_KIND_BCHT, GH_BENCH_FIND_HIT},
	{"bcht", "find_miss", GH_KIND_BCHT, GH_BENCH_FIND_MISS},
	{"hash_agg", "aggregate", GH_KIND_AUTO, GH_BENCH_AGGREGATE},
	{"hash_agg", "aggregate_few", GH_KIND_AUTO, GH_BENCH_AGGREGATE_FEW},
};

static bool
name_matches(const char *want, const char *have)
{
	return strcmp(want, "all") == 0 || strcmp(want, have) == 0;
}

static void
check_name(const char *what, const char *value, const char *const *valid)
{
	StringInfoData list;

	for (int i = 0; valid[i]; i++)
		if (strcmp(value, valid[i]) == 0)
			return;
	initStringInfo(&list);
	for (int i = 0; valid[i]; i++)
		appendStringInfo(&list, "%s%s", i ? ", " : "", valid[i]);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown %s \"%s\"", what, value),
			 errhint("Valid values are: %s.", list.data)));
}

/* "0,1": the ids of the devices a measurement ran on. */
static char *
device_list(const gh_bench_result *r)
{
	StringInfoData s;

	initStringInfo(&s);
	for (int d = 0; d < r->ndevices; d++)
		appendStringInfo(&s, "%s%d", d ? "," : "", r->dev[d].id);
	return s.data;
}

#define BENCH_COLS 10

/* Run the selected cases on one backend, appending rows. */
static void
bench_backend(ReturnSetInfo *rsinfo, gh_backend backend, const char *operation,
			  const char *structure, int64 keys, int reps, double load,
			  const char *devices)
{
	gh_engine  *volatile e = gpuhash_open_engine(backend,
														devices ? devices : gpuhash_devices_setting);

	PG_TRY();
	{
		for (int i = 0; i < (int) lengthof(bench_cases); i++)
		{
			const BenchCase *c = &bench_cases[i];
			gh_bench_result r;
			gh_status	st;
			Datum		values[BENCH_COLS];
			bool		nulls[BENCH_COLS] = {0};
			char	   *list;
			char		err[512];

			if (!name_matches(operation, c->operation) || !name_matches(structure, c->structure))
				continue;
			CHECK_FOR_INTERRUPTS();
			if (!gpuhash_gate_enter(e, NULL, err, sizeof(err)))
				gpuhash_gate_raise(err);
			st = gh_bench(e, c->op, c->kind, (size_t) keys, reps, load, &r);
			gpuhash_gate_settle();
			if (st != GH_OK)
				gpuhash_engine_error(e, st);
			list = device_list(&r);
			values[0] = CStringGetTextDatum(c->structure);
			values[1] = CStringGetTextDatum(c->operation);
			values[2] = Int64GetDatum(keys);
			values[3] = CStringGetTextDatum(backend == GH_BACKEND_CUDA ? "gpu" : "cpu");
			values[4] = Float8GetDatum(r.ms);
			values[5] = Float8GetDatum(r.mkeys_per_s);
			values[6] = Float8GetDatum(r.ms > 0 ? (double) r.bytes_moved / (r.ms * 1e6) : 0);
			values[7] = CStringGetTextDatum(list);
			/* one device: its row is the measurement */
			if (r.ndevices == 1)
				values[8] = Int32GetDatum(r.dev[0].id);
			else
				nulls[8] = true;
			values[9] = Float8GetDatum(r.exchange_ms);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			for (int d = 0; r.ndevices > 1 && d < r.ndevices; d++)
			{
				values[2] = Int64GetDatum((int64) r.dev[d].keys);
				values[4] = Float8GetDatum(r.dev[d].ms);
				values[5] = Float8GetDatum(r.dev[d].mkeys_per_s);
				nulls[6] = true;
				values[8] = Int32GetDatum(r.dev[d].id);
				nulls[8] = false;
				nulls[9] = true;
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
			}
		}
	}
	PG_FINALLY();
	{
		gh_close(e);
	}
	PG_END_TRY();
}

Datum
gpuhash_bench(PG_FUNCTION_ARGS)
{
	static const char *const operations[] = {"all", "build", "probe", "find_hit", "find_miss", "join",
		"aggregate", "aggregate_few", NULL};
	static const char *const structures[] = {"all", "hashgraph", "bcht", "hash_agg", NULL};
	static const char *const devices[] = {"all", "gpu", "cpu", NULL};
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *operation,
			   *structure,
			   *device;
	int64		keys;
	int			reps;
	double		load;
	bool		gpu;
	char	   *gpus = NULL;

	for (int i = 0; i < 6; i++)
		if (PG_ARGISNULL(i))
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("arguments of gpuhash_bench must not be null")));
	operation = text_to_cstring(PG_GETARG_TEXT_PP(0));
	keys = PG_GETARG_INT64(1);
	structure = text_to_cstring(PG_GETARG_TEXT_PP(2));
	device = text_to_cstring(PG_GETARG_TEXT_PP(3));
	reps = PG_GETARG_INT32(4);
	load = PG_GETARG_FLOAT8(5);
	if (PG_NARGS() > 6 && !PG_ARGISNULL(6))
		gpus = text_to_cstring(PG_GETARG_TEXT_PP(6));

	check_name("operation", operation, operations);
	check_name("structure", structure, structures);
	check_name("device", device, devices);
	if (keys < 1 || keys > BENCH_MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keys must be between 1 and %lld", (long long) BENCH_MAX_KEYS)));
	if (reps < 1 || reps > 100)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("repetitions must be between 1 and 100")));
	if (!(load > 0 && load <= 0.99))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("load_factor must be greater than 0 and at most 0.99")));
	gpu = gpuhash_gpu_present();
	if (strcmp(device, "gpu") == 0 && !gpu)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("gpuhash found no usable GPU"),
				 errhint("Use device => 'cpu' to benchmark the CPU backend.")));
	if (strcmp(device, "gpu") != 0 && keys > BENCH_MAX_CPU_KEYS &&
		(strcmp(device, "cpu") == 0 || !gpu))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keys must be at most %lld for the CPU backend", (long long) BENCH_MAX_CPU_KEYS),
				 errhint("Use device => 'gpu' for larger sizes.")));

	InitMaterializedSRF(fcinfo, 0);
	if (gpu && strcmp(device, "cpu") != 0)
		bench_backend(rsinfo, GH_BACKEND_CUDA, operation, structure, keys, reps, load, gpus);
	if (strcmp(device, "gpu") != 0 && keys <= BENCH_MAX_CPU_KEYS)
		bench_backend(rsinfo, GH_BACKEND_CPU, operation, structure, keys, reps, load, gpus);
	return (Datum) 0;
}
