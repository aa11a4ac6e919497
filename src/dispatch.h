/* SPDX-License-Identifier: MIT */
/*
 * dispatch.h - the per-variant copies (src/variants.def) and the table
 * that chooses among them once per process (src/dispatch.c). Never
 * installed; everything here is hidden by the version script.
 */
#ifndef NTMEM_DISPATCH_H
#define NTMEM_DISPATCH_H

/*
 * Library sources define the exported copies under their plain names, so
 * ntmem/copy.h must not turn those names into its inline front doors.
 */
#ifndef NTM_NO_INLINE_FRONT_DOORS
#define NTM_NO_INLINE_FRONT_DOORS 1
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ntmem/copy.h"
#include "ntmem/ns.h"
#include "ntmem/variant.h"

/* Each variant's three functions, which the dispatch table points at. */
#define NTM_VARIANT(name, isa, needs)                                         \
	void *ntm_##name##_memcpy_nt(void *dst, const void *src, size_t n);    \
	void *ntm_##name##_memcpy_flush(void *dst, const void *src, size_t n); \
	void *ntm_##name##_memset_flush(void *dst, int c, size_t n);
#include "variants.def"
#undef NTM_VARIANT

/* What the dispatched entry points use; immutable once published. */
struct ntm_dispatch {
	const struct ntm_variant *variant;
	void *(*memcpy_nt)(void *dst, const void *src, size_t n);
	void *(*memcpy_flush)(void *dst, const void *src, size_t n);
	void *(*memset_flush)(void *dst, int c, size_t n);
	void (*flush)(const void *p, size_t n, size_t line); /* NULL: none */
	/* write back, invalidate and complete (ntm_invalidate()); NULL: none */
	void (*invalidate)(const void *p, size_t n, size_t line);
	enum ntm_flush_insn flush_insn;
	size_t line;		/* cache-line size for write-backs, bytes */
	uint32_t features;	/* ntm_cpu_feature bits of this CPU */
	size_t nt_threshold;	/* NTMEM_NT_THRESHOLD (copy.c's policy), bytes */
	/* ntm_memcpy_nt() into an unaligned dst below it: ordinary, bytes */
	size_t nt_short;
	/* NTMEM_PERSIST_DOMAIN; NTM_PERSIST_NONE when unset */
	enum ntm_persist_domain domain_override;
	/* The values ntm_env_read() ignored (struct ntm_env's bad), or "". */
	char env_ignored[512];
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
/* Write back the lines over [p, p+n) with the chosen instruction. */
void ntm_flush_lines(const void *p, size_t n);

#endif /* NTMEM_DISPATCH_H */
