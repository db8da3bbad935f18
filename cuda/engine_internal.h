/*-------------------------------------------------------------------------
 *
 * engine_internal.h
 *	  Helpers shared by the files of the engine's common layer (engine.c,
 *	  engine_table.c, engine_aggregate.c): host allocation with error
 *	  recording, the hash-range split of host inputs, device ids.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GPUHASH_ENGINE_INTERNAL_H
#define GPUHASH_ENGINE_INTERNAL_H

#include "backend.h"

#define CHECK_INTERRUPT(e) \
	do { if (gh_interrupted(e)) return GH_ERR_CANCELLED; } while (0)

/* The same, running cleanup first. */
#define CHECK_INTERRUPT_FREE(e, cleanup) \
	do { if (gh_interrupted(e)) { cleanup; return GH_ERR_CANCELLED; } } while (0)

/* Return a failed status from a helper. */
#define GH_TRY_STATUS(expr) \
	do { \
		gh_status gh_st_ = (expr); \
		if (gh_st_ != GH_OK) \
			return gh_st_; \
	} while (0)

/* malloc/calloc that record GH_ERR_HOST_NOMEM on e when they fail. */
extern void *gh_malloc(gh_engine *e, size_t bytes);
extern void *gh_calloc(gh_engine *e, size_t count, size_t size);

/*
 * Count the keys of each of nparts hash-range partitions and give every key
 * its partition (*part_of, n entries).  Returns per-partition offsets of a
 * partition-ordered layout (nparts + 1), or NULL with an error recorded.
 */
extern size_t *gh_split_offsets(gh_engine *e, const uint64_t *keys, size_t n,
								uint32_t nparts, uint32_t **part_of);

/* Smallest number of equal parts of n rows that keeps each within limit. */
extern size_t gh_parts_needed(size_t n, size_t bytes_per_row, size_t limit);

/*
 * Partitions for n rows at bytes_per_row on e: a multiple of the device
 * count, so that every device gets the same number of hash ranges.
 */
extern uint32_t gh_partitions_for(const gh_engine *e, size_t n,
								  size_t bytes_per_row);

/* The id a device index reports (CUDA number; CPU: the index itself). */
extern int	gh_device_id(const gh_engine *e, int dev);

/* Device ids of the indices set in devmask, in the engine's order. */
extern int	gh_device_ids(const gh_engine *e, uint32_t devmask, int *ids,
						  int max);

#endif							/* GPUHASH_ENGINE_INTERNAL_H */
