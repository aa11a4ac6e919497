// SPDX-License-Identifier: MIT
/*
 * async.c - pmem2_memcpy_async(), pmem2_memmove_async(),
 * pmem2_memset_async() and the synchronous data mover every mapping has
 * (pmem2_async(3)), as PMDK 1.12.1 builds them with miniasync compiled in.
 *
 * A call returns a struct pmem2_future (miniasync_abi.h) the program
 * polls with its own future_poll(): a chain of the mover's operation and,
 * where the mapping needs it, a persist of the range. Nothing runs until
 * the first poll.
 *
 * The mover is the config's (pmem2_config_set_vdm()), used only through
 * its op_new/op_start/op_check/op_delete, or, without one, the map's own:
 * ntmem has no asynchronous engine (no DSA), so as PMDK's default mover
 * it makes the copy in the polling thread, with the map's
 * pmem2_get_mem*_fn() function, and the operation is complete on the
 * first poll. Which step makes the stores durable (PMDK's rule, but for
 * BYTE):
 *   BYTE        the persist step, a fence: PMDK adds none, but the
 *               map's memcpy may store non-temporally even with NOFLUSH,
 *               and in a cpu_cache domain such stores are durable only
 *               after a fence; pmem2_async(3) promises the data durable
 *               once the future is complete (the recorder test proves it)
 *   PAGE        the persist step (msync) after an unflushed copy
 *   CACHE_LINE  the mover, asked for VDM_F_MEM_DURABLE, when it has any
 *               capability (the default mover's copy is non-temporal);
 *               else the persist step after it
 * The call's flags are ignored, as PMDK ignores them.
 */
#include <stdlib.h>
#include <string.h>

#include "pmem2.h"

#define ALIGN_PTR(n) (((n) + sizeof(void *) - 1) & ~(sizeof(void *) - 1))

/* --- the futures' tasks ---------------------------------------------------- */

static void *context_data(struct future_context *ctx)
{
	return (char *)ctx + sizeof(*ctx);
}

static void *context_output(struct future_context *ctx)
{
	return (char *)context_data(ctx) + ctx->data_size;
}

/* miniasync's default answer: a future has no property. */
static int no_property(void *future, enum future_property property)
{
	(void)future, (void)property;
	return 0;
}

static enum future_state poll_once(struct future *fut,
				   struct future_notifier *n)
{
	if (fut->context.state != FUTURE_STATE_COMPLETE)
		fut->context.state = fut->task(&fut->context, n);
	return fut->context.state;
}

/*
 * The link after @e in the chain whose context is @ctx (NULL: @e is the
 * last), running @e's lazy init first; *@used counts the bytes of data
 * the links so far take.
 */
static struct future_chain_entry *chain_next(struct future_context *ctx,
					     struct future_chain_entry *e,
					     size_t *used)
{
	const struct future_context *fc = &e->future.context;

	if (e->link.init) {
		e->link.init(&e->future, ctx, e->link.init_arg);
		e->link.init = NULL;
	}
	*used += ALIGN_PTR(sizeof(*e) + fc->data_size + fc->output_size);
	if ((e->link.flags & FUTURE_CHAIN_FLAG_ENTRY_LAST) ||
	    *used == ctx->data_size)
		return NULL;
	return (struct future_chain_entry *)((char *)context_data(ctx) + *used);
}

/*
 * A chain: poll the first link not yet done; when it completes, map its
 * output onto the next one (or the chain's) and go on with that one in
 * the same poll, until one is still running.
 */
static enum future_state chain_task(struct future_context *ctx,
				    struct future_notifier *n)
{
	struct future_chain_entry *e = context_data(ctx), *next;
	size_t used = 0;

	for (; e; e = next) {
		next = chain_next(ctx, e, &used);
		if (e->link.flags & FUTURE_CHAIN_FLAG_ENTRY_PROCESSED)
			continue;
		if (poll_once(&e->future, n) != FUTURE_STATE_COMPLETE)
			return FUTURE_STATE_RUNNING;
		if (e->link.map) {
			if (next && next->link.init) {
				next->link.init(&next->future, ctx,
						next->link.init_arg);
				next->link.init = NULL;
			}
			e->link.map(&e->future.context,
				    next ? &next->future.context : ctx,
				    e->link.map_arg);
		}
		e->link.flags |= FUTURE_CHAIN_FLAG_ENTRY_PROCESSED;
	}
	return FUTURE_STATE_COMPLETE;
}

/*
 * A chain has a property when the link it is at has: 1 or 0, -1 when
 * every link is done. A link whose mover had no memory for the operation
 * has no has_property (PMDK would call NULL): it has none.
 */
static int chain_has_property(void *future, enum future_property property)
{
	struct future_context *ctx = &((struct future *)future)->context;
	struct future_chain_entry *e = context_data(ctx), *next;
	size_t used = 0;

	for (; e; e = next) {
		next = chain_next(ctx, e, &used);
		if (e->link.flags & FUTURE_CHAIN_FLAG_ENTRY_PROCESSED)
			continue;
		return e->future.has_property &&
		       e->future.has_property(&e->future, property) != 0;
	}
	return -1;
}

/*
 * A mover's operation: started on the first poll (a nonzero op_start():
 * not yet, idle), checked on every poll from then on, its output written
 * and its handle freed by op_delete() when complete.
 */
static enum future_state vdm_operation_task(struct future_context *ctx,
					    struct future_notifier *n)
{
	struct vdm_operation_data *d = context_data(ctx);
	struct vdm *vdm = d->vdm;
	enum future_state state;

	if (ctx->state == FUTURE_STATE_IDLE &&
	    vdm->op_start(d->data, &d->operation, n) != 0)
		return FUTURE_STATE_IDLE;
	state = vdm->op_check(d->data, &d->operation);
	if (state == FUTURE_STATE_COMPLETE)
		vdm->op_delete(d->data, &d->operation, context_output(ctx));
	return state;
}

/* The persist step: the map's persist function over the range, at once. */
static enum future_state persist_task(struct future_context *ctx,
				      struct future_notifier *n)
{
	struct pmem2_persist_future *f =
		(void *)((char *)ctx - offsetof(struct future, context));

	if (n)
		n->notifier_used = FUTURE_NOTIFIER_NONE;
	f->data.map->persist_fn(f->data.ptr, f->data.size);
	return FUTURE_STATE_COMPLETE;
}

/* --- the map's own mover --------------------------------------------------- */

/* An operation's handle: set complete by op_start(), read by op_check(). */
struct mover_op {
	struct pmem2_map *map;
	int complete;
};

static struct pmem2_map *mover_map(struct vdm *vdm)
{
	return (struct pmem2_map *)((char *)vdm -
				    offsetof(struct pmem2_map, mover));
}

/* A copy, a move or a fill; anything else is not this mover's (NULL). */
static void *mover_op_new(struct vdm *vdm, enum vdm_operation_type type)
{
	struct mover_op *op;

	if (type != VDM_OPERATION_MEMCPY && type != VDM_OPERATION_MEMMOVE &&
	    type != VDM_OPERATION_MEMSET)
		return NULL;
	op = malloc(sizeof(*op));
	if (op)
		*op = (struct mover_op){ .map = mover_map(vdm) };
	return op;
}

/*
 * Make the copy now, in the polling thread: non-temporal and drained when
 * asked for durable stores, else ordinary stores left unflushed for the
 * persist step.
 */
static int mover_op_start(void *data, const struct vdm_operation *o,
			  struct future_notifier *n)
{
	struct mover_op *op = data;
	struct pmem2_map *map = op->map;
	uint64_t vflags = o->type == VDM_OPERATION_MEMSET
			  ? o->data.memset.flags : o->data.memcpy.flags;
	unsigned flags = vflags & VDM_F_MEM_DURABLE ? PMEM2_F_MEM_NONTEMPORAL
						    : PMEM2_F_MEM_NOFLUSH;

	if (n)
		n->notifier_used = FUTURE_NOTIFIER_NONE;
	if (o->type == VDM_OPERATION_MEMSET)
		map->memset_fn(o->data.memset.str, o->data.memset.c,
			       o->data.memset.n, flags);
	else if (o->type == VDM_OPERATION_MEMMOVE)
		map->memmove_fn(o->data.memmove.dest, o->data.memmove.src,
				o->data.memmove.n, flags);
	else
		map->memcpy_fn(o->data.memcpy.dest, o->data.memcpy.src,
			       o->data.memcpy.n, flags);
	__atomic_store_n(&op->complete, 1, __ATOMIC_RELEASE);
	return 0;
}

static enum future_state mover_op_check(void *data,
					const struct vdm_operation *o)
{
	struct mover_op *op = data;

	(void)o;
	return __atomic_load_n(&op->complete, __ATOMIC_ACQUIRE)
	       ? FUTURE_STATE_COMPLETE : FUTURE_STATE_IDLE;
}

static void mover_op_delete(void *data, const struct vdm_operation *o,
			    struct vdm_operation_output *out)
{
	out->type = o->type;
	out->result = VDM_SUCCESS;
	out->output.dest = o->type == VDM_OPERATION_MEMSET ? o->data.memset.str
							   : o->data.memcpy.dest;
	free(data);
}

void pmem2_map_set_mover(struct pmem2_map *map, struct vdm *vdm)
{
	map->mover = (struct vdm){
		.op_new = mover_op_new,
		.op_delete = mover_op_delete,
		.op_start = mover_op_start,
		.op_check = mover_op_check,
		.capabilities = VDM_F_MEM_DURABLE,
	};
	map->vdm = vdm ? vdm : &map->mover;
}

/* --- pmem2_*_async --------------------------------------------------------- */

/*
 * The operation's future, as miniasync's vdm_memcpy() and friends make
 * it: the mover's handle asked for at once (none: complete, with
 * VDM_ERROR_OUT_OF_MEMORY), the mover's has_property if it has one.
 */
static void operation_init(struct vdm_operation_future *f, struct vdm *vdm,
			   const struct vdm_operation *o)
{
	f->data.operation = *o;
	f->data.vdm = vdm;
	f->output.type = o->type;
	f->output.result = VDM_SUCCESS;
	f->base.context = (struct future_context){
		.data_size = sizeof(f->data), .output_size = sizeof(f->output),
	};
	f->data.data = vdm->op_new(vdm, o->type);
	if (f->data.data) {
		f->base.task = vdm_operation_task;
		f->base.has_property = no_property;
	} else {
		f->output.result = VDM_ERROR_OUT_OF_MEMORY;
		f->base.context.state = FUTURE_STATE_COMPLETE;
	}
	if (vdm->has_property)
		f->base.has_property = vdm->has_property;
}

/*
 * Which step makes the stores durable on @map (the table above): the
 * operation's VDM_F_* flags in *@vflags, whether a persist step follows.
 */
static bool plan(const struct pmem2_map *map, uint64_t *vflags)
{
	/* PMDK's test of VDM_F_MEM_DURABLE takes any capability for it. */
	bool durable = map->vdm->capabilities != 0;

	*vflags = 0;
	switch (map->granularity) {
	case PMEM2_GRANULARITY_BYTE:
		return true;	/* a fence: see the table above */
	case PMEM2_GRANULARITY_CACHE_LINE:
		if (durable)
			*vflags = VDM_F_MEM_DURABLE;
		return !durable;
	case PMEM2_GRANULARITY_PAGE:
	default:
		return true;
	}
}

static struct pmem2_future future_new(struct pmem2_map *map, void *dest,
				      size_t len, bool persist,
				      const struct vdm_operation *o)
{
	struct pmem2_persist_future *p;
	struct pmem2_future f;

	memset(&f, 0, sizeof(f));
	operation_init(&f.data.op.fut, map->vdm, o);
	/* Without a persist step the operation is the chain's last link. */
	if (!persist)
		f.data.op.link.flags = FUTURE_CHAIN_FLAG_ENTRY_LAST;

	/* The persist link is filled either way, as PMDK's library does. */
	f.data.fin.link.flags = FUTURE_CHAIN_FLAG_ENTRY_LAST;
	p = &f.data.fin.fut.persist;
	p->base.task = persist_task;
	p->base.has_property = no_property;
	p->base.context.data_size = sizeof(p->data);
	p->base.context.output_size = sizeof(p->output);
	p->data.map = map;
	p->data.ptr = persist ? dest : NULL;
	p->data.size = len;

	f.output.dest = dest;
	f.base.task = chain_task;
	f.base.has_property = chain_has_property;
	f.base.context.data_size = sizeof(f.data);
	f.base.context.output_size = sizeof(f.output);
	return f;
}

struct pmem2_future pmem2_memcpy_async(struct pmem2_map *map, void *pmemdest,
				       const void *src, size_t len,
				       unsigned flags)
{
	struct vdm_operation o = { .type = VDM_OPERATION_MEMCPY };
	bool persist = plan(map, &o.data.memcpy.flags);

	(void)flags;
	o.data.memcpy.dest = pmemdest;
	o.data.memcpy.src = (void *)src;
	o.data.memcpy.n = len;
	return future_new(map, pmemdest, len, persist, &o);
}

struct pmem2_future pmem2_memmove_async(struct pmem2_map *map, void *pmemdest,
					const void *src, size_t len,
					unsigned flags)
{
	struct vdm_operation o = { .type = VDM_OPERATION_MEMMOVE };
	bool persist = plan(map, &o.data.memmove.flags);

	(void)flags;
	o.data.memmove.dest = pmemdest;
	o.data.memmove.src = (void *)src;
	o.data.memmove.n = len;
	return future_new(map, pmemdest, len, persist, &o);
}

struct pmem2_future pmem2_memset_async(struct pmem2_map *map, void *str,
				       int c, size_t n, unsigned flags)
{
	struct vdm_operation o = { .type = VDM_OPERATION_MEMSET };
	bool persist = plan(map, &o.data.memset.flags);

	(void)flags;
	o.data.memset.str = str;
	o.data.memset.c = c;
	o.data.memset.n = n;
	return future_new(map, str, n, persist, &o);
}
