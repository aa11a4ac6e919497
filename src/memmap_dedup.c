// SPDX-License-Identifier: MIT
/*
 * memmap_dedup.c - tail de-duplication, the kernel's vmemmap optimisation
 * for compound pages: the descriptors of a compound page's tails are all
 * identical, so every descriptor page that holds only tails is one shared
 * page mapped many times, read-only. Only the first descriptor page of each
 * compound page (the head and the first tails, which callers modify) is
 * memory of its own.
 *
 * The kernel does it in page tables; user space does it with a memfd:
 *
 *   memfd:  [ shared tail run: P-1 pages ][ head page 0 ][ head page 1 ] ...
 *   memmap: [ head 0 | run ][ head 1 | run ] ...   (P pages per compound)
 *
 * Two mappings per compound page, so a memmap needs 2 * compounds entries
 * of vm.max_map_count (65530 by default: 100 GiB of 2 MiB pages needs
 * 102400). The tails carry no section number: the optimisation exists only
 * with a virtually mapped memmap, which keeps it out of the page flags.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dispatch.h"
#include "error.h"
#include "memmap_internal.h"

/* Mappings this process already has, and the system's limit. */
static long maps_in_use(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	long n = 0;
	int c;

	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

static long max_map_count(void)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
	long v = 65530;	/* the kernel's default */

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = 65530;
		fclose(f);
	}
	return v;
}

int ntm_memmap_dedup_map(struct ntm_memmap *mm)
{
	size_t per_comp = ((size_t)mm->size << mm->order) / NTM_PAGE_SIZE;
	size_t comps = mm->total_pfns >> mm->order;
	size_t run = per_comp - 1, span = per_comp * NTM_PAGE_SIZE;
	long need = 2 * (long)comps, have = max_map_count() - maps_in_use();
	uint8_t *va;
	int fd, ret;

	/* Keep a margin for the rest of the process (libraries, threads). */
	if (need > have - 1024)
		return ntm_error(-ENOMEM, "dedup: %zu compound pages need %ld "
				 "mappings, vm.max_map_count leaves %ld; raise it "
				 "(sysctl vm.max_map_count=%ld)", comps, need, have,
				 need + max_map_count());
	fd = memfd_create("ntmem-memmap", MFD_CLOEXEC);
	if (fd < 0)
		return ntm_error(-errno, "dedup: memfd_create failed");
	if (ftruncate(fd, (off_t)((run + comps) * NTM_PAGE_SIZE))) {
		ret = ntm_error(-errno, "dedup: cannot size the memfd");
		goto out_close;
	}
	va = mmap(NULL, comps * span, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED) {
		ret = ntm_error(-ENOMEM, "dedup: no address space for %zu bytes",
				comps * span);
		goto out_close;
	}
	mm->dram = va;
	mm->dram_len = comps * span;
	for (size_t c = 0; c < comps; c++) {
		uint8_t *at = va + c * span;

		if (mmap(at, NTM_PAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd,
			 (off_t)((run + c) * NTM_PAGE_SIZE)) == MAP_FAILED ||
		    mmap(at + NTM_PAGE_SIZE, run * NTM_PAGE_SIZE, PROT_READ,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
			ret = ntm_error(-errno, "dedup: cannot map compound page %zu",
					c);
			goto out_unmap;
		}
	}
	/* A writable view of the shared run, for ntm_memmap_init() only. */
	mm->tail_run = mmap(NULL, run * NTM_PAGE_SIZE, PROT_READ | PROT_WRITE,
			    MAP_SHARED, fd, 0);
	if (mm->tail_run == MAP_FAILED) {
		mm->tail_run = NULL;
		ret = ntm_error(-errno, "dedup: cannot map the tail run");
		goto out_unmap;
	}
	mm->tail_run_len = run * NTM_PAGE_SIZE;
	mm->memfd = fd;
	mm->descs = va;
	return 0;

out_unmap:
	munmap(va, comps * span);
	mm->dram = NULL;
out_close:
	close(fd);
	return ret;
}

void ntm_memmap_dedup_unmap(struct ntm_memmap *mm)
{
	if (mm->tail_run)
		munmap(mm->tail_run, mm->tail_run_len);
	if (mm->memfd >= 0)
		close(mm->memfd);
	mm->tail_run = NULL;
	mm->memfd = -1;
}

void ntm_memmap_dedup_init_run(const struct ntm_memmap *mm)
{
	struct ntm_page96 head, tail;
	uint8_t *d = mm->tail_run;

	ntm_memmap_templates(mm, 0, &head, &tail);
	for (size_t off = 0; off < mm->tail_run_len; off += 64)
		ntm_memcpy_nt(d + off, &tail, 64);
}

size_t ntm_memmap_dedup_bytes(const struct ntm_memmap *mm)
{
	struct stat st;

	/* What the memfd really holds: pages are allocated when written. */
	if (fstat(mm->memfd, &st) == 0)
		return (size_t)st.st_blocks * 512;
	return mm->tail_run_len + (mm->total_pfns >> mm->order) * NTM_PAGE_SIZE;
}
