// SPDX-License-Identifier: MIT
/*
 * pmem_probe.c - a program written against PMDK's own libpmem.h and built
 * against Debian's libpmem-dev, as any PMDK user's program is, for the
 * checks inside a kernel guest (tests/kernel/stage.sh). The same binary
 * runs on Debian's libpmem.so.1 or, with LD_LIBRARY_PATH naming its
 * directory, on ntmem's drop-in (compat/libpmem): which one answered is
 * printed (dladdr), so a check cannot pass on the wrong library.
 *
 *   kernel_pmem_probe PATH   pmem_map_file() of an existing file or devdax
 *                            device (its whole length), one line:
 *                            is_pmem=N pmem_is_pmem=N auto_flush=N len=N
 *                            lib=FILE (auto_flush: pmem_has_auto_flush())
 *
 * A write of the first cache line, persisted with pmem_persist() where
 * is_pmem says so and pmem_msync() otherwise, shows the mapping works.
 * Exit status 0, or 1 with pmem_errormsg() on standard error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <libpmem.h>

int main(int argc, char **argv)
{
	static const char line[64] = "kernel_pmem_probe";
	size_t len = 0;
	int is_pmem = -1, again;
	Dl_info where;
	char *p;

	if (argc != 2) {
		fprintf(stderr, "usage: kernel_pmem_probe PATH\n");
		return 2;
	}
	p = pmem_map_file(argv[1], 0, 0, 0, &len, &is_pmem);
	if (!p) {
		fprintf(stderr, "kernel_pmem_probe: pmem_map_file %s: %s\n", argv[1],
			pmem_errormsg());
		return 1;
	}
	memcpy(p, line, sizeof(line));
	if (is_pmem)
		pmem_persist(p, sizeof(line));
	else if (pmem_msync(p, sizeof(line))) {
		fprintf(stderr, "kernel_pmem_probe: pmem_msync: %s\n", pmem_errormsg());
		return 1;
	}
	again = pmem_is_pmem(p, len);
	if (!dladdr((void *)pmem_map_file, &where) || !where.dli_fname)
		where.dli_fname = "unknown";
	printf("is_pmem=%d pmem_is_pmem=%d auto_flush=%d len=%zu lib=%s\n", is_pmem,
	       again, pmem_has_auto_flush(), len, where.dli_fname);
	if (pmem_unmap(p, len)) {
		fprintf(stderr, "kernel_pmem_probe: pmem_unmap: %s\n", pmem_errormsg());
		return 1;
	}
	return 0;
}
