// SPDX-License-Identifier: MIT
/*
 * cmd_blk.c - `ntmem blk create|inject-error|clear-error|badblocks`: an
 * emulated pmem block device in a file, and its bad-sector list, managed
 * the way ndctl's inject-error / list --media-errors manage a real one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>

#include "bench.h"
#include "commands.h"

struct blk_args {
	const char *path;
	size_t size;
	uint64_t sector, count;
	bool have_sector, json;
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
	      "belongs to the platform: use ndctl there.\n",
	      out);
}

static int parse(int argc, char **argv, const char *cmd, struct blk_args *a)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "sector", required_argument, NULL, 'S' },
		{ "count", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int opt;

	memset(a, 0, sizeof(*a));
	a->count = 1;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "s:S:n:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 's':
			if (bench_parse_size(optarg, &a->size) || a->size == 0 ||
			    a->size % 4096)
				return cmd_bad_arg(cmd, "--size", optarg,
						   "a multiple of 4k such as 8g");
			break;
		case 'S':
			errno = 0;
			a->sector = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg)
				return cmd_bad_arg(cmd, "--sector", optarg,
						   "a sector number");
			a->have_sector = true;
			break;
		case 'n':
			errno = 0;
			a->count = strtoull(optarg, &end, 0);
			if (errno || *end || end == optarg || a->count == 0)
				return cmd_bad_arg(cmd, "--count", optarg,
						   "a positive number of sectors");
			break;
		case 'j':
			a->json = true;
			break;
		case 'h':
			usage(stdout);
			return -1;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc)
		return cmd_bad_arg(cmd, "PATH", "(none)", "a namespace path");
	if (optind + 1 < argc)
		return cmd_bad_arg(cmd, "argument", argv[optind + 1],
				   "one namespace path");
	a->path = argv[optind];
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

	if (!bad)
		return 1;
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
	snprintf(cmd, sizeof(cmd), "blk %s", sub);
	if (strcmp(sub, "create") && strcmp(sub, "inject-error") &&
	    strcmp(sub, "clear-error") && strcmp(sub, "badblocks")) {
		fprintf(stderr, "ntmem blk: unknown subcommand '%s'\n", sub);
		usage(stderr);
		return 2;
	}
	ret = parse(argc - 1, argv + 1, cmd, &a);
	if (ret)
		return ret < 0 ? 0 : ret;

	if (!strcmp(sub, "create")) {
		if (!a.size)
			return cmd_bad_arg(cmd, "--size", "(none)", "a size such as 8g");
		if (ntm_ns_create(&ns, a.path, a.size, 4096, NTM_NS_EMULATE)) {
			fprintf(stderr, "ntmem %s: %s\n", cmd, ntm_errmsg());
			return 1;
		}
		printf("%s: %zu bytes, %s namespace\n", a.path, ntm_ns_size(ns),
		       ntm_ns_kind_name(ntm_ns_kind(ns)));
		ntm_ns_close(ns);
		return 0;
	}
	if (strcmp(sub, "badblocks") && !a.have_sector)
		return cmd_bad_arg(cmd, "--sector", "(none)", "the first bad sector");
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
