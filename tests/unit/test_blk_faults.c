// SPDX-License-Identifier: MIT
/*
 * test_blk_faults.c - the block device when the medium or the caller
 * misbehaves: every case returns an error and the process lives.
 *
 *   null_args     a table of NULL device, buffer and vector arguments:
 *                 -EINVAL with ntm_errmsg() naming the argument, nothing
 *                 written (a NULL read buffer used to fault, a NULL iov
 *                 was blamed on iovcnt).
 *   truncated     the file of an emulated namespace cut short underneath:
 *                 a write (plain and FUA) past the new end returns -EIO
 *                 instead of dying of SIGBUS, whether its pages had been
 *                 written before or never; ntm_blk_flush() over it returns
 *                 too; reads there are -EIO as before; the part of the
 *                 device still backed keeps working.
 *   full_fs       a 64 MiB sparse namespace on a 16 MiB tmpfs (mounted
 *                 here; skipped when mounting is not permitted): writes go
 *                 on until one returns -ENOSPC, which changed nothing (its
 *                 range still reads as before), and the process lives.
 *
 * The truncation and full file system cases run in a child, so a SIGBUS
 * that escapes is reported as a failure instead of ending the test run.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ntmem.h>
#include "../lib/testutil.h"

#define MiB ((size_t)1 << 20)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ntmem-blkf-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static char mnt[128];

static int teardown(void **state)
{
	(void)state;
	/* A failed test_full_fs may have left its file system mounted. */
	if (mnt[0] && umount2(mnt, MNT_DETACH) == 0)
		rmdir(mnt);
	return rmdir(dir);
}

/*
 * Run @fn in a child; it returns 0 or a line number that failed. A death
 * by signal (the SIGBUS this file is about) fails the test.
 */
static void in_child(int (*fn)(void), const char *what)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		alarm(60);
		_exit(fn());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		fail_msg("%s: the process was killed by signal %d (%s)", what,
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	if (WEXITSTATUS(status) == 77)
		skip();
	if (WEXITSTATUS(status))
		fail_msg("%s: the check at line %d failed (its message is above)",
			 what, WEXITSTATUS(status));
}

/* In a child: print why and return the line, as in_child() expects. */
#define CHILD_CHECK(cond)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "line %d: %s (ntm_errmsg: %s)\n",      \
				__LINE__, #cond, ntm_errmsg());                \
			return __LINE__ & 0xff ? __LINE__ & 0xff : 1;          \
		}                                                              \
	} while (0)

/* --- NULL arguments ------------------------------------------------------- */

/* @call returned -EINVAL and ntm_errmsg() names @name. */
#define CHECK_EINVAL(call, name)                                               \
	do {                                                                   \
		ssize_t got_ = (call);                                         \
		if (got_ != -EINVAL || !strstr(ntm_errmsg(), (name)))          \
			fail_msg("%s: returned %zd, message '%s'; expected "   \
				 "-EINVAL naming '%s'", #call, got_,           \
				 ntm_errmsg(), (name));                        \
	} while (0)

static void test_null_args(void **state)
{
	unsigned char buf[1024], before[1024];
	struct iovec iov[2] = { { buf, 512 }, { NULL, 512 } };
	struct ntm_ns *ns;
	struct ntm_blk *blk;

	(void)state;
	assert_int_equal(ntm_ns_anon(&ns, MiB, 4096), 0);
	assert_int_equal(ntm_blk_open(&blk, ns, NULL), 0);
	tu_fill_random(ntm_ns_base(ns), MiB, 11);
	memcpy(before, ntm_ns_base(ns), sizeof(before));

	CHECK_EINVAL(ntm_blk_read(blk, NULL, 512, 0), "buf");
	CHECK_EINVAL(ntm_blk_write(blk, NULL, 512, 0, 0), "buf");
	CHECK_EINVAL(ntm_blk_readv(blk, NULL, 1, 0), "iov: NULL");
	CHECK_EINVAL(ntm_blk_writev(blk, NULL, 1, 0, NTM_BLK_FUA), "iov: NULL");
	CHECK_EINVAL(ntm_blk_readv(blk, iov, 2, 0), "iov[1].iov_base");
	CHECK_EINVAL(ntm_blk_writev(blk, iov, 2, 0, 0), "iov[1].iov_base");
	CHECK_EINVAL(ntm_blk_read(NULL, buf, 512, 0), "blk");
	CHECK_EINVAL(ntm_blk_writev(NULL, iov, 1, 0, 0), "blk");
	CHECK_EINVAL(ntm_blk_flush(NULL), "blk");
	CHECK_EINVAL(ntm_blk_badblocks_add(NULL, 1, 1), "blk");
	CHECK_EINVAL(ntm_blk_badblocks_clear(NULL, 1, 1), "blk");
	/* A count query on no device is zero entries. */
	assert_int_equal(ntm_blk_badblocks(NULL, NULL, 0), 0);
	assert_memory_equal(ntm_ns_base(ns), before, sizeof(before));
	ntm_blk_close(blk);
	ntm_ns_close(ns);
}

/* --- a file truncated underneath ----------------------------------------- */

static int truncated_child(void)
{
	char path[128];
	unsigned char buf[8192], got[8192];
	struct ntm_ns *ns;
	struct ntm_blk *blk;
	ssize_t r;

	snprintf(path, sizeof(path), "%s/trunc", dir);
	CHILD_CHECK(ntm_ns_create(&ns, path, 8 * MiB, 4096, NTM_NS_EMULATE) == 0);
	CHILD_CHECK(ntm_blk_open(&blk, ns, NULL) == 0);
	tu_fill_random(buf, sizeof(buf), 5);
	/* Written once, so the first 4 MiB are backed and reserved... */
	for (size_t off = 0; off < 4 * MiB; off += sizeof(buf))
		CHILD_CHECK(ntm_blk_write(blk, buf, sizeof(buf), off, 0) ==
			    (ssize_t)sizeof(buf));
	/* ...then the file is cut to 1 MiB under the mapping. */
	CHILD_CHECK(truncate(path, (off_t)MiB) == 0);

	/* Pages written before: the copy itself faults. */
	r = ntm_blk_write(blk, buf, sizeof(buf), 2 * MiB, 0);
	CHILD_CHECK(r == -EIO);
	CHILD_CHECK(strstr(ntm_errmsg(), "truncated") != NULL);
	CHILD_CHECK(ntm_blk_write(blk, buf, 4096, 3 * MiB, NTM_BLK_FUA) == -EIO);
	/* Pages never written: refused before anything is stored. */
	CHILD_CHECK(ntm_blk_write(blk, buf, sizeof(buf), 6 * MiB, 0) == -EIO);
	CHILD_CHECK(ntm_blk_write(blk, buf, 512, 8 * MiB - 512, NTM_BLK_FUA) == -EIO);
	/* A write straddling the new end. */
	CHILD_CHECK(ntm_blk_write(blk, buf, sizeof(buf), MiB - 4096, 0) == -EIO);
	/* Reads there fail too, as they always did. */
	CHILD_CHECK(ntm_blk_read(blk, got, sizeof(got), 2 * MiB) == -EIO);
	/* Flush covers the whole device: it returns, and says so if it failed. */
	r = ntm_blk_flush(blk);
	CHILD_CHECK(r == 0 || r == -EIO);
	/* What is still backed still works. */
	CHILD_CHECK(ntm_blk_write(blk, buf, 4096, 0, NTM_BLK_FUA) == 4096);
	CHILD_CHECK(ntm_blk_read(blk, got, 4096, 0) == 4096);
	CHILD_CHECK(memcmp(got, buf, 4096) == 0);
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	unlink(path);
	return 0;
}

static void test_truncated(void **state)
{
	(void)state;
	in_child(truncated_child, "writes to a truncated namespace");
}

/* --- a full file system --------------------------------------------------- */

static int full_fs_child(void)
{
	char path[160];
	static unsigned char buf[MiB], got[MiB], zero[MiB];
	struct ntm_ns *ns;
	struct ntm_blk *blk;
	size_t off;
	ssize_t r = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/full", mnt);
	/* Sparse: 64 MiB of namespace on 16 MiB of file system. */
	CHILD_CHECK(ntm_ns_create(&ns, path, 64 * MiB, 4096, NTM_NS_EMULATE) == 0);
	CHILD_CHECK(ntm_blk_open(&blk, ns, NULL) == 0);
	tu_fill_random(buf, sizeof(buf), 9);
	for (off = 0; off < 64 * MiB; off += MiB) {
		r = ntm_blk_write(blk, buf, MiB, off, NTM_BLK_FUA);
		if (r != (ssize_t)MiB)
			break;
	}
	CHILD_CHECK(off < 64 * MiB);	/* it did run out */
	CHILD_CHECK(r == -ENOSPC);
	CHILD_CHECK(strstr(ntm_errmsg(), "no space") != NULL);
	/*
	 * The failed write changed nothing: its range of the file still
	 * reads as the hole it was. (Through the device, a read of a hole
	 * on a full tmpfs is -EIO: tmpfs needs a page even to read one.)
	 */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(fd >= 0);
	CHILD_CHECK(pread(fd, got, MiB, (off_t)off) == (ssize_t)MiB);
	close(fd);
	CHILD_CHECK(memcmp(got, zero, MiB) == 0);
	r = ntm_blk_read(blk, got, MiB, off);
	CHILD_CHECK(r == -EIO || (r == (ssize_t)MiB && !memcmp(got, zero, MiB)));
	/* Earlier writes are intact, and the device still works there. */
	CHILD_CHECK(ntm_blk_read(blk, got, MiB, 0) == (ssize_t)MiB);
	CHILD_CHECK(memcmp(got, buf, MiB) == 0);
	CHILD_CHECK(ntm_blk_write(blk, buf + 4096, 4096, 0, NTM_BLK_FUA) == 4096);
	/* Later writes keep failing cleanly. */
	CHILD_CHECK(ntm_blk_write(blk, buf, 4096, 60 * MiB, 0) == -ENOSPC);
	ntm_blk_close(blk);
	ntm_ns_close(ns);
	unlink(path);
	return 0;
}

static void test_full_fs(void **state)
{
	(void)state;
	snprintf(mnt, sizeof(mnt), "%s/tmpfs", dir);
	assert_int_equal(mkdir(mnt, 0700), 0);
	if (mount("tmpfs", mnt, "tmpfs", 0, "size=16m")) {
		rmdir(mnt);
		mnt[0] = '\0';
		skip();		/* not root, or no mount namespace rights */
	}
	in_child(full_fs_child, "writes to a full file system");
	assert_int_equal(umount(mnt), 0);
	rmdir(mnt);
	mnt[0] = '\0';
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_null_args),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_full_fs),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
