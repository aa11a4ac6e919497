// SPDX-License-Identifier: MIT
/*
 * test_pmem2_mcsafe.c - pmem2_source_pread_mcsafe() / pwrite_mcsafe() of
 * the libpmem2 drop-in on a regular file:
 *
 *   roundtrip      what is written is read back, at any offset
 *   ranges         a range past the end, an offset past the end (PMDK
 *                  lets that one wrap and pass; the drop-in refuses it),
 *                  a zero size at the end
 *   eio            a media error: this program's pread()/pwrite() stand
 *                  in for the kernel's and fail with EIO at one offset
 *                  (the drop-in calls them through the PLT, so the
 *                  program's definitions are the ones it gets):
 *                  PMEM2_E_IO_FAIL, with the offset in the message
 *   other_errors   a write through an O_RDONLY descriptor: -EBADF
 *   short_io       pread()/pwrite() that move fewer bytes are called again
 *                  for the rest
 * The devdax path (a mapping read with ntm_copy_mc()) is in
 * test_pmem2_badblock.c, on a fake sysfs tree.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <libpmem2.h>

#define SIZE (8 * 4096)

/* The offset at which pread()/pwrite() fail with EIO; -1: none. */
static long long eio_at = -1;
/* At most this many bytes per call (0: no limit), to test short I/O. */
static size_t short_io;
static unsigned io_calls;

static ssize_t (*real_pread)(int, void *, size_t, off_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);

static void find_real(void)
{
	if (!real_pread)
		real_pread = (ssize_t (*)(int, void *, size_t, off_t))
			dlsym(RTLD_NEXT, "pread");
	if (!real_pwrite)
		real_pwrite = (ssize_t (*)(int, const void *, size_t, off_t))
			dlsym(RTLD_NEXT, "pwrite");
}

/* As the kernel's: EIO when the range holds the bad offset. */
static bool hits_bad(size_t n, off_t off)
{
	return eio_at >= 0 && off <= eio_at && eio_at < off + (off_t)n;
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	find_real();
	io_calls++;
	if (hits_bad(n, off)) {
		errno = EIO;
		return -1;
	}
	return real_pread(fd, buf, short_io && n > short_io ? short_io : n, off);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	find_real();
	io_calls++;
	if (hits_bad(n, off)) {
		errno = EIO;
		return -1;
	}
	return real_pwrite(fd, buf, short_io && n > short_io ? short_io : n, off);
}

struct file {
	char path[256];
	int fd;
	struct pmem2_source *src;
};

static int file_setup(void **state)
{
	struct file *f = calloc(1, sizeof(*f));
	const char *dir = getenv("TMPDIR");

	assert_non_null(f);
	snprintf(f->path, sizeof(f->path), "%s/pmem2_mcsafe_XXXXXX",
		 dir ? dir : "/tmp");
	f->fd = mkstemp(f->path);
	assert_true(f->fd >= 0);
	assert_int_equal(ftruncate(f->fd, SIZE), 0);
	assert_int_equal(pmem2_source_from_fd(&f->src, f->fd), 0);
	eio_at = -1;
	short_io = 0;
	*state = f;
	return 0;
}

static int file_teardown(void **state)
{
	struct file *f = *state;

	pmem2_source_delete(&f->src);
	close(f->fd);
	unlink(f->path);
	free(f);
	return 0;
}

static void test_roundtrip(void **state)
{
	struct file *f = *state;
	unsigned char out[5000], in[5000];

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (unsigned char)(i * 7 + 1);
	assert_int_equal(pmem2_source_pwrite_mcsafe(f->src, out, sizeof(out),
						    4095), 0);
	memset(in, 0, sizeof(in));
	assert_int_equal(pmem2_source_pread_mcsafe(f->src, in, sizeof(in),
						   4095), 0);
	assert_memory_equal(in, out, sizeof(in));
	assert_int_equal(pmem2_source_pwrite_mcsafe(f->src, out, 10,
						    SIZE - 10), 0);
}

static void test_ranges(void **state)
{
	struct file *f = *state;
	unsigned char buf[16] = "untouched";
	struct stat st;

	assert_int_equal(pmem2_source_pread_mcsafe(f->src, buf, 2, SIZE - 1),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_non_null(strstr(pmem2_errormsg(), "pmem2_source_pread_mcsafe"));
	assert_int_equal(pmem2_source_pwrite_mcsafe(f->src, buf, SIZE + 1, 0),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	/* Past the end: refused, the file does not grow. */
	assert_int_equal(pmem2_source_pread_mcsafe(f->src, buf, 2, SIZE + 100),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_int_equal(pmem2_source_pwrite_mcsafe(f->src, buf, 2, SIZE + 100),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_int_equal(fstat(f->fd, &st), 0);
	assert_int_equal(st.st_size, SIZE);
	assert_string_equal((char *)buf, "untouched");
	/* Nothing at the very end: no I/O, no error. */
	io_calls = 0;
	assert_int_equal(pmem2_source_pread_mcsafe(f->src, buf, 0, SIZE), 0);
	assert_int_equal(io_calls, 0);
}

static void test_eio(void **state)
{
	struct file *f = *state;
	unsigned char buf[4096];

	eio_at = 3 * 4096 + 5;
	assert_int_equal(pmem2_source_pread_mcsafe(f->src, buf, sizeof(buf),
						   3 * 4096),
			 PMEM2_E_IO_FAIL);
	assert_non_null(strstr(pmem2_errormsg(), "offset 12288"));
	assert_int_equal(pmem2_source_pwrite_mcsafe(f->src, buf, 10,
						    3 * 4096 + 1),
			 PMEM2_E_IO_FAIL);
	/* The pages around it still read. */
	assert_int_equal(pmem2_source_pread_mcsafe(f->src, buf, sizeof(buf),
						   2 * 4096), 0);
}

static void test_other_errors(void **state)
{
	struct file *f = *state;
	struct pmem2_source *ro;
	unsigned char buf[8] = { 0 };
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(pmem2_source_from_fd(&ro, fd), 0);
	assert_int_equal(pmem2_source_pread_mcsafe(ro, buf, sizeof(buf), 0), 0);
	assert_int_equal(pmem2_source_pwrite_mcsafe(ro, buf, sizeof(buf), 0),
			 -EBADF);
	assert_non_null(strstr(pmem2_errormsg(), "pwrite"));
	pmem2_source_delete(&ro);
	close(fd);
}

static void test_short_io(void **state)
{
	struct file *f = *state;
	unsigned char out[1000], in[1000];

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (unsigned char)(i ^ 0x3c);
	short_io = 300;
	io_calls = 0;
	assert_int_equal(pmem2_source_pwrite_mcsafe(f->src, out, sizeof(out),
						    100), 0);
	assert_int_equal(io_calls, 4);
	assert_int_equal(pmem2_source_pread_mcsafe(f->src, in, sizeof(in),
						   100), 0);
	assert_memory_equal(in, out, sizeof(in));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_roundtrip, file_setup,
						file_teardown),
		cmocka_unit_test_setup_teardown(test_ranges, file_setup,
						file_teardown),
		cmocka_unit_test_setup_teardown(test_eio, file_setup,
						file_teardown),
		cmocka_unit_test_setup_teardown(test_other_errors, file_setup,
						file_teardown),
		cmocka_unit_test_setup_teardown(test_short_io, file_setup,
						file_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
