/* SPDX-License-Identifier: MIT */
/*
 * miniasync_abi.h - the objects libpmem2's asynchronous functions share
 * with a program built against libminiasync's headers: futures, chains of
 * them, and virtual data movers (struct vdm), laid out byte for byte as
 * PMDK 1.12.1's libpmem2.so.1 (miniasync compiled in) lays them out on
 * x86-64. A program polls a future it got from pmem2_memcpy_async() with
 * its own inline future_poll(), which calls the task pointer the library
 * stored, and hands the library a struct vdm of its own through
 * pmem2_config_set_vdm(): both sides must agree on every offset below.
 *
 * The drop-in cannot include <libminiasync/vdm.h> (ntmem does not ship
 * it, nor does Debian), so the layout is written here once, and the
 * _Static_asserts pin the offsets read off Debian's library.
 */
#ifndef NTMEM_COMPAT_LIBPMEM2_MINIASYNC_ABI_H
#define NTMEM_COMPAT_LIBPMEM2_MINIASYNC_ABI_H

#include <stddef.h>
#include <stdint.h>

/* --- futures --------------------------------------------------------------- */

enum future_state {
	FUTURE_STATE_IDLE,
	FUTURE_STATE_COMPLETE,
	FUTURE_STATE_RUNNING,
};

/* What a future is asked about (miniasync's runtime orders by it). */
enum future_property {
	FUTURE_PROPERTY_ASYNC,
};

/* The sizes of the data and output that follow it in its future. */
struct future_context {
	size_t data_size;
	size_t output_size;
	enum future_state state;
	uint32_t padding;
};

enum future_notifier_type {
	FUTURE_NOTIFIER_NONE,
	FUTURE_NOTIFIER_WAKER,
	FUTURE_NOTIFIER_POLLER,
};

/* How a poll may ask to be woken; a synchronous task says NONE. */
struct future_notifier {
	struct {
		void *data;
		void (*wake)(void *data);
	} waker;
	struct {
		uint64_t *ptr_to_monitor;
	} poller;
	enum future_notifier_type notifier_used;
	uint32_t padding;
};

typedef enum future_state (*future_task_fn)(struct future_context *ctx,
					    struct future_notifier *notifier);
typedef int (*future_has_property_fn)(void *future,
				      enum future_property property);

/* The head of every future; its data and output follow the context. */
struct future {
	future_task_fn task;
	future_has_property_fn has_property;
	struct future_context context;
};

/*
 * A chain future's data is a run of links, each a pointer-aligned link
 * head and a future (its head, data and output), until one flagged LAST
 * or the chain's data_size; struct future_chain_entry walks them.
 */
struct future_chain_link {
	void (*map)(struct future_context *lhs, struct future_context *rhs,
		    void *arg);
	void *map_arg;
	void (*init)(void *future, struct future_context *chain, void *arg);
	void *init_arg;
	uint64_t flags;
};

struct future_chain_entry {
	struct future_chain_link link;
	struct future future;
};

#define FUTURE_CHAIN_FLAG_ENTRY_LAST		((uint64_t)1 << 0)
#define FUTURE_CHAIN_FLAG_ENTRY_PROCESSED	((uint64_t)1 << 1)

/* --- virtual data movers --------------------------------------------------- */

enum vdm_operation_type {
	VDM_OPERATION_MEMCPY,
	VDM_OPERATION_MEMMOVE,
	VDM_OPERATION_MEMSET,
	VDM_OPERATION_FLUSH,
};

enum vdm_operation_result {
	VDM_SUCCESS,
	VDM_ERROR_OUT_OF_MEMORY,
	VDM_ERROR_JOB_CORRUPTED,
};

/* The operation's stores must be durable when it completes. */
#define VDM_F_MEM_DURABLE	(1U << 0)

/* What to do: memcpy and memmove share the first layout. */
struct vdm_operation {
	union {
		struct {
			void *dest;
			void *src;
			size_t n;
			uint64_t flags;
		} memcpy, memmove;
		struct {
			void *str;
			int c;
			size_t n;
			uint64_t flags;
		} memset;
		uint8_t bytes[40];
	} data;
	enum vdm_operation_type type;
	uint32_t padding;
};

/* A vdm operation future's data: the mover's handle, the mover, what. */
struct vdm_operation_data {
	void *data;
	struct vdm *vdm;
	struct vdm_operation operation;
};

/* What op_delete() writes when the operation is done. */
struct vdm_operation_output {
	enum vdm_operation_type type;
	enum vdm_operation_result result;
	union {
		void *dest;	/* memcpy, memmove */
		void *str;	/* memset */
		uint64_t unused;
	} output;
};

/*
 * A mover: op_new() makes an operation's handle (NULL: out of memory),
 * op_start() starts it (nonzero: not yet, poll again), op_check() says
 * whether it is done, op_delete() writes the output and frees the handle.
 * capabilities: VDM_F_* it honours; has_property: its futures' answer
 * (NULL: miniasync's default, "no").
 */
struct vdm {
	void *(*op_new)(struct vdm *vdm, enum vdm_operation_type type);
	void (*op_delete)(void *data, const struct vdm_operation *operation,
			  struct vdm_operation_output *output);
	int (*op_start)(void *data, const struct vdm_operation *operation,
			struct future_notifier *n);
	enum future_state (*op_check)(void *data,
				      const struct vdm_operation *operation);
	unsigned capabilities;
	future_has_property_fn has_property;
};

struct vdm_operation_future {
	struct future base;
	struct vdm_operation_data data;
	struct vdm_operation_output output;
};

/* --- libpmem2's future (<libpmem2/async.h>) -------------------------------- */

/* The finishing step for a mapping whose stores need a persist. */
struct pmem2_persist_future {
	struct future base;
	struct {
		struct pmem2_map *map;
		void *ptr;
		size_t size;
	} data;
	struct {
		uint64_t unused;
	} output;
};

/*
 * What pmem2_*_async() return: a chain of the mover's operation and, when
 * the mapping needs one, a persist of the range; the output is the
 * destination.
 */
struct pmem2_future {
	struct future base;
	struct {
		struct {
			struct future_chain_link link;
			struct vdm_operation_future fut;
		} op;
		struct {
			struct future_chain_link link;
			union {
				struct pmem2_persist_future persist;
				char pad[64];
			} fut;
		} fin;
	} data;
	struct {
		void *dest;
	} output;
};

/* The offsets of Debian's libpmem2.so.1 1.12.1 (objdump -d of its calls). */
_Static_assert(sizeof(struct future) == 40, "struct future");
_Static_assert(sizeof(struct future_notifier) == 32, "future_notifier");
_Static_assert(offsetof(struct future_notifier, notifier_used) == 24,
	       "notifier_used");
_Static_assert(sizeof(struct future_chain_entry) == 80, "chain entry");
_Static_assert(sizeof(struct vdm_operation) == 48, "vdm_operation");
_Static_assert(offsetof(struct vdm_operation, type) == 40, "operation type");
_Static_assert(sizeof(struct vdm_operation_data) == 64, "operation data");
_Static_assert(sizeof(struct vdm_operation_output) == 16, "output");
_Static_assert(offsetof(struct vdm, capabilities) == 32, "capabilities");
_Static_assert(sizeof(struct vdm) == 48, "struct vdm");
_Static_assert(sizeof(struct vdm_operation_future) == 120, "vdm future");
_Static_assert(sizeof(struct pmem2_persist_future) == 72, "persist future");
_Static_assert(offsetof(struct pmem2_future, data.op.fut) == 0x50,
	       "operation future");
_Static_assert(offsetof(struct pmem2_future, data.fin) == 0xc8, "finaliser");
_Static_assert(offsetof(struct pmem2_future, output) == 0x138, "output");
_Static_assert(sizeof(struct pmem2_future) == 0x140, "pmem2_future");

#endif /* NTMEM_COMPAT_LIBPMEM2_MINIASYNC_ABI_H */
