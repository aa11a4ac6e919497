// SPDX-License-Identifier: MIT
/*
 * copy.c - the exported, dispatched entry points of the copy primitives:
 * one indirect call through the table chosen by dispatch.c. Constant sizes
 * never get here; ntmem/inline.h expands them in the caller.
 */
#include "internal.h"

void *ntm_memcpy_nt(void *dst, const void *src, size_t n)
{
	return ntm_dispatch()->memcpy_nt(dst, src, n);
}

void *ntm_memcpy_flush(void *dst, const void *src, size_t n)
{
	return ntm_dispatch()->memcpy_flush(dst, src, n);
}

void *ntm_memset_nt(void *dst, int c, size_t n)
{
	return ntm_dispatch()->memset_nt(dst, c, n);
}

void ntm_flush(const void *p, size_t n)
{
	ntm_flush_lines(p, n);
}

void ntm_drain(void)
{
	ntm_arch_drain();
}

void ntm_invalidate(const void *p, size_t n)
{
	const struct ntm_dispatch *d = ntm_dispatch();

	if (d->invalidate && n)
		d->invalidate(p, n, d->line);
}

void ntm_persist(const void *p, size_t n)
{
	ntm_flush_lines(p, n);
	/* Orders the write-backs above before any later store. */
	ntm_arch_drain();
}
