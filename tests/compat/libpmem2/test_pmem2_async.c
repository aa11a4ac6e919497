// SPDX-License-Identifier: MIT
/*
 * test_pmem2_async.c - the drop-in's pmem2_mem{cpy,move,set}_async() and
 * pmem2_config_set_vdm(), built against ntmem's <libpmem2.h> with
 * PMEM2_USE_MINIASYNC and the test-only miniasync headers (miniasync/):
 * the default mover on each granularity (one poll, the output, the bytes,
 * which step persists), and a vdm of the test's own, whose op_* must be
 * called as PMDK's library calls them.
 */
#define PMEM2_USE_MINIASYNC 1
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libpmem2.h>

#define LEN 4096

static struct pmem2_map *anon_map(enum pmem2_granularity g, char **addr)
{
	struct pmem2_source *src;
	struct pmem2_config *cfg;
	struct pmem2_map *map;

	assert_int_equal(pmem2_source_from_anon(&src, LEN), 0);
	assert_int_equal(pmem2_config_new(&cfg), 0);
	assert_int_equal(pmem2_config_set_required_store_granularity(cfg, g), 0);
	assert_int_equal(pmem2_map_new(&map, cfg, src), 0);
	pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);
	*addr = pmem2_map_get_address(map);
	return map;
}

static enum future_state poll1(struct pmem2_future *f)
{
	return future_poll(FUTURE_AS_RUNNABLE(f), NULL);
}

/*
 * Anonymous memory (BYTE): copy, fill, move, each complete in one poll,
 * the fence of the persist step included.
 */
static void default_mover_byte(void **state)
{
	static char src[LEN];
	struct pmem2_future f;
	char *addr;
	struct pmem2_map *map = anon_map(PMEM2_GRANULARITY_PAGE, &addr);

	(void)state;
	assert_int_equal(pmem2_map_get_store_granularity(map),
			 PMEM2_GRANULARITY_BYTE);
	memset(src, 'x', sizeof(src));
	f = pmem2_memcpy_async(map, addr, src, LEN, 0);
	assert_int_equal(FUTURE_STATE(&f), FUTURE_STATE_IDLE);
	assert_int_equal(addr[0], 0);	/* nothing before the first poll */
	/*
	 * A persist step follows (BYTE's persist is the fence a cpu_cache
	 * domain needs after non-temporal stores; PMDK has none here).
	 */
	assert_false(f.data.op.flags & FUTURE_CHAIN_FLAG_ENTRY_LAST);
	assert_ptr_equal(f.data.fin.fut.persist.data.ptr, addr);
	assert_int_equal(f.data.op.fut.data.operation.data.memcpy.flags, 0);
	assert_int_equal(poll1(&f), FUTURE_STATE_COMPLETE);
	assert_true(f.data.fin.flags & FUTURE_CHAIN_FLAG_ENTRY_PROCESSED);
	assert_ptr_equal(FUTURE_OUTPUT(&f)->dest, addr);
	assert_int_equal(f.data.op.fut.output.result, VDM_SUCCESS);
	assert_ptr_equal(f.data.op.fut.output.output.memcpy.dest, addr);
	assert_memory_equal(addr, src, LEN);
	assert_int_equal(future_has_property(FUTURE_AS_RUNNABLE(&f),
					     FUTURE_PROPERTY_ASYNC), -1);

	f = pmem2_memset_async(map, addr + 1, 'y', 100, 0);
	assert_int_equal(poll1(&f), FUTURE_STATE_COMPLETE);
	assert_int_equal(f.data.op.fut.output.type, VDM_OPERATION_MEMSET);
	assert_ptr_equal(f.data.op.fut.output.output.memset.str, addr + 1);
	assert_int_equal(addr[0], 'x');
	assert_int_equal(addr[1], 'y');
	assert_int_equal(addr[100], 'y');
	assert_int_equal(addr[101], 'x');

	/* Overlapping, backward. */
	memcpy(addr, "0123456789", 10);
	f = pmem2_memmove_async(map, addr, addr + 2, 8, 0);
	assert_int_equal(poll1(&f), FUTURE_STATE_COMPLETE);
	assert_memory_equal(addr, "2345678989", 10);
	assert_int_equal(pmem2_map_delete(&map), 0);
}

/*
 * CACHE_LINE (pmem2_map_from_existing()): the default mover is asked for
 * durable stores and no persist step follows; PAGE (a private file map
 * is BYTE, so anonymous memory forced is not possible: from_existing
 * again): the persist step follows an unflushed copy.
 */
static void default_mover_flags(void **state)
{
	static char buf[LEN] __attribute__((aligned(4096))), src[64];
	struct pmem2_source *anon;
	struct pmem2_map *map;
	struct pmem2_future f;

	(void)state;
	assert_int_equal(pmem2_source_from_anon(&anon, LEN), 0);
	assert_int_equal(pmem2_map_from_existing(&map, anon, buf, LEN,
				PMEM2_GRANULARITY_CACHE_LINE), 0);
	memset(src, 's', sizeof(src));
	f = pmem2_memcpy_async(map, buf, src, 64, PMEM2_F_MEM_NOFLUSH);
	assert_int_equal(f.data.op.fut.data.operation.data.memcpy.flags,
			 VDM_F_MEM_DURABLE);
	assert_true(f.data.op.flags & FUTURE_CHAIN_FLAG_ENTRY_LAST);
	assert_int_equal(poll1(&f), FUTURE_STATE_COMPLETE);
	assert_memory_equal(buf, src, 64);
	assert_int_equal(pmem2_map_delete(&map), 0);

	assert_int_equal(pmem2_map_from_existing(&map, anon, buf, LEN,
				PMEM2_GRANULARITY_PAGE), 0);
	f = pmem2_memset_async(map, buf, 0, 64, 0);
	assert_int_equal(f.data.op.fut.data.operation.data.memset.flags, 0);
	assert_false(f.data.op.flags & FUTURE_CHAIN_FLAG_ENTRY_LAST);
	assert_ptr_equal(f.data.fin.fut.persist.data.ptr, buf);
	assert_int_equal(f.data.fin.fut.persist.data.size, 64);
	assert_int_equal(poll1(&f), FUTURE_STATE_COMPLETE);
	assert_true(f.data.fin.flags & FUTURE_CHAIN_FLAG_ENTRY_PROCESSED);
	assert_int_equal(buf[0], 0);
	assert_int_equal(buf[63], 0);
	assert_int_equal(pmem2_map_delete(&map), 0);
	pmem2_source_delete(&anon);
}

/* --- a vdm of the test's own ------------------------------------------------ */

static struct {
	struct vdm base;
	char calls[32];		/* n(ew) s(tart) c(heck) d(elete) */
	int ncalls, refusals, running, oom;
	char handle;
	const struct vdm_operation *op;
} tv;

static void *tv_new(struct vdm *vdm, const enum vdm_operation_type type)
{
	assert_ptr_equal(vdm, &tv.base);
	assert_int_equal(type, VDM_OPERATION_MEMCPY);
	tv.calls[tv.ncalls++] = 'n';
	return tv.oom ? NULL : &tv.handle;
}

static int tv_start(void *data, const struct vdm_operation *o,
		    struct future_notifier *n)
{
	assert_ptr_equal(data, &tv.handle);
	(void)n;
	tv.calls[tv.ncalls++] = 's';
	tv.op = o;
	if (tv.refusals-- > 0)
		return 1;
	memcpy(o->data.memcpy.dest, o->data.memcpy.src, o->data.memcpy.n);
	return 0;
}

static enum future_state tv_check(void *data, const struct vdm_operation *o)
{
	assert_ptr_equal(data, &tv.handle);
	assert_ptr_equal(o, tv.op);
	tv.calls[tv.ncalls++] = 'c';
	return tv.running-- > 0 ? FUTURE_STATE_RUNNING : FUTURE_STATE_COMPLETE;
}

static void tv_delete(void *data, const struct vdm_operation *o,
		      struct vdm_operation_output *out)
{
	assert_ptr_equal(data, &tv.handle);
	tv.calls[tv.ncalls++] = 'd';
	out->type = o->type;
	out->result = VDM_SUCCESS;
	out->output.memcpy.dest = o->data.memcpy.dest;
}

static struct pmem2_map *custom_map(unsigned caps, char **addr)
{
	struct pmem2_source *src;
	struct pmem2_config *cfg;
	struct pmem2_map *map;

	memset(&tv, 0, sizeof(tv));
	tv.base = (struct vdm){ tv_new, tv_delete, tv_start, tv_check, caps,
				NULL };
	assert_int_equal(pmem2_source_from_anon(&src, LEN), 0);
	assert_int_equal(pmem2_config_new(&cfg), 0);
	assert_int_equal(pmem2_config_set_required_store_granularity(cfg,
				PMEM2_GRANULARITY_PAGE), 0);
	assert_int_equal(pmem2_config_set_vdm(cfg, &tv.base), 0);
	assert_int_equal(pmem2_map_new(&map, cfg, src), 0);
	pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);
	*addr = pmem2_map_get_address(map);
	return map;
}

/*
 * op_new() at the call; op_start() on the first poll and again while it
 * refuses; op_check() from then on until complete; op_delete() once.
 */
static void custom_vdm_calls(void **state)
{
	char *addr, src[32] = "through the program's own mover";
	struct pmem2_map *map = custom_map(0, &addr);
	struct pmem2_future f;

	(void)state;
	tv.refusals = 1;
	tv.running = 1;
	f = pmem2_memcpy_async(map, addr, src, sizeof(src), 0);
	assert_string_equal(tv.calls, "n");
	assert_int_equal(poll1(&f), FUTURE_STATE_RUNNING);
	assert_string_equal(tv.calls, "ns");
	assert_int_equal(poll1(&f), FUTURE_STATE_RUNNING);
	assert_string_equal(tv.calls, "nssc");
	assert_int_equal(poll1(&f), FUTURE_STATE_COMPLETE);
	assert_string_equal(tv.calls, "nssccd");
	assert_int_equal(poll1(&f), FUTURE_STATE_COMPLETE);
	assert_string_equal(tv.calls, "nssccd");
	assert_memory_equal(addr, src, sizeof(src));
	assert_ptr_equal(f.data.op.fut.output.output.memcpy.dest, addr);
	assert_int_equal(pmem2_map_delete(&map), 0);
}

/* No memory for the operation: complete at once, VDM_ERROR_OUT_OF_MEMORY. */
static void custom_vdm_oom(void **state)
{
	char *addr, src[8] = "abcdefg";
	struct pmem2_map *map = custom_map(1, &addr);
	struct pmem2_future f;

	(void)state;
	tv.oom = 1;
	f = pmem2_memcpy_async(map, addr, src, sizeof(src), 0);
	assert_int_equal(f.data.op.fut.base.context.state,
			 FUTURE_STATE_COMPLETE);
	assert_int_equal(f.data.op.fut.output.result, VDM_ERROR_OUT_OF_MEMORY);
	/* PMDK's chain would call the operation's NULL has_property. */
	assert_int_equal(future_has_property(FUTURE_AS_RUNNABLE(&f),
					     FUTURE_PROPERTY_ASYNC), 0);
	assert_int_equal(poll1(&f), FUTURE_STATE_COMPLETE);
	assert_string_equal(tv.calls, "n");
	assert_int_equal(addr[0], 0);
	assert_int_equal(pmem2_map_delete(&map), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(default_mover_byte),
		cmocka_unit_test(default_mover_flags),
		cmocka_unit_test(custom_vdm_calls),
		cmocka_unit_test(custom_vdm_oom),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
