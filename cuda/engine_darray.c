/*-------------------------------------------------------------------------
 *
 * engine_darray.c
 *	  Device arrays (gh_darray, engine.h): arrays the engine keeps while the
 *	  caller appends to them, in device memory where it can and in host
 *	  memory where it cannot; and host copies of device-resident inputs for
 *	  an operation that must read them on the host.
 *
 * INTERFACE ROUTINES
 *		gh_darray_create, gh_darray_append, gh_darray_free	the arrays
 *		gh_darray_append_engine			appends from the engine's memory (engine_internal.h)
 *		gh_darray_data, gh_darray_bytes, gh_darray_on_device
 *		gh_darray_pin, gh_darray_unpin	host arrays, pinned for one copy
 *		gh_darray_to_host, gh_darray_truncate	the caller's CPU fallback
 *		gh_darrays_close				what gh_close leaves
 *		gh_debug_darray_budget			tests: more (or less) on the device
 *		gh_host_inputs_make, gh_host_inputs_free	(engine_internal.h)
 *
 * An array lives on device index 0 of an engine of one device while all the
 * engine's device arrays stay within an eighth of the memory limit; an
 * append past that, or one the device has no room for, first moves it to
 * host memory, an anonymous mapping grown by mremap (huge pages from 16 MB).
 * See cuda/README, "Device arrays".
 *
 *-------------------------------------------------------------------------
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE				/* mremap */
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "engine_internal.h"

#define HOST_PAGE ((size_t) 4096)
#define HOST_HUGE_PAGE ((size_t) 2 * 1024 * 1024)
#define HOST_HUGE_FROM ((size_t) 16 * 1024 * 1024)
#define FIRST_CAPACITY ((size_t) 1 << 20)

struct gh_darray
{
	gh_engine  *e;
	bool		device;			/* in device memory (else a host mapping) */
	bool		pinned;			/* a host mapping, pinned (gh_darray_pin) */
	char	   *p;
	size_t		bytes;			/* filled */
	size_t		cap;			/* allocated */
	struct gh_darray *next;		/* the engine's list */
};

/* A host mapping's size for bytes: whole pages, whole huge pages from 16 MB. */
static size_t
host_size(size_t bytes)
{
	size_t		unit = bytes >= HOST_HUGE_FROM ? HOST_HUGE_PAGE : HOST_PAGE;

	return (bytes + unit - 1) / unit * unit;
}

/* grow (or make, p NULL) a host mapping of old bytes to at least bytes */
static gh_status
host_grow(gh_engine *e, char **p, size_t old, size_t bytes)
{
	size_t		from = old ? host_size(old) : 0;
	size_t		to = host_size(bytes);
	void	   *q;

	if (*p != NULL && to == from)
		return GH_OK;
	if (*p == NULL)
		q = mmap(NULL, to, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
	else
		q = mremap(*p, from, to, MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return gh_fail(e, GH_ERR_HOST_NOMEM, "could not map %zu bytes of host memory for an array",
					   to);
#ifdef MADV_HUGEPAGE
	if (to >= HOST_HUGE_FROM)
		(void) madvise(q, to, MADV_HUGEPAGE);
#endif
	*p = q;
	return GH_OK;
}

static void
host_free(char *p, size_t cap)
{
	if (p != NULL)
		(void) munmap(p, host_size(cap));
}

gh_status
gh_darray_create(gh_engine *e, bool on_device, gh_darray **out)
{
	gh_darray  *a;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (out == NULL)
		return gh_fail(e, GH_ERR_INVALID, "invalid arguments to gh_darray_create");
	*out = NULL;
	a = gh_calloc(e, 1, sizeof(gh_darray));
	if (a == NULL)
		return e->status;
	a->e = e;
	a->device = on_device && e->ops->darray_alloc != NULL && e->opt.ndevices == 1;
	a->next = e->darrays;
	e->darrays = a;
	*out = a;
	return GH_OK;
}

/* Move a device array to host memory (its data copied back). */
static gh_status
to_host(gh_darray *a)
{
	gh_engine  *e = a->e;
	char	   *h = NULL;

	if (!a->device)
		return GH_OK;
	if (a->cap > 0)
	{
		GH_TRY_STATUS(host_grow(e, &h, 0, a->cap));
		if (a->bytes > 0 && e->ops->darray_copy(e, h, a->p, a->bytes) != GH_OK)
		{
			host_free(h, a->cap);
			return e->status;
		}
		e->ops->darray_free(e, 0, a->p, a->cap);
		e->darray_device_bytes -= a->cap;
	}
	a->p = h;
	a->device = false;
	return GH_OK;
}

/* Room for bytes more on the device: false when the array must go to host memory. */
static bool
device_room(const gh_darray *a, size_t cap)
{
	size_t		budget = a->e->darray_budget ? a->e->darray_budget : a->e->opt.memory_limit / 8;

	return a->e->darray_device_bytes - a->cap + cap <= budget;
}

/* Give a device array at least cap bytes: a new allocation, the data copied. */
static gh_status
device_grow(gh_darray *a, size_t cap)
{
	gh_engine  *e = a->e;
	void	   *q = NULL;

	if (e->ops->darray_alloc(e, 0, &q, cap) != GH_OK)
		return e->status;
	if (a->bytes > 0 && e->ops->darray_copy(e, q, a->p, a->bytes) != GH_OK)
	{
		e->ops->darray_free(e, 0, q, cap);
		return e->status;
	}
	if (a->p != NULL)
		e->ops->darray_free(e, 0, a->p, a->cap);
	e->darray_device_bytes += cap - a->cap;
	a->p = q;
	a->cap = cap;
	return GH_OK;
}

/*
 * Append bytes from src (NULL: zeros): host memory, or (engine_src) memory
 * of the engine's own device arrays, which only the backend's copy reads.
 */
static gh_status
append(gh_darray *a, const void *src, size_t bytes, bool engine_src)
{
	gh_engine  *e;
	size_t		need;

	if (a == NULL)
		return GH_ERR_INVALID;
	e = a->e;
	if (bytes == 0)
		return GH_OK;
	need = a->bytes + bytes;
	gh_darray_unpin(a);
	if (need > a->cap)
	{
		size_t		cap = a->cap ? a->cap : FIRST_CAPACITY;

		while (cap < need)
			cap *= 2;
		if (a->device && !device_room(a, cap))
			GH_TRY_STATUS(to_host(a));
		if (a->device && device_grow(a, cap) != GH_OK)
		{
			/* no room on the device after all: on in host memory */
			if (e->status != GH_ERR_DEVICE_NOMEM)
				return e->status;
			e->status = GH_OK;
			GH_TRY_STATUS(to_host(a));
		}
		if (!a->device)
		{
			GH_TRY_STATUS(host_grow(e, &a->p, a->cap, cap));
			a->cap = cap;
		}
	}
	if (a->device && gh_injected_failure(e, 0))
		return e->inject_status;
	if (a->device)
		GH_TRY_STATUS(e->ops->darray_copy(e, a->p + a->bytes, src, bytes));
	else if (src != NULL && engine_src)
		GH_TRY_STATUS(e->ops->darray_copy(e, a->p + a->bytes, src, bytes));
	else if (src != NULL)
	{
		/* one process may take every append of a query: copy on several threads */
		gh_copy		piece = {a->p + a->bytes, src, bytes};

		gh_copy_host(&piece, 1);
	}
	else
		memset(a->p + a->bytes, 0, bytes);
	a->bytes = need;
	return GH_OK;
}

gh_status
gh_darray_to_host(gh_darray *a)
{
	if (a == NULL)
		return GH_ERR_INVALID;
	gh_darray_unpin(a);
	return to_host(a);
}

void
gh_darray_truncate(gh_darray *a, size_t bytes)
{
	if (a != NULL && bytes < a->bytes)
		a->bytes = bytes;
}

gh_status
gh_darray_append(gh_darray *a, const void *src, size_t bytes)
{
	return append(a, src, bytes, false);
}

gh_status
gh_darray_append_engine(gh_darray *a, const void *src, size_t bytes)
{
	return append(a, src, bytes, true);
}

const void *
gh_darray_data(const gh_darray *a)
{
	return a ? a->p : NULL;
}

size_t
gh_darray_bytes(const gh_darray *a)
{
	return a ? a->bytes : 0;
}

bool
gh_darray_on_device(const gh_darray *a)
{
	return a != NULL && a->device;
}

bool
gh_darray_pin(gh_darray *a)
{
	if (a == NULL || a->device || a->pinned || a->bytes == 0)
		return false;
	a->pinned = gh_pin_host(a->e, a->p, host_size(a->bytes));
	return a->pinned;
}

void
gh_darray_unpin(gh_darray *a)
{
	if (a != NULL && a->pinned)
		gh_unpin_host(a->e, a->p);
	if (a != NULL)
		a->pinned = false;
}

/* Free a's memory, leaving it out of the engine's list (the caller's job). */
static void
release(gh_darray *a)
{
	gh_engine  *e = a->e;

	gh_darray_unpin(a);
	if (a->device && a->p != NULL)
	{
		e->ops->darray_free(e, 0, a->p, a->cap);
		e->darray_device_bytes -= a->cap;
	}
	else
		host_free(a->p, a->cap);
}

void
gh_darray_free(gh_darray *a)
{
	gh_darray **l;

	if (a == NULL)
		return;
	for (l = &a->e->darrays; *l; l = &(*l)->next)
		if (*l == a)
		{
			*l = a->next;
			break;
		}
	release(a);
	free(a);
}

void
gh_darrays_close(gh_engine *e)
{
	while (e->darrays)
	{
		gh_darray  *a = e->darrays;

		e->darrays = a->next;
		release(a);
		free(a);
	}
}

void
gh_debug_darray_budget(gh_engine *e, size_t bytes)
{
	if (e != NULL)
		e->darray_budget = bytes;
}

/* ---- device-resident inputs read on the host ---- */

/* the device array holding p, or NULL */
static const gh_darray *
device_array_of(const gh_engine *e, const void *p)
{
	for (const gh_darray *a = e->darrays; a && p; a = a->next)
		if (a->device && (const char *) p >= a->p && (const char *) p < a->p + a->cap)
			return a;
	return NULL;
}

/* *p, if in device memory, replaced by a host copy of its bytes recorded in h */
static gh_status
host_copy(gh_engine *e, const void **p, size_t bytes, gh_host_inputs *h)
{
	void	   *copy;

	if (device_array_of(e, *p) == NULL || bytes == 0)
		return GH_OK;
	copy = gh_malloc(e, bytes);
	if (copy == NULL)
		return e->status;
	h->copies[h->ncopies++] = copy;
	if (e->ops->darray_copy(e, copy, *p, bytes) != GH_OK)
		return e->status;
	*p = copy;
	return GH_OK;
}

gh_status
gh_host_inputs_make(gh_engine *e, const uint64_t **keys, size_t n, const gh_aggcol **cols,
					int ncols, gh_host_inputs *h)
{
	gh_aggcol  *c;

	memset(h, 0, sizeof(*h));
	if (e->darrays == NULL)
		return GH_OK;
	h->cols = c = gh_calloc(e, ncols > 0 ? ncols : 1, sizeof(gh_aggcol));
	h->copies = gh_calloc(e, 1 + 2 * (ncols > 0 ? ncols : 1), sizeof(void *));
	if (c == NULL || h->copies == NULL)
		return e->status;
	memcpy(c, *cols, sizeof(gh_aggcol) * ncols);
	GH_TRY_STATUS(host_copy(e, (const void **) keys, n * sizeof(uint64_t), h));
	for (int i = 0; i < ncols; i++)
	{
		GH_TRY_STATUS(host_copy(e, &c[i].values, n * 8, h));
		GH_TRY_STATUS(host_copy(e, (const void **) &c[i].nulls, n, h));
	}
	*cols = c;
	return GH_OK;
}

void
gh_host_inputs_free(gh_host_inputs *h)
{
	for (int i = 0; i < h->ncopies; i++)
		free(h->copies[i]);
	free(h->copies);
	free(h->cols);
	memset(h, 0, sizeof(*h));
}
