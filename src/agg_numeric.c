/*-------------------------------------------------------------------------
 *
 * agg_numeric.c
 *	  Exact sum and avg of numeric on the device, as 128-bit integer sums of
 *	  fixed-position limbs.
 *
 * INTERFACE ROUTINES
 *		gha_numeric_split	one numeric value as limbs, display scale, class
 *		gha_numeric_final	sum or avg of one group from the engine's sums
 *
 * A finite numeric is split into limbs of 16 decimal digits at fixed
 * positions (limb j holds the base-10000 digits of weights 4j .. 4j+3), so
 *
 *		value = sum over j of limb_j x 10^(16 j),	|limb_j| < 10^16
 *
 * Each limb position is one int64 engine column whose per-group sums are
 * exact; the sum is rebuilt with numeric arithmetic, with the inputs'
 * largest display scale (a max column) and NaN and the infinities counted in
 * columns of their own.  The digits are read from numeric's stored form,
 * which the on-disk format fixes.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

#include "agg.h"
#include "engine.h"

/* the stored numeric's header (numeric.c) */
#define NUMERIC_SIGN_MASK		0xC000
#define NUMERIC_NEG				0x4000
#define NUMERIC_SHORT			0x8000
#define NUMERIC_SPECIAL			0xC000
#define NUMERIC_EXT_SIGN_MASK	0xF000
#define NUMERIC_NAN				0xC000
#define NUMERIC_PINF			0xD000
#define NUMERIC_SHORT_SIGN_MASK			0x2000
#define NUMERIC_SHORT_DSCALE_MASK		0x1F80
#define NUMERIC_SHORT_DSCALE_SHIFT		7
#define NUMERIC_SHORT_WEIGHT_SIGN_MASK	0x0040
#define NUMERIC_SHORT_WEIGHT_MASK		0x003F
#define NUMERIC_DSCALE_MASK		0x3FFF

static const int64 pow10000[4] = {1, 10000, 100000000, 1000000000000};

/* floor(w / 4) for any sign of w */
static inline int
limb_of(int w)
{
	return w >= 0 ? w / 4 : -((-w + 3) / 4);
}

/* More limb positions than GHA_NUM_MAX_LIMBS: values too far apart. */
void
gha_numeric_too_wide(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("GpuHashAgg cannot sum numeric values spanning more than %d digits",
					GHA_NUM_MAX_LIMBS * 16),
			 errhint("Set gpuhash.enable_groupby to off for this query.")));
}

/* No limb or special-value columns yet (its display scale column stays), unless made at start. */
void
gha_numcols_reset(GhaNumCols *nc)
{
	if (nc->fixed)
		return;
	nc->nlimbs = 0;
	for (int k = 0; k < 3; k++)
		nc->special_col[k] = -1;
}

/*
 * The limbs every value of a numeric of typmod (precision p, scale s) can
 * occupy: its digits lie between 10^(p - s - 1) and 10^-s, so its
 * base-10000 weights between floor((p - s - 1) / 4) and floor(-s / 4).
 * False without a declared precision, or where there are too many.
 */
bool
gha_numeric_limb_range(int32 typmod, int *first, int *count)
{
	int32		tm = typmod - VARHDRSZ;
	int			precision,
				scale;

	if (typmod < (int32) VARHDRSZ)
		return false;
	precision = (tm >> 16) & 0xffff;
	scale = ((tm & 0x7ff) ^ 1024) - 1024;	/* a scale may be negative */
	if (precision < 1)
		return false;
	*first = limb_of(limb_of(-scale));
	*count = limb_of(limb_of(precision - scale - 1)) - *first + 1;
	return *count >= 1 && *count <= 4;
}

GhaNumClass
gha_numeric_split(Datum value, int *dscale, int *first_limb, int *nlimbs,
				  int64 *limbs, int max_limbs)
{
	struct varlena *v = PG_DETOAST_DATUM_PACKED(value);
	const char *data = VARDATA_ANY(v);
	int			size = VARSIZE_ANY_EXHDR(v);
	uint16		header;
	int			weight;
	bool		negative;
	const char *digits;
	int			ndigits;

	memcpy(&header, data, sizeof(uint16));
	*nlimbs = 0;
	*dscale = 0;
	if ((header & NUMERIC_SIGN_MASK) == NUMERIC_SPECIAL)
	{
		if ((header & NUMERIC_EXT_SIGN_MASK) == NUMERIC_NAN)
			return GHA_NUM_NAN;
		return (header & NUMERIC_EXT_SIGN_MASK) == NUMERIC_PINF ? GHA_NUM_PINF : GHA_NUM_NINF;
	}
	if (header & NUMERIC_SHORT)
	{
		negative = (header & NUMERIC_SHORT_SIGN_MASK) != 0;
		*dscale = (header & NUMERIC_SHORT_DSCALE_MASK) >> NUMERIC_SHORT_DSCALE_SHIFT;
		weight = (header & NUMERIC_SHORT_WEIGHT_SIGN_MASK)
			? (int) (~NUMERIC_SHORT_WEIGHT_MASK | (header & NUMERIC_SHORT_WEIGHT_MASK))
			: (int) (header & NUMERIC_SHORT_WEIGHT_MASK);
		digits = data + sizeof(uint16);
		ndigits = (size - (int) sizeof(uint16)) / (int) sizeof(int16);
	}
	else
	{
		int16		w;

		negative = (header & NUMERIC_SIGN_MASK) == NUMERIC_NEG;
		*dscale = header & NUMERIC_DSCALE_MASK;
		memcpy(&w, data + sizeof(uint16), sizeof(int16));
		weight = w;
		digits = data + sizeof(uint16) + sizeof(int16);
		ndigits = (size - (int) (sizeof(uint16) + sizeof(int16))) / (int) sizeof(int16);
	}
	if (ndigits == 0)
		return GHA_NUM_FINITE;	/* zero */

	*first_limb = limb_of(weight - (ndigits - 1));
	*nlimbs = limb_of(weight) - *first_limb + 1;
	if (*nlimbs > max_limbs)
		gha_numeric_too_wide();
	memset(limbs, 0, sizeof(int64) * *nlimbs);
	for (int i = 0; i < ndigits; i++)
	{
		int16		d;
		int			w = weight - i;
		int			j = limb_of(w);

		memcpy(&d, digits + i * sizeof(int16), sizeof(int16));
		limbs[j - *first_limb] += (int64) d * pow10000[w - 4 * j];
	}
	if (negative)
		for (int j = 0; j < *nlimbs; j++)
			limbs[j] = -limbs[j];
	return GHA_NUM_FINITE;
}

static Datum
special_numeric(const char *what)
{
	return DirectFunctionCall3(numeric_in, CStringGetDatum(what),
							   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/*
 * The group's exact sum from its limbs' sums in 128 bits, where it fits:
 * each limb's sum times 10^16 for every position above the lowest nonzero
 * one, added with overflow checks, and the numeric built directly at the
 * display scale (agg_final.c).  False where a product or sum overflows or
 * numeric's short format cannot hold the value: numeric arithmetic then.
 * A sum of numeric(15,2) values, the common case, takes one limb.
 */
static bool
limbs_sum(const gh_groups *g, const GhaNumCols *nc, size_t group, int dscale, Datum *out)
{
	const __int128 step = (__int128) INT64CONST(10000000000000000);	/* 10^16 */
	__int128	total = 0;
	int			lowest = INT_MAX;

	for (int l = 0; l < nc->nlimbs; l++)
	{
		const gh_aggresult *r = &g->cols[nc->limb_col[l]];

		if ((r->sum_lo[group] != 0 || gh_sum_hi(r, group) != 0) && nc->limb_j[l] < lowest)
			lowest = nc->limb_j[l];
	}
	if (lowest == INT_MAX)
		lowest = 0;				/* zero */
	for (int l = 0; l < nc->nlimbs; l++)
	{
		const gh_aggresult *r = &g->cols[nc->limb_col[l]];
		__int128	v = (__int128) (((unsigned __int128) (uint64) gh_sum_hi(r, group) << 64) |
									r->sum_lo[group]);

		if (v == 0)
			continue;
		for (int k = nc->limb_j[l]; k > lowest; k--)
			if (__builtin_mul_overflow(v, step, &v))
				return false;
		if (__builtin_add_overflow(total, v, &total))
			return false;
	}
	return gha_numeric_of_limbs((uint64) total, (int64) (total >> 64), lowest, dscale, out);
}

Datum
gha_numeric_final(bool avg, const gh_groups *g, const GhaNumCols *nc, size_t group,
				  bool *isnull)
{
	const gh_aggresult *ds = &g->cols[nc->dscale_col];
	int64		counts[3] = {0, 0, 0};
	int64		finite;
	Datum		sum;

	*isnull = false;
	if (ds->nonnull[group] == 0)
	{
		*isnull = true;
		return (Datum) 0;
	}
	for (int k = 0; k < 3; k++)
		if (nc->special_col[k] >= 0)
			counts[k] = (int64) g->cols[nc->special_col[k]].sum_lo[group];
	if (counts[GHA_NUM_NAN - 1] > 0 ||
		(counts[GHA_NUM_PINF - 1] > 0 && counts[GHA_NUM_NINF - 1] > 0))
		return special_numeric("NaN");
	if (counts[GHA_NUM_PINF - 1] > 0)
		return special_numeric("Infinity");
	if (counts[GHA_NUM_NINF - 1] > 0)
		return special_numeric("-Infinity");

	if (!limbs_sum(g, nc, group, (int) ds->imax[group], &sum))
	{
		sum = NumericGetDatum(int64_to_numeric(0));
		for (int l = 0; l < nc->nlimbs; l++)
		{
			const gh_aggresult *r = &g->cols[nc->limb_col[l]];

			if (r->sum_lo[group] == 0 && gh_sum_hi(r, group) == 0)
				continue;
			sum = DirectFunctionCall2(numeric_add, sum,
									  gha_numeric_from_int128(r->sum_lo[group], gh_sum_hi(r, group),
															  16 * nc->limb_j[l]));
		}
		/* the exact sum has at most the inputs' largest scale: rounding only sets it */
		sum = DirectFunctionCall2(numeric_round, sum, Int32GetDatum((int32) ds->imax[group]));
	}
	if (!avg)
		return sum;
	finite = ds->nonnull[group];
	return DirectFunctionCall2(numeric_div, sum, NumericGetDatum(int64_to_numeric(finite)));
}
