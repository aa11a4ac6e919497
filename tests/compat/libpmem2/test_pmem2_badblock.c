// SPDX-License-Identifier: MIT
/*
 * test_pmem2_badblock.c - the libpmem2 drop-in's bad blocks and device
 * information on fake sysfs trees (NTMEM_SYSFS_ROOT):
 *
 *   devdax_*   /dev/zero stands in for a devdax device: the tree makes
 *              /sys/dev/char/1:5 a dax device below region0 of a bus of
 *              two NVDIMMs, whose list has a range before the device's
 *              window, one inside and one across its end: next() gives
 *              the two in the window, clipped and in device bytes, then
 *              NO_BAD_BLOCK_FOUND; the NVDIMMs' ids concatenated, their
 *              dirty-shutdown counts summed, the region's numa node;
 *              clearing goes to the bus's control device (absent here);
 *              mcsafe I/O through a mapping, where a page that faults
 *              (/dev/zero's past its shmem object) is PMEM2_E_IO_FAIL,
 *              also after the program installed its own SIGBUS handler;
 *              its alignment where the devdax is on the dax bus; a deep
 *              flush that leaves a region's deep_flush of "0" alone
 *   fsdax_*    a file on the scratch file system, whose block device the
 *              tree makes a pmem namespace with a bad range where FIEMAP
 *              says the file's second page is: next() gives that page;
 *              clearing it punches and reallocates it (zeros, same size)
 *   not_pmem   a file the tree does not put on pmem: an empty list, and
 *              NOSUPP / DAX_REGION_NOT_FOUND as Debian's library answers
 *   failures   anonymous sources, a buffer too small, an NVDIMM without a
 *              count: the code, and nothing written to the out argument
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <libpmem2.h>

#include "../../lib/testutil.h"
#include "../../lib/sysfs_tree.h"

#define BUS "devices/platform/ndbus97"
#define REGION BUS "/region0"
#define DAX REGION "/dax0.0/dax0.0"
#define ID0 "8089-a2-1837-00000a3b"
#define ID1 "8089-a2-1837-00000a3c"
#define DEV_SIZE (16u << 20)

struct tree {
	char root[128];
};

static int tree_setup(void **state)
{
	struct tree *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_int_equal(tu_scratch_dir(t->root, sizeof(t->root),
					"ntmem-pmem2-bb"), 0);
	assert_int_equal(setenv("NTMEM_SYSFS_ROOT", t->root, 1), 0);
	*state = t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;

	unsetenv("NTMEM_SYSFS_ROOT");
	assert_int_equal(tu_remove_tree(t->root), 0);
	free(t);
	return 0;
}

/* region0 of two NVDIMMs, and /dev/zero as its dax0.0. */
static void devdax_tree(const char *root)
{
	char text[64];

	st_put(root, REGION "/resource", "0x100000000\n");
	st_put(root, REGION "/size", "0x40000000\n");
	st_put(root, REGION "/numa_node", "1\n");
	st_put(root, REGION "/mapping0", "nmem0,0,536870912,0\n");
	st_put(root, REGION "/mapping1", "nmem1,0,536870912,1\n");
	st_put(root, BUS "/nmem0/nfit/id", ID0 "\n");
	st_put(root, BUS "/nmem0/nfit/dirty_shutdown", "3\n");
	st_put(root, BUS "/nmem1/nfit/id", ID1 "\n");
	st_put(root, BUS "/nmem1/nfit/dirty_shutdown", "4\n");
	st_link(root, "bus/nd/devices/region0",
		"../../../" REGION);
	/* The device's window: 2 MiB into the region, 16 MiB long. */
	st_put(root, DAX "/resource", "0x100200000\n");
	snprintf(text, sizeof(text), "%u\n", DEV_SIZE);
	st_put(root, DAX "/size", text);
	st_put(root, DAX "/device/align", "4096\n");
	st_link(root, DAX "/subsystem", "../../../../../../class/dax");
	/*
	 * Region sectors: 0-3 before the window (4096 = its start), 4104-4111
	 * inside (device bytes 4096-8191), 36860-36875 across its end
	 * (36864): only 36860-36863 is the device's.
	 */
	st_put(root, REGION "/badblocks", "0 4\n4104 8\n36860 16\n");
	st_link(root, "dev/char/1:5", "../../" DAX);
}

/* Remove the tree's file @rel. */
static int unlink_sysfs(const char *root, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	return unlink(path);
}

static struct pmem2_source *zero_source(int *fd)
{
	struct pmem2_source *src;

	*fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	assert_true(*fd >= 0);
	assert_int_equal(pmem2_source_from_fd(&src, *fd), 0);
	return src;
}

static void test_devdax_badblocks(void **state)
{
	struct tree *t = *state;
	struct pmem2_badblock_context *bb;
	struct pmem2_badblock b;
	struct pmem2_source *src;
	size_t size;
	int fd;

	devdax_tree(t->root);
	src = zero_source(&fd);
	assert_int_equal(pmem2_source_size(src, &size), 0);
	assert_int_equal(size, DEV_SIZE);
	assert_int_equal(pmem2_badblock_context_new(&bb, src), 0);
	assert_int_equal(pmem2_badblock_next(bb, &b), 0);
	assert_int_equal(b.offset, 4096);
	assert_int_equal(b.length, 4096);
	assert_int_equal(pmem2_badblock_next(bb, &b), 0);
	assert_int_equal(b.offset, (36860 - 4096) * 512);
	assert_int_equal(b.length, 4 * 512);
	b = (struct pmem2_badblock){ 7, 7 };
	assert_int_equal(pmem2_badblock_next(bb, &b),
			 PMEM2_E_NO_BAD_BLOCK_FOUND);
	assert_int_equal(b.offset, 7);
	assert_int_equal(b.length, 7);
	/* The bus's control device, /dev/ndctl97, is not there to clear. */
	if (access("/dev/ndctl97", F_OK) != 0) {
		b = (struct pmem2_badblock){ 4096, 4096 };
		assert_int_equal(pmem2_badblock_clear(bb, &b), -ENOENT);
		assert_non_null(strstr(pmem2_errormsg(), "/dev/ndctl97"));
	}
	pmem2_badblock_context_delete(&bb);
	assert_null(bb);
	pmem2_badblock_context_delete(&bb);	/* a NULL context: nothing */
	pmem2_source_delete(&src);
	close(fd);
}

static void test_devdax_device_info(void **state)
{
	struct tree *t = *state;
	struct pmem2_source *src;
	char id[64], small[8];
	uint64_t usc = 0;
	size_t len = 0;
	int fd, node = -5;

	devdax_tree(t->root);
	src = zero_source(&fd);
	/*
	 * Each walk ends at the first mappingN that is not there: a call
	 * that succeeds leaves errno as it was all the same.
	 */
	errno = 0;
	assert_int_equal(pmem2_source_device_id(src, NULL, &len), 0);
	assert_int_equal(errno, 0);
	assert_int_equal(len, strlen(ID0 ID1) + 1);
	memset(id, 'x', sizeof(id));
	assert_int_equal(pmem2_source_device_id(src, id, &len), 0);
	assert_int_equal(errno, 0);
	assert_string_equal(id, ID0 ID1);
	/* Too small: nothing written, len unchanged. */
	len = sizeof(small);
	memset(small, 'x', sizeof(small));
	assert_int_equal(pmem2_source_device_id(src, small, &len),
			 PMEM2_E_BUFFER_TOO_SMALL);
	assert_int_equal(len, sizeof(small));
	assert_memory_equal(small, "xxxxxxxx", sizeof(small));
	errno = 0;
	assert_int_equal(pmem2_source_device_usc(src, &usc), 0);
	assert_int_equal(errno, 0);
	assert_int_equal(usc, 3 + 4);
	assert_int_equal(pmem2_source_numa_node(src, &node), 0);
	assert_int_equal(node, 1);

	/* An NVDIMM without a count: NOSUPP, usc untouched. */
	st_put(t->root, BUS "/nmem1/nfit/dirty_shutdown", "-1\n");
	usc = 99;
	assert_int_equal(pmem2_source_device_usc(src, &usc), PMEM2_E_NOSUPP);
	assert_int_equal(usc, 99);
	assert_non_null(strstr(pmem2_errormsg(), "nmem1"));
	/* No numa_node attribute: -1, as libndctl answers. */
	assert_int_equal(unlink_sysfs(t->root, REGION "/numa_node"), 0);
	errno = 0;
	assert_int_equal(pmem2_source_numa_node(src, &node), 0);
	assert_int_equal(errno, 0);
	assert_int_equal(node, -1);
	pmem2_source_delete(&src);
	close(fd);
}

/*
 * Whether reading a MAP_SHARED mapping of /dev/zero made at a non-zero
 * offset faults (SIGBUS): the kernel backs it with a shmem object as long
 * as the mapping, so a page at offset + i past that length is missing,
 * which stands in for a poisoned page here.
 */
static bool zero_offset_faults(void)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		/* Not cmocka's handler, which would carry on the tests here. */
		signal(SIGBUS, SIG_DFL);
		int fd = open("/dev/zero", O_RDWR);
		volatile char *p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
					4096);

		_exit(p == MAP_FAILED ? 2 : p[0]);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS;
}

/*
 * A handler a program installs after its first mcsafe call: the drop-in's
 * must still be in front of it for the copy's fault. Returning would
 * fault again forever: a call ends the test program.
 */
static void program_sigbus(int sig)
{
	(void)sig;
	_exit(99);
}

static void test_devdax_mcsafe(void **state)
{
	struct tree *t = *state;
	struct pmem2_source *src;
	unsigned char buf[300];
	int fd;

	devdax_tree(t->root);
	src = zero_source(&fd);
	memset(buf, 'x', sizeof(buf));
	/* Mapped for the call and read with the machine check caught. */
	assert_int_equal(pmem2_source_pread_mcsafe(src, buf, sizeof(buf), 100),
			 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(pmem2_source_pwrite_mcsafe(src, buf, sizeof(buf), 100),
			 0);
	assert_int_equal(pmem2_source_pread_mcsafe(src, buf, sizeof(buf),
						   DEV_SIZE - 10),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	assert_int_equal(pmem2_source_pwrite_mcsafe(src, buf, 1, DEV_SIZE),
			 PMEM2_E_LENGTH_OUT_OF_RANGE);
	if (zero_offset_faults()) {
		/* A page that faults is PMEM2_E_IO_FAIL, never SIGBUS. */
		assert_int_equal(pmem2_source_pread_mcsafe(src, buf, sizeof(buf),
							   8192 - 100),
				 PMEM2_E_IO_FAIL);
		assert_non_null(strstr(pmem2_errormsg(), "offset 8192"));
		assert_int_equal(pmem2_source_pwrite_mcsafe(src, buf, 10, 8192),
				 PMEM2_E_IO_FAIL);
		assert_non_null(strstr(pmem2_errormsg(), "offset 8192"));

		/* The program's own handler, set after the first call. */
		struct sigaction mine = { .sa_handler = program_sigbus }, old;

		assert_int_equal(sigaction(SIGBUS, &mine, &old), 0);
		assert_int_equal(pmem2_source_pread_mcsafe(src, buf, sizeof(buf),
							   8192 - 100),
				 PMEM2_E_IO_FAIL);
		assert_int_equal(sigaction(SIGBUS, &old, NULL), 0);
	}
	pmem2_source_delete(&src);
	close(fd);
}

/* Where byte 4096 of @fd is on its device, or -1 without FIEMAP. */
static long long physical_of_second_page(int fd)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent e[1];
	} q;

	memset(&q, 0, sizeof(q));
	q.fm.fm_start = 4096;
	q.fm.fm_length = 4096;
	q.fm.fm_flags = FIEMAP_FLAG_SYNC;
	q.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &q.fm) || q.fm.fm_mapped_extents != 1)
		return -1;
	return (long long)(q.e[0].fe_physical + (4096 - q.e[0].fe_logical));
}

/* A 32-page file of 0x5a bytes in the tree's directory, written out. */
static int data_file(const char *root)
{
	char path[256], buf[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/data", root);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	memset(buf, 0x5a, sizeof(buf));
	for (int i = 0; i < 32; i++)
		assert_int_equal(write(fd, buf, sizeof(buf)), (ssize_t)sizeof(buf));
	assert_int_equal(fsync(fd), 0);
	return fd;
}

static void test_fsdax_badblocks(void **state)
{
	struct tree *t = *state;
	struct pmem2_badblock_context *bb;
	char rel[64], text[64], buf[4096];
	struct pmem2_badblock b;
	struct pmem2_source *src;
	long long phys;
	struct stat st;
	int fd = data_file(t->root), node = -5;

	phys = physical_of_second_page(fd);
	if (phys < 0 || phys % 512) {
		close(fd);
		skip();
	}
	assert_int_equal(fstat(fd, &st), 0);
	st_put(t->root, BUS "/region1/numa_node", "0\n");
	st_put(t->root, BUS "/region1/mapping0", "nmem0,0,536870912,0\n");
	st_put(t->root, BUS "/nmem0/nfit/id", ID0 "\n");
	snprintf(text, sizeof(text), "%lld 8\n", phys / 512);
	st_put(t->root, BUS "/region1/namespace1.0/block/pmem1/badblocks", text);
	snprintf(rel, sizeof(rel), "dev/block/%u:%u", major(st.st_dev),
		 minor(st.st_dev));
	st_link(t->root, rel, "../../" BUS "/region1/namespace1.0/block/pmem1");

	assert_int_equal(pmem2_source_from_fd(&src, fd), 0);
	assert_int_equal(pmem2_badblock_context_new(&bb, src), 0);
	assert_int_equal(pmem2_badblock_next(bb, &b), 0);
	assert_int_equal(b.offset, 4096);
	assert_int_equal(b.length, 4096);
	assert_int_equal(pmem2_badblock_next(bb, &b),
			 PMEM2_E_NO_BAD_BLOCK_FOUND);
	/* Cleared: punched and allocated again, zeros, the same size. */
	b = (struct pmem2_badblock){ 4096, 4096 };
	assert_int_equal(pmem2_badblock_clear(bb, &b), 0);
	assert_int_equal(pread(fd, buf, sizeof(buf), 4096), (ssize_t)sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 0);
	assert_int_equal(pread(fd, buf, 1, 8192), 1);
	assert_int_equal(buf[0], 0x5a);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 32 * 4096);
	assert_true(st.st_blocks >= 32 * 8);
	/* A zero length is fallocate()'s EINVAL, as with PMDK. */
	b.length = 0;
	assert_int_equal(pmem2_badblock_clear(bb, &b), -EINVAL);
	pmem2_badblock_context_delete(&bb);

	/* The file's NVDIMM and numa node, through its namespace. */
	char id[64];
	size_t len = sizeof(id);

	assert_int_equal(pmem2_source_device_id(src, id, &len), 0);
	assert_string_equal(id, ID0);
	assert_int_equal(pmem2_source_numa_node(src, &node), 0);
	assert_int_equal(node, 0);
	pmem2_source_delete(&src);
	close(fd);
}

static void test_not_pmem(void **state)
{
	struct tree *t = *state;
	struct pmem2_badblock_context *bb;
	struct pmem2_badblock b;
	struct pmem2_source *src;
	uint64_t usc = 99;
	size_t len = 12345;
	int fd = data_file(t->root), node = 77;

	assert_int_equal(pmem2_source_from_fd(&src, fd), 0);
	assert_int_equal(pmem2_badblock_context_new(&bb, src), 0);
	assert_int_equal(pmem2_badblock_next(bb, &b),
			 PMEM2_E_NO_BAD_BLOCK_FOUND);
	pmem2_badblock_context_delete(&bb);
	assert_int_equal(pmem2_source_device_id(src, NULL, &len),
			 PMEM2_E_NOSUPP);
	assert_int_equal(len, 12345);
	assert_int_equal(pmem2_source_device_usc(src, &usc), PMEM2_E_NOSUPP);
	assert_int_equal(usc, 99);
	assert_int_equal(pmem2_source_numa_node(src, &node),
			 PMEM2_E_DAX_REGION_NOT_FOUND);
	assert_int_equal(node, 77);
	pmem2_source_delete(&src);
	close(fd);
}

static void test_anon_failures(void **state)
{
	struct pmem2_badblock_context *bb = (void *)&bb;
	struct pmem2_source *src;
	uint64_t usc = 99;
	size_t len = 12345;
	int node = 77;
	char buf[8];

	(void)state;
	assert_int_equal(pmem2_source_from_anon(&src, 4096), 0);
	/* As Debian's library: the out pointer is left as it was. */
	assert_int_equal(pmem2_badblock_context_new(&bb, src), PMEM2_E_NOSUPP);
	assert_ptr_equal(bb, (void *)&bb);
	assert_non_null(strstr(pmem2_errormsg(), "anonymous"));
	assert_int_equal(pmem2_source_device_id(src, NULL, &len),
			 PMEM2_E_NOSUPP);
	assert_int_equal(len, 12345);
	assert_int_equal(pmem2_source_device_usc(src, &usc), PMEM2_E_NOSUPP);
	assert_int_equal(usc, 99);
	assert_int_equal(pmem2_source_numa_node(src, &node), PMEM2_E_NOSUPP);
	assert_int_equal(node, 77);
	assert_int_equal(pmem2_source_pread_mcsafe(src, buf, sizeof(buf), 0),
			 PMEM2_E_SOURCE_TYPE_NOT_SUPPORTED);
	assert_int_equal(pmem2_source_pwrite_mcsafe(src, buf, sizeof(buf), 0),
			 PMEM2_E_SOURCE_TYPE_NOT_SUPPORTED);
	pmem2_source_delete(&src);
}

/*
 * The layout of a kernel without the dax class (5.1 on: the devdax is a
 * device of the dax bus, /sys/dev/char/M:m is it and has no device/):
 * its alignment is its own "align", as libndctl reads it.
 */
static void test_devdax_align_dax_bus(void **state)
{
	struct tree *t = *state;
	struct pmem2_source *src;
	size_t align = 7, size = 0;
	int fd;

	devdax_tree(t->root);
	assert_int_equal(unlink_sysfs(t->root, DAX "/device/align"), 0);
	st_put(t->root, DAX "/align", "2097152\n");
	src = zero_source(&fd);
	/* device/align was looked for first: errno as it was all the same. */
	errno = EDOM;
	assert_int_equal(pmem2_source_alignment(src, &align), 0);
	assert_int_equal(errno, EDOM);
	assert_int_equal(align, 2097152);
	assert_int_equal(pmem2_source_size(src, &size), 0);
	assert_int_equal(size, DEV_SIZE);
	/* Neither file: the code, the answer untouched. */
	assert_int_equal(unlink_sysfs(t->root, DAX "/align"), 0);
	align = 7;
	assert_int_equal(pmem2_source_alignment(src, &align), -ENOENT);
	assert_int_equal(align, 7);
	assert_non_null(strstr(pmem2_errormsg(), "align"));
	pmem2_source_delete(&src);
	close(fd);
}

/* The first bytes of the tree's file @rel, as a string. */
static void read_sysfs(const char *root, const char *rel, char *buf, size_t n)
{
	char path[512];
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	got = read(fd, buf, n - 1);
	assert_true(got >= 0);
	buf[got] = '\0';
	close(fd);
}

/*
 * pmem2_deep_flush() of a devdax map: the region's deep_flush says "0"
 * where it has no flush hints (the kernel then makes the file read-only:
 * a write would be EACCES), and is left alone; "1" is written to.
 */
static void test_devdax_deep_flush(void **state)
{
	struct tree *t = *state;
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	char text[8];
	int fd;

	devdax_tree(t->root);
	st_put(t->root, REGION "/deep_flush", "0\n");
	src = zero_source(&fd);
	assert_int_equal(pmem2_config_new(&cfg), 0);
	assert_int_equal(pmem2_config_set_required_store_granularity(cfg,
			 PMEM2_GRANULARITY_PAGE), 0);
	assert_int_equal(pmem2_map_new(&map, cfg, src), 0);
	assert_int_equal(pmem2_deep_flush(map, pmem2_map_get_address(map),
					  4096), 0);
	read_sysfs(t->root, REGION "/deep_flush", text, sizeof(text));
	assert_string_equal(text, "0\n");
	st_put(t->root, REGION "/deep_flush", "9\n");
	assert_int_equal(pmem2_deep_flush(map, pmem2_map_get_address(map),
					  4096), 0);
	read_sysfs(t->root, REGION "/deep_flush", text, sizeof(text));
	assert_string_equal(text, "1\n");
	/* No deep_flush attribute: nothing to write, errno as it was. */
	assert_int_equal(unlink_sysfs(t->root, REGION "/deep_flush"), 0);
	errno = 0;
	assert_int_equal(pmem2_deep_flush(map, pmem2_map_get_address(map),
					  4096), 0);
	assert_int_equal(errno, 0);
	assert_int_equal(pmem2_map_delete(&map), 0);
	pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_devdax_badblocks,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_devdax_device_info,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_devdax_mcsafe,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_devdax_align_dax_bus,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_devdax_deep_flush,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_fsdax_badblocks,
						tree_setup, tree_teardown),
		cmocka_unit_test_setup_teardown(test_not_pmem,
						tree_setup, tree_teardown),
		cmocka_unit_test(test_anon_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
