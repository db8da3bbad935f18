/*-------------------------------------------------------------------------
 *
 * oracle.c
 *	  The reference results the engine is checked against, computed by
 *	  sorting: nothing here hashes, partitions or shares code with the
 *	  engine.
 *
 * Joins: the build side sorted by (key, row); the rows of a key are one
 * range found by binary search, so the expected pairs of a probe come out
 * sorted by (outer, inner), the order the engine's pairs are sorted into
 * before comparing them as multisets.
 *
 * Aggregation: row indices sorted by key; each run of equal keys is one
 * group, accumulated sequentially with 128-bit integer sums and a long
 * double float sum.  Float min/max use PostgreSQL's order, in which NaN is
 * larger than every number, with -0 ordered below +0 (the engine keeps the
 * two apart the same way in min/max).
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_test.h"

typedef struct key_row
{
	uint64_t	key;
	uint64_t	row;
} key_row;

static int
key_row_cmp(const void *a, const void *b)
{
	const key_row *x = a,
			   *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

/* The build side sorted by (key, row). */
typedef struct oracle
{
	size_t		n;
	key_row    *kr;
} oracle;

/* The entries of key: o->kr[*lo, *hi). */
static void
oracle_range(const oracle *o, uint64_t key, size_t *lo, size_t *hi)
{
	size_t		l = 0,
				h = o->n;

	while (l < h)
	{
		size_t		mid = l + (h - l) / 2;

		if (o->kr[mid].key < key)
			l = mid + 1;
		else
			h = mid;
	}
	*lo = l;
	h = o->n;
	while (l < h)
	{
		size_t		mid = l + (h - l) / 2;

		if (o->kr[mid].key <= key)
			l = mid + 1;
		else
			h = mid;
	}
	*hi = l;
}

void
join_input_prepare(join_input *in, const uint64_t *keys, const uint64_t *rows,
				   size_t n, const uint64_t *probe, size_t m)
{
	oracle		o;
	size_t		at = 0;

	in->keys = keys;
	in->rows = rows;
	in->n = n;
	in->probe = probe;
	in->m = m;

	o.n = n;
	o.kr = xmalloc((n > 0 ? n : 1) * sizeof(key_row));
	for (size_t i = 0; i < n; i++)
	{
		o.kr[i].key = keys[i];
		o.kr[i].row = rows ? rows[i] : i;
	}
	qsort(o.kr, n, sizeof(key_row), key_row_cmp);
	in->ndistinct = 0;
	for (size_t i = 0; i < n; i++)
		in->ndistinct += (i == 0 || o.kr[i].key != o.kr[i - 1].key);

	in->matches = xmalloc((m > 0 ? m : 1) * sizeof(uint64_t));
	in->total = 0;
	for (size_t i = 0; i < m; i++)
	{
		size_t		lo,
					hi;

		oracle_range(&o, probe[i], &lo, &hi);
		in->matches[i] = hi - lo;
		in->total += hi - lo;
	}
	/* the rows of a key are sorted, so the pairs come out sorted */
	in->want = xmalloc((size_t) (in->total > 0 ? in->total : 1) * sizeof(gh_pair));
	for (size_t i = 0; i < m; i++)
	{
		size_t		lo,
					hi;

		if (in->matches[i] == 0)
			continue;
		oracle_range(&o, probe[i], &lo, &hi);
		for (size_t r = lo; r < hi; r++)
		{
			in->want[at].outer = i;
			in->want[at].inner = o.kr[r].row;
			at++;
		}
	}
	free(o.kr);
}

void
join_input_release(join_input *in)
{
	free(in->matches);
	free(in->want);
	in->matches = NULL;
	in->want = NULL;
}

static int
u64_cmp(const void *a, const void *b)
{
	uint64_t	x = *(const uint64_t *) a,
				y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

/*
 * A counting sort by outer (outer < m), then each outer's inners sorted:
 * linear for the usual few pairs per probe key.
 */
void
sort_pairs(gh_pair *p, size_t n, size_t m)
{
	size_t	   *start = xcalloc(m + 1, sizeof(size_t));
	uint64_t   *inner = xmalloc((n > 0 ? n : 1) * sizeof(uint64_t));

	for (size_t i = 0; i < n; i++)
		start[p[i].outer + 1]++;
	for (size_t k = 0; k < m; k++)
		start[k + 1] += start[k];
	for (size_t i = 0; i < n; i++)
		inner[start[p[i].outer]++] = p[i].inner;
	/* start[k] is now the end of outer k */
	for (size_t k = 0, at = 0; k < m; k++)
	{
		size_t		end = start[k];

		if (end - at > 1)
			qsort(inner + at, end - at, sizeof(uint64_t), u64_cmp);
		for (; at < end; at++)
		{
			p[at].outer = k;
			p[at].inner = inner[at];
		}
	}
	free(start);
	free(inner);
}

/* ---- aggregation ---- */

static const uint64_t *sort_keys;

static int
index_by_key_cmp(const void *a, const void *b)
{
	uint64_t	x = sort_keys[*(const size_t *) a],
				y = sort_keys[*(const size_t *) b];

	return x < y ? -1 : x > y;
}

/* Row indices 0..n-1 ordered by keys[i]. */
static size_t *
indices_by_key(const uint64_t *keys, size_t n)
{
	size_t	   *idx = xmalloc((n > 0 ? n : 1) * sizeof(size_t));

	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	sort_keys = keys;
	qsort(idx, n, sizeof(size_t), index_by_key_cmp);
	return idx;
}

/* PostgreSQL's float8 order (NaN largest), with -0 below +0. */
static int
float_order_cmp(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) - isnan(b);
	if (a != b)
		return a < b ? -1 : 1;
	return (signbit(b) != 0) - (signbit(a) != 0);
}

void
oracle_aggregate(agg_oracle *a, const uint64_t *keys, size_t n,
				 const gh_aggcol *cols, int ncols)
{
	size_t	   *idx = indices_by_key(keys, n);
	size_t		g = 0;

	a->ngroups = 0;
	for (size_t i = 0; i < n; i++)
		a->ngroups += (i == 0 || keys[idx[i]] != keys[idx[i - 1]]);
	a->ncols = ncols;
	a->keys = xmalloc((a->ngroups + 1) * sizeof(uint64_t));
	a->rows = xcalloc(a->ngroups + 1, sizeof(int64_t));
	a->cols = xcalloc((a->ngroups + 1) * (size_t) (ncols > 0 ? ncols : 1), sizeof(want_col));
	for (size_t i = 0; i < n; i++)
	{
		size_t		r = idx[i];

		if (i > 0 && keys[r] != keys[idx[i - 1]])
			g++;
		a->keys[g] = keys[r];
		a->rows[g]++;
		for (int c = 0; c < ncols; c++)
		{
			want_col   *w = &a->cols[g * ncols + c];

			if (cols[c].nulls && cols[c].nulls[r])
				continue;
			if (cols[c].type == GH_INT64)
			{
				int64_t		v = ((const int64_t *) cols[c].values)[r];

				w->isum += v;
				if (w->nonnull == 0 || v < w->imin)
					w->imin = v;
				if (w->nonnull == 0 || v > w->imax)
					w->imax = v;
			}
			else
			{
				double		v = ((const double *) cols[c].values)[r];

				w->fsum += v;
				w->fabs_sum += fabs(v);
				if (w->nonnull == 0 || float_order_cmp(v, w->fmin) < 0)
					w->fmin = v;
				if (w->nonnull == 0 || float_order_cmp(v, w->fmax) > 0)
					w->fmax = v;
			}
			w->nonnull++;
		}
	}
	free(idx);
}

void
agg_oracle_free(agg_oracle *a)
{
	free(a->keys);
	free(a->rows);
	free(a->cols);
	memset(a, 0, sizeof(*a));
}

static bool
same_float(double got, double want)
{
	if (isnan(want))
		return isnan(got);
	return memcmp(&got, &want, sizeof(double)) == 0;
}

static bool
close_float(double got, long double want, double fabs_sum)
{
	if (isnan((double) want))
		return isnan(got);
	if (isinf((double) want))
		return got == (double) want;
	return fabsl((long double) got - want) <= 1e-9L * (long double) fabs_sum + 1e-300L;
}

static void
i128_text(__int128 v, char *buf)
{
	unsigned __int128 m = v < 0 ? -(unsigned __int128) v : (unsigned __int128) v;
	char		tmp[48];
	int			k = 0;

	do
	{
		tmp[k++] = (char) ('0' + (int) (m % 10));
		m /= 10;
	} while (m != 0);
	if (v < 0)
		*buf++ = '-';
	while (k > 0)
		*buf++ = tmp[--k];
	*buf = '\0';
}

/* Compare group gi of got with group w of want; false (case failed) on a difference. */
/*
 * A column's result has exactly the arrays its operations fill (engine.h):
 * the non-NULL counts always (perhaps the rows array), sums (perhaps without
 * high words), minima and maxima of its type as asked.
 */
static bool
result_arrays_match(const gh_aggresult *r, gh_valtype type, int ops)
{
	bool		is_int = type == GH_INT64;

	return r->nonnull != NULL &&
		(r->sum_lo != NULL) == ((ops & GH_AGG_SUM) && is_int) &&
		(r->sum_hi == NULL || r->sum_lo != NULL) &&
		(r->fsum != NULL) == ((ops & GH_AGG_SUM) && !is_int) &&
		(r->imin != NULL) == ((ops & GH_AGG_MIN) && is_int) &&
		(r->imax != NULL) == ((ops & GH_AGG_MAX) && is_int) &&
		(r->fmin != NULL) == ((ops & GH_AGG_MIN) && !is_int) &&
		(r->fmax != NULL) == ((ops & GH_AGG_MAX) && !is_int);
}

static bool
compare_group(const gh_groups *got, size_t gi, const agg_oracle *want, size_t w,
			  const gh_aggcol *cols, int ncols)
{
	uint64_t	key = want->keys[w];

	if (got->rows[gi] != want->rows[w])
	{
		case_fail("group %llu: count(*) %lld, want %lld", (unsigned long long) key,
				  (long long) got->rows[gi], (long long) want->rows[w]);
		return false;
	}
	for (int c = 0; c < ncols; c++)
	{
		const gh_aggresult *r = &got->cols[c];
		const want_col *x = &want->cols[w * ncols + c];
		int			ops = cols[c].ops;

		if (r->nonnull[gi] != x->nonnull)
		{
			case_fail("group %llu column %d: %lld non-null, want %lld",
					  (unsigned long long) key, c, (long long) r->nonnull[gi],
					  (long long) x->nonnull);
			return false;
		}
		if (!result_arrays_match(r, cols[c].type, ops))
		{
			case_fail("column %d: result arrays other than its operations fill", c);
			return false;
		}
		if (cols[c].type == GH_INT64)
		{
			char		a[48],
						b[48];

			if (ops & GH_AGG_SUM)
			{
				__int128	sum = (__int128) (((unsigned __int128) (uint64_t) gh_sum_hi(r, gi) << 64) |
											  r->sum_lo[gi]);

				if (sum != x->isum)
				{
					i128_text(sum, a);
					i128_text(x->isum, b);
					case_fail("group %llu column %d: sum %s, want %s",
							  (unsigned long long) key, c, a, b);
					return false;
				}
			}
			if (x->nonnull == 0)
				continue;
			if ((ops & GH_AGG_MIN) && r->imin[gi] != x->imin)
			{
				case_fail("group %llu column %d: min %lld, want %lld", (unsigned long long) key,
						  c, (long long) r->imin[gi], (long long) x->imin);
				return false;
			}
			if ((ops & GH_AGG_MAX) && r->imax[gi] != x->imax)
			{
				case_fail("group %llu column %d: max %lld, want %lld", (unsigned long long) key,
						  c, (long long) r->imax[gi], (long long) x->imax);
				return false;
			}
		}
		else
		{
			if ((ops & GH_AGG_SUM) && !close_float(r->fsum[gi], x->fsum, x->fabs_sum))
			{
				case_fail("group %llu column %d: float sum %.17g, want %.17Lg",
						  (unsigned long long) key, c, r->fsum[gi], x->fsum);
				return false;
			}
			if (x->nonnull == 0)
				continue;
			if ((ops & GH_AGG_MIN) && !same_float(r->fmin[gi], x->fmin))
			{
				case_fail("group %llu column %d: float min %g, want %g", (unsigned long long) key,
						  c, r->fmin[gi], x->fmin);
				return false;
			}
			if ((ops & GH_AGG_MAX) && !same_float(r->fmax[gi], x->fmax))
			{
				case_fail("group %llu column %d: float max %g, want %g", (unsigned long long) key,
						  c, r->fmax[gi], x->fmax);
				return false;
			}
		}
	}
	return true;
}

void
compare_groups(const gh_groups *got, const agg_oracle *want,
			   const gh_aggcol *cols, int ncols)
{
	size_t	   *idx;

	if (got->ngroups != want->ngroups)
	{
		case_fail("%zu groups, want %zu", got->ngroups, want->ngroups);
		return;
	}
	if (got->ncols != ncols)
	{
		case_fail("%d result columns, want %d", got->ncols, ncols);
		return;
	}
	idx = indices_by_key(got->keys, got->ngroups);
	for (size_t k = 0; k < got->ngroups; k++)
	{
		size_t		gi = idx[k];

		if (got->keys[gi] != want->keys[k])
		{
			case_fail("group keys differ: %llu where %llu was expected (%s)",
					  (unsigned long long) got->keys[gi],
					  (unsigned long long) want->keys[k],
					  k > 0 && got->keys[gi] == got->keys[idx[k - 1]] ? "a key is repeated" :
					  "a key is missing or extra");
			break;
		}
		if (!compare_group(got, gi, want, k, cols, ncols))
			break;
	}
	free(idx);
}
