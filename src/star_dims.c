/*-------------------------------------------------------------------------
 *
 * star_dims.c
 *	  A GpuStarAgg's dimensions: read once (by one process, or each by every
 *	  process of a parallel plan a share: star_dim_share.c) into the arrays
 *	  the star is made of, and compiled with them into the device program.
 *
 * INTERFACE ROUTINES
 *		star_read_dims			every dimension's rows, through its plan
 *		star_read_dim			one dimension's (or this process's share of them)
 *		star_dim_groups_init	its grouping values: a dictionary, or row by row
 *		star_dim_group_value	... one code's value
 *		star_dim_finish			its NULL flags dropped where none is set
 *		star_dim_values			its grouping values serialized, in code order
 *		star_dim_values_add		... read back into a dimension's
 *		star_compile_node		the program, once the dimensions are known
 *		star_dims_to_shared		what a parallel worker needs to read groups
 *		star_dims_from_shared	... and taking it back
 *
 * Each dimension's plan outputs its join key, its grouping expressions and
 * its payload (star.h).  A row with a NULL key joins nothing and is left
 * out.  The key becomes the engine's exact encoding (keys.c); the grouping
 * values go through a dictionary (agg_dict.c: PostgreSQL's grouping hash
 * table with the GROUP BY's equality and collation), whose dense id is the
 * row's group code, the last column the device reads of the dimension; each
 * payload value becomes a register's contents (star_vm.h): integers as
 * they are, floats as doubles, numerics as 128-bit integers at a static
 * scale -- their declared one, or the largest display scale among the
 * values read.  The codes' count decides how many bits of the group key a
 * dimension takes, and the scales how the program reads the values, so the
 * program is compiled only now.
 *
 * A dimension whose plan is a Seq Scan of columns of fixed width is read
 * as the inner side of a GpuHashJoin is (page_scan.h): its heap pages go to
 * the engine by buffer number and only the columns it outputs come back,
 * with no tuple deformed or judged visible row by row in the process.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "gpuhash.h"
#include "keys.h"
#include "page_ops.h"
#include "star_state.h"
#include "star_vm.h"

/* the most rows a dimension's arrays are first made for (a plan's estimate may be far off) */
#define STAR_DIM_MAX_PRESIZE	(UINT64CONST(1) << 26)

/* make room for n rows in every array of a */
static void
grow(StarDimArrays *a, uint64 cap, bool *numeric)
{
	Size		n = cap;

	if (a->keys == NULL)
	{
		a->keys = palloc_extended(8 * n, MCXT_ALLOC_HUGE);
		for (int k = 0; k < a->ncols; k++)
		{
			a->lo[k] = palloc_extended(8 * n, MCXT_ALLOC_HUGE);
			a->nulls[k] = palloc_extended(n, MCXT_ALLOC_HUGE);
			if (numeric[k])
			{
				a->hi[k] = palloc_extended(8 * n, MCXT_ALLOC_HUGE);
				a->dscale[k] = palloc_extended(n, MCXT_ALLOC_HUGE);
			}
		}
		return;
	}
	a->keys = repalloc_huge(a->keys, 8 * n);
	for (int k = 0; k < a->ncols; k++)
	{
		a->lo[k] = repalloc_huge(a->lo[k], 8 * n);
		a->nulls[k] = repalloc_huge(a->nulls[k], n);
		if (numeric[k])
		{
			a->hi[k] = repalloc_huge(a->hi[k], 8 * n);
			a->dscale[k] = repalloc_huge(a->dscale[k], n);
		}
	}
}

/* a payload value (not NULL) of type t into its register's low word */
static int64
payload_word(Oid t, Datum v)
{
	switch (t)
	{
		case INT2OID:
			return DatumGetInt16(v);
		case INT4OID:
		case DATEOID:
			return DatumGetInt32(v);
		case BOOLOID:
			return DatumGetBool(v);
		case OIDOID:
			return (int64) DatumGetObjectId(v);
		case FLOAT4OID:
		case FLOAT8OID:
			{
				double		d = t == FLOAT4OID ? (double) DatumGetFloat4(v) : DatumGetFloat8(v);
				int64		w;

				memcpy(&w, &d, sizeof(d));
				return w;
			}
		default:				/* int8, time, timestamp, timestamptz */
			return DatumGetInt64(v);
	}
}

/* numeric v's bytes (detoasted), and its display scale */
static const uint8 *
numeric_bytes(Datum v, uint32 *len, int *dscale)
{
	struct varlena *p = PG_DETOAST_DATUM_PACKED(v);
	const uint8 *data = (const uint8 *) VARDATA_ANY(p);
	uint16		h;

	*len = VARSIZE_ANY_EXHDR(p);
	h = *len >= 2 ? gh_page_u16(data) : 0;
	*dscale = (h & 0xC000) == 0xC000 ? 0 : (h & 0x8000) ? (h & 0x1F80) >> 7 : h & 0x3FFF;
	return data;
}

/* the dictionary of dimension d's grouping columns: their types, equality operators, collations */
static GhaDict *
star_dim_dict(GpuStarAggState *s, int d)
{
	List	   *types = NIL,
			   *eqops = NIL,
			   *colls = NIL;
	int			g = 0;
	ListCell   *lc,
			   *lc2;

	forboth(lc, s->groups, lc2, s->group_eq)
	{
		if (intVal(linitial(lfirst(lc))) == d)
		{
			types = lappend_oid(types, (Oid) linitial_int(list_nth(s->grouptypes, g)));
			eqops = lappend_oid(eqops, linitial_oid(lfirst(lc2)));
			colls = lappend_oid(colls, lsecond_oid(lfirst(lc2)));
		}
		g++;
	}
	return gha_dict_create(&s->css.ss.ps, types, eqops, colls, 0, NULL, NULL, NULL, s->cxt);
}

/*
 * Dimension d's grouping values, none yet: a dictionary, or row by row where
 * each row is a group of its own (StarDimState.row_codes)
 */
void
star_dim_groups_init(GpuStarAggState *s, int d)
{
	StarDimState *dim = &s->dims[d];
	List	   *types = NIL;
	int			g = 0;
	ListCell   *lc;

	dim->dict = NULL;
	dim->rows_by_code = NULL;
	if (dim->ngroups == 0)
		return;
	if (!dim->row_codes)
	{
		dim->dict = star_dim_dict(s, d);
		return;
	}
	foreach(lc, s->groups)
	{
		if (intVal(linitial(lfirst(lc))) == d)
			types = lappend_oid(types, (Oid) linitial_int(list_nth(s->grouptypes, g)));
		g++;
	}
	dim->rows_by_code = star_dim_rows_create(types, s->cxt);
}

/* grouping column col (of the dimension's own) of code's group */
Datum
star_dim_group_value(StarDimState *dim, uint32 code, int col, bool *isnull)
{
	if (dim->rows_by_code)
		return star_dim_rows_value(dim->rows_by_code, code, col, isnull);
	return gha_dict_key(dim->dict, code, col, isnull);
}

/*
 * Dimension d's scan read from its pages (the columns the rows below
 * read: key, grouping columns, payload), or NULL: read through its plan.
 */
static GhPageScan *
dim_pages_begin(GpuStarAggState *s, StarDimState *dim)
{
	Bitmapset  *used = NULL;
	GhPageScan *pages;
	MemoryContext old;

	/*
	 * a small table is read through its plan: shipping its pages costs more
	 * (the engine's buffers, a round trip a batch) than its deforming saves
	 */
	if (IsA(dim->ps, SeqScanState) &&
		RelationGetNumberOfBlocks(((SeqScanState *) dim->ps)->ss.ss_currentRelation) <
		star_dim_min_pages())
		return NULL;
	old = MemoryContextSwitchTo(s->css.ss.ps.state->es_query_cxt);
	for (int a = 1; a <= 1 + dim->ngroups + dim->npayload; a++)
		used = bms_add_member(used, a);
	pages = gpuhash_page_scan_begin(dim->ps, used, &s->eng);
	MemoryContextSwitchTo(old);
	return pages;
}

/* one dimension being read: where its rows go */
typedef struct DimRead
{
	StarDimState *dim;
	StarDimArrays *a;
	uint64		cap;
	bool		numeric[GH_PROG_MAX_DIMCOLS];
	Datum	   *pending[GH_PROG_MAX_DIMCOLS];	/* numerics of no declared scale */
	Oid			keytype;
	Datum	   *gvals;
	bool	   *gnulls;
	int			first_payload;
	StarPayload **pl;
	bool		check_keys;
} DimRead;

/*
 * Whether the filter lets the row through: its key (encoded), or where it
 * checks a payload column (its child's key: star_dim_filter.c) that value,
 * which a NULL never passes (no row of the child has a NULL key)
 */
static bool
filter_passes(DimRead *rd, const Datum *values, const bool *isnulls, uint64 key)
{
	int			col = rd->dim->filter_col;
	Oid			type;

	if (col >= 0)
	{
		if (isnulls[rd->first_payload + col])
			return false;
		type = rd->pl[col]->type;
		key = gpuhash_encode_exact(gpuhash_exact_family(type), type,
								   values[rd->first_payload + col]);
	}
	return gpuhash_filter_may_contain(&rd->dim->filter, key);
}

/* one row of the dimension's plan (key, grouping columns, payload) into its arrays */
static void
dim_add_row(DimRead *rd, const Datum *values, const bool *isnulls)
{
	StarDimState *dim = rd->dim;
	StarDimArrays *a = rd->a;
	StarPayload **pl = rd->pl;
	uint64		r = a->n;
	uint64		key;

	dim->rows++;
	if (isnulls[0])
		return;					/* a NULL key joins nothing */
	key = gpuhash_encode_exact(gpuhash_exact_family(rd->keytype), rd->keytype, values[0]);
	if (rd->check_keys && !filter_passes(rd, values, isnulls, key))
	{
		dim->removed++;			/* no row of the smaller dimension has its key */
		return;
	}
	if (r == rd->cap)
	{
		rd->cap *= 2;
		grow(a, rd->cap, rd->numeric);
		for (int k = 0; k < dim->npayload; k++)
			if (rd->pending[k])
				rd->pending[k] = repalloc_huge(rd->pending[k], sizeof(Datum) * rd->cap);
	}
	a->keys[r] = key;
	for (int k = 0; k < dim->npayload; k++)
	{
		Datum		v = values[rd->first_payload + k];
		bool		isnull = isnulls[rd->first_payload + k];

		a->nulls[k][r] = isnull;
		a->lo[k][r] = 0;
		if (rd->numeric[k])
		{
			a->hi[k][r] = 0;
			a->dscale[k][r] = 0;
		}
		if (isnull)
			continue;
		if (!rd->numeric[k])
			a->lo[k][r] = payload_word(pl[k]->type, v);
		else if (pl[k]->typmod >= 0)
		{
			uint32		len;
			int			ds;
			const uint8 *data = numeric_bytes(v, &len, &ds);
			gh_i128		x;
			uint8		dsb;

			/* beyond the device (NaN, infinite, over 38 digits): the alternative runs (make_star) */
			if (ds > 38 || !gh_numeric_load(data, len, pl[k]->scale, &x, &dsb))
			{
				dim->escaped = true;
				x = 0;
				dsb = 0;
			}
			a->lo[k][r] = (int64) (uint64) (gh_u128) x;
			a->hi[k][r] = (int64) (uint64) ((gh_u128) x >> 64);
			a->dscale[k][r] = dsb;
		}
		else
		{
			/* its scale is known once every value is: keep it for now */
			int			ds;
			uint32		len;

			(void) numeric_bytes(v, &len, &ds);
			pl[k]->scale = Max(pl[k]->scale, Min(ds, 39));
			if (rd->pending[k] == NULL)
				rd->pending[k] = palloc_extended(sizeof(Datum) * rd->cap,
												 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
			rd->pending[k][r] = datumCopy(v, false, -1);
		}
	}
	if (dim->ngroups > 0)
	{
		for (int g = 0; g < dim->ngroups; g++)
		{
			rd->gvals[g] = values[1 + g];
			rd->gnulls[g] = isnulls[1 + g];
		}
		a->lo[dim->npayload][r] = dim->rows_by_code ?
			star_dim_rows_append(dim->rows_by_code, rd->gvals, rd->gnulls) :
			gha_dict_lookup(dim->dict, rd->gvals, rd->gnulls);
		a->nulls[dim->npayload][r] = 0;
	}
	a->n = r + 1;
}

/*
 * The rows of a scan read from its pages that outputs plain columns, in
 * runs (page_scan.h: no slot a row); false, nothing read, where it does not.
 */
static bool
dim_add_runs(GpuStarAggState *s, DimRead *rd, GhPageScan *pages)
{
	int			ncols = 1 + rd->dim->ngroups + rd->dim->npayload;
	int			col[1 + 2 * GH_PROG_MAX_DIMCOLS];
	GhPageMod	mod[1 + 2 * GH_PROG_MAX_DIMCOLS];
	Datum		values[1 + 2 * GH_PROG_MAX_DIMCOLS];
	bool		isnulls[1 + 2 * GH_PROG_MAX_DIMCOLS];
	const gh_pagerows *rows;
	size_t		first,
				end;
	MemoryContext cxt = CurrentMemoryContext;

	if (!gpuhash_page_scan_plain(pages) || ncols > lengthof(col))
		return false;
	for (int c = 0; c < ncols; c++)
		if ((col[c] = gpuhash_page_scan_column(pages, c + 1, &mod[c])) < 0)
			return false;
	for (;;)
	{
		bool		more;

		MemoryContextSwitchTo(s->css.ss.ps.state->es_query_cxt);
		more = gpuhash_page_scan_next_run(pages, &rows, &first, &end);
		MemoryContextSwitchTo(cxt);
		if (!more)
			break;
		CHECK_FOR_INTERRUPTS();
		for (size_t r = first; r < end; r++)
		{
			for (int c = 0; c < ncols; c++)
			{
				isnulls[c] = rows->nulls[col[c]][r] != 0;
				values[c] = isnulls[c] ? (Datum) 0 :
					gpuhash_page_mod(&mod[c], (Datum) rows->values[col[c]][r]);
			}
			dim_add_row(rd, values, isnulls);
		}
	}
	return true;
}

/* Read dimension d through its plan: all of it, or this process's share of a partial plan. */
void
star_read_dim(GpuStarAggState *s, int d)
{
	StarDimState *dim = &s->dims[d];
	StarDimArrays *a = &dim->arrays;
	DimRead		rd = {0};
	GhPageScan *pages;

	rd.dim = dim;
	rd.a = a;
	rd.cap = 1024;
	rd.keytype = TupleDescAttr(dim->ps->ps_ResultTupleDesc, 0)->atttypid;
	rd.gvals = palloc(sizeof(Datum) * Max(dim->ngroups, 1));
	rd.gnulls = palloc(sizeof(bool) * Max(dim->ngroups, 1));
	rd.first_payload = 1 + dim->ngroups;
	rd.pl = palloc0(sizeof(StarPayload *) * Max(dim->npayload, 1));
	for (int p = 0; p < s->npayloads; p++)
		if (s->payloads[p].dim == d)
			rd.pl[s->payloads[p].col] = &s->payloads[p];
	a->ncols = dim->npayload + (dim->ngroups > 0 ? 1 : 0);
	for (int k = 0; k < dim->npayload; k++)
		rd.numeric[k] = rd.pl[k]->type == NUMERICOID;
	/*
	 * Room for the rows the plan expects (a partial plan's: this process's
	 * share), so that a large dimension is not copied as its arrays double;
	 * memory never written is never touched.
	 */
	if (dim->ps->plan->plan_rows > rd.cap)
		rd.cap = (uint64) Min(dim->ps->plan->plan_rows * 1.1, (double) STAR_DIM_MAX_PRESIZE);
	grow(a, rd.cap, rd.numeric);
	a->n = 0;
	star_dim_groups_init(s, d);
	star_dim_filter_begin(s, d);
	star_dim_filter_push(s, d);
	pages = dim_pages_begin(s, dim);
	/*
	 * where the scan that reads the key checks the filter, its rows need no
	 * second check (a scan read from its pages runs no ExecProcNode)
	 */
	rd.check_keys = dim->filtering && (dim->pushed == NULL || pages != NULL);

	if (pages == NULL || !dim_add_runs(s, &rd, pages))
		for (;;)
		{
			TupleTableSlot *slot = star_input_next(s, dim->ps, pages);

			if (TupIsNull(slot))
				break;
			CHECK_FOR_INTERRUPTS();
			slot_getsomeattrs(slot, 1 + dim->ngroups + dim->npayload);
			dim_add_row(&rd, slot->tts_values, slot->tts_isnull);
		}
	if (pages)
		gpuhash_page_scan_end(pages, &s->dim_page_stats);

	/* numerics without a declared scale: at the largest display scale read */
	for (int k = 0; k < dim->npayload; k++)
	{
		StarPayload *pl = rd.pl[k];

		if (!rd.numeric[k] || pl->typmod >= 0)
			continue;
		pl->digits = 38;
		for (uint64 r = 0; rd.pending[k] != NULL && r < a->n; r++)
		{
			uint32		len;
			int			ds;
			const uint8 *data;
			gh_i128		x;
			uint8		dsb;

			if (a->nulls[k][r])
				continue;
			data = numeric_bytes(rd.pending[k][r], &len, &ds);
			if (pl->scale > 38 || !gh_numeric_load(data, len, pl->scale, &x, &dsb))
			{
				dim->escaped = true;	/* as above */
				x = 0;
				dsb = 0;
			}
			a->lo[k][r] = (int64) (uint64) (gh_u128) x;
			a->hi[k][r] = (int64) (uint64) ((gh_u128) x >> 64);
			a->dscale[k][r] = dsb;
		}
	}

	star_dim_filter_end(s, d);
	star_dim_finish(dim);
	dim->complete = !dim->partial;
}

/*
 * The dimension read: arrays with no NULL need no NULL flags (a share's
 * chunk has none where it has no NULL: star_dim_share.c); its codes counted.
 */
void
star_dim_finish(StarDimState *dim)
{
	StarDimArrays *a = &dim->arrays;

	for (int k = 0; k < a->ncols && a->nparts == 0; k++)
	{
		bool		any = false;

		for (uint64 r = 0; r < a->n && !any; r++)
			any = a->nulls[k][r] != 0;
		if (!any)
			a->nulls[k] = NULL;
	}
	dim->ncodes = dim->dict ? (int) dim->dict->nentries :
		dim->rows_by_code ? (int) dim->rows_by_code->n : 0;
}

/* Every dimension, by this process alone: a filter's source before what it filters. */
void
star_read_dims(GpuStarAggState *s)
{
	bool	   *read = palloc0(sizeof(bool) * Max(s->ndims, 1));
	int			d;

	while ((d = star_dim_next_to_read(s, read)) >= 0)
		star_read_dim(s, d);
	pfree(read);
}

/*
 * The program for this execution; the dimensions are read.  False (why set)
 * where it does not compile with the dimensions as read: the planner's trial
 * compilation counted each dimension's codes by its estimated rows, and
 * more codes widen the group key, which may then be a hash (KEYMIX) and
 * make the program longer.
 */
bool
star_compile_node(GpuStarAggState *s, const char **why_out)
{
	StarCompileInput in = {0};
	StarCompiled *sc;
	const char *why = NULL;
	gh_pagespec *spec;
	int			maxatt = 0;
	int			codes[GH_PROG_MAX_DIMS];
	int64		null_codes[GH_PROG_MAX_DIMS];

	for (int d = 0; d < s->ndims; d++)
		codes[d] = s->dims[d].ncodes;
	in.fact.desc = s->fact_desc;
	in.quals = s->quals;
	in.joinquals = s->joinquals;
	in.dims = s->dims_plan;
	for (int d = 0; d < s->ndims; d++)
	{
		StarDimState *dim = &s->dims[d];

		null_codes[d] = -1;
		if (dim->left && dim->dict != NULL)
		{
			/*
			 * the code of its grouping values where the join finds no row: of
			 * its rows NULL in every grouping column, if any, or the group
			 * make_star added for values not all NULL
			 */
			null_codes[d] = gha_dict_find(dim->dict, dim->null_values, dim->null_isnull);
			if (dim->null_row_set && null_codes[d] < 0)
				elog(ERROR, "gpuhash: a GpuStarAgg's LEFT JOIN has no group for its rows of no dimension row");
		}
		if (dim->left)
			in.left_dims |= UINT64_C(1) << d;
		if (dim->anti)
			in.anti_dims |= UINT64_C(1) << d;
	}
	in.null_codes = null_codes;
	in.groups = s->groups;
	in.grouptypes = s->grouptypes;
	in.aggs = s->aggs;
	in.npayloads = s->npayloads;
	in.payloads = s->payloads;
	in.dim_codes = codes;
	in.econtext = s->css.ss.ps.ps_ExprContext;
	sc = star_compile(&in, &why);
	if (sc == NULL || gpuhash_debug_star_compile_fails)
	{
		*why_out = why ? why : "gpuhash.debug_star_compile_fails is on";
		return false;
	}

	/* the page description: every attribute up to the last one read */
	spec = &sc->spec;
	memset(spec, 0, sizeof(*spec));
	spec->page_size = BLCKSZ;
	spec->max_tuples = MaxHeapTuplesPerPage;
	for (int o = 0; o < in.fact.ncols; o++)
		maxatt = Max(maxatt, in.fact.attno[o]);
	spec->natts = Max(maxatt, 1);
	spec->nout = Max(in.fact.ncols, 1);
	for (int a = 0; a < spec->natts; a++)
	{
		Form_pg_attribute att = TupleDescAttr(in.fact.desc, a);

		if (att->attlen == -2)
			elog(ERROR, "gpuhash: a GpuStarAgg cannot read past a cstring column");
		spec->attlen[a] = att->attlen;
		spec->attalign[a] = (uint8) att_align_nominal(1, att->attalign);
		spec->out_of[a] = -1;
	}
	for (int o = 0; o < in.fact.ncols; o++)
		spec->out_of[in.fact.attno[o] - 1] = (int8) o;
	if (in.fact.ncols == 0)
		spec->out_of[0] = 0;	/* nothing read: one column, to locate rows by */
	spec->vis_horizon = gpuhash_vis_horizon(s->css.ss.ps.state->es_snapshot);
	s->compiled = sc;
	return true;
}

/* ---- a dimension's grouping values between processes ---- */

/*
 * The grouping values of dim's dictionary, in code order, as datumSerialize
 * writes them: written at *p, or with p NULL only counted.  Their bytes.
 */
Size
star_dim_values(StarDimState *dim, char **p)
{
	int			ncodes = dim->dict ? (int) dim->dict->nentries : 0;
	Size		size = 0;

	if (dim->rows_by_code)
	{
		/* kept in this form already */
		if (p)
		{
			memcpy(*p, dim->rows_by_code->buf, dim->rows_by_code->used);
			*p += dim->rows_by_code->used;
		}
		return dim->rows_by_code->used;
	}
	for (int c = 0; c < ncodes; c++)
		for (int g = 0; g < dim->ngroups; g++)
		{
			bool		isnull;
			Datum		v = gha_dict_key(dim->dict, c, g, &isnull);
			Form_pg_attribute att = TupleDescAttr(dim->dict->desc, g);

			if (p)
				datumSerialize(v, isnull, att->attbyval, att->attlen, p);
			else
				size += datumEstimateSpace(v, isnull, att->attbyval, att->attlen);
		}
	return size;
}

/*
 * ncodes codes' grouping values read back from *p, as star_dim_values wrote
 * them, into dim's: map[c] (where map is not NULL) is the code there of the
 * c-th.  Row by row they follow the codes already there; a dictionary looks
 * each up.
 */
void
star_dim_values_add(StarDimState *dim, char **p, int ncodes, uint32 *map)
{
	Datum	   *vals;
	bool	   *nulls;

	if (dim->rows_by_code)
	{
		uint64		first = dim->rows_by_code->n;

		star_dim_rows_add(dim->rows_by_code, p, ncodes);
		for (int c = 0; map && c < ncodes; c++)
			map[c] = (uint32) (first + c);
		return;
	}
	vals = palloc(sizeof(Datum) * Max(dim->ngroups, 1));
	nulls = palloc(sizeof(bool) * Max(dim->ngroups, 1));
	for (int c = 0; c < ncodes; c++)
	{
		uint32		code;

		for (int g = 0; g < dim->ngroups; g++)
			vals[g] = datumRestore(p, &nulls[g]);
		code = gha_dict_lookup(dim->dict, vals, nulls);
		if (map)
			map[c] = code;
	}
	pfree(vals);
	pfree(nulls);
}

/* ---- a parallel worker that returns the groups ---- */

/*
 * The grouping values of every dimension, by code, serialized into the
 * query's DSA area (datumSerialize), with the codes and scales the program
 * was compiled with.
 */
void
star_dims_to_shared(GpuStarAggState *s, StarShared *sh, dsa_area *area)
{
	Size		size = 0;
	char	   *p;

	for (int d = 0; d < s->ndims; d++)
		sh->dim_codes[d] = s->dims[d].ncodes;
	for (int p2 = 0; p2 < s->npayloads && p2 < lengthof(sh->payload_scale); p2++)
	{
		sh->payload_scale[p2] = s->payloads[p2].scale;
		sh->payload_digits[p2] = s->payloads[p2].digits;
	}
	for (int d = 0; d < s->ndims; d++)
		size += star_dim_values(&s->dims[d], NULL);
	sh->dicts_size = size;
	sh->dicts = size > 0 ? dsa_allocate(area, size) : InvalidDsaPointer;
	if (size == 0)
		return;
	p = dsa_get_address(area, sh->dicts);
	for (int d = 0; d < s->ndims; d++)
		(void) star_dim_values(&s->dims[d], &p);
}

/* The same, taken back by a worker: a dictionary per dimension, filled in code order. */
void
star_dims_from_shared(GpuStarAggState *s, StarShared *sh, dsa_area *area)
{
	char	   *p = sh->dicts_size > 0 ? dsa_get_address(area, sh->dicts) : NULL;

	for (int p2 = 0; p2 < s->npayloads && p2 < lengthof(sh->payload_scale); p2++)
	{
		s->payloads[p2].scale = sh->payload_scale[p2];
		s->payloads[p2].digits = sh->payload_digits[p2];
	}
	for (int d = 0; d < s->ndims; d++)
	{
		StarDimState *dim = &s->dims[d];
		uint32	   *map;

		dim->ncodes = sh->dim_codes[d];
		if (dim->ngroups == 0)
			continue;
		star_dim_groups_init(s, d);
		map = palloc(sizeof(uint32) * Max(dim->ncodes, 1));
		star_dim_values_add(dim, &p, dim->ncodes, map);
		/* the codes come back in order: each lookup makes the next */
		for (int c = 0; c < dim->ncodes; c++)
			if (map[c] != (uint32) c)
				elog(ERROR, "gpuhash: a GpuStarAgg's dimension groups differ between processes");
		pfree(map);
	}
}
