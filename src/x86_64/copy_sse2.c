// SPDX-License-Identifier: MIT
/* x86_64/copy_sse2.c - 16-byte MOVNTDQ variant; runs on every x86-64 CPU. */
#include <emmintrin.h>

#define VARIANT sse2
#define VEC 16
typedef __m128i vec_t;
#define vec_loadu(p) _mm_loadu_si128((const __m128i *)(p))
#define vec_nt(p, v) _mm_stream_si128((__m128i *)(p), (v))
#define vec_splat(c) _mm_set1_epi8((char)(c))

#include "copy_body.h"
