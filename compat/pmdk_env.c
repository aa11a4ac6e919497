// SPDX-License-Identifier: MIT
/*
 * pmdk_env.c - the copy and flush variables PMDK's libpmem and libpmem2
 * read at load, for every drop-in (pmdk_env.h).
 */
#include <stdio.h>
#include <stdlib.h>

#include <ntmem.h>
#include <ntmem/embed.h>

#include "pmdk_env.h"

int pmdk_env_int(const char *name, int unset)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : unset;
}

void pmdk_copy_env_read(struct pmdk_copy_env *env, const char *lib)
{
	const char *thr = getenv("PMEM_MOVNT_THRESHOLD");
	int isa_cap = -1, flush_cap = -1;

	env->movnt_threshold = 256;
	if (thr && *thr && atoll(thr) >= 0)	/* negative values are ignored */
		env->movnt_threshold = (size_t)atoll(thr);
	env->no_movnt = pmdk_env_int("PMEM_NO_MOVNT", 0) != 0;

	if (pmdk_env_int("PMEM_AVX512F", 1) == 0)
		isa_cap = NTM_ISA_AVX2;
	if (pmdk_env_int("PMEM_AVX", 1) == 0)
		isa_cap = NTM_ISA_SSE2;
	if (pmdk_env_int("PMEM_NO_CLWB", 0))
		flush_cap = pmdk_env_int("PMEM_NO_CLFLUSHOPT", 0) ?
				    NTM_FLUSH_CLFLUSH : NTM_FLUSH_CLFLUSHOPT;
	/*
	 * Only a constructor calls this, before anything has copied, so the
	 * choice is not made yet; should a program's own constructor have
	 * copied first (-EBUSY), PMDK's ceilings cannot apply any more and
	 * NTMEM_VERBOSE says so.
	 */
	if (ntm_dispatch_set_caps(isa_cap, flush_cap) && ntm_verbose())
		fprintf(stderr, "ntmem %s: PMEM_* ceilings not applied: %s\n",
			lib, ntm_errmsg());
}
