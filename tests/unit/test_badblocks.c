// SPDX-License-Identifier: MIT
/*
 * test_badblocks.c - the bad-sector list and its file (src/badblocks.c),
 * alone and under the block device.
 *
 *   parse_good     a table of list texts and the ranges they give:
 *                  merging, clipping to the device, a last line without
 *                  its newline, the empty text.
 *   parse_bad      a table of texts with one bad line each (garbage
 *                  between valid lines, signs, hex, octal-looking zeros
 *                  are fine but "0x" is not, spaces, a zero count,
 *                  overflow, CR LF, blank lines): -EINVAL and the number
 *                  of the first bad line.
 *   load_refuses   a list file with a garbage line is refused by
 *                  ntm_blk_open() with -EINVAL naming the file and line
 *                  (it used to be cut at that line and rewritten without
 *                  the rest); a directory is -EISDIR; a FIFO is refused at
 *                  once instead of blocking; a read-only namespace lists.
 *   save_durable   the order of the system calls behind a change: the
 *                  list is written to a temporary file, that file is
 *                  fsync'd, renamed over the list, and the directory is
 *                  fsync'd. fsync() and rename() are interposed below, so
 *                  deleting either fsync from badblocks.c fails this test.
 *   save_fails     each step of a save made to fail in turn (fsync of the
 *                  file, rename, fsync of the directory), and a list whose
 *                  directory does not exist: the add or clear returns the
 *                  error, and the list in memory and on disk are as they
 *                  were; no temporary file is left.
 *   clear_fails    a write over a bad sector whose clearing cannot be
 *                  saved returns the error and the sector stays bad: the
 *                  next read is -EIO, never the old data with success.
 *   two_opens      two devices over one namespace (as two processes):
 *                  each change starts from the file's list as it is, so
 *                  neither's injects or clears undo the other's.
 *   save_fails_no_file  a failed first change leaves no list file.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ntmem.h>
#include "badblocks.h"
#include "../lib/testutil.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DEV_SIZE ((size_t)1 << 20)
#define NSECT (DEV_SIZE / NTM_BADBLOCK_SECTOR)

static char dir[64];

/* --- interposed system calls -------------------------------------------- */

/*
 * The library is linked statically into this test, so these definitions
 * replace libc's for its calls: each call is logged as one line, and a
 * step can be made to fail.
 */
static char calls[4096];
static int fail_fsync_at;	/* 1-based fsync call to fail with EIO; 0: none */
static int fail_rename;		/* rename fails with EIO */
static int nfsync;

static void log_call(const char *fmt, ...)
{
	size_t used = strlen(calls);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(calls + used, sizeof(calls) - used, fmt, ap);
	va_end(ap);
}

/* The name an fd refers to, relative to the test directory. */
static const char *fd_name(int fd, char *buf, size_t len)
{
	char link[64], target[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return "?";
	target[n] = '\0';
	if (strncmp(target, dir, strlen(dir)) == 0)
		snprintf(buf, len, "%s", target[strlen(dir)] ?
			 target + strlen(dir) + 1 : ".");
	else
		snprintf(buf, len, "%s", target);
	return buf;
}

int fsync(int fd)
{
	char name[PATH_MAX];

	nfsync++;
	log_call("fsync %s\n", fd_name(fd, name, sizeof(name)));
	if (nfsync == fail_fsync_at) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_fsync, fd);
}

int rename(const char *from, const char *to)
{
	log_call("rename %s %s\n", strrchr(from, '/') + 1, strrchr(to, '/') + 1);
	if (fail_rename) {
		errno = EIO;
		return -1;
	}
	return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, 0);
}

static void calls_reset(void)
{
	calls[0] = '\0';
	nfsync = 0;
	fail_fsync_at = 0;
	fail_rename = 0;
}

/* --- helpers ------------------------------------------------------------ */

static int setup(void **state)
{
	(void)state;
	return tu_scratch_dir(dir, sizeof(dir), "ntmem-bb");
}

static int teardown(void **state)
{
	(void)state;
	return tu_remove_tree(dir);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *path)
{
	static char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Entries of the test directory other than @keep1 and @keep2. */
static int stray_files(const char *keep1, const char *keep2)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && strcmp(e->d_name, keep1) &&
		    (!keep2 || strcmp(e->d_name, keep2)))
			n++;
	closedir(d);
	return n;
}

/* The list of @blk, as "s n;s n;" text. */
static const char *list_of(struct ntm_blk *blk)
{
	static char buf[512];
	struct ntm_badblock bb[16];
	size_t n = ntm_blk_badblocks(blk, bb, ARRAY_SIZE(bb));

	buf[0] = '\0';
	for (size_t i = 0; i < n && i < ARRAY_SIZE(bb); i++)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 "%llu %llu;", (unsigned long long)bb[i].sector,
			 (unsigned long long)bb[i].count);
	return buf;
}

/* Why the tests of the emulated list skip on a DAX scratch directory. */
#define NEEDS_EMULATED "an emulated namespace (its bad sectors are in " \
	"PATH.badblocks; an fsdax one's are the kernel's)"

struct emu {
	char path[PATH_MAX], list[PATH_MAX];
	struct ntm_ns *ns;
	struct ntm_blk *blk;
};

/*
 * An emulated namespace "emu" in the test directory, and its device (the
 * calling test is skipped when the directory is DAX: no emulation there).
 */
static void emu_open(struct emu *e, const char *list_text)
{
	int ret;

	tu_skip_on_dax(dir, NEEDS_EMULATED);
	snprintf(e->path, sizeof(e->path), "%s/emu", dir);
	snprintf(e->list, sizeof(e->list), "%s/emu.badblocks", dir);
	if (list_text)
		write_text(e->list, list_text);
	if (access(e->path, F_OK) == 0)
		ret = ntm_ns_open(&e->ns, e->path, NTM_NS_EMULATE);
	else
		ret = ntm_ns_create(&e->ns, e->path, DEV_SIZE, 4096, NTM_NS_EMULATE);
	if (ret)
		fail_msg("namespace: %s", ntm_errmsg());
	ret = ntm_blk_open(&e->blk, e->ns, NULL);
	if (ret)
		fail_msg("ntm_blk_open: %d %s", ret, ntm_errmsg());
}

static void emu_close(struct emu *e, bool remove)
{
	ntm_blk_close(e->blk);
	ntm_ns_close(e->ns);
	if (remove) {
		unlink(e->path);
		unlink(e->list);
	}
}

/* --- parse ---------------------------------------------------------------- */

static void test_parse_good(void **state)
{
	static const struct {
		const char *text;
		const char *want;	/* "s n;" per range */
	} rows[] = {
		{ "", "" },
		{ "8 2\n", "8 2;" },
		{ "8 2", "8 2;" },			/* no final newline */
		{ "100 3\n8 2\n", "8 2;100 3;" },	/* unsorted */
		{ "8 2\n10 1\n", "8 3;" },		/* touching: merged */
		{ "8 4\n9 1\n", "8 4;" },		/* inside */
		{ "0 1\n2047 1\n", "0 1;2047 1;" },	/* both ends */
		{ "2040 100\n", "2040 8;" },		/* clipped to the device */
		{ "2048 1\n5 5\n", "5 5;" },		/* past the end: dropped */
		{ "007 1\n", "7 1;" },			/* decimal, not octal */
		{ "18446744073709551614 1\n", "" },	/* the largest range */
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct ntm_bb_list list = { 0, NULL };
		size_t line = 0;
		char got[256] = "";
		int ret = ntm_bb_parse(rows[i].text, strlen(rows[i].text), NSECT,
				       &list, &line);

		if (ret)
			fail_msg("row %zu '%s': %d at line %zu", i, rows[i].text,
				 ret, line);
		for (size_t k = 0; k < list.n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got),
				 "%llu %llu;", (unsigned long long)list.v[k].sector,
				 (unsigned long long)list.v[k].count);
		if (strcmp(got, rows[i].want))
			fail_msg("row %zu '%s': got '%s', want '%s'", i,
				 rows[i].text, got, rows[i].want);
		ntm_bb_free(&list);
	}
}

static void test_parse_bad(void **state)
{
	static const struct {
		const char *text;
		size_t line;
	} rows[] = {
		{ "8 2\ngarbage\n100 3\n", 2 },
		{ "x", 1 },
		{ "-1 2\n", 1 },
		{ "+8 2\n", 1 },
		{ "8 -2\n", 1 },
		{ "0x10 1\n", 1 },
		{ "8\n", 1 },
		{ "8 \n", 1 },
		{ " 8 1\n", 1 },
		{ "8  1\n", 1 },
		{ "8\t1\n", 1 },
		{ "8 1 \n", 1 },
		{ "8 1 3\n", 1 },
		{ "8 0\n", 1 },
		{ "8 1\r\n", 1 },
		{ "8 1\n\n9 1\n", 2 },
		{ "8 1\n9 1\n\n", 3 },
		{ "1e3 1\n", 1 },
		{ "18446744073709551616 1\n", 1 },	/* 2^64 */
		{ "18446744073709551615 1\n", 1 },	/* the range wraps */
		{ "1 18446744073709551615\n", 1 },
		{ "8 2\n9 1\n10 x\n", 3 },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct ntm_bb_list list = { 0, NULL };
		size_t line = 0;
		int ret = ntm_bb_parse(rows[i].text, strlen(rows[i].text), NSECT,
				       &list, &line);

		if (ret != -EINVAL || line != rows[i].line)
			fail_msg("row %zu: %d at line %zu, want -EINVAL at line %zu",
				 i, ret, line, rows[i].line);
		assert_int_equal(list.n, 0);
	}
}

/* --- load ----------------------------------------------------------------- */

static void test_load_refuses(void **state)
{
	struct ntm_ns *ns;
	struct ntm_blk *blk = NULL;
	struct emu e;
	char fifo[PATH_MAX];
	char want[PATH_MAX + 32];
	struct ntm_blk_config cfg = { 0 };
	int ret;

	(void)state;
	tu_skip_on_dax(dir, NEEDS_EMULATED);
	snprintf(e.path, sizeof(e.path), "%s/emu", dir);
	snprintf(e.list, sizeof(e.list), "%s/emu.badblocks", dir);
	assert_int_equal(ntm_ns_create(&ns, e.path, DEV_SIZE, 4096,
				       NTM_NS_EMULATE), 0);

	/* A garbage line between valid ones: refused, the file untouched. */
	write_text(e.list, "8 2\ngarbage\n100 3\n");
	ret = ntm_blk_open(&blk, ns, NULL);
	assert_int_equal(ret, -EINVAL);
	assert_null(blk);
	snprintf(want, sizeof(want), "'%s': line 2", e.list);
	if (!strstr(ntm_errmsg(), want))
		fail_msg("message '%s' lacks \"%s\"", ntm_errmsg(), want);
	assert_string_equal(read_text(e.list), "8 2\ngarbage\n100 3\n");

	/* A directory. */
	unlink(e.list);
	assert_int_equal(mkdir(e.list, 0700), 0);
	assert_int_equal(ntm_blk_open(&blk, ns, NULL), -EISDIR);
	assert_non_null(strstr(ntm_errmsg(), e.list));
	rmdir(e.list);

	/* A FIFO with no writer: refused at once (the alarm ends a hang). */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	cfg.badblocks_path = fifo;
	alarm(10);
	assert_int_equal(ntm_blk_open(&blk, ns, &cfg), -EINVAL);
	alarm(0);
	assert_non_null(strstr(ntm_errmsg(), "not a regular file"));
	unlink(fifo);
	ntm_ns_close(ns);

	/* Listing needs read access only: a read-only namespace lists. */
	write_text(e.list, "8 2\n100 3\n");
	assert_int_equal(ntm_ns_open(&ns, e.path, NTM_NS_READONLY | NTM_NS_EMULATE), 0);
	assert_int_equal(ntm_blk_open(&blk, ns, NULL), 0);
	assert_string_equal(list_of(blk), "8 2;100 3;");
	assert_int_equal(ntm_blk_badblocks_add(blk, 1, 1), -EROFS);
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	unlink(e.list);
	unlink(e.path);
}

/* --- save ----------------------------------------------------------------- */

static void test_save_durable(void **state)
{
	char want[512];
	struct emu e;
	const char *tmp;
	char tmpname[64];

	(void)state;
	emu_open(&e, NULL);
	calls_reset();
	assert_int_equal(ntm_blk_badblocks_add(e.blk, 8, 2), 0);
	assert_string_equal(read_text(e.list), "8 2\n");
	/* The temporary file's name is random: take it from the log. */
	tmp = strstr(calls, "fsync emu.badblocks.");
	assert_non_null(tmp);
	sscanf(tmp, "fsync %63s", tmpname);
	snprintf(want, sizeof(want), "fsync %s\nrename %s emu.badblocks\nfsync .\n",
		 tmpname, tmpname);
	if (strcmp(calls, want))
		fail_msg("system calls:\n%s\nwanted:\n%s", calls, want);
	assert_int_equal(stray_files("emu", "emu.badblocks"), 0);

	/* The same for a clear, and for a write that clears. */
	calls_reset();
	assert_int_equal(ntm_blk_badblocks_clear(e.blk, 8, 1), 0);
	assert_string_equal(read_text(e.list), "9 1\n");
	assert_non_null(strstr(calls, "rename"));
	assert_non_null(strstr(strstr(calls, "rename"), "fsync .\n"));
	{
		unsigned char buf[512];

		memset(buf, 0x5a, sizeof(buf));
		calls_reset();
		assert_int_equal(ntm_blk_write(e.blk, buf, 512, 9 * 512, 0), 512);
		assert_string_equal(read_text(e.list), "");
		assert_non_null(strstr(strstr(calls, "rename"), "fsync .\n"));
	}
	emu_close(&e, true);
}

static void test_save_fails(void **state)
{
	static const struct {
		const char *what;
		int fsync_at, rename;
	} steps[] = {
		{ "fsync of the temporary file", 1, 0 },
		{ "rename over the list", 0, 1 },
		{ "fsync of the directory", 2, 0 },
	};
	struct ntm_blk_config cfg = { 0 };
	struct ntm_ns *ns;
	struct ntm_blk *blk;
	char missing[PATH_MAX];
	struct emu e;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
		for (int add = 0; add <= 1; add++) {
			emu_open(&e, "8 2\n");
			calls_reset();
			fail_fsync_at = steps[i].fsync_at;
			fail_rename = steps[i].rename;
			if (add)
				assert_int_equal(ntm_blk_badblocks_add(e.blk, 20, 1), -EIO);
			else
				assert_int_equal(ntm_blk_badblocks_clear(e.blk, 8, 1), -EIO);
			calls_reset();
			if (strcmp(list_of(e.blk), "8 2;"))
				fail_msg("%s failed (%s): the list became '%s'",
					 steps[i].what, add ? "add" : "clear",
					 list_of(e.blk));
			if (strcmp(read_text(e.list), "8 2\n"))
				fail_msg("%s failed (%s): the file became '%s'",
					 steps[i].what, add ? "add" : "clear",
					 read_text(e.list));
			assert_int_equal(stray_files("emu", "emu.badblocks"), 0);
			emu_close(&e, true);
		}
	}

	/* A list in a directory that does not exist: the case. */
	snprintf(missing, sizeof(missing), "%s/no/such/dir/list", dir);
	snprintf(e.path, sizeof(e.path), "%s/emu", dir);
	assert_int_equal(ntm_ns_create(&ns, e.path, DEV_SIZE, 4096,
				       NTM_NS_EMULATE), 0);
	cfg.badblocks_path = missing;
	assert_int_equal(ntm_blk_open(&blk, ns, &cfg), 0);
	assert_int_equal(ntm_blk_badblocks_add(blk, 8, 1), -ENOENT);
	assert_string_equal(list_of(blk), "");
	{
		unsigned char old[512], buf[512], got[512];

		assert_int_equal(ntm_blk_read(blk, old, 512, 8 * 512), 512);
		memset(buf, 0xa5, sizeof(buf));
		assert_int_equal(ntm_blk_write(blk, buf, 512, 8 * 512,
					       NTM_BLK_FUA), 512);
		assert_int_equal(ntm_blk_read(blk, got, 512, 8 * 512), 512);
		assert_memory_equal(got, buf, 512);
	}
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	unlink(e.path);
}

static void test_clear_fails(void **state)
{
	unsigned char buf[512];
	struct emu e;

	(void)state;
	emu_open(&e, "8 1\n");
	memset(buf, 0x77, sizeof(buf));
	calls_reset();
	fail_rename = 1;
	assert_int_equal(ntm_blk_write(e.blk, buf, 512, 8 * 512, NTM_BLK_FUA), -EIO);
	calls_reset();
	/* Still bad: a read fails instead of returning any data. */
	assert_string_equal(list_of(e.blk), "8 1;");
	assert_int_equal(ntm_blk_read(e.blk, buf, 512, 8 * 512), -EIO);
	assert_string_equal(read_text(e.list), "8 1\n");
	/* Once saving works again, the write clears it. */
	memset(buf, 0x78, sizeof(buf));
	assert_int_equal(ntm_blk_write(e.blk, buf, 512, 8 * 512, 0), 512);
	assert_string_equal(list_of(e.blk), "");
	assert_int_equal(ntm_blk_read(e.blk, buf, 512, 8 * 512), 512);
	assert_int_equal(buf[0], 0x78);
	emu_close(&e, true);
}

/*
 * Two devices over one namespace, each with the list it read at open, as
 * two processes have: a change by one is made to the file's list as it
 * is now, so neither loses the other's entries (each wrote back its own
 * list from open, and an inject or a clear by one undid the other's).
 */
static void test_two_opens(void **state)
{
	struct ntm_blk *second;
	unsigned char buf[512];
	struct emu e;

	(void)state;
	emu_open(&e, "8 1\n");
	assert_int_equal(ntm_blk_open(&second, e.ns, NULL), 0);
	assert_int_equal(ntm_blk_badblocks_add(e.blk, 20, 1), 0);
	assert_int_equal(ntm_blk_badblocks_add(second, 30, 2), 0);
	assert_string_equal(read_text(e.list), "8 1\n20 1\n30 2\n");
	assert_string_equal(list_of(second), "8 1;20 1;30 2;");
	/* The first device clears sector 8 by writing it. */
	memset(buf, 0x5c, sizeof(buf));
	assert_int_equal(ntm_blk_write(e.blk, buf, 512, 8 * 512, 0), 512);
	assert_string_equal(read_text(e.list), "20 1\n30 2\n");
	assert_string_equal(list_of(e.blk), "20 1;30 2;");
	/* The second clears what the first injected: the file agrees. */
	assert_int_equal(ntm_blk_badblocks_clear(second, 20, 1), 0);
	assert_string_equal(read_text(e.list), "30 2\n");
	assert_string_equal(list_of(second), "30 2;");
	assert_int_equal(stray_files("emu", "emu.badblocks"), 0);
	ntm_blk_close(second);
	emu_close(&e, true);
}

/*
 * A change whose save fails, on a device with no list file yet: the
 * file it made to lock is gone again, as is every temporary one.
 */
static void test_save_fails_no_file(void **state)
{
	struct emu e;

	(void)state;
	emu_open(&e, NULL);
	assert_int_equal(access(e.list, F_OK), -1);
	calls_reset();
	fail_rename = 1;
	assert_int_equal(ntm_blk_badblocks_add(e.blk, 20, 1), -EIO);
	calls_reset();
	assert_string_equal(list_of(e.blk), "");
	assert_int_equal(access(e.list, F_OK), -1);
	assert_int_equal(stray_files("emu", NULL), 0);
	emu_close(&e, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_good),
		cmocka_unit_test(test_parse_bad),
		cmocka_unit_test(test_load_refuses),
		cmocka_unit_test(test_save_durable),
		cmocka_unit_test(test_save_fails),
		cmocka_unit_test(test_clear_fails),
		cmocka_unit_test(test_two_opens),
		cmocka_unit_test(test_save_fails_no_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
