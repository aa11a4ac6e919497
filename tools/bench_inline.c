// SPDX-License-Identifier: MIT
/*
 * bench_inline.c - a loop per constant size, copying through the inline
 * path of ntmem/inline.h, and a loop of either front door with a run-time
 * size. Compiled twice (tools/meson.build): with the default flags as
 * inline_loop_baseline() and variable_loop_baseline(), and with -mavx as
 * the _avx pair, since the inline paths' store width depends on the flags
 * the caller compiles with.
 *
 * Each loop copies from locals, as an application's loop would: read
 * through the struct, every field would be reloaded after each copy (the
 * stores may alias it), and at ~11 cycles per 64-byte copy those loads
 * show in the result.
 */
#include <ntmem.h>

#include "bench_inline.h"

#ifndef INLINE_ISA
#error "build with -DINLINE_ISA=baseline or -DINLINE_ISA=avx"
#endif
#define ISA_NAME_(f, isa) f##_##isa
#define ISA_NAME(f, isa) ISA_NAME_(f, isa)

#define DEFINE_LOOP(N)                                         \
	static void loop_##N(const struct loop *l)             \
	{                                                      \
		unsigned char *d = l->dst;                     \
		const unsigned char *src = l->src;             \
		size_t count = l->count;                       \
		for (size_t i = 0; i < count; i++, d += N)     \
			ntm_memcpy_nt(d, src, N);              \
	}
NTM_FIXED_SIZES(DEFINE_LOOP)
#undef DEFINE_LOOP

inline_loop_fn ISA_NAME(inline_loop, INLINE_ISA)(size_t size)
{
	switch (size) {
#define LOOP_CASE(N) \
	case N:      \
		return loop_##N;
		NTM_FIXED_SIZES(LOOP_CASE)
#undef LOOP_CASE
	default:
		return 0;
	}
}

/*
 * The front doors with l->size, which the compiler cannot see: what a
 * program's loop over an array of run-time element size gets.
 */
#define DEFINE_VARIABLE_LOOP(name, door)                       \
	static void name(const struct loop *l)                 \
	{                                                      \
		unsigned char *d = l->dst;                     \
		const unsigned char *src = l->src;             \
		size_t size = l->size, count = l->count;       \
		for (size_t i = 0; i < count; i++, d += size)  \
			door(d, src, size);                    \
	}
DEFINE_VARIABLE_LOOP(variable_nt, ntm_memcpy_nt)
DEFINE_VARIABLE_LOOP(variable_flush, ntm_memcpy_flush)
#undef DEFINE_VARIABLE_LOOP

inline_loop_fn ISA_NAME(variable_loop, INLINE_ISA)(bool flush)
{
	return flush ? variable_flush : variable_nt;
}
