/*-------------------------------------------------------------------------
 *
 * engine_pages.c
 *	  The common layer of gh_extract_pages, gh_register_host and
 *	  gh_pin_host: argument checks, the process's one registered host range,
 *	  dispatch to the backend.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <sys/mman.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

#include "engine_internal.h"

/* The host range registered in this process (gh_register_host). */
static void *registered_base;
static size_t registered_bytes;
static int	bg_state;			/* atomic: GH_REGISTER_*, of gh_register_host_start */

/* The checks of a page description, for function fn's messages (engine_internal.h). */
gh_status
gh_page_spec_check(gh_engine *e, const gh_pagespec *spec, bool varlena, const char *fn)
{
	int			outs = 0;
	uint32_t	named = 0;		/* output columns named so far */

	if (spec->page_size == 0 || spec->page_size % 16 != 0 || spec->page_size > 32768 ||
		spec->max_tuples == 0 || spec->max_tuples > spec->page_size / 4 ||
		spec->natts < 1 || spec->natts > GH_PAGE_MAX_ATTS ||
		spec->nout < 1 || spec->nout > GH_PAGE_MAX_OUT)
		return gh_fail(e, GH_ERR_INVALID, "%s: bad page description", fn);
	for (int a = 0; a < spec->natts; a++)
	{
		int			al = spec->attalign[a];
		int			o = spec->out_of[a];

		if ((spec->attlen[a] <= 0 && spec->attlen[a] != -1) ||
			(al != 1 && al != 2 && al != 4 && al != 8))
			return gh_fail(e, GH_ERR_INVALID,
						   "%s: attribute %d is neither of fixed width nor a varlena", fn, a + 1);
		if (o < -1 || o >= spec->nout)
			return gh_fail(e, GH_ERR_INVALID,
						   "%s: attribute %d has no output column %d", fn, a + 1, o);
		if (o >= 0)
		{
			int			len = spec->attlen[a];

			if (len != 1 && len != 2 && len != 4 && len != 8 && !(varlena && len == -1))
				return gh_fail(e, GH_ERR_INVALID,
							   "%s: output attribute %d is %d bytes wide", fn,
							   a + 1, len);
			if (named & (UINT32_C(1) << o))
				return gh_fail(e, GH_ERR_INVALID,
							   "%s: output column %d named twice", fn, o);
			named |= UINT32_C(1) << o;
			outs++;
		}
	}
	if (outs != spec->nout)
		return gh_fail(e, GH_ERR_INVALID,
					   "%s: %d output columns named, %d declared", fn,
					   outs, spec->nout);
	return GH_OK;
}

gh_status
gh_extract_pages(gh_engine *e, const gh_pagespec *spec, const void *base,
				 const uint32_t *pages, size_t npages, gh_pagerows *out)
{
	if (e == NULL)
		return GH_ERR_INVALID;
	if (spec == NULL || out == NULL || (npages > 0 && (base == NULL || pages == NULL)) ||
		out->first == NULL || out->bad == NULL ||
		((uintptr_t) base) % 16 != 0 || out->cap > UINT32_MAX)
		return gh_fail(e, GH_ERR_INVALID, "gh_extract_pages: missing argument");
	GH_TRY_STATUS(gh_page_spec_check(e, spec, true, "gh_extract_pages"));
	if (npages > out->cap / spec->max_tuples)
		return gh_fail(e, GH_ERR_INVALID,
					   "gh_extract_pages: room for %zu rows, %zu pages may hold more",
					   out->cap, npages);
	for (int o = 0; o < spec->nout; o++)
		if (out->values[o] == NULL || out->nulls[o] == NULL)
			return gh_fail(e, GH_ERR_INVALID, "gh_extract_pages: output column %d missing", o);
	out->nrows = 0;
	out->first[0] = 0;
	if (npages == 0)
		return GH_OK;
	CHECK_INTERRUPT(e);
	if (gh_injected_failure(e, 0))
		return e->inject_status;
	return e->ops->extract_pages(e, spec, base, pages, npages, out);
}

gh_status
gh_register_host(gh_engine *e, void *base, size_t bytes)
{
	gh_status	st;

	if (e == NULL)
		return GH_ERR_INVALID;
	if (base == NULL || bytes == 0)
		return gh_fail(e, GH_ERR_INVALID, "gh_register_host: empty range");
	if (e->ops->register_host == NULL || gh_host_registered(base, bytes))
		return GH_OK;
	if (__atomic_load_n(&registered_base, __ATOMIC_ACQUIRE) != NULL ||
		__atomic_load_n(&bg_state, __ATOMIC_ACQUIRE) == GH_REGISTER_RUNNING)
		return gh_fail(e, GH_ERR_INVALID,
					   "gh_register_host: this process has registered another range");
	st = e->ops->register_host(e, base, bytes);
	if (st == GH_OK)
	{
		registered_bytes = bytes;
		__atomic_store_n(&registered_base, base, __ATOMIC_RELEASE);
	}
	return st;
}

bool
gh_pin_host(gh_engine *e, void *base, size_t bytes)
{
	if (e == NULL || base == NULL || bytes == 0 || e->ops->pin_host == NULL)
		return false;
	return e->ops->pin_host(e, base, bytes);
}

void
gh_unpin_host(gh_engine *e, void *base)
{
	if (e != NULL && base != NULL && e->ops->unpin_host != NULL)
		e->ops->unpin_host(e, base);
}

bool
gh_host_registered(const void *base, size_t bytes)
{
	const char *b = (const char *) base;
	const char *r = __atomic_load_n(&registered_base, __ATOMIC_ACQUIRE);

	return r != NULL && b >= r && b + bytes <= r + registered_bytes;
}

/* ---- registering in the background ---- */

/*
 * The range is registered in pieces, each faulted in first (outside the
 * driver) and then pinned: the driver holds a lock of its own while it pins,
 * so the calling thread's device work waits for at most one piece, not for
 * the whole range (32 GB of shared buffers took 23 s, most of it faulting in
 * memory never touched before).  Pieces end on multiples of their size, so
 * the boundary between two is page-aligned.
 */
#define REGISTER_PIECE ((size_t) 64 << 20)
#define HOST_PAGE ((uintptr_t) 4096)

static void *bg_base;
static size_t bg_bytes;
static double bg_seconds;
static char bg_error[256];

/* bytes of the piece of [base, base + bytes) that starts at done */
static size_t
piece_len(const char *base, size_t bytes, size_t done)
{
	uintptr_t	p = (uintptr_t) (base + done);
	size_t		len = (size_t) ((p / REGISTER_PIECE + 1) * REGISTER_PIECE - p);

	return len < bytes - done ? len : bytes - done;
}

static void *
register_in_background(void *arg)
{
	struct timespec t0,
				t1;
	char	   *base = bg_base;
	size_t		done = 0;
	const char *err = NULL;

	(void) arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done < bg_bytes && err == NULL)
	{
		size_t		len = piece_len(base, bg_bytes, done);

#ifdef MADV_POPULATE_WRITE
		{
			uintptr_t	p = (uintptr_t) (base + done);
			uintptr_t	from = p & ~(HOST_PAGE - 1);

			(void) madvise((void *) from, len + (p - from), MADV_POPULATE_WRITE);
		}
#endif
		err = gh_cuda_register_range(base + done, len);
		if (err == NULL)
			done += len;
	}
	/* a piece refused: the range is not registered, none of it */
	for (size_t at = 0; err != NULL && at < done; at += piece_len(base, bg_bytes, at))
		gh_cuda_unregister_range(base + at);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	bg_seconds = (double) (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (err == NULL)
	{
		registered_bytes = bg_bytes;
		__atomic_store_n(&registered_base, bg_base, __ATOMIC_RELEASE);
		__atomic_store_n(&bg_state, GH_REGISTER_DONE, __ATOMIC_RELEASE);
	}
	else
	{
		snprintf(bg_error, sizeof(bg_error), "%s", err);
		__atomic_store_n(&bg_state, GH_REGISTER_FAILED, __ATOMIC_RELEASE);
	}
	return NULL;
}

gh_status
gh_register_host_start(void *base, size_t bytes)
{
	pthread_t	thread;
	sigset_t	all,
				old;
	int			rc;

	if (base == NULL || bytes == 0)
		return GH_ERR_INVALID;
	if (__atomic_load_n(&bg_state, __ATOMIC_ACQUIRE) != GH_REGISTER_NONE ||
		__atomic_load_n(&registered_base, __ATOMIC_ACQUIRE) != NULL)
		return GH_ERR_INVALID;
	bg_base = base;
	bg_bytes = bytes;
	__atomic_store_n(&bg_state, GH_REGISTER_RUNNING, __ATOMIC_RELEASE);
	/* the thread takes no signals: they stay with the calling thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&thread, NULL, register_in_background, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
	{
		__atomic_store_n(&bg_state, GH_REGISTER_NONE, __ATOMIC_RELEASE);
		return GH_ERR_HOST_NOMEM;
	}
	pthread_detach(thread);
	return GH_OK;
}

int
gh_register_host_status(double *seconds, const char **error)
{
	int			st = __atomic_load_n(&bg_state, __ATOMIC_ACQUIRE);

	if (seconds)
		*seconds = st >= GH_REGISTER_DONE ? bg_seconds : 0;
	if (error)
		*error = st == GH_REGISTER_FAILED ? bg_error : NULL;
	return st;
}
