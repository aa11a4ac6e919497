// SPDX-License-Identifier: MIT
/*
 * cmd_info.c - `ntmem info`: what this CPU offers and what ntmem chose.
 */
#include <stdio.h>
#include <string.h>

#include <ntmem.h>

/*
 * The library's own environment reader (src/env.c, compiled into the
 * tool): info shows the ignored values exactly as the dispatcher judged
 * them, from the one definition of what a valid value is.
 */
#include "internal.h"

#include "bench.h"
#include "commands.h"
#include "parse.h"
#include "report.h"

static const char *isa_of_inline_path(void)
{
#if defined(__x86_64__)
	return "16-byte MOVNTDQ (32-byte VMOVNTDQ when the caller builds "
	       "with -mavx), 8-byte MOVNTI";
#else
	return "generic (memcpy + write-back)";
#endif
}

static void print_text(const struct ntm_env *env)
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
	for (const char *line = env->bad; *line;) {
		size_t len = strcspn(line, "\n");

		printf("environment:      %.*s\n", (int)len, line);
		line += len + (line[len] == '\n');
	}
}

static void print_json(const struct ntm_env *env)
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
	printf("  \"inline_max\": %d,\n  \"env_ignored\": [", NTM_INLINE_MAX);
	for (const char *line = env->bad; *line;) {
		size_t len = strcspn(line, "\n");
		char one[sizeof(env->bad)];

		memcpy(one, line, len);
		one[len] = '\0';
		if (line != env->bad)
			printf(", ");
		report_json_string(stdout, one);
		line += len + (line[len] == '\n');
	}
	printf("]\n}\n");
}

static void usage(FILE *out)
{
	fputs("usage: ntmem info [--json]\n\n"
	      "CPU features, the copy variant and write-back instruction ntmem\n"
	      "chose, and the constant sizes that are inlined. NTMEM_ISA and\n"
	      "NTMEM_FLUSH cap the choice, as in every program using ntmem; a value\n"
	      "that was ignored is shown (\"environment:\", JSON \"env_ignored\").\n",
	      out);
}

int cmd_info(int argc, char **argv)
{
	bool json = false;
	const struct opt opts[] = {
		{ .name = "json", .kind = OPT_FLAG, .dest = &json },
		{ 0 },
	};
	const struct opt_cmd cmd = {
		.name = "info", .opts = opts, .usage = usage,
	};
	struct ntm_env env;
	int status;

	if (!parse_args(&cmd, argc, argv, &status))
		return status;
	ntm_env_read(&env);
	if (json)
		print_json(&env);
	else
		print_text(&env);
	return 0;
}
