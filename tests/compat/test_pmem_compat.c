// SPDX-License-Identifier: MIT
/*
 * test_pmem_compat.c - ntmem's libpmem.so.1 against PMDK's own header.
 *
 * Built with `#include <libpmem.h>` from /usr/include (Debian's
 * libpmem-dev, i.e. PMDK's header, never ntmem's compat/libpmem/include)
 * and linked with ntmem's libpmem.so.1: it proves that a program written
 * for PMDK builds and runs unchanged on ntmem, and that each of the 23
 * functions behaves the way PMDK documents and implements it (PMDK
 * 1.12.1, the version Debian ships). Every expectation below also holds
 * for PMDK's own library, which is how the test itself was checked; meson
 * runs the map, unmap, is_pmem and environment tests against Debian's
 * libpmem too (NTMEM_TEST_PMDK=1 marks ntmem's deliberate differences).
 *
 *   map_*       pmem_map_file(): CREATE (created, sized and allocated,
 *               mode, mapped_len, is_pmem, shared with the file), CREATE
 *               on an existing file resizes it, CREATE|EXCL on an existing
 *               file, len 0 with CREATE and len != 0 without it, a missing
 *               file, TMPFILE without CREATE, a directory, TMPFILE in a
 *               directory (no entry appears), SPARSE (no blocks), an
 *               unknown flag, an existing file mapped whole (also one whose
 *               size is not a page multiple); pmem_unmap() returns 0 and
 *               the data stays in the file. map_table: one row per
 *               argument combination and failing step (open, ftruncate,
 *               posix_fallocate): errno, the step in pmem_errormsg(), what
 *               is left on disk. map_align_2m: 2 MiB alignment.
 *               map_threads: 2, 4 and 8 threads map their own files of
 *               4 KiB, 64 KiB and 4 MiB again and again at once, on a disk
 *               file system and on tmpfs: every store reaches its own file
 *               (pread), nothing fails or faults. map_no_fd: a mapping
 *               keeps no descriptor, so 48 of them fit under a limit of 8
 *               more descriptors than the process has open.
 *               map_not_a_file: /dev/null, /dev/zero and a FIFO, with and
 *               without CREATE, are EINVAL and create nothing.
 *   unmap_*     pmem_unmap() of the head, middle and tail of a mapping,
 *               across holes, of memory it did not map, what munmap(2)
 *               refuses; exactly those pages go, the rest keeps its data
 *               and its is_pmem answer.
 *   is_pmem     pmem_is_pmem() on len 0, on a pmem_map_file() range, on
 *               malloc() memory. PMEM_IS_PMEM_FORCE=0/1/2/"" (meson runs
 *               those as separate processes, the library reads it once)
 *               changes the expected answers; a DAX file system may answer
 *               1 for a mapped file, anything else must answer 0, except
 *               NTMEM_TEST_MAPPED_IS_PMEM=1 (the drop-in's emulated test
 *               build in tmpfs), where mapped files answer 1.
 *   env_force_lazy  setenv("PMEM_IS_PMEM_FORCE") before the first
 *               pmem_is_pmem() is honoured; only when named, alone.
 *   copy_*      pmem_memcpy/memmove/memset with every valid flag set, and
 *               the _nodrain and _persist forms, over sizes 0..1024 at
 *               destination offsets 0..63 (the source offset varies with
 *               both), sizes up to 1 MiB, and overlapping memmove in both
 *               directions; each result is compared with libc on a
 *               reference buffer, guard bytes around the range included,
 *               and the whole arena after each sweep. The destination is a
 *               pmem_map_file() mapping, as in a real program; and, for a
 *               shorter sweep, anonymous memory the library did not map
 *               (fio's dev-dax engine maps the device itself).
 *   flush_*     pmem_flush/drain/persist/deep_* on odd ranges of mapped,
 *               heap and stack memory: no crash, data unchanged, deep ones
 *               return 0. pmem_msync on a file range (the data is in the
 *               file: pread), on an unaligned address, and on an unmapped
 *               range (-1, ENOMEM).
 *   caps        pmem_has_hw_drain() and pmem_has_auto_flush() answers.
 *   version     pmem_check_version() and the message it leaves.
 *   errormsg_*  pmem_errormsg() is per thread.
 *   library     the one libpmem.so.1 in the process is the file named by
 *               NTMEM_TEST_LIBPMEM (meson sets it to ntmem's), not PMDK's
 *               found first through LD_LIBRARY_PATH or the system paths.
 *
 * Arguments: fnmatch() patterns of the tests to run (default all); meson
 * runs the copy and flush tests again under each PMEM_* variable that
 * changes which code path PMDK (and so ntmem) takes.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#if !__has_include(<libpmem.h>)
#include <stdio.h>
int main(void)
{
	puts("SKIP: PMDK's libpmem.h is not installed");
	return 77;
}
#else

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include <libpmem.h>
#include "../lib/testutil.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define PG ((size_t)4096)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* The fresh directory every file test works in (group setup/teardown). */
static char dir[64];
/* dir is on a file system mounted with -o dax: is_pmem may be 1 there. */
static bool dir_dax;
/* dir is on tmpfs. */
static bool dir_tmpfs;

static void path_in_dir(char *out, size_t n, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* --- expectations for pmem_is_pmem ------------------------------------ */

/*
 * PMDK reads PMEM_IS_PMEM_FORCE with atoi(): 0 forces "never", 1 forces
 * "always", anything else (or unset) means detection. Returns 0, 1, or -1
 * for "not forced".
 */
static int is_pmem_forced(void)
{
	const char *e = getenv("PMEM_IS_PMEM_FORCE");
	int v;

	if (!e)
		return -1;
	v = atoi(e);
	return v == 0 || v == 1 ? v : -1;
}

/*
 * NTMEM_TEST_MAPPED_IS_PMEM=1: the library under test counts every file it
 * maps as pmem (the test build of the drop-in that maps as emulated pmem),
 * so the registry's answers are checked without a DAX file system.
 */
static bool mapped_is_pmem(void)
{
	const char *e = getenv("NTMEM_TEST_MAPPED_IS_PMEM");

	/* Emulated pmem is only pmem where the page cache is the medium. */
	return e && !strcmp(e, "1") && dir_tmpfs;
}

/*
 * NTMEM_TEST_PMDK=1: the library under test is PMDK's own. The few
 * places where ntmem deliberately differs say so.
 */
static bool testing_pmdk(void)
{
	const char *e = getenv("NTMEM_TEST_PMDK");

	return e && !strcmp(e, "1");
}

/* Expected is_pmem of a pmem_map_file() mapping in dir: 0, 1, -1 either. */
static int expect_mapped_is_pmem(void)
{
	int f = is_pmem_forced();

	if (f >= 0)
		return f;
	if (mapped_is_pmem())
		return 1;
	return dir_dax ? -1 : 0;
}

/* Expected is_pmem of memory the library did not map (malloc). */
static int expect_other_is_pmem(void)
{
	int f = is_pmem_forced();

	return f >= 0 ? f : 0;
}

/* The mount holding @path has a dax option other than dax=never. */
static bool on_dax_mount(const char *path)
{
	char real[PATH_MAX], mnt[512], opts[512], line[2048];
	size_t best = 0;
	bool dax = false;
	FILE *f;

	if (!realpath(path, real))
		return false;
	f = fopen("/proc/self/mounts", "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		size_t n;

		if (sscanf(line, "%*s %511s %*s %511s", mnt, opts) != 2)
			continue;
		n = strlen(mnt);
		if (strncmp(real, mnt, n) != 0 ||
		    (real[n] != '/' && real[n] != '\0' && n != 1) || n < best)
			continue;
		best = n;
		dax = strstr(opts, "dax") && !strstr(opts, "dax=never");
	}
	fclose(f);
	return dax;
}

/* --- files ------------------------------------------------------------ */

/* In NTMEM_TEST_TMPDIR (default /tmp): meson picks tmpfs for emulation. */
static int dir_setup(void **state)
{
	const char *tmp = getenv("NTMEM_TEST_TMPDIR");
	struct statfs sf;

	(void)state;
	umask(022);
	snprintf(dir, sizeof(dir), "%s/ntmem-test-pmem-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	dir_dax = on_dax_mount(dir);
	dir_tmpfs = statfs(dir, &sf) == 0 && sf.f_type == TMPFS_MAGIC;
	return 0;
}

/* Remove whatever the tests left (they clean up unless one failed). */
static int dir_teardown(void **state)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX];

	(void)state;
	if (d) {
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (unlink(path) && errno == EISDIR)
				rmdir(path);
		}
		closedir(d);
	}
	return rmdir(dir) ? -1 : 0;
}

/* Entries in @path other than "." and "..". */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static struct stat stat_of(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		fail_msg("stat %s: %s", path, strerror(errno));
	return st;
}

/* The file at @path holds @n pseudo-random bytes from @seed. */
static void check_file_seed(const char *path, size_t n, uint64_t seed)
{
	unsigned char *want = malloc(n ? n : 1);

	assert_non_null(want);
	tu_fill_random(want, n, seed);
	tu_check_file_bytes(path, 0, want, n);
	free(want);
}

/* pmem_errormsg() is a non-empty string. */
static void check_errormsg_set(const char *what)
{
	const char *msg = pmem_errormsg();

	if (!msg || !*msg)
		fail_msg("%s: pmem_errormsg() is %s", what,
			 msg ? "empty" : "NULL");
}

/*
 * pmem_map_file(@path, @len, @flags) must fail: NULL, errno @err (or @err2
 * when non-zero), a message, and the output arguments untouched.
 */
static void expect_map_error(const char *path, size_t len, int flags,
			     int err, int err2, const char *what)
{
	size_t mapped_len = 12345;
	int is_pmem = 7;
	void *p;

	errno = 0;
	p = pmem_map_file(path, len, flags, 0600, &mapped_len, &is_pmem);
	if (p) {
		pmem_unmap(p, mapped_len);
		fail_msg("%s: pmem_map_file(%s, %zu, 0x%x) succeeded", what,
			 path, len, flags);
	}
	if (errno != err && (err2 == 0 || errno != err2))
		fail_msg("%s: errno %d (%s), expected %s%s%s", what, errno,
			 strerror(errno), strerror(err), err2 ? " or " : "",
			 err2 ? strerror(err2) : "");
	check_errormsg_set(what);
	assert_int_equal(mapped_len, 12345);
	assert_int_equal(is_pmem, 7);
}

/* --- map -------------------------------------------------------------- */

/* CREATE: a new file of len bytes, allocated, mode applied, shared. */
static void test_map_create(void **state)
{
	const size_t len = 256 * KiB + PG;
	unsigned char *want = malloc(len);
	size_t mapped_len = 0;
	int is_pmem = -7, expect = expect_mapped_is_pmem();
	char path[128];
	struct stat st;
	unsigned char *p;

	(void)state;
	assert_non_null(want);
	path_in_dir(path, sizeof(path), "create");
	p = pmem_map_file(path, len, PMEM_FILE_CREATE, 0640, &mapped_len,
			  &is_pmem);
	if (!p)
		fail_msg("pmem_map_file CREATE: %s", pmem_errormsg());
	assert_int_equal(mapped_len, len);
	assert_true(is_pmem == 0 || is_pmem == 1);
	if (expect >= 0 && is_pmem != expect)
		fail_msg("is_pmem %d, expected %d (PMEM_IS_PMEM_FORCE=%s, "
			 "dax mount %d)", is_pmem, expect,
			 getenv("PMEM_IS_PMEM_FORCE") ?: "(unset)", dir_dax);
	assert_int_equal(pmem_is_pmem(p, len), is_pmem);

	st = stat_of(path);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, (off_t)len);
	assert_int_equal(st.st_mode & 0777, 0640);
	/* Not SPARSE: PMDK posix_fallocate()s the whole length. */
	if ((size_t)st.st_blocks * 512 < len)
		fail_msg("%zu of %zu bytes allocated without PMEM_FILE_SPARSE",
			 (size_t)st.st_blocks * 512, len);

	/* A fresh file reads as zeros, every byte is writable, and the
	 * mapping is the file's (MAP_SHARED), not a private copy. */
	for (size_t i = 0; i < len; i += 997)
		assert_int_equal(p[i], 0);
	tu_fill_random(want, len, 0xc4ea7e);
	assert_ptr_equal(pmem_memcpy_persist(p, want, len), p);
	tu_check_file_bytes(path, 0, want, len);
	assert_int_equal(pmem_unmap(p, mapped_len), 0);
	tu_check_file_bytes(path, 0, want, len);

	/* Both output pointers are optional. */
	p = pmem_map_file(path, 0, 0, 0, NULL, NULL);
	if (!p)
		fail_msg("pmem_map_file without outputs: %s", pmem_errormsg());
	assert_memory_equal(p, want, len);
	assert_int_equal(pmem_unmap(p, len), 0);
	assert_int_equal(unlink(path), 0);
	free(want);
}

/* CREATE on an existing file keeps it, and sets its size to len (fio). */
static void test_map_create_existing(void **state)
{
	const size_t old = 3 * PG, len = 64 * KiB;
	unsigned char *want = malloc(old);
	size_t mapped_len = 0;
	char path[128];
	unsigned char *p;

	(void)state;
	path_in_dir(path, sizeof(path), "existing");
	tu_write_file(path, old, 0xe1, 0644);
	tu_fill_random(want, old, 0xe1);
	p = pmem_map_file(path, len, PMEM_FILE_CREATE, 0600, &mapped_len, NULL);
	if (!p)
		fail_msg("pmem_map_file CREATE of an existing file: %s",
			 pmem_errormsg());
	assert_int_equal(mapped_len, len);
	assert_int_equal(stat_of(path).st_size, (off_t)len);
	assert_memory_equal(p, want, old);
	for (size_t i = old; i < len; i++)
		if (p[i])
			fail_msg("byte %zu past the old end is 0x%02x", i,
				 p[i]);
	assert_int_equal(pmem_unmap(p, mapped_len), 0);

	/* And shrinks it. */
	p = pmem_map_file(path, PG, PMEM_FILE_CREATE, 0600, &mapped_len, NULL);
	assert_non_null(p);
	assert_int_equal(mapped_len, PG);
	assert_int_equal(stat_of(path).st_size, (off_t)PG);
	assert_memory_equal(p, want, PG);
	assert_int_equal(pmem_unmap(p, mapped_len), 0);
	assert_int_equal(unlink(path), 0);
	free(want);
}

/* CREATE|EXCL on an existing file: EEXIST, the file left alone. */
static void test_map_create_excl(void **state)
{
	char path[128];
	size_t mapped_len = 0;
	void *p;

	(void)state;
	path_in_dir(path, sizeof(path), "excl");
	tu_write_file(path, 2 * PG, 0xe4c1, 0644);
	expect_map_error(path, 8 * PG, PMEM_FILE_CREATE | PMEM_FILE_EXCL,
			 EEXIST, 0, "CREATE|EXCL on an existing file");
	assert_int_equal(stat_of(path).st_size, (off_t)(2 * PG));
	check_file_seed(path, 2 * PG, 0xe4c1);
	assert_int_equal(unlink(path), 0);

	/* On a new path it creates the file. */
	p = pmem_map_file(path, 8 * PG, PMEM_FILE_CREATE | PMEM_FILE_EXCL,
			  0600, &mapped_len, NULL);
	if (!p)
		fail_msg("CREATE|EXCL on a new path: %s", pmem_errormsg());
	assert_int_equal(mapped_len, 8 * PG);
	assert_int_equal(stat_of(path).st_size, (off_t)(8 * PG));
	assert_int_equal(pmem_unmap(p, mapped_len), 0);
	assert_int_equal(unlink(path), 0);
}

/* The argument checks: EINVAL, and no file is created or changed. */
static void test_map_bad_args(void **state)
{
	char path[128], existing[128];
	struct stat st;
	int before;

	(void)state;
	path_in_dir(path, sizeof(path), "never-created");
	path_in_dir(existing, sizeof(existing), "bad-args");
	tu_write_file(existing, 2 * PG, 0xbad, 0644);
	before = count_entries(dir);

	expect_map_error(path, 0, PMEM_FILE_CREATE, EINVAL, 0,
			 "CREATE with len 0");
	expect_map_error(path, 0, PMEM_FILE_CREATE | PMEM_FILE_EXCL, EINVAL, 0,
			 "CREATE|EXCL with len 0");
	expect_map_error(existing, PG, 0, EINVAL, 0, "len != 0 without CREATE");
	expect_map_error(existing, 4 * PG, PMEM_FILE_SPARSE, EINVAL, 0,
			 "len != 0 with SPARSE but without CREATE");
	expect_map_error(path, 4 * PG, PMEM_FILE_CREATE | (1 << 10), EINVAL, 0,
			 "unknown flag 1<<10");
	expect_map_error(existing, 0, 1 << 10, EINVAL, 0,
			 "unknown flag 1<<10 alone");
	expect_map_error(dir, 0, PMEM_FILE_TMPFILE, EINVAL, 0,
			 "TMPFILE without CREATE");
	expect_map_error(path, 0, 0, ENOENT, 0, "a missing file");

	errno = 0;
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(errno, ENOENT);
	st = stat_of(existing);
	assert_int_equal(st.st_size, (off_t)(2 * PG));
	check_file_seed(existing, 2 * PG, 0xbad);
	assert_int_equal(count_entries(dir), before);
	assert_int_equal(unlink(existing), 0);
}

/* A directory is not a file to map unless TMPFILE says so. */
static void test_map_dir(void **state)
{
	int before = count_entries(dir);

	(void)state;
	expect_map_error(dir, 0, 0, EISDIR, EINVAL, "a directory");
	expect_map_error(dir, 4 * PG, PMEM_FILE_CREATE, EISDIR, EINVAL,
			 "a directory with CREATE");
	expect_map_error(dir, 4 * PG, PMEM_FILE_CREATE | PMEM_FILE_EXCL, EEXIST,
			 EISDIR, "a directory with CREATE|EXCL");
	assert_true(S_ISDIR(stat_of(dir).st_mode));
	assert_int_equal(count_entries(dir), before);
}

/* TMPFILE: an unnamed file in the directory, gone after pmem_unmap(). */
static void test_map_tmpfile(void **state)
{
	const size_t len = 128 * KiB;
	size_t mapped_len = 0;
	int is_pmem = -7, expect = expect_mapped_is_pmem();
	unsigned char *p, *want = malloc(len);
	int before = count_entries(dir);

	(void)state;
	assert_non_null(want);
	p = pmem_map_file(dir, len, PMEM_FILE_CREATE | PMEM_FILE_TMPFILE, 0600,
			  &mapped_len, &is_pmem);
	if (!p)
		fail_msg("TMPFILE in %s: %s", dir, pmem_errormsg());
	assert_int_equal(mapped_len, len);
	if (expect >= 0)
		assert_int_equal(is_pmem, expect);
	assert_int_equal(count_entries(dir), before);
	for (size_t i = 0; i < len; i += 509)
		assert_int_equal(p[i], 0);
	tu_fill_random(want, len, 0x7e3f);
	pmem_memcpy(p, want, len, 0);
	assert_memory_equal(p, want, len);
	assert_int_equal(count_entries(dir), before);
	assert_int_equal(pmem_unmap(p, mapped_len), 0);
	assert_int_equal(count_entries(dir), before);
	free(want);
}

/* SPARSE: the file has its size but (almost) no blocks. */
static void test_map_sparse(void **state)
{
	const size_t len = 64 * MiB;
	size_t mapped_len = 0;
	char path[128];
	struct stat st;
	unsigned char *p;

	(void)state;
	path_in_dir(path, sizeof(path), "sparse");
	p = pmem_map_file(path, len, PMEM_FILE_CREATE | PMEM_FILE_SPARSE, 0600,
			  &mapped_len, NULL);
	if (!p)
		fail_msg("CREATE|SPARSE: %s", pmem_errormsg());
	assert_int_equal(mapped_len, len);
	st = stat_of(path);
	assert_int_equal(st.st_size, (off_t)len);
	if ((size_t)st.st_blocks * 512 > MiB)
		fail_msg("SPARSE file of %zu bytes has %zu bytes allocated",
			 len, (size_t)st.st_blocks * 512);
	/* Writing one byte in the middle allocates (about) one block. */
	p[len / 2] = 0x5a;
	assert_int_equal(pmem_msync(p + len / 2, 1), 0);
	assert_int_equal(pmem_unmap(p, mapped_len), 0);
	tu_check_file_bytes(path, len / 2, (const unsigned char *)"\x5a", 1);
	assert_int_equal(unlink(path), 0);
}

/* No CREATE, len 0: the whole existing file, whatever its size. */
static void test_map_existing_whole(void **state)
{
	static const size_t sizes[] = { PG, 5 * PG, 1 * MiB + 3 * PG };
	size_t mapped_len, maxn = 1 * MiB + 3 * PG;
	unsigned char *want = malloc(maxn), *p;
	int is_pmem, expect = expect_mapped_is_pmem();
	char path[128];

	(void)state;
	assert_non_null(want);
	path_in_dir(path, sizeof(path), "whole");
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		size_t n = sizes[i];

		tu_write_file(path, n, 0x40 + i, 0644);
		tu_fill_random(want, n, 0x40 + i);
		mapped_len = 0;
		is_pmem = -7;
		p = pmem_map_file(path, 0, 0, 0, &mapped_len, &is_pmem);
		if (!p)
			fail_msg("mapping an existing %zu-byte file: %s", n,
				 pmem_errormsg());
		assert_int_equal(mapped_len, n);
		if (expect >= 0)
			assert_int_equal(is_pmem, expect);
		assert_memory_equal(p, want, n);
		/* Writable and shared with the file. */
		p[n - 1] ^= 0xff;
		want[n - 1] ^= 0xff;
		assert_int_equal(pmem_msync(p + n - 1, 1), 0);
		tu_check_file_bytes(path, 0, want, n);
		assert_int_equal(pmem_unmap(p, mapped_len), 0);
		assert_int_equal(stat_of(path).st_size, (off_t)n);
		assert_int_equal(unlink(path), 0);
	}
	free(want);
}

/*
 * PMDK maps an existing file of any size: mapped_len is the file size,
 * not rounded to a page (the tail of the last page is not the file's).
 */
static void test_map_existing_odd_size(void **state)
{
	const size_t n = 2 * PG + 1000;
	unsigned char *want = malloc(n), *p;
	size_t mapped_len = 0;
	char path[128];

	(void)state;
	assert_non_null(want);
	path_in_dir(path, sizeof(path), "odd-size");
	tu_write_file(path, n, 0x0dd, 0644);
	tu_fill_random(want, n, 0x0dd);
	p = pmem_map_file(path, 0, 0, 0, &mapped_len, NULL);
	if (!p)
		fail_msg("mapping a %zu-byte file: %s", n, pmem_errormsg());
	assert_int_equal(mapped_len, n);
	assert_memory_equal(p, want, n);
	pmem_memset_persist(p + n - 10, 0xa5, 10);
	memset(want + n - 10, 0xa5, 10);
	assert_int_equal(pmem_msync(p, n), 0);
	tu_check_file_bytes(path, 0, want, n);
	assert_int_equal(pmem_unmap(p, mapped_len), 0);
	assert_int_equal(stat_of(path).st_size, (off_t)n);
	assert_int_equal(unlink(path), 0);
	free(want);
}

/*
 * Every way pmem_map_file() can fail after its argument checks, and the
 * argument combinations PMDK accepts or rejects, one row each: errno, the
 * step pmem_errormsg() names, and what is left on disk. The rows were
 * taken from PMDK 1.12.1 running them (meson runs this test against
 * Debian's libpmem too); pmdk_left marks the rows where ntmem keeps its
 * rule that a failed call changes nothing and PMDK does not.
 */
enum left {
	LEFT_SAME,	/* as before: no file, or the old file unchanged */
	LEFT_EMPTY,	/* a new empty file */
	LEFT_LEN,	/* the file, resized to len */
};

enum where {
	IN_DIR,		/* a file in the test directory */
	IN_DIR_ITSELF,	/* the test directory (TMPFILE) */
	IN_TMPFS,	/* a file on a size-limited tmpfs: posix_fallocate fails */
	IN_DIR_LINK,	/* a dangling symlink in the test directory */
};

struct map_row {
	const char *name;
	enum where where;
	bool exists;		/* an old 2-page file is there first */
	size_t len;		/* TMPFS_TOO_BIG: twice the tmpfs size */
	int flags;
	bool fsize_limit;	/* RLIMIT_FSIZE of 1 MiB: ftruncate fails */
	int err;		/* 0: the call succeeds */
	const char *step;	/* a word pmem_errormsg() holds */
	enum left left, pmdk_left;
};

#define TMPFS_TOO_BIG ((size_t)-2)
#define OLD_SIZE (2 * PG)

static const struct map_row map_rows[] = {
	/* PMDK passes EXCL to open(2), which ignores it without O_CREAT. */
	{ "EXCL without CREATE, missing", IN_DIR, false, 0, PMEM_FILE_EXCL,
	  false, ENOENT, "open", LEFT_SAME, LEFT_SAME },
	{ "EXCL without CREATE, existing", IN_DIR, true, 0, PMEM_FILE_EXCL,
	  false, 0, NULL, LEFT_SAME, LEFT_SAME },
	{ "EXCL|SPARSE without CREATE, existing", IN_DIR, true, 0,
	  PMEM_FILE_EXCL | PMEM_FILE_SPARSE, false, 0, NULL, LEFT_SAME,
	  LEFT_SAME },
	/* A length that is negative as off_t: refused before any open(). */
	{ "CREATE, len SIZE_MAX", IN_DIR, false, SIZE_MAX, PMEM_FILE_CREATE,
	  false, EINVAL, "length", LEFT_SAME, LEFT_SAME },
	{ "CREATE|EXCL, len 1<<63", IN_DIR, false, (size_t)1 << 63,
	  PMEM_FILE_CREATE | PMEM_FILE_EXCL, false, EINVAL, "length",
	  LEFT_SAME, LEFT_SAME },
	{ "CREATE, len 1<<63, existing", IN_DIR, true, (size_t)1 << 63,
	  PMEM_FILE_CREATE, false, EINVAL, "length", LEFT_SAME, LEFT_SAME },
	/* ftruncate() fails (EFBIG past RLIMIT_FSIZE). */
	{ "CREATE, ftruncate fails", IN_DIR, false, 2 * MiB, PMEM_FILE_CREATE,
	  true, EFBIG, "ftruncate", LEFT_SAME, LEFT_EMPTY },
	{ "CREATE|EXCL, ftruncate fails", IN_DIR, false, 2 * MiB,
	  PMEM_FILE_CREATE | PMEM_FILE_EXCL, true, EFBIG, "ftruncate",
	  LEFT_SAME, LEFT_SAME },
	/* O_EXCL does not follow a link; creating through it makes the target. */
	{ "CREATE via a dangling link, ftruncate fails", IN_DIR_LINK, false,
	  2 * MiB, PMEM_FILE_CREATE, true, EFBIG, "ftruncate", LEFT_SAME,
	  LEFT_EMPTY },
	{ "CREATE|SPARSE, ftruncate fails", IN_DIR, false, 2 * MiB,
	  PMEM_FILE_CREATE | PMEM_FILE_SPARSE, true, EFBIG, "ftruncate",
	  LEFT_SAME, LEFT_EMPTY },
	{ "CREATE, existing, ftruncate fails", IN_DIR, true, 2 * MiB,
	  PMEM_FILE_CREATE, true, EFBIG, "ftruncate", LEFT_SAME, LEFT_SAME },
	/* posix_fallocate() fails (ENOSPC past the tmpfs size). */
	{ "CREATE, posix_fallocate fails", IN_TMPFS, false, TMPFS_TOO_BIG,
	  PMEM_FILE_CREATE, false, ENOSPC, "posix_fallocate", LEFT_SAME,
	  LEFT_LEN },
	{ "CREATE|EXCL, posix_fallocate fails", IN_TMPFS, false, TMPFS_TOO_BIG,
	  PMEM_FILE_CREATE | PMEM_FILE_EXCL, false, ENOSPC, "posix_fallocate",
	  LEFT_SAME, LEFT_SAME },
	{ "CREATE, existing, posix_fallocate fails", IN_TMPFS, true,
	  TMPFS_TOO_BIG, PMEM_FILE_CREATE, false, ENOSPC, "posix_fallocate",
	  LEFT_SAME, LEFT_LEN },
	/* open() fails. */
	{ "CREATE|EXCL, existing", IN_DIR, true, 4 * PG,
	  PMEM_FILE_CREATE | PMEM_FILE_EXCL, false, EEXIST, "open", LEFT_SAME,
	  LEFT_SAME },
	{ "no flags, missing", IN_DIR, false, 0, 0, false, ENOENT, "open",
	  LEFT_SAME, LEFT_SAME },
	/* The other argument rules. */
	{ "CREATE, len 0", IN_DIR, false, 0, PMEM_FILE_CREATE, false, EINVAL,
	  "PMEM_FILE_CREATE", LEFT_SAME, LEFT_SAME },
	{ "len without CREATE, existing", IN_DIR, true, 4 * PG, 0, false,
	  EINVAL, "PMEM_FILE_CREATE", LEFT_SAME, LEFT_SAME },
	{ "TMPFILE without CREATE", IN_DIR_ITSELF, false, 0, PMEM_FILE_TMPFILE,
	  false, EINVAL, "PMEM_FILE_TMPFILE", LEFT_SAME, LEFT_SAME },
	{ "TMPFILE|EXCL without CREATE", IN_DIR_ITSELF, false, 0,
	  PMEM_FILE_TMPFILE | PMEM_FILE_EXCL, false, EINVAL,
	  "PMEM_FILE_TMPFILE", LEFT_SAME, LEFT_SAME },
	{ "CREATE|EXCL, missing", IN_DIR, false, 4 * PG,
	  PMEM_FILE_CREATE | PMEM_FILE_EXCL, false, 0, NULL, LEFT_LEN,
	  LEFT_LEN },
};

/*
 * A fresh directory on a tmpfs with a size limit (/dev/shm), where a
 * posix_fallocate() beyond the limit fails at once without allocating
 * anything; "" when there is none. shm_too_big is twice its size.
 */
static char shm[64];
static size_t shm_too_big;

static int shm_setup(void **state)
{
	struct statfs sf;

	(void)state;
	shm[0] = '\0';
	if (statfs("/dev/shm", &sf) || sf.f_type != TMPFS_MAGIC ||
	    sf.f_blocks == 0)
		return 0;
	shm_too_big = 2 * (size_t)sf.f_blocks * (size_t)sf.f_bsize;
	snprintf(shm, sizeof(shm), "/dev/shm/ntmem-test-pmem-XXXXXX");
	if (!mkdtemp(shm))
		shm[0] = '\0';
	return 0;
}

/* Also when a test failed halfway: the file names the tests use. */
static int shm_teardown(void **state)
{
	static const char *const names[] = { "table", "align" };
	char path[PATH_MAX];

	(void)state;
	if (!shm[0])
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		snprintf(path, sizeof(path), "%s/%s", shm, names[i]);
		unlink(path);
	}
	return rmdir(shm) ? -1 : 0;
}

static void check_left(const struct map_row *r, const char *path, size_t len,
		       enum left left)
{
	struct stat st;
	bool there = stat(path, &st) == 0;

	if (left == LEFT_SAME && !r->exists) {
		if (there && r->where != IN_DIR_ITSELF)
			fail_msg("%s: a %lld-byte file was left behind", r->name,
				 (long long)st.st_size);
		return;
	}
	if (!there)
		fail_msg("%s: the file is gone", r->name);
	if (left == LEFT_SAME) {
		if (r->where != IN_DIR_ITSELF)
			check_file_seed(path, OLD_SIZE, 0x7ab1e);
		return;
	}
	if (st.st_size != (off_t)(left == LEFT_EMPTY ? 0 : len))
		fail_msg("%s: the file has %lld bytes, expected %zu", r->name,
			 (long long)st.st_size, left == LEFT_EMPTY ? 0 : len);
}

static void run_map_row(const struct map_row *r)
{
	struct rlimit old, lim;
	size_t len = r->len == TMPFS_TOO_BIG ? shm_too_big : r->len;
	size_t mapped_len = 12345;
	int is_pmem = 7, err;
	char path[PATH_MAX];
	void *p;

	if (r->where == IN_DIR_ITSELF)
		snprintf(path, sizeof(path), "%s", dir);
	else
		snprintf(path, sizeof(path), "%s/table",
			 r->where == IN_TMPFS ? shm : dir);
	if (r->exists)
		tu_write_file(path, OLD_SIZE, 0x7ab1e, 0644);
	if (r->where == IN_DIR_LINK)
		assert_int_equal(symlink("gone", path), 0);
	if (r->fsize_limit) {
		assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
		lim = old;
		lim.rlim_cur = MiB;	/* the hard limit stays: undone below */
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	}
	errno = 0;
	p = pmem_map_file(path, len, r->flags, 0600, &mapped_len, &is_pmem);
	err = errno;
	if (r->fsize_limit)
		assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	if (r->err == 0) {
		if (!p)
			fail_msg("%s: failed: %s", r->name, pmem_errormsg());
		assert_int_equal(pmem_unmap(p, mapped_len), 0);
	} else {
		if (p) {
			pmem_unmap(p, mapped_len);
			fail_msg("%s: succeeded", r->name);
		}
		if (err != r->err)
			fail_msg("%s: errno %d (%s), expected %s", r->name, err,
				 strerror(err), strerror(r->err));
		if (!strstr(pmem_errormsg(), r->step))
			fail_msg("%s: pmem_errormsg() \"%s\" does not say "
				 "\"%s\"", r->name, pmem_errormsg(), r->step);
		assert_int_equal(mapped_len, 12345);
		assert_int_equal(is_pmem, 7);
	}
	/* Through a link, stat() sees the target the call may have made. */
	check_left(r, path, len, testing_pmdk() ? r->pmdk_left : r->left);
	if (r->where != IN_DIR_ITSELF)
		unlink(path);
	if (r->where == IN_DIR_LINK) {
		snprintf(path, sizeof(path), "%s/gone", dir);
		unlink(path);
	}
}

static void test_map_table(void **state)
{
	int before = count_entries(dir);

	(void)state;
	/* Past RLIMIT_FSIZE the kernel also sends SIGXFSZ, which kills. */
	signal(SIGXFSZ, SIG_IGN);
	for (size_t i = 0; i < ARRAY_SIZE(map_rows); i++) {
		if (map_rows[i].where == IN_TMPFS && !shm[0]) {
			print_message("no size-limited tmpfs: skipped \"%s\"\n",
				      map_rows[i].name);
			continue;
		}
		run_map_row(&map_rows[i]);
	}
	signal(SIGXFSZ, SIG_DFL);
	assert_int_equal(count_entries(dir), before);
}

/*
 * Mappings of 2 MiB and more start on a 2 MiB boundary, so the kernel can
 * map them with huge pages (PMDK reserves len + 2 MiB and aligns inside
 * it). Small anonymous mappings between them keep the kernel from handing
 * out the same aligned hole each time by chance; the files are also made
 * on tmpfs, where the kernel itself does not align file mappings.
 */
static void test_map_align_2m(void **state)
{
	static const size_t sizes[] = { 2 * MiB, 2 * MiB + PG, 3 * MiB + 1,
					8 * MiB };
	char path[PATH_MAX];
	const char *dirs[2] = { dir, NULL };

	(void)state;
	if (shm[0])
		dirs[1] = shm;
	for (size_t d = 0; d < ARRAY_SIZE(dirs) && dirs[d]; d++) {
		snprintf(path, sizeof(path), "%s/align", dirs[d]);
		for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
			for (size_t k = 1; k <= 4; k++) {
				size_t mapped_len;
				void *junk, *p;

				junk = mmap(NULL, k * PG, PROT_READ,
					    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				assert_true(junk != MAP_FAILED);
				p = pmem_map_file(path, sizes[i],
						  PMEM_FILE_CREATE |
						  PMEM_FILE_SPARSE, 0600,
						  &mapped_len, NULL);
				if (!p)
					fail_msg("%s, %zu bytes: %s", path,
						 sizes[i], pmem_errormsg());
				if ((uintptr_t)p % (2 * MiB))
					fail_msg("%s, %zu bytes: mapped at %p, "
						 "not 2 MiB aligned", path,
						 sizes[i], p);
				assert_int_equal(pmem_unmap(p, mapped_len), 0);
				assert_int_equal(munmap(junk, k * PG), 0);
				assert_int_equal(unlink(path), 0);
			}
		}
	}
}

/* --- is_pmem ---------------------------------------------------------- */

static void test_is_pmem(void **state)
{
	const size_t len = 64 * KiB;
	int expect = expect_mapped_is_pmem(), other = expect_other_is_pmem();
	size_t mapped_len;
	int is_pmem = -7, stack_var = 1;
	unsigned char *heap = malloc(len), *p;

	(void)state;
	assert_non_null(heap);
	p = pmem_map_file(dir, len, PMEM_FILE_CREATE | PMEM_FILE_TMPFILE, 0600,
			  &mapped_len, &is_pmem);
	assert_non_null(p);
	assert_true(is_pmem == 0 || is_pmem == 1);
	if (expect >= 0 && is_pmem != expect)
		fail_msg("pmem_map_file's is_pmem %d, expected %d", is_pmem,
			 expect);
	/* The whole range, a part, one byte: one answer. */
	assert_int_equal(pmem_is_pmem(p, len), is_pmem);
	assert_int_equal(pmem_is_pmem(p + 100, 1000), is_pmem);
	assert_int_equal(pmem_is_pmem(p + len - 1, 1), is_pmem);
	/* len 0 is not pmem, unless forced (PMDK's "always" ignores len). */
	if (is_pmem_forced() != 1) {
		assert_int_equal(pmem_is_pmem(p, 0), 0);
		assert_int_equal(pmem_is_pmem(heap, 0), 0);
	}
	/* Memory the library did not map. */
	assert_int_equal(pmem_is_pmem(heap, len), other);
	assert_int_equal(pmem_is_pmem(heap + 1, 100), other);
	assert_int_equal(pmem_is_pmem(&stack_var, sizeof(stack_var)), other);
	/* The same answer every time. */
	assert_int_equal(pmem_is_pmem(p, len), is_pmem);
	assert_int_equal(pmem_unmap(p, mapped_len), 0);
	free(heap);
}

/* --- unmap ------------------------------------------------------------ */

/* The page at @p is mapped (mincore() fails with ENOMEM where it is not). */
static bool page_mapped(const void *p)
{
	unsigned char vec;

	return mincore((void *)((uintptr_t)p & ~(PG - 1)), PG, &vec) == 0;
}

#define UNMAP_PAGES 16

/*
 * Which of the UNMAP_PAGES pages at @p are mapped, as a string of '1'
 * (mapped) and '.' (not), for readable failures.
 */
static void mapped_pages(const unsigned char *p, char out[UNMAP_PAGES + 1])
{
	for (size_t i = 0; i < UNMAP_PAGES; i++)
		out[i] = page_mapped(p + i * PG) ? '1' : '.';
	out[UNMAP_PAGES] = '\0';
}

/* A pmem_map_file() mapping of UNMAP_PAGES pages of seeded data. */
static unsigned char *map_pages(const char *name, char *path, size_t n,
				unsigned char *want)
{
	size_t mapped_len;
	unsigned char *p;

	path_in_dir(path, n, name);
	p = pmem_map_file(path, UNMAP_PAGES * PG, PMEM_FILE_CREATE, 0600,
			  &mapped_len, NULL);
	if (!p)
		fail_msg("mapping %s: %s", path, pmem_errormsg());
	assert_int_equal(mapped_len, UNMAP_PAGES * PG);
	tu_fill_random(want, UNMAP_PAGES * PG, 0x0a11);
	pmem_memcpy_persist(p, want, UNMAP_PAGES * PG);
	return p;
}

/*
 * The mapped pages are exactly @expect ('1' mapped, '.' not), each one
 * still holds the file's data, and pmem_is_pmem() gives the mapping's
 * answer for each mapped page, and for a range across a hole the answer
 * for memory nobody mapped.
 */
static void check_pages(const char *what, const unsigned char *p,
			const unsigned char *want, const char *expect)
{
	int mapped = expect_mapped_is_pmem(), other = expect_other_is_pmem();
	char got[UNMAP_PAGES + 1];

	mapped_pages(p, got);
	if (strcmp(got, expect))
		fail_msg("%s: mapped pages %s, expected %s", what, got, expect);
	for (size_t i = 0; i < UNMAP_PAGES; i++) {
		if (expect[i] != '1')
			continue;
		if (memcmp(p + i * PG, want + i * PG, PG))
			fail_msg("%s: page %zu lost its data", what, i);
		if (mapped >= 0 && pmem_is_pmem(p + i * PG, PG) != mapped)
			fail_msg("%s: pmem_is_pmem of page %zu is %d, expected "
				 "%d", what, i, pmem_is_pmem(p + i * PG, PG),
				 mapped);
		if (i + 1 < UNMAP_PAGES && expect[i + 1] == '.' &&
		    pmem_is_pmem(p + i * PG, 2 * PG) != other)
			fail_msg("%s: pmem_is_pmem across the hole after page "
				 "%zu is %d, expected %d", what, i,
				 pmem_is_pmem(p + i * PG, 2 * PG), other);
	}
	/* Adjacent pieces of one mapping still add up to one range. */
	if (mapped >= 0 && !strchr(expect, '.'))
		assert_int_equal(pmem_is_pmem(p, UNMAP_PAGES * PG), mapped);
}

/*
 * pmem_unmap() unmaps exactly [addr, addr + len), len rounded up to whole
 * pages as munmap(2) does: the head, the middle, the tail of a mapping,
 * one page at a time, what is left keeps its data and its is_pmem answer,
 * and unmapping across holes and past the end is fine.
 */
static void test_unmap_parts(void **state)
{
	unsigned char *want = malloc(UNMAP_PAGES * PG), *p;
	char path[128];

	(void)state;
	assert_non_null(want);
	p = map_pages("unmap-parts", path, sizeof(path), want);
	check_pages("mapped", p, want, "1111111111111111");
	assert_int_equal(pmem_unmap(p + 5 * PG, 2 * PG), 0);
	check_pages("middle 5-6", p, want, "11111..111111111");
	assert_int_equal(pmem_unmap(p, 1), 0);
	check_pages("head, 1 byte", p, want, ".1111..111111111");
	assert_int_equal(pmem_unmap(p + 14 * PG, 2 * PG), 0);
	check_pages("tail 14-15", p, want, ".1111..1111111..");
	assert_int_equal(pmem_unmap(p + 9 * PG, PG + 1), 0);
	check_pages("9 and a byte of 10", p, want, ".1111..11..111..");
	/* Already unmapped: nothing to do, not an error (munmap(2)). */
	assert_int_equal(pmem_unmap(p + 5 * PG, 2 * PG), 0);
	check_pages("5-6 again", p, want, ".1111..11..111..");
	/* Across holes, and past the end into memory nobody mapped. */
	assert_int_equal(pmem_unmap(p + 4 * PG, 5 * PG), 0);
	check_pages("4-8", p, want, ".111.......111..");
	assert_int_equal(pmem_unmap(p, UNMAP_PAGES * PG), 0);
	check_pages("all", p, want, "................");
	/* The data written before is in the file. */
	tu_check_file_bytes(path, 0, want, UNMAP_PAGES * PG);
	assert_int_equal(unlink(path), 0);
	free(want);
}

static void expect_unmap_einval(void *p, size_t len, const char *what)
{
	errno = 0;
	if (pmem_unmap(p, len) != -1 || errno != EINVAL)
		fail_msg("pmem_unmap of %s: not -1 with EINVAL (errno %d)",
			 what, errno);
	check_errormsg_set(what);
}

/*
 * What munmap(2) refuses, pmem_unmap() refuses, and then nothing is
 * unmapped: an address inside a page, len 0, a range past the end of the
 * address space.
 */
static void test_unmap_invalid(void **state)
{
	unsigned char *want = malloc(UNMAP_PAGES * PG), *p;
	char path[128];

	(void)state;
	assert_non_null(want);
	p = map_pages("unmap-invalid", path, sizeof(path), want);
	expect_unmap_einval(p + PG + 1, PG, "an address inside a page");
	expect_unmap_einval(p + PG, 0, "len 0");
	expect_unmap_einval(p, SIZE_MAX - PG, "past the address space");
	check_pages("after the refused calls", p, want, "1111111111111111");
	assert_int_equal(pmem_unmap(p, UNMAP_PAGES * PG), 0);
	assert_int_equal(unlink(path), 0);
	free(want);
}

/* Memory pmem_map_file() did not map is unmapped all the same (PMDK). */
static void test_unmap_foreign(void **state)
{
	unsigned char *m = mmap(NULL, 4 * PG, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(pmem_unmap(m + PG, PG), 0);
	assert_true(page_mapped(m));
	assert_false(page_mapped(m + PG));
	assert_true(page_mapped(m + 2 * PG));
	assert_int_equal(pmem_unmap(m, 4 * PG), 0);
	for (size_t i = 0; i < 4; i++)
		assert_false(page_mapped(m + i * PG));
}

/*
 * Once part of a mapping is unmapped, its pages are free for anyone: a
 * mapping the program puts there survives pmem_unmap() of the rest, and
 * a new pmem_map_file() mapping there gets its own answers.
 */
static void test_unmap_reuse(void **state)
{
	unsigned char *want = malloc(UNMAP_PAGES * PG), *p, *q, *r;
	int mapped = expect_mapped_is_pmem();
	size_t mapped_len;
	char path[128], path2[128];

	(void)state;
	assert_non_null(want);
	p = map_pages("unmap-reuse", path, sizeof(path), want);
	assert_int_equal(pmem_unmap(p, 2 * PG), 0);
	q = mmap(p, 2 * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	assert_ptr_equal(q, p);
	memset(q, 0x5c, 2 * PG);
	assert_int_equal(pmem_is_pmem(q, PG), expect_other_is_pmem());
	assert_int_equal(pmem_unmap(p + 2 * PG, (UNMAP_PAGES - 2) * PG), 0);
	assert_true(page_mapped(q) && page_mapped(q + PG));
	for (size_t i = 0; i < 2 * PG; i++)
		if (q[i] != 0x5c)
			fail_msg("byte %zu of the program's mapping changed", i);
	assert_false(page_mapped(p + 2 * PG));
	assert_int_equal(munmap(q, 2 * PG), 0);

	/* A new mapping of another file, wherever the kernel puts it. */
	path_in_dir(path2, sizeof(path2), "unmap-reuse2");
	r = pmem_map_file(path2, 4 * PG, PMEM_FILE_CREATE, 0600, &mapped_len,
			  NULL);
	assert_non_null(r);
	if (mapped >= 0)
		assert_int_equal(pmem_is_pmem(r, 4 * PG), mapped);
	assert_int_equal(pmem_unmap(r, mapped_len), 0);
	assert_int_equal(pmem_is_pmem(r, 4 * PG), expect_other_is_pmem());
	assert_int_equal(unlink(path), 0);
	assert_int_equal(unlink(path2), 0);
	free(want);
}



/*
 * Files that are not a regular file or a dax device, with and without
 * CREATE: EINVAL as PMDK answers (ntm_ns_open() itself says -ENODEV), the
 * kind named in the message, nothing created.
 */
static void test_map_not_a_file(void **state)
{
	char fifo[PATH_MAX];
	const char *const paths[] = { "/dev/null", "/dev/zero", fifo };
	const int flags[] = { 0, PMEM_FILE_CREATE };
	int before = count_entries(dir);

	(void)state;
	path_in_dir(fifo, sizeof(fifo), "fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++)
		for (size_t f = 0; f < ARRAY_SIZE(flags); f++) {
			size_t len = flags[f] ? 4 * KiB : 0, mapped_len = 0;
			void *p;

			errno = 0;
			p = pmem_map_file(paths[i], len, flags[f], 0600,
					  &mapped_len, NULL);
			if (p) {
				pmem_unmap(p, mapped_len);
				fail_msg("%s, flags %d: mapped", paths[i], flags[f]);
			}
			if (errno != EINVAL)
				fail_msg("%s, flags %d: errno %d (%s), expected "
					 "EINVAL", paths[i], flags[f], errno,
					 strerror(errno));
		}
	assert_int_equal(unlink(fifo), 0);
	assert_int_equal(count_entries(dir), before);
}
/* --- many mappings at once -------------------------------------------- */

/*
 * One thread of map_threads: maps its own file again and again, stores
 * its tag at the first, middle and last 8 bytes through the mapping and
 * reads each back through its own descriptor. A store that the kernel
 * sent into another thread's mapping (or into nothing: a fault kills the
 * test) leaves the file without the tag.
 */
struct mapper {
	char path[PATH_MAX];
	size_t len;
	uint32_t id;
	unsigned rounds;
	pthread_barrier_t *start;
	unsigned failed;	/* pmem_map_file() or pmem_unmap() failed */
	unsigned wrong;		/* a tag did not reach the file */
};

static void *mapper_run(void *arg)
{
	struct mapper *m = arg;
	int fd = open(m->path, O_RDONLY | O_CLOEXEC);

	pthread_barrier_wait(m->start);
	for (unsigned r = 0; fd >= 0 && r < m->rounds; r++) {
		const size_t off[] = { 0, m->len / 2, m->len - 8 };
		uint64_t tag = (uint64_t)m->id << 32 | r, got;
		size_t mapped_len;
		char *p = pmem_map_file(m->path, 0, 0, 0, &mapped_len, NULL);

		if (!p) {
			m->failed++;
			continue;
		}
		for (size_t i = 0; i < ARRAY_SIZE(off); i++)
			memcpy(p + off[i], &tag, 8);
		for (size_t i = 0; i < ARRAY_SIZE(off); i++)
			if (pread(fd, &got, 8, (off_t)off[i]) != 8 || got != tag)
				m->wrong++;
		if (pmem_unmap(p, mapped_len))
			m->failed++;
	}
	if (fd < 0)
		m->failed++;
	else
		close(fd);
	return NULL;
}

/*
 * @nthreads threads map files of @len bytes in @where at once: every store
 * lands in its own file, and no call fails.
 */
static void map_threads_in(const char *where, unsigned nthreads, size_t len,
			   unsigned rounds)
{
	struct mapper m[8];
	pthread_t t[8];
	pthread_barrier_t start;
	unsigned failed = 0, wrong = 0;

	assert_true(nthreads <= ARRAY_SIZE(m));
	assert_int_equal(pthread_barrier_init(&start, NULL, nthreads), 0);
	for (unsigned i = 0; i < nthreads; i++) {
		m[i] = (struct mapper){ .len = len, .id = i + 1,
					.rounds = rounds, .start = &start };
		snprintf(m[i].path, sizeof(m[i].path), "%s/threads-%u", where, i);
		tu_write_file(m[i].path, len, i + 1, 0600);
	}
	for (unsigned i = 0; i < nthreads; i++)
		assert_int_equal(pthread_create(&t[i], NULL, mapper_run, &m[i]), 0);
	for (unsigned i = 0; i < nthreads; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		failed += m[i].failed;
		wrong += m[i].wrong;
		unlink(m[i].path);
	}
	pthread_barrier_destroy(&start);
	if (failed || wrong)
		fail_msg("%s: %u threads mapping %zu bytes %u times: %u of %u "
			 "stores missed their own file, %u calls failed", where,
			 nthreads, len, rounds, wrong, 3 * nthreads * rounds,
			 failed);
}

/*
 * Threads mapping and unmapping their own files at once, on the test
 * directory's file system (a disk one by default, where the kernel refuses
 * MAP_SYNC only after it has looked at the file) and on tmpfs; mappings
 * of 2 MiB and more take the aligned path.
 */
static void test_map_threads(void **state)
{
	static const size_t lens[] = { 4 * KiB, 64 * KiB, 4 * MiB };
	static const unsigned counts[] = { 2, 4, 8 };
	const char *where[] = { dir, shm };

	(void)state;
	for (size_t w = 0; w < ARRAY_SIZE(where); w++) {
		if (!where[w][0])
			continue;
		for (size_t c = 0; c < ARRAY_SIZE(counts); c++)
			for (size_t l = 0; l < ARRAY_SIZE(lens); l++)
				map_threads_in(where[w], counts[c], lens[l],
					       tu_map_thread_rounds(150));
	}
}

/*
 * A mapping keeps no descriptor open (PMDK closes the file right after
 * mmap()), so a program can hold more mappings than its descriptor limit.
 */
static void test_map_no_fd(void **state)
{
	enum { FILES = 48 };
	struct rlimit old, low;
	char path[PATH_MAX];
	void *p[FILES];
	size_t len[FILES];
	unsigned before;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	before = tu_open_fds();
	low = old;
	low.rlim_cur = before + 8;
	assert_true(low.rlim_cur < FILES && low.rlim_cur <= old.rlim_max);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	for (unsigned i = 0; i < FILES; i++) {
		snprintf(path, sizeof(path), "%s/nofd-%u", dir, i);
		p[i] = pmem_map_file(path, 4 * KiB, PMEM_FILE_CREATE, 0600,
				     &len[i], NULL);
		if (!p[i]) {
			setrlimit(RLIMIT_NOFILE, &old);
			fail_msg("mapping %u of %d with a limit of %u descriptors "
				 "(%u open): %s", i + 1, FILES,
				 (unsigned)low.rlim_cur, before, strerror(errno));
		}
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	assert_int_equal(tu_open_fds(), before);
	for (unsigned i = 0; i < FILES; i++) {
		assert_int_equal(pmem_unmap(p[i], len[i]), 0);
		snprintf(path, sizeof(path), "%s/nofd-%u", dir, i);
		assert_int_equal(unlink(path), 0);
	}
}
/* --- environment timing ----------------------------------------------- */

/*
 * PMDK reads PMEM_IS_PMEM_FORCE at the first pmem_is_pmem() call (the one
 * pmem_map_file() makes for its is_pmem result counts), not at load, and
 * only then: libpmem(7). Run alone in a process that starts without the
 * variable, before anything else calls pmem_is_pmem().
 */
static void test_env_force_lazy(void **state)
{
	unsigned char heap[64];
	size_t mapped_len;
	int is_pmem = -7;
	char path[128];
	void *p;

	(void)state;
	if (getenv("PMEM_IS_PMEM_FORCE"))
		skip();
	assert_int_equal(setenv("PMEM_IS_PMEM_FORCE", "1", 1), 0);
	path_in_dir(path, sizeof(path), "env-force");
	p = pmem_map_file(path, 4 * PG, PMEM_FILE_CREATE, 0600, &mapped_len,
			  &is_pmem);
	assert_non_null(p);
	assert_int_equal(is_pmem, 1);
	assert_int_equal(pmem_is_pmem(heap, sizeof(heap)), 1);
	/* Read once: later changes are not seen. */
	assert_int_equal(setenv("PMEM_IS_PMEM_FORCE", "0", 1), 0);
	assert_int_equal(pmem_is_pmem(heap, sizeof(heap)), 1);
	assert_int_equal(unsetenv("PMEM_IS_PMEM_FORCE"), 0);
	assert_int_equal(pmem_is_pmem(heap, sizeof(heap)), 1);
	assert_int_equal(pmem_unmap(p, mapped_len), 0);
	assert_int_equal(unlink(path), 0);
}

/* --- copies ----------------------------------------------------------- */

enum op { OP_MEMCPY, OP_MEMMOVE, OP_MEMSET };
static const char *const op_names[] = { "memcpy", "memmove", "memset" };

enum form { FORM_FLAGS, FORM_NODRAIN, FORM_PERSIST };

struct variant {
	enum form form;
	unsigned flags;
	char name[64];
};

/* Every flag set, then pmem_*_nodrain and pmem_*_persist. */
static struct variant variants[80];
static size_t nvariants;

/*
 * Valid flag sets: any subset of the six bits, except a non-temporal hint
 * (NONTEMPORAL, WC) together with a temporal one (TEMPORAL, WB) or with
 * NOFLUSH (on x86 PMDK treats those as contradictory). 22 sets.
 */
static bool flags_valid(unsigned f)
{
	bool nt = f & (PMEM_F_MEM_NONTEMPORAL | PMEM_F_MEM_WC);
	bool t = f & (PMEM_F_MEM_TEMPORAL | PMEM_F_MEM_WB);

	if (f & ~PMEM_F_MEM_VALID_FLAGS)
		return false;
	return !(nt && (t || (f & PMEM_F_MEM_NOFLUSH)));
}

static void flags_name(char *out, size_t n, unsigned f)
{
	static const struct {
		unsigned bit;
		const char *name;
	} bits[] = {
		{ PMEM_F_MEM_NODRAIN, "NODRAIN" },
		{ PMEM_F_MEM_NONTEMPORAL, "NONTEMPORAL" },
		{ PMEM_F_MEM_TEMPORAL, "TEMPORAL" },
		{ PMEM_F_MEM_WC, "WC" },
		{ PMEM_F_MEM_WB, "WB" },
		{ PMEM_F_MEM_NOFLUSH, "NOFLUSH" },
	};
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(bits); i++)
		if (f & bits[i].bit)
			at += (size_t)snprintf(out + at, n - at, "%s%s",
					       at ? "|" : "", bits[i].name);
	if (!at)
		snprintf(out, n, "0");
}

static void init_variants(void)
{
	nvariants = 0;
	for (unsigned f = 0; f <= PMEM_F_MEM_VALID_FLAGS; f++) {
		struct variant *v;

		if (!flags_valid(f))
			continue;
		v = &variants[nvariants++];
		v->form = FORM_FLAGS;
		v->flags = f;
		flags_name(v->name, sizeof(v->name), f);
	}
	variants[nvariants++] = (struct variant){ FORM_NODRAIN, 0, "_nodrain" };
	variants[nvariants++] = (struct variant){ FORM_PERSIST, 0, "_persist" };
}

/* Run @op in variant @v: the pmem_* function under test. */
static void *pmem_op(enum op op, const struct variant *v, void *dst,
		     const void *src, int c, size_t n)
{
	switch (op) {
	case OP_MEMCPY:
		if (v->form == FORM_NODRAIN)
			return pmem_memcpy_nodrain(dst, src, n);
		if (v->form == FORM_PERSIST)
			return pmem_memcpy_persist(dst, src, n);
		return pmem_memcpy(dst, src, n, v->flags);
	case OP_MEMMOVE:
		if (v->form == FORM_NODRAIN)
			return pmem_memmove_nodrain(dst, src, n);
		if (v->form == FORM_PERSIST)
			return pmem_memmove_persist(dst, src, n);
		return pmem_memmove(dst, src, n, v->flags);
	case OP_MEMSET:
		if (v->form == FORM_NODRAIN)
			return pmem_memset_nodrain(dst, c, n);
		if (v->form == FORM_PERSIST)
			return pmem_memset_persist(dst, c, n);
		return pmem_memset(dst, c, n, v->flags);
	}
	return NULL;
}

/* The same operation with libc, on the reference buffer. */
static void libc_op(enum op op, void *dst, const void *src, int c, size_t n)
{
	if (op == OP_MEMSET)
		memset(dst, c, n);
	else
		memmove(dst, src, n);
}

/*
 * The arena: dst is a pmem_map_file() mapping, ref the reference copy
 * that libc writes, src the source data; all page aligned, and ref and src
 * fenced with PROT_NONE pages. Windows start WBASE bytes in, so guards and
 * backward overlaps stay inside.
 */
#define ARENA (2 * MiB)
#define WBASE (16 * KiB)
#define GUARD ((size_t)64)

static unsigned char *dst, *ref, *src;
static size_t dst_len;
/* The file mapping while dst points to anonymous memory (copy_anon). */
static unsigned char *dst_file, *dst_anon;

static int arena_setup(void **state)
{
	(void)state;
	if (dir_setup(state))
		return -1;
	dst = pmem_map_file(dir, ARENA, PMEM_FILE_CREATE | PMEM_FILE_TMPFILE,
			    0600, &dst_len, NULL);
	ref = tu_map_fenced(ARENA);
	src = tu_map_fenced(ARENA);
	if (!dst || dst_len != ARENA || !ref || !src)
		return -1;
	tu_fill_random(src, ARENA, 0x5eed);
	init_variants();
	return 0;
}

static int arena_teardown(void **state)
{
	if (dst)
		pmem_unmap(dst, dst_len);
	tu_unmap_fenced(ref, ARENA);
	tu_unmap_fenced(src, ARENA);
	return dir_teardown(state);
}

/* Start each copy test from dst == ref. */
static int reset_arena(void **state)
{
	(void)state;
	tu_fill_random(ref, ARENA, 0xa5e7a);
	memcpy(dst, ref, ARENA);
	return 0;
}

static void fail_case(enum op op, const struct variant *v, size_t n,
		      size_t off, long soff, size_t at, const char *what)
{
	fail_msg("pmem_%s%s%s%s: n=%zu dst+%zu src%+ld: %s at byte %ld of "
		 "the range (dst 0x%02x, libc 0x%02x)", op_names[op],
		 v->form == FORM_FLAGS ? "(flags " : v->name,
		 v->form == FORM_FLAGS ? v->name : "",
		 v->form == FORM_FLAGS ? ")" : "", n, off, soff, what,
		 (long)at - (long)GUARD, dst[WBASE + off + at - GUARD],
		 ref[WBASE + off + at - GUARD]);
}

/*
 * One case: window [WBASE + off - GUARD, WBASE + off + n + GUARD) of dst
 * and ref is first set to the same fresh bytes, then @op writes n bytes at
 * WBASE + off, from src + soff (from the window itself when @inside, for
 * overlapping memmove). The window must then be equal.
 */
static void run_case(enum op op, const struct variant *v, size_t n,
		     size_t off, long soff, bool inside, unsigned seq)
{
	size_t lo = WBASE + off - GUARD, span = n + 2 * GUARD, at;
	int c = (int)((seq * 131 + 7) & 0xff);
	const unsigned char *s;
	void *ret;

	if (inside) {
		/* Random bytes: a move of a constant pattern proves nothing. */
		size_t sl = (size_t)((long)(WBASE + off) + soff) - GUARD;

		if (sl < lo) {
			span += lo - sl;
			lo = sl;
		} else if (sl + n + 2 * GUARD > lo + span) {
			span = sl + n + 2 * GUARD - lo;
		}
		tu_fill_random(ref + lo, span, seq + 1);
		s = dst + WBASE + off + soff;
	} else {
		/* Not the memset value, and (mostly) not the source byte. */
		memset(ref + lo, c ^ 0x5a, span);
		s = src + soff;
	}
	memcpy(dst + lo, ref + lo, span);

	ret = pmem_op(op, v, dst + WBASE + off, s, c, n);
	if (ret != dst + WBASE + off)
		fail_msg("pmem_%s %s n=%zu: returned %p, not pmemdest %p",
			 op_names[op], v->name, n, ret,
			 (void *)(dst + WBASE + off));
	libc_op(op, ref + WBASE + off,
		inside ? ref + WBASE + off + soff : src + soff, c, n);

	/* memcmp first: the byte loop only to name a difference. */
	at = n + 2 * GUARD;
	if (memcmp(dst + WBASE + off - GUARD, ref + WBASE + off - GUARD, at))
		at = tu_first_diff(dst + WBASE + off - GUARD,
				   ref + WBASE + off - GUARD, n + 2 * GUARD);
	if (at != n + 2 * GUARD)
		fail_case(op, v, n, off, soff, at,
			  at < GUARD ? "wrote before the range" :
			  at >= GUARD + n ? "wrote past the range" :
			  "wrong byte");
	/* The source side of an overlapping move too. */
	if (inside && memcmp(dst + lo, ref + lo, span))
		fail_case(op, v, n, off, soff,
			  GUARD + tu_first_diff(dst + lo, ref + lo, span) -
			  (WBASE + off - lo), "source side differs");
}

/* Nothing outside the windows moved, after a whole sweep. */
static void check_arena(enum op op, const struct variant *v)
{
	size_t at = ARENA;

	if (memcmp(dst, ref, ARENA))
		at = tu_first_diff(dst, ref, ARENA);
	if (at != ARENA)
		fail_msg("pmem_%s %s: arena byte %zu changed outside every "
			 "range (0x%02x, expected 0x%02x)", op_names[op],
			 v->name, at, dst[at], ref[at]);
}

/* Sizes 0..1024 at every destination offset 0..63 in every variant. */
static void sweep_small(enum op op)
{
	unsigned seq = 0;

	for (size_t vi = 0; vi < nvariants; vi++) {
		const struct variant *v = &variants[vi];

		for (size_t n = 0; n <= 1024; n++)
			for (size_t off = 0; off < 64; off++)
				run_case(op, v, n, off,
					 (long)((off * 5 + n * 3) % 64), false,
					 seq++);
		pmem_drain();
		check_arena(op, v);
	}
}

static void test_copy_memcpy(void **state)
{
	(void)state;
	sweep_small(OP_MEMCPY);
}

static void test_copy_memmove(void **state)
{
	(void)state;
	sweep_small(OP_MEMMOVE);
}

static void test_copy_memset(void **state)
{
	(void)state;
	sweep_small(OP_MEMSET);
}

/* Page-sized to 1 MiB, at a few offsets, every op and variant. */
static void test_copy_large(void **state)
{
	static const size_t sizes[] = {
		2049, 4095, 4096, 4097, 8192 + 63, 65536, 65536 + 17,
		262144 + 1, 1 * MiB - 64, 1 * MiB,
	};
	static const size_t offs[] = { 0, 1, 31, 63 };
	static const long soffs[] = { 0, 17, 64 };
	unsigned seq = 0;

	(void)state;
	for (int op = OP_MEMCPY; op <= OP_MEMSET; op++) {
		for (size_t vi = 0; vi < nvariants; vi++) {
			for (size_t si = 0; si < ARRAY_SIZE(sizes); si++)
				for (size_t oi = 0; oi < ARRAY_SIZE(offs); oi++)
					run_case(op, &variants[vi], sizes[si],
						 offs[oi],
						 soffs[(si + oi) % 3], false,
						 seq++);
			pmem_drain();
			check_arena(op, &variants[vi]);
		}
	}
}

/*
 * pmem_memmove over overlapping ranges, the source after and before the
 * destination by 1 byte to a page, every variant.
 */
static void test_copy_overlap(void **state)
{
	static const size_t big[] = { 255, 256, 257, 511, 512, 1000, 1024,
				      4096 + 13, 65536 + 7, 262147 };
	static const long deltas[] = { 1, 2, 7, 8, 15, 16, 31, 32, 33, 63,
				       64, 65, 127, 128, 200, 4096 };
	unsigned seq = 0;

	(void)state;
	for (size_t vi = 0; vi < nvariants; vi++) {
		const struct variant *v = &variants[vi];

		for (size_t i = 0; i < 130 + ARRAY_SIZE(big); i++) {
			size_t n = i < 130 ? i + 1 : big[i - 130];

			for (size_t d = 0; d < ARRAY_SIZE(deltas); d++) {
				size_t off = (i * 7 + d * 3) % 64;

				run_case(OP_MEMMOVE, v, n, off, deltas[d],
					 true, seq++);
				run_case(OP_MEMMOVE, v, n, off, -deltas[d],
					 true, seq++);
			}
		}
		pmem_drain();
		check_arena(OP_MEMMOVE, v);
	}
}

/* dst becomes anonymous memory, not mapped by the library, for one test. */
static int anon_setup(void **state)
{
	dst_anon = tu_map_fenced(ARENA);
	if (!dst_anon)
		return -1;
	dst_file = dst;
	dst = dst_anon;
	return reset_arena(state);
}

static int anon_teardown(void **state)
{
	(void)state;
	dst = dst_file;
	tu_unmap_fenced(dst_anon, ARENA);
	dst_anon = NULL;
	return 0;
}

/* Every op and variant into memory the library never saw. */
static void test_copy_anon(void **state)
{
	static const size_t sizes[] = { 0, 1, 7, 63, 64, 65, 255, 256, 257,
					1000, 4096 + 3, 65536 + 1 };
	unsigned seq = 0;

	(void)state;
	for (int op = OP_MEMCPY; op <= OP_MEMSET; op++) {
		for (size_t vi = 0; vi < nvariants; vi++) {
			for (size_t si = 0; si < ARRAY_SIZE(sizes); si++)
				for (size_t off = 0; off < 64; off += 11)
					run_case(op, &variants[vi], sizes[si],
						 off, (long)((off + si) % 64),
						 false, seq++);
			pmem_drain();
			check_arena(op, &variants[vi]);
		}
	}
	for (size_t vi = 0; vi < nvariants; vi++)
		for (long d = -65; d <= 65; d += 13)
			run_case(OP_MEMMOVE, &variants[vi], 300, 5, d, true,
				 seq++);
	check_arena(OP_MEMMOVE, &variants[0]);
}

/* src == dst and len 0: nothing changes, pmemdest is returned. */
static void test_copy_degenerate(void **state)
{
	unsigned char *p = dst + WBASE;

	(void)state;
	for (size_t vi = 0; vi < nvariants; vi++) {
		const struct variant *v = &variants[vi];

		for (int op = OP_MEMCPY; op <= OP_MEMSET; op++)
			assert_ptr_equal(pmem_op(op, v, p + 3, src, 0x33, 0),
					 p + 3);
		assert_ptr_equal(pmem_op(OP_MEMMOVE, v, p + 5, p + 5, 0, 4000),
				 p + 5);
		assert_ptr_equal(pmem_op(OP_MEMCPY, v, p + 9, p + 9, 0, 100),
				 p + 9);
	}
	pmem_drain();
	check_arena(OP_MEMMOVE, &variants[0]);
}

/* --- flush, drain, msync ---------------------------------------------- */

static const struct {
	size_t off, len;
} odd_ranges[] = {
	{ 0, 0 }, { 1, 0 }, { 0, 1 }, { 1, 1 }, { 63, 1 }, { 63, 2 },
	{ 0, 64 }, { 1, 64 }, { 32, 100 }, { 65, 4096 }, { 4095, 3 },
	{ 7, 65536 + 5 }, { 100, 1 * MiB },
};

static void flush_all_ranges(unsigned char *base, const char *what)
{
	for (size_t i = 0; i < ARRAY_SIZE(odd_ranges); i++) {
		unsigned char *p = base + odd_ranges[i].off;
		size_t n = odd_ranges[i].len;
		int ret;

		pmem_flush(p, n);
		pmem_drain();
		pmem_persist(p, n);
		pmem_deep_flush(p, n);
		ret = pmem_deep_drain(p, n);
		if (ret)
			fail_msg("%s: pmem_deep_drain(+%zu, %zu) = %d: %s",
				 what, odd_ranges[i].off, n, ret,
				 pmem_errormsg());
		ret = pmem_deep_persist(p, n);
		if (ret)
			fail_msg("%s: pmem_deep_persist(+%zu, %zu) = %d: %s",
				 what, odd_ranges[i].off, n, ret,
				 pmem_errormsg());
	}
}

/* Odd ranges of mapped, heap and stack memory; the data stays. */
static void test_flush_ranges(void **state)
{
	const size_t n = 1 * MiB + 8 * KiB;
	unsigned char *heap = malloc(n), *want = malloc(n), stack_buf[200];

	(void)state;
	assert_non_null(heap);
	assert_non_null(want);
	tu_fill_random(heap, n, 0xf1);
	tu_fill_random(stack_buf, sizeof(stack_buf), 0xf2);

	flush_all_ranges(dst, "pmem_map_file memory");
	flush_all_ranges(heap, "heap memory");
	pmem_persist(stack_buf + 3, 150);
	pmem_flush(stack_buf, sizeof(stack_buf));
	pmem_drain();
	assert_int_equal(pmem_deep_persist(stack_buf + 1, 100), 0);

	check_arena(OP_MEMCPY, &variants[0]);
	tu_fill_random(want, n, 0xf1);
	assert_memory_equal(heap, want, n);
	tu_fill_random(want, sizeof(stack_buf), 0xf2);
	assert_memory_equal(stack_buf, want, sizeof(stack_buf));
	free(want);
	free(heap);
}

/* pmem_msync: 0, and the data is in the file; any alignment. */
static void test_flush_msync(void **state)
{
	const size_t len = 64 * KiB;
	unsigned char *want = malloc(len), *p;
	size_t mapped_len;
	char path[128];

	(void)state;
	assert_non_null(want);
	path_in_dir(path, sizeof(path), "msync");
	p = pmem_map_file(path, len, PMEM_FILE_CREATE, 0600, &mapped_len, NULL);
	assert_non_null(p);
	tu_fill_random(want, len, 0x3c);

	/* Plain stores, then pmem_msync of exactly that range. */
	memcpy(p + 1000, want + 1000, 5000);
	assert_int_equal(pmem_msync(p + 1000, 5000), 0);
	memset(want, 0, 1000);
	memset(want + 6000, 0, len - 6000);
	tu_check_file_bytes(path, 0, want, len);

	/* Unaligned starts and lengths (PMDK aligns the start down). */
	for (size_t off = 1; off < len - 200; off += 4093) {
		p[off] = (unsigned char)off;
		want[off] = (unsigned char)off;
		assert_int_equal(pmem_msync(p + off, 1), 0);
		assert_int_equal(pmem_msync(p + off, 0), 0);
		assert_int_equal(pmem_msync(p + off + 63, 130), 0);
	}
	assert_int_equal(pmem_msync(p + PG - 1, 2), 0);
	assert_int_equal(pmem_msync(p, len), 0);
	tu_check_file_bytes(path, 0, want, len);

	assert_int_equal(pmem_unmap(p, mapped_len), 0);
	tu_check_file_bytes(path, 0, want, len);
	assert_int_equal(unlink(path), 0);
	free(want);
}

/* pmem_msync of memory that is not mapped: -1, ENOMEM, a message. */
static void test_flush_msync_unmapped(void **state)
{
	unsigned char *m = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(m != MAP_FAILED);
	assert_int_equal(munmap(m, 2 * PG), 0);
	errno = 0;
	assert_int_equal(pmem_msync(m + 5, 100), -1);
	assert_int_equal(errno, ENOMEM);
	check_errormsg_set("pmem_msync of unmapped memory");
}

/* --- capabilities, version, messages ---------------------------------- */

static void test_caps(void **state)
{
	int hw = pmem_has_hw_drain(), af = pmem_has_auto_flush();

	(void)state;
	if (hw != 0 && hw != 1)
		fail_msg("pmem_has_hw_drain() = %d", hw);
	if (af != 0 && af != 1 && af != -1)
		fail_msg("pmem_has_auto_flush() = %d", af);
	assert_int_equal(pmem_has_hw_drain(), hw);
	assert_int_equal(pmem_has_auto_flush(), af);
}

static void check_version_fails(unsigned major, unsigned minor,
				const char *mention)
{
	const char *ret = pmem_check_version(major, minor);
	const char *msg;

	if (!ret)
		fail_msg("pmem_check_version(%u, %u) accepted", major, minor);
	if (!*ret || !strstr(ret, mention))
		fail_msg("pmem_check_version(%u, %u) = '%s' lacks '%s'", major,
			 minor, ret, mention);
	msg = pmem_errormsg();
	if (!msg || !strstr(msg, mention))
		fail_msg("after pmem_check_version(%u, %u) pmem_errormsg() = "
			 "'%s' lacks '%s'", major, minor, msg ? msg : "(null)",
			 mention);
}

static void test_version(void **state)
{
	(void)state;
	assert_int_equal(PMEM_MAJOR_VERSION, 1);
	assert_null(pmem_check_version(1, 0));
	assert_null(pmem_check_version(1, 1));
	assert_null(pmem_check_version(PMEM_MAJOR_VERSION, PMEM_MINOR_VERSION));
	check_version_fails(2, 0, "2");
	check_version_fails(0, 0, "0");
	check_version_fails(1, 99, "99");
	check_version_fails(1, 2, "2");
}

struct msg_thread {
	char before[256];	/* pmem_errormsg() on entry */
	char after[256];	/* after its own failure */
	void *ret;
	int err;
};

static void *msg_thread_run(void *arg)
{
	struct msg_thread *m = arg;
	const char *s = pmem_errormsg();

	snprintf(m->before, sizeof(m->before), "%s", s ? s : "(null)");
	errno = 0;
	m->ret = pmem_map_file(dir, 0, 1 << 10, 0, NULL, NULL);
	m->err = errno;
	s = pmem_errormsg();
	snprintf(m->after, sizeof(m->after), "%s", s ? s : "(null)");
	return NULL;
}

/* The message is per thread: "" in a fresh one, not another's. */
static void test_errormsg_per_thread(void **state)
{
	struct msg_thread m;
	char mine[256];
	pthread_t t;

	(void)state;
	assert_non_null(pmem_check_version(1, 77));
	snprintf(mine, sizeof(mine), "%s", pmem_errormsg());
	assert_non_null(strstr(mine, "77"));
	assert_int_equal(pthread_create(&t, NULL, msg_thread_run, &m), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_string_equal(m.before, "");
	assert_null(m.ret);
	assert_int_equal(m.err, EINVAL);
	assert_true(m.after[0] != '\0');
	assert_string_not_equal(m.after, mine);
	/* Ours is untouched by the other thread's failure. */
	assert_string_equal(pmem_errormsg(), mine);
}

/* --- which library ---------------------------------------------------- */

struct lib_seen {
	char path[PATH_MAX];
	int count;
};

static int find_libpmem(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lib_seen *seen = arg;
	const char *base = strrchr(info->dlpi_name, '/');

	(void)size;
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libpmem.so", 10) == 0) {
		snprintf(seen->path, sizeof(seen->path), "%s", info->dlpi_name);
		seen->count++;
	}
	return 0;
}

static void test_library(void **state)
{
	const char *want = getenv("NTMEM_TEST_LIBPMEM");
	char a[PATH_MAX], b[PATH_MAX];
	struct lib_seen seen = { "", 0 };

	(void)state;
	if (!want || !*want)
		skip();
	dl_iterate_phdr(find_libpmem, &seen);
	if (seen.count != 1)
		fail_msg("%d libpmem.so objects loaded (last: %s)", seen.count,
			 seen.path);
	if (!realpath(seen.path, a) || !realpath(want, b))
		fail_msg("realpath of %s or %s: %s", seen.path, want,
			 strerror(errno));
	if (strcmp(a, b))
		fail_msg("libpmem loaded from %s, not NTMEM_TEST_LIBPMEM=%s", a,
			 b);
}

/* --- main ------------------------------------------------------------- */

static int npatterns;
static char **patterns;

/* Add a test when no pattern was given or one of them matches its name. */
static void add_test_fix(struct CMUnitTest *tests, size_t *nt,
			 const char *name, CMUnitTestFunction fn,
			 CMFixtureFunction setup, CMFixtureFunction teardown)
{
	bool match = npatterns == 0;

	for (int i = 0; i < npatterns && !match; i++)
		match = fnmatch(patterns[i], name, 0) == 0;
	if (match)
		tests[(*nt)++] = (struct CMUnitTest){
			.name = name, .test_func = fn, .setup_func = setup,
			.teardown_func = teardown };
}

static void add_test(struct CMUnitTest *tests, size_t *nt, const char *name,
		     CMUnitTestFunction fn, CMFixtureFunction setup)
{
	add_test_fix(tests, nt, name, fn, setup, NULL);
}

/* A test that must be the first of its process: only when named exactly. */
static void add_test_alone(struct CMUnitTest *tests, size_t *nt,
			   const char *name, CMUnitTestFunction fn)
{
	for (int i = 0; i < npatterns; i++)
		if (!strcmp(patterns[i], name))
			tests[(*nt)++] = (struct CMUnitTest){
				.name = name, .test_func = fn };
}

int main(int argc, char **argv)
{
	static struct CMUnitTest tests[40];
	size_t nt = 0;

	npatterns = argc - 1;
	patterns = argv + 1;

	add_test(tests, &nt, "library", test_library, NULL);
	add_test(tests, &nt, "map_create", test_map_create, NULL);
	add_test(tests, &nt, "map_create_existing", test_map_create_existing,
		 NULL);
	add_test(tests, &nt, "map_create_excl", test_map_create_excl, NULL);
	add_test(tests, &nt, "map_bad_args", test_map_bad_args, NULL);
	add_test(tests, &nt, "map_dir", test_map_dir, NULL);
	add_test(tests, &nt, "map_tmpfile", test_map_tmpfile, NULL);
	add_test(tests, &nt, "map_sparse", test_map_sparse, NULL);
	add_test(tests, &nt, "map_existing_whole", test_map_existing_whole,
		 NULL);
	add_test(tests, &nt, "map_existing_odd_size",
		 test_map_existing_odd_size, NULL);
	add_test_fix(tests, &nt, "map_table", test_map_table, shm_setup,
		     shm_teardown);
	add_test_fix(tests, &nt, "map_align_2m", test_map_align_2m, shm_setup,
		     shm_teardown);
	add_test(tests, &nt, "is_pmem", test_is_pmem, NULL);
	add_test(tests, &nt, "unmap_parts", test_unmap_parts, NULL);
	add_test(tests, &nt, "unmap_invalid", test_unmap_invalid, NULL);
	add_test(tests, &nt, "unmap_foreign", test_unmap_foreign, NULL);
	add_test(tests, &nt, "unmap_reuse", test_unmap_reuse, NULL);
	add_test_fix(tests, &nt, "map_threads", test_map_threads, shm_setup,
		     shm_teardown);
	add_test(tests, &nt, "map_no_fd", test_map_no_fd, NULL);
	add_test(tests, &nt, "map_not_a_file", test_map_not_a_file, NULL);
	add_test_alone(tests, &nt, "env_force_lazy", test_env_force_lazy);
	add_test(tests, &nt, "copy_memcpy", test_copy_memcpy, reset_arena);
	add_test(tests, &nt, "copy_memmove", test_copy_memmove, reset_arena);
	add_test(tests, &nt, "copy_memset", test_copy_memset, reset_arena);
	add_test(tests, &nt, "copy_large", test_copy_large, reset_arena);
	add_test(tests, &nt, "copy_overlap", test_copy_overlap, reset_arena);
	add_test_fix(tests, &nt, "copy_anon", test_copy_anon, anon_setup,
		     anon_teardown);
	add_test(tests, &nt, "copy_degenerate", test_copy_degenerate,
		 reset_arena);
	add_test(tests, &nt, "flush_ranges", test_flush_ranges, reset_arena);
	add_test(tests, &nt, "flush_msync", test_flush_msync, NULL);
	add_test(tests, &nt, "flush_msync_unmapped", test_flush_msync_unmapped,
		 NULL);
	add_test(tests, &nt, "caps", test_caps, NULL);
	add_test(tests, &nt, "version", test_version, NULL);
	add_test(tests, &nt, "errormsg_per_thread", test_errormsg_per_thread,
		 NULL);
	if (nt == 0) {
		fprintf(stderr, "%s: no test matches\n", argv[0]);
		return 2;
	}
	return _cmocka_run_group_tests("pmem_compat", tests, nt, arena_setup,
				       arena_teardown);
}

#endif /* __has_include(<libpmem.h>) */
