// SPDX-License-Identifier: MIT
/*
 * portable/cpu.c - feature detection where ntmem has no arch backend:
 * no feature bits, so only the generic variant and no write-back.
 */
#include <unistd.h>

#include "cpu.h"

uint32_t ntm_cpu_detect(void)
{
	return 0;
}

size_t ntm_cpu_line_size(void)
{
	long line = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);

	return line > 0 ? (size_t)line : 64;
}

/* No vendor rules off x86-64 (cpu.h). */
enum ntm_cpu_vendor ntm_cpu_vendor(void)
{
	return NTM_VENDOR_OTHER;
}

unsigned ntm_cpu_family(void)
{
	return 0;
}
