/*-------------------------------------------------------------------------
 *
 * engine_test.h
 *	  Declarations shared by the engine unit tests.
 *
 * The tests use the engine's public API only (engine.h) and check it
 * against an oracle written independently of the engine (oracle.c: sorting
 * and binary search, no hashing).  Every check belongs to a named case;
 * a case fails on its first wrong result and prints one line saying which
 * case and what was wrong.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_ENGINE_TEST_H
#define GPUHASH_ENGINE_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* ---- the run (engine_test.c) ---- */

typedef struct test_run
{
	gh_backend	backend;
	const char *backend_name;
	int			ngpus;			/* CUDA devices present */
	bool		quick;			/* GH_TEST_QUICK: small cases only */
	uint64_t	seed;
	int			passed;
	int			failed;
} test_run;

extern test_run run;

/* Start a case; its name reads like a specification. */
extern void case_begin(const char *fmt,...) __attribute__((format(printf, 1, 2)));
/* Record a failure of the current case (the first one is printed). */
extern void case_fail(const char *fmt,...) __attribute__((format(printf, 1, 2)));
/* Finish the current case, counting it passed or failed. */
extern void case_end(void);

/* Check a status; false (and the case failed) unless it is GH_OK. */
extern bool check_ok(gh_status st, gh_engine *e, const char *what);

/* ---- engine configurations (engine_test.c) ---- */

typedef struct test_config
{
	int			ndevices;
	size_t		memory_limit;	/* 0: the engine's default */
	double		load_factor;	/* 0: default */
} test_config;

/* Open an engine for the run's backend and config; NULL (case failed) on error. */
extern gh_engine *open_engine(const test_config *cfg);
/* Devices for a config of nd: the CUDA backend has only the GPUs present. */
extern int	usable_devices(int nd);

/* An interrupt callback that counts its polls and fires when armed. */
typedef struct interrupter
{
	bool		armed;
	long		polls_left;		/* fire once this reaches 0 */
	long		polls;
} interrupter;

/* open_engine on usable_devices(ndevices), polling in as its interrupt. */
extern gh_engine *open_interruptible(interrupter *in, size_t memory_limit,
									 int ndevices);
/* Open one engine per configuration (a case each); fresh[c]: its bytes then. */
extern void open_engines(const test_config *cfgs, int n, gh_engine **engines,
						 size_t *fresh);
/* Check each engine holds fresh[c] bytes again ("... back to a fresh
 * engine's <after>"), that it peaked above 0 if asked, and close it. */
extern void close_engines(const test_config *cfgs, int n, gh_engine **engines,
						  const size_t *fresh, const char *after, bool want_peak);
/* Does e hold want bytes of device memory?  If not the case fails, naming when. */
extern bool check_device_bytes(gh_engine *e, size_t want, const char *when);
/* "3 devices, 64 KiB limit" */
extern const char *config_name(const test_config *cfg, char *buf, size_t len);
/*
 * The configurations every join and aggregation input runs under, for the
 * run's backend: returns how many were written to out.
 */
extern int	test_configs(test_config *out, int max);
extern const char *kind_name(gh_kind kind);
extern const char *method_name(gh_join_method method);
extern void *xmalloc(size_t bytes);
extern void *xcalloc(size_t count, size_t size);

/* ---- random data (gen.c) ---- */

typedef struct rng
{
	uint64_t	s;
} rng;

extern uint64_t rng_next(rng *r);
/* Uniform in [0, n); n > 0. */
extern uint64_t rng_below(rng *r, uint64_t n);
extern double rng_unit(rng *r);

typedef enum dist_kind
{
	DIST_UNIQUE,				/* every key once */
	DIST_DUPS,					/* about 8 copies of each key */
	DIST_ZIPF,					/* ranks drawn with Zipf skew s = 1.2 */
	DIST_EQUAL,					/* one key n times */
	DIST_EQUAL_MAX				/* the key 2^64-1 n times */
} dist_kind;

/*
 * A key distribution: keys are key_of(rank) for ranks in [0, domain);
 * ranks 0 and 1 map to the extreme keys 2^64-1 and 0 (so the hottest Zipf
 * key is 2^64-1).
 */
typedef struct dist
{
	dist_kind	kind;
	size_t		domain;
	uint64_t	salt;
	double	   *zipf_cdf;		/* DIST_ZIPF: domain entries */
} dist;

extern const char *dist_name(dist_kind kind);
extern void dist_init(dist *d, dist_kind kind, size_t n, rng *r);
extern void dist_free(dist *d);
extern uint64_t dist_key(const dist *d, uint64_t rank);
/* n build keys drawn from d. */
extern uint64_t *gen_build_keys(const dist *d, size_t n, rng *r);
/*
 * m probe keys over d's domain and beyond (present and absent keys, with
 * 0 and 2^64-1), about max_pairs pairs in all against n build keys.
 */
extern uint64_t *gen_probe_keys(const dist *d, size_t n, size_t m,
								uint64_t max_pairs, rng *r);
/*
 * A float8 for aggregation tests: NaN, -0, +0, +Infinity or -Infinity when
 * pick % period is 0 to 4, else uniform in (-scale/2, scale/2).
 */
extern double gen_float_with_specials(rng *r, uint64_t pick, unsigned period,
									  double scale);
/* A random permutation of 0..n-1. */
extern uint64_t *gen_permutation(size_t n, rng *r);

/* ---- oracle (oracle.c) ---- */

/*
 * One join input with its expected results: build keys/rows, probe keys,
 * and what the oracle says about them.
 */
typedef struct join_input
{
	char		label[160];		/* "zipf keys, n=65537" */
	const uint64_t *keys;
	const uint64_t *rows;		/* NULL: 0..n-1 */
	size_t		n;
	const uint64_t *probe;
	size_t		m;
	/* expected */
	size_t		ndistinct;		/* distinct build keys */
	uint64_t   *matches;		/* per probe key, its number of build rows */
	gh_pair    *want;			/* every pair, sorted by (outer, inner) */
	uint64_t	total;
} join_input;

extern void join_input_prepare(join_input *in, const uint64_t *keys,
							   const uint64_t *rows, size_t n,
							   const uint64_t *probe, size_t m);
extern void join_input_release(join_input *in);
/* Sort pairs by (outer, inner); every outer is below m. */
extern void sort_pairs(gh_pair *p, size_t n, size_t m);

/* Expected aggregation results of one column of one group. */
typedef struct want_col
{
	int64_t		nonnull;
	__int128	isum;
	long double fsum;
	double		fabs_sum;		/* sum of |v|, for the float tolerance */
	int64_t		imin;
	int64_t		imax;
	double		fmin;
	double		fmax;
} want_col;

/* Expected aggregation results, groups sorted by key. */
typedef struct agg_oracle
{
	size_t		ngroups;
	uint64_t   *keys;
	int64_t    *rows;
	int			ncols;
	want_col   *cols;			/* group g, column c: cols[g * ncols + c] */
} agg_oracle;

extern void oracle_aggregate(agg_oracle *a, const uint64_t *keys, size_t n,
							 const gh_aggcol *cols, int ncols);
extern void agg_oracle_free(agg_oracle *a);
/* Compare an engine result with the oracle's; the case fails on a difference. */
extern void compare_groups(const gh_groups *got, const agg_oracle *want,
						   const gh_aggcol *cols, int ncols);

/* ---- cases ---- */

extern void run_join_cases(void);	/* cases_join.c */
extern void run_agg_cases(void);	/* cases_agg.c */
extern void run_api_cases(void);	/* cases_api.c */
extern void run_device_cases(void);	/* cases_devices.c */
extern void run_joinagg_cases(void);	/* cases_joinagg.c */
extern void run_pages_cases(void);	/* cases_pages.c */
extern void run_pagebatch_cases(void);	/* cases_pagebatch.c */
extern void run_star_cases(void);	/* cases_star.c */

/*
 * Writing heap pages (cases_pages.c): little-endian stores and loads,
 * random bytes, one heap tuple of random values of a schema with the row
 * it must read as (its length returned; tup has room for 512 bytes), a
 * heap tuple of given attributes (varlenas too), shuffled page lists with
 * repeats, random schemas and their descriptions.
 */
extern void put16(uint8_t *p, uint32_t v);
extern void put32(uint8_t *p, uint32_t v);
extern uint32_t get16(const uint8_t *p);
/*
 * Give the heap tuple header at tup hint bits, xmin and xmax that tell its
 * visibility to an MVCC snapshot whose xmin is horizon, chosen at random:
 * the visibility HeapTupleSatisfiesMVCC gives it, 1 or 0, or -1 where the
 * header alone cannot tell (cases_pages.c).
 */
extern int	gen_vis_header(uint8_t *tup, uint32_t horizon, rng *r);
extern uint32_t get32(const uint8_t *p);
extern void fill_random(uint8_t *p, size_t n, rng *r);
extern size_t build_tuple(const gh_pagespec *s, rng *r, int null_pct, bool no_data,
						  uint8_t *tup, uint64_t *vals, uint8_t *nulls);
/* One attribute of a tuple for write_tuple: NULL, or its stored bytes. */
typedef struct tuple_att
{
	bool		null;
	const uint8_t *bytes;		/* attlen bytes, or a varlena's header and data */
	size_t		len;
} tuple_att;
extern size_t write_tuple(const gh_pagespec *s, int tnatts, const tuple_att *atts,
						  uint8_t *tup, size_t room, rng *r, size_t *att_pos);
extern uint32_t *page_list(size_t n, size_t nbase, rng *r);
/*
 * The 8 kB pages of host memory this process registered with gh_register_host
 * (the pages cases register one range on the CUDA backend): NULL if none.
 * Tests may write pages there.
 */
#define REGISTERED_PAGE_COUNT 64
extern uint8_t *registered_pages(size_t *npages);
extern void random_schema(gh_pagespec *s, int natts, rng *r);
extern const char *schema_desc(const gh_pagespec *s, char *buf, size_t len);

/*
 * Build a table of kind on e and check it against the oracle: the build,
 * gh_find, and one join per method (probe, intersect, auto), each written
 * in chunks of a cap picked from caps (cases_join.c).
 */
extern void check_table(gh_engine *e, const test_config *cfg, gh_kind kind,
						const join_input *in, const size_t *caps, int ncaps);


/* every operation gh_bench times, with a table kind (cases_api.c) */
typedef struct bench_case
{
	gh_bench_op op;
	gh_kind		kind;
	const char *name;
} bench_case;
extern const bench_case bench_cases_all[];
extern const size_t n_bench_cases_all;

#endif							/* GPUHASH_ENGINE_TEST_H */
