// SPDX-License-Identifier: MIT
/*
 * verbose_probe.c - a program for check_verbose.sh, built three times:
 * against libntmem, against the libpmem drop-in (-DPROBE_PMEM) and
 * against the libpmemblk drop-in (-DPROBE_PMEMBLK). Each makes ntmem
 * choose its variant (a copy, or a pool's first writes), so whatever
 * NTMEM_VERBOSE makes the library or the drop-in print is printed.
 */
#include <stdio.h>
#include <string.h>

#if defined(PROBE_PMEM)
#include <libpmem.h>

int main(void)
{
	char src[256], dst[256];

	memset(src, 1, sizeof(src));
	pmem_memcpy_persist(dst, src, sizeof(src));
	return dst[255] == 1 ? 0 : 1;
}
#elif defined(PROBE_PMEMBLK)
#include <libpmemblk.h>

int main(int argc, char **argv)
{
	PMEMblkpool *pbp;

	if (argc != 2)
		return 2;
	pbp = pmemblk_create(argv[1], 512, PMEMBLK_MIN_POOL, 0600);
	if (!pbp) {
		fprintf(stderr, "pmemblk_create: %s\n", pmemblk_errormsg());
		return 1;
	}
	pmemblk_close(pbp);
	return 0;
}
#else
#include <ntmem.h>
#include <ntmem/embed.h>

int main(void)
{
	char src[256], dst[256];

	/* Asked before the choice, then the choice: both by the one rule. */
	printf("verbose %d\n", ntm_verbose());
	memset(src, 1, sizeof(src));
	ntm_memcpy_flush(dst, src, sizeof(src));
	printf("verbose %d\n", ntm_verbose());
	return dst[255] == 1 ? 0 : 1;
}
#endif
