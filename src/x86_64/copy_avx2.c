// SPDX-License-Identifier: MIT
/*
 * x86_64/copy_avx2.c - 32-byte VMOVNTDQ variant; built with -mavx2, run
 * only when the CPU has AVX2 and the OS saves YMM state.
 */
#include <immintrin.h>

#define VARIANT avx2
#define VEC 32
typedef __m256i vec_t;
#define vec_loadu(p) _mm256_loadu_si256((const __m256i *)(p))
#define vec_nt(p, v) _mm256_stream_si256((__m256i *)(p), (v))
#define vec_splat(c) _mm256_set1_epi8((char)(c))

#include "copy_body.h"
