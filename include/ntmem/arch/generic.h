/* SPDX-License-Identifier: MIT */
/*
 * ntmem/arch/generic.h - portable fallback for architectures without a
 * non-temporal store backend: the fixed-size path becomes memcpy() plus a
 * write-back, as the kernel's memcpy_nontemporal() falls back to memcpy().
 */
#ifndef NTMEM_ARCH_GENERIC_H
#define NTMEM_ARCH_GENERIC_H

#include <ntmem/hook.h>

#define NTM_ARCH_HAS_NT_STORES 0

/*
 * A full sequentially consistent fence: the strongest ordering portable C
 * offers, so write-backs issued before it are ordered before later stores.
 */
static inline __attribute__((always_inline)) void ntm_arch_drain(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	NTM_REC(NTM_REC_FENCE, NULL, 0);
}

#endif /* NTMEM_ARCH_GENERIC_H */
