// SPDX-License-Identifier: MIT
/*
 * require_avx512.c - linked (whole) into the test binaries built with
 * -mavx512f, and compiled without that flag itself: a constructor that
 * exits with meson's "skipped" status 77 before main(), or any code the
 * compiler may have vectorised with AVX-512, runs on a CPU or OS without
 * AVX-512F.
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void ntm_test_require_avx512(void)
{
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx512f")) {
		fputs("SKIP: this CPU/OS cannot run AVX-512F code\n", stderr);
		exit(77);
	}
}
