/*-------------------------------------------------------------------------
 *
 * engine_pagecache.c
 *	  The page cache (engine.h, "the page cache"): copies of heap pages in
 *	  device memory, named by the caller, read instead of host memory when
 *	  the same version of a page is read again.
 *
 * INTERFACE ROUTINES
 *		gh_page_cache_size, gh_page_cache_info_get	(engine.h)
 *		gh_page_cache_plan		a read's copies: from where, to where
 *		gh_page_cache_settle	the read kept or not: its copies kept or let go
 *		gh_page_cache_close		(gh_close)
 *
 * The copies live in slots of one page each, in chunks of device array
 * memory (the backend's darray_alloc: device memory on the CUDA backend,
 * host memory on the CPU backend) of 64 MB (less for a smaller cache),
 * taken as the cache fills up to its size.  On several devices each device
 * has a cache of its own, of that size: a page's copy lives on the device
 * that reads it (gh_page_device: the same device for every read of the
 * name), so the devices read their shares of a cached table from their own
 * memory, at once.
 * Each slot has an entry: the name and LSN of the page it holds and a
 * state: free; filling (a read has copied a page into it and its keep has
 * not come yet: only that star may settle it, and nobody reads or replaces
 * it); or kept (a copy any read of that name and LSN may take).  Entries
 * are found by name through chains from a table of heads.  A read takes a
 * free slot, then a new chunk, then the first kept entry the clock hand
 * finds unreferenced since it last passed (a read of a copy references it,
 * and so does the keep that made it) and not taken by the read being
 * planned.
 *
 * Reads are synchronous (the backend has read every page when star_read
 * returns), so a copy replaced after its read is never read half replaced.
 * A slot is filled only by a read whose keep says the page held (the caller
 * checked it after the read); a read that fails, is not kept, or is freed
 * before its keep lets its slots go.  Emptying the cache (a new size)
 * starts a new epoch, so that a star does not settle slots of an earlier
 * one.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "engine_internal.h"
#include "hash.h"

#define CHUNK_BYTES ((size_t) 64 << 20)

#define SLOT_FREE		0
#define SLOT_FILLING	1
#define SLOT_KEPT		2

typedef struct pc_entry
{
	uint64_t	rel;
	uint64_t	block;
	uint64_t	lsn;
	const gh_star *owner;		/* filling: the star whose read filled it */
	int32_t		next;			/* the chain's next entry, or the free list's; -1: none */
	uint32_t	read_at;		/* the last read that took this copy (pc_cache.reads) */
	uint8_t		state;
	uint8_t		ref;			/* read since the clock hand last passed */
} pc_entry;

/* one device's cache */
typedef struct pc_cache
{
	int			dev;			/* its device index */
	size_t		page_size;		/* of its slots; 0: none taken yet */
	size_t		per_chunk;		/* slots per chunk */
	size_t		chunk_bytes;	/* per_chunk * page_size */
	size_t		max_chunks;
	size_t		nchunks;
	void	  **chunks;			/* max_chunks */
	size_t		nslots;			/* nchunks * per_chunk */
	pc_entry   *ent;			/* nslots */
	int32_t		free_list;
	size_t		nheads;			/* a power of two */
	int32_t    *heads;
	size_t		hand;
	uint64_t	kept;
	uint64_t	hits;
	uint64_t	misses;
	uint32_t	reads;			/* reads planned so far */
	bool		full;			/* no more chunks: the size, or the device */
} pc_cache;

struct gh_pagecache
{
	size_t		size;			/* bytes each device's may take */
	uint64_t	epoch;
	pc_cache	dev[GH_MAX_DEVICES];	/* the engine's devices' */
};

/*
 * A page's chain: the relation's (and tablespace's) hash plus the block
 * number, so that the consecutive blocks a scan reads have consecutive
 * heads, whose lookups then share cache lines instead of missing each.
 */
static uint64_t
rel_hash(uint64_t rel, uint64_t block)
{
	return gh_hash64(rel * 0x9E3779B97F4A7C15ULL ^ (block >> 32), 0);
}

static size_t
head_at(const pc_cache *c, uint64_t relhash, uint64_t block)
{
	return (relhash + (uint32_t) block) & (c->nheads - 1);
}

static size_t
head_of(const pc_cache *c, uint64_t rel, uint64_t block)
{
	return head_at(c, rel_hash(rel, block), block);
}

static void *
slot_address(const pc_cache *c, int32_t slot)
{
	return (char *) c->chunks[(size_t) slot / c->per_chunk] +
		((size_t) slot % c->per_chunk) * c->page_size;
}

static int32_t
find(const pc_cache *c, size_t head, uint64_t rel, uint64_t block)
{
	for (int32_t i = c->heads[head]; i >= 0; i = c->ent[i].next)
		if (c->ent[i].rel == rel && c->ent[i].block == block)
			return i;
	return -1;
}

/* Take entry i out of its chain, onto the free list. */
static void
release(pc_cache *c, int32_t i)
{
	int32_t    *p = &c->heads[head_of(c, c->ent[i].rel, c->ent[i].block)];

	while (*p != i)
		p = &c->ent[*p].next;
	*p = c->ent[i].next;
	if (c->ent[i].state == SLOT_KEPT)
		c->kept--;
	c->ent[i].state = SLOT_FREE;
	c->ent[i].owner = NULL;
	c->ent[i].next = c->free_list;
	c->free_list = i;
}

/* Free everything one device's cache holds. */
static void
empty_device(gh_engine *e, pc_cache *c)
{
	for (size_t k = 0; k < c->nchunks; k++)
		e->ops->darray_free(e, c->dev, c->chunks[k], c->chunk_bytes);
	free(c->chunks);
	free(c->ent);
	free(c->heads);
	c->chunks = NULL;
	c->ent = NULL;
	c->heads = NULL;
	c->nchunks = c->nslots = c->nheads = c->hand = 0;
	c->kept = 0;
	c->free_list = -1;
	c->page_size = 0;
	c->full = false;
}

/* Free everything the caches hold; a new epoch. */
static void
empty(gh_engine *e, struct gh_pagecache *pc)
{
	for (int d = 0; d < e->opt.ndevices; d++)
		empty_device(e, &pc->dev[d]);
	pc->epoch++;
}

void
gh_page_cache_size(gh_engine *e, size_t bytes)
{
	struct gh_pagecache *pc;

	if (e == NULL || e->ops->darray_alloc == NULL)
		return;
	pc = e->pagecache;
	if (pc == NULL)
	{
		if (bytes == 0)
			return;
		pc = calloc(1, sizeof(*pc));
		if (pc == NULL)
			return;
		for (int d = 0; d < GH_MAX_DEVICES; d++)
		{
			pc->dev[d].dev = d;
			pc->dev[d].free_list = -1;
		}
		e->pagecache = pc;
	}
	if (bytes != pc->size)
		empty(e, pc);
	pc->size = bytes;
	for (int d = 0; d < e->opt.ndevices; d++)
		pc->dev[d].full = false;
}

void
gh_page_cache_info_get(const gh_engine *e, gh_page_cache_info *out)
{
	const struct gh_pagecache *pc = e != NULL ? e->pagecache : NULL;

	memset(out, 0, sizeof(*out));
	if (pc == NULL)
		return;
	out->size = pc->size * (size_t) e->opt.ndevices;
	for (int d = 0; d < e->opt.ndevices; d++)
	{
		const pc_cache *c = &pc->dev[d];

		out->bytes += c->nchunks * c->chunk_bytes;
		out->pages += c->kept;
		out->hits += c->hits;
		out->misses += c->misses;
	}
}

/* Add a chunk of slots to the free list: false if none may or can be had. */
static bool
grow(gh_engine *e, pc_cache *c)
{
	void	   *chunk;
	pc_entry   *ent;

	if (c->full || c->nchunks >= c->max_chunks || e->inject_dev >= 0)
		return false;
	ent = realloc(c->ent, (c->nslots + c->per_chunk) * sizeof(pc_entry));
	if (ent == NULL)
		return false;
	c->ent = ent;
	if (e->ops->darray_alloc(e, c->dev, &chunk, c->chunk_bytes) != GH_OK)
	{
		/* no room on the device: the cache stays as large as it is */
		e->status = GH_OK;
		e->errmsg[0] = '\0';
		c->full = true;
		return false;
	}
	c->chunks[c->nchunks++] = chunk;
	for (size_t k = 0; k < c->per_chunk; k++)
	{
		int32_t		i = (int32_t) (c->nslots + c->per_chunk - 1 - k);

		memset(&c->ent[i], 0, sizeof(pc_entry));
		c->ent[i].next = c->free_list;
		c->free_list = i;
	}
	c->nslots += c->per_chunk;
	return true;
}

/* A slot for a new copy, out of its chain: -1 if none. */
static int32_t
victim(gh_engine *e, pc_cache *c)
{
	int32_t		i;

	if (c->free_list < 0)
		(void) grow(e, c);
	if (c->free_list >= 0)
	{
		i = c->free_list;
		c->free_list = c->ent[i].next;
		return i;
	}
	for (size_t step = 0; step < 2 * c->nslots; step++)
	{
		i = (int32_t) c->hand;
		c->hand = (c->hand + 1) % c->nslots;
		if (c->ent[i].state != SLOT_KEPT)
			continue;
		/* a copy the read being planned takes */
		if (c->ent[i].read_at == c->reads)
			continue;
		if (c->ent[i].ref)
		{
			c->ent[i].ref = 0;
			continue;
		}
		release(c, i);
		c->free_list = c->ent[i].next;
		return i;
	}
	return -1;
}

/* A device's cache of size bytes set up for pages of page_size bytes: false if it cannot be. */
static bool
ready(pc_cache *c, size_t size, size_t page_size)
{
	if (c->page_size == page_size)
		return true;
	if (c->page_size != 0 || page_size == 0)
		return false;
	c->per_chunk = (size < CHUNK_BYTES ? size : CHUNK_BYTES) / page_size;
	if (c->per_chunk == 0)
		return false;
	c->chunk_bytes = c->per_chunk * page_size;
	c->max_chunks = size / c->chunk_bytes;
	if (c->max_chunks * c->per_chunk > INT32_MAX)
		return false;
	c->nheads = 1;
	while (c->nheads < c->max_chunks * c->per_chunk / 2)
		c->nheads *= 2;
	c->chunks = calloc(c->max_chunks, sizeof(void *));
	c->heads = malloc(c->nheads * sizeof(int32_t));
	if (c->chunks == NULL || c->heads == NULL)
	{
		free(c->chunks);
		free(c->heads);
		c->chunks = NULL;
		c->heads = NULL;
		return false;
	}
	memset(c->heads, 0xff, c->nheads * sizeof(int32_t));
	c->page_size = page_size;
	return true;
}

/* a page of a read that misses and may fill a slot (s->cache_slot, while planned) */
#define SLOT_WANTED (-2)

typedef struct plan_args
{
	gh_star    *s;
	const uint32_t *pages;
	const gh_pagename *names;
	size_t		npages;
	gh_pagecopy *copy;
	size_t		wanted[GH_MAX_DEVICES];	/* pages each device's cache may fill */
} plan_args;

/*
 * The lookups of device dev's pages of a read (s->cache_dev), in its own
 * cache: a copy of the name and LSN is read (copy[p].from, referenced and
 * taken by this read); a page that misses and may fill a slot is marked
 * SLOT_WANTED.  Touches only dev's cache and dev's pages' entries, so the
 * devices look up their pages at once; the counts are added at the end, so
 * that the devices' threads do not write to shared cache lines page by page.
 */
static void
lookup_pages(plan_args *a, int dev)
{
	gh_star    *s = a->s;
	struct gh_pagecache *pc = s->e->pagecache;
	pc_cache   *c = &pc->dev[dev];
	uint64_t	hits = 0,
				misses = 0,
				relhash = 0,
				relhash_of = UINT64_MAX,
				rel_of = 0;
	size_t		wanted = 0;
	int32_t		last = -1;		/* the entry of the device's previous page, if any */

	if (!ready(c, pc->size, s->spec.page_size))
		return;
	for (size_t p = 0; p < a->npages; p++)
	{
		const gh_pagename *n = &a->names[p];
		int32_t		i;

		if (s->cache_dev[p] != dev || n->lsn == 0)
			continue;
		if (n->rel != rel_of || (n->block >> 32) != relhash_of)
		{
			rel_of = n->rel;
			relhash_of = n->block >> 32;
			relhash = rel_hash(n->rel, n->block);
		}
		/* the next block's copy is most often in the next slot: filled by the same read */
		if (last >= 0 && (size_t) last + 1 < c->nslots && c->ent[last + 1].state != SLOT_FREE &&
			c->ent[last + 1].block == n->block && c->ent[last + 1].rel == n->rel)
			i = last + 1;
		else
			i = find(c, head_at(c, relhash, n->block), n->rel, n->block);
		last = i;
		if (i >= 0 && c->ent[i].state == SLOT_KEPT && c->ent[i].lsn == n->lsn)
		{
			if (!c->ent[i].ref)
				c->ent[i].ref = 1;
			c->ent[i].read_at = c->reads;
			hits++;
			a->copy[p].from = slot_address(c, i);
			continue;
		}
		misses++;
		if (a->pages[p] == GH_PAGE_CACHED_ONLY)
			continue;			/* nothing to fill it from */
		if (i >= 0 && (c->ent[i].state == SLOT_FILLING || c->ent[i].read_at == c->reads))
			continue;			/* a read not yet kept fills it, or this one reads it */
		s->cache_slot[p] = SLOT_WANTED;
		wanted++;
	}
	c->hits += hits;
	c->misses += misses;
	a->wanted[dev] = wanted;
}

static gh_status
lookup_on_device(gh_engine *e, int dev, void *arg)
{
	lookup_pages(arg, dev);
	return GH_OK;
}

/*
 * Slots for the pages that want them, on the calling thread: the caches
 * grow here (a device that has no room for a chunk is no failure).  The
 * copies the read takes were all referenced first, so none is replaced.
 */
static void
fill_slots(plan_args *a)
{
	gh_star    *s = a->s;
	gh_engine  *e = s->e;
	struct gh_pagecache *pc = e->pagecache;

	for (size_t p = 0; p < a->npages; p++)
	{
		const gh_pagename *n = &a->names[p];
		pc_cache   *c;
		size_t		head;
		int32_t		i;

		if (s->cache_slot[p] != SLOT_WANTED)
			continue;
		s->cache_slot[p] = -1;
		c = &pc->dev[s->cache_dev[p]];
		head = head_of(c, n->rel, n->block);
		i = find(c, head, n->rel, n->block);
		if (i >= 0 && (c->ent[i].state == SLOT_FILLING || c->ent[i].read_at == c->reads))
			continue;			/* the same name earlier in this read */
		if (i >= 0)
			release(c, i);		/* an older version: replaced */
		i = victim(e, c);
		if (i < 0)
			continue;
		c->ent[i].rel = n->rel;
		c->ent[i].block = n->block;
		c->ent[i].lsn = n->lsn;
		c->ent[i].owner = s;
		c->ent[i].state = SLOT_FILLING;
		c->ent[i].ref = 0;
		c->ent[i].read_at = c->reads;
		c->ent[i].next = c->heads[head];
		c->heads[head] = i;
		s->cache_slot[p] = i;
		s->cache_fills++;
		a->copy[p].to = slot_address(c, i);
	}
}

/*
 * Plan s's read of npages pages named names: copy[p] where page p is read
 * from and copied to (in the cache of the device that reads it),
 * s->cache_slot[p] the slot it fills (-1: none).  A page only the cache may
 * give (pages[p] GH_PAGE_CACHED_ONLY) is read from its copy or not at all:
 * it fills nothing.  The copies this read takes are not replaced by the
 * ones it fills.  False (copy untouched) if the read does not go through
 * the cache; GH_ERR_* only for want of host memory or threads.
 */
gh_status
gh_page_cache_plan(gh_star *s, const uint32_t *pages, const gh_pagename *names, size_t npages,
				   gh_pagecopy *copy, bool *planned)
{
	gh_engine  *e = s->e;
	struct gh_pagecache *pc = e->pagecache;
	plan_args	a = {.s = s, .pages = pages, .names = names, .npages = npages, .copy = copy};
	size_t		wanted = 0;
	gh_status	st;

	*planned = false;
	if (names == NULL || pc == NULL || pc->size == 0)
		return GH_OK;
	s->cache_slot = gh_star_buffer(s, &s->plan_buf, npages * (sizeof(int32_t) + 2), false);
	if (s->cache_slot == NULL)
		return e->status;
	s->cache_ok = (uint8_t *) (s->cache_slot + npages);
	s->cache_dev = s->cache_ok + npages;
	memset(s->cache_ok, 0, npages);
	s->cache_epoch = pc->epoch;
	s->cache_npages = npages;
	s->cache_fills = 0;
	memset(s->cache_slot, 0xff, npages * sizeof(int32_t));
	memset(copy, 0, npages * sizeof(gh_pagecopy));
	gh_page_devices(e, names, npages, s->cache_dev);
	for (int d = 0; d < e->opt.ndevices; d++)
		if (++pc->dev[d].reads == 0)
			pc->dev[d].reads = 1;
	st = gh_for_devices(e, UINT32_MAX, npages * s->spec.max_tuples, lookup_on_device, &a);
	if (st != GH_OK)
	{
		gh_page_cache_settle(s, NULL, false);
		return st;
	}
	for (int d = 0; d < e->opt.ndevices; d++)
		wanted += a.wanted[d];
	if (wanted > 0)
		fill_slots(&a);
	*planned = true;
	return GH_OK;
}

/*
 * s's pending read settled: the copies of the pages kept (s->cache_ok[p]
 * and not drop[p]) are kept, the others let go.  drop NULL: none dropped;
 * kept false: none kept (the read failed, or the star goes).
 */
void
gh_page_cache_settle(gh_star *s, const uint8_t *drop, bool kept)
{
	struct gh_pagecache *pc = s->e->pagecache;

	if (s->cache_slot == NULL)
		return;
	/* a read that fills no slot (every page a copy, or none to be had) has none to settle */
	for (size_t p = 0; pc != NULL && pc->epoch == s->cache_epoch && s->cache_fills > 0 &&
		 p < s->cache_npages; p++)
	{
		pc_cache   *c = &pc->dev[s->cache_dev[p]];
		int32_t		i = s->cache_slot[p];

		if (i < 0 || c->ent[i].state != SLOT_FILLING || c->ent[i].owner != s)
			continue;
		if (kept && s->cache_ok[p] && (drop == NULL || !drop[p]))
		{
			c->ent[i].state = SLOT_KEPT;
			c->ent[i].owner = NULL;
			c->ent[i].ref = 1;	/* just read: the clock passes it once before it may go */
			c->kept++;
		}
		else
			release(c, i);
	}
	/* the arrays stay the star's (plan_buf), for its next read */
	s->cache_slot = NULL;
	s->cache_ok = NULL;
	s->cache_dev = NULL;
}

void
gh_page_cache_close(gh_engine *e)
{
	if (e->pagecache == NULL)
		return;
	empty(e, e->pagecache);
	free(e->pagecache);
	e->pagecache = NULL;
}
