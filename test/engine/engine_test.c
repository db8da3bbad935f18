/*-------------------------------------------------------------------------
 *
 * engine_test.c
 *	  Engine unit tests: the driver, case bookkeeping and engine set-up.
 *
 * Usage: engine_test [cpu] [cuda]
 *
 * With no argument: the CPU backend, plus CUDA where a GPU is visible.
 * GH_TEST_SEED sets the random seed (printed at the start, so a failing run
 * can be repeated); GH_TEST_QUICK=1 runs small inputs only (for valgrind);
 * GH_TEST_VERBOSE=1 prints every case with its time; GH_TEST_ONLY=pages,star
 * runs only those groups of cases (the names in case_groups below).  Every
 * operation goes through the public API (engine.h) and is checked against
 * oracle.c; the cases_*.c files and what each covers are listed in
 * test/README.
 *
 * Prints one line per failing case and ends with "N passed, N failed"; the
 * exit status is 1 if any case failed.
 *
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine_test.h"

#define DEFAULT_SEED UINT64_C(20261123)

test_run	run;

static char case_name[512];
static bool case_has_failed;
static double case_started;
static bool verbose;

static double seconds(void);

void
case_begin(const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(case_name, sizeof(case_name), fmt, ap);
	va_end(ap);
	case_has_failed = false;
	case_started = seconds();
}

void
case_fail(const char *fmt,...)
{
	va_list		ap;

	if (case_has_failed)
		return;
	case_has_failed = true;
	printf("FAIL %s: %s: ", run.backend_name, case_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void
case_end(void)
{
	if (case_has_failed)
		run.failed++;
	else
		run.passed++;
	if (verbose)
		printf("%8.3f s  %s\n", seconds() - case_started, case_name);
}

bool
check_ok(gh_status st, gh_engine *e, const char *what)
{
	if (st == GH_OK)
		return true;
	case_fail("%s: %s (%s)", what, gh_status_name(st), e ? gh_last_error(e) : "no engine");
	return false;
}

void *
xmalloc(size_t bytes)
{
	void	   *p = malloc(bytes > 0 ? bytes : 1);

	if (p == NULL)
	{
		printf("engine_test: out of memory allocating %zu bytes\n", bytes);
		exit(2);
	}
	return p;
}

void *
xcalloc(size_t count, size_t size)
{
	void	   *p = calloc(count > 0 ? count : 1, size > 0 ? size : 1);

	if (p == NULL)
	{
		printf("engine_test: out of memory allocating %zu x %zu bytes\n", count, size);
		exit(2);
	}
	return p;
}

const char *
config_name(const test_config *cfg, char *buf, size_t len)
{
	char		limit[32];

	if (cfg->memory_limit == 0)
		snprintf(limit, sizeof(limit), "default limit");
	else if (cfg->memory_limit % (1 << 20) == 0)
		snprintf(limit, sizeof(limit), "%zu MiB limit", cfg->memory_limit >> 20);
	else
		snprintf(limit, sizeof(limit), "%zu KiB limit", cfg->memory_limit >> 10);
	snprintf(buf, len, "%d device%s, %s", cfg->ndevices, cfg->ndevices > 1 ? "s" : "", limit);
	if (cfg->load_factor > 0)
		snprintf(buf + strlen(buf), len - strlen(buf), ", bcht load factor %g", cfg->load_factor);
	return buf;
}

const char *
kind_name(gh_kind kind)
{
	return kind == GH_KIND_BCHT ? "bcht" : kind == GH_KIND_HASHGRAPH ? "hashgraph" : "auto-kind";
}

const char *
method_name(gh_join_method method)
{
	return method == GH_JOIN_INTERSECT ? "intersect" :
		method == GH_JOIN_PROBE ? "probe" : "auto method";
}

int
test_configs(test_config *out, int max)
{
	int			k = 0;

#define ADD(nd, limit) \
	do { if (k < max) { out[k].ndevices = (nd); out[k].memory_limit = (limit); \
						out[k].load_factor = 0; k++; } } while (0)
	if (run.backend == GH_BACKEND_CPU && run.quick)
	{
		/* small inputs: limits small enough to split 1000 keys */
		ADD(1, 0);
		ADD(3, (size_t) 4 << 10);
		ADD(8, (size_t) 16 << 10);
	}
	else if (run.backend == GH_BACKEND_CPU)
	{
		ADD(1, 0);
		ADD(2, (size_t) 1 << 20);
		ADD(3, (size_t) 64 << 10);
		ADD(8, (size_t) 64 << 10);
	}
	else
	{
		/* real GPUs: one, then all (up to 8) when there are several */
		int			many = run.ngpus < 8 ? run.ngpus : 8;

		ADD(1, 0);
		ADD(1, (size_t) 16 << 20);
		ADD(1, (size_t) 1 << 20);
		if (many > 1)
		{
			ADD(many, 0);
			ADD(many, (size_t) 16 << 20);
		}
	}
#undef ADD
	return k;
}

int
usable_devices(int nd)
{
	if (run.backend == GH_BACKEND_CUDA)
		return nd < run.ngpus ? nd : run.ngpus;
	return nd;
}

static bool
interrupt_cb(void *arg)
{
	interrupter *in = arg;

	in->polls++;
	if (!in->armed)
		return false;
	if (in->polls_left > 0)
	{
		in->polls_left--;
		return false;
	}
	return true;
}

/* rows per chunk of a host split in the tests: a prime, so chunks and partitions never line up */
#define TEST_SPLIT_CHUNK 4093

/* open_engine, with interrupt_cb on in when in is given */
static gh_engine *
open_engine_with(const test_config *cfg, interrupter *in)
{
	gh_options	opt;
	gh_engine  *e = NULL;
	char		err[256] = "";
	gh_status	st;

	memset(&opt, 0, sizeof(opt));
	opt.backend = run.backend;
	opt.ndevices = cfg->ndevices;
	opt.memory_limit = cfg->memory_limit;
	opt.bcht_load_factor = cfg->load_factor;
	if (in != NULL)
	{
		opt.interrupt = interrupt_cb;
		opt.interrupt_arg = in;
	}
	if (run.backend == GH_BACKEND_CUDA)
	{
		gh_device_info info[GH_MAX_DEVICES];
		int			nd = gh_list_devices(info, GH_MAX_DEVICES);

		for (int i = 0; i < cfg->ndevices && i < nd; i++)
			opt.devices[i] = info[i].id;
	}
	st = gh_open(&opt, &e, err, sizeof(err));
	if (st != GH_OK)
	{
		case_fail("gh_open: %s (%s)", gh_status_name(st), err);
		return NULL;
	}
	/* host inputs split in many small chunks, on several threads */
	gh_debug_split_chunk(e, TEST_SPLIT_CHUNK);
	return e;
}

gh_engine *
open_engine(const test_config *cfg)
{
	return open_engine_with(cfg, NULL);
}

gh_engine *
open_interruptible(interrupter *in, size_t memory_limit, int ndevices)
{
	test_config cfg = {usable_devices(ndevices), memory_limit, 0};

	return open_engine_with(&cfg, in);
}

bool
check_device_bytes(gh_engine *e, size_t want, const char *when)
{
	if (gh_engine_device_bytes(e) == want)
		return true;
	case_fail("%zu bytes accounted %s, %zu when opened", gh_engine_device_bytes(e), when, want);
	return false;
}

void
open_engines(const test_config *cfgs, int n, gh_engine **engines, size_t *fresh)
{
	for (int c = 0; c < n; c++)
	{
		char		cname[128];

		case_begin("open an engine with %s", config_name(&cfgs[c], cname, sizeof(cname)));
		engines[c] = open_engine(&cfgs[c]);
		fresh[c] = engines[c] ? gh_engine_device_bytes(engines[c]) : 0;
		case_end();
	}
}

void
close_engines(const test_config *cfgs, int n, gh_engine **engines,
			  const size_t *fresh, const char *after, bool want_peak)
{
	for (int c = 0; c < n; c++)
	{
		char		cname[128];

		if (engines[c] == NULL)
			continue;
		case_begin("device memory is back to a fresh engine's %s, %s", after,
				   config_name(&cfgs[c], cname, sizeof(cname)));
		check_device_bytes(engines[c], fresh[c], after);
		if (want_peak && gh_engine_peak_device_bytes(engines[c]) == 0)
			case_fail("the peak is 0 after building tables");
		case_end();
		gh_close(engines[c]);
	}
}

static double
seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

/* The groups of cases, by the name GH_TEST_ONLY knows them by. */
static const struct
{
	const char *name;
	void		(*fn) (void);
}			case_groups[] = {
	{"api", run_api_cases},
	{"join", run_join_cases},
	{"agg", run_agg_cases},
	{"devices", run_device_cases},
	{"joinagg", run_joinagg_cases},
	{"pages", run_pages_cases},
	{"pagebatch", run_pagebatch_cases},
	{"star", run_star_cases},
};

/* Is group name in the comma-separated list only (NULL or empty: all)? */
static bool
wanted(const char *only, const char *name)
{
	size_t		len = strlen(name);

	if (only == NULL || *only == '\0')
		return true;
	for (const char *p = only; p != NULL; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return true;
	return false;
}

static void
run_backend(gh_backend backend)
{
	double		t0 = seconds();
	const char *only = getenv("GH_TEST_ONLY");

	run.backend = backend;
	run.backend_name = backend == GH_BACKEND_CUDA ? "cuda" : "cpu";
	printf("-- %s backend\n", run.backend_name);
	fflush(stdout);
	for (size_t g = 0; g < sizeof(case_groups) / sizeof(case_groups[0]); g++)
		if (wanted(only, case_groups[g].name))
			case_groups[g].fn();
	printf("-- %s backend: %.1f s\n", run.backend_name, seconds() - t0);
	fflush(stdout);
}

int
main(int argc, char **argv)
{
	bool		want_cpu = false,
				want_cuda = false;
	gh_device_info info[GH_MAX_DEVICES];
	const char *seed = getenv("GH_TEST_SEED");
	const char *quick = getenv("GH_TEST_QUICK");

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "cpu") == 0)
			want_cpu = true;
		else if (strcmp(argv[i], "cuda") == 0)
			want_cuda = true;
		else
		{
			fprintf(stderr, "usage: engine_test [cpu] [cuda]\n");
			return 2;
		}
	}
	run.ngpus = gh_list_devices(info, GH_MAX_DEVICES);
	if (!want_cpu && !want_cuda)
	{
		want_cpu = true;
		want_cuda = run.ngpus > 0;
	}
	run.seed = seed && *seed ? strtoull(seed, NULL, 0) : DEFAULT_SEED;
	run.quick = quick && *quick && strcmp(quick, "0") != 0;
	verbose = getenv("GH_TEST_VERBOSE") != NULL;
	printf("engine tests: seed %llu (GH_TEST_SEED), %d GPU(s) visible%s\n",
		   (unsigned long long) run.seed, run.ngpus, run.quick ? ", quick subset" : "");
	fflush(stdout);

	if (want_cpu)
		run_backend(GH_BACKEND_CPU);
	if (want_cuda)
	{
		if (run.ngpus == 0)
		{
			run.backend_name = "cuda";
			case_begin("the cuda backend runs where a GPU is visible");
			case_fail("no GPU is visible");
			case_end();
		}
		else
			run_backend(GH_BACKEND_CUDA);
	}
	printf("%d passed, %d failed\n", run.passed, run.failed);
	return run.failed > 0 ? 1 : 0;
}
