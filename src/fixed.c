// SPDX-License-Identifier: MIT
/*
 * fixed.c - exported out-of-line twins of the constant-size inline paths,
 * ntm_memcpy_nt_4 ... ntm_memcpy_nt_128, for FFI and dlsym() users. The
 * header emits each as a real definition when NTM_BUILD_FIXED_TWINS is set,
 * so the twin and the inline path are the same code.
 */
#define NTM_BUILD_FIXED_TWINS 1
#include "dispatch.h"
