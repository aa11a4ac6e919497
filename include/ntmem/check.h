/* SPDX-License-Identifier: MIT */
/*
 * ntmem/check.h - the recorder: a shadow model of the CPU cache that every
 * store, write-back and fence of the recorder build reports to, so a
 * durability claim is checked by machine instead of by comparing bytes
 * (a byte comparison cannot see a missing write-back or fence).
 *
 * Link with the recorder build of the library (pkg-config ntmem-check, or
 * the ntmem_check target in the build tree) and compile the code under
 * test with -DNTM_RECORD=1 so the constant-size inline paths record too.
 * In the ordinary library these functions do not exist.
 *
 * The model, per 8-byte unit of a tracked range (the unit an aligned
 * store updates atomically on x86-64), after DESIGN.md's crash model:
 *
 *   CLEAN     not stored since tracking began: what it was is durable
 *   DIRTY     an ordinary store left it in the cache
 *   WB        its line was written back after the store, not yet fenced
 *   NT        a non-temporal store wrote it, not yet fenced
 *   DURABLE   stored, then written back (or NT-stored) and fenced
 *
 * Threads: a unit that is WB or NT belongs to the thread whose write-back
 * or NT store made it so; that thread's fence makes it DURABLE, another
 * thread's does not. A later store makes any unit DIRTY again. A
 * write-back of a line moves its DIRTY units to WB, whoever stored them.
 *
 * The model knows the persistence domain (ntmem/ns.h). In a
 * memory_controller domain (or none) the above holds: a DIRTY unit needs
 * a write-back. In a cpu_cache domain (eADR, CXL GPF) the cache is inside
 * the domain: a DIRTY unit belongs to the thread that stored it and that
 * thread's fence makes it DURABLE, written back or not. The domain is the
 * process's (ntm_persist_domain_active(): NTMEM_PERSIST_DOMAIN) unless
 * ntm_check_set_domain() says otherwise.
 */
#ifndef NTMEM_CHECK_H
#define NTMEM_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ntmem/hook.h>
#include <ntmem/ns.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NTM_CHECK_UNIT 8	/* bytes per unit of the model */
#define NTM_CHECK_LINE 64	/* bytes per cache line of the model */

enum ntm_check_state {
	NTM_CHECK_CLEAN = 0,
	NTM_CHECK_DIRTY = 1,
	NTM_CHECK_WB = 2,
	NTM_CHECK_NT = 3,
	NTM_CHECK_DURABLE = 4,
	NTM_CHECK_NSTATES = 5,
};

/** ntm_check_state_name() - "clean", "dirty", "wb", "nt", "durable" */
const char *ntm_check_state_name(enum ntm_check_state s);

/**
 * ntm_check_track() - shadow [@p, @p + @n): its present contents are taken
 * as durable (every unit CLEAN). @p and @n need not be aligned; the units
 * and lines that overlap the range are tracked. Ranges must not overlap.
 *
 * Return: 0, -EINVAL (NULL, zero length, overlap), -ENOMEM (no memory for
 * the shadow, or 64 ranges are tracked already).
 */
int ntm_check_track(void *p, size_t n);

/** ntm_check_untrack() - forget the range that starts at @p */
void ntm_check_untrack(void *p);

/**
 * ntm_check_set_domain() - the persistence domain of the model from now
 * on, for every tracked range: NTM_PERSIST_CPU_CACHE makes a thread's
 * stores durable at its fence; NTM_PERSIST_MEMORY_CONTROLLER or
 * NTM_PERSIST_NONE needs them written back too. Without a call, the
 * domain is taken at ntm_check_start() from ntm_persist_domain_active().
 * Set it before ntm_check_start() (or just after ntm_check_reset()),
 * while no other thread records.
 *
 * Return: 0 or -EINVAL (not an enum ntm_persist_domain).
 */
int ntm_check_set_domain(enum ntm_persist_domain domain);

/** ntm_check_domain() - the model's domain (as ntm_check_set_domain()) */
enum ntm_persist_domain ntm_check_domain(void);

/**
 * ntm_check_start() / ntm_check_stop() - record events, or ignore them.
 * Tracking is kept across stop/start; ntm_check_reset() marks every
 * tracked unit CLEAN again (its present contents durable) and zeroes the
 * write-back counts.
 */
void ntm_check_start(void);
void ntm_check_stop(void);
void ntm_check_reset(void);

/* What a range looks like now. */
struct ntm_check_counts {
	size_t units[NTM_CHECK_NSTATES];	/* units in each state */
	size_t lines;			/* lines that overlap the range */
	size_t lines_written_back;	/* of those, written back at least once
					 * since tracking or the last reset */
	size_t writebacks;		/* write-back events on those lines */
	/* The first unit (lowest address) in the worst state, for messages. */
	uintptr_t first_bad;		/* 0 when every unit is CLEAN/DURABLE */
	enum ntm_check_state first_bad_state;
};

/**
 * ntm_check_query() - count the states of the units overlapping
 * [@p, @p + @n), which must lie inside tracked ranges.
 *
 * Return: 0 or -EINVAL (not tracked).
 */
int ntm_check_query(const void *p, size_t n, struct ntm_check_counts *out);

/**
 * ntm_check_durable() - every unit of the range is CLEAN or DURABLE.
 * ntm_check_not_dirty() - no unit of the range is DIRTY.
 *
 * On false, ntm_check_message() describes the first offending unit
 * (address, offset in the range, state, and the code that last stored it).
 */
bool ntm_check_durable(const void *p, size_t n);
bool ntm_check_not_dirty(const void *p, size_t n);

/** ntm_check_message() - why the last check of this thread said false */
const char *ntm_check_message(void);

/**
 * ntm_check_store() - record an ordinary store the recorder cannot see (a
 * plain assignment in the code under test): [@p, @p + @n) becomes DIRTY.
 */
void ntm_check_store(const void *p, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_CHECK_H */
