/* SPDX-License-Identifier: MIT */
/*
 * cpu.h - what the CPU offers, read with no side effects (src/<arch>/cpu.c).
 * Never installed.
 */
#ifndef NTMEM_CPU_H
#define NTMEM_CPU_H

#include <stddef.h>
#include <stdint.h>

/*
 * Code that runs while the library is being relocated (copy.c's IFUNC
 * resolvers and ntm_cpu_detect(), which they call): before any sanitizer
 * or coverage runtime is set up, so it must not be instrumented, and
 * calls nothing that is.
 */
#if defined(__clang__)
#define NTM_EARLY \
	__attribute__((no_sanitize("address", "thread", "undefined", "coverage")))
#else
#define NTM_EARLY \
	__attribute__((no_sanitize_address, no_sanitize_thread, no_sanitize_undefined))
#endif

/* Feature bits (enum ntm_cpu_feature) of this CPU: CPUID/XGETBV, hwcaps. */
NTM_EARLY uint32_t ntm_cpu_detect(void);
/* Cache-line size the CPU reports for write-backs, or 64 when it says nothing. */
size_t ntm_cpu_line_size(void);

/* CPU vendors the copy policy tells apart (copy_policy.h). */
enum ntm_cpu_vendor { NTM_VENDOR_OTHER, NTM_VENDOR_INTEL, NTM_VENDOR_AMD };

/* This CPU's vendor: cpuid leaf 0's string on x86-64; NTM_VENDOR_OTHER
 * elsewhere. */
enum ntm_cpu_vendor ntm_cpu_vendor(void) __attribute__((visibility("hidden")));
/*
 * This CPU's family as cpuid leaf 1 gives it (the base family, plus the
 * extended one where the base is 0xf: 25 for Zen 3 and Zen 4, 26 for Zen
 * 5, 6 for every Intel core since the Pentium Pro); 0 off x86-64.
 */
unsigned ntm_cpu_family(void) __attribute__((visibility("hidden")));

#endif /* NTMEM_CPU_H */
