/*-------------------------------------------------------------------------
 *
 * engine_split.c
 *	  Splitting host inputs by hash range, on several host threads: the
 *	  partition of every key, the partitions' offsets, and each caller's
 *	  scatter of its columns into partition order; and large host copies on
 *	  several threads.
 *
 * INTERFACE ROUTINES
 *		gh_split_make		partition of every key, counts and offsets
 *		gh_split_scatter	run the caller's scatter chunk by chunk
 *		gh_split_free		release a split
 *		gh_spread_input		whether the devices split an input instead
 *		gh_copy_host		memcpy of several arrays, in pieces on threads
 *
 * An input split for several devices (or for more partitions than fit a
 * device at once) is hashed and copied on the host before anything reaches
 * a GPU; on one thread that pass, not the GPUs, would set the pace of every
 * multi-GPU operation.  So the input is cut into chunks of consecutive
 * rows, each thread counts its chunks' partitions, an exclusive sum over
 * (partition, chunk) gives every chunk its first position in each
 * partition, and the threads scatter their chunks at once.  Rows keep their
 * input order within a partition, as with one thread: the split does not
 * depend on the number of threads.
 *
 * The threads block every signal and call nothing but the C library, so
 * they are safe inside a PostgreSQL process; if one cannot be started its
 * chunks are done by the calling thread.
 *
 *-------------------------------------------------------------------------
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_internal.h"
#include "hash.h"

#define SPLIT_MAX_THREADS 8
#define SPLIT_MIN_CHUNK ((size_t) 1 << 20)

typedef struct split_job
{
	gh_split   *s;
	const uint64_t *keys;		/* counting: the keys */
	gh_split_scatter_fn fn;		/* scattering: the caller's function */
	void	   *arg;
	size_t		next;			/* next chunk to take (atomic) */
} split_job;

/* count chunk c: the partition of each of its keys, and how many per partition */
static void
count_chunk(split_job *job, size_t c)
{
	gh_split   *s = job->s;
	size_t		begin = c * s->chunk,
				end = begin + s->chunk < s->n ? begin + s->chunk : s->n;
	size_t	   *counts = s->cursor + c * s->nparts;

	for (size_t i = begin; i < end; i++)
	{
		uint32_t	p = gh_partition_of(job->keys[i], s->nparts);

		s->pof[i] = p;
		counts[p]++;
	}
}

static void
scatter_chunk(split_job *job, size_t c)
{
	gh_split   *s = job->s;
	size_t		begin = c * s->chunk,
				end = begin + s->chunk < s->n ? begin + s->chunk : s->n;

	job->fn(job->arg, begin, end, s->pof, s->cursor + c * s->nparts);
}

static void *
split_thread(void *arg)
{
	split_job  *job = arg;

	for (;;)
	{
		size_t		c = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);

		if (c >= (size_t) job->s->nchunks)
			return NULL;
		if (job->fn)
			scatter_chunk(job, c);
		else
			count_chunk(job, c);
	}
}

/* Run fn(arg) on up to nthreads threads, the calling thread included. */
static void
run_threads(void *(*fn) (void *), void *arg, int nthreads)
{
	pthread_t	threads[SPLIT_MAX_THREADS];
	int			started = 0;
	sigset_t	all,
				saved;

	if (nthreads > SPLIT_MAX_THREADS)
		nthreads = SPLIT_MAX_THREADS;
	if (nthreads > 1)
	{
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &saved);
		for (int t = 1; t < nthreads; t++)
			if (pthread_create(&threads[started], NULL, fn, arg) == 0)
				started++;
		pthread_sigmask(SIG_SETMASK, &saved, NULL);
	}
	fn(arg);
	for (int t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
}

static void
split_run(split_job *job, int nthreads)
{
	job->next = 0;
	run_threads(split_thread, job, nthreads);
}

/* ---- copies ---- */

#define COPY_PIECE ((size_t) 4 << 20)
#define COPY_MAX_THREADS 4

typedef struct copy_job
{
	const gh_copy *copies;
	int			ncopies;
	size_t		npieces;
	size_t		next;			/* next piece to take (atomic) */
} copy_job;

/* the pieces of copy i: COPY_PIECE bytes each, the last one shorter */
static size_t
pieces_of(const gh_copy *c)
{
	return (c->bytes + COPY_PIECE - 1) / COPY_PIECE;
}

static void *
copy_thread(void *arg)
{
	copy_job   *job = arg;

	for (;;)
	{
		size_t		p = __atomic_fetch_add(&job->next, 1, __ATOMIC_RELAXED);
		int			i = 0;

		if (p >= job->npieces)
			return NULL;
		/* which copy piece p belongs to: few copies, so walk them */
		while (p >= pieces_of(&job->copies[i]))
			p -= pieces_of(&job->copies[i++]);
		{
			const gh_copy *c = &job->copies[i];
			size_t		off = p * COPY_PIECE;
			size_t		len = c->bytes - off < COPY_PIECE ? c->bytes - off : COPY_PIECE;

			memcpy((char *) c->dst + off, (const char *) c->src + off, len);
		}
	}
}

void
gh_copy_host(const gh_copy *copies, int ncopies)
{
	copy_job	job;
	long		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int			nthreads;

	memset(&job, 0, sizeof(job));
	job.copies = copies;
	job.ncopies = ncopies;
	for (int i = 0; i < ncopies; i++)
		job.npieces += pieces_of(&copies[i]);
	if (job.npieces == 0)
		return;
	nthreads = cpus < 1 ? 1 : cpus > COPY_MAX_THREADS ? COPY_MAX_THREADS : (int) cpus;
	if ((size_t) nthreads > job.npieces)
		nthreads = (int) job.npieces;
	run_threads(copy_thread, &job, nthreads);
}

gh_status
gh_split_make(gh_engine *e, const uint64_t *keys, size_t n, uint32_t nparts, gh_split *s)
{
	long		cpus = sysconf(_SC_NPROCESSORS_ONLN);
	split_job	job;
	size_t		at = 0;

	memset(s, 0, sizeof(*s));
	s->n = n;
	s->nparts = nparts;
	s->nthreads = cpus < 1 ? 1 : cpus > SPLIT_MAX_THREADS ? SPLIT_MAX_THREADS : (int) cpus;
	s->chunk = (n + s->nthreads - 1) / s->nthreads;
	if (s->chunk < SPLIT_MIN_CHUNK)
		s->chunk = SPLIT_MIN_CHUNK;
	if (e->split_chunk > 0)
		s->chunk = e->split_chunk;
	s->nchunks = n == 0 ? 0 : (int) ((n + s->chunk - 1) / s->chunk);
	if (s->nthreads > s->nchunks)
		s->nthreads = s->nchunks > 0 ? s->nchunks : 1;
	s->off = gh_calloc(e, nparts + 1, sizeof(size_t));
	s->pof = gh_malloc(e, (n ? n : 1) * sizeof(uint32_t));
	s->cursor = gh_calloc(e, (size_t) (s->nchunks ? s->nchunks : 1) * nparts, sizeof(size_t));
	if (s->off == NULL || s->pof == NULL || s->cursor == NULL)
	{
		gh_split_free(s);
		return e->status;
	}
	memset(&job, 0, sizeof(job));
	job.s = s;
	job.keys = keys;
	split_run(&job, s->nthreads);

	/* counts to first positions: partition by partition, chunk by chunk */
	for (uint32_t p = 0; p < nparts; p++)
	{
		s->off[p] = at;
		for (int c = 0; c < s->nchunks; c++)
		{
			size_t		k = s->cursor[(size_t) c * nparts + p];

			s->cursor[(size_t) c * nparts + p] = at;
			at += k;
		}
	}
	s->off[nparts] = at;
	return GH_OK;
}

void
gh_split_scatter(gh_split *s, gh_split_scatter_fn fn, void *arg)
{
	split_job	job;

	memset(&job, 0, sizeof(job));
	job.s = s;
	job.fn = fn;
	job.arg = arg;
	split_run(&job, s->nthreads);
}

bool
gh_spread_input(const gh_engine *e, size_t n, size_t max_rows)
{
	return e->opt.ndevices > 1 && n <= max_rows &&
		(n >= GH_THREAD_MIN_ROWS || e->split_chunk > 0);
}

void
gh_split_free(gh_split *s)
{
	free(s->off);
	free(s->pof);
	free(s->cursor);
	memset(s, 0, sizeof(*s));
}
