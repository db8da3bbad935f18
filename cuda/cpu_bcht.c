/*-------------------------------------------------------------------------
 *
 * cpu_bcht.c
 *	  The bucketed cuckoo hash table (Awad et al.) on the CPU.
 *
 * INTERFACE ROUTINES
 *		gh_cpu_bcht_build		keys/rows -> table of distinct keys
 *		gh_cpu_bcht_lookup		the row range of one key
 *
 * The input is grouped by key through a HashGraph layout (cpu_hashgraph.c),
 * so each distinct key is one slot with the range of its rows.  Keys are
 * inserted one at a time: a key takes a free slot of the first of its three
 * buckets with room, else evicts a pseudo-random occupant, at most
 * GH_BCHT_MAX_EVICTIONS times, after which the table is rebuilt with new
 * seeds (and grows by 1/8 after GH_BCHT_MAX_REBUILDS failures).  Slots are
 * never emptied, so a lookup stops at the first bucket with a free slot.  A
 * real key equal to GH_EMPTY_KEY keeps its row range aside.  See cuda/README,
 * "BCHT".
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

/* Growths of the table before a build gives up (1.125^64: ~1900 times larger). */
#define BCHT_MAX_GROWTHS 64

void
gh_cpu_bcht_free(gh_cpu_bcht *bc)
{
	free(bc->slot_keys);
	free(bc->slot_vals);
	free(bc->starts);
	free(bc->rows);
	memset(bc, 0, sizeof(*bc));
}

size_t
gh_cpu_bcht_bytes(const gh_cpu_bcht *bc, size_t n)
{
	return (size_t) bc->nbuckets * GH_BCHT_BUCKET_SLOTS * 2 * sizeof(uint64_t) +
		(bc->ndistinct + 1) * sizeof(size_t) + n * sizeof(uint64_t);
}

static inline uint64_t
xorshift64(uint64_t *s)
{
	uint64_t	x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

/*
 * Insert key (distinct index val) into the table.  fill[b] is bucket b's
 * count of used slots.  False when the eviction chain ran out (some key is
 * then homeless, and the caller rebuilds).
 */
static bool
bcht_insert(gh_cpu_bcht *bc, uint8_t *fill, uint64_t key, uint64_t val,
			uint64_t *rng)
{
	uint64_t	from = UINT64_MAX;	/* bucket the key was just evicted from */

	for (int step = 0;; step++)
	{
		uint64_t	b[GH_BCHT_NHASH];
		uint64_t	r,
					victim;
		int			h;
		size_t		at;
		uint64_t	ek,
					ev;

		for (h = 0; h < GH_BCHT_NHASH; h++)
		{
			b[h] = gh_bcht_bucket(key, h, bc->rebuild, bc->nbuckets);
			if (fill[b[h]] < GH_BCHT_BUCKET_SLOTS)
			{
				at = b[h] * GH_BCHT_BUCKET_SLOTS + fill[b[h]]++;
				bc->slot_keys[at] = key;
				bc->slot_vals[at] = val;
				return true;
			}
		}
		if (step == GH_BCHT_MAX_EVICTIONS)
			return false;

		/* all three full: evict a random occupant, avoiding ping-pong */
		r = xorshift64(rng);
		h = (int) (r % GH_BCHT_NHASH);
		for (int tries = 0; tries < GH_BCHT_NHASH && b[h] == from; tries++)
			h = (h + 1) % GH_BCHT_NHASH;
		victim = b[h];
		at = victim * GH_BCHT_BUCKET_SLOTS + (size_t) ((r >> 32) % GH_BCHT_BUCKET_SLOTS);
		ek = bc->slot_keys[at];
		ev = bc->slot_vals[at];
		bc->slot_keys[at] = key;
		bc->slot_vals[at] = val;
		key = ek;
		val = ev;
		from = victim;
	}
}

/*
 * Group keys/rows by key: fills bc->rows, bc->starts, bc->ndistinct and
 * returns the distinct keys (malloc'd, ndistinct entries) in *distinct.
 */
static gh_status
bcht_group(gh_engine *e, const uint64_t *keys, const uint64_t *rows, size_t n,
		   gh_cpu_bcht *bc, uint64_t **distinct)
{
	gh_cpu_hashgraph hg;
	gh_status	st;
	size_t		nd = 0;

	st = gh_cpu_hg_build(e, keys, rows, n, gh_cpu_hg_nbuckets(n), &hg);
	if (st != GH_OK)
		return st;
	for (size_t i = 0; i < n; i++)
		nd += (i == 0 || hg.keys[i] != hg.keys[i - 1]);
	bc->starts = malloc((nd + 1) * sizeof(size_t));
	if (bc->starts == NULL)
	{
		gh_cpu_hg_free(&hg);
		return gh_fail(e, GH_ERR_HOST_NOMEM,
					   "out of host memory grouping %zu keys for a BCHT", n);
	}
	/* compact the run heads to the front of hg.keys: they become the distinct keys */
	nd = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || hg.keys[i] != hg.keys[i - 1])
		{
			bc->starts[nd] = i;
			hg.keys[nd++] = hg.keys[i];
		}
	bc->starts[nd] = n;
	bc->ndistinct = nd;
	bc->rows = hg.rows;
	*distinct = hg.keys;
	free(hg.offsets);
	return GH_OK;
}

/* Try to place every distinct key with the current nbuckets and rebuild. */
static bool
bcht_fill(gh_cpu_bcht *bc, uint8_t *fill, const uint64_t *distinct)
{
	size_t		nslots = (size_t) bc->nbuckets * GH_BCHT_BUCKET_SLOTS;
	uint64_t	rng = gh_hash64(bc->rebuild, GH_SEED_BCHT0) | 1;

	memset(bc->slot_keys, 0xff, nslots * sizeof(uint64_t));
	memset(fill, 0, bc->nbuckets);
	for (size_t d = 0; d < bc->ndistinct; d++)
	{
		if (distinct[d] == GH_EMPTY_KEY)
			continue;
		if (!bcht_insert(bc, fill, distinct[d], d, &rng))
			return false;
	}
	return true;
}

static gh_status
bcht_alloc_slots(gh_engine *e, gh_cpu_bcht *bc, uint8_t **fill)
{
	size_t		nslots = (size_t) bc->nbuckets * GH_BCHT_BUCKET_SLOTS;

	free(bc->slot_keys);
	free(bc->slot_vals);
	free(*fill);
	bc->slot_keys = malloc(nslots * sizeof(uint64_t));
	bc->slot_vals = malloc(nslots * sizeof(uint64_t));
	*fill = malloc(bc->nbuckets);
	if (bc->slot_keys == NULL || bc->slot_vals == NULL || *fill == NULL)
		return gh_fail(e, GH_ERR_HOST_NOMEM,
					   "out of host memory for a BCHT of %zu slots", nslots);
	return GH_OK;
}

gh_status
gh_cpu_bcht_build(gh_engine *e, const uint64_t *keys, const uint64_t *rows,
				  size_t n, double load_factor, gh_cpu_bcht *bc)
{
	uint64_t   *distinct = NULL;
	uint8_t    *fill = NULL;
	size_t		ncuckoo;
	gh_status	st;
	int			failures = 0,
				growths = 0;

	memset(bc, 0, sizeof(*bc));
	if (!(load_factor > 0.0) || load_factor > 0.99)
		load_factor = GH_BCHT_DEFAULT_LOAD;
	st = bcht_group(e, keys, rows, n, bc, &distinct);
	if (st != GH_OK)
		goto fail;
	ncuckoo = bc->ndistinct;
	for (size_t d = 0; d < bc->ndistinct; d++)
		if (distinct[d] == GH_EMPTY_KEY)
		{
			bc->has_empty_key = true;
			bc->empty_key_at = d;
			ncuckoo--;
		}
	/* ceil(ncuckoo / (4 * load_factor)), a whole number of regions */
	bc->nbuckets = (uint64_t) ((double) ncuckoo / (GH_BCHT_BUCKET_SLOTS * load_factor));
	if ((double) bc->nbuckets * GH_BCHT_BUCKET_SLOTS * load_factor < (double) ncuckoo)
		bc->nbuckets++;
	bc->nbuckets = gh_bcht_round_buckets(bc->nbuckets);

	st = bcht_alloc_slots(e, bc, &fill);
	for (bc->rebuild = 0; st == GH_OK; bc->rebuild++)
	{
		if (bcht_fill(bc, fill, distinct))
			break;
		if (gh_interrupted(e))
		{
			st = GH_ERR_CANCELLED;
			break;
		}
		if (++failures < GH_BCHT_MAX_REBUILDS)
			continue;
		/* new seeds did not help: a larger table */
		failures = 0;
		if (++growths > BCHT_MAX_GROWTHS)
		{
			st = gh_fail(e, GH_ERR_INTERNAL,
						 "could not build a BCHT of %zu distinct keys", ncuckoo);
			break;
		}
		bc->nbuckets = gh_bcht_round_buckets(bc->nbuckets + bc->nbuckets / 8 + 1);
		st = bcht_alloc_slots(e, bc, &fill);
	}
	free(fill);
	free(distinct);
	if (st != GH_OK)
		goto fail;
	return GH_OK;

fail:
	gh_cpu_bcht_free(bc);
	return st;
}

/*
 * The rows of key: returns how many, and the first one's position in
 * bc->rows in *first (0 when there are none).
 */
size_t
gh_cpu_bcht_lookup(const gh_cpu_bcht *bc, uint64_t key, size_t *first)
{
	size_t		d;

	*first = 0;
	if (key == GH_EMPTY_KEY)
	{
		if (!bc->has_empty_key)
			return 0;
		d = bc->empty_key_at;
		*first = bc->starts[d];
		return bc->starts[d + 1] - bc->starts[d];
	}
	for (int h = 0; h < GH_BCHT_NHASH; h++)
	{
		uint64_t	b = gh_bcht_bucket(key, h, bc->rebuild, bc->nbuckets);
		const uint64_t *sk = bc->slot_keys + b * GH_BCHT_BUCKET_SLOTS;

		for (int s = 0; s < GH_BCHT_BUCKET_SLOTS; s++)
		{
			if (sk[s] == key)
			{
				d = bc->slot_vals[b * GH_BCHT_BUCKET_SLOTS + s];
				*first = bc->starts[d];
				return bc->starts[d + 1] - bc->starts[d];
			}
			if (sk[s] == GH_EMPTY_KEY)
				return 0;		/* a bucket with room: the key is not further on */
		}
	}
	return 0;
}
