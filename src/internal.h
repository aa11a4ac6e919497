/* SPDX-License-Identifier: MIT */
/*
 * internal.h - declarations shared between library source files; never
 * installed. Everything here is hidden by the version script (local: *).
 */
#ifndef NTMEM_INTERNAL_H
#define NTMEM_INTERNAL_H

/* Library sources define the exported functions under their plain names. */
#define NTM_NO_INLINE_FRONT_DOORS 1

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ntmem.h"

/* --- variants (src/variants.def) --- */

#define NTM_VARIANT(name, isa, needs)                                         \
	void *ntm_##name##_memcpy_nt(void *dst, const void *src, size_t n);    \
	void *ntm_##name##_memcpy_flush(void *dst, const void *src, size_t n); \
	void *ntm_##name##_memset_nt(void *dst, int c, size_t n);
#include "variants.def"
#undef NTM_VARIANT

/*
 * What the exported ntm_memcpy_nt(), ntm_memcpy_flush() and ntm_memset_nt()
 * resolve to (src/copy.c): each variant's functions behind a check that
 * the dispatch table uses them, with the copy policy; x86-64 only.
 */
#define NTM_VARIANT(name, isa, needs)                                            \
	void *ntm_##name##_memcpy_nt_entry(void *dst, const void *src, size_t n); \
	void *ntm_##name##_memcpy_flush_entry(void *dst, const void *src,         \
					      size_t n);                          \
	void *ntm_##name##_memset_nt_entry(void *dst, int c, size_t n);
#include "variants.def"
#undef NTM_VARIANT

/* --- cpu.c: feature detection, no side effects --- */

/*
 * Code that runs while the library is being relocated (copy.c's IFUNC
 * resolvers and ntm_cpu_detect(), which they call): before any sanitizer
 * or coverage runtime is set up, so it must not be instrumented, and
 * calls nothing that is.
 */
#if defined(__clang__)
#define NTM_EARLY \
	__attribute__((no_sanitize("address", "thread", "undefined", "coverage")))
#else
#define NTM_EARLY \
	__attribute__((no_sanitize_address, no_sanitize_thread, no_sanitize_undefined))
#endif

/* Feature bits of this CPU, as seen through CPUID and XGETBV. */
NTM_EARLY uint32_t ntm_cpu_detect(void);
/* Cache-line size the CPU reports for CLFLUSH, or 64 when it says nothing. */
size_t ntm_cpu_line_size(void);

/* --- env.c: the one place environment variables are read --- */

struct ntm_env {
	int isa_cap;	/* enum ntm_isa ceiling, or -1 when NTMEM_ISA is unset */
	int flush_cap;	/* enum ntm_flush_insn ceiling, or -1 when unset */
	int persist_domain; /* enum ntm_persist_domain, -1: NTMEM_PERSIST_DOMAIN unset */
	size_t nt_threshold; /* NTMEM_NT_THRESHOLD, or NTM_NT_THRESHOLD_DEFAULT */
	bool verbose;	/* NTMEM_VERBOSE=1 */
	char bad[512];	/* values that were ignored, one line each, or "" */
};

void ntm_env_read(struct ntm_env *env);
/* Parse one variant or flush name; -1 when unknown. */
int ntm_isa_from_name(const char *name);
int ntm_flush_from_name(const char *name);

/* --- dispatch.c: choose once, pure selection functions for the tests --- */

/* What the dispatched entry points use; immutable once published. */
struct ntm_dispatch {
	const struct ntm_variant *variant;
	void *(*memcpy_nt)(void *dst, const void *src, size_t n);
	void *(*memcpy_flush)(void *dst, const void *src, size_t n);
	void *(*memset_nt)(void *dst, int c, size_t n);
	void (*flush)(const void *p, size_t n, size_t line); /* NULL: none */
	/* write back, invalidate and complete (ntm_invalidate()); NULL: none */
	void (*invalidate)(const void *p, size_t n, size_t line);
	enum ntm_flush_insn flush_insn;
	size_t line;		/* cache-line size for write-backs, bytes */
	uint32_t features;	/* ntm_cpu_feature bits of this CPU */
	bool verbose;		/* NTMEM_VERBOSE=1: report choices and errors */
	size_t nt_threshold;	/* NTMEM_NT_THRESHOLD (copy.c's policy), bytes */
	/* NTMEM_PERSIST_DOMAIN; NTM_PERSIST_NONE when unset */
	enum ntm_persist_domain domain_override;
};

extern const struct ntm_dispatch *ntm_dispatch_published;
const struct ntm_dispatch *ntm_dispatch_init(void);

/*
 * The dispatch table, chosen on first use. The acquire load pairs with the
 * release store that publishes the table, so a thread that sees the pointer
 * also sees the fields; on x86-64 it is a plain load.
 */
static inline const struct ntm_dispatch *ntm_dispatch(void)
{
	const struct ntm_dispatch *d =
		__atomic_load_n(&ntm_dispatch_published, __ATOMIC_ACQUIRE);

	if (__builtin_expect(d == NULL, 0))
		d = ntm_dispatch_init();
	return d;
}

/* Highest variant whose needs are in @features and whose ISA <= @cap. */
const struct ntm_variant *ntm_variant_select(uint32_t features, int cap);
/* Best write-back instruction in @features that is <= @cap. */
enum ntm_flush_insn ntm_flush_select(uint32_t features, int cap);
/*
 * Ceilings (enum ntm_isa / ntm_flush_insn, -1 for none) that a library
 * embedding ntmem (the libpmem drop-in: PMEM_AVX=0, PMEM_NO_CLWB, ...)
 * sets from its own environment before the first call; lower of these
 * and NTMEM_ISA / NTMEM_FLUSH wins.
 */
void ntm_dispatch_set_caps(int isa_cap, int flush_cap);
/* Write back the lines over [p, p+n) with the chosen instruction. */
void ntm_flush_lines(const void *p, size_t n);

/* --- copy.c: the exported copy entry points and the copy policy --- */

/*
 * NTMEM_NT_THRESHOLD's default, bytes: below it, ntm_memcpy_flush() into a
 * destination that is not 8-byte aligned stores through the cache and
 * writes the lines back; from it, non-temporally. Measured with `ntmem
 * bench copy --align 1` on the machine the library was written on, where
 * the cached copy plus write-back beat the split non-temporal one at
 * every size under it. Machines differ: `ntmem bench copy --calibrate`
 * found 1536 on a Xeon VM, so the default is the first measurement and
 * the variable says what another machine needs.
 */
#define NTM_NT_THRESHOLD_DEFAULT 256

/*
 * True when ntm_memcpy_flush() copies @n bytes to @dst with ordinary
 * stores and write-backs rather than the variant's non-temporal copy. An
 * 8-byte aligned destination never does: its stores are whole non-temporal
 * words with no line shared with a cached store, and NT stores beat the
 * cached copy plus write-back there at every size measured.
 */
static inline bool ntm_flush_cached(const void *dst, size_t n, size_t threshold)
{
	return ((uintptr_t)dst & 7) && n < threshold;
}

/* The other side of that choice: through the cache, lines written back. */
static inline void *ntm_memcpy_cached(void *dst, const void *src, size_t n)
{
	ntm_store_copy(dst, src, n);
	ntm_flush_lines(dst, n);
	return dst;
}

/*
 * The functions of the dispatch table the entries (ntm_<variant>_*_entry)
 * run directly when they are their own variant's; NULL until the first
 * call through the table binds them. Hidden, so the entries load it
 * without a GOT lookup.
 */
struct ntm_bound {
	void *(*memcpy_nt)(void *dst, const void *src, size_t n);
	void *(*memcpy_flush)(void *dst, const void *src, size_t n);
	void *(*memset_nt)(void *dst, int c, size_t n);
};
extern struct ntm_bound ntm_bound __attribute__((visibility("hidden")));

/*
 * Through the dispatch table, binding it: what an entry calls when the
 * table does not use its variant (NTMEM_ISA, a caller's ceiling, the
 * persistence domain's copy) or on the first call.
 */
void *ntm_memcpy_nt_unbound(void *dst, const void *src, size_t n)
	__attribute__((visibility("hidden")));
void *ntm_memcpy_flush_unbound(void *dst, const void *src, size_t n)
	__attribute__((visibility("hidden")));
void *ntm_memset_nt_unbound(void *dst, int c, size_t n)
	__attribute__((visibility("hidden")));

/* --- ns.c --- */

/* ntm_ns_open_fd() flag, for the libpmem drop-in: any file length maps. */
#define NTM_NS_ANY_SIZE (1u << 31)

/* ntm_ns_open() on an open descriptor (kept open by the caller). */
int ntm_ns_open_fd(struct ntm_ns **ns, int fd, const char *path, unsigned flags);

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

/* --- badblocks_sysfs.c: a devdax device's media errors --- */

/*
 * Shift the region-relative "sector count" lines of @text into the device
 * window [dev_start, dev_start + dev_size) of a region starting at
 * @region_start; @add receives each clipped range in device sectors.
 */
int ntm_badblocks_translate(const char *text, uint64_t region_start,
			    uint64_t dev_start, uint64_t dev_size,
			    int (*add)(void *arg, uint64_t sector, uint64_t count),
			    void *arg);
/* Feed @add the media errors of devdax device @rdev, read under @root. */
int ntm_badblocks_devdax(const char *root, dev_t rdev, uint64_t dev_size,
			 int (*add)(void *arg, uint64_t sector, uint64_t count),
			 void *arg);

/* --- persist_domain.c: persistence domains from sysfs --- */

/*
 * Where sysfs is mounted: "/sys". A test points it at a fake tree before
 * the first namespace opens (not thread-safe, not exported).
 */
extern const char *ntm_sysfs_root;

/*
 * The domain of the nd region holding device @dev under @root: a character
 * device (@chr: devdax) or a block device (a file's st_dev: fsdax).
 * NTM_PERSIST_NONE when no nd region holds it, its attribute is missing or
 * empty; a negative errno when the attribute cannot be read.
 */
int ntm_persist_domain_of_dev(const char *root, dev_t dev, bool chr);
/*
 * @fn(@arg, name, domain) for each nd region under @root, in name order
 * (region2 before region10): domain is an enum ntm_persist_domain, or a
 * negative errno when the region's attribute cannot be read. A non-zero
 * return of @fn stops the walk and is returned. Return: the number of
 * regions (0 without an nd bus), or a negative errno.
 */
int ntm_persist_domain_regions(const char *root,
			       int (*fn)(void *arg, const char *region, int domain),
			       void *arg);
/*
 * pmem_has_auto_flush()'s answer under @root: 1 when there are nd regions
 * and every one is cpu_cache; 0 when one is not, or there are none; -1
 * when one cannot be read and none is known not to be cpu_cache.
 */
int ntm_persist_domain_all_cpu_cache(const char *root);

/* --- error.c --- */

/*
 * Record the message for ntm_errmsg() (printf-style; strerror(-err) is
 * appended) and return @err, a negative errno: return ntm_error(...);
 */
int ntm_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --- flush.c: one function per write-back instruction --- */

typedef void (*ntm_flush_fn)(const void *p, size_t n, size_t line);
/* The loop for @insn, or NULL when there is nothing to write back. */
ntm_flush_fn ntm_flush_impl(enum ntm_flush_insn insn);
/*
 * The write-back-and-invalidate loop for a CPU with @features (ntm_cpu_feature
 * bits), including the barrier that completes it before any later load or
 * store (ntm_invalidate()); NULL when this architecture has none (its
 * memory is taken to be coherent with every other agent).
 */
ntm_flush_fn ntm_invalidate_impl(uint32_t features);

#endif /* NTMEM_INTERNAL_H */
