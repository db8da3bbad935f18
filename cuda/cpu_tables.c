/*-------------------------------------------------------------------------
 *
 * cpu_tables.c
 *	  The CPU backend's tables and probes: HashGraph, BCHT, the
 *	  list-intersection join.
 *
 * HashGraph (Green): nbuckets = n, bucket = gh_bucket_of(key); built by a
 * count per bucket, an exclusive prefix sum and a scatter of keys and rows
 * into CSR arrays, so a bucket's entries are contiguous and keep input order.
 *
 * BCHT (Awad et al.): the (key, row) pairs are sorted by key so each distinct
 * key's rows are one range; distinct keys go into buckets of 16 slots, each
 * key into one of its three candidate buckets, by cuckoo eviction with a
 * bounded chain; a failed chain rebuilds with new seeds (then a larger
 * table).  The empty-slot value is GH_EMPTY_KEY; a real key equal to it is
 * kept aside with its range.
 *
 * A probe counts each probe element's matches, takes an exclusive prefix sum
 * of the counts, and then writes any range [first, first + count) of pairs
 * by binary search for the element holding `first`.  The list-intersection
 * join is the same over a permuted order of the probe keys: the CSR order of
 * a HashGraph built over them with the table's bucket count, so each
 * table bucket meets all its probe keys at once.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

/* ---- HashGraph ---- */

/* CSR arrays of (keys, rows) by bucket; perm (optional) receives the input position of each entry. */
static gh_status
csr_build(gh_engine *e, const uint64_t *keys, const uint64_t *rows, size_t n,
		  uint64_t nbuckets, size_t **offsets, uint64_t **okeys,
		  uint64_t **orows, uint64_t **perm)
{
	size_t	   *off = calloc(nbuckets + 1, sizeof(size_t));
	size_t	   *cur = malloc((nbuckets ? nbuckets : 1) * sizeof(size_t));
	uint64_t   *k = malloc((n ? n : 1) * sizeof(uint64_t));
	uint64_t   *r = rows || !perm ? malloc((n ? n : 1) * sizeof(uint64_t)) : NULL;
	uint64_t   *p = perm ? malloc((n ? n : 1) * sizeof(uint64_t)) : NULL;

	if (!off || !cur || !k || (!r && (rows || !perm)) || (perm && !p))
	{
		free(off);
		free(cur);
		free(k);
		free(r);
		free(p);
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory building a HashGraph of %zu keys", n);
	}
	for (size_t i = 0; i < n; i++)
		off[gh_bucket_of(keys[i], nbuckets) + 1]++;
	for (uint64_t b = 0; b < nbuckets; b++)
		off[b + 1] += off[b];
	memcpy(cur, off, nbuckets * sizeof(size_t));
	for (size_t i = 0; i < n; i++)
	{
		size_t		at = cur[gh_bucket_of(keys[i], nbuckets)]++;

		k[at] = keys[i];
		if (r)
			r[at] = rows ? rows[i] : i;
		if (p)
			p[at] = i;
	}
	free(cur);
	*offsets = off;
	*okeys = k;
	if (orows)
		*orows = r;
	else
		free(r);
	if (perm)
		*perm = p;
	return GH_OK;
}

static gh_status
hashgraph_build(gh_engine *e, gh_cpu_part *t, const uint64_t *keys,
				const uint64_t *rows, size_t n)
{
	t->nbuckets = n ? n : 1;
	return csr_build(e, keys, rows, n, t->nbuckets, &t->offsets, &t->keys, &t->rows, NULL);
}

/* ---- BCHT ---- */

typedef struct kv
{
	uint64_t	key;
	uint64_t	row;
} kv;

static int
kv_cmp(const void *a, const void *b)
{
	uint64_t	x = ((const kv *) a)->key,
				y = ((const kv *) b)->key;

	return x < y ? -1 : x > y;
}

/* Place distinct key d (index into t->distinct) into the cuckoo table. */
static bool
bcht_insert(gh_cpu_part *t, uint32_t d, uint32_t rebuild, uint64_t *rng)
{
	uint64_t	key = t->distinct[d];
	uint32_t	val = d;

	for (int step = 0; step < GH_BCHT_MAX_EVICTIONS; step++)
	{
		uint64_t	b[GH_BCHT_NHASH];
		int			victim_bucket;
		int			slot;

		for (int h = 0; h < GH_BCHT_NHASH; h++)
		{
			b[h] = gh_bcht_bucket(key, h, rebuild, t->nbuckets);
			for (int s = 0; s < GH_BCHT_BUCKET_SLOTS; s++)
			{
				size_t		at = b[h] * GH_BCHT_BUCKET_SLOTS + s;

				if (t->slot_key[at] == GH_EMPTY_KEY)
				{
					t->slot_key[at] = key;
					t->slot_val[at] = val;
					return true;
				}
			}
		}
		/* all three full: evict a random resident of a random candidate */
		*rng ^= *rng << 13;
		*rng ^= *rng >> 7;
		*rng ^= *rng << 17;
		victim_bucket = (int) (*rng % GH_BCHT_NHASH);
		slot = (int) ((*rng >> 8) % GH_BCHT_BUCKET_SLOTS);
		{
			size_t		at = b[victim_bucket] * GH_BCHT_BUCKET_SLOTS + slot;
			uint64_t	ek = t->slot_key[at];
			uint32_t	ev = t->slot_val[at];

			t->slot_key[at] = key;
			t->slot_val[at] = val;
			key = ek;
			val = ev;
		}
	}
	return false;
}

static gh_status
bcht_build(gh_engine *e, gh_cpu_part *t, const uint64_t *keys,
		   const uint64_t *rows, size_t n, double load)
{
	kv		   *pairs = malloc((n ? n : 1) * sizeof(kv));
	size_t		nd = 0;
	uint64_t	rng = 0x9e3779b97f4a7c15ULL;

	if (pairs == NULL)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory building a BCHT of %zu keys", n);
	for (size_t i = 0; i < n; i++)
	{
		pairs[i].key = keys[i];
		pairs[i].row = rows[i];
	}
	/* stable grouping by key: sort, ties broken by row order of input */
	qsort(pairs, n, sizeof(kv), kv_cmp);
	t->rows = malloc((n ? n : 1) * sizeof(uint64_t));
	t->distinct = malloc((n ? n : 1) * sizeof(uint64_t));
	t->dstart = malloc((n + 1) * sizeof(size_t));
	if (!t->rows || !t->distinct || !t->dstart)
	{
		free(pairs);
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory building a BCHT of %zu keys", n);
	}
	t->max_key_at = -1;
	for (size_t i = 0; i < n; i++)
	{
		if (i == 0 || pairs[i].key != pairs[i - 1].key)
		{
			t->dstart[nd] = i;
			t->distinct[nd++] = pairs[i].key;
		}
		t->rows[i] = pairs[i].row;
	}
	t->dstart[nd] = n;
	t->ndistinct = nd;
	free(pairs);

	if (load <= 0 || load > 0.99)
		load = GH_BCHT_DEFAULT_LOAD;
	t->nbuckets = (uint64_t) ((double) nd / (GH_BCHT_BUCKET_SLOTS * load)) + 1;
	for (uint32_t rebuild = 0;; rebuild++)
	{
		size_t		nslots = t->nbuckets * GH_BCHT_BUCKET_SLOTS;
		bool		ok = true;

		if (rebuild > 0 && rebuild % GH_BCHT_MAX_REBUILDS == 0)
			t->nbuckets += t->nbuckets / 10 + 1;	/* seeds did not help: grow */
		nslots = t->nbuckets * GH_BCHT_BUCKET_SLOTS;
		free(t->slot_key);
		free(t->slot_val);
		t->slot_key = malloc(nslots * sizeof(uint64_t));
		t->slot_val = malloc(nslots * sizeof(uint32_t));
		if (!t->slot_key || !t->slot_val)
			return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a BCHT of %zu slots", nslots);
		memset(t->slot_key, 0xff, nslots * sizeof(uint64_t));
		t->rebuild = rebuild;
		t->max_key_at = -1;
		for (size_t d = 0; d < nd && ok; d++)
		{
			if (t->distinct[d] == GH_EMPTY_KEY)
				t->max_key_at = (long) d;
			else
				ok = bcht_insert(t, (uint32_t) d, rebuild, &rng);
		}
		if (ok)
			break;
		if (gh_interrupted(e))
			return GH_ERR_CANCELLED;
	}
	return GH_OK;
}

/* The distinct-key index of key in a BCHT, or -1. */
static long
bcht_find(const gh_cpu_part *t, uint64_t key)
{
	if (key == GH_EMPTY_KEY)
		return t->max_key_at;
	for (int h = 0; h < GH_BCHT_NHASH; h++)
	{
		uint64_t	b = gh_bcht_bucket(key, h, t->rebuild, t->nbuckets);
		const uint64_t *sk = t->slot_key + b * GH_BCHT_BUCKET_SLOTS;

		for (int s = 0; s < GH_BCHT_BUCKET_SLOTS; s++)
		{
			if (sk[s] == key)
				return (long) t->slot_val[b * GH_BCHT_BUCKET_SLOTS + s];
			if (sk[s] == GH_EMPTY_KEY)
				break;			/* slots fill in order: no later match */
		}
	}
	return -1;
}

/* ---- parts ---- */

gh_status
gh_cpu_build(gh_engine *e, int dev, gh_kind kind, const uint64_t *keys,
			 const uint64_t *rows, size_t n, double load_factor, void **out)
{
	gh_cpu_part *t = calloc(1, sizeof(*t));
	gh_status	st;

	(void) dev;
	if (t == NULL)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory");
	t->kind = kind;
	t->n = n;
	st = kind == GH_KIND_BCHT ? bcht_build(e, t, keys, rows, n, load_factor)
		: hashgraph_build(e, t, keys, rows, n);
	if (st != GH_OK)
	{
		gh_cpu_part_free(e, t);
		return st;
	}
	t->bytes = gh_cpu_build_bytes_per_row(kind) * n;
	gh_account(e, (long long) t->bytes);
	*out = t;
	return GH_OK;
}

void
gh_cpu_part_free(gh_engine *e, void *part)
{
	gh_cpu_part *t = part;

	if (t == NULL)
		return;
	gh_account(e, -(long long) t->bytes);
	free(t->offsets);
	free(t->keys);
	free(t->rows);
	free(t->distinct);
	free(t->dstart);
	free(t->slot_key);
	free(t->slot_val);
	free(t);
}

size_t
gh_cpu_part_distinct(const void *part)
{
	const gh_cpu_part *t = part;

	return t->kind == GH_KIND_BCHT ? t->ndistinct : 0;
}

/* ---- probes ---- */

/* The k-th probe element's key and its matches: [*lo, *hi) of a bucket or a row range. */
static uint64_t
element_key(const gh_cpu_probe *p, size_t j)
{
	return p->keys[p->perm ? p->perm[j] : j];
}

static size_t
count_matches(const gh_cpu_part *t, uint64_t key)
{
	if (t->kind == GH_KIND_BCHT)
	{
		long		d = bcht_find(t, key);

		return d < 0 ? 0 : t->dstart[d + 1] - t->dstart[d];
	}
	else
	{
		uint64_t	b = gh_bucket_of(key, t->nbuckets);
		size_t		c = 0;

		for (size_t i = t->offsets[b]; i < t->offsets[b + 1]; i++)
			c += t->keys[i] == key;
		return c;
	}
}

gh_status
gh_cpu_probe_begin(gh_engine *e, void *part, const uint64_t *keys, size_t n,
				   gh_join_method method, void **out, uint64_t *total)
{
	gh_cpu_part *t = part;
	gh_cpu_probe *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory");
	p->t = t;
	p->keys = keys;
	p->n = n;
	if (method != GH_JOIN_PROBE && t->kind == GH_KIND_HASHGRAPH)
	{
		/* list intersection: visit probe keys bucket by bucket */
		size_t	   *poff;
		uint64_t   *pkeys;
		gh_status	st = csr_build(e, keys, NULL, n, t->nbuckets, &poff, &pkeys, NULL, &p->perm);

		if (st != GH_OK)
		{
			free(p);
			return st;
		}
		free(poff);
		free(pkeys);
	}
	p->offsets = malloc((n + 1) * sizeof(uint64_t));
	if (p->offsets == NULL)
	{
		gh_cpu_probe_free(e, p);
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory probing %zu keys", n);
	}
	p->offsets[0] = 0;
	for (size_t j = 0; j < n; j++)
		p->offsets[j + 1] = p->offsets[j] + count_matches(t, element_key(p, j));
	*total = p->offsets[n];
	*out = p;
	return GH_OK;
}

gh_status
gh_cpu_probe_write(gh_engine *e, void *probe, uint64_t first, size_t count,
				   gh_pair *out)
{
	gh_cpu_probe *p = probe;
	const gh_cpu_part *t = p->t;
	size_t		lo = 0,
				hi = p->n,
				written = 0;

	(void) e;
	/* the element whose range holds `first` */
	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (p->offsets[mid + 1] <= first)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; j < p->n && written < count; j++)
	{
		uint64_t	key = element_key(p, j);
		uint64_t	outer = p->perm ? p->perm[j] : j;
		uint64_t	skip = first + written - p->offsets[j];

		if (t->kind == GH_KIND_BCHT)
		{
			long		d = bcht_find(t, key);

			if (d < 0)
				continue;
			for (size_t i = t->dstart[d] + skip; i < t->dstart[d + 1] && written < count; i++)
			{
				out[written].outer = outer;
				out[written].inner = t->rows[i];
				written++;
			}
		}
		else
		{
			uint64_t	b = gh_bucket_of(key, t->nbuckets);

			for (size_t i = t->offsets[b]; i < t->offsets[b + 1] && written < count; i++)
			{
				if (t->keys[i] != key)
					continue;
				if (skip > 0)
				{
					skip--;
					continue;
				}
				out[written].outer = outer;
				out[written].inner = t->rows[i];
				written++;
			}
		}
	}
	if (written != count)
		return gh_fail(e, GH_ERR_INTERNAL, "probe wrote %zu of %zu pairs", written, count);
	return GH_OK;
}

gh_status
gh_cpu_probe_counts(gh_engine *e, void *probe, uint32_t *counts)
{
	gh_cpu_probe *p = probe;

	(void) e;
	for (size_t j = 0; j < p->n; j++)
	{
		uint64_t	c = p->offsets[j + 1] - p->offsets[j];

		counts[p->perm ? p->perm[j] : j] = c > UINT32_MAX ? UINT32_MAX : (uint32_t) c;
	}
	return GH_OK;
}

void
gh_cpu_probe_free(gh_engine *e, void *probe)
{
	gh_cpu_probe *p = probe;

	(void) e;
	if (p == NULL)
		return;
	free(p->perm);
	free(p->offsets);
	free(p);
}
