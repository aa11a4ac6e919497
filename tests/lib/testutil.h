/* SPDX-License-Identifier: MIT */
/*
 * testutil.h - helpers shared by the ntmem tests: a seeded pseudo-random
 * byte generator (so every buffer holds non-zero, non-repeating data and a
 * failure reproduces bit for bit), page-granular arenas with PROT_NONE
 * fences, and a first-difference finder for readable failure messages.
 *
 * Header-only and static: each test binary is one translation unit plus
 * cmocka, so there is nothing to link.
 */
#ifndef NTMEM_TESTUTIL_H
#define NTMEM_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* xorshift64*: fast, good enough for test data, never yields 0 state. */
static inline uint64_t tu_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Fill @n bytes with pseudo-random data from @seed (any non-zero seed). */
static inline void tu_fill_random(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t st = seed ? seed : 0x9e3779b97f4a7c15ull;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v = tu_rand(&st);

		memcpy(p + i, &v, 8);
	}
	if (i < n) {
		uint64_t v = tu_rand(&st);

		memcpy(p + i, &v, n - i);
	}
}

/* Index of the first byte where @a and @b differ, or @n when equal. */
static inline size_t tu_first_diff(const unsigned char *a,
				   const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return i;
	return n;
}

/*
 * Rounds of a threaded mapping test: @full, or NTMEM_MAP_THREAD_ROUNDS
 * when set (the sanitizer builds run fewer: ThreadSanitizer's munmap()
 * walks its metadata of every byte unmapped, and each mapping gives back
 * up to 2 MiB of the reservation it was placed in; a race shows in the
 * first rounds as in the last).
 */
static inline unsigned tu_map_thread_rounds(unsigned full)
{
	const char *env = getenv("NTMEM_MAP_THREAD_ROUNDS");
	long n = env && *env ? strtol(env, NULL, 10) : 0;

	return n > 0 ? (unsigned)n : full;
}

static inline size_t tu_page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

static inline size_t tu_round_up(size_t n, size_t a)
{
	return (n + a - 1) / a * a;
}

/*
 * Map @len bytes of read-write memory with one PROT_NONE page on each side,
 * so a copy that runs off either end faults instead of silently scribbling.
 * Returns the first usable byte (page aligned) or NULL.
 */
static inline unsigned char *tu_map_fenced(size_t len)
{
	size_t pg = tu_page_size();
	size_t body = tu_round_up(len, pg);
	unsigned char *m;

	m = mmap(NULL, body + 2 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	if (mprotect(m + pg, body, PROT_READ | PROT_WRITE) != 0) {
		munmap(m, body + 2 * pg);
		return NULL;
	}
	return m + pg;
}

static inline void tu_unmap_fenced(unsigned char *p, size_t len)
{
	size_t pg = tu_page_size();

	if (p)
		munmap(p - pg, tu_round_up(len, pg) + 2 * pg);
}

/*
 * File helpers; they assert through cmocka, so include <cmocka.h> (after
 * its prerequisites) before this header to use them.
 */
#ifdef cmocka_unit_test
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/*
 * Remove @dir and everything below it (a test's scratch directory in a
 * group teardown): a list of the names the cases use goes stale as soon
 * as the library names a file differently (a random temporary name, a
 * backup), and a leftover makes the rmdir fail. 0 or -1.
 */
static inline int tu_remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[PATH_MAX];
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >=
		    (int)sizeof(path)) {
			ret = -1;
			continue;
		}
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			ret |= tu_remove_tree(path);
		else if (unlink(path))
			ret = -1;
	}
	closedir(d);
	return rmdir(dir) || ret ? -1 : 0;
}

/* How many descriptors the process has open (a mapping must keep none). */
static inline unsigned tu_open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Write @n pseudo-random bytes from @seed into a new file at @path. */
static inline void tu_write_file(const char *path, size_t n, uint64_t seed,
				 mode_t mode)
{
	unsigned char *buf = malloc(n ? n : 1);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);

	assert_non_null(buf);
	if (fd < 0)
		fail_msg("cannot create %s: %s", path, strerror(errno));
	tu_fill_random(buf, n, seed);
	assert_int_equal(pwrite(fd, buf, n, 0), (ssize_t)n);
	close(fd);
	free(buf);
}

/* The file's bytes [off, off + n) equal @want. */
static inline void tu_check_file_bytes(const char *path, size_t off,
				       const unsigned char *want, size_t n)
{
	unsigned char *buf = malloc(n ? n : 1);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t at;

	assert_non_null(buf);
	if (fd < 0)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	assert_int_equal(pread(fd, buf, n, (off_t)off), (ssize_t)n);
	close(fd);
	at = tu_first_diff(buf, want, n);
	if (at != n)
		fail_msg("%s: byte %zu of the file is 0x%02x, expected 0x%02x",
			 path, off + at, buf[at], want[at]);
	free(buf);
}

/*
 * Scratch directories. A test's files go in a fresh directory under
 * $NTMEM_TEST_SCRATCH (default /tmp), which may be on any file system,
 * DAX included: a file on DAX is mapped as the real thing, fsdax, even
 * with NTM_NS_EMULATE (ntm_ns_open(3)), so a test that needs an emulated
 * namespace (its PATH.badblocks list, its msync() durability, its
 * page-size mapping) says so with tu_skip_on_dax() and is skipped there.
 * The same programs thus run on the host and on a real kernel's DAX file
 * system. $NTMEM_TEST_SCRATCH_DAX names a DAX directory for the tests of
 * the real thing (tu_scratch_dax_dir()); unset, they skip.
 */
/*
 * Whether files in @dir are DAX, by the library's own test: a writable
 * MAP_SYNC mapping of a page of a file there succeeds only on DAX.
 */
static inline bool tu_dir_is_dax(const char *dir)
{
	char probe[PATH_MAX];
	bool dax = false;
	void *m;
	int fd;

	snprintf(probe, sizeof(probe), "%s/.tu-dax-probe-%d", dir, (int)getpid());
	fd = open(probe, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		fail_msg("cannot create %s: %s", probe, strerror(errno));
	unlink(probe);
	if (ftruncate(fd, 4096) == 0) {
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
		dax = m != MAP_FAILED;
		if (dax)
			munmap(m, 4096);
	}
	close(fd);
	return dax;
}

/* mkdtemp() of @base/@name-XXXXXX into @dir; 0 or -1, saying why. */
static inline int tu_mkdtemp_in(char *dir, size_t len, const char *base,
				const char *name)
{
	if ((size_t)snprintf(dir, len, "%s/%s-XXXXXX", base, name) >= len) {
		fprintf(stderr, "scratch directory %s/%s-XXXXXX: longer than "
			"%zu bytes\n", base, name, len - 1);
		return -1;
	}
	if (!mkdtemp(dir)) {
		fprintf(stderr, "cannot make %s: %s\n", dir, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * A fresh scratch directory @name-XXXXXX in $NTMEM_TEST_SCRATCH (default
 * /tmp), into @dir of @len bytes: 0, or -1 when it cannot be made (said
 * on stderr; a group setup's failure fails the group's tests).
 */
static inline int tu_scratch_dir(char *dir, size_t len, const char *name)
{
	const char *base = getenv("NTMEM_TEST_SCRATCH");

	return tu_mkdtemp_in(dir, len, base && *base ? base : "/tmp", name);
}

/*
 * A fresh scratch directory in $NTMEM_TEST_SCRATCH_DAX: 0; 1 when the
 * variable is unset (no DAX file system here: the caller skips); -1 when
 * it cannot be made or is not DAX (a misnamed directory fails, never
 * passes as a skip).
 */
static inline int tu_scratch_dax_dir(char *dir, size_t len, const char *name)
{
	const char *base = getenv("NTMEM_TEST_SCRATCH_DAX");

	if (!base || !*base)
		return 1;
	if (tu_mkdtemp_in(dir, len, base, name))
		return -1;
	if (!tu_dir_is_dax(dir)) {
		fprintf(stderr, "NTMEM_TEST_SCRATCH_DAX=%s is not on a DAX file "
			"system\n", base);
		rmdir(dir);
		return -1;
	}
	return 0;
}

/*
 * Skip the calling test when @dir is on DAX: @needs says what it needs
 * that only a non-DAX (emulated) namespace has.
 */
#define tu_skip_on_dax(dir, needs)                                            \
	do {                                                                  \
		if (tu_dir_is_dax(dir)) {                                     \
			print_message("skipped: %s is DAX, and this test "    \
				      "needs %s\n", (dir), (needs));          \
			skip();                                               \
		}                                                             \
	} while (0)
#endif

/*
 * The growth fields every config struct ends in (flags, reserved[4]; the
 * rule of src/config_check.h), spoiled one at a time: case @i of
 * TU_CONFIG_CASES sets reserved[0..3], then the unknown flag bit @low_bit,
 * then bit 31, in *@cfg (otherwise valid), and writes the message the
 * library must give into the char array @want.
 */
#define TU_CONFIG_CASES 6
#define TU_SPOIL_CONFIG(cfg, i, low_bit, want)                                \
	do {                                                                  \
		if ((i) < 4) {                                                \
			(cfg)->reserved[i] = 1ull << ((i) * 21);              \
			snprintf(want, sizeof(want),                          \
				 "cfg->reserved[%d] must be 0", (int)(i));    \
		} else {                                                      \
			unsigned tu_bit_ = (i) == 4 ? (low_bit) : 1u << 31;   \
                                                                              \
			(cfg)->flags |= tu_bit_;                              \
			snprintf(want, sizeof(want),                          \
				 "cfg->flags has unknown bits 0x%x", tu_bit_); \
		}                                                             \
	} while (0)

#endif /* NTMEM_TESTUTIL_H */
