// SPDX-License-Identifier: MIT
/*
 * fuzz_copy.c - the copy primitives against memcpy()/memset().
 *
 * Every out-of-line variant this CPU runs (ntm_variant_at() filtered by
 * ntm_variant_supported()), the dispatched entry points, ntm_flush() and
 * ntm_persist() (which must not change a byte), and every constant-size
 * inline path of ntmem/inline.h (sizes 4 and 8..128 step 8, through the
 * front doors ntm_memcpy_nt()/ntm_memcpy_flush() and the named
 * ntm_memcpy_nt_<N>()) and the front doors with a run-time size of 0 to
 * 144 bytes (the variable-size path and its edges), each against a model
 * buffer changed with plain
 * memcpy()/memset(). The destination sits between guard bytes; the whole
 * buffer, guards included, must equal the model afterwards.
 *
 * Input: operation, size, destination and source offsets (0..127: every
 * alignment the store-width choices care about), fill byte, then the
 * source bytes (the rest of the source is a pattern seeded from the input).
 */
#define _GNU_SOURCE	/* nftw() in fuzz.h */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>
#include "fuzz.h"

#define GUARD 64		/* bytes each side of the destination window */
#define MAX_OFF 128		/* offsets 0..127 from a 64-byte aligned base */
#define MAX_N 8448		/* past two pages: the bulk loops and the tails */
#define BUF (GUARD + MAX_OFF + MAX_N + GUARD)

enum op_kind {
	OP_VARIANT_NT,		/* one variant's memcpy_nt */
	OP_VARIANT_FLUSH,
	OP_VARIANT_MEMSET,
	OP_NT,			/* dispatched, out of line */
	OP_FLUSH_COPY,
	OP_MEMSET,
	OP_FLUSH,		/* ntm_flush(): no byte changes */
	OP_PERSIST,
	OP_INLINE_NT,		/* ntm_memcpy_nt() with a constant size */
	OP_INLINE_FLUSH,	/* ntm_memcpy_flush() with a constant size */
	OP_NAMED,		/* ntm_memcpy_nt_<N>() */
	OP_VAR_NT,		/* ntm_memcpy_nt() with a run-time size */
	OP_VAR_FLUSH,		/* ntm_memcpy_flush() with a run-time size */
};

/* Run-time sizes for OP_VAR_*: 0 .. NTM_INLINE_MAX + 16. */
#define VAR_SIZES (NTM_INLINE_MAX + 17)

struct op {
	enum op_kind kind;
	const struct ntm_variant *v;	/* OP_VARIANT_* */
	size_t size;			/* OP_INLINE_* / OP_NAMED: the constant */
	char name[40];
};

static struct op ops[96];
static size_t nops;
static unsigned char *dst, *model, *src;

#define SIZE_ENTRY(N) N,
static const size_t fixed_sizes[] = { NTM_FIXED_SIZES(SIZE_ENTRY) };
#undef SIZE_ENTRY

/* Each case spells its size as a literal: the inline expansion needs it. */
#define NT_CASE(N)                                     \
	case N:                                        \
		return ntm_memcpy_nt(d, s, N);
#define FLUSH_CASE(N)                                  \
	case N:                                        \
		return ntm_memcpy_flush(d, s, N);
#define NAMED_CASE(N)                                  \
	case N:                                        \
		return ntm_memcpy_nt_##N(d, s);

static void *inline_nt(void *d, const void *s, size_t n)
{
	switch (n) {
		NTM_FIXED_SIZES(NT_CASE)
	}
	abort();
}

static void *inline_flush(void *d, const void *s, size_t n)
{
	switch (n) {
		NTM_FIXED_SIZES(FLUSH_CASE)
	}
	abort();
}

static void *named(void *d, const void *s, size_t n)
{
	switch (n) {
		NTM_FIXED_SIZES(NAMED_CASE)
	}
	abort();
}

static void add_op(enum op_kind kind, const struct ntm_variant *v,
		   size_t size, const char *name)
{
	FZ_CHECK(nops < sizeof(ops) / sizeof(ops[0]), "too many operations");
	ops[nops] = (struct op){ .kind = kind, .v = v, .size = size };
	snprintf(ops[nops].name, sizeof(ops[nops].name), "%s", name);
	nops++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const struct ntm_variant *v;
	char name[40];

	(void)argc;
	(void)argv;
	for (size_t i = 0; (v = ntm_variant_at(i)); i++) {
		if (!ntm_variant_supported(v))
			continue;
		snprintf(name, sizeof(name), "%s memcpy_nt", ntm_variant_name(v));
		add_op(OP_VARIANT_NT, v, 0, name);
		snprintf(name, sizeof(name), "%s memcpy_flush", ntm_variant_name(v));
		add_op(OP_VARIANT_FLUSH, v, 0, name);
		snprintf(name, sizeof(name), "%s memset_flush", ntm_variant_name(v));
		add_op(OP_VARIANT_MEMSET, v, 0, name);
	}
	add_op(OP_NT, NULL, 0, "ntm_memcpy_nt");
	add_op(OP_FLUSH_COPY, NULL, 0, "ntm_memcpy_flush");
	add_op(OP_MEMSET, NULL, 0, "ntm_memset_flush");
	add_op(OP_FLUSH, NULL, 0, "ntm_flush");
	add_op(OP_PERSIST, NULL, 0, "ntm_persist");
	add_op(OP_VAR_NT, NULL, 0, "ntm_memcpy_nt, run-time size");
	add_op(OP_VAR_FLUSH, NULL, 0, "ntm_memcpy_flush, run-time size");
	for (size_t i = 0; i < sizeof(fixed_sizes) / sizeof(fixed_sizes[0]); i++) {
		size_t n = fixed_sizes[i];

		snprintf(name, sizeof(name), "inline ntm_memcpy_nt %zu", n);
		add_op(OP_INLINE_NT, NULL, n, name);
		snprintf(name, sizeof(name), "inline ntm_memcpy_flush %zu", n);
		add_op(OP_INLINE_FLUSH, NULL, n, name);
		snprintf(name, sizeof(name), "ntm_memcpy_nt_%zu", n);
		add_op(OP_NAMED, NULL, n, name);
	}
	dst = aligned_alloc(64, BUF);
	model = malloc(BUF);
	src = aligned_alloc(64, MAX_OFF + MAX_N);
	FZ_CHECK(dst && model && src, "no memory");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	const struct op *op = &ops[fz_u8(&in) % nops];
	size_t n = (size_t)fz_uint(&in, 2) % (MAX_N + 1);
	size_t doff = fz_u8(&in) % MAX_OFF, soff = fz_u8(&in) % MAX_OFF;
	uint8_t fill = fz_u8(&in);
	unsigned char *d = dst + GUARD + doff, *s = src + soff;
	uint64_t st = 0x9e3779b97f4a7c15ull ^ ((uint64_t)fill << 32 | n);
	void *ret = d;

	if (op->size)
		n = op->size;
	if (op->kind == OP_VAR_NT || op->kind == OP_VAR_FLUSH)
		n %= VAR_SIZES;
	/* Destination and guards: a pattern no copy or fill would write. */
	for (size_t i = 0; i < BUF; i++)
		dst[i] = (unsigned char)(i * 7 + 0x5b) ^ fill ^ 0xff;
	for (size_t i = 0; i < MAX_OFF + MAX_N; i++) {
		st ^= st << 13, st ^= st >> 7, st ^= st << 17;
		src[i] = (unsigned char)st;
	}
	memcpy(s, in.p, in.n < n ? in.n : n);
	memcpy(model, dst, BUF);

	switch (op->kind) {
	case OP_VARIANT_NT:
		ret = ntm_variant_memcpy_nt(op->v)(d, s, n);
		break;
	case OP_VARIANT_FLUSH:
		ret = ntm_variant_memcpy_flush(op->v)(d, s, n);
		break;
	case OP_VARIANT_MEMSET:
		ret = ntm_variant_memset_flush(op->v)(d, fill, n);
		break;
	case OP_NT:
		ret = (ntm_memcpy_nt)(d, s, n);
		break;
	case OP_FLUSH_COPY:
		ret = (ntm_memcpy_flush)(d, s, n);
		break;
	case OP_MEMSET:
		ret = ntm_memset_flush(d, fill, n);
		break;
	case OP_FLUSH:
		ntm_flush(d, n);
		break;
	case OP_PERSIST:
		ntm_persist(d, n);
		break;
	case OP_INLINE_NT:
		ret = inline_nt(d, s, n);
		break;
	/* The header's front doors: n is not a constant here. */
	case OP_VAR_NT:
		ret = ntm_memcpy_nt(d, s, n);
		break;
	case OP_VAR_FLUSH:
		ret = ntm_memcpy_flush(d, s, n);
		break;
	case OP_INLINE_FLUSH:
		ret = inline_flush(d, s, n);
		break;
	case OP_NAMED:
		ret = named(d, s, n);
		break;
	}
	ntm_drain();

	if (op->kind == OP_VARIANT_MEMSET || op->kind == OP_MEMSET)
		memset(model + GUARD + doff, fill, n);
	else if (op->kind != OP_FLUSH && op->kind != OP_PERSIST)
		memcpy(model + GUARD + doff, s, n);
	FZ_CHECK(ret == d, "%s(n=%zu, dst+%zu, src+%zu): returned %p, not dst %p",
		 op->name, n, doff, soff, ret, (void *)d);
	if (memcmp(dst, model, BUF) == 0)
		return 0;
	for (size_t i = 0; i < BUF; i++) {
		long at = (long)i - (long)(GUARD + doff);

		FZ_CHECK(dst[i] == model[i],
			 "%s(n=%zu, dst+%zu, src+%zu, fill 0x%02x): byte %ld of "
			 "the destination is 0x%02x, expected 0x%02x (%s)",
			 op->name, n, doff, soff, fill, at, dst[i], model[i],
			 at < 0 ? "guard before it" :
			 (size_t)at >= n ? "guard after it" : "inside it");
	}
	return 0;
}
