/* SPDX-License-Identifier: MIT */
/*
 * libminiasync/future.h - a test-only stand-in for libminiasync's header
 * (not shipped by Debian): the future types and macros <libpmem2/async.h>
 * needs and the tests poll with, written from miniasync's ABI as PMDK
 * 1.12.1's libpmem2.so.1 uses it on x86-64 (the offsets of its
 * pmem2_memcpy_async(), read with objdump -d).
 */
#ifndef FUTURE_H
#define FUTURE_H 1

#include <stddef.h>
#include <stdint.h>

enum future_state {
	FUTURE_STATE_IDLE,
	FUTURE_STATE_COMPLETE,
	FUTURE_STATE_RUNNING,
};

enum future_property {
	FUTURE_PROPERTY_ASYNC,
};

struct future_context {
	size_t data_size;	/* the bytes of data after the context */
	size_t output_size;	/* and of output after the data */
	enum future_state state;
	uint32_t padding;
};

struct future_waker {
	void *data;
	void (*wake)(void *data);
};

struct future_poller {
	uint64_t *ptr_to_monitor;
};

enum future_notifier_type {
	FUTURE_NOTIFIER_NONE,
	FUTURE_NOTIFIER_WAKER,
	FUTURE_NOTIFIER_POLLER,
};

struct future_notifier {
	struct future_waker waker;
	struct future_poller poller;
	enum future_notifier_type notifier_used;
	uint32_t padding;
};

typedef enum future_state (*future_task_fn)(struct future_context *context,
					    struct future_notifier *notifier);
typedef int (*future_has_property_fn)(void *future,
				      enum future_property property);

struct future {
	future_task_fn task;
	future_has_property_fn has_property;
	struct future_context context;
};

static inline void *future_context_get_data(struct future_context *ctx)
{
	return (char *)ctx + sizeof(*ctx);
}

static inline void *future_context_get_output(struct future_context *ctx)
{
	return (char *)future_context_get_data(ctx) + ctx->data_size;
}

static inline int future_has_property_default(void *future,
					      enum future_property property)
{
	(void)future, (void)property;
	return 0;
}

#define FUTURE(name, data_type, output_type) \
	struct name { \
		struct future base; \
		data_type data; \
		output_type output; \
	}

#define FUTURE_INIT_EXT(futp, taskfn, propfn) do { \
	(futp)->base.task = (taskfn); \
	(futp)->base.has_property = (propfn); \
	(futp)->base.context.data_size = sizeof((futp)->data); \
	(futp)->base.context.output_size = sizeof((futp)->output); \
	(futp)->base.context.state = FUTURE_STATE_IDLE; \
	(futp)->base.context.padding = 0; \
} while (0)

#define FUTURE_INIT(futp, taskfn) \
	FUTURE_INIT_EXT((futp), (taskfn), future_has_property_default)

#define FUTURE_AS_RUNNABLE(futp) (&(futp)->base)
#define FUTURE_OUTPUT(futp) (&(futp)->output)
#define FUTURE_DATA(futp) (&(futp)->data)
#define FUTURE_STATE(futp) ((futp)->base.context.state)

typedef void (*future_map_fn)(struct future_context *lhs,
			      struct future_context *rhs, void *arg);
typedef void (*future_init_fn)(void *future, struct future_context *chain,
			       void *arg);

#define FUTURE_CHAIN_FLAG_ENTRY_LAST		((uint64_t)1 << 0)
#define FUTURE_CHAIN_FLAG_ENTRY_PROCESSED	((uint64_t)1 << 1)

/* A chain link: its flags word is a pointer-sized field, as miniasync's. */
#define FUTURE_CHAIN_ENTRY(future_type, name) \
	struct { \
		future_map_fn map; \
		void *map_arg; \
		future_init_fn init; \
		void *init_arg; \
		uint64_t flags; \
		future_type fut; \
	} name
#define FUTURE_CHAIN_ENTRY_LAST(future_type, name) \
	FUTURE_CHAIN_ENTRY(future_type, name)

static inline enum future_state future_poll(struct future *fut,
					    struct future_notifier *notifier)
{
	if (fut->context.state != FUTURE_STATE_COMPLETE)
		fut->context.state = fut->task(&fut->context, notifier);
	return fut->context.state;
}

static inline int future_has_property(struct future *fut,
				      enum future_property property)
{
	return fut->has_property(fut, property);
}

#define FUTURE_BUSY_POLL(futp) \
	while (future_poll(FUTURE_AS_RUNNABLE(futp), NULL) != \
	       FUTURE_STATE_COMPLETE) { }

#endif /* FUTURE_H */
