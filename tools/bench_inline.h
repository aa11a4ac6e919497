/* SPDX-License-Identifier: MIT */
/*
 * bench_inline.h - timed loops over the header's inline paths, built
 * once per instruction set a caller may compile with (bench_inline.c).
 */
#ifndef NTMEM_TOOL_BENCH_INLINE_H
#define NTMEM_TOOL_BENCH_INLINE_H

#include <stdbool.h>
#include <stddef.h>

/* One run of a copy benchmark: count copies of size bytes into slots. */
struct loop {
	unsigned char *dst;
	const unsigned char *src;
	size_t size;
	size_t count;
};

typedef void (*inline_loop_fn)(const struct loop *l);

/* The loop for @size as a default (baseline ISA) build inlines it. */
inline_loop_fn inline_loop_baseline(size_t size);
/* The same, compiled with -mavx: what a -march=native build gets. */
inline_loop_fn inline_loop_avx(size_t size);

/*
 * A loop of ntm_memcpy_nt() (or with @flush, ntm_memcpy_flush()) calls
 * with a size only known at run time, through the header's front doors
 * as each build compiles them: any size.
 */
inline_loop_fn variable_loop_baseline(bool flush);
inline_loop_fn variable_loop_avx(bool flush);

#endif
