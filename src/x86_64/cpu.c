// SPDX-License-Identifier: MIT
/*
 * x86_64/cpu.c - CPU feature detection from CPUID and XGETBV.
 *
 * A vector ISA is usable only when the CPU has it AND the OS saves its
 * register state on a context switch (XCR0), so the AVX2 and AVX-512
 * variants also require the NTM_CPU_OS_YMM / NTM_CPU_OS_ZMM bits; checking
 * CPUID alone would crash with #UD on a kernel that disabled the state.
 */
#include <cpuid.h>

#include "cpu.h"
#include "ntmem/variant.h"

/* XCR0 bits: SSE (1) + AVX upper halves (2); opmask, ZMM0-15 hi, ZMM16-31. */
#define XCR0_YMM 0x06u
#define XCR0_ZMM 0xe0u

/* always_inline: ntm_cpu_detect() must call no instrumented function. */
static inline __attribute__((always_inline)) uint64_t read_xcr0(void)
{
	uint32_t lo, hi;

	/* XGETBV with ECX=0; only valid when CPUID says OSXSAVE. */
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * NTM_EARLY: copy.c's IFUNC resolvers call this during relocation. The
 * CPUID macros expand in place; __get_cpuid_max() is a function at -O0.
 */
NTM_EARLY uint32_t ntm_cpu_detect(void)
{
	unsigned a, b, c, d, max_leaf;
	uint32_t f = 0;

	__cpuid(0, max_leaf, b, c, d);
	if (max_leaf < 1)
		return NTM_CPU_SSE2; /* architectural on x86-64 */

	__cpuid(1, a, b, c, d);
	if (d & (1u << 26))
		f |= NTM_CPU_SSE2;
	if (d & (1u << 19))
		f |= NTM_CPU_CLFLUSH;
	if (c & (1u << 28))
		f |= NTM_CPU_AVX;
	if (c & (1u << 27)) { /* OSXSAVE: XGETBV is available */
		uint64_t xcr0 = read_xcr0();

		if ((xcr0 & XCR0_YMM) == XCR0_YMM)
			f |= NTM_CPU_OS_YMM;
		if ((xcr0 & (XCR0_YMM | XCR0_ZMM)) == (XCR0_YMM | XCR0_ZMM))
			f |= NTM_CPU_OS_ZMM;
	}

	if (max_leaf >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		if (b & (1u << 5))
			f |= NTM_CPU_AVX2;
		if (b & (1u << 9))
			f |= NTM_CPU_ERMS;
		if (b & (1u << 16))
			f |= NTM_CPU_AVX512F;
		if (b & (1u << 30))
			f |= NTM_CPU_AVX512BW;
		if (b & (1u << 23))
			f |= NTM_CPU_CLFLUSHOPT;
		if (b & (1u << 24))
			f |= NTM_CPU_CLWB;
		if (c & (1u << 28))
			f |= NTM_CPU_MOVDIR64B;
		if (d & (1u << 4))
			f |= NTM_CPU_FSRM;
	}
	return f;
}

size_t ntm_cpu_line_size(void)
{
	unsigned a, b, c, d;

	/* CPUID.1:EBX[15:8] is the CLFLUSH line size in 8-byte units. */
	if (__get_cpuid(1, &a, &b, &c, &d) && ((b >> 8) & 0xff))
		return ((b >> 8) & 0xff) * 8;
	return 64;
}

enum ntm_cpu_vendor ntm_cpu_vendor(void)
{
	unsigned a, b, c, d;

	__cpuid(0, a, b, c, d);
	/* "GenuineIntel", "AuthenticAMD" (and Hygon's Zen, "HygonGenuine") */
	if (b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e)
		return NTM_VENDOR_INTEL;
	if ((b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163) ||
	    (b == 0x6f677948 && d == 0x6e65476e && c == 0x656e6975))
		return NTM_VENDOR_AMD;
	return NTM_VENDOR_OTHER;
}

unsigned ntm_cpu_family(void)
{
	unsigned a, b, c, d, family;

	__cpuid(1, a, b, c, d);
	/* The extended family counts only on top of a base family of 0xf. */
	family = (a >> 8) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	return family;
}
