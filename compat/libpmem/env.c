// SPDX-License-Identifier: MIT
/*
 * env.c - the one place the drop-in reads PMDK's environment variables,
 * each at the moment PMDK 1.12.1 reads it, so a program that calls
 * setenv() before its first libpmem call gets PMDK's answer.
 *
 * At the first pmem_is_pmem() call (also the one pmem_map_file() makes
 * for its is_pmem result), as libpmem(7) documents:
 *   PMEM_IS_PMEM_FORCE=0|1   pmem_is_pmem() answers never / always; any
 *                            other value (atoi) means detection
 *
 * When the library is loaded (PMDK's constructor chooses its copy and
 * flush functions then; later changes have no effect):
 *   PMEM_MOVNT_THRESHOLD=N   flag-less copies of N bytes and more are
 *                            non-temporal (default 256; 0: always)
 *   PMEM_NO_MOVNT=1          never non-temporal: copy, then flush
 *   PMEM_NO_FLUSH=1|0        skip / force cache flushes (default: skip
 *                            only when the platform flushes on power loss)
 *   PMEM_NO_CLWB=1           write back with CLFLUSHOPT or CLFLUSH
 *   PMEM_NO_CLFLUSHOPT=1     with PMEM_NO_CLWB: CLFLUSH
 *   PMEM_AVX=0, PMEM_AVX512F=0   no AVX (SSE2 stores) / no AVX-512
 * PMDK also reads PMEM_NO_GENERIC_MEMCPY, PMEM_MOVDIR64B and
 * PMEM_WC_WORKAROUND at load (copy kernels ntmem does not have) and
 * PMEM_MMAP_HINT (a mapping address ntmem does not take): all ignored.
 * ntmem's own NTMEM_ISA / NTMEM_FLUSH / NTMEM_VERBOSE still apply; the
 * lower ceiling wins. NTMEM_VERBOSE follows ntmem's rule (ntm_verbose():
 * 1|yes|true|on is on, 0|no|false|off or empty is off, any case), not
 * atoi(): "yes" means the same here as in the library. NTMEM_NT_THRESHOLD applies inside the non-temporal
 * copies (ntm_memcpy_flush()), never in place of PMEM_MOVNT_THRESHOLD: it
 * divides only the unaligned ones, and a program that sets no PMDK
 * variable keeps PMDK's 256 (man ntmem-libpmem(7)).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>
#include <ntmem/embed.h>

#include "compat.h"

struct pmem_env pmem_env = { .is_pmem_force = -1, .movnt_threshold = 256 };

/* "1" and other non-zero numbers are true, as PMDK's atoi() reading is. */
static int env_int(const char *name, int unset)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : unset;
}

void pmem_env_read(void)
{
	const char *thr = getenv("PMEM_MOVNT_THRESHOLD");
	int isa_cap = -1, flush_cap = -1, no_flush;

	if (thr && *thr && atoll(thr) >= 0)	/* negative values are ignored */
		pmem_env.movnt_threshold = (size_t)atoll(thr);
	pmem_env.no_movnt = env_int("PMEM_NO_MOVNT", 0) != 0;
	no_flush = env_int("PMEM_NO_FLUSH", -1);
	pmem_env.no_flush = no_flush < 0 ? pmem_auto_flush_detect() == 1
					 : no_flush != 0;
	pmem_env.verbose = ntm_verbose();

	if (env_int("PMEM_AVX512F", 1) == 0)
		isa_cap = NTM_ISA_AVX2;
	if (env_int("PMEM_AVX", 1) == 0)
		isa_cap = NTM_ISA_SSE2;
	if (env_int("PMEM_NO_CLWB", 0))
		flush_cap = env_int("PMEM_NO_CLFLUSHOPT", 0) ? NTM_FLUSH_CLFLUSH
							     : NTM_FLUSH_CLFLUSHOPT;
	/*
	 * Only the constructor calls this, before anything has copied, so
	 * the choice is not made yet; should a program's own constructor
	 * have copied first (-EBUSY), PMDK's ceilings cannot apply any more
	 * and NTMEM_VERBOSE says so.
	 */
	if (ntm_dispatch_set_caps(isa_cap, flush_cap) && pmem_env.verbose)
		fprintf(stderr, "ntmem libpmem: PMEM_* ceilings not applied: %s\n",
			ntm_errmsg());
}

static pthread_once_t force_once = PTHREAD_ONCE_INIT;

/* PMDK: set and atoi() 0 is "never" (even when empty), 1 is "always". */
static void force_read(void)
{
	const char *v = getenv("PMEM_IS_PMEM_FORCE");
	int f = v ? atoi(v) : -1;

	pmem_env.is_pmem_force = f == 0 || f == 1 ? f : -1;
}

int pmem_env_is_pmem_force(void)
{
	pthread_once(&force_once, force_read);
	return pmem_env.is_pmem_force;
}
