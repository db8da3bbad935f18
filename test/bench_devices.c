/*-------------------------------------------------------------------------
 *
 * bench_devices.c
 *	  Multi-GPU scaling of the engine, without PostgreSQL: the HashGraph
 *	  build, the list-intersection join and the hash aggregation on one GPU
 *	  and on several, with the all-to-all exchange timed apart (over peer
 *	  access and through pinned host memory), the peer-to-peer copy rate
 *	  between the GPUs measured in the same run, and the build from host
 *	  memory that the executor does (no exchange).
 *
 * Usage: bench_devices [LOG2_KEYS ...]     (default: 26 28)
 *
 * GH_BENCH_DEVICES lists the GPUs of the multi-GPU runs ("0,1"; default:
 * every visible GPU); GH_BENCH_REPS the timed runs per measurement (default
 * 5, median reported).  Prints markdown tables.  make bench-devices builds
 * and runs it.
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "engine.h"

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * Median ms of gh_build (agg: gh_aggregate, summing rows per key) over n
 * keys in host memory (malloc'd, pageable, as the executor's are): the host
 * splits them by hash range and copies each device its share.  -1 on
 * failure.
 */
static double
host_op_ms(gh_engine *e, bool agg, const uint64_t *keys, const uint64_t *rows, size_t n,
		   int reps)
{
	gh_aggcol	col = {GH_INT64, GH_AGG_SUM, rows, NULL};

	double		t[64];

	if (reps > 64)
		reps = 64;
	for (int r = -1; r < reps; r++)
	{
		gh_table   *tab = NULL;
		gh_groups  *g = NULL;
		double		t0 = now_ms();

		if (agg ? gh_aggregate(e, keys, n, &col, 1, &g) != GH_OK :
			gh_build(e, GH_KIND_HASHGRAPH, keys, rows, n, &tab) != GH_OK)
			return -1;
		if (r >= 0)
			t[r] = now_ms() - t0;
		gh_table_free(tab);
		gh_groups_free(g);
	}
	qsort(t, reps, sizeof(double), cmp_double);
	return t[reps / 2];
}

static gh_engine *
open_devices(const int *ids, int n)
{
	gh_options	opt;
	gh_engine  *e = NULL;
	char		err[256] = "";

	memset(&opt, 0, sizeof(opt));
	opt.backend = GH_BACKEND_CUDA;
	opt.ndevices = n;
	memcpy(opt.devices, ids, n * sizeof(int));
	if (gh_open(&opt, &e, err, sizeof(err)) != GH_OK)
	{
		fprintf(stderr, "bench_devices: gh_open: %s\n", err);
		exit(1);
	}
	return e;
}

/* GB/s of a 1 GiB cudaMemcpyPeer from src to dst (0 on failure). */
static double
peer_rate(int dst, int src, int *direct)
{
	size_t		bytes = (size_t) 1 << 30;
	void	   *a = NULL,
			   *b = NULL;
	cudaEvent_t t0 = NULL,
				t1 = NULL;
	float		ms = 0;
	double		rate = 0;

	*direct = 0;
	(void) cudaDeviceCanAccessPeer(direct, dst, src);
	if (cudaSetDevice(src) != cudaSuccess || cudaMalloc(&a, bytes) != cudaSuccess)
		goto done;
	if (cudaSetDevice(dst) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess)
		goto done;
	if (*direct)
		(void) cudaDeviceEnablePeerAccess(src, 0);
	(void) cudaGetLastError();
	if (cudaEventCreate(&t0) != cudaSuccess || cudaEventCreate(&t1) != cudaSuccess)
		goto done;
	(void) cudaMemcpyPeer(b, dst, a, src, bytes);	/* warm-up */
	(void) cudaEventRecord(t0, 0);
	for (int i = 0; i < 4; i++)
		(void) cudaMemcpyPeer(b, dst, a, src, bytes);
	(void) cudaEventRecord(t1, 0);
	if (cudaEventSynchronize(t1) == cudaSuccess &&
		cudaEventElapsedTime(&ms, t0, t1) == cudaSuccess && ms > 0)
		rate = 4.0 * (double) bytes / (ms * 1e6);
done:
	if (t0)
		(void) cudaEventDestroy(t0);
	if (t1)
		(void) cudaEventDestroy(t1);
	(void) cudaSetDevice(src);
	if (a)
		(void) cudaFree(a);
	(void) cudaSetDevice(dst);
	if (b)
		(void) cudaFree(b);
	(void) cudaGetLastError();
	return rate;
}

int
main(int argc, char **argv)
{
	static const struct
	{
		gh_bench_op op;
		gh_kind		kind;
		const char *name;
	}			ops[] = {
		{GH_BENCH_BUILD, GH_KIND_HASHGRAPH, "hashgraph build"},
		{GH_BENCH_JOIN, GH_KIND_HASHGRAPH, "hashgraph join"},
		{GH_BENCH_AGGREGATE, GH_KIND_AUTO, "aggregate"},
	};
	gh_device_info info[GH_MAX_DEVICES];
	int			nvis = gh_list_devices(info, GH_MAX_DEVICES);
	int			ids[GH_MAX_DEVICES],
				nids = 0;
	const char *list = getenv("GH_BENCH_DEVICES");
	int			reps = getenv("GH_BENCH_REPS") ? atoi(getenv("GH_BENCH_REPS")) : 5;
	int			sizes[8],
				nsizes = 0;
	gh_engine  *one,
			   *many;

	if (nvis == 0)
	{
		fprintf(stderr, "bench_devices: no GPU is visible\n");
		return 1;
	}
	if (list && *list)
	{
		for (char *p = (char *) list; *p && nids < GH_MAX_DEVICES;)
		{
			ids[nids++] = (int) strtol(p, &p, 10);
			while (*p == ',' || *p == ' ')
				p++;
		}
	}
	else
		for (int i = 0; i < nvis; i++)
			ids[nids++] = info[i].id;
	for (int i = 1; i < argc && nsizes < 8; i++)
		sizes[nsizes++] = atoi(argv[i]);
	if (nsizes == 0)
	{
		sizes[nsizes++] = 26;
		sizes[nsizes++] = 28;
	}
	if (reps < 1)
		reps = 1;

	printf("### Peer-to-peer copies (1 GiB cudaMemcpyPeer)\n\n| from | to | path | GB/s |\n|---:|---:|---|---:|\n");
	for (int s = 0; s < nids; s++)
		for (int d = 0; d < nids; d++)
			if (s != d)
			{
				int			direct = 0;
				double		r = peer_rate(ids[d], ids[s], &direct);

				printf("| %d | %d | %s | %.1f |\n", ids[s], ids[d],
					   direct ? "peer access" : "through the host", r);
			}

	one = open_devices(ids, 1);
	many = open_devices(ids, nids);
	printf("\n### Engine on GPU %d vs %d GPUs (median of %d runs)\n\n", ids[0], nids, reps);
	printf("| operation | keys | 1 GPU: ms | G keys/s | %d GPUs: ms | G keys/s | speed-up | exchange ms | exchange GB/s | slowest GPU's operation ms |\n",
		   nids);
	printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int z = 0; z < nsizes; z++)
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
		{
			size_t		n = (size_t) 1 << sizes[z];
			gh_bench_result r1,
						rn;
			double		slowest = 0;

			if (gh_bench(one, ops[o].op, ops[o].kind, n, reps, 0, &r1) != GH_OK)
			{
				printf("| %s | 2^%d | failed: %s |\n", ops[o].name, sizes[z], gh_last_error(one));
				continue;
			}
			if (gh_bench(many, ops[o].op, ops[o].kind, n, reps, 0, &rn) != GH_OK)
			{
				printf("| %s | 2^%d | %.3f | %.2f | failed: %s |\n", ops[o].name, sizes[z],
					   r1.ms, r1.mkeys_per_s / 1000, gh_last_error(many));
				continue;
			}
			for (int d = 0; d < rn.ndevices; d++)
				if (rn.dev[d].ms > slowest)
					slowest = rn.dev[d].ms;
			printf("| %s | 2^%d | %.3f | %.2f | %.3f | %.2f | %.2fx | %.3f | %.1f | %.3f |\n",
				   ops[o].name, sizes[z], r1.ms, r1.mkeys_per_s / 1000, rn.ms,
				   rn.mkeys_per_s / 1000, rn.ms > 0 ? r1.ms / rn.ms : 0, rn.exchange_ms,
				   rn.exchange_gb_per_s, slowest);
			fflush(stdout);
		}

	printf("\n### The exchange through pinned host memory (as between GPUs without peer access)\n\n");
	printf("| operation | keys | %d GPUs: ms | exchange ms | exchange GB/s |\n|---|---:|---:|---:|---:|\n", nids);
	gh_debug_stage_exchange(many, true);
	for (int z = 0; z < nsizes; z++)
	{
		gh_bench_result rn;

		if (gh_bench(many, GH_BENCH_BUILD, GH_KIND_HASHGRAPH, (size_t) 1 << sizes[z], reps, 0,
					 &rn) != GH_OK)
			printf("| hashgraph build | 2^%d | failed: %s |\n", sizes[z], gh_last_error(many));
		else
			printf("| hashgraph build | 2^%d | %.3f | %.3f | %.1f |\n", sizes[z], rn.ms,
				   rn.exchange_ms, rn.exchange_gb_per_s);
		fflush(stdout);
	}
	gh_debug_stage_exchange(many, false);

	printf("\n### From host memory (the executor's path: no exchange, the host sends each GPU its hash ranges; keys %% 2^20 for the aggregation)\n\n");
	printf("| operation | keys | 1 GPU: ms | %d GPUs: ms | speed-up |\n|---|---:|---:|---:|---:|\n", nids);
	for (int z = 0; z < nsizes; z++)
	{
		size_t		n = (size_t) 1 << sizes[z];
		uint64_t   *keys = malloc(n * sizeof(uint64_t)),
				   *rows = malloc(n * sizeof(uint64_t));
		uint64_t	x = 88172645463325252ULL;
		double		m1,
					mn;

		if (keys == NULL || rows == NULL)
		{
			printf("| | 2^%d | out of host memory |\n", sizes[z]);
			free(keys);
			free(rows);
			continue;
		}
		for (size_t i = 0; i < n; i++)
		{
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			keys[i] = x;
			rows[i] = i;
		}
		for (int agg = 0; agg < 2; agg++)
		{
			if (agg)
				for (size_t i = 0; i < n; i++)
					keys[i] &= (1 << 20) - 1;
			m1 = host_op_ms(one, agg, keys, rows, n, reps);
			mn = host_op_ms(many, agg, keys, rows, n, reps);
			if (m1 < 0 || mn < 0)
				printf("| %s | 2^%d | failed: %s |\n", agg ? "aggregate" : "hashgraph build",
					   sizes[z], gh_last_error(m1 < 0 ? one : many));
			else
				printf("| %s | 2^%d | %.1f | %.1f | %.2fx |\n", agg ? "aggregate" : "hashgraph build",
					   sizes[z], m1, mn, mn > 0 ? m1 / mn : 0);
			fflush(stdout);
		}
		free(keys);
		free(rows);
	}
	gh_close(one);
	gh_close(many);
	return 0;
}
