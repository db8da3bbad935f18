/*-------------------------------------------------------------------------
 *
 * star_state.h
 *	  The executor state of a GpuStarAgg, shared by star_exec.c (the node),
 *	  star_dims.c (reading the dimensions) and star_scan.c (the fact
 *	  table's pages).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_STAR_STATE_H
#define GPUHASH_STAR_STATE_H

#include "postgres.h"

#include "executor/executor.h"
#include "nodes/execnodes.h"
#include "storage/condition_variable.h"
#include "storage/spin.h"
#include "utils/dsa.h"

#include "agg.h"
#include "engine_ops.h"
#include "join_filter.h"
#include "page_scan.h"
#include "star.h"
#include "star_ops.h"

/* a dimension's grouping values row by row, serialized (star_dim_rows.c) */
typedef struct StarDimRows
{
	int			ncols;
	bool	   *byval;
	int16	   *len;
	char	   *buf;			/* each row's values, datumSerialize's form */
	Size		used;
	Size		cap;
	Size	   *offsets;		/* by code: where its row's values begin */
	uint64		n;
	uint64		cap_rows;
	MemoryContext cxt;
	MemoryContext valcxt;		/* the values of code cur, read back */
	int64		cur;
	Datum	   *vals;
	bool	   *nulls;
} StarDimRows;

/* one dimension, as read */
typedef struct StarDimState
{
	PlanState  *ps;
	char	   *name;
	int			ngroups;		/* grouping columns read from it */
	int			npayload;
	StarDimArrays arrays;		/* keys, payload values, then the group code */
	GhaDict    *dict;			/* its grouping columns' values by code */
	StarDimRows *rows_by_code;	/* ... or, with a group per row, row by row */
	int			ncodes;
	int64		rows;			/* rows read (EXPLAIN) */
	bool		partial;		/* read by every process, each its share */
	bool		checked;		/* unique by statistics only: its keys are checked */
	bool		semi;			/* a semi join's right side: one row of each key kept */
	bool		left;			/* a LEFT JOIN's right side (GH_PROBE_LEFT) */
	bool		anti;			/* an anti join's (GH_PROBE_ANTI; semi too) */
	bool		row_codes;		/* its key is a grouping column: a code per row, unhashed */
	/* a LEFT JOIN's: its grouping values where the join finds no row */
	Datum	   *null_values;
	bool	   *null_isnull;
	bool		null_row_set;	/* some of them not NULL: a group the star adds */
	bool		escaped;		/* a numeric value the device cannot hold was read */
	/* the filter of its rows by a smaller dimension's keys (star_dim_filter.c) */
	int			filter_source;	/* that dimension, or -1 */
	int			filter_col;		/* the payload column it checks, or -1: the key */
	double		est_rows;		/* its own rows as the planner estimated them */
	bool		complete;		/* read whole by this process: it can filter others */
	bool		filtering;		/* filter applied to this execution's rows */
	GhjFilter	filter;
	int64		removed;		/* rows the filter left out (EXPLAIN) */
	struct PushedFilter *pushed;	/* the filter at the scan that reads the key, or NULL */
	bool		push_tried;		/* looked for that scan */
	int64		pushed_removed; /* of the rows removed, those the scan left out */
} StarDimState;

/* a chunk of a dimension's share (star_dim_share.c): its segment, and where in it */
typedef struct StarChunkRef
{
	dsm_handle	handle;			/* DSM_HANDLE_INVALID: none */
	Size		offset;
} StarChunkRef;

/*
 * A parallel star's shared state: the dimensions every process reads a
 * share of, the star made of them, and who is still feeding it.  Every
 * process counts itself a reader before it reads its shares and active
 * before it takes its first block; the process that makes the star waits
 * until no reader is left, the one that returns the groups until none is
 * active (star_exec.c, PARALLELISM).
 */
typedef struct StarShared
{
	slock_t		mutex;
	ConditionVariable cv;
	StarPlace	place;			/* the star in the service (nparts 0: none) */
	bool		ready;			/* it is made */
	bool		leader_finishes;
	bool		maker_finishes; /* ... else the worker that made the star */
	int			active;			/* processes feeding it */
	bool		finished;		/* one has taken the groups */
	/* the device failed the star (in some process): it is given up */
	bool		failed;
	/* the leader's own star, which the leader does not feed: not fed */
	bool		alone;
	/* no star: a checked dimension holds a key twice, the alternative runs */
	bool		use_alt;
	/* a process's batch held a row the device cannot evaluate: the alternative runs */
	bool		escaped;
	/* a process's share of a dimension held a numeric the device cannot hold */
	bool		dim_escaped;
	/* the star's maker found this inner dimension empty: no process reads the fact table */
	int			empty_dim;
	int			failure;		/* gh_status: why, if the device failed (failed, alone) */
	char		failure_msg[256];
	/* what a worker needs to read the groups back (decode) */
	int			dim_codes[GH_PROG_MAX_DIMS];
	int			payload_scale[GH_PROG_MAX_DIMS * GH_PROG_MAX_DIMCOLS];
	int			payload_digits[GH_PROG_MAX_DIMS * GH_PROG_MAX_DIMCOLS];
	dsa_pointer dicts;			/* the dimensions' grouping values (serialized) */
	Size		dicts_size;
	/* dimensions read by every process, each its share (star_dim_share.c) */
	int			dim_readers;	/* processes reading their share */
	bool		dims_closed;	/* the star's maker merges them: none starts now */
	StarChunkRef dim_chunks[GH_PROG_MAX_DIMS];	/* the last published, each (a list) */
	/* filters of the leader's dimensions' keys, for the shares it does not read */
	dsa_pointer filter_bits[GH_PROG_MAX_DIMS];
	uint64		filter_mask[GH_PROG_MAX_DIMS];
} StarShared;

typedef struct GpuStarAggState
{
	CustomScanState css;
	MemoryContext cxt;			/* the node's, reset per execution */

	/* the plan */
	Oid			fact_relid;
	List	   *quals;
	List	   *joinquals;
	List	   *dims_plan;
	List	   *groups;
	List	   *grouptypes;
	List	   *aggs;
	List	   *payload_plan;
	List	   *group_eq;
	bool		parallel;
	int			ngroups;
	int			naggs;
	GhaOp	   *ops;
	Oid		   *argtypes;

	/* the inputs */
	PlanState  *fact_ps;		/* a Seq Scan, or an Append of a partitioned table's */
	ScanState **fact_scans;		/* the Seq Scans reading it (star_fact_scans) */
	int			nfact_scans;
	TupleDesc	fact_desc;		/* the layout of every one's pages */
	int			ndims;
	StarDimState *dims;
	int			npayloads;
	StarPayload *payloads;

	/* the star */
	GhOps		eng;
	StarCompiled *compiled;
	GhOpStar   *star;
	bool		done;			/* the groups are here (or were returned elsewhere) */
	bool		returns_groups; /* this process returns them */
	bool		whole_pass;		/* this process reads the whole fact table, a Gather or not */
	PlanState  *alt_ps;			/* PostgreSQL's plan of the scan tuple, or NULL */
	bool		use_alt;		/* a checked dimension holds a key twice: it runs */
	const char *alt_why;	/* why it ran (EXPLAIN ANALYZE) */
	int			empty_dim;		/* an inner dimension with no row: the fact table is
								 * not read (no row of it can join), or -1 */

	/* the groups */
	gh_groups  *groups_res;
	uint32		stat_devices;	/* the GPUs that made them, where several did */
	size_t		cur;
	bool		empty_row;		/* a plain aggregate over no rows: one row */
	char	  **numeric_buf;	/* per aggregate, room for a sum(int8) numeric */

	/* parallel */
	StarShared *shared;
	bool		shared_dims;	/* some dimension is read by every process */
	bool		made_star;		/* this process made the parallel star */
	bool		prepared;		/* ReInitializeDSM read and made this execution's */
	dsa_area   *area;
	List	   *share_segs;		/* the dimension shares' segments it maps (star_dim_share.c) */

	/* EXPLAIN ANALYZE */
	double		dims_ms;
	double		scan_ms;
	double		result_ms;
	int64		pages_shipped;
	int64		pages_cached;	/* of them, read from the page cache's copies */
	int64		pages_synthetic;	/* made of rows read on the CPU */
	int64		pages_reread;
	int64		pages_judged;		/* of those shipped, not all-visible */
	int64		pages_undecided;	/* handed back: a tuple's hint bits did not tell */
	int64		rows_cpu;		/* rows read on the CPU */
	int64		rows_kept;		/* rows the program kept (all processes) */
	GhPageStats dim_page_stats; /* dimensions read from their pages (this process) */
	int64		ngroups_out;
} GpuStarAggState;

/*
 * The next row of an input plan (or of its scan read from its pages), run
 * in the query's memory: a scan starts its scan there on its first row, and
 * must outlive the node's own context, which each execution makes afresh.
 */
static inline TupleTableSlot *
star_input_next(GpuStarAggState *s, PlanState *input, GhPageScan *pages)
{
	MemoryContext old = MemoryContextSwitchTo(s->css.ss.ps.state->es_query_cxt);
	TupleTableSlot *slot = pages ? gpuhash_page_scan_next(pages) : ExecProcNode(input);

	MemoryContextSwitchTo(old);
	return slot;
}

/* star_dims.c */
extern void star_read_dims(GpuStarAggState *s);
extern void star_read_dim(GpuStarAggState *s, int d);
extern void star_dim_groups_init(GpuStarAggState *s, int d);
extern Datum star_dim_group_value(StarDimState *dim, uint32 code, int col, bool *isnull);
extern void star_dim_finish(StarDimState *dim);
extern Size star_dim_values(StarDimState *dim, char **p);
extern void star_dim_values_add(StarDimState *dim, char **p, int ncodes, uint32 *map);
extern void star_dims_publish(GpuStarAggState *s, const bool *which);
extern void star_dim_merge(GpuStarAggState *s, int d);
extern void star_dim_chunks_free(GpuStarAggState *s);
extern void star_dim_shares_detach(GpuStarAggState *s);
extern StarDimRows *star_dim_rows_create(List *types, MemoryContext cxt);
/* star_dim_filter.c */
extern int	star_dim_next_to_read(GpuStarAggState *s, bool *read);
extern void star_dim_filter_begin(GpuStarAggState *s, int d);
extern void star_dim_filter_share(GpuStarAggState *s, int source);
extern void star_dim_filters_free(GpuStarAggState *s);
extern void star_dim_filter_push(GpuStarAggState *s, int d);
extern void star_dim_filter_end(GpuStarAggState *s, int d);
extern uint32 star_dim_rows_append(StarDimRows *r, const Datum *vals, const bool *nulls);
extern void star_dim_rows_add(StarDimRows *r, char **p, uint64 rows);
extern Datum star_dim_rows_value(StarDimRows *r, uint32 code, int col, bool *isnull);
extern void star_dims_to_shared(GpuStarAggState *s, StarShared *sh, dsa_area *area);
extern void star_dims_from_shared(GpuStarAggState *s, StarShared *sh, dsa_area *area);
extern bool star_compile_node(GpuStarAggState *s, const char **why);

/* star_scan.c: feed this process's share of the fact table to the star */
extern void star_scan_fact(GpuStarAggState *s);

#endif							/* GPUHASH_STAR_STATE_H */
