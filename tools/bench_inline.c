// SPDX-License-Identifier: MIT
/*
 * bench_inline.c - a loop per constant size, copying through the inline
 * path of ntmem/inline.h. Compiled twice (tools/meson.build): with the
 * default flags as inline_loop_baseline(), and with -mavx as
 * inline_loop_avx(), since the inline path's store width depends on the
 * flags the caller compiles with.
 *
 * Each loop copies from locals, as an application's loop would: read
 * through the struct, every field would be reloaded after each copy (the
 * stores may alias it), and at ~11 cycles per 64-byte copy those loads
 * show in the result.
 */
#include <ntmem.h>

#include "bench_inline.h"

#ifndef INLINE_LOOP_NAME
#error "build with -DINLINE_LOOP_NAME=inline_loop_baseline or inline_loop_avx"
#endif

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

inline_loop_fn INLINE_LOOP_NAME(size_t size)
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
