/*-------------------------------------------------------------------------
 *
 * gen.c
 *	  Random numbers and key distributions for the engine unit tests.
 *
 * A distribution is a domain of ranks and a map from rank to key.  Ranks 0
 * and 1 are the extreme keys 2^64-1 and 0 (2^64-1 is also a BCHT's
 * empty-slot marker, and the hottest Zipf key); other ranks map through a
 * bijective mixer with a per-dataset salt, so distinct ranks are distinct
 * keys.  Build keys draw ranks from the distribution; probe keys draw
 * ranks uniformly from a range a quarter larger than the domain, so about
 * a fifth of them are absent and each probe matches n / domain build rows
 * on average, whatever the skew -- the output stays proportional to the
 * input.
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>

#include "engine_test.h"

/* Zipf exponent: the hottest of 65537 ranks holds about 18% of the rows. */
#define ZIPF_S 1.2

/* splitmix64 */
uint64_t
rng_next(rng *r)
{
	uint64_t	z = (r->s += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

uint64_t
rng_below(rng *r, uint64_t n)
{
	return (uint64_t) (((unsigned __int128) rng_next(r) * n) >> 64);
}

double
rng_unit(rng *r)
{
	return (double) (rng_next(r) >> 11) / 9007199254740992.0;
}

/* A bijection on 64-bit words (not the engine's mixer). */
static uint64_t
mix(uint64_t x)
{
	x ^= x >> 31;
	x *= UINT64_C(0x7fb5d329728ea185);
	x ^= x >> 27;
	x *= UINT64_C(0x81dadef4bc2dd44d);
	x ^= x >> 33;
	return x;
}

const char *
dist_name(dist_kind kind)
{
	switch (kind)
	{
		case DIST_UNIQUE:
			return "unique keys";
		case DIST_DUPS:
			return "heavy duplicates";
		case DIST_ZIPF:
			return "zipf keys";
		case DIST_EQUAL:
			return "all keys equal";
		case DIST_EQUAL_MAX:
			return "all keys 2^64-1";
	}
	return "?";
}

void
dist_init(dist *d, dist_kind kind, size_t n, rng *r)
{
	d->kind = kind;
	d->salt = rng_next(r);
	d->zipf_cdf = NULL;
	switch (kind)
	{
		case DIST_UNIQUE:
		case DIST_ZIPF:
			d->domain = n > 0 ? n : 1;
			break;
		case DIST_DUPS:
			d->domain = n / 8 + 1;
			break;
		case DIST_EQUAL:
		case DIST_EQUAL_MAX:
			d->domain = 1;
			break;
	}
	if (kind == DIST_ZIPF)
	{
		double		sum = 0;

		d->zipf_cdf = xmalloc(d->domain * sizeof(double));
		for (size_t k = 0; k < d->domain; k++)
		{
			sum += pow((double) (k + 1), -ZIPF_S);
			d->zipf_cdf[k] = sum;
		}
		for (size_t k = 0; k < d->domain; k++)
			d->zipf_cdf[k] /= sum;
	}
}

void
dist_free(dist *d)
{
	free(d->zipf_cdf);
	d->zipf_cdf = NULL;
}

uint64_t
dist_key(const dist *d, uint64_t rank)
{
	if (d->kind == DIST_EQUAL)
		return mix(rank ^ d->salt);
	if (rank == 0)
		return UINT64_MAX;
	if (rank == 1)
		return 0;
	return mix(rank ^ d->salt);
}

static uint64_t
zipf_rank(const dist *d, rng *r)
{
	double		u = rng_unit(r);
	size_t		lo = 0,
				hi = d->domain - 1;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (d->zipf_cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

double
gen_float_with_specials(rng *r, uint64_t pick, unsigned period, double scale)
{
	switch (pick % period)
	{
		case 0:
			return NAN;
		case 1:
			return -0.0;
		case 2:
			return 0.0;
		case 3:
			return INFINITY;
		case 4:
			return -INFINITY;
		default:
			return (rng_unit(r) - 0.5) * scale;
	}
}

uint64_t *
gen_permutation(size_t n, rng *r)
{
	uint64_t   *p = xmalloc((n > 0 ? n : 1) * sizeof(uint64_t));

	for (size_t i = 0; i < n; i++)
		p[i] = i;
	for (size_t i = n; i > 1; i--)
	{
		size_t		j = rng_below(r, i);
		uint64_t	t = p[i - 1];

		p[i - 1] = p[j];
		p[j] = t;
	}
	return p;
}

uint64_t *
gen_build_keys(const dist *d, size_t n, rng *r)
{
	uint64_t   *keys;

	if (d->kind == DIST_UNIQUE)
	{
		keys = gen_permutation(n, r);
		for (size_t i = 0; i < n; i++)
			keys[i] = dist_key(d, keys[i]);
		return keys;
	}
	keys = xmalloc((n > 0 ? n : 1) * sizeof(uint64_t));
	for (size_t i = 0; i < n; i++)
	{
		uint64_t	rank;

		switch (d->kind)
		{
			case DIST_DUPS:
				rank = rng_below(r, d->domain);
				break;
			case DIST_ZIPF:
				rank = zipf_rank(d, r);
				break;
			default:
				rank = 0;
				break;
		}
		keys[i] = dist_key(d, rank);
	}
	return keys;
}

uint64_t *
gen_probe_keys(const dist *d, size_t n, size_t m, uint64_t max_pairs, rng *r)
{
	uint64_t   *keys = xmalloc((m > 0 ? m : 1) * sizeof(uint64_t));
	uint64_t	range = d->domain + d->domain / 4 + 2;

	if (d->kind == DIST_EQUAL || d->kind == DIST_EQUAL_MAX)
	{
		/* every hit is n pairs: a few hits among absent keys */
		size_t		hits = n > 0 ? (size_t) (max_pairs / n) : m;

		if (hits < 1)
			hits = 1;
		if (hits > m)
			hits = m;
		for (size_t i = 0; i < m; i++)
			keys[i] = dist_key(d, 2 + rng_below(r, m + 16));
		for (size_t h = 0; h < hits; h++)
			keys[rng_below(r, m)] = dist_key(d, 0);
		return keys;
	}
	for (size_t i = 0; i < m; i++)
		keys[i] = dist_key(d, rng_below(r, range));
	/* the extreme keys are always probed when there is room */
	if (m >= 4)
	{
		keys[m - 1] = 0;
		keys[m - 2] = UINT64_MAX;
	}
	return keys;
}
