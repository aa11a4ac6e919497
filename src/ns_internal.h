/* SPDX-License-Identifier: MIT */
/*
 * ns_internal.h - what the layers above a namespace (blk, memmap) ask of
 * it beyond ntmem/ns.h (src/ns.c). Never installed.
 */
#ifndef NTMEM_NS_INTERNAL_H
#define NTMEM_NS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "ntmem/ns.h"

/* True when the namespace has no file to keep state beside (anon, unlinked). */
bool ntm_ns_is_temporary(const struct ntm_ns *ns);
/* True when it was opened with NTM_NS_READONLY. */
bool ntm_ns_is_readonly(const struct ntm_ns *ns);
/*
 * Allocate the file blocks under [p, p+n) when that range lies in a
 * writable file or emulated namespace (not DAX, whose blocks stay as they
 * are), so later stores through the mapping cannot hit a full file system
 * (SIGBUS). 0 when the range is in no such namespace, or the file system
 * cannot preallocate; -ENOSPC or another -errno with the path, @n and @what
 * named. Leaves the file's bytes as they were.
 */
int ntm_ns_reserve(const void *p, size_t n, const char *what);

#endif /* NTMEM_NS_INTERNAL_H */
