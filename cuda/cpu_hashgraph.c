/*-------------------------------------------------------------------------
 *
 * cpu_hashgraph.c
 *	  HashGraph on the CPU: the CSR table, lookups in it, and the
 *	  list-intersection join.
 *
 * INTERFACE ROUTINES
 *		gh_cpu_hg_nbuckets		bucket count for n keys
 *		gh_cpu_hg_build			keys/rows -> CSR table
 *		gh_cpu_hg_lookup		the run of entries equal to one key
 *		gh_cpu_hg_intersect		per-bucket merge of a probe HashGraph
 *
 * Green's HashGraph is built by counting keys per bucket
 * (gh_bucket_of(key, nbuckets)), an exclusive prefix sum of the counts, and
 * a scatter of keys and rows into CSR arrays.  The scatter keeps input order
 * inside a bucket; each bucket is then sorted by (key, row), which is almost
 * free (buckets average one entry, and a bucket that is already in order,
 * like a million copies of one key in row order, is only checked) and makes
 * the entries of one key a contiguous run.  So a lookup is a short scan, or
 * two binary searches in a heavy bucket, and answers with one range: a key
 * repeated a million times costs its probes no more than a unique key,
 * however the pairs are chunked.
 *
 * List intersection builds a second HashGraph over the probe keys with the
 * same bucket count and hash, so bucket b of both holds every key that can
 * match in bucket b; with both buckets sorted, intersecting them is one
 * merge that reads each table bucket once.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

/* Buckets up to this size are sorted by insertion and scanned linearly. */
#define HG_SMALL_BUCKET 32

typedef struct hg_entry
{
	uint64_t	key;
	uint64_t	row;
} hg_entry;

uint64_t
gh_cpu_hg_nbuckets(size_t n)
{
	/* one bucket per key on average (Green uses a table as large as the input) */
	return n > 0 ? (uint64_t) n : 1;
}

static int
entry_cmp(const void *a, const void *b)
{
	const hg_entry *x = a;
	const hg_entry *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static inline bool
entry_less(uint64_t k1, uint64_t r1, uint64_t k2, uint64_t r2)
{
	return k1 < k2 || (k1 == k2 && r1 < r2);
}

/*
 * Sort entries [lo, hi) by (key, row).  tmp has room for the largest
 * bucket (only needed for buckets above HG_SMALL_BUCKET).
 */
static void
sort_bucket(uint64_t *keys, uint64_t *rows, size_t lo, size_t hi, hg_entry *tmp)
{
	size_t		len = hi - lo;
	size_t		i;

	for (i = lo + 1; i < hi; i++)
		if (entry_less(keys[i], rows[i], keys[i - 1], rows[i - 1]))
			break;
	if (i >= hi)
		return;					/* already in order */
	if (len <= HG_SMALL_BUCKET)
	{
		for (i = lo + 1; i < hi; i++)
		{
			uint64_t	k = keys[i],
						r = rows[i];
			size_t		j = i;

			while (j > lo && entry_less(k, r, keys[j - 1], rows[j - 1]))
			{
				keys[j] = keys[j - 1];
				rows[j] = rows[j - 1];
				j--;
			}
			keys[j] = k;
			rows[j] = r;
		}
		return;
	}
	for (i = 0; i < len; i++)
	{
		tmp[i].key = keys[lo + i];
		tmp[i].row = rows[lo + i];
	}
	qsort(tmp, len, sizeof(hg_entry), entry_cmp);
	for (i = 0; i < len; i++)
	{
		keys[lo + i] = tmp[i].key;
		rows[lo + i] = tmp[i].row;
	}
}

void
gh_cpu_hg_free(gh_cpu_hashgraph *hg)
{
	free(hg->offsets);
	free(hg->keys);
	free(hg->rows);
	memset(hg, 0, sizeof(*hg));
}

size_t
gh_cpu_hg_bytes(const gh_cpu_hashgraph *hg)
{
	return (size_t) (hg->nbuckets + 1) * sizeof(size_t) + hg->n * 2 * sizeof(uint64_t);
}

/*
 * Build a HashGraph of n keys with nbuckets buckets.  rows NULL means each
 * entry's row is its input index (what list intersection needs).
 */
gh_status
gh_cpu_hg_build(gh_engine *e, const uint64_t *keys, const uint64_t *rows,
				size_t n, uint64_t nbuckets, gh_cpu_hashgraph *hg)
{
	size_t	   *off;
	size_t		sum = 0,
				largest = 0;
	hg_entry   *tmp = NULL;

	memset(hg, 0, sizeof(*hg));
	hg->nbuckets = nbuckets;
	hg->n = n;
	hg->offsets = calloc(nbuckets + 1, sizeof(size_t));
	hg->keys = malloc((n > 0 ? n : 1) * sizeof(uint64_t));
	hg->rows = malloc((n > 0 ? n : 1) * sizeof(uint64_t));
	if (hg->offsets == NULL || hg->keys == NULL || hg->rows == NULL)
	{
		gh_cpu_hg_free(hg);
		return gh_fail(e, GH_ERR_HOST_NOMEM,
					   "out of host memory building a HashGraph of %zu keys", n);
	}
	off = hg->offsets;

	/* count per bucket, then exclusive prefix sum: off[b] = start of b */
	for (size_t i = 0; i < n; i++)
		off[gh_bucket_of(keys[i], nbuckets)]++;
	for (uint64_t b = 0; b <= nbuckets; b++)
	{
		size_t		c = off[b];

		off[b] = sum;
		sum += c;
		if (c > largest)
			largest = c;
	}

	/* scatter; afterwards off[b] is the end of b, i.e. the start of b + 1 */
	for (size_t i = 0; i < n; i++)
	{
		size_t		at = off[gh_bucket_of(keys[i], nbuckets)]++;

		hg->keys[at] = keys[i];
		hg->rows[at] = rows ? rows[i] : (uint64_t) i;
	}
	memmove(off + 1, off, nbuckets * sizeof(size_t));
	off[0] = 0;

	if (largest > HG_SMALL_BUCKET)
	{
		tmp = malloc(largest * sizeof(hg_entry));
		if (tmp == NULL)
		{
			gh_cpu_hg_free(hg);
			return gh_fail(e, GH_ERR_HOST_NOMEM,
						   "out of host memory sorting a HashGraph bucket of %zu keys",
						   largest);
		}
	}
	for (uint64_t b = 0; b < nbuckets; b++)
		if (off[b + 1] - off[b] > 1)
			sort_bucket(hg->keys, hg->rows, off[b], off[b + 1], tmp);
	free(tmp);
	return GH_OK;
}

/*
 * The entries equal to key: returns how many, and their first position in
 * *first (0 when there are none).
 */
size_t
gh_cpu_hg_lookup(const gh_cpu_hashgraph *hg, uint64_t key, size_t *first)
{
	uint64_t	b = gh_bucket_of(key, hg->nbuckets);
	size_t		lo = hg->offsets[b],
				hi = hg->offsets[b + 1];
	const uint64_t *k = hg->keys;
	size_t		end;

	*first = 0;
	if (hi - lo <= HG_SMALL_BUCKET)
	{
		while (lo < hi && k[lo] < key)
			lo++;
		end = lo;
		while (end < hi && k[end] == key)
			end++;
	}
	else
	{
		size_t		l = lo,
					h = hi;

		/* lower bound, then upper bound, of key in a sorted bucket */
		while (l < h)
		{
			size_t		mid = l + (h - l) / 2;

			if (k[mid] < key)
				l = mid + 1;
			else
				h = mid;
		}
		lo = l;
		h = hi;
		while (l < h)
		{
			size_t		mid = l + (h - l) / 2;

			if (k[mid] <= key)
				l = mid + 1;
			else
				h = mid;
		}
		end = l;
	}
	if (end > lo)
		*first = lo;
	return end - lo;
}

/*
 * List intersection of n probe keys with hg.  Fills, per probe element in
 * the probe HashGraph's CSR order, p->outer (its probe key index),
 * p->first (its first match in hg) and p->offsets[j + 1] (its match count;
 * the caller makes the prefix sum).  p->first and p->offsets are allocated
 * by the caller.
 */
gh_status
gh_cpu_hg_intersect(gh_engine *e, const gh_cpu_hashgraph *hg,
					const uint64_t *keys, size_t n, gh_cpu_probe *p)
{
	gh_cpu_hashgraph ph;
	gh_status	st;
	size_t		tmp_bytes;

	st = gh_cpu_hg_build(e, keys, NULL, n, hg->nbuckets, &ph);
	if (st != GH_OK)
		return st;
	tmp_bytes = (size_t) (ph.nbuckets + 1) * sizeof(size_t) + n * sizeof(uint64_t);
	gh_account(e, (long long) tmp_bytes);

	for (uint64_t b = 0; b < hg->nbuckets; b++)
	{
		size_t		i = ph.offsets[b],
					pend = ph.offsets[b + 1];
		size_t		t = hg->offsets[b],
					tend = hg->offsets[b + 1];

		while (i < pend)
		{
			uint64_t	key = ph.keys[i];
			size_t		run;

			while (t < tend && hg->keys[t] < key)
				t++;
			run = t;
			while (run < tend && hg->keys[run] == key)
				run++;
			/* every probe element holding this key matches the same run */
			for (; i < pend && ph.keys[i] == key; i++)
			{
				p->first[i] = run > t ? t : 0;
				p->offsets[i + 1] = run - t;
			}
			t = run;
		}
	}

	/* the probe HashGraph's rows are the probe key indices: keep them */
	p->outer = ph.rows;
	ph.rows = NULL;
	gh_account(e, -(long long) tmp_bytes);
	gh_cpu_hg_free(&ph);
	return GH_OK;
}
