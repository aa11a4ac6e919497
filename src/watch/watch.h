/* SPDX-License-Identifier: MIT */
/*
 * watch/watch.h - how the library tells the checker of `ntmem check`
 * (src/watch/watch.c) about pmem mappings and persistence events. Private;
 * never installed.
 *
 * The checker exists only in the recorder build (NTM_RECORD) and does
 * nothing until NTMEM_CHECK_WATCH is set in the environment (ntmem check
 * sets it). In the ordinary library every hook below is an empty inline
 * function; in the recorder build it is one load of a flag when the
 * checker is off.
 */
#ifndef NTMEM_WATCH_H
#define NTMEM_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ntmem/hook.h"

#ifdef NTM_RECORD

/* Non-zero once the checker is on; never turned off. */
extern int ntm_watch_on;

void ntm_watch_map_slow(void *p, size_t n, const char *path, off_t off);
void ntm_watch_unmap_slow(const void *p, size_t n, const char *why);
void ntm_watch_synced_slow(const void *p, size_t n);

#define NTM_WATCH_ON() __builtin_expect(__atomic_load_n(&ntm_watch_on, \
					__ATOMIC_RELAXED), 0)

/* A writable mapping of @path (file offset @off) that holds pmem. */
static inline void ntm_watch_map(void *p, size_t n, const char *path,
				 off_t off)
{
	if (NTM_WATCH_ON())
		ntm_watch_map_slow(p, n, path, off);
}

/*
 * [@p, @p + @n) is about to be unmapped by @why ("pmem_unmap", "munmap",
 * "ntm_ns_close"): its lines that are not durable are reported.
 */
static inline void ntm_watch_unmap(const void *p, size_t n, const char *why)
{
	if (NTM_WATCH_ON())
		ntm_watch_unmap_slow(p, n, why);
}

/* msync() made the range durable (a file without DAX). */
static inline void ntm_watch_synced(const void *p, size_t n)
{
	if (NTM_WATCH_ON())
		ntm_watch_synced_slow(p, n);
}

/*
 * Every recorded event (ntm_rec_event()) reaches the checker through the
 * recorder's sink list (src/rec_sink.h), first of its sinks, once the
 * checker has started: no hook here.
 */

#else

static inline void ntm_watch_map(void *p, size_t n, const char *path,
				 off_t off)
{
	(void)p, (void)n, (void)path, (void)off;
}

static inline void ntm_watch_unmap(const void *p, size_t n, const char *why)
{
	(void)p, (void)n, (void)why;
}

static inline void ntm_watch_synced(const void *p, size_t n)
{
	(void)p, (void)n;
}

#endif /* NTM_RECORD */

/*
 * What the preload shim (src/watch/preload.c, unversioned, so it can stand
 * in front of glibc's versioned symbols) asks the checker. The checker
 * hands a table to the shim's ntm_watch_preload_register() when it starts;
 * a program run without the shim has no interposition (documented).
 */
struct sigaction;

/* What the shim tells the checker of libpmemobj's transaction calls. */
enum ntm_watch_obj {
	/* A call into libpmemobj (@name) starts: what the program stored
	 * until now is its own; what is stored until the call returns is
	 * libpmemobj's. @n: NTM_WATCH_OBJ_* flags. */
	NTM_WATCH_OBJ_ENTER,
	NTM_WATCH_OBJ_LEAVE,		/* ...and returns */
	NTM_WATCH_OBJ_BEGUN,		/* pmemobj_tx_begin(@p) returned @n */
	NTM_WATCH_OBJ_ADD,		/* [@p, @p + @n) is being added */
	NTM_WATCH_OBJ_ALLOCATED,	/* [@p, @p + @n) was allocated */
	NTM_WATCH_OBJ_COMMIT,		/* pmemobj_tx_commit() starts */
	NTM_WATCH_OBJ_ENDED,		/* pmemobj_tx_end() returned; @n stage */
	/* As ADD, with POBJ_XADD_NO_FLUSH: the commit does not write the
	 * range back, the program does. */
	NTM_WATCH_OBJ_ADD_NO_FLUSH,
	/* One of libpmemobj's persistence functions (pmemobj_persist(),
	 * pmemobj_memcpy_persist(), ...) starts: what it writes back and
	 * fences the program asked for. */
	NTM_WATCH_OBJ_ASK,
	NTM_WATCH_OBJ_ASKED,		/* ...and returns */
};

/* ENTER from the program itself (pmemobj_tx_process(), pmemobj_tx_end(),
 * which libpmemobj never calls): a longjmp() of an abort may have skipped
 * the LEAVEs of the calls it left. */
#define NTM_WATCH_OBJ_FROM_PROGRAM 1u
/* ENTER with the thread's transaction stage not TX_STAGE_WORK: aborted
 * or committed, so its later stores are not the transaction's. */
#define NTM_WATCH_OBJ_NOT_WORK 2u

struct ntm_watch_ops {
	/* Whether the checker keeps the program's action for @sig. */
	bool (*keeps_signal)(int sig);
	/* sigaction(sig, ...) of the program for such a signal: SIGSEGV's
	 * action is kept, not installed; a fatal signal's SIG_DFL has the
	 * checker's handler stand in, which judges, then dies of it. */
	int (*signal_action)(int sig, const struct sigaction *act,
			     struct sigaction *old);
	/* A system call is about to store into [p, p + n). */
	void (*will_store)(void *p, size_t n);
	/* munmap(p, n) is about to run. */
	void (*will_unmap)(void *p, size_t n);
	/* The program's mprotect() and mremap(), done by the checker
	 * (which calls libc's): results and errno are the kernel's. */
	int (*protect)(void *p, size_t n, int prot);
	void *(*remap)(void *old, size_t olen, size_t nlen, int flags,
		       void *want);
	/* _exit() or _Exit() (@name) is about to end the process. */
	void (*ending)(const char *name, int status);
	/* libpmemobj is about to use the PMEMmutex, PMEMrwlock or PMEMcond
	 * at @lock (pmemobj_mutex_lock(), ...): its 64 bytes are run-time
	 * state, rebuilt at each pmemobj_open(). */
	void (*pmemobj_lock)(const void *lock);
	/* A libpmemobj transaction call (enum ntm_watch_obj). */
	void (*pmemobj_tx)(enum ntm_watch_obj what, const void *p, size_t n,
			   const char *name);
};

#endif /* NTMEM_WATCH_H */
