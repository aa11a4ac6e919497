/* SPDX-License-Identifier: MIT */
/*
 * watch/watch.h - what the checker of `ntmem check` (src/record/watch/watch.c)
 * and its preload shim (preload.c) share: whether the checker is on, and
 * the table of what the shim asks it. Private to src/record/; never
 * installed. The library and the drop-ins tell the checker of their
 * mappings through the recorder's events (ntmem/hook.h), not here.
 *
 * The checker exists only in the recorder build (NTM_RECORD) and does
 * nothing until NTMEM_CHECK_WATCH is set in the environment (ntmem check
 * sets it).
 */
#ifndef NTMEM_WATCH_H
#define NTMEM_WATCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ntmem/hook.h"

#ifdef NTM_RECORD

/* Non-zero once the checker is on; never turned off. */
extern int ntm_watch_on;

#define NTM_WATCH_ON() __builtin_expect(__atomic_load_n(&ntm_watch_on, \
					__ATOMIC_RELAXED), 0)

/*
 * The library tells the checker of its mappings through the recorder's
 * one event door (NTM_REC_MAPPING(), ntmem/hook.h), as of its stores,
 * write-backs and fences: every event reaches the checker through the
 * recorder's sink list (src/record/rec_sink.h), first of its sinks, once the
 * checker has started. No hook here.
 */

#endif /* NTM_RECORD */

/*
 * What the preload shim (src/record/watch/preload.c, unversioned, so it can stand
 * in front of glibc's versioned symbols) asks the checker. The checker
 * hands a table to the shim's ntm_watch_preload_register() when it starts;
 * a program run without the shim has no interposition (documented).
 */

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
	/* sigaction(sig, ...) of the program, for every signal: SIGSEGV's
	 * action is kept, not installed; a fatal signal's SIG_DFL has the
	 * checker's handler stand in, which judges, then dies of it; no
	 * handler's sa_mask blocks SIGSEGV in fact. */
	int (*signal_action)(int sig, const struct sigaction *act,
			     struct sigaction *old);
	/*
	 * The program's pthread_sigmask() or sigprocmask() (libc's @real):
	 * SIGSEGV stays open in fact; the program gets and is told the
	 * mask it asked for (watch_signals.c).
	 */
	int (*set_mask)(int how, const sigset_t *set, sigset_t *old,
		       int (*real)(int, const sigset_t *, sigset_t *));
	/* Whether the calling thread's mask blocks SIGSEGV, as the program
	 * set it; a new thread starts, inheriting @inherit. */
	bool (*segv_blocked)(void);
	void (*thread_start)(bool inherit);
	/* A system call is about to store into [p, p + n). */
	void (*will_store)(void *p, size_t n);
	/* munmap(p, n) is about to run. */
	void (*will_unmap)(void *p, size_t n);
	/* mmap() returned @p, a writable shared mapping of file @fd. */
	void (*mapped)(void *p, size_t n, int prot, int flags, int fd,
		       off_t off);
	/* The program's msync(p, n, MS_SYNC) returned 0. */
	void (*synced)(void *p, size_t n);
	/* The program's fsync(@fd) or fdatasync(@fd) returned 0; with
	 * @whole_fs, syncfs(@fd): every file of its file system; @fd -1:
	 * sync(), every file. */
	void (*file_synced)(int fd, bool whole_fs);
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
