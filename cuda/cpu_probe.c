/*-------------------------------------------------------------------------
 *
 * cpu_probe.c
 *	  The CPU backend's partition tables and probes: the build, probe_*
 *	  and part_* callbacks of gh_cpu_ops.
 *
 * INTERFACE ROUTINES
 *		gh_cpu_build, gh_cpu_part_free, gh_cpu_part_distinct
 *		gh_cpu_probe_begin		count the matches of every probe element
 *		gh_cpu_probe_write		any range of the probe's pairs
 *		gh_cpu_probe_counts		per probe key match counts
 *		gh_cpu_probe_free
 *
 * A probe is two passes, as on the GPU.  The first finds, for every probe
 * element, its number of matches and where they start in the table's rows
 * array (both table kinds keep a key's matches contiguous), and takes an
 * exclusive prefix sum of the counts.  The pairs then have a fixed order --
 * probe elements in order, each element's matches in table order -- and
 * pair p belongs to the element whose prefix-sum interval holds p, found by
 * binary search.  So the engine can ask for any range of pairs, in chunks
 * of any size, and ranges never overlap.
 *
 * Probe elements are the probe keys in their given order (GH_JOIN_PROBE), or
 * in the CSR order of a HashGraph built over them (GH_JOIN_INTERSECT, see
 * cpu_hashgraph.c); a pair's outer value is always the probe key's index.
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_internal.h"

gh_status
gh_cpu_build(gh_engine *e, int dev, gh_kind kind, const uint64_t *keys,
			 const uint64_t *rows, size_t n, double load_factor, void **out)
{
	gh_cpu_part *t;
	gh_status	st;

	(void) dev;					/* simulated devices are labels only */
	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a table");
	t->kind = kind == GH_KIND_BCHT ? GH_KIND_BCHT : GH_KIND_HASHGRAPH;
	t->n = n;
	if (t->kind == GH_KIND_BCHT)
		st = gh_cpu_bcht_build(e, keys, rows, n, load_factor, &t->bc);
	else
		st = gh_cpu_hg_build(e, keys, rows, n, gh_cpu_hg_nbuckets(n), &t->hg);
	if (st != GH_OK)
	{
		free(t);
		return st;
	}
	t->bytes = t->kind == GH_KIND_BCHT ? gh_cpu_bcht_bytes(&t->bc, n) : gh_cpu_hg_bytes(&t->hg);
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
	gh_cpu_hg_free(&t->hg);
	gh_cpu_bcht_free(&t->bc);
	free(t);
}

size_t
gh_cpu_part_distinct(const void *part)
{
	const gh_cpu_part *t = part;

	return t->kind == GH_KIND_BCHT ? t->bc.ndistinct : 0;
}

/* The matches of key in t: their count, and the first one's position. */
static inline size_t
part_lookup(const gh_cpu_part *t, uint64_t key, size_t *first)
{
	if (t->kind == GH_KIND_BCHT)
		return gh_cpu_bcht_lookup(&t->bc, key, first);
	return gh_cpu_hg_lookup(&t->hg, key, first);
}

static inline const uint64_t *
part_rows(const gh_cpu_part *t)
{
	return t->kind == GH_KIND_BCHT ? t->bc.rows : t->hg.rows;
}

gh_status
gh_cpu_probe_begin(gh_engine *e, void *part, const uint64_t *keys, size_t n,
				   gh_join_method method, void **out, uint64_t *total)
{
	gh_cpu_part *t = part;
	gh_cpu_probe *p;
	bool		intersect;

	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory for a probe");
	p->t = t;
	p->n = n;
	p->first = malloc((n > 0 ? n : 1) * sizeof(uint64_t));
	p->offsets = malloc((n + 1) * sizeof(uint64_t));
	if (p->first == NULL || p->offsets == NULL)
	{
		gh_cpu_probe_free(e, p);
		return gh_fail(e, GH_ERR_HOST_NOMEM, "out of host memory probing %zu keys", n);
	}
	p->bytes = (2 * n + 1) * sizeof(uint64_t);
	gh_account(e, (long long) p->bytes);

	/*
	 * List intersection needs a HashGraph table.  Under AUTO it is used for
	 * probes that are large, absolutely and next to the table: its probe
	 * HashGraph has the table's bucket count, and its merge reads the whole
	 * table.  (One core, 2^22 random 64-bit keys, count + write: 2^22 probe
	 * keys 713 ms by lookups, 578 ms by intersection; 2^16 probe keys 14 ms
	 * by lookups, 72 ms by intersection.)
	 */
	intersect = t->kind == GH_KIND_HASHGRAPH &&
		(method == GH_JOIN_INTERSECT ||
		 (method == GH_JOIN_AUTO && n >= GH_CPU_INTERSECT_MIN && n >= t->n / 4));
	if (intersect)
	{
		gh_status	st = gh_cpu_hg_intersect(e, &t->hg, keys, n, p);

		if (st != GH_OK)
		{
			gh_cpu_probe_free(e, p);
			return st;
		}
		p->bytes += n * sizeof(uint64_t);
		gh_account(e, (long long) (n * sizeof(uint64_t)));
	}
	else
	{
		for (size_t j = 0; j < n; j++)
		{
			size_t		first;

			p->offsets[j + 1] = part_lookup(t, keys[j], &first);
			p->first[j] = first;
		}
	}
	p->offsets[0] = 0;
	for (size_t j = 0; j < n; j++)
		p->offsets[j + 1] += p->offsets[j];
	*total = p->offsets[n];
	*out = p;
	return GH_OK;
}

gh_status
gh_cpu_probe_write(gh_engine *e, void *probe, uint64_t first, size_t count,
				   gh_pair *out)
{
	gh_cpu_probe *p = probe;
	const uint64_t *rows = part_rows(p->t);
	size_t		lo = 0,
				hi = p->n,
				written = 0;

	if (count == 0)
		return GH_OK;
	if (first > p->offsets[p->n] || count > p->offsets[p->n] - first)
		return gh_fail(e, GH_ERR_INTERNAL,
					   "pairs [%llu, %llu) asked of a probe with %llu",
					   (unsigned long long) first,
					   (unsigned long long) (first + count),
					   (unsigned long long) p->offsets[p->n]);
	/* the element whose interval [offsets[j], offsets[j + 1]) holds first */
	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (p->offsets[mid + 1] <= first)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo; written < count; j++)
	{
		uint64_t	outer = p->outer ? p->outer[j] : (uint64_t) j;
		uint64_t	skip = first + written - p->offsets[j];
		uint64_t	have = p->offsets[j + 1] - p->offsets[j] - skip;
		size_t		m = have < count - written ? (size_t) have : count - written;
		const uint64_t *src = rows + p->first[j] + skip;

		for (size_t k = 0; k < m; k++)
		{
			out[written + k].outer = outer;
			out[written + k].inner = src[k];
		}
		written += m;
	}
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

		counts[p->outer ? p->outer[j] : j] = c > UINT32_MAX ? UINT32_MAX : (uint32_t) c;
	}
	return GH_OK;
}

void
gh_cpu_probe_free(gh_engine *e, void *probe)
{
	gh_cpu_probe *p = probe;

	if (p == NULL)
		return;
	gh_account(e, -(long long) p->bytes);
	free(p->outer);
	free(p->first);
	free(p->offsets);
	free(p);
}
