/* SPDX-License-Identifier: MIT */
/*
 * ntmem.h - the persistent-memory data path in user space.
 *
 * Conventions for the whole library:
 *   - Functions that can fail return 0 or a negative errno (-EINVAL, ...);
 *     byte counts are ssize_t. strerror(-ret) always describes the error.
 *   - Copies, flushes and fences cannot fail; copies return dst.
 *   - The library never sets errno and never prints, unless NTMEM_VERBOSE
 *     is on (1, yes, true or on, in any case; 0, no, false, off or empty is
 *     off); the one exception is a single line on stderr when one of its
 *     variables holds an unknown value (NTMEM_ISA, NTMEM_FLUSH,
 *     NTMEM_VERBOSE, ...: a misspelt value is ignored).
 *   - No function hides a fence: see ntmem/copy.h for who must drain.
 */
#ifndef NTMEM_H
#define NTMEM_H

#include <ntmem/version.h>
#include <ntmem/copy.h>
#include <ntmem/variant.h>
#include <ntmem/ns.h>
#include <ntmem/memmap.h>
#include <ntmem/mc.h>
#include <ntmem/blk.h>
#include <ntmem/btt.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ntm_version() - the library's version string, "MAJOR.MINOR.PATCH" */
const char *ntm_version(void);

/**
 * ntm_errmsg() - why the last call that returned a negative errno in this
 * thread failed, naming the argument at fault ("" before any failure)
 */
const char *ntm_errmsg(void);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_H */
