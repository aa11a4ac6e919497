// SPDX-License-Identifier: MIT
/*
 * cmd_blk.c - `ntmem blk create|inject-error|clear-error|badblocks`: an
 * emulated pmem block device in a file, and its bad-sector list, managed
 * the way ndctl's inject-error / list --media-errors manage a real one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>

#include "commands.h"
#include "parse.h"

struct blk_args {
	const char *path;
	uint64_t size, sector, count;
	bool json;
};

static void usage(FILE *out)
{
	fputs("usage: ntmem blk create PATH --size BYTES\n"
	      "       ntmem blk inject-error PATH --sector N [--count M]\n"
	      "       ntmem blk clear-error PATH --sector N [--count M]\n"
	      "       ntmem blk badblocks PATH [--json]\n"
	      "\n"
	      "An emulated pmem namespace is a sparse file; its bad sectors (512-byte\n"
	      "units, as the kernel counts them) live in PATH.badblocks. A read that\n"
	      "touches one fails with EIO, a write clears it. A real device's list\n"
	      "belongs to the platform: use ndctl there. BYTES is a decimal number\n"
	      "with an optional k, m, g or t suffix (binary units), a multiple of 4k;\n"
	      "N and M are decimal sector numbers.\n",
	      out);
}

/* The largest sector whose byte offset fits in 64 bits. */
#define MAX_SECTOR (UINT64_MAX / NTM_BADBLOCK_SECTOR)

/*
 * Each subcommand takes only its own options: --sector on create, or
 * --json on inject-error, is a usage error, not silently ignored.
 */
static int parse(int argc, char **argv, const char *cmd, struct blk_args *a)
{
	bool have_size = false, have_sector = false;
	const struct opt size_opts[] = {
		{ .name = "size", .letter = 's', .kind = OPT_U64,
		  .dest = &a->size, .min = 4096,
		  .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .multiple = 4096,
		  .given = &have_size },
		{ 0 },
	};
	const struct opt sector_opts[] = {
		{ .name = "sector", .letter = 'S', .kind = OPT_U64,
		  .dest = &a->sector, .min = 0, .max = MAX_SECTOR,
		  .given = &have_sector },
		{ .name = "count", .letter = 'n', .kind = OPT_U64,
		  .dest = &a->count, .min = 1, .max = MAX_SECTOR },
		{ 0 },
	};
	const struct opt list_opts[] = {
		{ .name = "json", .kind = OPT_FLAG, .dest = &a->json },
		{ 0 },
	};
	struct opt_cmd c = {
		.name = cmd, .opts = list_opts, .usage = usage,
		.arg_name = "PATH", .arg_expected = "one namespace path",
		.arg = &a->path,
	};
	int status;

	memset(a, 0, sizeof(*a));
	a->count = 1;
	if (!strcmp(argv[0], "create"))
		c.opts = size_opts;
	else if (strcmp(argv[0], "badblocks"))
		c.opts = sector_opts;
	if (!parse_args(&c, argc, argv, &status))
		return status ? status : -1;
	if (c.opts == size_opts && !have_size)
		return parse_bad_arg(cmd, "--size", "(none)", "a size such as 8g");
	if (c.opts == sector_opts && !have_sector)
		return parse_bad_arg(cmd, "--sector", "(none)", "the first bad sector");
	return 0;
}

/* Open PATH as an emulated namespace and a block device on it. */
static int open_blk(const char *cmd, const char *path, struct ntm_ns **ns,
		    struct ntm_blk **blk)
{
	if (ntm_ns_open(ns, path, NTM_NS_EMULATE) ||
	    ntm_blk_open(blk, *ns, NULL)) {
		fprintf(stderr, "ntmem %s: %s\n", cmd, ntm_errmsg());
		if (*ns)
			ntm_ns_close(*ns);
		return 1;
	}
	return 0;
}

static int list(struct ntm_blk *blk, bool json)
{
	size_t n = ntm_blk_badblocks(blk, NULL, 0);
	struct ntm_badblock *bad = calloc(n + 1, sizeof(*bad));

	if (!bad) {
		fprintf(stderr, "ntmem blk badblocks: no memory for %zu entries\n",
			n);
		return 1;
	}
	n = ntm_blk_badblocks(blk, bad, n);
	if (json)
		printf("{\"sector_size\": %u, \"badblocks\": [", NTM_BADBLOCK_SECTOR);
	for (size_t i = 0; i < n; i++) {
		if (json)
			printf("%s{\"sector\": %llu, \"count\": %llu}", i ? ", " : "",
			       (unsigned long long)bad[i].sector,
			       (unsigned long long)bad[i].count);
		else
			printf("%llu %llu\n", (unsigned long long)bad[i].sector,
			       (unsigned long long)bad[i].count);
	}
	if (json)
		printf("]}\n");
	free(bad);
	return 0;
}

int cmd_blk(int argc, char **argv)
{
	struct ntm_ns *ns = NULL;
	struct ntm_blk *blk = NULL;
	struct blk_args a;
	const char *sub = argc > 1 ? argv[1] : "";
	char cmd[48];
	int ret;

	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		usage(stdout);
		return 0;
	}
	if (strcmp(sub, "create") && strcmp(sub, "inject-error") &&
	    strcmp(sub, "clear-error") && strcmp(sub, "badblocks")) {
		fprintf(stderr, "ntmem blk: unknown subcommand '%s'\n", sub);
		usage(stderr);
		return 2;
	}
	snprintf(cmd, sizeof(cmd), "blk %s", sub);
	ret = parse(argc - 1, argv + 1, cmd, &a);
	if (ret)
		return ret < 0 ? 0 : ret;

	if (!strcmp(sub, "create")) {
		if (ntm_ns_create(&ns, a.path, a.size, 4096, NTM_NS_EMULATE)) {
			fprintf(stderr, "ntmem %s: %s\n", cmd, ntm_errmsg());
			return 1;
		}
		printf("%s: %zu bytes, %s namespace\n", a.path, ntm_ns_size(ns),
		       ntm_ns_kind_name(ntm_ns_kind(ns)));
		ntm_ns_close(ns);
		return 0;
	}
	if (open_blk(cmd, a.path, &ns, &blk))
		return 1;
	if (!strcmp(sub, "badblocks"))
		ret = list(blk, a.json);
	else if (!strcmp(sub, "inject-error"))
		ret = ntm_blk_badblocks_add(blk, a.sector, a.count);
	else
		ret = ntm_blk_badblocks_clear(blk, a.sector, a.count);
	if (ret < 0) {
		fprintf(stderr, "ntmem %s: %s\n", cmd, ntm_errmsg());
		ret = 1;
	}
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	return ret;
}
