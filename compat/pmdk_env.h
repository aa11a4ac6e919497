/* SPDX-License-Identifier: MIT */
/*
 * pmdk_env.h - the environment PMDK 1.12.1's libpmem and libpmem2 both
 * read when they load, to choose their copy and flush functions: one
 * reader for every drop-in, so a variable means the same to each.
 * Compiled into each drop-in (pmdk_env_dep): each embeds its own ntmem,
 * whose dispatch it caps.
 *
 *   PMEM_MOVNT_THRESHOLD=N   flag-less copies of N bytes and more are
 *                            non-temporal (default 256; 0: always;
 *                            atoll(), a negative value is ignored)
 *   PMEM_NO_MOVNT=1          never non-temporal: copy, then flush
 *   PMEM_NO_CLWB=1           write back with CLFLUSHOPT or CLFLUSH
 *   PMEM_NO_CLFLUSHOPT=1     with PMEM_NO_CLWB: CLFLUSH
 *   PMEM_AVX=0, PMEM_AVX512F=0   no AVX (SSE2 stores) / no AVX-512
 * Numbers are read as PMDK's atoi(): "1" and any other non-zero number
 * are true. PMEM_NO_GENERIC_MEMCPY, PMEM_MOVDIR64B and PMEM_WC_WORKAROUND
 * choose copy kernels ntmem does not have: they are ignored.
 */
#ifndef NTMEM_COMPAT_PMDK_ENV_H
#define NTMEM_COMPAT_PMDK_ENV_H

#include <stdbool.h>
#include <stddef.h>

struct pmdk_copy_env {
	size_t movnt_threshold;	/* PMEM_MOVNT_THRESHOLD, default 256 */
	bool no_movnt;		/* PMEM_NO_MOVNT: temporal copies only */
};

/*
 * Read the variables into @env and cap ntmem's ISA and write-back
 * instruction (ntm_dispatch_set_caps()). Call it from the drop-in's
 * constructor, before anything copies; should the choice be made already,
 * the ceilings cannot apply and NTMEM_VERBOSE says so, naming @lib.
 */
void pmdk_copy_env_read(struct pmdk_copy_env *env, const char *lib);

/* A variable as PMDK's atoi() reads it; @unset when unset or empty. */
int pmdk_env_int(const char *name, int unset);

#endif /* NTMEM_COMPAT_PMDK_ENV_H */
