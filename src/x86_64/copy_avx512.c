// SPDX-License-Identifier: MIT
/*
 * x86_64/copy_avx512.c - 64-byte VMOVNTDQ variant: one store per cache
 * line. Built with -mavx512f, run only when the CPU has AVX512F and the OS
 * saves ZMM state.
 */
#include <immintrin.h>

#define VARIANT avx512
#define VEC 64
typedef __m512i vec_t;
#define vec_loadu(p) _mm512_loadu_si512((const void *)(p))
#define vec_nt(p, v) _mm512_stream_si512((void *)(p), (v))
#define vec_splat(c) _mm512_set1_epi8((char)(c))

#include "copy_body.h"
