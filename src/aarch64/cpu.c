// SPDX-License-Identifier: MIT
/*
 * aarch64/cpu.c - CPU feature detection from the kernel's hwcaps
 * (getauxval(AT_HWCAP), AT_HWCAP2) and the cache line size from CTR_EL0.
 *
 * The hwcaps are trusted as they are: the library never probes an
 * instruction by executing it under a SIGILL handler. An emulator that
 * advertises a feature it cannot run is the emulator's to cap: qemu-user
 * 7.2 (-cpu max) reports HWCAP_DCPOP and HWCAP2_DCPODP yet raises SIGILL
 * on DC CVAP and DC CVADP in user mode (DC CVAC, DC CIVAC and STNP run),
 * so the tests run there with NTMEM_FLUSH=cvac (tests/meson.build).
 */
#include <sys/auxv.h>

#include "cpu.h"
#include "ntmem/variant.h"

/* Linux's arm64 hwcap bits (uapi asm/hwcap.h), for older libc headers. */
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1ul << 1)
#endif
#ifndef HWCAP_DCPOP
#define HWCAP_DCPOP (1ul << 16)
#endif
#ifndef HWCAP2_DCPODP
#define HWCAP2_DCPODP (1ul << 0)
#endif

uint32_t ntm_cpu_detect(void)
{
	unsigned long hw = getauxval(AT_HWCAP);
	unsigned long hw2 = getauxval(AT_HWCAP2);
	/*
	 * DC CVAC and DC CIVAC are Armv8.0 and Linux lets EL0 execute data
	 * cache instructions by VA (it sets SCTLR_EL1.UCI, and emulates
	 * them where an erratum makes it trap them): always usable.
	 */
	uint32_t f = NTM_CPU_DC_CVAC;

	if (hw & HWCAP_ASIMD)
		f |= NTM_CPU_ASIMD;
	if (hw & HWCAP_DCPOP)
		f |= NTM_CPU_DCPOP;
	if (hw2 & HWCAP2_DCPODP)
		f |= NTM_CPU_DCPODP;
	return f;
}

/*
 * CTR_EL0.DminLine (bits 19:16): log2 of the words (4 bytes) in the
 * smallest data cache line of the system, so a loop stepping by it never
 * skips a line. EL0 reads it directly where Linux allows (SCTLR_EL1.UCT)
 * and through the kernel's emulation where it traps.
 */
size_t ntm_cpu_line_size(void)
{
	uint64_t ctr;

	__asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
	return (size_t)4 << ((ctr >> 16) & 0xf);
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
