/* SPDX-License-Identifier: MIT */
/*
 * copy_contract.h - what ntmem/copy.h promises of the copy policy, restated
 * for the tests from the contract and the CPU (read with cpuid), never
 * taken from the library: the tests that check what the library reports
 * (test_introspect.c) and what it leaves dirty (test_record_copy.c)
 * compare it with this.
 */
#ifndef NTMEM_TEST_COPY_CONTRACT_H
#define NTMEM_TEST_COPY_CONTRACT_H

#include <stdbool.h>
#include <stddef.h>

#include <ntmem/variant.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#if defined(__x86_64__)
/* cpuid's vendor is "AuthenticAMD" or "GenuineIntel", and its family. */
static inline void tu_cpu_id(bool *amd, bool *intel, unsigned *family)
{
	unsigned a, b, c, d;

	__cpuid(0, a, b, c, d);
	*amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;
	*intel = b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e;
	__cpuid(1, a, b, c, d);
	*family = (a >> 8) & 0xf;
	if (*family == 0xf)
		*family += (a >> 20) & 0xff;
}
#endif

/*
 * The short size of a variant of ISA @isa: below it ntm_memcpy_nt() into
 * a destination that is not 8-byte aligned is an ordinary copy. By the
 * store width (64 bytes: 256, 32: 512, 16: 1024; the generic variant and
 * aarch64's NEON: 256), and on AMD's family 26 (Zen 5) and later at
 * least 768.
 */
static inline size_t tu_nt_short_unaligned(enum ntm_isa isa)
{
#if defined(__x86_64__)
	bool amd, intel;
	unsigned family;
	size_t n = isa == NTM_ISA_AVX512 ? 256 : isa == NTM_ISA_AVX2 ? 512 :
		   isa == NTM_ISA_SSE2 ? 1024 : 256;

	if (isa != NTM_ISA_AVX512 && isa != NTM_ISA_AVX2)
		return n;
	tu_cpu_id(&amd, &intel, &family);
	return amd && family >= 26 && n < 768 ? 768 : n;
#else
	(void)isa;
	return 256;
#endif
}


/*
 * NTMEM_NT_THRESHOLD's default: 1536 on Intel, 3072 on AMD's family 26
 * (Zen 5) and later, 256 elsewhere, capped at glibc's REP MOVSB threshold
 * @rep_movsb (0: none).
 */
static inline size_t tu_nt_threshold_default(size_t rep_movsb)
{
	size_t t = 256;
#if defined(__x86_64__)
	bool amd, intel;
	unsigned family;

	tu_cpu_id(&amd, &intel, &family);
	if (intel)
		t = 1536;
	else if (amd && family >= 26)
		t = 3072;
#endif
	return rep_movsb && rep_movsb < t ? rep_movsb : t;
}

#endif /* NTMEM_TEST_COPY_CONTRACT_H */
