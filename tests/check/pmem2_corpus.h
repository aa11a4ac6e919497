/* SPDX-License-Identifier: MIT */
/*
 * pmem2_corpus.h - what the libpmem2 programs of the checker's corpus
 * share: corpus.h's 1 MiB file (DIR/<program name>.pmem, filled durably
 * with CORPUS_FILL), mapped shared through libpmem2 with the weakest
 * granularity required (PAGE), so the map has whatever the file gives:
 * check_corpus.sh sets PMEM2_FORCE_GRANULARITY to pick the path under
 * test (CACHE_LINE: write-backs and fences; PAGE: msync()). On a Device
 * DAX (corpus_path()) the map is its first CORPUS_LEN bytes, zeroed first
 * as a new file is.
 */
#ifndef PMEM2_CORPUS_H
#define PMEM2_CORPUS_H

#include <fcntl.h>
#include <libpmem2.h>
#include <unistd.h>

#include "corpus.h"
#include "mutable.h"

struct corpus2 {
	int fd;
	struct pmem2_source *src;
	struct pmem2_map *map;
	char *base;
	pmem2_persist_fn persist;
	pmem2_memcpy_fn memcpy;
};

static inline void corpus2_fail(const char *what)
{
	fprintf(stderr, "%s: %s\n", what, pmem2_errormsg());
	exit(1);
}

static inline void corpus2_map(struct corpus2 *c, int argc, char **argv)
{
	struct pmem2_config *cfg;
	char path[4096];

	corpus_path(path, sizeof(path), argc, argv);
	bool device = corpus_device(path, argv);

	c->fd = device ? open(path, O_RDWR) :
			 open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (c->fd < 0 || (!device && ftruncate(c->fd, (off_t)CORPUS_LEN))) {
		perror(path);
		exit(1);
	}
	if (pmem2_source_from_fd(&c->src, c->fd))
		corpus2_fail("pmem2_source_from_fd");
	if (pmem2_config_new(&cfg) ||
	    pmem2_config_set_required_store_granularity(cfg,
						PMEM2_GRANULARITY_PAGE) ||
	    pmem2_config_set_length(cfg, CORPUS_LEN))
		corpus2_fail("pmem2_config");
	if (pmem2_map_new(&c->map, cfg, c->src))
		corpus2_fail(path);
	pmem2_config_delete(&cfg);
	c->base = pmem2_map_get_address(c->map);
	c->persist = pmem2_get_persist_fn(c->map);
	c->memcpy = pmem2_get_memcpy_fn(c->map);
	/* The last run's bytes back to zero (corpus_device_reset()'s why),
	 * durable at once as every pmem2 memset without flags is. */
	if (device)
		pmem2_get_memset_fn(c->map)(c->base, 0, CORPUS_LEN, 0);
	pmem2_get_memset_fn(c->map)(c->base, CORPUS_FILL, CORPUS_LEN, 0);
}

static inline void corpus2_unmap(struct corpus2 *c)
{
	if (pmem2_map_delete(&c->map) || pmem2_source_delete(&c->src))
		corpus2_fail("pmem2_map_delete");
	close(c->fd);
}

#endif /* PMEM2_CORPUS_H */
