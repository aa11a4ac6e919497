// SPDX-License-Identifier: MIT
/*
 * cmd_blk.c - `ntmem blk create|check|inject-error|clear-error|badblocks`:
 * an emulated pmem block device in a file, optionally laid out as a BTT
 * (atomic sectors) and checked, and its bad-sector list, managed the way
 * ndctl's inject-error / list --media-errors manage a real one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <ntmem.h>
#include <ntmem/btt.h>

#include "commands.h"
#include "parse.h"
#include "report.h"

struct blk_args {
	const char *path;
	uint64_t size, sector, count, sector_size;
	bool json, btt;
	int btt_version;	/* index into btt_versions */
};

/* --btt-version: what each lays out (ntmem/btt.h's NTM_BTT_V2). */
static const char *const btt_versions[] = { "1.1", "2.0", NULL };

static void usage(FILE *out)
{
	fputs("usage: ntmem blk create PATH --size BYTES [--btt [--sector-size 512|4096]\n"
	      "                         [--btt-version 1.1|2.0]]\n"
	      "       ntmem blk create DEVICE [--size BYTES] [--btt [--sector-size 512|4096]\n"
	      "                         [--btt-version 1.1|2.0]]\n"
	      "       ntmem blk check PATH [--json]\n"
	      "       ntmem blk inject-error PATH --sector N [--count M]\n"
	      "       ntmem blk clear-error PATH --sector N [--count M]\n"
	      "       ntmem blk badblocks PATH [--json]\n"
	      "\n"
	      "An emulated pmem namespace is a sparse file; its bad sectors (512-byte\n"
	      "units, as the kernel counts them) live in PATH.badblocks. A read that\n"
	      "touches one fails with EIO, a write clears it. A real device's list\n"
	      "belongs to the platform: use ndctl there. BYTES is a decimal number\n"
	      "with an optional k, m, g or t suffix (binary units), a multiple of 4k;\n"
	      "N and M are decimal sector numbers.\n"
	      "\n"
	      "create --btt lays a BTT out over the file (atomic sectors: a crash or a\n"
	      "racing reader sees each sector entirely old or new) with sectors of\n"
	      "--sector-size bytes (default 512); the whole file is then allocated.\n"
	      "On an existing DEVICE (devdax) create lays the BTT out over the whole\n"
	      "device; --size, if given, must be the device's size. --btt-version\n"
	      "2.0 writes a BTT 2.0 (the kernel's on v1.2 namespace labels, at\n"
	      "namespace offset 0) instead of 1.1 (PMDK's, and the kernel's at\n"
	      "offset 4096 on label-less namespaces and v1.1 labels).\n"
	      "check verifies a BTT's metadata without changing it: exit status 0\n"
	      "when consistent (the BTT's version and sectors printed), 1 with the\n"
	      "first problem named.\n",
	      out);
}

static bool btt_sector_size(uint64_t v)
{
	return v == 512 || v == 4096;
}

/* The largest sector whose byte offset fits in 64 bits. */
#define MAX_SECTOR (UINT64_MAX / NTM_BADBLOCK_SECTOR)

/*
 * A path naming a device (a devdax character device, or a block device,
 * which ntm_ns_open() refuses with the reason): create lays out on it,
 * as it exists by nature, where a file is made new.
 */
static bool is_device(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode));
}

/*
 * Each subcommand takes only its own options: --sector on create, or
 * --json on inject-error, is a usage error, not silently ignored.
 */
static int parse(int argc, char **argv, const char *cmd, struct blk_args *a)
{
	bool have_size = false, have_sector = false, have_sector_size = false;
	bool have_btt_version = false;
	const struct opt size_opts[] = {
		{ .name = "size", .letter = 's', .kind = OPT_U64,
		  .dest = &a->size, .min = 4096,
		  .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .multiple = 4096,
		  .given = &have_size },
		{ .name = "btt", .kind = OPT_FLAG, .dest = &a->btt },
		{ .name = "sector-size", .kind = OPT_U64,
		  .dest = &a->sector_size, .min = 512, .max = 4096,
		  .flags = PARSE_SUFFIX, .valid = btt_sector_size,
		  .expected = "512 or 4096", .given = &have_sector_size },
		{ .name = "btt-version", .kind = OPT_CHOICE,
		  .dest = &a->btt_version, .choices = btt_versions,
		  .given = &have_btt_version },
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
	a->sector_size = 512;
	if (!strcmp(argv[0], "create"))
		c.opts = size_opts;
	else if (!strcmp(argv[0], "check"))
		c.opts = list_opts;
	else if (strcmp(argv[0], "badblocks"))
		c.opts = sector_opts;
	if (!parse_args(&c, argc, argv, &status))
		return status ? status : -1;
	/* A device has its own size: --size is then only a check of it. */
	if (c.opts == size_opts && !have_size && !is_device(a->path))
		return parse_bad_arg(cmd, "--size", "(none)", "a size such as 8g");
	/* A plain namespace has no sector size of its own to record. */
	if (have_sector_size && !a->btt) {
		char v[24];

		snprintf(v, sizeof(v), "%llu", (unsigned long long)a->sector_size);
		return parse_bad_arg(cmd, "--sector-size", v, "--btt with it");
	}
	if (have_btt_version && !a->btt)
		return parse_bad_arg(cmd, "--btt-version",
				     btt_versions[a->btt_version], "--btt with it");
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

/*
 * The namespace create lays out on: a device opened whole, its size
 * checked against --size when given, or a new emulated namespace (a file
 * that exists already is refused, so nothing is overwritten by mistake).
 * *made says whether a file was made, the only thing a failure removes.
 */
static int create_ns(const char *cmd, const struct blk_args *a,
		     struct ntm_ns **ns, bool *made)
{
	*made = false;
	if (!is_device(a->path)) {
		if (ntm_ns_create(ns, a->path, a->size, 4096, NTM_NS_EMULATE)) {
			fprintf(stderr, "ntmem %s: %s\n", cmd, ntm_errmsg());
			return 1;
		}
		*made = true;
		return 0;
	}
	if (ntm_ns_open(ns, a->path, 0)) {
		fprintf(stderr, "ntmem %s: %s\n", cmd, ntm_errmsg());
		return 1;
	}
	if (a->size && a->size != ntm_ns_size(*ns)) {
		fprintf(stderr, "ntmem %s: --size %llu: the device '%s' has %zu "
			"bytes (leave --size out to use the whole device)\n", cmd,
			(unsigned long long)a->size, a->path, ntm_ns_size(*ns));
		ntm_ns_close(*ns);
		return 1;
	}
	return 0;
}

/*
 * A BTT laid out over a new emulated namespace or a whole device (plain:
 * a device is left as it is, a file is new and zero). A BTT that cannot
 * be laid out, or a line that cannot be printed, leaves no file behind,
 * and never removes a device. The line saying what was made is printed
 * once everything is made: a failure prints only itself.
 */
static int create(const char *cmd, const struct blk_args *a)
{
	struct ntm_blk_config c = { .sector_size = (unsigned)a->sector_size,
				    .btt = true, .btt_create = true,
				    .flags = a->btt_version ? NTM_BLK_BTT_V2 : 0 };
	struct ntm_ns *ns;
	struct ntm_blk *blk;
	char btt[64] = "";
	bool made;

	if (create_ns(cmd, a, &ns, &made))
		return 1;
	if (a->btt) {
		if (ntm_blk_open(&blk, ns, &c)) {
			fprintf(stderr, "ntmem %s: %s\n", cmd, ntm_errmsg());
			ntm_ns_close(ns);
			if (made)
				unlink(a->path);
			return 1;
		}
		snprintf(btt, sizeof(btt), ", BTT of %llu %u-byte sectors "
			 "(version %s)",
			 (unsigned long long)(ntm_blk_size(blk) /
					      ntm_blk_sector_size(blk)),
			 ntm_blk_sector_size(blk), btt_versions[a->btt_version]);
		ntm_blk_close(blk);
	}
	printf("%s: %zu bytes, %s namespace%s\n", a->path, ntm_ns_size(ns),
	       ntm_ns_kind_name(ntm_ns_kind(ns)), btt);
	ntm_ns_close(ns);
	/*
	 * A line that cannot be written (a full disk, a closed pipe) fails
	 * the command (output_written() in ntmem.c says why); then what it
	 * made goes too, so a retry does not find "File exists".
	 */
	if (fflush(stdout) || ferror(stdout)) {
		int err = errno;

		if (made)
			unlink(a->path);
		errno = err;
		return 1;
	}
	return 0;
}

/*
 * Verify a BTT's metadata without writing: the namespace is mapped
 * read-only and the BTT opened read-only (no flog replay stored). The
 * line (or JSON object) says the BTT's version, which tells where the
 * kernel looks for it (1.1 at 4096 of a namespace, 2.0 at 0).
 */
static int check(const char *cmd, const char *path, bool json)
{
	uint32_t version;
	struct ntm_btt_config c = { .flags = NTM_BTT_READONLY };
	struct ntm_ns *ns;
	struct ntm_btt *btt;

	if (ntm_ns_open(&ns, path, NTM_NS_EMULATE | NTM_NS_READONLY)) {
		fprintf(stderr, "ntmem %s: %s\n", cmd, ntm_errmsg());
		return 1;
	}
	if (ntm_btt_open(&btt, ntm_ns_base(ns), ntm_ns_size(ns), &c)) {
		fprintf(stderr, "ntmem %s: %s: inconsistent: %s\n", cmd, path,
			ntm_errmsg());
		ntm_ns_close(ns);
		return 1;
	}
	if (ntm_btt_check(btt)) {
		fprintf(stderr, "ntmem %s: %s: inconsistent: %s\n", cmd, path,
			ntm_errmsg());
		ntm_btt_close(btt);
		ntm_ns_close(ns);
		return 1;
	}
	version = ntm_btt_version(btt);
	if (json) {
		fputs("{\"path\": ", stdout);
		report_json_string(stdout, path);
		printf(", \"consistent\": true, \"version\": \"%u.%u\", "
		       "\"sectors\": %llu, \"sector_size\": %u}\n",
		       version >> 16, version & 0xffff,
		       (unsigned long long)ntm_btt_nlba(btt), ntm_btt_lbasize(btt));
	} else {
		printf("%s: BTT consistent, %llu %u-byte sectors, version %u.%u\n",
		       path, (unsigned long long)ntm_btt_nlba(btt),
		       ntm_btt_lbasize(btt), version >> 16, version & 0xffff);
	}
	ntm_btt_close(btt);
	ntm_ns_close(ns);
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
	if (strcmp(sub, "create") && strcmp(sub, "check") &&
	    strcmp(sub, "inject-error") && strcmp(sub, "clear-error") &&
	    strcmp(sub, "badblocks")) {
		fprintf(stderr, "ntmem blk: unknown subcommand '%s'\n", sub);
		usage(stderr);
		return 2;
	}
	snprintf(cmd, sizeof(cmd), "blk %s", sub);
	ret = parse(argc - 1, argv + 1, cmd, &a);
	if (ret)
		return ret < 0 ? 0 : ret;

	if (!strcmp(sub, "create"))
		return create(cmd, &a);
	if (!strcmp(sub, "check"))
		return check(cmd, a.path, a.json);
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
