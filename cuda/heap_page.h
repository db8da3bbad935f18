/*-------------------------------------------------------------------------
 *
 * heap_page.h
 *	  Reading the rows of a PostgreSQL heap page: the line pointers, the
 *	  tuple headers and the columns, the same code on the host (C) and on
 *	  the device (CUDA).
 *
 * The engine includes no PostgreSQL header, so the layout is spelled out
 * here; src/page_scan.c checks every constant against PostgreSQL's own
 * definitions at compile time.  A page is:
 *
 *	header (24 bytes; pd_lower at 12: the end of the line pointers)
 *	line pointers (4 bytes each: lp_off 15 bits, lp_flags 2, lp_len 15)
 *	... tuples: header (t_infomask2 at 18, t_infomask at 20, t_hoff at 22,
 *	    the NULL bitmap from 23 when t_infomask has HEAP_HASNULL), then the
 *	    columns from t_hoff, each aligned (relative to the tuple, whose start
 *	    is maximally aligned) to its attalign; a varlena (attlen -1) only
 *	    where its first byte is padding, for a short one (1-byte header) is
 *	    never aligned: PostgreSQL's att_align_pointer
 *
 * Nothing here trusts the page: every offset and length is checked against
 * the page and the tuple before it is followed, and a page that fails a
 * check is reported as malformed (its rows are then read by PostgreSQL's
 * own code, which reports real corruption as PostgreSQL does).  Visibility
 * is the caller's business: these functions return every LP_NORMAL tuple of
 * an all-visible page; gh_tuple_visibility tells what a tuple's hint bits
 * alone say of it, and gh_page_tuple asks it of the tuples of other pages
 * where the caller gives a horizon (gh_pagespec.vis_horizon).
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_HEAP_PAGE_H
#define GPUHASH_HEAP_PAGE_H

#include <stdint.h>
#include <string.h>

#include "engine.h"

#ifdef __CUDACC__
#define GH_HOSTDEV __host__ __device__
#define GH_FORCEINLINE __forceinline__
#else
#define GH_HOSTDEV
#define GH_FORCEINLINE inline
#endif

#define GH_PAGE_HEADER_SIZE 24
#define GH_PAGE_LOWER_OFF 12
#define GH_ITEMID_SIZE 4
#define GH_LP_NORMAL 1
#define GH_TUP_INFOMASK2_OFF 18
#define GH_TUP_INFOMASK_OFF 20
#define GH_TUP_HOFF_OFF 22
#define GH_TUP_BITS_OFF 23
#define GH_TUP_HASNULL 0x0001
#define GH_TUP_NATTS_MASK 0x07FF
/* visibility: pd_flags, the tuple's xmin and xmax, t_infomask's hint bits */
#define GH_PAGE_FLAGS_OFF 10
#define GH_PD_ALL_VISIBLE 0x0004
#define GH_TUP_XMIN_OFF 0
#define GH_TUP_XMAX_OFF 4
#define GH_TUP_XMAX_KEYSHR_LOCK 0x0010
#define GH_TUP_XMAX_EXCL_LOCK 0x0040
#define GH_TUP_XMAX_LOCK_ONLY 0x0080
#define GH_TUP_LOCK_MASK 0x0050
#define GH_TUP_XMIN_COMMITTED 0x0100
#define GH_TUP_XMIN_INVALID 0x0200
#define GH_TUP_XMIN_FROZEN 0x0300
#define GH_TUP_XMAX_COMMITTED 0x0400
#define GH_TUP_XMAX_INVALID 0x0800
#define GH_TUP_XMAX_IS_MULTI 0x1000

GH_HOSTDEV static inline uint16_t
gh_page_u16(const uint8_t *p)
{
	return (uint16_t) (p[0] | (p[1] << 8));
}

GH_HOSTDEV static inline uint32_t
gh_page_u32(const uint8_t *p)
{
	return (uint32_t) p[0] | ((uint32_t) p[1] << 8) |
		((uint32_t) p[2] << 16) | ((uint32_t) p[3] << 24);
}

/* The number of line pointers of a page, or -1 if its header is malformed. */
GH_HOSTDEV static inline int
gh_page_items(const uint8_t *page, const gh_pagespec *spec)
{
	uint32_t	lower = gh_page_u16(page + GH_PAGE_LOWER_OFF);
	uint32_t	n;

	if (lower < GH_PAGE_HEADER_SIZE || lower > spec->page_size ||
		(lower - GH_PAGE_HEADER_SIZE) % GH_ITEMID_SIZE != 0)
		return -1;
	n = (lower - GH_PAGE_HEADER_SIZE) / GH_ITEMID_SIZE;
	return n > spec->max_tuples ? -1 : (int) n;
}

/* Does the page's header say every tuple on it is visible to everyone? */
GH_HOSTDEV static inline bool
gh_page_all_visible(const uint8_t *page)
{
	return (gh_page_u16(page + GH_PAGE_FLAGS_OFF) & GH_PD_ALL_VISIBLE) != 0;
}

/* TransactionIdPrecedes: modulo 2^32, the special ids below the normal ones */
GH_HOSTDEV static inline bool
gh_xid_precedes(uint32_t a, uint32_t b)
{
	if (a < 3 || b < 3)
		return a < b;
	return (int32_t) (a - b) < 0;
}

/*
 * What the hint bits of a tuple (tup: its header) say of it to an MVCC
 * snapshot whose xmin is horizon: 1 visible, 0 invisible, -1 they cannot
 * tell (the snapshot's in-progress list, the commit log or the command id
 * would).  The cases HeapTupleSatisfiesMVCC decides from the header alone:
 * the inserter is frozen, or committed before every transaction the
 * snapshot may see as in progress (xmin precedes its xmin), or aborted;
 * the deleter is none, a locker only, or committed before the horizon.
 * Hint bits are set without the page's exclusive lock, but each only ever
 * from unknown to known, and the 16-bit t_infomask is read whole.
 */
GH_HOSTDEV static inline int
gh_tuple_visibility(const uint8_t *tup, uint32_t horizon)
{
	uint32_t	m = gh_page_u16(tup + GH_TUP_INFOMASK_OFF);

	if (!(m & GH_TUP_XMIN_COMMITTED))
		return (m & GH_TUP_XMIN_INVALID) ? 0 : -1;
	if ((m & GH_TUP_XMIN_FROZEN) != GH_TUP_XMIN_FROZEN &&
		!gh_xid_precedes(gh_page_u32(tup + GH_TUP_XMIN_OFF), horizon))
		return -1;
	if ((m & GH_TUP_XMAX_INVALID) || (m & GH_TUP_XMAX_LOCK_ONLY) ||
		(m & (GH_TUP_XMAX_IS_MULTI | GH_TUP_LOCK_MASK)) == GH_TUP_XMAX_EXCL_LOCK)
		return 1;
	if (!(m & GH_TUP_XMAX_IS_MULTI) && (m & GH_TUP_XMAX_COMMITTED) &&
		gh_xid_precedes(gh_page_u32(tup + GH_TUP_XMAX_OFF), horizon))
		return 0;
	return -1;
}

/* varlena headers (postgres.h's VARATT_* on a little-endian machine) */
#define GH_VARTAG_ONDISK 18

/*
 * The size of the varlena at p, at most room bytes available: 0 if it is
 * malformed.  On disk a varlena has a 1-byte header (short), a 4-byte one
 * (plain or compressed), or is an external TOAST pointer (1 + 1 + 16).
 */
GH_HOSTDEV static GH_FORCEINLINE uint32_t
gh_varlena_size(const uint8_t *p, uint32_t room)
{
	uint32_t	size;

	if (room < 1)
		return 0;
	if (p[0] == 0x01)
	{
		if (room < 2 || p[1] != GH_VARTAG_ONDISK)
			return 0;
		size = 2 + 16;
	}
	else if (p[0] & 0x01)
		size = p[0] >> 1;
	else
	{
		if (room < 4)
			return 0;
		size = (gh_page_u32(p) >> 2) & 0x3FFFFFFF;
		if (size < 4)
			return 0;
	}
	return size <= room && size >= 1 ? size : 0;
}

/*
 * Place a non-NULL attribute of attlen alen and alignment al at pos of a
 * tuple of len bytes, as heap_deform_tuple does (a varlena aligned only
 * where its first byte is padding): its start << 32 | its size, or 0 if it
 * does not fit the tuple.  (Two results in one: on the device a variable
 * whose address is taken lives in local memory.)
 */
GH_HOSTDEV static GH_FORCEINLINE uint64_t
gh_page_att_place(const uint8_t *tup, uint32_t len, int alen, uint32_t al, uint32_t pos)
{
	uint32_t	size;

	if (alen > 0 || pos >= len || tup[pos] == 0)
		pos = (pos + al - 1) & ~(al - 1);
	if (alen > 0)
		size = (uint32_t) alen;
	else if (pos >= len || (size = gh_varlena_size(tup + pos, len - pos)) == 0)
		return 0;
	if (pos + size > len)
		return 0;
	return (uint64_t) pos << 32 | size;
}

/*
 * The columns of line pointer i (0-based) of a page into vals[]/nulls[]
 * (spec->nout entries): 1 if it is a row, 0 if the line pointer is not
 * LP_NORMAL, -1 if the tuple is malformed.  A value is what PostgreSQL's
 * fetch_att makes of it: 1-, 2- and 4-byte values sign-extended; of a
 * varlena column (attlen -1), its offset in the page (the caller makes it
 * a pointer).  Where spec->vis_horizon is set and the page is not
 * all-visible, the tuple's hint bits decide (gh_tuple_visibility): 0 for a
 * tuple invisible to the snapshot, and -1 for one they cannot judge, so
 * that the page is read some other way, as a malformed one is.
 */
GH_HOSTDEV static inline int
gh_page_tuple(const uint8_t *page, const gh_pagespec *spec, int i,
			  uint64_t *vals, uint8_t *nulls)
{
	uint32_t	lp = gh_page_u32(page + GH_PAGE_HEADER_SIZE + GH_ITEMID_SIZE * i);
	uint32_t	off = lp & 0x7FFF;
	uint32_t	flags = (lp >> 15) & 3;
	uint32_t	len = lp >> 17;
	const uint8_t *tup;
	uint32_t	natts,
				hoff,
				pos;
	int			hasnull;

	if (flags != GH_LP_NORMAL)
		return 0;
	if (off < GH_PAGE_HEADER_SIZE || len < GH_TUP_BITS_OFF || off + len > spec->page_size ||
		off % 8 != 0)
		return -1;
	tup = page + off;
	natts = gh_page_u16(tup + GH_TUP_INFOMASK2_OFF) & GH_TUP_NATTS_MASK;
	hasnull = (gh_page_u16(tup + GH_TUP_INFOMASK_OFF) & GH_TUP_HASNULL) != 0;
	hoff = tup[GH_TUP_HOFF_OFF];
	if (hoff < GH_TUP_BITS_OFF || hoff > len || hoff % 8 != 0 ||
		(hasnull && GH_TUP_BITS_OFF + (natts + 7) / 8 > hoff))
		return -1;
	if (spec->vis_horizon != 0 && !gh_page_all_visible(page))
	{
		int			vis = gh_tuple_visibility(tup, spec->vis_horizon);

		if (vis <= 0)
			return vis;
	}
	pos = hoff;
	for (int a = 0; a < spec->natts; a++)
	{
		int			o = spec->out_of[a];
		int			alen = spec->attlen[a];
		uint32_t	size = 0;
		bool		isnull;

		isnull = (uint32_t) a >= natts ||
			(hasnull && !(tup[GH_TUP_BITS_OFF + a / 8] & (1 << (a % 8))));
		if (!isnull)
		{
			uint64_t	placed = gh_page_att_place(tup, len, alen, spec->attalign[a], pos);

			if (placed == 0)
				return -1;
			pos = (uint32_t) (placed >> 32);
			size = (uint32_t) placed;
		}
		if (o >= 0)
		{
			uint64_t	v = 0;

			nulls[o] = isnull;
			if (!isnull)
			{
				const uint8_t *p = tup + pos;

				if (alen < 0)
					v = off + pos;
				else if (alen == 1)
					v = (uint64_t) (int64_t) (int8_t) p[0];
				else if (alen == 2)
					v = (uint64_t) (int64_t) (int16_t) gh_page_u16(p);
				else if (alen == 4)
					v = (uint64_t) (int64_t) (int32_t) gh_page_u32(p);
				else
					v = (uint64_t) gh_page_u32(p) | ((uint64_t) gh_page_u32(p + 4) << 32);
			}
			vals[o] = v;
		}
		pos += size;
	}
	return 1;
}

/* v modulo mod in width bytes, as int2mod, int4mod and int8mod compute it */
GH_HOSTDEV static inline uint64_t
gh_page_mod(uint64_t v, int64_t mod, int width)
{
	if (mod == 0)
		return v;
	if (mod == -1)
		return 0;				/* without the overflow of MIN % -1 */
	if (width == 2)
		return (uint64_t) (int64_t) (int16_t) ((int16_t) v % (int16_t) mod);
	if (width == 4)
		return (uint64_t) (int64_t) ((int32_t) v % (int32_t) mod);
	return (uint64_t) ((int64_t) v % mod);
}

/*
 * A row's packed grouping key and NULL pattern (gh_pageenc) from its
 * output columns' values and NULL flags.
 */
GH_HOSTDEV static inline uint64_t
gh_page_key(const gh_pageenc *enc, const uint64_t *vals, const uint8_t *nulls,
			uint8_t *pattern)
{
	uint64_t	key = 0;
	uint8_t		pat = 0;

	for (int k = 0; k < enc->nkeys; k++)
	{
		const gh_pagekey *pk = &enc->key[k];
		uint64_t	v;

		if (nulls[pk->col])
		{
			if (pk->null_in_key)
				key |= UINT64_C(1) << pk->nullbit;
			else
				pat |= (uint8_t) (1u << pk->bit);
			continue;
		}
		v = gh_page_mod(vals[pk->col], pk->mod, pk->width);
		if (pk->width < 8)
			v &= (UINT64_C(1) << (8 * pk->width)) - 1;
		key |= (v & pk->mask) << pk->shift;
	}
	*pattern = pat;
	return key;
}

/* A row's join key (gh_pageenc's jkey): false if a column of it is NULL. */
GH_HOSTDEV static inline bool
gh_page_jkey(const gh_pageenc *enc, const uint64_t *vals, const uint8_t *nulls, uint64_t *jkey)
{
	uint64_t	acc = 0;

	for (int k = 0; k < enc->njkeys; k++)
	{
		const gh_pagejkey *pj = &enc->jkey[k];
		uint64_t	v = vals[pj->col];

		if (nulls[pj->col])
			return false;
		if (pj->conv == GH_PAGEVAL_UNSIGNED32)
			v = (uint32_t) v;
		if (pj->width < 64)
			v &= (UINT64_C(1) << pj->width) - 1;
		acc |= v << pj->shift;
	}
	*jkey = acc;
	return true;
}

/* Aggregate column pv's value (0 for a NULL) and NULL flag of a row. */
GH_HOSTDEV static inline uint64_t
gh_page_value(const gh_pageval *pv, const uint64_t *vals, const uint8_t *nulls,
			  uint8_t *isnull)
{
	*isnull = pv->col >= 0 && nulls[pv->col];
	if (*isnull || pv->col < 0 || pv->conv == GH_PAGEVAL_ZERO)
		return 0;
	if (pv->conv == GH_PAGEVAL_UNSIGNED32)
		return (uint32_t) vals[pv->col];
	return vals[pv->col];
}

/*
 * All rows of one page into rows [at, ...) of out's arrays: the number of
 * rows, or -1 (nothing usable written) if the page is malformed.
 */
static inline long
gh_page_extract(const uint8_t *page, const gh_pagespec *spec, gh_pagerows *out, size_t at)
{
	int			items = gh_page_items(page, spec);
	long		rows = 0;

	if (items < 0)
		return -1;
	for (int i = 0; i < items; i++)
	{
		uint64_t	vals[GH_PAGE_MAX_OUT];
		uint8_t		nulls[GH_PAGE_MAX_OUT];
		int			r = gh_page_tuple(page, spec, i, vals, nulls);

		if (r < 0)
			return -1;
		if (r == 0)
			continue;
		for (int o = 0; o < spec->nout; o++)
		{
			out->values[o][at + rows] = vals[o];
			out->nulls[o][at + rows] = nulls[o];
		}
		rows++;
	}
	return rows;
}

#endif							/* GPUHASH_HEAP_PAGE_H */
