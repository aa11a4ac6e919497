// SPDX-License-Identifier: MIT
/*
 * test_abi.c - the exported ABI of the built libntmem.so, as a dlopen()
 * user (an FFI binding, say) sees it.
 *
 * usage: test_abi LIBNTMEM_SO LIBNTMEM_MAP
 *
 * The version script is parsed at test time, so a symbol added to the map
 * but not defined in the library, or defined under another version, fails
 * here. Every global symbol of every node must resolve with dlsym() and
 * with dlvsym() under its node's version, to the same address. Every
 * NTM_FIXED_SIZES entry must have an exported ntm_memcpy_nt_<N> in the map
 * that copies correctly when called through the dlsym() pointer (destination
 * offsets 0..15 cover the 16-byte, 8-byte, 4-byte and fallback paths of the
 * out-of-line twin; source offsets 0 and 3). The library's internal
 * functions (src/'s private headers, the per-variant functions) must not
 * resolve.
 * This program does not link libntmem: everything comes from dlopen().
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>
#include "../lib/testutil.h"

static const char *lib_path, *map_path;
static void *lib;

/* One global symbol of the version script and the node it is in. */
struct map_sym {
	char name[128];
	char node[128];
};
static struct map_sym *syms;
static size_t nsyms;

/* --- version script parser ----------------------------------------------- */

static const char *skip_space(const char *p)
{
	while (isspace((unsigned char)*p))
		p++;
	return p;
}

/*
 * Grammar subset used by GNU ld version scripts:
 *   NODE { [global:] sym; ... [local: pattern; ...] } [PARENT] ;
 * with C comments. Returns 0, or -1 with a message on a syntax error.
 */
static int parse_map(const char *text)
{
	enum { NODE, OPEN, BODY, PARENT } st = NODE;
	char node[128] = "", tok[128];
	bool global = true;
	const char *p = text;

	while (*p) {
		size_t n = 0;

		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (p[0] == '/' && p[1] == '*') {
			const char *end = strstr(p + 2, "*/");

			if (!end)
				return -1;
			p = end + 2;
			continue;
		}
		if (p[0] == '#') { /* ld also accepts # line comments */
			while (*p && *p != '\n')
				p++;
			continue;
		}
		if (strchr("{};:", *p)) {
			tok[n++] = *p++;
		} else {
			while (*p && !isspace((unsigned char)*p) &&
			       !strchr("{};:", *p) && n < sizeof(tok) - 1)
				tok[n++] = *p++;
		}
		tok[n] = '\0';

		switch (st) {
		case NODE:
			if (strcmp(tok, "{") == 0 || strchr("};:", tok[0]))
				return -1;
			snprintf(node, sizeof(node), "%s", tok);
			st = OPEN;
			break;
		case OPEN:
			if (strcmp(tok, "{") != 0)
				return -1;
			global = true; /* symbols before any label are global */
			st = BODY;
			break;
		case BODY:
			if (strcmp(tok, "}") == 0) {
				st = PARENT;
			} else if ((strcmp(tok, "global") == 0 ||
				    strcmp(tok, "local") == 0) &&
				   *skip_space(p) == ':') {
				global = tok[0] == 'g';
				p = skip_space(p) + 1;
			} else if (strcmp(tok, ";") == 0) {
				/* stray separator */
			} else {
				p = skip_space(p);
				if (*p != ';')
					return -1;
				p++;
				if (!global)
					break;
				syms = realloc(syms, (nsyms + 1) * sizeof(*syms));
				if (!syms)
					return -1;
				snprintf(syms[nsyms].name, sizeof(syms[nsyms].name),
					 "%s", tok);
				snprintf(syms[nsyms].node, sizeof(syms[nsyms].node),
					 "%s", node);
				nsyms++;
			}
			break;
		case PARENT:
			/* "};" or "} PARENT;" */
			if (strcmp(tok, ";") == 0)
				st = NODE;
			else if (strchr("{}:", tok[0]))
				return -1;
			break;
		}
	}
	return st == NODE ? 0 : -1;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 8192;
			buf = realloc(buf, cap);
			if (!buf)
				break;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got > 0);
	fclose(f);
	if (buf)
		buf[len] = '\0';
	return buf;
}

static const struct map_sym *map_find(const char *name)
{
	for (size_t i = 0; i < nsyms; i++)
		if (strcmp(syms[i].name, name) == 0)
			return &syms[i];
	return NULL;
}

static void *sym(const char *name)
{
	void *p;

	dlerror();
	p = dlsym(lib, name);
	if (!p)
		fail_msg("dlsym(%s): %s", name, dlerror());
	return p;
}

/* Typed dlsym(): the cast from void * is fine in GNU C and POSIX. */
#define SYM(var, name) ((var) = (__typeof__(var))sym(name))

/* --- setup --------------------------------------------------------------- */

static int setup(void **state)
{
	char *text;

	(void)state;
	lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen(%s): %s\n", lib_path, dlerror());
		return -1;
	}
	text = slurp(map_path);
	if (!text) {
		fprintf(stderr, "cannot read %s\n", map_path);
		return -1;
	}
	if (parse_map(text) != 0) {
		fprintf(stderr, "%s: cannot parse the version script\n",
			map_path);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	if (lib)
		dlclose(lib);
	free(syms);
	return 0;
}

/* --- tests --------------------------------------------------------------- */

/* The parser found the script's symbols (guards against a blind parser). */
static void test_map_parsed(void **state)
{
	(void)state;
	print_message("%zu global symbols in %s\n", nsyms, map_path);
	assert_true(nsyms >= 8);
	assert_non_null(map_find("ntm_version"));
	assert_non_null(map_find("ntm_memcpy_nt"));
	assert_null(map_find("*"));
	for (size_t i = 0; i < nsyms; i++) {
		assert_true(strncmp(syms[i].name, "ntm_", 4) == 0);
		assert_true(strncmp(syms[i].node, "NTM_", 4) == 0);
		for (size_t j = 0; j < i; j++)
			if (strcmp(syms[i].name, syms[j].name) == 0)
				fail_msg("%s listed twice", syms[i].name);
	}
}

static void test_map_symbols_resolve(void **state)
{
	(void)state;
	for (size_t i = 0; i < nsyms; i++) {
		void *p, *pv;

		dlerror();
		p = dlsym(lib, syms[i].name);
		if (!p)
			fail_msg("%s is in the map but not exported: %s",
				 syms[i].name, dlerror());
		pv = dlvsym(lib, syms[i].name, syms[i].node);
		if (pv != p)
			fail_msg("%s: dlvsym(%s) = %p, dlsym = %p",
				 syms[i].name, syms[i].node, pv, p);
	}
}

/* The public header and the exported twins agree on the fixed sizes. */
static void test_fixed_twins(void **state)
{
	static const size_t sizes[] = {
#define SIZE_ENTRY(N) N,
		NTM_FIXED_SIZES(SIZE_ENTRY)
#undef SIZE_ENTRY
	};
	enum { GUARD = 64, SPAN = GUARD + 16 + NTM_INLINE_MAX + GUARD };
	unsigned char *dst = tu_map_fenced(SPAN);
	unsigned char *canary = malloc(SPAN);
	unsigned char *src = malloc(NTM_INLINE_MAX + 8);
	unsigned char *nsrc = malloc(NTM_INLINE_MAX + 8);

	(void)state;
	assert_non_null(dst);
	assert_non_null(canary);
	assert_non_null(src);
	assert_non_null(nsrc);
	tu_fill_random(canary, SPAN, 11);
	tu_fill_random(src, NTM_INLINE_MAX + 8, 12);
	for (size_t i = 0; i < NTM_INLINE_MAX + 8; i++)
		nsrc[i] = (unsigned char)~src[i];
	memcpy(dst, canary, SPAN);

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		char name[64];
		void *(*fn)(void *, const void *);

		snprintf(name, sizeof(name), "ntm_memcpy_nt_%zu", n);
		if (!map_find(name))
			fail_msg("%s is in NTM_FIXED_SIZES but not in the map",
				 name);
		SYM(fn, name);
		for (size_t doff = 0; doff < 16; doff++) {
			for (size_t soff = 0; soff < 8; soff += 3) {
				unsigned char *d = dst + GUARD + doff;
				void *r;

				memcpy(d, nsrc + soff, n);
				r = fn(d, src + soff);
				assert_ptr_equal(r, d);
				if (memcmp(d, src + soff, n) != 0)
					fail_msg("%s dst+%zu src+%zu: byte %zu "
						 "wrong", name, doff, soff,
						 tu_first_diff(d, src + soff, n));
				memcpy(d, canary + GUARD + doff, n);
				if (memcmp(dst, canary, SPAN) != 0)
					fail_msg("%s dst+%zu: wrote outside the "
						 "destination", name, doff);
			}
		}
	}
	/* ... and no twin exists for a size without a fixed path */
	dlerror();
	assert_null(dlsym(lib, "ntm_memcpy_nt_12"));
	assert_null(dlsym(lib, "ntm_memcpy_nt_136"));
	tu_unmap_fenced(dst, SPAN);
	free(canary);
	free(src);
	free(nsrc);
}

static void test_version(void **state)
{
	const char *(*version)(void);
	char want[64];

	(void)state;
	SYM(version, "ntm_version");
	assert_non_null(version());
	assert_string_equal(version(), NTM_VERSION_STRING);
	snprintf(want, sizeof(want), "%d.%d.%d", NTM_VERSION_MAJOR,
		 NTM_VERSION_MINOR, NTM_VERSION_PATCH);
	assert_string_equal(version(), want);
}

/* Internal functions and data stay local (version script "local: *"). */
static void test_internals_hidden(void **state)
{
	static const char *const internal[] = {
		"ntm_variant_select", "ntm_flush_select", "ntm_flush_lines",
		"ntm_flush_impl", "ntm_dispatch_init", "ntm_dispatch_published",
		"ntm_cpu_detect", "ntm_cpu_line_size", "ntm_env_read",
		"ntm_isa_from_name", "ntm_flush_from_name",
		"ntm_memcpy_nt_fixed", "ntm_memcpy_nt_inline",
		"ntm_memcpy_flush_inline", "ntm_nt_var",
	};
	/* memset_nt: the per-variant fill's name before 0.4, hidden too. */
	static const char *const ops[] = { "memcpy_nt", "memcpy_flush",
					   "memset_flush", "memset_nt" };
	size_t (*count)(void);
	const struct ntm_variant *(*at)(size_t);
	const char *(*name_of)(const struct ntm_variant *);

	(void)state;
	for (size_t i = 0; i < sizeof(internal) / sizeof(internal[0]); i++) {
		assert_null(map_find(internal[i]));
		if (dlsym(lib, internal[i]))
			fail_msg("internal symbol %s is exported", internal[i]);
	}
	SYM(count, "ntm_variant_count");
	SYM(at, "ntm_variant_at");
	SYM(name_of, "ntm_variant_name");
	assert_true(count() >= 1);
	for (size_t i = 0; i < count(); i++) {
		for (size_t j = 0; j < sizeof(ops) / sizeof(ops[0]); j++) {
			char name[96];

			snprintf(name, sizeof(name), "ntm_%s_%s",
				 name_of(at(i)), ops[j]);
			if (dlsym(lib, name))
				fail_msg("per-variant %s is exported", name);
		}
	}
}

/* The dispatched entry points and queries, called through dlsym(). */
static void test_entry_points(void **state)
{
	void *(*cpy)(void *, const void *, size_t);
	void *(*cpyf)(void *, const void *, size_t);
	void *(*set)(void *, int, size_t);
	void *(*set_old)(void *, int, size_t);
	void (*flush)(const void *, size_t);
	void (*persist)(const void *, size_t);
	void (*drain)(void);
	const struct ntm_variant *(*active)(void);
	size_t (*count)(void);
	const struct ntm_variant *(*at)(size_t);
	const char *(*name_of)(const struct ntm_variant *);
	const struct ntm_variant *(*find)(const char *);
	bool (*supported)(const struct ntm_variant *);
	enum ntm_flush_insn (*flush_active)(void);
	const char *(*flush_name)(enum ntm_flush_insn);
	uint32_t (*features)(void);
	const char *(*feature_name)(uint32_t);
	size_t (*line_size)(void);
	const struct ntm_variant *a;
	unsigned char src[300], dst[300], ref[300];
	bool in_table = false;

	(void)state;
	SYM(cpy, "ntm_memcpy_nt");
	SYM(cpyf, "ntm_memcpy_flush");
	SYM(set, "ntm_memset_flush");
	SYM(set_old, "ntm_memset_nt");
	SYM(flush, "ntm_flush");
	SYM(persist, "ntm_persist");
	SYM(drain, "ntm_drain");
	SYM(active, "ntm_variant_active");
	SYM(count, "ntm_variant_count");
	SYM(at, "ntm_variant_at");
	SYM(name_of, "ntm_variant_name");
	SYM(find, "ntm_variant_find");
	SYM(supported, "ntm_variant_supported");
	SYM(flush_active, "ntm_flush_active");
	SYM(flush_name, "ntm_flush_insn_name");
	SYM(features, "ntm_cpu_features");
	SYM(feature_name, "ntm_cpu_feature_name");
	SYM(line_size, "ntm_cache_line_size");

	tu_fill_random(src, sizeof(src), 21);
	for (size_t n = 0; n < 270; n += 7) {
		for (size_t off = 0; off < 4; off++) {
			tu_fill_random(dst, sizeof(dst), 22 + n);
			memcpy(ref, dst, sizeof(dst));
			memcpy(ref + off, src + 3, n);
			assert_ptr_equal(cpy(dst + off, src + 3, n), dst + off);
			assert_memory_equal(dst, ref, sizeof(dst));
			tu_fill_random(dst, sizeof(dst), 23 + n);
			memcpy(ref, dst, sizeof(dst));
			memcpy(ref + off, src + 5, n);
			assert_ptr_equal(cpyf(dst + off, src + 5, n), dst + off);
			assert_memory_equal(dst, ref, sizeof(dst));
			memset(ref + off, 0x3c, n);
			assert_ptr_equal(set(dst + off, 0x3c, n), dst + off);
			assert_memory_equal(dst, ref, sizeof(dst));
			memset(ref + off, 0xc3, n);
			assert_ptr_equal(set_old(dst + off, 0xc3, n), dst + off);
			assert_memory_equal(dst, ref, sizeof(dst));
			flush(dst + off, n);
			persist(dst + off, n);
			drain();
			assert_memory_equal(dst, ref, sizeof(dst));
		}
	}

	/*
	 * The old name is the same code: both IFUNC symbols resolve to one
	 * entry (dlsym() returns what the resolver chose).
	 */
	assert_ptr_equal(set_old, set);
	a = active();
	for (size_t i = 0; i < count(); i++)
		in_table |= at(i) == a;
	assert_true(in_table);
	assert_null(at(count()));
	assert_true(supported(a));
	assert_ptr_equal(find(name_of(a)), a);
	assert_null(find("nope"));
	assert_non_null(flush_name(flush_active()));
	assert_true((features() & ~((1u << NTM_CPU_FEATURE_COUNT) - 1)) == 0);
	assert_non_null(feature_name(NTM_CPU_SSE2));
	assert_true(line_size() >= 8);
}

/*
 * struct ntm_variant as ntmem/variant.h of 0.1 declared it: a program built
 * against 0.1 indexes ntm_variant_list()'s array with this layout, which
 * the library keeps for it (src/variant_impl.h) although the struct is
 * opaque since 0.4.
 */
struct variant_0_1 {
	const char *name;
	enum ntm_isa isa;
	uint32_t needs;
	void *(*memcpy_nt)(void *dst, const void *src, size_t n);
	void *(*memcpy_flush)(void *dst, const void *src, size_t n);
	void *(*memset_nt)(void *dst, int c, size_t n);
};

static void test_variant_list_0_1(void **state)
{
	const struct variant_0_1 *(*list)(size_t *);
	size_t (*count)(void);
	const struct ntm_variant *(*at)(size_t);
	const char *(*name_of)(const struct ntm_variant *);
	enum ntm_isa (*isa_of)(const struct ntm_variant *);
	uint32_t (*needs_of)(const struct ntm_variant *);
	ntm_memcpy_fn (*memcpy_nt_of)(const struct ntm_variant *);
	ntm_memcpy_fn (*memcpy_flush_of)(const struct ntm_variant *);
	ntm_memset_fn (*memset_flush_of)(const struct ntm_variant *);
	const struct variant_0_1 *l;
	size_t n = 0;

	(void)state;
	SYM(list, "ntm_variant_list");
	SYM(count, "ntm_variant_count");
	SYM(at, "ntm_variant_at");
	SYM(name_of, "ntm_variant_name");
	SYM(isa_of, "ntm_variant_isa");
	SYM(needs_of, "ntm_variant_needs");
	SYM(memcpy_nt_of, "ntm_variant_memcpy_nt");
	SYM(memcpy_flush_of, "ntm_variant_memcpy_flush");
	SYM(memset_flush_of, "ntm_variant_memset_flush");
	l = list(&n);
	assert_int_equal(n, count());
	assert_ptr_equal(list(NULL), l);
	for (size_t i = 0; i < n; i++) {
		const struct ntm_variant *v = at(i);

		assert_ptr_equal((const void *)&l[i], (const void *)v);
		assert_string_equal(l[i].name, name_of(v));
		assert_int_equal(l[i].isa, isa_of(v));
		assert_int_equal(l[i].needs, needs_of(v));
		assert_ptr_equal(l[i].memcpy_nt, memcpy_nt_of(v));
		assert_ptr_equal(l[i].memcpy_flush, memcpy_flush_of(v));
		assert_ptr_equal(l[i].memset_nt, memset_flush_of(v));
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_parsed),
		cmocka_unit_test(test_map_symbols_resolve),
		cmocka_unit_test(test_fixed_twins),
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_internals_hidden),
		cmocka_unit_test(test_entry_points),
		cmocka_unit_test(test_variant_list_0_1),
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s LIBNTMEM_SO LIBNTMEM_MAP\n", argv[0]);
		return 2;
	}
	lib_path = argv[1];
	map_path = argv[2];
	return cmocka_run_group_tests(tests, setup, teardown);
}
