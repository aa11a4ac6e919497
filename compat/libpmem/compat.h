/* SPDX-License-Identifier: MIT */
/*
 * compat.h - what the files of the libpmem drop-in share.
 */
#ifndef NTMEM_COMPAT_LIBPMEM_H
#define NTMEM_COMPAT_LIBPMEM_H

#include <stdbool.h>
#include <stddef.h>

/* PMDK's environment, read once when PMDK reads it (env.c). */
struct pmem_env {
	int is_pmem_force;	/* PMEM_IS_PMEM_FORCE: -1 none, 0 or 1; lazy */
	size_t movnt_threshold;	/* PMEM_MOVNT_THRESHOLD, default 256 */
	bool no_movnt;		/* PMEM_NO_MOVNT=1: temporal copies only */
	bool no_flush;		/* PMEM_NO_FLUSH=1, or auto flush detected */
	bool verbose;		/* NTMEM_VERBOSE: ntm_verbose() */
};

extern struct pmem_env pmem_env;

/* Read the environment and cap ntmem's choices; called by the constructor. */
void pmem_env_read(void);

/*
 * PMEM_IS_PMEM_FORCE as -1 (detect), 0 or 1, read from the environment on
 * the first call (PMDK reads it at the first pmem_is_pmem(), not at load).
 */
int pmem_env_is_pmem_force(void);

/* The thread's pmem_errormsg() text (version.c); errno is left as given. */
void pmem_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The auto-flush (eADR) answer of pmem_has_auto_flush(), from sysfs. */
int pmem_auto_flush_detect(void);

#endif
