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
 * flush functions then; later changes have no effect): the variables
 * libpmem2 reads too, through the drop-ins' one reader (compat/pmdk_env.h:
 * PMEM_MOVNT_THRESHOLD, PMEM_NO_MOVNT, PMEM_NO_CLWB, PMEM_NO_CLFLUSHOPT,
 * PMEM_AVX, PMEM_AVX512F), and libpmem's own
 *   PMEM_NO_FLUSH=1|0        skip / force cache flushes (default: skip
 *                            only when the platform flushes on power loss)
 * PMDK also reads PMEM_MMAP_HINT (a mapping address ntmem does not take):
 * ignored.
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
#include "pmdk_env.h"

struct pmem_env pmem_env = { .is_pmem_force = -1, .movnt_threshold = 256 };

void pmem_env_read(void)
{
	struct pmdk_copy_env copy;
	int no_flush;

	no_flush = pmdk_env_int("PMEM_NO_FLUSH", -1);
	pmem_env.no_flush = no_flush < 0 ? pmem_auto_flush_detect() == 1
					 : no_flush != 0;
	pmem_env.verbose = ntm_verbose();
	/* Only the constructor calls this, before anything has copied. */
	pmdk_copy_env_read(&copy, "libpmem");
	pmem_env.movnt_threshold = copy.movnt_threshold;
	pmem_env.no_movnt = copy.no_movnt;
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
