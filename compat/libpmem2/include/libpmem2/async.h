/* SPDX-License-Identifier: MIT */
/*
 * libpmem2/async.h - the asynchronous part of PMDK's libpmem2 API
 * (pmem2_async(3)): copies that return a miniasync future.
 *
 * Needs libminiasync's <libminiasync/vdm.h> (not part of ntmem); seen
 * through <libpmem2.h> only with PMEM2_USE_MINIASYNC defined, as PMDK
 * 1.12.1's. The types are PMDK's ABI: a struct pmem2_future from either
 * library can be polled by a program built against either header.
 */
#ifndef LIBPMEM2_ASYNC
#define LIBPMEM2_ASYNC 1

#include <libpmem2/base.h>
#include <libminiasync/vdm.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The maps made with @cfg copy through @vdm (NULL: each map's own). */
int pmem2_config_set_vdm(struct pmem2_config *cfg, struct vdm *vdm);

/* The finishing step: persist [ptr, +size) of map. */
struct pmem2_persist_future_data {
	struct pmem2_map *map;
	void *ptr;
	size_t size;
};

struct pmem2_persist_future_output {
	uint64_t unused;	/* a struct may not be empty everywhere */
};

FUTURE(pmem2_persist_future, struct pmem2_persist_future_data,
	struct pmem2_persist_future_output);

static inline enum future_state
pmem2_persist_future_impl(struct future_context *ctx,
	struct future_notifier *notifier)
{
	struct pmem2_persist_future_data *d =
		(struct pmem2_persist_future_data *)
		future_context_get_data(ctx);

	if (notifier)
		notifier->notifier_used = FUTURE_NOTIFIER_NONE;
	pmem2_get_persist_fn(d->map)(d->ptr, d->size);
	return FUTURE_STATE_COMPLETE;
}

/* What may follow the mover's operation in a pmem2_future. */
union pmem2_finalize_future {
	struct pmem2_persist_future persist;
	struct { char data[64]; } pad;
};

static inline union pmem2_finalize_future
pmem2_persist_future(struct pmem2_map *map, void *ptr, size_t size)
{
	union pmem2_finalize_future f;

	f.persist.data.map = map;
	f.persist.data.ptr = ptr;
	f.persist.data.size = size;
	FUTURE_INIT(&f.persist, pmem2_persist_future_impl);
	return f;
}

/* The chain: the mover's operation, then (when needed) the persist. */
struct pmem2_future_data {
	FUTURE_CHAIN_ENTRY(struct vdm_operation_future, op);
	FUTURE_CHAIN_ENTRY_LAST(union pmem2_finalize_future, fin);
};

struct pmem2_future_output {
	void *dest;
};

FUTURE(pmem2_future, struct pmem2_future_data, struct pmem2_future_output);

struct pmem2_future pmem2_memcpy_async(struct pmem2_map *map,
	void *pmemdest, const void *src, size_t len, unsigned flags);
struct pmem2_future pmem2_memmove_async(struct pmem2_map *map,
	void *pmemdest, const void *src, size_t len, unsigned flags);
struct pmem2_future pmem2_memset_async(struct pmem2_map *map,
	void *str, int c, size_t n, unsigned flags);

#ifdef __cplusplus
}
#endif

#endif /* LIBPMEM2_ASYNC */
