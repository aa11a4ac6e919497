// SPDX-License-Identifier: MIT
/*
 * pmem2_dev_interop.c - one fixed run through libpmem2's bad-block,
 * mcsafe and device-information functions on a regular file and on
 * anonymous memory, printing every code and the bytes read back, for
 * check_pmem2_interop.sh (the same lines on Debian's libpmem2.so.1 and
 * on the drop-in). Built against PMDK's own <libpmem2.h>.
 *
 * Not printed, where the drop-in differs on purpose (README): what an
 * mcsafe call does with an offset past the source's end (PMDK's check
 * wraps: it reads nothing or extends the file, and returns 0; the drop-in
 * refuses), and the count a failed pmem2_source_device_usc() leaves
 * (PMDK writes 0 first; the drop-in leaves it).
 *
 *   pmem2_dev_interop DIR    (a directory for its scratch file)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmem2.h>

#define FILE_SIZE (4 * 4096)

static int step(const char *what, int ret)
{
	printf("%s %d\n", what, ret);
	return ret;
}

static void mcsafe(struct pmem2_source *src, const char *name)
{
	char out[6000], in[6000], label[64];

	for (size_t i = 0; i < sizeof(out); i++)
		out[i] = (char)('a' + i % 26);
	snprintf(label, sizeof(label), "%s_write", name);
	step(label, pmem2_source_pwrite_mcsafe(src, out, sizeof(out), 1000));
	memset(in, 0, sizeof(in));
	snprintf(label, sizeof(label), "%s_read", name);
	if (step(label, pmem2_source_pread_mcsafe(src, in, sizeof(in), 1000)) == 0)
		printf("%s_same %d\n", name, memcmp(in, out, sizeof(in)) == 0);
	snprintf(label, sizeof(label), "%s_read_zero_at_end", name);
	step(label, pmem2_source_pread_mcsafe(src, in, 0, FILE_SIZE));
	snprintf(label, sizeof(label), "%s_read_over_end", name);
	step(label, pmem2_source_pread_mcsafe(src, in, 2, FILE_SIZE - 1));
	snprintf(label, sizeof(label), "%s_write_over_end", name);
	step(label, pmem2_source_pwrite_mcsafe(src, out, FILE_SIZE + 1, 0));
}

static void device(struct pmem2_source *src, const char *name)
{
	char label[64];
	size_t len = 12345;
	uint64_t usc = 777;
	int node = 77, ret;

	snprintf(label, sizeof(label), "%s_device_id", name);
	ret = step(label, pmem2_source_device_id(src, NULL, &len));
	printf("%s_device_id_len_unchanged %d\n", name, ret == 0 || len == 12345);
	snprintf(label, sizeof(label), "%s_device_usc", name);
	step(label, pmem2_source_device_usc(src, &usc));
	snprintf(label, sizeof(label), "%s_numa_node", name);
	ret = step(label, pmem2_source_numa_node(src, &node));
	printf("%s_numa_node_unchanged %d\n", name, ret == 0 || node == 77);
}

static void badblocks(struct pmem2_source *src, int fd, const char *name)
{
	struct pmem2_badblock_context *bbctx = NULL;
	struct pmem2_badblock bb = { 7, 7 };
	char label[64], buf[4096];

	snprintf(label, sizeof(label), "%s_badblock_new", name);
	errno = 0;
	if (step(label, pmem2_badblock_context_new(&bbctx, src)))
		return;
	/* A call that succeeds leaves errno as it was. */
	printf("%s_badblock_new_errno_kept %d\n", name, errno == 0);
	snprintf(label, sizeof(label), "%s_badblock_next", name);
	step(label, pmem2_badblock_next(bbctx, &bb));
	printf("%s_badblock_unchanged %d\n", name, bb.offset == 7 && bb.length == 7);
	bb = (struct pmem2_badblock){ 4096, 4096 };
	snprintf(label, sizeof(label), "%s_badblock_clear", name);
	if (step(label, pmem2_badblock_clear(bbctx, &bb)) == 0 &&
	    pread(fd, buf, sizeof(buf), 4096) == (ssize_t)sizeof(buf)) {
		size_t zeros = 0;

		for (size_t i = 0; i < sizeof(buf); i++)
			zeros += buf[i] == 0;
		printf("%s_badblock_cleared_zeros %zu\n", name, zeros);
	}
	bb.length = 0;
	snprintf(label, sizeof(label), "%s_badblock_clear_len0", name);
	step(label, pmem2_badblock_clear(bbctx, &bb));
	pmem2_badblock_context_delete(&bbctx);
	printf("%s_badblock_deleted_null %d\n", name, bbctx == NULL);
}

int main(int argc, char **argv)
{
	struct pmem2_source *src, *anon;
	char path[512];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/dev_interop", argv[1]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, FILE_SIZE)) {
		perror(path);
		return 2;
	}
	if (step("source_from_fd", pmem2_source_from_fd(&src, fd)) ||
	    step("source_from_anon", pmem2_source_from_anon(&anon, FILE_SIZE)))
		return 2;
	mcsafe(src, "file");
	mcsafe(anon, "anon");
	device(src, "file");
	device(anon, "anon");
	badblocks(src, fd, "file");
	badblocks(anon, -1, "anon");
	pmem2_source_delete(&src);
	pmem2_source_delete(&anon);
	close(fd);
	unlink(path);
	return 0;
}
