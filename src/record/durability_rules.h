/* SPDX-License-Identifier: MIT */
/*
 * durability_rules.h - the durability model's rules of when a fence makes
 * a write durable, and the one thread identity they are stated in. Shared
 * by the recorder (check.c, a shadow of the cache per 8-byte unit) and the
 * checker of `ntmem check` (watch/, a copy per line): both judge with these
 * predicates, so the two cannot come to disagree. Recorder build only;
 * never installed.
 *
 * The model (x86-64; DC CVAP and DSB likewise): a dirty line may be written
 * back at any moment; a store is durable only after its line was written
 * back (or NT-stored) AND a later SFENCE of the same thread executed. In a
 * cpu_cache persistence domain (eADR, CXL GPF) a store is durable once it
 * is globally visible: ordering is still needed, write-back is not.
 */
#ifndef NTMEM_DURABILITY_RULES_H
#define NTMEM_DURABILITY_RULES_H

#include <stdbool.h>
#include <stdint.h>

#include "ntmem/ns.h"

/* --- thread identity ------------------------------------------------------ */

/*
 * One number per thread for the whole library, from 1 (0: not numbered
 * yet), never reused. Initial-exec TLS: reading it is one load, with no
 * call into the dynamic linker, so it is safe in a signal handler (the
 * checker's SIGSEGV handler numbers the thread that faults).
 */
extern __thread uint32_t ntm_thread_self __attribute__((tls_model("initial-exec")));
extern uint32_t ntm_thread_next;

static inline uint32_t ntm_thread_number(void)
{
	if (!ntm_thread_self)
		ntm_thread_self = __atomic_fetch_add(&ntm_thread_next, 1,
						     __ATOMIC_RELAXED);
	return ntm_thread_self;
}

/* --- what a fence settles --------------------------------------------------- */

/*
 * A write-back (CLWB, CLFLUSHOPT, CLFLUSH; DC CVAP) or a non-temporal store
 * is ordered by a fence of the thread that issued it, and only by that:
 * what @wb_thread wrote back is durable at @wb_thread's next fence, and
 * another thread's fence leaves it pending.
 */
static inline bool ntm_rule_wb_settles(uint32_t wb_thread, uint32_t fence_thread)
{
	return wb_thread == fence_thread;
}

/*
 * Whether the cache is inside the persistence domain @d: then a store
 * needs no write-back, only its thread's fence (cpu_cache: eADR, CXL GPF).
 */
static inline bool ntm_rule_cache_persists(enum ntm_persist_domain d)
{
	return d == NTM_PERSIST_CPU_CACHE;
}

/*
 * A store of @store_thread not written back: in a cpu_cache domain it is
 * durable at its own thread's fence, the fence alone makes it so; in any
 * other domain no fence does (it must be written back first, and then
 * ntm_rule_wb_settles() decides).
 */
static inline bool ntm_rule_store_settles(enum ntm_persist_domain d,
					  uint32_t store_thread,
					  uint32_t fence_thread)
{
	return ntm_rule_cache_persists(d) && store_thread == fence_thread;
}

#endif /* NTMEM_DURABILITY_RULES_H */
