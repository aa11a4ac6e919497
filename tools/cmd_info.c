// SPDX-License-Identifier: MIT
/*
 * cmd_info.c - `ntmem info`: what this CPU offers and what ntmem chose.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ntmem.h>
/*
 * The library's own readers: info shows the ignored values as the
 * dispatcher judged them, and the nd regions under the one root it is
 * given, by the library's rules.
 */
#include <ntmem/introspect.h>

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

/* Where sysfs is: /sys, or --sysfs DIR. */
static const char *sysfs_root = "/sys";

/* The nd regions (domain, bus), as read under sysfs_root. */
struct region_list {
	int n;
	struct ntm_nd_region row[64];
};

static int add_region(void *arg, const struct ntm_nd_region *region)
{
	struct region_list *l = arg;

	l->row[l->n++] = *region;
	/* A machine with more is listed in part. */
	return l->n == (int)(sizeof(l->row) / sizeof(l->row[0]));
}

/* 0, or -errno when the nd bus cannot be listed. */
static int read_regions(struct region_list *l)
{
	int ret;

	l->n = 0;
	ret = ntm_introspect_regions(sysfs_root, add_region, l);
	return ret < 0 ? ret : 0;
}

static const char *region_domain_text(int domain, char *buf, size_t len)
{
	if (domain >= 0)
		return ntm_persist_domain_name((enum ntm_persist_domain)domain);
	snprintf(buf, len, "unreadable (%s)", strerror(-domain));
	return buf;
}

static void print_domains_text(const struct ntm_env_info *env)
{
	enum ntm_persist_domain active = ntm_persist_domain_active();
	struct region_list l;
	char buf[96];
	int ret = read_regions(&l);

	printf("persist domain:   %s (ntm_persist, ntm_flush, ntm_memcpy_flush); "
	       "NTMEM_PERSIST_DOMAIN %s\n", ntm_persist_domain_name(active),
	       env->persist_domain_override == NTM_PERSIST_NONE ? "not set" :
	       ntm_persist_domain_name(env->persist_domain_override));
	if (ret)
		printf("nd regions:       cannot list %s/bus/nd/devices: %s\n",
		       sysfs_root, strerror(-ret));
	else if (l.n == 0)
		printf("nd regions:       none found in %s/bus/nd/devices\n",
		       sysfs_root);
	for (int i = 0; i < l.n; i++) {
		printf("%s%s %s", i ? "                  " : "nd regions:       ",
		       l.row[i].name,
		       region_domain_text(l.row[i].domain, buf, sizeof(buf)));
		if (l.row[i].cxl_region[0])
			printf("; CXL %s, %u-way interleave of %u B, memory "
			       "devices %s", l.row[i].cxl_region, l.row[i].cxl_ways,
			       l.row[i].cxl_granularity, l.row[i].cxl_memdevs);
		/* Whatever its domain says: no write-back reaches the host. */
		if (l.row[i].async)
			printf("; %s bus %s: never cpu-durable, only the host "
			       "makes stores durable (fsdax: msync/fsync; "
			       "devdax: %s)", l.row[i].provider, l.row[i].bus,
			       l.row[i].deep_flush ? "the region's deep_flush" :
			       "no durable path, the region has no deep_flush");
		printf("\n");
	}
}

/*
 * The copy policy in force and the CPU facts it was derived from, as the
 * library reports them (ntm_introspect_env()): the rules themselves are
 * the library's (src/copy_policy.h), not repeated here.
 */
static void print_policy_text(const struct ntm_env_info *env,
			      const char *active)
{
	printf("copy policy:      into a destination not 8-byte aligned, "
	       "ntm_memcpy_nt() is an\n"
	       "                  ordinary copy below %zu bytes (variant %s's "
	       "store width, cpu family %u),\n"
	       "                  ntm_memcpy_flush() a cached copy written back "
	       "below %zu bytes\n",
	       env->nt_short_unaligned, active, env->cpu_family,
	       env->nt_threshold);
	if (env->nt_threshold != env->nt_threshold_default)
		printf("                  (NTMEM_NT_THRESHOLD; the default is "
		       "%zu", env->nt_threshold_default);
	else
		printf("                  (the default");
	printf(": cpu vendor %s, family %u, ", env->cpu_vendor, env->cpu_family);
	if (env->glibc_rep_movsb_threshold)
		printf("glibc's REP MOVSB threshold %zu bytes)\n",
		       env->glibc_rep_movsb_threshold);
	else
		printf("no glibc REP MOVSB threshold)\n");
}

static void print_text(const struct ntm_env_info *env)
{
	uint32_t f = ntm_cpu_features();
	const char *active = ntm_variant_name(ntm_variant_active());
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
	for (size_t i = 0; i < ntm_variant_count(); i++) {
		const struct ntm_variant *v = ntm_variant_at(i);

		printf(" %s%s", ntm_variant_name(v),
		       ntm_variant_supported(v) ? "" : "(unsupported)");
	}
	printf("\nntm_memcpy_nt:    %s (out of line);\n"
	       "                  constant sizes inline: %s\n",
	       active, isa_of_inline_path());
	printf("ntm_memcpy_flush: %s%s\n", active,
	       ntm_persist_domain_active() == NTM_PERSIST_CPU_CACHE ?
	       " non-temporal, no write-back (cpu_cache domain)" : "");
	printf("ntm_memset_flush: %s\n", active);
	printf("ntm_flush:        %s\n", ntm_flush_insn_name(ntm_flush_active()));
	printf("ntm_drain:        %s\n",
#if defined(__x86_64__)
	       "sfence"
#else
	       "full fence"
#endif
	);
	printf("inline sizes:     4 and 8..%d in steps of 8\n", NTM_INLINE_MAX);
	print_policy_text(env, active);
	print_domains_text(env);
	for (const char *line = env->ignored; *line;) {
		size_t len = strcspn(line, "\n");

		printf("environment:      %.*s\n", (int)len, line);
		line += len + (line[len] == '\n');
	}
}

/* A CXL region's member: "cxl": {...}, (a comma and a space after). */
static void print_cxl_json(const struct ntm_nd_region *r)
{
	char devs[sizeof(r->cxl_memdevs)];
	bool first = true;

	printf("\"cxl\": {\"region\": ");
	report_json_string(stdout, r->cxl_region);
	printf(", \"interleave_ways\": %u, \"interleave_granularity\": %u, "
	       "\"memdevs\": [", r->cxl_ways, r->cxl_granularity);
	memcpy(devs, r->cxl_memdevs, sizeof(devs));
	for (char *save, *d = strtok_r(devs, " ", &save); d;
	     d = strtok_r(NULL, " ", &save)) {
		printf("%s", first ? "" : ", ");
		report_json_string(stdout, d);
		first = false;
	}
	printf("]}, ");
}

static void print_domains_json(const struct ntm_env_info *env)
{
	struct region_list l;
	char buf[96];
	int ret = read_regions(&l);

	printf("  \"persist_domain\": \"%s\",\n  \"persist_domain_override\": ",
	       ntm_persist_domain_name(ntm_persist_domain_active()));
	if (env->persist_domain_override == NTM_PERSIST_NONE)
		printf("null,\n");
	else
		printf("\"%s\",\n",
		       ntm_persist_domain_name(env->persist_domain_override));
	printf("  \"regions\": [");
	for (int i = 0; i < l.n; i++) {
		printf("%s{", i ? ", " : "");
		/* Before the name: "name", "persistence_domain" stay adjacent. */
		if (l.row[i].bus[0]) {
			printf("\"bus\": ");
			report_json_string(stdout, l.row[i].bus);
			printf(", \"provider\": ");
			report_json_string(stdout, l.row[i].provider);
			printf(", \"async\": %s, ", l.row[i].async ? "true" : "false");
		}
		if (l.row[i].cxl_region[0])
			print_cxl_json(&l.row[i]);
		printf("\"name\": ");
		report_json_string(stdout, l.row[i].name);
		if (l.row[i].domain >= 0)
			printf(", \"persistence_domain\": \"%s\"}",
			       ntm_persist_domain_name(
				       (enum ntm_persist_domain)l.row[i].domain));
		else
			printf(", \"error\": \"%s\"}",
			       region_domain_text(l.row[i].domain, buf, sizeof(buf)));
	}
	printf("],\n");
	if (ret) {
		printf("  \"regions_error\": ");
		report_json_string(stdout, strerror(-ret));
		printf(",\n");
	}
}

static void print_json(const struct ntm_env_info *env)
{
	uint32_t f = ntm_cpu_features();
	const char *active = ntm_variant_name(ntm_variant_active());
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
	for (size_t i = 0; i < ntm_variant_count(); i++) {
		const struct ntm_variant *v = ntm_variant_at(i);

		printf("%s{\"name\": \"%s\", \"supported\": %s}", i ? ", " : "",
		       ntm_variant_name(v),
		       ntm_variant_supported(v) ? "true" : "false");
	}
	/* "ntm_memset_nt": the old name's key, kept for scripts reading it. */
	printf("],\n  \"primitives\": {\"ntm_memcpy_nt\": \"%s\", "
	       "\"ntm_memcpy_flush\": \"%s\", \"ntm_memset_flush\": \"%s\", "
	       "\"ntm_memset_nt\": \"%s\", \"ntm_flush\": \"%s\"},\n",
	       active, active, active, active, flush);
	printf("  \"inline_max\": %d,\n", NTM_INLINE_MAX);
	printf("  \"copy_policy\": {\"nt_short_unaligned\": %zu, "
	       "\"nt_threshold\": %zu, \"nt_threshold_default\": %zu, "
	       "\"cpu_vendor\": \"%s\", \"cpu_family\": %u, "
	       "\"glibc_rep_movsb_threshold\": %zu},\n",
	       env->nt_short_unaligned, env->nt_threshold,
	       env->nt_threshold_default, env->cpu_vendor, env->cpu_family,
	       env->glibc_rep_movsb_threshold);
	print_domains_json(env);
	printf("  \"env_ignored\": [");
	for (const char *line = env->ignored; *line;) {
		size_t len = strcspn(line, "\n");
		char one[sizeof(env->ignored)];

		memcpy(one, line, len);
		one[len] = '\0';
		if (line != env->ignored)
			printf(", ");
		report_json_string(stdout, one);
		line += len + (line[len] == '\n');
	}
	printf("]\n}\n");
}

static void usage(FILE *out)
{
	fputs("usage: ntmem info [--json] [--sysfs DIR]\n\n"
	      "CPU features, the copy variant and write-back instruction ntmem\n"
	      "chose, and the constant sizes that are inlined. NTMEM_ISA and\n"
	      "NTMEM_FLUSH cap the choice, as in every program using ntmem; a value\n"
	      "that was ignored is shown (\"environment:\", JSON \"env_ignored\").\n"
	      "Then the persistence domain ntm_persist() assumes (NTMEM_PERSIST_DOMAIN,\n"
	      "else memory_controller) and the one each nd region reports in sysfs\n"
	      "(cpu_cache, memory_controller or none).\n\n"
	      "  --json       machine-readable output\n"
	      "  --sysfs DIR  read the nd regions under DIR instead of /sys\n",
	      out);
}

/*
 * 0 when @dir is a directory the tool can list and look into, else
 * -errno: what reading the nd regions under it needs.
 */
static int readable_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return access(dir, X_OK) ? -errno : 0;
}

int cmd_info(int argc, char **argv)
{
	bool json = false, have_sysfs = false;
	const struct opt opts[] = {
		{ .name = "json", .kind = OPT_FLAG, .dest = &json },
		{ .name = "sysfs", .kind = OPT_STR, .dest = &sysfs_root,
		  .given = &have_sysfs },
		{ 0 },
	};
	const struct opt_cmd cmd = {
		.name = "info", .opts = opts, .usage = usage,
	};
	struct ntm_env_info env;
	int status, ret;

	if (!parse_args(&cmd, argc, argv, &status))
		return status;
	/*
	 * A --sysfs DIR that cannot be read is a typo, not a machine
	 * without nd regions (which an empty tree is): refused before
	 * anything is printed, as a bad value of any option is. /sys
	 * itself is not checked: a container without it has no regions.
	 */
	ret = have_sysfs ? readable_dir(sysfs_root) : 0;
	if (ret) {
		fprintf(stderr, "ntmem info: invalid --sysfs '%s': expected a "
			"readable directory (%s)\n", sysfs_root,
			strerror(-ret));
		return 2;
	}
	ret = ntm_introspect_env(&env, sizeof(env));
	if (ret) {
		fprintf(stderr, "ntmem info: %s\n", ntm_errmsg());
		return 1;
	}
	if (json)
		print_json(&env);
	else
		print_text(&env);
	return 0;
}
