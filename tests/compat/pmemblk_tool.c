// SPDX-License-Identifier: MIT
/*
 * pmemblk_tool.c - one small program over PMDK's libpmemblk API, built
 * twice from PMDK's own header (Debian's /usr/include/libpmemblk.h): once
 * linked with Debian's libpmemblk.so.1 and once with ntmem's drop-in, so
 * check_pmemblk_interop.sh can create a pool with one library and read,
 * write and check it with the other.
 *
 *   which                     the file the pmemblk_* functions come from
 *   create PATH BSIZE SIZE    a new pool; prints "bsize B nblock N"
 *   write PATH SEED STEP      every STEP-th block (0, STEP, ...) gets the
 *                             pattern of SEED and its block number
 *   verify PATH SEED STEP OLD those blocks hold SEED's pattern, every other
 *                             block OLD's (seed 0: zeros); names the first
 *                             wrong block
 *   zero PATH LBA / error PATH LBA   pmemblk_set_zero / pmemblk_set_error
 *   check PATH                pmemblk_check(): exit 0 consistent (1),
 *                             3 inconsistent (0), 4 error (-1)
 *   ctl                       every ctl value, "name value" per line (as
 *                             PMEMBLK_CONF and PMEMBLK_CONF_FILE set them)
 * Any failure prints pmemblk_errormsg() and exits 1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <libpmemblk.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int die(const char *what)
{
	fprintf(stderr, "pmemblk_tool: %s: %s (errno %d)\n", what,
		pmemblk_errormsg(), errno);
	return 1;
}

/* The pattern of (seed, lba): 8-byte words of a splitmix64 sequence. */
static void pattern(unsigned char *buf, size_t n, uint64_t seed, uint64_t lba)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull ^ (lba + 1);

	if (seed == 0) {
		memset(buf, 0, n);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (i % 8 == 0) {
			x += 0x9e3779b97f4a7c15ull;
			x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
			x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
			x ^= x >> 31;
		}
		buf[i] = (unsigned char)(x >> (8 * (i % 8)));
	}
}

static int blocks(const char *path, uint64_t seed, uint64_t step,
		  uint64_t old, int verify)
{
	PMEMblkpool *p = pmemblk_open(path, 0);
	unsigned char *buf, *want;
	size_t bs, n, bad = 0;

	if (!p)
		return die("pmemblk_open");
	bs = pmemblk_bsize(p);
	n = pmemblk_nblock(p);
	buf = malloc(bs);
	want = malloc(bs);
	if (!buf || !want || step == 0)
		return die("arguments");
	for (size_t lba = 0; lba < n; lba++) {
		if (!verify) {
			if (lba % step)
				continue;
			pattern(buf, bs, seed, lba);
			if (pmemblk_write(p, buf, (long long)lba))
				return die("pmemblk_write");
			continue;
		}
		pattern(want, bs, lba % step ? old : seed, lba);
		if (pmemblk_read(p, buf, (long long)lba))
			return die("pmemblk_read");
		if (memcmp(buf, want, bs) && bad++ == 0)
			fprintf(stderr, "pmemblk_tool: block %zu differs\n", lba);
	}
	printf("%s %zu blocks of %zu bytes, %zu wrong\n",
	       verify ? "verified" : "wrote", n, bs, bad);
	free(buf);
	free(want);
	pmemblk_close(p);
	return bad ? 2 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (!strcmp(cmd, "which") && argc == 2) {
		Dl_info info;

		if (!dladdr((void *)pmemblk_open, &info) || !info.dli_fname)
			return 1;
		printf("%s\n", info.dli_fname);
		return 0;
	}
	if (!strcmp(cmd, "ctl") && argc == 2) {
		static const char *const names[] = {
			"prefault.at_create", "prefault.at_open",
			"fallocate.at_create", "copy_on_write.at_open",
			"sds.at_create",
		};

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			int v = -1;

			if (pmemblk_ctl_get(NULL, names[i], &v))
				return die(names[i]);
			printf("%s %d\n", names[i], v);
		}
		return 0;
	}
	if (!strcmp(cmd, "create") && argc == 5) {
		PMEMblkpool *p = pmemblk_create(argv[2], strtoull(argv[3], 0, 0),
						strtoull(argv[4], 0, 0), 0644);

		if (!p)
			return die("pmemblk_create");
		printf("bsize %zu nblock %zu\n", pmemblk_bsize(p),
		       pmemblk_nblock(p));
		pmemblk_close(p);
		return 0;
	}
	if (!strcmp(cmd, "write") && argc == 5)
		return blocks(argv[2], strtoull(argv[3], 0, 0),
			      strtoull(argv[4], 0, 0), 0, 0);
	if (!strcmp(cmd, "verify") && argc == 6)
		return blocks(argv[2], strtoull(argv[3], 0, 0),
			      strtoull(argv[4], 0, 0), strtoull(argv[5], 0, 0), 1);
	if ((!strcmp(cmd, "zero") || !strcmp(cmd, "error")) && argc == 4) {
		PMEMblkpool *p = pmemblk_open(argv[2], 0);
		long long lba = strtoll(argv[3], 0, 0);

		if (!p)
			return die("pmemblk_open");
		if ((cmd[0] == 'z' ? pmemblk_set_zero : pmemblk_set_error)(p, lba))
			return die(cmd);
		pmemblk_close(p);
		return 0;
	}
	if (!strcmp(cmd, "check") && argc == 3) {
		int r = pmemblk_check(argv[2], 0);

		printf("pmemblk_check: %d\n", r);
		if (r < 0)
			fprintf(stderr, "pmemblk_tool: %s\n", pmemblk_errormsg());
		return r == 1 ? 0 : r == 0 ? 3 : 4;
	}
	fprintf(stderr, "usage: pmemblk_tool which | create PATH BSIZE SIZE | "
		"write PATH SEED STEP | verify PATH SEED STEP OLD | "
		"zero|error PATH LBA | check PATH | ctl\n");
	return 1;
}
