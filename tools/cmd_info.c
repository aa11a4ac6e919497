// SPDX-License-Identifier: MIT
/*
 * cmd_info.c - `ntmem info`: what this CPU offers and what ntmem chose.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <ntmem.h>

#include "bench.h"
#include "commands.h"

static const char *isa_of_inline_path(void)
{
#if defined(__x86_64__)
	return "16-byte MOVNTDQ (32-byte VMOVNTDQ when the caller builds "
	       "with -mavx), 8-byte MOVNTI";
#else
	return "generic (memcpy + write-back)";
#endif
}

static void print_text(void)
{
	uint32_t f = ntm_cpu_features();
	size_t nv;
	const struct ntm_variant *v = ntm_variant_list(&nv);
	char buf[160];

	printf("ntmem %s\n", ntm_version());
	printf("cpu:              %s\n", bench_cpu_model(buf, sizeof(buf)));
	printf("features:        ");
	for (unsigned i = 0; i < NTM_CPU_FEATURE_COUNT; i++)
		if (f & (1u << i))
			printf(" %s", ntm_cpu_feature_name(1u << i));
	printf("\ncache line:       %zu bytes\n", ntm_cache_line_size());
	printf("write-back:       %s\n", ntm_flush_insn_name(ntm_flush_active()));
	printf("variants:        ");
	for (size_t i = 0; i < nv; i++)
		printf(" %s%s", v[i].name, ntm_variant_supported(&v[i]) ? "" : "(unsupported)");
	printf("\nntm_memcpy_nt:    %s (out of line);\n"
	       "                  constant sizes inline: %s\n",
	       ntm_variant_active()->name, isa_of_inline_path());
	printf("ntm_memcpy_flush: %s\n", ntm_variant_active()->name);
	printf("ntm_memset_nt:    %s\n", ntm_variant_active()->name);
	printf("ntm_flush:        %s\n", ntm_flush_insn_name(ntm_flush_active()));
	printf("ntm_drain:        %s\n",
#if defined(__x86_64__)
	       "sfence"
#else
	       "full fence"
#endif
	);
	printf("inline sizes:     4 and 8..%d in steps of 8\n", NTM_INLINE_MAX);
}

static void print_json(void)
{
	uint32_t f = ntm_cpu_features();
	size_t nv;
	const struct ntm_variant *v = ntm_variant_list(&nv);
	const char *active = ntm_variant_active()->name;
	const char *flush = ntm_flush_insn_name(ntm_flush_active());
	char buf[160];
	bool first = true;

	printf("{\n  \"version\": \"%s\",\n", ntm_version());
	printf("  \"cpu\": \"%s\",\n", bench_cpu_model(buf, sizeof(buf)));
	printf("  \"features\": [");
	for (unsigned i = 0; i < NTM_CPU_FEATURE_COUNT; i++)
		if (f & (1u << i)) {
			printf("%s\"%s\"", first ? "" : ", ", ntm_cpu_feature_name(1u << i));
			first = false;
		}
	printf("],\n  \"cache_line\": %zu,\n", ntm_cache_line_size());
	printf("  \"flush\": \"%s\",\n", flush);
	printf("  \"variants\": [");
	for (size_t i = 0; i < nv; i++)
		printf("%s{\"name\": \"%s\", \"supported\": %s}", i ? ", " : "",
		       v[i].name, ntm_variant_supported(&v[i]) ? "true" : "false");
	printf("],\n  \"primitives\": {\"ntm_memcpy_nt\": \"%s\", "
	       "\"ntm_memcpy_flush\": \"%s\", \"ntm_memset_nt\": \"%s\", "
	       "\"ntm_flush\": \"%s\"},\n", active, active, active, flush);
	printf("  \"inline_max\": %d\n}\n", NTM_INLINE_MAX);
}

int cmd_info(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool json = false;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			json = true;
			break;
		case 'h':
			printf("usage: ntmem info [--json]\n\n"
			       "CPU features, the copy variant and write-back "
			       "instruction ntmem chose,\nand the constant sizes "
			       "that are inlined. NTMEM_ISA and NTMEM_FLUSH cap\n"
			       "the choice, as in every program using ntmem.\n");
			return 0;
		default:
			fprintf(stderr, "usage: ntmem info [--json]\n");
			return 2;
		}
	}
	if (optind < argc)
		return cmd_bad_arg("info", "argument", argv[optind], "--json or nothing");
	if (json)
		print_json();
	else
		print_text();
	return 0;
}
