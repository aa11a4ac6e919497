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
 * Allocate the file blocks under [@off, @off + @n) of @ns when it is a
 * writable file or emulated namespace (not DAX, whose blocks stay as they
 * are), so later stores through the mapping cannot hit a full file system
 * (SIGBUS). Ranges may overlap ones reserved before: what is allocated
 * already stays so. 0 for any other namespace, or when the file system
 * cannot preallocate; -EINVAL naming @off and @n when the range does not
 * lie in @ns (whatever its kind); -ENOSPC or another -errno with the path,
 * @n and @what named. Leaves the file's bytes as they were. The namespace
 * keeps no descriptor: the file is opened again by its path for the call,
 * and -ESTALE says the path names another file now. Namespaces are
 * independent: calls on different ones share no lock.
 */
int ntm_ns_reserve(const struct ntm_ns *ns, size_t off, size_t n,
		   const char *what);
/*
 * How a layer that stores into a namespace itself (blk's writes) makes
 * them durable without knowing the namespace's kind or domain: copy with
 * ntm_ns_copy(@ns), then ntm_ns_persist_copied() over what was copied.
 * The copy leaves no line that needs writing back in the namespace's
 * domain; persisting is then ntm_ns_persist() without its write-back (the
 * fence, and msync() where a page cache stands between the CPU and the
 * media). The copy is chosen per call: ntm_ns_set_persist_domain() may
 * change it.
 */
typedef void *(*ntm_ns_copy_fn)(void *dst, const void *src, size_t n);
ntm_ns_copy_fn ntm_ns_copy(const struct ntm_ns *ns);
int ntm_ns_persist_copied(const struct ntm_ns *ns, const void *p, size_t n);
/*
 * True when persisting does more than write back and fence: msync() where
 * a page cache stands between the CPU and the media (a plain file, an
 * emulated namespace on a disk file system), or the host's flush on an
 * asynchronous (virtio-pmem) region, which may also refuse. A layer that
 * persists through its own write-backs (the BTT) must then call
 * ntm_ns_persist() as well.
 */
bool ntm_ns_persist_beyond_cpu(const struct ntm_ns *ns);

#endif /* NTMEM_NS_INTERNAL_H */
