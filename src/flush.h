/* SPDX-License-Identifier: MIT */
/*
 * flush.h - one write-back loop per instruction (src/<arch>/flush.c).
 * Never installed.
 */
#ifndef NTMEM_FLUSH_H
#define NTMEM_FLUSH_H

#include <stddef.h>
#include <stdint.h>

#include "ntmem/variant.h"

typedef void (*ntm_flush_fn)(const void *p, size_t n, size_t line);
/* The loop for @insn, or NULL when there is nothing to write back. */
ntm_flush_fn ntm_flush_impl(enum ntm_flush_insn insn);
/*
 * The write-back-and-invalidate loop for a CPU with @features (ntm_cpu_feature
 * bits), including the barrier that completes it before any later load or
 * store (ntm_invalidate()); NULL when this architecture has none (its
 * memory is taken to be coherent with every other agent).
 */
ntm_flush_fn ntm_invalidate_impl(uint32_t features);

#endif /* NTMEM_FLUSH_H */
