/*-------------------------------------------------------------------------
 *
 * star.h
 *	  GpuStarAgg: an aggregation over a star of inner joins -- one large
 *	  relation (the fact table) and any number of smaller ones (dimensions),
 *	  each joined to it by an equality on a key it is unique on -- run as one
 *	  pipeline on the device (engine.h, "the star pipeline").  What the
 *	  planner (star_path.c) hands the executor (star_exec.c), and the
 *	  compiler (star_compile.c) both use.
 *
 * THE PLAN NODE
 *
 * A CustomScan with scanrelid 0.  custom_plans: the fact table's Seq Scan
 * (its target list the table's physical columns; its qual only the quals
 * the device cannot evaluate), or an Append of such scans of its partitions
 * (star_fact.c), then one plan per dimension whose target
 * list is the dimension's join key columns, then its grouping expressions,
 * then its payload: the values the fact side's expressions read of it.
 * custom_scan_tlist: the grouping expressions, then the aggregates, all
 * computed by the node; the target list and qual (HAVING) read them.
 *
 * The expressions the device evaluates live in custom_private, rewritten so
 * that they depend on nothing setrefs would renumber: a fact column is
 * Var(OUTER_VAR, its heap attribute number), a dimension's payload value
 * Var(INNER_VAR, its payload number).  The Params they read are listed in
 * custom_exprs, so that the executor's parameter bookkeeping sees them.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_STAR_H
#define GPUHASH_STAR_H

#include "postgres.h"

#include "access/tupdesc.h"
#include "nodes/execnodes.h"
#include "nodes/extensible.h"
#include "nodes/pathnodes.h"

#include "agg.h"
#include "engine.h"

#define GPUHASH_STAR_NAME "GpuStarAgg"

/*
 * The fewest pages of a table a dimension's Seq Scan is read from directly
 * (128 MB; gpuhash.debug_dim_pages_min for tests): star_dims.c reads it so,
 * star_path.c costs it so
 */
#define STAR_DIM_MIN_PAGES		16384
#define star_dim_min_pages() \
	((BlockNumber) (gpuhash_debug_dim_pages_min > 0 ? gpuhash_debug_dim_pages_min : STAR_DIM_MIN_PAGES))

/* the 7-byte chunks a wide text grouping column may take (star_key_bits) */
#define STAR_TEXT_CHUNKS	8

/* custom_private positions */
#define STAR_PRIV_FACT_RELID	0	/* Integer: the fact table's OID (for EXPLAIN and checks) */
#define STAR_PRIV_QUALS			1	/* List: the quals the device evaluates */
#define STAR_PRIV_DIMS			2	/* List of StarDim lists (star_dim_*) */
#define STAR_PRIV_GROUPS		3	/* List per grouping column: (Integer dim, expr or NIL) */
#define STAR_PRIV_GROUPTYPES	4	/* List per grouping column: (type, typmod, collation, the
									 * bytes a text is kept in: star_key_bits) */
#define STAR_PRIV_AGGS			5	/* List per aggregate: (op, argtype, arg, filter) */
#define STAR_PRIV_PAYLOADS		6	/* List per payload value: (dim, column, type, typmod) */
#define STAR_PRIV_PARALLEL		7	/* Integer: 1 if the node runs under a Gather */
#define STAR_PRIV_FACT_RTI		8	/* Integer: the range table index, when planned, of the
									 * table the first fact scan reads */
#define STAR_PRIV_QUALS_SHOWN	9	/* List: the device quals as written (EXPLAIN) */
#define STAR_PRIV_GROUP_EQ		10	/* List per grouping column: (eqop, collation) */
#define STAR_PRIV_ALT			11	/* Integer: 1 if the last input plan is the alternative */
#define STAR_PRIV_JOIN_QUALS	12	/* List: join clauses the device evaluates after the probes */
#define STAR_PRIV_JOIN_SHOWN	13	/* List: those join clauses as written (EXPLAIN) */
#define STAR_PRIV_COUNT			14

/* A dimension as the plan describes it: a list (nkeys, key types, ngroups, npayload). */
#define STAR_DIM_NKEYS			0
#define STAR_DIM_KEYTYPES		1	/* OidList: the fact side's type of each key column */
#define STAR_DIM_FACTKEYS		2	/* List: the fact side of each key column (rewritten) */
#define STAR_DIM_NGROUPS		3	/* Integer: grouping columns read from this dimension */
#define STAR_DIM_NPAYLOAD		4	/* Integer: payload values */
#define STAR_DIM_NAME			5	/* String: what EXPLAIN calls it */
#define STAR_DIM_CLAUSES		6	/* List: the join clauses, for EXPLAIN (as planned) */
#define STAR_DIM_UNIQUENESS		7	/* Integer: how the dimension is unique on its key: */
#define STAR_DIM_UNIQUE			0	/* provably (a unique index) */
#define STAR_DIM_CHECK			1	/* by statistics only: its keys are checked */
#define STAR_DIM_SEMI			2	/* not needed: the right side of a semi or anti join */
#define STAR_DIM_FILTER			8	/* Integer: the dimension whose keys filter this one's rows, or -1 */
#define STAR_DIM_EST_ROWS		9	/* Float: its rows as estimated (the filter's worth); written
									 * with a decimal point, so that it is read back a Float */
#define STAR_DIM_JOIN			10	/* Integer: GH_PROBE_INNER, _LEFT (a LEFT JOIN's) or _ANTI (an
									 * anti join's, STAR_DIM_SEMI too) */
#define STAR_DIM_NULL_ROW		11	/* List: a LEFT JOIN's dimension, each grouping column's value (a
									 * Const) where the join finds no row; else NIL */
#define STAR_DIM_FILTER_COL		12	/* Integer: the payload column the filter checks (its child's
									 * key: star_path.c, dim_filters), or -1: the key */

/* what the compiler needs to know of a payload value */
typedef struct StarPayload
{
	int			dim;
	int			col;			/* its column among the dimension's payload */
	Oid			type;
	int32		typmod;
	/* numerics: static scale and digits (from typmod, or the values read) */
	int			scale;
	int			digits;
} StarPayload;

/* the fact table's columns, as the compiler sees them */
typedef struct StarFact
{
	TupleDesc	desc;			/* the fact table's */
	int			ncols;			/* columns the program reads */
	AttrNumber	attno[GH_PAGE_MAX_OUT];
} StarFact;

/* A grouping column's place in the key (StarCompiled). */
typedef struct StarField
{
	int			dim;			/* >= 0: the code of that dimension's groups */
	int			shift;			/* packed key: where it sits */
	int			width;
	int			nullbit;		/* -1: never NULL */
	int			outcol;			/* mixed key: the output column holding it, else -1 */
	int			nchunks;		/* a wide text: its 7-byte chunks, in outcol .. outcol +
								 * nchunks - 1 (star_key_bits); 0: not one */
	int			zerocol;		/* a float: the output column of its exact values (-0
								 * apart from 0), whose minimum and maximum must
								 * agree in every group; -1: none */
} StarField;

/* An aggregate's output columns (StarCompiled). */
typedef struct StarAggCols
{
	int			col;			/* its first output column, -1: none (count(*)) */
	GhaNumCols	num;			/* numeric sum/avg: its limbs and display scale */
	int			scale;			/* numeric min/max: the scale of its integers */
} StarAggCols;

/* The program made for one execution, and how to read its groups back. */
typedef struct StarCompiled
{
	gh_prog    *prog;
	gh_pagespec spec;
	bool		mixed_key;		/* the key is a hash of the fields (KEYMIX) */
	bool		zero_cols;		/* some field has a zerocol */
	int			nfields;
	StarField  *fields;			/* per grouping column */
	StarAggCols *aggs;			/* per aggregate */
	bool		cpu_quals;		/* some quals stay on the CPU (the Seq Scan's) */
} StarCompiled;

/* the inputs of one compilation */
typedef struct StarCompileInput
{
	StarFact	fact;
	List	   *quals;
	List	   *joinquals;		/* evaluated once every dimension is looked up */
	List	   *dims;			/* STAR_PRIV_DIMS */
	uint64		left_dims;		/* bit d: dimension d is LEFT-joined (STAR_DIM_JOIN) */
	uint64		anti_dims;		/* ... anti-joined */
	const int64 *null_codes;	/* LEFT-joined dimension d's code of its rows NULL in
								 * every grouping column, or -1; NULL: none known */
	List	   *groups;			/* STAR_PRIV_GROUPS */
	List	   *grouptypes;
	List	   *aggs;			/* STAR_PRIV_AGGS */
	int			npayloads;
	StarPayload *payloads;
	int		   *dim_codes;		/* per dimension: the codes of its groups (0: none) */
	ExprContext *econtext;		/* evaluates Params; NULL at plan time */
} StarCompileInput;

/* star_compile.c */
/* star_fact.c */
extern bool star_fact_leaves(PlannerInfo *root, Index fact, TupleDesc desc, List **leaves);
extern double star_rel_pages(PlannerInfo *root, Index x);
extern Path *star_fact_path(PlannerInfo *root, RelOptInfo *factrel, List *leaves, int workers);
extern void star_fact_plan(PlannerInfo *root, Plan *factplan, Index fact, List *cpu_quals);
extern int	star_fact_scans(PlanState *fact, ScanState ***scans);

extern bool star_expr_ok(Node *expr, StarCompileInput *in, const char **why);
extern StarCompiled *star_compile(StarCompileInput *in, const char **why);
extern bool star_prog_may_escape(const gh_prog *prog);
extern int	star_substr_count(const FuncExpr *f);
extern void star_payload_numeric(StarPayload *p, Oid type, int32 typmod);
extern int	star_key_bits(Oid type, int32 typmod, int textbytes);
extern bool star_key_hashed(StarCompileInput *in);
extern Datum star_unpack_field(Oid type, int32 typmod, uint64 bits);
extern int	star_numeric_minmax_scale(int32 typmod);
extern Datum star_numeric_scaled(int64 v, int scale);
extern Datum star_text_datum(Oid type, int32 typmod, const char *bytes, int len);

/* star_path.c */
extern void gpuhash_star_init(void);
extern CustomScanMethods gpuhash_star_scan_methods;

/* star_exec.c */
extern Node *gpuhash_star_create_state(CustomScan *cscan);

#endif							/* GPUHASH_STAR_H */
