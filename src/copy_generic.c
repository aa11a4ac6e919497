// SPDX-License-Identifier: MIT
/*
 * copy_generic.c - the portable variant: ordinary copies, then a write-back
 * of the destination lines where the contract requires none left dirty.
 * It is what the kernel's memcpy_nontemporal() falls back to on an
 * architecture without a non-temporal backend, and the baseline that every
 * other variant must beat.
 */
#include "dispatch.h"

void *ntm_generic_memcpy_nt(void *dst, const void *src, size_t n)
{
	/*
	 * A hint only: without NT stores, a plain copy is the honest answer.
	 * Its lines stay dirty, as ntmem/copy.h says of this variant.
	 */
	ntm_store_copy(dst, src, n);
	return dst;
}

void *ntm_generic_memcpy_flush(void *dst, const void *src, size_t n)
{
	ntm_store_copy(dst, src, n);
	ntm_flush_lines(dst, n);
	return dst;
}

void *ntm_generic_memset_flush(void *dst, int c, size_t n)
{
	ntm_store_fill(dst, c, n);
	ntm_flush_lines(dst, n);
	return dst;
}
