// SPDX-License-Identifier: MIT
/*
 * pmem2_verbose_probe.c - a program for check_pmem2_verbose.sh, linked
 * with the libpmem2 drop-in: it maps anonymous memory and copies into it
 * through the map's memcpy function, so ntmem makes its choice and
 * whatever NTMEM_VERBOSE makes the drop-in print is printed.
 */
#include <string.h>

#include <libpmem2.h>

int main(void)
{
	struct pmem2_config *cfg;
	struct pmem2_source *src;
	struct pmem2_map *map;
	char from[256], *p;
	int ok;

	memset(from, 1, sizeof(from));
	if (pmem2_source_from_anon(&src, 4096) || pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg,
						PMEM2_GRANULARITY_PAGE) ||
	    pmem2_map_new(&map, cfg, src))
		return 1;
	p = pmem2_map_get_address(map);
	pmem2_get_memcpy_fn(map)(p, from, sizeof(from), 0);
	ok = p[255] == 1;
	pmem2_map_delete(&map);
	pmem2_config_delete(&cfg);
	pmem2_source_delete(&src);
	return ok ? 0 : 1;
}
