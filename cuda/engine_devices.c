/*-------------------------------------------------------------------------
 *
 * engine_devices.c
 *	  Running one operation on all of an engine's devices at once: a host
 *	  thread per device, errors and cancellation shared between them.
 *
 * INTERFACE ROUTINES
 *		gh_for_devices			run a function for each device, concurrently
 *		gh_on_device_thread		is this one of those threads
 *		gh_fail, gh_account		errors and memory accounting, thread-safe
 *		gh_interrupted			the caller's interrupt, or a stop request
 *		gh_debug_inject_failure	make a device fail (tests)
 *		gh_debug_stage_exchange	exchange through host memory (tests)
 *		gh_debug_split_chunk	split host inputs in small chunks (tests)
 *		gh_debug_broadcast_rows	which tables are broadcast (tests)
 *		gh_debug_group_estimate	the GPU's estimate of groups, scaled (tests)
 *
 * The first gh_fail() of a section wins and stops the other devices at their
 * next gh_interrupted(); only the calling thread calls the caller's interrupt
 * callback, and every thread has finished its task before gh_for_devices
 * returns.  Device threads block all signals and live as long as the engine.
 * Why threads: cuda/README, "Several GPUs".
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend.h"

/* How often the calling thread polls the interrupt callback while it waits. */
#define POLL_NS (2 * 1000 * 1000)

static __thread bool on_device_thread = false;

bool
gh_on_device_thread(void)
{
	return on_device_thread;
}

gh_status
gh_fail(gh_engine *e, gh_status status, const char *fmt,...)
{
	va_list		ap;

	if (e == NULL)
		return status;
	pthread_mutex_lock(&e->lock);
	if (!(e->in_section && e->section_failed))
	{
		e->status = status;
		va_start(ap, fmt);
		vsnprintf(e->errmsg, sizeof(e->errmsg), fmt, ap);
		va_end(ap);
		if (e->in_section)
		{
			e->section_failed = true;
			__atomic_store_n(&e->stop, 1, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&e->lock);
	return status;
}

void
gh_account(gh_engine *e, long long delta)
{
	pthread_mutex_lock(&e->lock);
	if (delta < 0 && (size_t) (-delta) > e->device_bytes)
		e->device_bytes = 0;
	else
		e->device_bytes += delta;
	if (e->device_bytes > e->peak_device_bytes)
		e->peak_device_bytes = e->device_bytes;
	pthread_mutex_unlock(&e->lock);
}

bool
gh_interrupted(gh_engine *e)
{
	if (on_device_thread)
	{
		if (!__atomic_load_n(&e->stop, __ATOMIC_ACQUIRE))
			return false;
		/* keeps the first failure's message: it is the section's */
		gh_fail(e, GH_ERR_CANCELLED, "stopped because another device failed");
		return true;
	}
	if (e->opt.interrupt && e->opt.interrupt(e->opt.interrupt_arg))
	{
		gh_fail(e, GH_ERR_CANCELLED, "cancelled by request");
		return true;
	}
	return false;
}

/* ---- failure injection ---- */

void
gh_debug_inject_failure(gh_engine *e, int dev, long after, gh_status status)
{
	if (e == NULL)
		return;
	e->inject_dev = (dev >= 0 && dev < e->opt.ndevices) ? dev : -1;
	e->inject_status = status;
	__atomic_store_n(&e->inject_after, after < 0 ? 0 : after, __ATOMIC_RELEASE);
}

void
gh_debug_stage_exchange(gh_engine *e, bool on)
{
	if (e != NULL)
		e->stage_exchange = on;
}

void
gh_debug_broadcast_rows(gh_engine *e, long long rows)
{
	if (e != NULL)
		e->broadcast_rows = rows;
}

void
gh_debug_group_estimate(gh_engine *e, double scale)
{
	if (e != NULL)
		e->group_estimate_scale = scale;
}

void
gh_debug_cluster(gh_engine *e, bool always)
{
	if (e != NULL)
		e->cluster_always = always;
}

void
gh_debug_bcht_key_moves(gh_engine *e, bool on)
{
	if (e != NULL)
		e->bcht_key_moves = on;
}

void
gh_debug_split_chunk(gh_engine *e, size_t rows)
{
	if (e != NULL)
		e->split_chunk = rows;
}

bool
gh_injected_failure(gh_engine *e, int dev)
{
	if (e->inject_dev < 0 || e->inject_dev != dev)
		return false;
	/* fires on the transition from 0 to -1, so exactly once */
	if (__atomic_sub_fetch(&e->inject_after, 1, __ATOMIC_ACQ_REL) != -1)
		return false;
	gh_fail(e, e->inject_status, "injected failure on device %d", e->opt.devices[dev]);
	return true;
}

/* ---- sections ---- */

/*
 * A device's thread: started by the first section that needs it, it runs
 * the device's task of each section and waits for the next until the
 * engine closes (gh_stop_device_threads).  A thread started per section
 * cost more than the small operations a cached star sends (reads of
 * 0.6 ms took 0.95 on two GPUs).
 */
static void *
device_thread_main(void *p)
{
	gh_devthread *t = p;
	gh_engine  *e = t->e;

	on_device_thread = true;
	pthread_mutex_lock(&e->lock);
	for (;;)
	{
		gh_device_fn fn;
		gh_status	st;

		while (t->fn == NULL && !e->closing)
			pthread_cond_wait(&e->work, &e->lock);
		if (t->fn == NULL)
			break;
		fn = t->fn;
		pthread_mutex_unlock(&e->lock);
		st = fn(e, t->dev, t->arg);
		pthread_mutex_lock(&e->lock);
		t->fn = NULL;
		if (st != GH_OK && !e->section_failed)
		{
			/* a failure that did not go through gh_fail */
			e->status = st;
			snprintf(e->errmsg, sizeof(e->errmsg), "%s on device %d", gh_status_name(st),
					 e->opt.devices[t->dev]);
			e->section_failed = true;
		}
		if (st != GH_OK)
			__atomic_store_n(&e->stop, 1, __ATOMIC_RELEASE);
		e->running--;
		pthread_cond_signal(&e->done);
	}
	pthread_mutex_unlock(&e->lock);
	return NULL;
}

/* The threads of the devices in devmask started, with every signal blocked. */
static gh_status
start_device_threads(gh_engine *e, uint32_t devmask)
{
	sigset_t	all,
				saved;
	gh_status	st = GH_OK;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	for (int d = 0; d < e->opt.ndevices && st == GH_OK; d++)
	{
		gh_devthread *t = &e->devthreads[d];
		int			err;

		if (!(devmask & (1u << d)) || t->started)
			continue;
		t->e = e;
		t->dev = d;
		t->fn = NULL;
		err = pthread_create(&t->thread, NULL, device_thread_main, t);
		if (err != 0)
			st = gh_fail(e, GH_ERR_HOST_NOMEM, "could not start a thread for device %d: %s",
						 e->opt.devices[d], strerror(err));
		else
			t->started = true;
	}
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	return st;
}

void
gh_stop_device_threads(gh_engine *e)
{
	pthread_mutex_lock(&e->lock);
	e->closing = true;
	pthread_cond_broadcast(&e->work);
	pthread_mutex_unlock(&e->lock);
	for (int d = 0; d < GH_MAX_DEVICES; d++)
		if (e->devthreads[d].started)
		{
			pthread_join(e->devthreads[d].thread, NULL);
			e->devthreads[d].started = false;
		}
}

/*
 * Wait for the running threads, polling the interrupt callback meanwhile,
 * and at least once: a section that ends before the first poll still sees
 * an interrupt that came while it ran.
 */
static void
wait_for_devices(gh_engine *e)
{
	bool		cancelled = false;
	bool		polled = false;

	pthread_mutex_lock(&e->lock);
	while (e->running > 0 || (!polled && e->opt.interrupt))
	{
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += POLL_NS;
		if (until.tv_nsec >= 1000000000L)
		{
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		if (e->running > 0)
			(void) pthread_cond_timedwait(&e->done, &e->lock, &until);
		if (!cancelled && e->opt.interrupt)
		{
			bool		fire;

			polled = true;
			pthread_mutex_unlock(&e->lock);
			fire = e->opt.interrupt(e->opt.interrupt_arg);
			if (fire)
			{
				cancelled = true;
				gh_fail(e, GH_ERR_CANCELLED, "cancelled by request");
			}
			pthread_mutex_lock(&e->lock);
		}
	}
	pthread_mutex_unlock(&e->lock);
}

gh_status
gh_for_devices(gh_engine *e, uint32_t devmask, size_t rows, gh_device_fn fn,
			   void *arg)
{
	int			ntasks = 0;
	gh_status	st = GH_OK;

	devmask &= (e->opt.ndevices >= 32) ? UINT32_MAX : ((1u << e->opt.ndevices) - 1);
	for (int d = 0; d < e->opt.ndevices; d++)
		ntasks += (devmask >> d) & 1;
	if (ntasks == 0)
		return GH_OK;
	/* one device, little work, or already on a device thread: no threads */
	if (ntasks == 1 || rows < GH_THREAD_MIN_ROWS || on_device_thread)
	{
		for (int d = 0; d < e->opt.ndevices && st == GH_OK; d++)
			if (devmask & (1u << d))
				st = fn(e, d, arg);
		return st;
	}
	st = start_device_threads(e, devmask);
	if (st != GH_OK)
		return st;

	pthread_mutex_lock(&e->lock);
	e->in_section = true;
	e->section_failed = false;
	__atomic_store_n(&e->stop, 0, __ATOMIC_RELEASE);
	e->running = 0;
	for (int d = 0; d < e->opt.ndevices; d++)
		if (devmask & (1u << d))
		{
			e->devthreads[d].fn = fn;
			e->devthreads[d].arg = arg;
			e->running++;
		}
	pthread_cond_broadcast(&e->work);
	pthread_mutex_unlock(&e->lock);

	wait_for_devices(e);

	pthread_mutex_lock(&e->lock);
	if (e->section_failed)
		st = e->status != GH_OK ? e->status : GH_ERR_INTERNAL;
	e->in_section = false;
	e->section_failed = false;
	__atomic_store_n(&e->stop, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&e->lock);
	return st;
}
