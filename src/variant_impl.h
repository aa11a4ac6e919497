/* SPDX-License-Identifier: MIT */
/*
 * variant_impl.h - the definition of struct ntm_variant, which the public
 * header (ntmem/variant.h) declares only: programs reach its fields
 * through ntm_variant_name() and the other accessors. Never installed.
 */
#ifndef NTMEM_VARIANT_IMPL_H
#define NTMEM_VARIANT_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <ntmem/variant.h>

/*
 * The layout is frozen: it is the public struct of 0.1 field for field.
 * ntm_variant_list() (deprecated, still exported) returns the table
 * itself, and a binary built against 0.1 indexes that array with the 0.1
 * struct's size and reads these fields at these offsets. A new field
 * therefore cannot go here: it goes into a struct that holds this one as
 * its first member, and ntm_variant_list() keeps returning an array of
 * exactly this struct. The assertions below hold the layout.
 */
struct ntm_variant {
	const char *name;	/* "avx512", "avx2", "sse2", "neon", "generic" */
	enum ntm_isa isa;
	uint32_t needs;		/* ntm_cpu_feature bits this variant requires */
	ntm_memcpy_fn memcpy_nt;
	ntm_memcpy_fn memcpy_flush;
	ntm_memset_fn memset_flush;	/* 0.1 called it memset_nt */
};

/* The struct as ntmem/variant.h of 0.1 declared it; never to be edited. */
struct ntm_variant_0_1 {
	const char *name;
	enum ntm_isa isa;
	uint32_t needs;
	void *(*memcpy_nt)(void *dst, const void *src, size_t n);
	void *(*memcpy_flush)(void *dst, const void *src, size_t n);
	void *(*memset_nt)(void *dst, int c, size_t n);
};

#define NTM_VARIANT_SAME(field, field_0_1)                               \
	_Static_assert(offsetof(struct ntm_variant, field) ==              \
		       offsetof(struct ntm_variant_0_1, field_0_1),        \
		       "struct ntm_variant." #field " moved from its 0.1 offset")
NTM_VARIANT_SAME(name, name);
NTM_VARIANT_SAME(isa, isa);
NTM_VARIANT_SAME(needs, needs);
NTM_VARIANT_SAME(memcpy_nt, memcpy_nt);
NTM_VARIANT_SAME(memcpy_flush, memcpy_flush);
NTM_VARIANT_SAME(memset_flush, memset_nt);
#undef NTM_VARIANT_SAME
_Static_assert(sizeof(struct ntm_variant) == sizeof(struct ntm_variant_0_1),
	       "ntm_variant_list()'s array must keep the 0.1 element size");

#endif /* NTMEM_VARIANT_IMPL_H */
