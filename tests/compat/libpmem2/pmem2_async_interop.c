// SPDX-License-Identifier: MIT
/*
 * pmem2_async_interop.c - one fixed run through libpmem2's asynchronous
 * copies (pmem2_config_set_vdm(), pmem2_mem{cpy,move,set}_async()),
 * printing the futures they return field by field, every poll's state,
 * the outputs and bytes, and the calls a vdm of the program's own gets,
 * for check_pmem2_interop.sh: built against PMDK's <libpmem2.h> with
 * PMEM2_USE_MINIASYNC (miniasync's headers: the test-only ones in
 * miniasync/), linked with Debian's -lpmem2, run on Debian's library and
 * on the drop-in. No absolute address is printed: pointers only as
 * "is the destination", "NULL" or "set".
 *
 *   pmem2_async_interop DIR    (a directory for its scratch file)
 */
#define _GNU_SOURCE
#define PMEM2_USE_MINIASYNC 1
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmem2.h>

#define LEN 8192

static const char *ptr_is(const void *p, const void *dest)
{
	return !p ? "NULL" : p == dest ? "dest" : "set";
}

static void show(const char *what, struct pmem2_future *f, void *dest)
{
	struct vdm_operation_future *op = &f->data.op.fut;
	struct pmem2_persist_future *p = &f->data.fin.fut.persist;

	printf("%s: chain %zu/%zu state %d task %s prop %s\n", what,
	       f->base.context.data_size, f->base.context.output_size,
	       f->base.context.state, ptr_is((void *)f->base.task, NULL),
	       ptr_is((void *)f->base.has_property, NULL));
	printf("  op link map %s init %s flags %llu; future %zu/%zu state %d "
	       "task %s prop %s handle %s\n",
	       ptr_is((void *)f->data.op.map, NULL),
	       ptr_is((void *)f->data.op.init, NULL),
	       (unsigned long long)f->data.op.flags,
	       op->base.context.data_size, op->base.context.output_size,
	       op->base.context.state, ptr_is((void *)op->base.task, NULL),
	       ptr_is((void *)op->base.has_property, NULL),
	       ptr_is(op->data.data, NULL));
	printf("  operation type %d dest %s n %zu flags %llu; output type %d "
	       "result %d dest %s\n", op->data.operation.type,
	       ptr_is(op->data.operation.data.memcpy.dest, dest),
	       op->data.operation.data.memcpy.n,
	       (unsigned long long)op->data.operation.data.memcpy.flags,
	       op->output.type, op->output.result,
	       ptr_is(op->output.output.memcpy.dest, dest));
	printf("  fin link flags %llu; persist %zu/%zu state %d ptr %s size "
	       "%zu; output %s\n", (unsigned long long)f->data.fin.flags,
	       p->base.context.data_size, p->base.context.output_size,
	       p->base.context.state, ptr_is(p->data.ptr, dest), p->data.size,
	       ptr_is(f->output.dest, dest));
}

/*
 * Set while a future's operation has no has_property (its mover had no
 * memory and none of its own): PMDK's chain would call NULL, so the
 * property is not asked before the poll that finishes that link.
 */
static int no_property_yet;

/* Poll to completion (at most 10 polls), printing each poll's state. */
static void run(const char *what, struct pmem2_future *f, void *dest)
{
	struct future_notifier n;
	int polls = 0;
	enum future_state s;

	show(what, f, dest);
	if (!no_property_yet)
		printf("  has_property %d\n", future_has_property(
		       FUTURE_AS_RUNNABLE(f), FUTURE_PROPERTY_ASYNC));
	do {
		memset(&n, 0xff, sizeof(n));
		s = future_poll(FUTURE_AS_RUNNABLE(f), &n);
		printf("  poll %d: state %d notifier_used %d\n", ++polls, s,
		       (int)n.notifier_used);
	} while (s != FUTURE_STATE_COMPLETE && polls < 10);
	show("  after", f, dest);
	printf("  has_property after %d\n",
	       future_has_property(FUTURE_AS_RUNNABLE(f), FUTURE_PROPERTY_ASYNC));
}

/* --- a vdm of the program's own, printing its calls ------------------------ */

static struct test_vdm {
	struct vdm base;
	int start_refusals;	/* op_start() answers nonzero this often */
	int check_running;	/* op_check() says RUNNING this often */
	int out_of_memory;	/* op_new() returns NULL */
	char handle[8];
} tv;

static const char *vdm_dest;

static void *tv_new(struct vdm *vdm, const enum vdm_operation_type type)
{
	printf("    op_new(vdm %s, type %d)\n", vdm == &tv.base ? "ours" : "other",
	       type);
	return tv.out_of_memory ? NULL : tv.handle;
}

static int tv_start(void *data, const struct vdm_operation *o,
		    struct future_notifier *n)
{
	printf("    op_start(handle %s, type %d dest %s n %zu flags %llu, "
	       "notifier %s)\n", data == tv.handle ? "ours" : "other", o->type,
	       ptr_is(o->data.memcpy.dest, vdm_dest), o->data.memcpy.n,
	       (unsigned long long)o->data.memcpy.flags, n ? "set" : "NULL");
	if (tv.start_refusals) {
		tv.start_refusals--;
		return 1;
	}
	if (n)
		n->notifier_used = FUTURE_NOTIFIER_NONE;
	if (o->type == VDM_OPERATION_MEMSET)
		memset(o->data.memset.str, o->data.memset.c, o->data.memset.n);
	else
		memmove(o->data.memcpy.dest, o->data.memcpy.src,
			o->data.memcpy.n);
	return 0;
}

static enum future_state tv_check(void *data, const struct vdm_operation *o)
{
	printf("    op_check(handle %s, type %d)\n",
	       data == tv.handle ? "ours" : "other", o->type);
	if (tv.check_running) {
		tv.check_running--;
		return FUTURE_STATE_RUNNING;
	}
	return FUTURE_STATE_COMPLETE;
}

static void tv_delete(void *data, const struct vdm_operation *o,
		      struct vdm_operation_output *out)
{
	printf("    op_delete(handle %s, type %d)\n",
	       data == tv.handle ? "ours" : "other", o->type);
	out->type = o->type;
	out->result = VDM_SUCCESS;
	out->output.memcpy.dest = o->data.memcpy.dest;
}

static int tv_property(void *future, enum future_property property)
{
	(void)future;
	return property == FUTURE_PROPERTY_ASYNC;
}

static int check_bytes(const char *what, const char *p, int c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (char)(c + (c < 0 ? (int)i : 0)))
			return printf("  %s: byte %zu wrong\n", what, i), 1;
	printf("  %s: %zu bytes right\n", what, n);
	return 0;
}

static void copies(const char *name, struct pmem2_map *map, char *addr)
{
	static char src[LEN];
	struct pmem2_future f;
	char what[64];

	for (size_t i = 0; i < LEN; i++)
		src[i] = (char)(-1 + (int)i);	/* what check_bytes(-1) expects */
	snprintf(what, sizeof(what), "%s memcpy", name);
	f = pmem2_memcpy_async(map, addr, src, LEN, 0);
	run(what, &f, addr);
	check_bytes(what, addr, -1, LEN);

	snprintf(what, sizeof(what), "%s memset", name);
	f = pmem2_memset_async(map, addr, 'z', LEN / 2, PMEM2_F_MEM_NODRAIN);
	run(what, &f, addr);
	check_bytes(what, addr, 'z', LEN / 2);

	/* An overlapping move, forward by 100 bytes. */
	memset(addr, 'a', 200);
	memset(addr + 200, 'b', 100);
	snprintf(what, sizeof(what), "%s memmove", name);
	f = pmem2_memmove_async(map, addr + 100, addr + 200, 150, 0);
	run(what, &f, addr + 100);
	check_bytes(what, addr + 100, 'b', 100);
}

static void custom(struct pmem2_config *cfg, struct pmem2_source *src,
		   unsigned caps, int refusals, int running, int oom)
{
	struct pmem2_map *map = NULL;
	struct pmem2_future f;
	char *addr;
	int ret;

	tv = (struct test_vdm){
		.base = { tv_new, tv_delete, tv_start, tv_check, caps,
			  caps ? tv_property : NULL },
		.start_refusals = refusals, .check_running = running,
		.out_of_memory = oom,
	};
	printf("custom vdm caps %u refusals %d running %d oom %d: "
	       "set_vdm %d\n", caps, refusals, running, oom,
	       pmem2_config_set_vdm(cfg, &tv.base));
	ret = pmem2_map_new(&map, cfg, src);
	printf("  map_new %d\n", ret);
	if (ret)
		return;
	addr = pmem2_map_get_address(map);
	vdm_dest = addr;
	f = pmem2_memset_async(map, addr, 'q', 64, 0);
	no_property_yet = oom && !caps;
	run("custom memset", &f, addr);
	no_property_yet = 0;
	if (!oom)
		check_bytes("custom memset", addr, 'q', 64);
	printf("  map_delete %d\n", pmem2_map_delete(&map));
	pmem2_config_set_vdm(cfg, NULL);
}

int main(int argc, char **argv)
{
	struct pmem2_config *cfg;
	struct pmem2_source *src, *anon;
	struct pmem2_map *map;
	char path[4096];
	int fd;

	if (argc != 2)
		return fprintf(stderr, "usage: %s DIR\n", argv[0]), 2;
	snprintf(path, sizeof(path), "%s/async.pool", argv[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, 1 << 20))
		return perror(path), 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("sizeof pmem2_future %zu\n", sizeof(struct pmem2_future));
	if (pmem2_config_new(&cfg) || pmem2_source_from_fd(&src, fd) ||
	    pmem2_source_from_anon(&anon, 1 << 20))
		return 1;
	printf("set_vdm NULL %d\n", pmem2_config_set_vdm(cfg, NULL));
	pmem2_config_set_required_store_granularity(cfg, PMEM2_GRANULARITY_PAGE);

	if (pmem2_map_new(&map, cfg, src) == 0) {
		printf("file granularity %d\n",
		       pmem2_map_get_store_granularity(map));
		copies("file", map, pmem2_map_get_address(map));
		pmem2_map_delete(&map);
	}
	if (pmem2_map_new(&map, cfg, anon) == 0) {
		printf("anon granularity %d\n",
		       pmem2_map_get_store_granularity(map));
		copies("anon", map, pmem2_map_get_address(map));
		pmem2_map_delete(&map);
	}
	/* The same memory again, as pmem2_map_from_existing() makes a map. */
	{
		char *buf = aligned_alloc(4096, LEN);

		if (buf && pmem2_map_from_existing(&map, anon, buf, LEN,
				PMEM2_GRANULARITY_CACHE_LINE) == 0) {
			copies("existing", map, buf);
			pmem2_map_delete(&map);
		}
		free(buf);
	}
	custom(cfg, src, 0, 0, 0, 0);
	custom(cfg, src, 1, 2, 2, 0);
	custom(cfg, src, 4, 0, 1, 0);
	custom(cfg, src, 1, 0, 0, 1);
	custom(cfg, src, 0, 0, 0, 1);

	pmem2_source_delete(&anon);
	pmem2_source_delete(&src);
	pmem2_config_delete(&cfg);
	close(fd);
	unlink(path);
	return 0;
}
