/*-------------------------------------------------------------------------
 *
 * agg.h
 *	  GpuHashAgg: what the planner half (agg_path.c) hands the executor half
 *	  (agg_exec.c).
 *
 * The plan node is a CustomScan with scanrelid 0 over one input plan (two
 * for a fused join: custom_plans holds the join's outer and inner inputs).
 * Its scan tuple (custom_scan_tlist) holds the grouping expressions first,
 * then one entry per aggregate (an Aggref, computed by the node), then the
 * Vars the aggregates' arguments and filters read.  custom_exprs holds lists
 * over the scan tuple (GHA_EXPR_* below), chiefly:
 *
 *	GHA_EXPR_GROUP	 the grouping expressions
 *	GHA_EXPR_ARGS	 per aggregate, its argument (a constant for count(*))
 *	GHA_EXPR_FILTER	 per aggregate, its FILTER clause (constant true if none)
 *	GHA_EXPR_JOIN_OUTER, GHA_EXPR_JOIN_INNER	 a fused join's key columns
 *
 * plan.qual is the HAVING clause; the target list projects the output.
 * Fused joins: src/README, "Planner: GpuHashAgg".
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_AGG_H
#define GPUHASH_AGG_H

#include "postgres.h"

#include "pg_compat.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"
#include "utils/dsa.h"

#define GPUHASH_AGG_NAME "GpuHashAgg"

/* The aggregates the engine computes. */
typedef enum GhaOp
{
	GHA_COUNT_STAR = 0,
	GHA_COUNT,
	GHA_SUM,
	GHA_AVG,
	GHA_MIN,
	GHA_MAX,
	GHA_CPU						/* min/max computed on the CPU (agg_dict.c) */
} GhaOp;

/* What a GpuHashAgg node computes. */
#define GHA_MODE_FULL		0	/* the aggregates, from the input rows */
#define GHA_MODE_PARTIAL	1	/* in a parallel worker: per-group partial values */
#define GHA_MODE_FINAL		2	/* above the Gather: the aggregates, from partials */

/* How a grouping column reaches the engine's 64-bit key. */
#define GHA_KEY_PACKED		0	/* its exact encoding, packed (keys.c) */
#define GHA_KEY_DICT		1	/* an id from the dictionary (agg_dict.c) */

/* custom_private positions */
#define GHA_PRIV_OPS		0	/* IntList: GhaOp per aggregate */
#define GHA_PRIV_ARGTYPES	1	/* OidList: argument type per aggregate */
#define GHA_PRIV_KEYTYPES	2	/* OidList: type per grouping column */
#define GHA_PRIV_SIDES		3	/* IntList: scan tuple map (scantuple.h) */
#define GHA_PRIV_ATTNOS		4	/* IntList */
#define GHA_PRIV_KEYPOS		5	/* IntList: scan tuple column of each grouping column */
#define GHA_PRIV_KEYMODES	6	/* IntList: GHA_KEY_* per grouping column */
#define GHA_PRIV_EQOPS		7	/* OidList: grouping equality per grouping column */
#define GHA_PRIV_KEYCOLLS	8	/* OidList: collation per grouping column */
#define GHA_PRIV_TRANSFNS	9	/* OidList: GHA_CPU transition function per aggregate */
#define GHA_PRIV_AGGCOLLS	10	/* OidList: input collation per aggregate */
#define GHA_PRIV_MODE		11	/* Integer: GHA_MODE_* */
#define GHA_PRIV_OUTAGG		12	/* IntList: per computed scan column, its aggregate */
#define GHA_PRIV_OUTPART	13	/* IntList: and which partial value of it (0, 1) */
#define GHA_PRIV_FUSED		14	/* Integer: gh_kind of a fused join's table; -1: not fused */
#define GHA_PRIV_KEYNULL	15	/* IntList: fused, per grouping column: may it be NULL? (NIL: all may) */

#define GHA_EXPR_GROUP		0
#define GHA_EXPR_ARGS		1
#define GHA_EXPR_FILTER		2
#define GHA_EXPR_ARGS2		3	/* GHA_MODE_FINAL: per aggregate, its second
								 * partial value (avg's count), or NULL */
#define GHA_EXPR_JOIN_OUTER	4	/* fused join: the outer join key (or NIL) */
#define GHA_EXPR_JOIN_INNER	5	/* and the inner one */

extern CustomScanMethods gpuhash_agg_scan_methods;

/* agg_dict.c: grouping values and aggregates the CPU handles */
typedef struct GhaDict
{
	int			ncols;
	TupleDesc	desc;
	TupleTableSlot *slot;		/* lookups */
	TupleTableSlot *out_slot;	/* reading an id's values back */
	uint32		out_id;
	Oid		   *eqfuncs;
	FmgrInfo   *hashfns;
	TupleHashTable table;
	MemoryContext cxt;
	MemoryContext tablecxt;
	MemoryContext tempcxt;
	uint32		nentries;
	size_t		entries_cap;
	void	  **entries;		/* by id: the group's state (agg_dict.c) */
	int			ncpu;			/* CPU aggregates */
	Size		state_size;
	FmgrInfo   *transfns;
	Oid		   *cpu_collations;
	int16	   *cpu_typlen;
	bool	   *cpu_typbyval;
	/* lookups' memo (agg_dict.c); memo_ids NULL: none */
	int16	   *memo_typlen;	/* by column: 0 passed by value, else its typlen */
	Datum	   *memo_values;	/* ncols a slot: the values passed by value */
	char	   *memo_bytes;		/* ncols a slot: copies of the others' bytes */
	uint8	   *memo_lens;		/* ... their lengths */
	int64	   *memo_ids;		/* a slot's id; -1: empty */
	uint32		memo_tries;		/* lookups of the memo since its use was checked */
	uint32		memo_hits;		/* ... that it answered */
} GhaDict;

extern GhaDict *gha_dict_create(PlanState *parent, List *types, List *eqops,
								List *collations, int ncpu, const Oid *cpu_transfns,
								const Oid *cpu_types, const Oid *cpu_collations,
								MemoryContext cxt);
extern uint32 gha_dict_lookup(GhaDict *d, const Datum *values, const bool *isnull);
extern int64 gha_dict_find(GhaDict *d, const Datum *values, const bool *isnull);
extern void gha_dict_advance(GhaDict *d, uint32 id, int a, Datum value, bool isnull);
extern Datum gha_dict_key(GhaDict *d, uint32 id, int col, bool *isnull);
extern Datum gha_dict_agg(GhaDict *d, uint32 id, int a, bool *isnull);
extern void gha_dict_reset(GhaDict *d);

/* agg_numeric.c: exact numeric sums */
typedef enum GhaNumClass
{
	GHA_NUM_FINITE = 0,
	GHA_NUM_NAN = 1,
	GHA_NUM_PINF = 2,
	GHA_NUM_NINF = 3
} GhaNumClass;

#define GHA_NUM_MAX_LIMBS 64	/* 1024 decimal digits between the extremes */

/* the engine columns of one numeric sum/avg */
typedef struct GhaNumCols
{
	int			dscale_col;		/* max display scale; its count is the count */
	int			special_col[3];	/* NaN, +Inf, -Inf counts; -1 until seen */
	int			nlimbs;
	int			limb_j[GHA_NUM_MAX_LIMBS];
	int			limb_col[GHA_NUM_MAX_LIMBS];
	bool		fixed;			/* every column made at start (an argument of a declared scale) */
} GhaNumCols;

extern GhaNumClass gha_numeric_split(Datum value, int *dscale, int *first_limb,
									 int *nlimbs, int64 *limbs, int max_limbs);
struct gh_groups;
extern Datum gha_numeric_final(bool avg, const struct gh_groups *g, const GhaNumCols *nc,
							   size_t group, bool *isnull);
extern Datum gha_numeric_from_int128(uint64 lo, int64 hi, int exp10);
extern bool gha_numeric_of_limbs(uint64 lo, int64 hi, int limb, int dscale, Datum *out);
extern Datum gha_numeric_of_int128(uint64 lo, int64 hi, char *into);
extern Datum gha_ordered_datum(Oid type, int64 v);
extern void gha_numcols_reset(GhaNumCols *nc);
extern bool gha_numeric_limb_range(int32 typmod, int *first, int *count);
extern pg_noreturn void gha_numeric_too_wide(void);

/* agg_fuse.c: joins a GpuHashAgg can take over */
typedef struct GhaFuseJoin
{
	PlannerInfo *root;
	RelOptInfo *joinrel;
	RelOptInfo *outerrel;
	RelOptInfo *innerrel;
	List	   *outer_keys;		/* the join key columns of each side */
	List	   *inner_keys;
} GhaFuseJoin;

#define GHA_SIDE_BOTH (-2)

extern void gpuhash_fuse_note_join(PlannerInfo *root, RelOptInfo *joinrel,
								   RelOptInfo *outerrel, RelOptInfo *innerrel,
								   List *outer_keys, List *inner_keys);
extern List *gpuhash_fuse_joins(PlannerInfo *root, RelOptInfo *joinrel);
extern int	gpuhash_fuse_side(GhaFuseJoin *fj, Node *expr);
extern bool gpuhash_fuse_never_null(PlannerInfo *root, Expr *expr);

/* agg_shared.c: a parallel fused join's inner side, read once and shared */
typedef struct GhaSideArrays
{
	int64		n;
	uint64	   *jkeys;			/* join keys */
	uint64	   *keys;			/* packed grouping keys */
	int			ncols;
	void	  **values;			/* per engine column, 8 bytes a row */
	uint8	  **nulls;
} GhaSideArrays;

typedef struct GhaSharedInner GhaSharedInner;

extern Size gha_shared_size(void);
extern void gha_shared_init(GhaSharedInner *sh, dsa_area *area, bool first);
extern bool gha_shared_attach(GhaSharedInner *sh);
extern void gha_shared_exchange(GhaSharedInner *sh, dsa_area *area, bool attached_early,
								const GhaSideArrays *mine, const bool *share,
								const bool *has_nulls, MemoryContext cxt,
								GhaSideArrays *all);

extern void gpuhash_agg_init(void);
/* agg_path.c: which aggregate the engine computes; what an output expression needs */
extern bool gpuhash_agg_classify(Aggref *agg, GhaOp *op, Oid *argtype, Oid *transfn);
extern char *gpuhash_agg_catalog_name(Aggref *agg);
extern bool gpuhash_agg_output_aggrefs(Node *node, List *group_exprs, List **aggrefs,
									   bool *cpu_aggs);
extern Node *gpuhash_agg_create_state(CustomScan *cscan);
extern bool gpuhash_agg_computed(Expr *expr, int mode);
/*
 * The result of one aggregate for one group (agg_final.c).  A sum of int8,
 * a numeric, is built in numeric (GHA_NUMERIC_BYTES, maximally aligned) when
 * it is given -- the node's own memory, valid until its next group -- and
 * palloc'd otherwise.
 */
#define GHA_NUMERIC_BYTES 32	/* a numeric of any 128-bit integer: 26 */
extern Datum gpuhash_agg_final(GhaOp op, Oid argtype, const struct gh_groups *g,
							   int col, size_t group, bool *isnull, char *numeric);
struct gh_aggresult;
extern int64 gpuhash_agg_int8_sum(const struct gh_aggresult *r, size_t group);
/*
 * A group's float sum, float4 (as sum(float4) returns it) or float8;
 * "value out of range: overflow" where finite values made it infinite, as
 * float8pl and float4pl raise it; -0 where it added -0s alone, as float8pl
 * makes it.  A float sum column also keeps the minimum and maximum of what
 * it adds (GHA_FLOAT_SUM_OPS), which say whether an input was infinite or
 * every one -0.  The sum an avg divides is 0 there (float8_accum's).
 */
#define GHA_FLOAT_SUM_OPS (GH_AGG_SUM | GH_AGG_MIN | GH_AGG_MAX)
extern double gpuhash_agg_float_sum(const struct gh_aggresult *r, size_t group, bool as_float4);
extern double gpuhash_agg_float_avg_sum(const struct gh_aggresult *r, size_t group);
/* the types of an aggregate's partial values (part 1: InvalidOid if none) */
extern Oid	gpuhash_agg_partial_type(GhaOp op, Oid argtype, int part);
/*
 * agg_twolevel.c: a query's count(DISTINCT x) as a GROUP BY that adds x, its
 * grouping sets and variances over the groups by all their columns (a copy,
 * or NULL); the plan to run of the two
 */
extern Query *gpuhash_twolevel_rewrite(Query *parse);
extern struct PlannedStmt *gpuhash_twolevel_choose(struct PlannedStmt *written,
												   struct PlannedStmt *rewritten);
/* agg_variance.c: is aggfnoid a variance or standard deviation finished from partial sums? */
extern bool gpuhash_variance_aggregate(Oid aggfnoid);

#endif							/* GPUHASH_AGG_H */
