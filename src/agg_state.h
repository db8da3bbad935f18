/*-------------------------------------------------------------------------
 *
 * agg_state.h
 *	  The executor state of a GpuHashAgg node, shared by agg_exec.c (the
 *	  node) and agg_fused_exec.c (its fused-join input).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_AGG_STATE_H
#define GPUHASH_AGG_STATE_H

#include "postgres.h"

#include "access/parallel.h"
#include "catalog/pg_type.h"
#include "nodes/execnodes.h"
#include "portability/instr_time.h"

#include "agg.h"
#include "engine.h"
#include "engine_ops.h"
#include "page_scan.h"
#include "keys.h"
#include "scantuple.h"

#define GHA_MAX_PATTERNS 256	/* 8 grouping columns */

typedef struct GhaEmitStep GhaEmitStep;

typedef struct GpuHashAggState
{
	CustomScanState css;
	PlanState  *input_ps;
	GpuHashScanMap map;

	/* grouping key */
	int			nkeys;
	List	   *key_states;
	Oid		   *keytypes;
	int		   *key_mode;		/* GHA_KEY_* */
	int		   *key_dictcol;	/* GHA_KEY_DICT: column in the dictionary */
	int		   *key_attno;		/* scan tuple column of each grouping column */
	int		   *key_shift;
	uint64	   *key_mask;
	bool	   *key_float;		/* a packed float4/float8 column (not fused): -0 noted */
	GhaDict    *dict;			/* NULL when every column is packed */
	int			dict_shift;		/* where the dictionary id sits in the key */
	Datum	   *dict_values;	/* one row's dictionary columns */
	bool	   *dict_isnull;
	Bitmapset  *expr_params;	/* PARAM_EXEC ids our own expressions read */

	/* aggregates */
	int			naggs;
	GhaOp	   *ops;
	Oid		   *argtypes;
	int			mode;			/* GHA_MODE_* */
	Oid		   *intypes;		/* the type of what each aggregate reads */
	int			nout;			/* computed scan columns */
	int		   *out_attno;		/* their scan tuple columns */
	int		   *out_agg;		/* their aggregates */
	int		   *out_part;		/* and which partial value (GHA_MODE_PARTIAL) */
	char	  **out_numeric;	/* per column, room for a sum(int8) numeric (GHA_NUMERIC_BYTES) */
	int		   *agg_col2;		/* GHA_MODE_FINAL avg: the count column */
	ExprState **args2;			/* GHA_MODE_FINAL: the second partial values */
	int		   *agg_col;		/* engine column, -1: none (plain count(*)) */
	int		   *agg_cpu;		/* GHA_CPU: its number in the dictionary */
	GhaNumCols **numcols;		/* numeric sum/avg: its engine columns */
	ExprState **args;
	ExprState **filters;
	int			ncols;
	int			nstatic_cols;	/* columns made at start; the rest are lazy */
	int			cols_cap;
	gh_aggcol  *cols;			/* engine column descriptions */
	bool	   *col_nulls;		/* does the column have NULL flags? */

	MemoryContext node_cxt;
	MemoryContext data_cxt;
	GhOps		eng;			/* where the engine runs (engine_ops.h) */

	/* collected input */
	int64		nrows;
	int64		cap;
	int64		cap_hint;	/* rows the input is expected to have */
	uint64	   *keys;
	uint8	   *patterns;
	void	  **values;			/* per engine column, 8 bytes per row */
	uint8	  **nulls;

	/*
	 * Float grouping columns whose value is -0 (packed as 0): the rows and
	 * their columns, in row order (data_cxt); and the groups whose first row
	 * is one of them, which show -0 as PostgreSQL shows the first row's
	 * value (node_cxt; sorted by key and pattern).  Almost always empty.
	 */
	int64		nnegzero;
	int64		negzero_cap;
	int64	   *negzero_row;
	uint8	   *negzero_cols;	/* bit k: grouping column k is -0 */
	int			nshow;
	uint64	   *show_key;
	uint8	   *show_pattern;
	uint8	   *show_cols;

	/* results */
	int			nresults;
	uint8		result_pattern[GHA_MAX_PATTERNS];
	gh_groups  *results[GHA_MAX_PATTERNS];
	bool		input_pooled;	/* final: the input is a pool's groups, each once; the
								 * results are then identity_groups() over it */
	int			cur;
	size_t		cur_group;
	/* returning the groups (agg_emit.c) */
	GhaEmitStep *emit_steps;
	int			emit_nsteps;
	const gh_groups *emit_groups;	/* the result they are for; NULL: none */
	bool		emit_fast;		/* ... and whether they apply to it */
	instr_time	return_start;	/* when the first group was asked for (DEBUG1) */
	bool		returning;
	bool		aggregated;

	/* a fused join (agg.h): the inner input, join keys, sides */
	PlanState  *inner_ps;
	int			fused_kind;		/* gh_kind of the join's table; -1: not fused */
	int			njkeys;			/* join key columns */
	ExprState **jkey[2];		/* outer, inner: each column's expression */
	GpuHashExactFamily *jfamily[2];
	Oid		   *jtype[2];
	int		   *jwidth;		/* each column's bits in the key (keys.c) */
	int		   *jshift;
	int		   *key_side;		/* per grouping column: 0 outer, 1 inner */
	int		   *agg_side;		/* per aggregate */
	int		   *col_side;		/* per engine column */
	int		   *col_owner;		/* per engine column: the aggregate that fills it, -1: none
								 * (aggregates of one value share it: shared_column) */
	int			cur_side;		/* the side of columns add_column makes */
	int			pattern_shift;	/* where the NULL flags sit in the key */
	int		   *key_nullbit;	/* packed column i's NULL flag: that bit above it */
	int			dict_side;		/* the side of the dictionary's columns */
	uint64	   *jkeys;			/* per collected row, its join key */
	GhaSharedInner *shared;		/* parallel-aware: the inner side, shared */
	struct GhaPoolShared *pool;	/* parallel-aware: the GPU service's pool */
	struct GhaPoolOwner *pool_owner;	/* the leader's: frees it if nobody finishes it */
	bool		pool_used;		/* this process fed the pool (for EXPLAIN) */
	bool		pool_pages;		/* ... and the service put shipped pages' rows in it */
	bool		pool_late;		/* attached after the pool was aggregated */
	bool		pool_finisher;	/* this process aggregated the pool */
	int64		pool_flushed;	/* rows of the side being read sent already */
	int64		pool_flush_at;	/* rows collected at which to append (no pool: never) */
	bool		final_takes_pool;	/* partial: the final node above finishes the pool */
	struct GpuHashAggState *pool_child; /* final: the partial node whose pool it can finish */
	bool		pool_direct;	/* final: its results are that pool's groups */
	GhOpTable  *table;
	bool		empty_row;		/* a plain aggregate over no rows: one row */
	gh_groups  *empty_group;

	/* EXPLAIN ANALYZE */
	int64		stat_groups;
	int64		stat_pairs;
	int64		stat_inner_rows;	/* fused: rows kept of each side */
	int64		stat_outer_rows;
	double		stat_inner_ms;	/* reading them (their input plans included) */
	double		stat_share_ms;	/* sharing the inner side (waiting included) */
	double		stat_outer_ms;
	double		stat_pool_ms;	/* appending to the pool */
	int64		stat_pool_appends;
	int			stat_partitions;
	double		stat_engine_ms;
	size_t		stat_peak_device;
	uint32		stat_devices;	/* devices that aggregated */
	GhPageStats page_stats;	/* heap pages read directly (page_scan.h) */
} GpuHashAggState;

/*
 * Does aggregate a read its value into an engine column an earlier
 * aggregate of the same value fills (agg_exec.c, shared_column)?
 */
static inline bool
gha_column_shared(const GpuHashAggState *s, int a)
{
	int			c = s->agg_col[a];

	return c >= 0 && s->col_owner[c] >= 0 && s->col_owner[c] != a;
}

/*
 * Aggregate a's input value d (or NULL) of row r into its engine column c,
 * as the engine wants it: counts only need the NULL flag; sums, minima and
 * maxima the value as int64 (floats for min/max in an order-keeping int64)
 * or double.
 */
static inline void
gha_store_agg_value(GpuHashAggState *s, int a, int c, int64 r, Datum d, bool isnull)
{
	int64	   *iv = (int64 *) s->values[c] + r;
	Oid			t = s->intypes[a];
	bool		final = (s->mode == GHA_MODE_FINAL);

	s->nulls[c][r] = isnull;
	*iv = 0;
	if (isnull || (!final && (s->ops[a] == GHA_COUNT_STAR || s->ops[a] == GHA_COUNT)))
		return;
	if (s->cols[c].type == GH_FLOAT64)
		*(double *) iv = (t == FLOAT4OID) ? (double) DatumGetFloat4(d) : DatumGetFloat8(d);
	else if (t == FLOAT4OID)
		*iv = gpuhash_float_order((double) DatumGetFloat4(d));
	else if (t == FLOAT8OID)
		*iv = gpuhash_float_order(DatumGetFloat8(d));
	else if (t == INT2OID)
		*iv = DatumGetInt16(d);
	else if (t == INT4OID || t == DATEOID)
		*iv = DatumGetInt32(d);
	else if (t == OIDOID)
		*iv = (int64) DatumGetObjectId(d);
	else
		*iv = DatumGetInt64(d);
}

/* Grouping column k's value d (not NULL), packed into its bits of the key. */
static inline uint64
gha_key_bits(const GpuHashAggState *s, int k, Datum d)
{
	return (gpuhash_pack_key(s->keytypes[k], d) & s->key_mask[k]) << s->key_shift[k];
}

extern void gha_note_negzero(GpuHashAggState *s, int k, Datum d, int64 row);

/*
 * The same for collected row row: a float -0, packed as 0 as +0 is, is
 * noted, for the group to show it if it is the group's first row.
 */
static inline uint64
gha_row_key_bits(GpuHashAggState *s, int k, Datum d, int64 row)
{
	uint64		bits = gpuhash_pack_key(s->keytypes[k], d);

	if (unlikely(bits == 0) && s->key_float[k])
		gha_note_negzero(s, k, d, row);
	return (bits & s->key_mask[k]) << s->key_shift[k];
}

/*
 * A fused node's NULL flags travel in the key: the bits of the grouping
 * columns that are NULL in pattern.
 */
static inline uint64
gha_fused_null_bits(const GpuHashAggState *s, uint8 pattern)
{
	uint64		bits = 0;

	for (int i = 0; i < s->nkeys; i++)
		if (pattern & (1 << i))
		{
			if (s->key_nullbit[i] < 0)
				elog(ERROR, "gpuhash: NULL in grouping column %d, planned as never NULL", i + 1);
			bits |= UINT64CONST(1) << (s->pattern_shift + s->key_nullbit[i]);
		}
	return bits;
}

/* agg_exec.c */
extern void gha_reserve_rows(GpuHashAggState *s, int64 n);
extern void gha_collect_row(GpuHashAggState *s, ExprContext *econtext, int side);
extern void gha_add_result(GpuHashAggState *s, uint8 pattern, instr_time start);
extern Datum gha_output_value(GpuHashAggState *s, const gh_groups *g, size_t gi, int o,
							  bool *isnull);

/* agg_emit.c */
extern bool gha_emit_prepare(GpuHashAggState *s, const gh_groups *g, uint8 pattern);
extern void gha_emit_group(GpuHashAggState *s, const gh_groups *g, size_t gi,
						   TupleTableSlot *scan);

/*
 * agg_pages.c: read input side (0, 1 of a fused join; -1 the only input)
 * from its pages in runs; false (nothing read) if the columns cannot be
 * taken as they are.  counts: rows per NULL pattern, or NULL.
 */
struct GhPageScan;
extern bool gha_collect_pages(GpuHashAggState *s, struct GhPageScan *ps, int side,
							  int64 *counts);

/* agg_fused_exec.c */
extern int	gha_scan_expr_side(const GpuHashScanMap *map, Node *expr);
extern void gha_aggregate_fused(GpuHashAggState *s);

/* agg_pool.c */
typedef struct GhaPoolShared GhaPoolShared;
extern bool gha_pool_active(GpuHashAggState *s);
extern const GhOpPool *gha_pool_handle(GpuHashAggState *s);
extern void gha_pool_attach(GpuHashAggState *s);
extern void gha_pool_append(GpuHashAggState *s, int side, int pattern, const uint64 *keys,
							const uint64 *jkeys, int64 n, const gh_aggcol *cols,
							const uint8 *col_inner);
extern void gha_pool_done(GpuHashAggState *s);
extern bool gha_pool_take(GpuHashAggState *final, GpuHashAggState *child);

/*
 * A pooled node sends its rows to the pool as it reads them, every
 * GHA_POOL_BATCH rows (pool_flush_at, set by gha_pool_attach), so that the
 * GPU service takes them in while the processes are still reading instead
 * of all at once at the end.
 */
#define GHA_POOL_BATCH (INT64CONST(1) << 21)
static inline bool
gha_pool_batch_full(const GpuHashAggState *s)
{
	return s->nrows >= s->pool_flush_at;
}

/* Does side (0 outer, 1 inner) of a fused node have grouping columns? */
static inline bool
gha_side_keyed(const GpuHashAggState *s, int side)
{
	for (int i = 0; i < s->nkeys; i++)
		if (s->key_side[i] == side)
			return true;
	return false;
}
/* agg_exec.c: send the rows read so far (input side, as gha_collect_pages) */
extern void gha_pool_flush(GpuHashAggState *s, int side, int64 *counts);
extern Size gha_estimate_dsm(CustomScanState *node, ParallelContext *pcxt);
extern void gha_initialize_dsm(CustomScanState *node, ParallelContext *pcxt, void *coordinate);
extern void gha_reinitialize_dsm(CustomScanState *node, ParallelContext *pcxt,
								 void *coordinate);
extern void gha_initialize_worker(CustomScanState *node, shm_toc *toc, void *coordinate);

#endif							/* GPUHASH_AGG_STATE_H */
