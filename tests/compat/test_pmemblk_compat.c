// SPDX-License-Identifier: MIT
/*
 * test_pmemblk_compat.c - the libpmemblk drop-in's failures against PMDK's.
 *
 * Built with PMDK's own header (Debian's libpmemblk-dev, never ntmem's
 * compat/libpmemblk/include) and linked twice: with ntmem's libpmemblk.so.1
 * and with Debian's libpmemblk.so.1 (PMDK 1.12.1). Every expectation in
 * the table is what PMDK's library does; NTMEM_TEST_PMDK=1 says the run is
 * PMDK's, and skips the rows where ntmem deliberately differs (each says
 * why, see ntmem-libpmemblk(7)).
 *
 * One row per argument combination or failing step of pmemblk_create,
 * pmemblk_open, pmemblk_check, pmemblk_read, pmemblk_write,
 * pmemblk_set_zero, pmemblk_set_error, pmemblk_check_version and
 * pmemblk_ctl_get/set/exec: what is on disk before (nothing, a zeroed or
 * written file, a pool, a pool with a damaged header, a pool set file),
 * the arguments, the expected return, errno, a word of pmemblk_errormsg(),
 * and what must be on disk after: a failed create leaves no file, or the
 * file exactly as it was; a failed open or check leaves the file as it
 * was; a successful create leaves a pool of the size asked for (or the
 * existing file's), with the mode asked for, that opens with its bsize.
 * The failing steps of create are made to fail for real: open (a missing
 * directory), the allocation (RLIMIT_FSIZE, with fallocate.at_create 1
 * and 0), flock (the pool is open). Rows marked ntmem_disagrees are where
 * the drop-in does not do what PMDK does and is not documented to differ:
 * they assert PMDK's behaviour in the PMDK run only, and say where.
 *
 * Also: pmemblk_errormsg() is per thread, and the functions come from the
 * library the run means (NTMEM_TEST_LIBPMEMBLK, NTMEM_TEST_NOT_LIBPMEMBLK:
 * dladdr()).
 *
 * Files go in a fresh mkdtemp() directory under /tmp (NTMEM_TEST_TMPDIR),
 * removed at the end. Arguments: fnmatch() patterns of the rows to run.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#if !__has_include(<libpmemblk.h>)
#include <stdio.h>
int main(void)
{
	puts("SKIP: PMDK's libpmemblk.h is not installed");
	return 77;
}
#else

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmemblk.h>
#include "../lib/testutil.h"

#define KiB ((size_t)1 << 10)
#define MiB ((size_t)1 << 20)
#define POOL (20 * MiB)
#define BSIZE ((size_t)512)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static char dir[256];

/* NTMEM_TEST_PMDK=1: the library under test is Debian's PMDK. */
static bool testing_pmdk(void)
{
	const char *e = getenv("NTMEM_TEST_PMDK");

	return e && !strcmp(e, "1");
}

/* --- the table --------------------------------------------------------- */

enum op {
	OP_CREATE,
	OP_OPEN,
	OP_OPEN_TWICE,		/* open, then open again while open */
	OP_CHECK,
	OP_CHECK_OPEN,		/* pmemblk_check() while the pool is open */
	OP_READ,
	OP_WRITE,
	OP_SET_ZERO,
	OP_SET_ERROR,
	OP_READ_ERROR,		/* set_error(lba), then read(lba) */
	OP_CHECK_VERSION,
	OP_CTL_GET,
	OP_CTL_SET,
	OP_CTL_EXEC,
};

/* What is at the row's path before the call. */
enum prep {
	P_NONE,			/* nothing */
	P_ZERO,			/* prep_size zero bytes */
	P_SPARSE,		/* prep_size zero bytes, no blocks (ftruncate) */
	P_DATA,			/* zeros with one byte set at prep_off */
	P_POOL,			/* a pool (bsize 512, 20 MiB) made by the library */
	P_POOL_FLIP,		/* that pool, header byte prep_off flipped */
	P_POOL_CUT,		/* that pool, its first and last two blocks
				 * written, then its last prep_off bytes cut
				 * off (ftruncate) */
	P_POOLSET,		/* a pool set file naming one 20 MiB part */
	P_POOLSET_POOL,		/* that, and the pool created in it */
	P_SET,			/* the pool set file r->set (each %s: path) */
	P_SET_POOL,		/* that, and the pool created in it, then
				 * part 1 cut to prep_size when not 0 */
	P_DIR,			/* a directory */
};

/* What must be at the path after the call. */
enum after {
	A_ANY,			/* not checked */
	A_NO_FILE,		/* nothing */
	A_SAME,			/* what prep left (see same_byte()) */
	A_POOL,			/* a pool: size, mode, signature, opens */
	A_POOL_ALLOCATED,	/* that, and every byte has its block */
};

/* Make a step of create fail for real. */
enum fault {
	F_NONE,
	F_FSIZE,		/* RLIMIT_FSIZE 1 MiB: posix_fallocate fails */
	F_NOFALLOC,		/* fallocate.at_create = 0 */
	F_FSIZE_NOFALLOC,	/* both */
};

/* lba relative to the pool's end: nblock + lba */
#define FROM_END true

/* errno must be what it was before the call */
#define ERRNO_KEPT (-1)
/* What errno is set to before each call, to see whether it changes. */
#define ERRNO_BEFORE 4242

struct row {
	const char *name;
	enum op op;
	enum prep prep;
	size_t prep_size;
	size_t prep_off;
	const char *path;	/* the path used, if not the row's file */
	size_t bsize;
	size_t poolsize;
	mode_t mode;
	long long lba;
	bool lba_from_end;
	const char *ctl;
	bool ctl_null_arg;
	const char *set;	/* P_SET's file: every %s is the row's path */
	unsigned major, minor;
	enum fault fault;
	long ret;		/* 0/1 as returned; pointers: 0 NULL, 1 not */
	/*
	 * errno on failure. 0: the call succeeds, and errno is what PMDK
	 * leaves: 0 after pmemblk_create, pmemblk_open and pmemblk_check
	 * (PMDK clears it), what it was before the call after the others.
	 */
	int err;
	size_t nblock;		/* when not 0: pmemblk_nblock() of the pool */
	const char *word;	/* in pmemblk_errormsg() (failures) */
	enum after after;
	/*
	 * ntmem differs from PMDK on purpose: skipped in the PMDK run. The
	 * text says what PMDK does instead.
	 */
	const char *ntmem_differs;
	/*
	 * ntmem disagrees with PMDK where it means not to: the row asserts
	 * PMDK's behaviour in the PMDK run only. The text says where.
	 */
	const char *ntmem_disagrees;
};

static const struct row rows[] = {
	/* --- pmemblk_create ------------------------------------------------ */
	{ "create", OP_CREATE, P_NONE, .bsize = BSIZE, .poolsize = POOL,
	  .mode = 0600, .ret = 1, .after = A_POOL_ALLOCATED },
	/*
	 * PMDK's fallocate.at_create only decides whether an existing file
	 * given with poolsize 0 is allocated (util_part_open()); a file it
	 * creates is always allocated (util_file_create()).
	 */
	{ "create_fallocate_off", OP_CREATE, P_NONE, .bsize = BSIZE,
	  .poolsize = POOL, .mode = 0600, .fault = F_NOFALLOC, .ret = 1,
	  .after = A_POOL_ALLOCATED },
	{ "create_poolsize_0_sparse_file", OP_CREATE, P_SPARSE,
	  .prep_size = POOL, .bsize = BSIZE, .poolsize = 0, .mode = 0600,
	  .ret = 1, .after = A_POOL_ALLOCATED },
	{ "create_poolsize_0_sparse_fallocate_off", OP_CREATE, P_SPARSE,
	  .prep_size = POOL, .bsize = BSIZE, .poolsize = 0, .mode = 0600,
	  .fault = F_NOFALLOC, .ret = 1, .after = A_POOL },
	{ "create_mode_0640", OP_CREATE, P_NONE, .bsize = 4096,
	  .poolsize = POOL, .mode = 0640, .ret = 1, .after = A_POOL },
	{ "create_bsize_1", OP_CREATE, P_NONE, .bsize = 1, .poolsize = POOL,
	  .mode = 0600, .ret = 1, .after = A_POOL },
	{ "create_bsize_0", OP_CREATE, P_NONE, .bsize = 0, .poolsize = POOL,
	  .mode = 0600, .err = EINVAL, .word = "block size",
	  .after = A_NO_FILE },
	{ "create_bsize_above_u32", OP_CREATE, P_NONE,
	  .bsize = (size_t)UINT32_MAX + 1, .poolsize = POOL, .mode = 0600,
	  .err = EINVAL, .word = "block size", .after = A_NO_FILE },
	{ "create_poolsize_below_min", OP_CREATE, P_NONE, .bsize = BSIZE,
	  .poolsize = PMEMBLK_MIN_POOL - 1, .mode = 0600, .err = EINVAL,
	  .word = "smaller", .after = A_NO_FILE },
	{ "create_poolsize_min", OP_CREATE, P_NONE, .bsize = BSIZE,
	  .poolsize = PMEMBLK_MIN_POOL, .mode = 0600, .ret = 1,
	  .after = A_POOL },
	/*
	 * PMDK maps a pool in whole pages (its Mmap_align, the page size):
	 * a size that is not a multiple of 4 KiB is a pool all the same, its
	 * BTT in the whole pages, the file of the size asked for.
	 */
	{ "create_poolsize_min_plus_1", OP_CREATE, P_NONE, .bsize = BSIZE,
	  .poolsize = PMEMBLK_MIN_POOL + 1, .mode = 0600, .ret = 1,
	  .nblock = 32202, .after = A_POOL_ALLOCATED },
	{ "create_poolsize_min_plus_4095", OP_CREATE, P_NONE, .bsize = 4096,
	  .poolsize = PMEMBLK_MIN_POOL + 4095, .mode = 0600, .ret = 1,
	  .nblock = 3829, .after = A_POOL_ALLOCATED },
	{ "create_poolsize_20983865", OP_CREATE, P_NONE, .bsize = BSIZE,
	  .poolsize = 20983865, .mode = 0600, .ret = 1, .nblock = 40338,
	  .after = A_POOL_ALLOCATED },
	{ "create_poolsize_32m_minus_1", OP_CREATE, P_NONE, .bsize = 4096,
	  .poolsize = 32 * MiB - 1, .mode = 0600, .ret = 1, .nblock = 7918,
	  .after = A_POOL_ALLOCATED },
	{ "create_poolsize_0_unaligned_file", OP_CREATE, P_SPARSE,
	  .prep_size = 20983865, .bsize = BSIZE, .poolsize = 0, .mode = 0600,
	  .ret = 1, .nblock = 40338, .after = A_POOL_ALLOCATED },
	/* The size PMDK names is the whole pages of the one asked for. */
	{ "create_poolsize_below_min_pages", OP_CREATE, P_NONE,
	  .bsize = BSIZE, .poolsize = PMEMBLK_MIN_POOL - 1, .mode = 0600,
	  .err = EINVAL, .word = "size 16781312 smaller than 16785408",
	  .after = A_NO_FILE },
	/*
	 * Too few blocks for the BTT (more than its 256 free ones): EINVAL,
	 * as for every BTT PMDK cannot lay out.
	 */
	{ "create_bsize_64k_min_pool", OP_CREATE, P_NONE, .bsize = 65536,
	  .poolsize = PMEMBLK_MIN_POOL, .mode = 0600, .err = EINVAL,
	  .word = "pool initialization failed", .after = A_NO_FILE },
	{ "create_poolsize_0_bsize_81921", OP_CREATE, P_SPARSE,
	  .prep_size = POOL, .bsize = 81921, .poolsize = 0, .mode = 0600,
	  .err = EINVAL, .word = "pool initialization failed",
	  .after = A_SAME,
	  .ntmem_differs = "PMDK leaves its pool header in the file" },
	/* (The file is allocated first, as in PMDK: not A_SAME.) */
	{ "create_poolsize_0_1g_bsize_2096897", OP_CREATE, P_SPARSE,
	  .prep_size = 1024 * MiB, .bsize = 2096897, .poolsize = 0,
	  .mode = 0600, .err = EINVAL, .word = "pool initialization failed",
	  .after = A_ANY },
	{ "create_exists_poolsize", OP_CREATE, P_ZERO, .prep_size = POOL,
	  .bsize = BSIZE, .poolsize = POOL, .mode = 0600, .err = EEXIST,
	  .word = "exists", .after = A_SAME },
	{ "create_exists_pool", OP_CREATE, P_POOL, .bsize = BSIZE,
	  .poolsize = POOL, .mode = 0600, .err = EEXIST, .word = "exists",
	  .after = A_SAME },
	{ "create_exists_bsize_0", OP_CREATE, P_ZERO, .prep_size = POOL,
	  .bsize = 0, .poolsize = POOL, .mode = 0600, .err = EINVAL,
	  .word = "block size", .after = A_SAME },
	{ "create_poolsize_0_zero_file", OP_CREATE, P_ZERO,
	  .prep_size = POOL, .bsize = BSIZE, .poolsize = 0, .mode = 0600,
	  .ret = 1, .after = A_POOL },
	{ "create_poolsize_0_data_after_header", OP_CREATE, P_DATA,
	  .prep_size = POOL, .prep_off = 4096, .bsize = BSIZE, .poolsize = 0,
	  .mode = 0600, .ret = 1, .after = A_POOL },
	{ "create_poolsize_0_data_in_header", OP_CREATE, P_DATA,
	  .prep_size = POOL, .prep_off = 4095, .bsize = BSIZE, .poolsize = 0,
	  .mode = 0600, .err = EEXIST, .word = "Non-empty", .after = A_SAME },
	{ "create_poolsize_0_pool", OP_CREATE, P_POOL, .bsize = BSIZE,
	  .poolsize = 0, .mode = 0600, .err = EEXIST, .word = "Non-empty",
	  .after = A_SAME },
	{ "create_poolsize_0_small_file", OP_CREATE, P_ZERO,
	  .prep_size = PMEMBLK_MIN_POOL - 4096, .bsize = BSIZE, .poolsize = 0,
	  .mode = 0600, .err = EINVAL, .word = "smaller", .after = A_SAME },
	{ "create_poolsize_0_missing", OP_CREATE, P_NONE, .bsize = BSIZE,
	  .poolsize = 0, .mode = 0600, .err = ENOENT, .word = "No such file",
	  .after = A_NO_FILE },
	{ "create_missing_dir", OP_CREATE, P_NONE, .path = "nodir/pool",
	  .bsize = BSIZE, .poolsize = POOL, .mode = 0600, .err = ENOENT,
	  .word = "No such file", .after = A_NO_FILE },
	{ "create_directory", OP_CREATE, P_DIR, .bsize = BSIZE,
	  .poolsize = POOL, .mode = 0600, .err = EEXIST, .word = "exists",
	  .after = A_ANY },
	{ "create_fallocate_fails", OP_CREATE, P_NONE, .bsize = BSIZE,
	  .poolsize = POOL, .mode = 0600, .fault = F_FSIZE, .err = EFBIG,
	  .word = "File too large", .after = A_NO_FILE },
	/* PMDK: posix_fallocate fails all the same; ntmem: ftruncate. */
	{ "create_fallocate_off_fails", OP_CREATE, P_NONE, .bsize = BSIZE,
	  .poolsize = POOL, .mode = 0600, .fault = F_FSIZE_NOFALLOC,
	  .err = EFBIG, .word = "File too large", .after = A_NO_FILE },
	/* --- pool sets: parts named path.0, path.1 (SET2) ------------------ */
#define SET2 "PMEMPOOLSET\n20M %s.0\n8M %s.1\n"
	{ "create_poolset", OP_CREATE, P_POOLSET, .bsize = BSIZE,
	  .poolsize = 0, .mode = 0600, .ret = 1, .nblock = 40315,
	  .after = A_ANY },
	{ "create_poolset_two_parts", OP_CREATE, P_SET, .set = SET2,
	  .bsize = BSIZE, .mode = 0600, .ret = 1, .nblock = 56564,
	  .after = A_ANY },
	{ "create_poolset_unaligned_parts", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n20000001 %s.0\n8388609 %s.1\n",
	  .bsize = BSIZE, .mode = 0600, .ret = 1, .nblock = 54674,
	  .after = A_ANY },
	{ "create_poolset_comments", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n# parts\n\n20M %s.0 # first\n8M\t%s.1\n",
	  .bsize = 4096, .mode = 0600, .ret = 1, .after = A_ANY },
	{ "create_poolset_exists", OP_CREATE, P_SET_POOL, .set = SET2,
	  .bsize = BSIZE, .mode = 0600, .err = EEXIST, .word = "Non-empty",
	  .after = A_SAME },
	{ "create_poolset_replica", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n20M %s.0\nREPLICA\n20M %s.1\n",
	  .bsize = BSIZE, .mode = 0600, .err = ENOTSUP,
	  .word = "replication not supported", .after = A_SAME },
	{ "create_poolset_first_line", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSETX\n20M %s.0\n", .bsize = BSIZE, .mode = 0600,
	  .err = EINVAL, .word = "[the first line must be exactly "
				 "'PMEMPOOLSET':1]", .after = A_SAME },
	{ "create_poolset_relative_path", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n20M part0\n", .bsize = BSIZE, .mode = 0600,
	  .err = EINVAL, .word = "[incorrect path (must be an absolute "
				 "one):2]", .after = A_SAME },
	{ "create_poolset_bad_size", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n# a part\n20X %s.0\n", .bsize = BSIZE,
	  .mode = 0600, .err = EINVAL, .word = "[incorrect format of size:3]",
	  .after = A_SAME },
	{ "create_poolset_extra_token", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n20M %s.0 more\n", .bsize = BSIZE,
	  .mode = 0600, .err = EINVAL,
	  .word = "[invalid token found in the current line:2]",
	  .after = A_SAME },
	{ "create_poolset_no_parts", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n# nothing\n", .bsize = BSIZE, .mode = 0600,
	  .err = EINVAL, .word = "[no pool set parts:3]", .after = A_SAME },
	{ "create_poolset_unknown_option", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\nOPTION FAST\n20M %s.0\n", .bsize = BSIZE,
	  .mode = 0600, .err = EINVAL, .word = "[unknown option:2]",
	  .after = A_SAME },
	{ "create_poolset_nohdrs", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\nOPTION NOHDRS\n20M %s.0\n8M %s.1\n",
	  .bsize = BSIZE, .mode = 0600, .err = EINVAL, .word = "NOHDRS",
	  .after = A_SAME },
	{ "create_poolset_singlehdr", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\nOPTION SINGLEHDR\n20M %s.0\n8M %s.1\n",
	  .bsize = BSIZE, .mode = 0600, .err = ENOTSUP, .word = "SINGLEHDR",
	  .after = A_SAME,
	  .ntmem_differs = "PMDK makes a pool with one header, in part 0" },
	{ "create_poolset_part_too_small", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n20M %s.0\n1M %s.1\n", .bsize = BSIZE,
	  .mode = 0600, .err = EINVAL,
	  .word = "size 1048576 smaller than 2097152", .after = A_SAME },
	{ "create_poolset_pool_too_small", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n8M %s.0\n4M %s.1\n", .bsize = BSIZE,
	  .mode = 0600, .err = EINVAL,
	  .word = "reservation pool size 12578816 smaller than 16785408",
	  .after = A_SAME },
	{ "create_poolset_part_twice", OP_CREATE, P_SET,
	  .set = "PMEMPOOLSET\n20M %s.0\n8M %s.0\n", .bsize = BSIZE,
	  .mode = 0600, .err = EAGAIN, .word = "flock", .after = A_SAME },
	{ "create_poolset_bsize_too_big", OP_CREATE, P_SET, .set = SET2,
	  .bsize = 131072, .mode = 0600, .err = EINVAL,
	  .word = "pool initialization failed", .after = A_SAME },

	/* --- pmemblk_open -------------------------------------------------- */
	{ "open_bsize_0", OP_OPEN, P_POOL, .bsize = 0, .ret = 1,
	  .after = A_ANY },
	{ "open_bsize_same", OP_OPEN, P_POOL, .bsize = BSIZE, .ret = 1,
	  .after = A_ANY },
	{ "open_bsize_other", OP_OPEN, P_POOL, .bsize = 4096, .err = EINVAL,
	  .word = "bsize", .after = A_SAME },
	{ "open_missing", OP_OPEN, P_NONE, .bsize = 0, .err = ENOENT,
	  .word = "No such file", .after = A_NO_FILE },
	{ "open_twice", OP_OPEN_TWICE, P_POOL, .bsize = 0, .err = EAGAIN,
	  .word = "flock", .after = A_ANY },
	{ "open_header_checksum", OP_OPEN, P_POOL_FLIP, .prep_off = 200,
	  .bsize = 0, .err = EINVAL, .word = "checksum", .after = A_SAME },
	/* CKSUM_2K: the second half of the header is not checksummed. */
	{ "open_header_past_2k", OP_OPEN, P_POOL_FLIP, .prep_off = 3000,
	  .bsize = 0, .ret = 1, .after = A_ANY },
	{ "open_zero_file", OP_OPEN, P_ZERO, .prep_size = POOL, .bsize = 0,
	  .err = EINVAL, .word = "major", .after = A_SAME },
	{ "open_small_file", OP_OPEN, P_ZERO, .prep_size = MiB, .bsize = 0,
	  .err = EINVAL, .word = "smaller", .after = A_SAME },
	/*
	 * The last 4 KiB or less cut off: the BTT's backup info block is
	 * gone, every block, the map and the flog are still in the file.
	 * PMDK opens it, to read and write; so does ntmem. One byte more
	 * and the flog is cut: both refuse it.
	 */
	{ "open_cut_1", OP_OPEN, P_POOL_CUT, .prep_off = 1, .bsize = 0,
	  .ret = 1, .nblock = 40315, .after = A_ANY },
	{ "open_cut_4096", OP_OPEN, P_POOL_CUT, .prep_off = 4096, .bsize = 0,
	  .ret = 1, .nblock = 40315, .after = A_ANY },
	{ "open_cut_4097", OP_OPEN, P_POOL_CUT, .prep_off = 4097, .bsize = 0,
	  .err = EINVAL, .after = A_SAME },
	{ "open_poolset", OP_OPEN, P_POOLSET_POOL, .bsize = 0, .ret = 1,
	  .nblock = 40315, .after = A_ANY },
	{ "open_poolset_two_parts", OP_OPEN, P_SET_POOL, .set = SET2,
	  .bsize = BSIZE, .ret = 1, .nblock = 56564, .after = A_ANY },
	{ "open_poolset_bsize_other", OP_OPEN, P_SET_POOL, .set = SET2,
	  .bsize = 4096, .err = EINVAL, .word = "bsize", .after = A_SAME },
	{ "open_poolset_twice", OP_OPEN_TWICE, P_SET_POOL, .set = SET2,
	  .bsize = 0, .err = EAGAIN, .word = "flock", .after = A_ANY },
	{ "open_poolset_missing_part", OP_OPEN, P_POOLSET, .bsize = 0,
	  .err = ENOENT, .word = "No such file", .after = A_SAME },
	{ "open_poolset_part_resized", OP_OPEN, P_SET_POOL, .set = SET2,
	  .prep_size = 9 * MiB, .bsize = 0, .err = EINVAL,
	  .word = "file size does not match config", .after = A_SAME },
	{ "open_poolset_part_alone", OP_OPEN, P_SET_POOL, .set = SET2,
	  .path = "open_poolset_part_alone.0", .bsize = 0, .err = EINVAL,
	  .after = A_SAME },

	/* --- pmemblk_check ------------------------------------------------- */
	{ "check", OP_CHECK, P_POOL, .bsize = 0, .ret = 1, .after = A_SAME },
	{ "check_bsize_same", OP_CHECK, P_POOL, .bsize = BSIZE, .ret = 1,
	  .after = A_SAME },
	{ "check_bsize_other", OP_CHECK, P_POOL, .bsize = 4096, .ret = -1,
	  .err = EINVAL, .word = "bsize", .after = A_SAME },
	{ "check_missing", OP_CHECK, P_NONE, .bsize = 0, .ret = -1,
	  .err = ENOENT, .word = "No such file", .after = A_NO_FILE },
	{ "check_header_checksum", OP_CHECK, P_POOL_FLIP, .prep_off = 200,
	  .bsize = 0, .ret = -1, .err = EINVAL, .word = "checksum",
	  .after = A_SAME },
	{ "check_open_pool", OP_CHECK_OPEN, P_POOL, .bsize = 0, .ret = -1,
	  .err = EAGAIN, .word = "flock", .after = A_ANY },
	{ "check_cut_4096", OP_CHECK, P_POOL_CUT, .prep_off = 4096,
	  .bsize = 0, .ret = 0, .err = EINVAL, .word = "backup info block",
	  .after = A_SAME,
	  .ntmem_differs = "PMDK returns 1: it never reads the BTT's backup "
			   "info block" },
	{ "check_poolset", OP_CHECK, P_SET_POOL, .set = SET2, .bsize = 0,
	  .ret = 1, .after = A_ANY },

	/* --- block I/O on a 20 MiB pool of 512-byte blocks ------------------ */
	{ "read_0", OP_READ, P_POOL, .lba = 0, .ret = 0 },
	{ "read_last", OP_READ, P_POOL, .lba = -1, .lba_from_end = FROM_END,
	  .ret = 0 },
	{ "read_nblock", OP_READ, P_POOL, .lba = 0, .lba_from_end = FROM_END,
	  .ret = -1, .err = EINVAL, .word = "out of range" },
	{ "read_negative", OP_READ, P_POOL, .lba = -1, .ret = -1,
	  .err = EINVAL, .word = "negative" },
	{ "write_0", OP_WRITE, P_POOL, .lba = 0, .ret = 0 },
	{ "write_last", OP_WRITE, P_POOL, .lba = -1, .lba_from_end = FROM_END,
	  .ret = 0 },
	{ "write_nblock", OP_WRITE, P_POOL, .lba = 0, .lba_from_end = FROM_END,
	  .ret = -1, .err = EINVAL, .word = "out of range" },
	{ "write_negative", OP_WRITE, P_POOL, .lba = -1, .ret = -1,
	  .err = EINVAL, .word = "negative" },
	{ "set_zero_0", OP_SET_ZERO, P_POOL, .lba = 0, .ret = 0 },
	{ "set_zero_nblock", OP_SET_ZERO, P_POOL, .lba = 0,
	  .lba_from_end = FROM_END, .ret = -1, .err = EINVAL,
	  .word = "out of range" },
	{ "set_zero_negative", OP_SET_ZERO, P_POOL, .lba = -1, .ret = -1,
	  .err = EINVAL, .word = "negative" },
	{ "set_error_0", OP_SET_ERROR, P_POOL, .lba = 0, .ret = 0 },
	{ "set_error_nblock", OP_SET_ERROR, P_POOL, .lba = 0,
	  .lba_from_end = FROM_END, .ret = -1, .err = EINVAL,
	  .word = "out of range" },
	{ "set_error_negative", OP_SET_ERROR, P_POOL, .lba = -1, .ret = -1,
	  .err = EINVAL, .word = "negative" },
	{ "read_cut_first", OP_READ, P_POOL_CUT, .prep_off = 4096, .lba = 0,
	  .ret = 0 },
	{ "read_cut_last", OP_READ, P_POOL_CUT, .prep_off = 4096, .lba = -1,
	  .lba_from_end = FROM_END, .ret = 0 },
	{ "write_cut_last", OP_WRITE, P_POOL_CUT, .prep_off = 4096, .lba = -1,
	  .lba_from_end = FROM_END, .ret = 0 },
	{ "read_error_block", OP_READ_ERROR, P_POOL, .lba = 7, .ret = -1,
	  .err = EIO },

	/* --- pmemblk_check_version ------------------------------------------ */
	{ "version_1_0", OP_CHECK_VERSION, .major = 1, .minor = 0, .ret = 0,
	  .err = ERRNO_KEPT },
	{ "version_1_1", OP_CHECK_VERSION, .major = 1, .minor = 1, .ret = 0,
	  .err = ERRNO_KEPT },
	{ "version_1_2", OP_CHECK_VERSION, .major = 1, .minor = 2, .ret = 1,
	  .err = ERRNO_KEPT, .word = "minor version mismatch" },
	{ "version_0_1", OP_CHECK_VERSION, .major = 0, .minor = 1, .ret = 1,
	  .err = ERRNO_KEPT, .word = "major version mismatch" },
	{ "version_2_0", OP_CHECK_VERSION, .major = 2, .minor = 0, .ret = 1,
	  .err = ERRNO_KEPT, .word = "major version mismatch" },

	/* --- pmemblk_ctl_* (no pool: the queries are global) ---------------- */
	{ "ctl_get_fallocate", OP_CTL_GET, .ctl = "fallocate.at_create",
	  .ret = 0 },
	{ "ctl_get_prefault", OP_CTL_GET, .ctl = "prefault.at_open",
	  .ret = 0 },
	{ "ctl_get_sds", OP_CTL_GET, .ctl = "sds.at_create", .ret = 0 },
	{ "ctl_get_cow", OP_CTL_GET, .ctl = "copy_on_write.at_open",
	  .ret = 0 },
	{ "ctl_set_prefault", OP_CTL_SET, .ctl = "prefault.at_create",
	  .ret = 0 },
	{ "ctl_get_unknown", OP_CTL_GET, .ctl = "no.such.query", .ret = -1,
	  .err = EINVAL, .word = "invalid query entry point no.such.query" },
	{ "ctl_set_unknown", OP_CTL_SET, .ctl = "fallocate.at_open",
	  .ret = -1, .err = EINVAL,
	  .word = "invalid query entry point fallocate.at_open" },
	{ "ctl_exec_unknown", OP_CTL_EXEC, .ctl = "no.such.query", .ret = -1,
	  .err = EINVAL, .word = "invalid query entry point no.such.query" },
	{ "ctl_exec_known", OP_CTL_EXEC, .ctl = "fallocate.at_create",
	  .ret = -1, .err = EINVAL,
	  .word = "invalid query entry point fallocate.at_create" },
	{ "ctl_get_node", OP_CTL_GET, .ctl = "prefault", .ret = -1,
	  .err = EINVAL, .word = "invalid query entry point prefault" },
	{ "ctl_get_null_arg", OP_CTL_GET, .ctl = "fallocate.at_create",
	  .ctl_null_arg = true, .ret = -1, .err = EINVAL, .word = "argument" },
	{ "ctl_set_null_arg", OP_CTL_SET, .ctl = "fallocate.at_create",
	  .ctl_null_arg = true, .ret = -1, .err = EINVAL, .word = "argument" },
	{ "ctl_get_null_name", OP_CTL_GET, .ctl = NULL, .ret = -1,
	  .err = EINVAL, .word = "query" },
};

/* --- files --------------------------------------------------------------- */

static void row_path(char *out, size_t n, const struct row *r)
{
	snprintf(out, n, "%s/%s", dir, r->path ? r->path : r->name);
}

static void write_file(const char *path, const void *buf, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	if (n)
		assert_int_equal(pwrite(fd, buf, n, 0), (ssize_t)n);
	assert_int_equal(close(fd), 0);
}

/* The whole file into a malloc()ed buffer; NULL when there is none. */
static unsigned char *read_file(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char *buf;
	struct stat st;

	if (fd < 0)
		return NULL;
	assert_int_equal(fstat(fd, &st), 0);
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	*n = (size_t)st.st_size;
	buf = malloc(*n ? *n : 1);
	assert_non_null(buf);
	assert_int_equal(pread(fd, buf, *n, 0), (ssize_t)*n);
	close(fd);
	return buf;
}

static void make_pool(const char *path)
{
	PMEMblkpool *p = pmemblk_create(path, BSIZE, POOL, 0600);

	if (!p)
		fail_msg("pmemblk_create %s: %s", path, pmemblk_errormsg());
	pmemblk_close(p);
}

/* A pool in the pool set file at @path (its parts made by the library). */
static void make_set_pool(const char *path)
{
	PMEMblkpool *p = pmemblk_create(path, BSIZE, 0, 0600);

	if (!p)
		fail_msg("pmemblk_create %s: %s", path, pmemblk_errormsg());
	pmemblk_close(p);
}

/* What P_POOL_CUT writes to a block: from its number. */
static unsigned char cut_pattern(long long lba)
{
	return (unsigned char)(lba ^ 0x5a);
}

/*
 * A pool whose first and last two blocks hold cut_pattern() (each write
 * ends in msync(): the other 40,000 would take minutes on a disk), then
 * @cut bytes shorter.
 */
static void make_cut_pool(const char *path, size_t cut)
{
	PMEMblkpool *p;
	unsigned char buf[BSIZE];
	struct stat st;
	long long n;

	make_pool(path);
	p = pmemblk_open(path, BSIZE);
	if (!p)
		fail_msg("pmemblk_open %s: %s", path, pmemblk_errormsg());
	n = (long long)pmemblk_nblock(p);
	for (long long lba = 0; lba < n; lba++) {
		if (lba == 2)
			lba = n - 2;
		memset(buf, cut_pattern(lba), sizeof(buf));
		assert_int_equal(pmemblk_write(p, buf, lba), 0);
	}
	pmemblk_close(p);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(truncate(path, st.st_size - (off_t)cut), 0);
}

static void prepare(const struct row *r, const char *path)
{
	char set[2 * PATH_MAX];
	unsigned char *buf;
	int fd;

	switch (r->prep) {
	case P_NONE:
		break;
	case P_SPARSE:
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, (off_t)r->prep_size), 0);
		assert_int_equal(close(fd), 0);
		break;
	case P_ZERO:
	case P_DATA:
		buf = calloc(1, r->prep_size);
		assert_non_null(buf);
		if (r->prep == P_DATA)
			buf[r->prep_off] = 0x5a;
		write_file(path, buf, r->prep_size);
		free(buf);
		break;
	case P_POOL:
		make_pool(path);
		break;
	case P_POOL_FLIP: {
		unsigned char b;

		make_pool(path);
		fd = open(path, O_RDWR | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, &b, 1, (off_t)r->prep_off), 1);
		b ^= 0x01;
		assert_int_equal(pwrite(fd, &b, 1, (off_t)r->prep_off), 1);
		assert_int_equal(close(fd), 0);
		break;
	}
	case P_POOL_CUT:
		make_cut_pool(path, r->prep_off);
		break;
	case P_POOLSET:
	case P_POOLSET_POOL: {
		int n = snprintf(set, sizeof(set), "PMEMPOOLSET\n20M %s.part0\n",
				 path);

		write_file(path, set, (size_t)n);
		if (r->prep == P_POOLSET_POOL)
			make_set_pool(path);
		break;
	}
	case P_SET:
	case P_SET_POOL: {
		char base[PATH_MAX];
		int n;

		/* The set is the row's, whatever path the call is given. */
		snprintf(base, sizeof(base), "%s/%s", dir, r->name);
		n = snprintf(set, sizeof(set), r->set, base, base, base);
		write_file(base, set, (size_t)n);
		if (r->prep == P_SET_POOL)
			make_set_pool(base);
		if (r->prep == P_SET_POOL && r->prep_size) {
			char part[PATH_MAX + 2];

			snprintf(part, sizeof(part), "%s.1", base);
			assert_int_equal(truncate(part, (off_t)r->prep_size), 0);
		}
		break;
	}
	case P_DIR:
		assert_int_equal(mkdir(path, 0700), 0);
		break;
	}
}

/* What prepare() left, to compare with after the call (A_SAME). */
struct before {
	unsigned char *data;
	size_t size;
};

/*
 * PMDK keeps its run-time state (mapping address, sizes, lanes, the BTT
 * handle) in the pool's mapping after the descriptor, from 4104 to the
 * end of the descriptor page, and fills it in on every open that maps the
 * file, failed or not (the bsize check comes after): those bytes of a pool
 * are PMDK's to change. ntmem writes nothing there, so its run is strict.
 */
static bool same_byte(const struct row *r, size_t off, unsigned char was,
		      unsigned char now)
{
	bool pool = r->prep == P_POOL || r->prep == P_POOL_FLIP ||
		    r->prep == P_POOL_CUT;

	if (was == now)
		return true;
	return testing_pmdk() && pool && off >= 4104 && off < 8192;
}

static void check_after(const struct row *r, const char *path,
			const struct before *b)
{
	struct stat st;
	unsigned char *now;
	size_t n = 0;

	/* A pool set create that failed leaves none of its parts. */
	for (int k = 0; r->prep == P_SET && r->op == OP_CREATE && !r->ret &&
			k < 2; k++) {
		char part[PATH_MAX];

		snprintf(part, sizeof(part), "%s/%s.%d", dir, r->name, k);
		if (lstat(part, &st) == 0)
			fail_msg("%s: part %s is left", r->name, part);
	}

	switch (r->after) {
	case A_ANY:
		break;
	case A_NO_FILE:
		if (lstat(path, &st) == 0)
			fail_msg("%s: a file is left at %s", r->name, path);
		assert_int_equal(errno, ENOENT);
		break;
	case A_SAME:
		now = read_file(path, &n);
		if (!b->data) {
			assert_null(now);
			break;
		}
		if (!now)
			fail_msg("%s: the file is gone", r->name);
		assert_int_equal(n, b->size);
		for (size_t i = 0; i < n; i++)
			if (!same_byte(r, i, b->data[i], now[i]))
				fail_msg("%s: byte %zu changed (%#x -> %#x)",
					 r->name, i, b->data[i], now[i]);
		free(now);
		break;
	case A_POOL:
	case A_POOL_ALLOCATED: {
		size_t want = r->poolsize ? r->poolsize : r->prep_size;
		PMEMblkpool *p;
		char sig[8];
		int fd;

		assert_int_equal(stat(path, &st), 0);
		assert_int_equal((size_t)st.st_size, want);
		if (r->after == A_POOL_ALLOCATED &&
		    (size_t)st.st_blocks * 512 < want)
			fail_msg("%s: %zu of %zu bytes allocated", r->name,
				 (size_t)st.st_blocks * 512, want);
		assert_int_equal(st.st_mode & 07777, r->mode);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		assert_int_equal(pread(fd, sig, 8, 0), 8);
		close(fd);
		assert_memory_equal(sig, "PMEMBLK", 8);
		p = pmemblk_open(path, r->bsize);
		if (!p)
			fail_msg("%s: pmemblk_open: %s", r->name,
				 pmemblk_errormsg());
		/* PMDK stores the bsize asked for; blocks are padded. */
		assert_int_equal(pmemblk_bsize(p), r->bsize);
		assert_true(pmemblk_nblock(p) > 0);
		if (r->nblock)
			assert_int_equal(pmemblk_nblock(p), r->nblock);
		pmemblk_close(p);
		break;
	}
	}
}

/* --- running a row ------------------------------------------------------- */

static void set_fsize(rlim_t lim)
{
	struct rlimit rl;

	assert_int_equal(getrlimit(RLIMIT_FSIZE, &rl), 0);
	rl.rlim_cur = lim;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &rl), 0);
}

static int set_fallocate(int v)
{
	return pmemblk_ctl_set(NULL, "fallocate.at_create", &v);
}

/* The call on an open pool; ret and errno as the function leaves them. */
static long run_io(const struct row *r, PMEMblkpool *p, long long lba,
		   int *err)
{
	size_t bs = pmemblk_bsize(p);
	unsigned char *buf = malloc(bs);
	long ret = 0;

	assert_non_null(buf);
	memset(buf, 0xa5, bs);
	errno = ERRNO_BEFORE;
	switch (r->op) {
	case OP_READ:
		ret = pmemblk_read(p, buf, lba);
		break;
	case OP_WRITE:
		ret = pmemblk_write(p, buf, lba);
		break;
	case OP_SET_ZERO:
		ret = pmemblk_set_zero(p, lba);
		break;
	case OP_SET_ERROR:
		ret = pmemblk_set_error(p, lba);
		break;
	case OP_READ_ERROR:
		assert_int_equal(pmemblk_write(p, buf, lba), 0);
		assert_int_equal(pmemblk_set_error(p, lba), 0);
		errno = ERRNO_BEFORE;
		ret = pmemblk_read(p, buf, lba);
		break;
	default:
		fail();
	}
	*err = errno == ERRNO_BEFORE ? ERRNO_KEPT : errno;
	/* Every block of a cut pool still holds what was written. */
	if (ret == 0 && r->op == OP_READ && r->prep == P_POOL_CUT)
		for (size_t i = 0; i < bs; i++)
			assert_int_equal(buf[i], cut_pattern(lba));
	/* What a successful call did is visible. */
	if (ret == 0 && r->op == OP_WRITE) {
		unsigned char *back = calloc(1, bs);

		assert_non_null(back);
		assert_int_equal(pmemblk_read(p, back, lba), 0);
		assert_memory_equal(back, buf, bs);
		free(back);
	}
	if (ret == 0 && r->op == OP_SET_ZERO) {
		memset(buf, 0xff, bs);
		assert_int_equal(pmemblk_read(p, buf, lba), 0);
		for (size_t i = 0; i < bs; i++)
			assert_int_equal(buf[i], 0);
	}
	if (ret == 0 && r->op == OP_SET_ERROR) {
		errno = 0;
		assert_int_equal(pmemblk_read(p, buf, lba), -1);
		assert_int_equal(errno, EIO);
		/* set_zero clears the error */
		assert_int_equal(pmemblk_set_zero(p, lba), 0);
		assert_int_equal(pmemblk_read(p, buf, lba), 0);
	}
	free(buf);
	return ret;
}

/* PMDK's successful create, open and check end with errno 0. */
static bool clears_errno(enum op op)
{
	return op == OP_CREATE || op == OP_OPEN || op == OP_OPEN_TWICE ||
	       op == OP_CHECK || op == OP_CHECK_OPEN;
}

static void test_row(void **state)
{
	const struct row *r = *state;
	struct before b = { 0 };
	char path[PATH_MAX];
	const char *vmsg = NULL;
	PMEMblkpool *p = NULL, *held = NULL;
	long ret = 0;
	int err = 0, arg = 1;

	if (r->ntmem_differs && testing_pmdk()) {
		/* Deliberate difference (ntmem-libpmemblk(7)). */
		print_message("skipped for PMDK: %s\n", r->ntmem_differs);
		skip();
	}
	if (r->ntmem_disagrees && !testing_pmdk()) {
		/* PMDK's behaviour, asserted in the PMDK run only. */
		print_message("ntmem differs from PMDK: %s\n",
			      r->ntmem_disagrees);
		skip();
	}
	row_path(path, sizeof(path), r);
	prepare(r, path);
	/* Only A_SAME compares: a 1 GiB file is never read in. */
	if (r->after == A_SAME)
		b.data = read_file(path, &b.size);

	switch (r->op) {
	case OP_CREATE:
		if (r->fault == F_NOFALLOC || r->fault == F_FSIZE_NOFALLOC)
			assert_int_equal(set_fallocate(0), 0);
		if (r->fault == F_FSIZE || r->fault == F_FSIZE_NOFALLOC)
			set_fsize(MiB);
		errno = ERRNO_BEFORE;
		p = pmemblk_create(path, r->bsize, r->poolsize, r->mode);
		err = errno;
		if (r->fault == F_FSIZE || r->fault == F_FSIZE_NOFALLOC)
			set_fsize(RLIM_INFINITY);
		if (r->fault == F_NOFALLOC || r->fault == F_FSIZE_NOFALLOC)
			assert_int_equal(set_fallocate(1), 0);
		ret = p != NULL;
		break;
	case OP_OPEN_TWICE: {
		unsigned fds = tu_open_fds();

		held = pmemblk_open(path, r->bsize);
		if (!held)
			fail_msg("first open: %s", pmemblk_errormsg());
		/*
		 * An open pool keeps no descriptor (as PMDK): its mapping holds
		 * the file, and with it the lock the second open meets.
		 */
		if (tu_open_fds() != fds)
			fail_msg("%s: the open pool keeps %d descriptors", r->name,
				 (int)(tu_open_fds() - fds));
	}
		/* fall through */
	case OP_OPEN:
		errno = ERRNO_BEFORE;
		p = pmemblk_open(path, r->bsize);
		err = errno;
		ret = p != NULL;
		break;
	case OP_CHECK_OPEN:
		held = pmemblk_open(path, 0);
		if (!held)
			fail_msg("open: %s", pmemblk_errormsg());
		/* fall through */
	case OP_CHECK:
		errno = ERRNO_BEFORE;
		ret = pmemblk_check(path, r->bsize);
		err = errno;
		break;
	case OP_READ:
	case OP_WRITE:
	case OP_SET_ZERO:
	case OP_SET_ERROR:
	case OP_READ_ERROR: {
		long long lba = r->lba;

		held = pmemblk_open(path, 0);
		if (!held)
			fail_msg("open: %s", pmemblk_errormsg());
		if (r->lba_from_end)
			lba += (long long)pmemblk_nblock(held);
		ret = run_io(r, held, lba, &err);
		break;
	}
	case OP_CHECK_VERSION:
		errno = ERRNO_BEFORE;
		vmsg = pmemblk_check_version(r->major, r->minor);
		err = errno;
		ret = vmsg != NULL;
		break;
	case OP_CTL_GET:
	case OP_CTL_SET:
	case OP_CTL_EXEC: {
		int (*fn)(PMEMblkpool *, const char *, void *) =
			r->op == OP_CTL_GET ? pmemblk_ctl_get :
			r->op == OP_CTL_SET ? pmemblk_ctl_set :
					      pmemblk_ctl_exec;

		/* set: the value each query has by default */
		if (r->op == OP_CTL_SET)
			arg = 0;
		errno = ERRNO_BEFORE;
		ret = fn(NULL, r->ctl, r->ctl_null_arg ? NULL : &arg);
		err = errno;
		break;
	}
	}

	if (err == ERRNO_BEFORE)
		err = ERRNO_KEPT;
	print_message("%-36s ret %ld errno %d (%s) msg \"%s\"\n", r->name, ret,
		      err, err > 0 ? strerror(err) : "-",
		      vmsg ? vmsg : pmemblk_errormsg());
	assert_int_equal(ret, r->ret);
	if (r->err == 0 && clears_errno(r->op)) {
		if (err != 0)
			fail_msg("%s: errno %d (%s), expected 0", r->name, err,
				 err > 0 ? strerror(err) : "left alone");
	} else if (r->err == ERRNO_KEPT || r->err == 0) {
		if (err != ERRNO_KEPT)
			fail_msg("%s: errno %d (%s), expected it left alone",
				 r->name, err, strerror(err));
	} else {
		if (err != r->err)
			fail_msg("%s: errno %d (%s), expected %d (%s)", r->name,
				 err, strerror(err), r->err, strerror(r->err));
	}
	if (r->word) {
		const char *m = vmsg ? vmsg : pmemblk_errormsg();

		if (vmsg)
			assert_string_equal(vmsg, pmemblk_errormsg());
		if (!m || !strstr(m, r->word))
			fail_msg("%s: message \"%s\" lacks \"%s\"", r->name,
				 m ? m : "(null)", r->word);
	}
	if (r->nblock && p)
		assert_int_equal(pmemblk_nblock(p), r->nblock);
	if (r->op == OP_CTL_GET && ret == 0 &&
	    !strcmp(r->ctl, "fallocate.at_create"))
		assert_int_equal(arg, 1);	/* the default */

	if (p)
		pmemblk_close(p);
	if (held)
		pmemblk_close(held);
	check_after(r, path, &b);
	free(b.data);
}

/* --- errormsg is per thread ---------------------------------------------- */

static void *thread_fail(void *arg)
{
	int v;

	(void)arg;
	if (pmemblk_ctl_get(NULL, "thread.query", &v) != -1)
		return (void *)"ctl_get succeeded";
	if (!strstr(pmemblk_errormsg(), "thread.query"))
		return (void *)"no message in the thread";
	return NULL;
}

static void test_errormsg_thread(void **state)
{
	char path[PATH_MAX], mine[256];
	pthread_t t;
	void *res;

	(void)state;
	snprintf(path, sizeof(path), "%s/errormsg_thread", dir);
	assert_null(pmemblk_create(path, 0, POOL, 0600));
	snprintf(mine, sizeof(mine), "%s", pmemblk_errormsg());
	assert_true(mine[0] != '\0');
	assert_int_equal(pthread_create(&t, NULL, thread_fail, NULL), 0);
	assert_int_equal(pthread_join(t, &res), 0);
	if (res)
		fail_msg("%s", (const char *)res);
	/* The thread's failure left this thread's message alone. */
	assert_string_equal(pmemblk_errormsg(), mine);
}

/* --- character devices ----------------------------------------------------- */

/*
 * A device dax is a pool (poolsize 0: the whole device), which only a
 * real kernel's namespace can show (tests/kernel/stage.sh); here, another
 * character device, /dev/null: both libraries refuse it as PMDK does
 * (EINVAL with poolsize 0 and on open and check, EEXIST otherwise), and
 * it stays. The drop-in says why: not a device dax (never "size (0)" or
 * "not a pool file", which a device dax would be refused with too).
 */
static void test_char_device(void **state)
{
	static const char *const dev = "/dev/null";
	struct stat st;

	(void)state;
	if (stat(dev, &st) || !S_ISCHR(st.st_mode))
		skip();
	errno = 0;
	assert_null(pmemblk_create(dev, BSIZE, 0, 0600));
	assert_int_equal(errno, EINVAL);
	if (!testing_pmdk())
		assert_non_null(strstr(pmemblk_errormsg(), "not a device dax"));
	errno = 0;
	assert_null(pmemblk_create(dev, BSIZE, POOL, 0600));
	assert_int_equal(errno, EEXIST);
	errno = 0;
	assert_null(pmemblk_open(dev, BSIZE));
	assert_int_equal(errno, EINVAL);
	if (!testing_pmdk())
		assert_non_null(strstr(pmemblk_errormsg(), "not a device dax"));
	errno = 0;
	assert_int_equal(pmemblk_check(dev, BSIZE), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(stat(dev, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

/* --- the library the run means ------------------------------------------- */

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void test_library(void **state)
{
	const char *want = getenv("NTMEM_TEST_LIBPMEMBLK");
	const char *not = getenv("NTMEM_TEST_NOT_LIBPMEMBLK");
	Dl_info info;

	(void)state;
	assert_true(dladdr((void *)pmemblk_create, &info) != 0);
	assert_non_null(info.dli_fname);
	print_message("pmemblk_create from %s\n", info.dli_fname);
	if (want && *want && !same_file(info.dli_fname, want))
		fail_msg("pmemblk_create comes from %s, not %s",
			 info.dli_fname, want);
	if (not && *not && same_file(info.dli_fname, not))
		fail_msg("pmemblk_create comes from %s", info.dli_fname);
}

/*
 * Create as PMDK: a new pool's file holds the header page and descriptor
 * and nothing after them (the BTT comes with the first write). A create
 * over a file that still holds an old pool's BTT (its header page zeroed)
 * gives a pool whose blocks read as zeros, written and reopened as any
 * other: the old BTT is never taken for the new one. Both libraries.
 */
static void test_create_lazy(void **state)
{
	char path[PATH_MAX];
	unsigned char w[BSIZE], r[BSIZE], zero[BSIZE] = { 0 };
	unsigned char *buf;
	size_t n;
	PMEMblkpool *p;
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "%s/create_lazy", dir);
	make_pool(path);
	buf = read_file(path, &n);
	assert_non_null(buf);
	for (size_t i = 8192; i < n; i++)
		if (buf[i])
			fail_msg("byte %zu written by the create", i);
	free(buf);

	memset(w, 0x6b, sizeof(w));
	p = pmemblk_open(path, BSIZE);
	assert_non_null(p);
	assert_int_equal(pmemblk_write(p, w, 3), 0);
	pmemblk_close(p);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	/* The header and descriptor pages: the BTT at 8192 stays. */
	for (off_t off = 0; off < 8192; off += (off_t)BSIZE)
		assert_int_equal(pwrite(fd, zero, sizeof(zero), off),
				 (ssize_t)BSIZE);
	assert_int_equal(close(fd), 0);
	p = pmemblk_create(path, BSIZE, 0, 0600);
	if (!p)
		fail_msg("pmemblk_create over the old BTT: %s",
			 pmemblk_errormsg());
	assert_int_equal(pmemblk_read(p, r, 3), 0);
	assert_memory_equal(r, zero, BSIZE);
	/* Reopened before any write: still no BTT, not the old one. */
	pmemblk_close(p);
	p = pmemblk_open(path, BSIZE);
	if (!p)
		fail_msg("pmemblk_open before the first write: %s",
			 pmemblk_errormsg());
	assert_int_equal(pmemblk_read(p, r, 3), 0);
	assert_memory_equal(r, zero, BSIZE);
	memset(w, 0x2c, sizeof(w));
	assert_int_equal(pmemblk_write(p, w, 5), 0);
	pmemblk_close(p);
	p = pmemblk_open(path, BSIZE);
	assert_non_null(p);
	assert_int_equal(pmemblk_read(p, r, 3), 0);
	assert_memory_equal(r, zero, BSIZE);
	assert_int_equal(pmemblk_read(p, r, 5), 0);
	assert_memory_equal(r, w, BSIZE);
	pmemblk_close(p);
	assert_int_equal(pmemblk_check(path, BSIZE), 1);
	assert_int_equal(unlink(path), 0);
}

/* --- setup --------------------------------------------------------------- */

static int rm_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	d = opendir(path);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (rm_tree(sub)) {
			closedir(d);
			return -1;
		}
	}
	closedir(d);
	return rmdir(path);
}

static int group_setup(void **state)
{
	const char *tmp = getenv("NTMEM_TEST_TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/ntmem-pmemblk-compat-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	/* The create rows check the mode exactly, whatever the umask. */
	umask(022);
	/* The RLIMIT_FSIZE rows: EFBIG, not death by SIGXFSZ. */
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	return rm_tree(dir);
}

static bool wanted(const char *name, int argc, char **argv)
{
	if (argc < 2)
		return true;
	for (int i = 1; i < argc; i++)
		if (!fnmatch(argv[i], name, 0))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct CMUnitTest tests[ARRAY_SIZE(rows) + 4];
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		if (!wanted(rows[i].name, argc, argv))
			continue;
		tests[n++] = (struct CMUnitTest){
			.name = rows[i].name,
			.test_func = test_row,
			.initial_state = (void *)&rows[i],
		};
	}
	if (wanted("errormsg_thread", argc, argv))
		tests[n++] = (struct CMUnitTest){
			.name = "errormsg_thread",
			.test_func = test_errormsg_thread,
		};
	if (wanted("char_device", argc, argv))
		tests[n++] = (struct CMUnitTest){
			.name = "char_device",
			.test_func = test_char_device,
		};
	if (wanted("create_lazy", argc, argv))
		tests[n++] = (struct CMUnitTest){
			.name = "create_lazy",
			.test_func = test_create_lazy,
		};
	if (wanted("library", argc, argv))
		tests[n++] = (struct CMUnitTest){
			.name = "library",
			.test_func = test_library,
		};
	return _cmocka_run_group_tests("pmemblk_compat", tests, n,
				       group_setup, group_teardown);
}

#endif /* __has_include(<libpmemblk.h>) */
