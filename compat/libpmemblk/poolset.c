// SPDX-License-Identifier: MIT
/*
 * poolset.c - PMDK 1.12.1's local pool sets (poolset(5)): a text file
 * naming the part files of one pool, parsed as PMDK parses it, and the
 * parts mapped as one contiguous range, as PMDK maps them.
 *
 *   PMEMPOOLSET              the first line, exactly
 *   # comment                anywhere after a '#'; blank lines are skipped
 *   SIZE /absolute/path      one line per part, in order; SIZE a number
 *                            with an optional B, K, M, G, T, P (powers of
 *                            1024), KiB ... PiB, or kB ... PB (of 1000)
 *   REPLICA, OPTION ...      refused (replicas are not libpmemblk's; see
 *                            ntmem-libpmemblk(7) for the options)
 *
 * Every part file starts with its own 4096-byte pool header; the pool is
 * part 0 whole, then every other part without its header page, each part
 * in whole pages: what the BTT sees is one range of
 *   sum(pages of part i) - (nparts - 1) * 4096
 * bytes. The headers share the pool set UUID, each part has its own UUID
 * and names the previous and next part's (a ring), and the replica links
 * name part 0's.
 *
 * Each part is locked (flock) before it is mapped, and its descriptor is
 * closed once it is: on Linux a lock belongs to the open file, which the
 * mapping holds, so the lock lasts until the pool is unmapped, as PMDK
 * relies on too. No descriptor is kept per part.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ntmem.h>

#include "blk.h"
#include "include/libpmemblk.h"

void blk_set_free(struct blk_set *set)
{
	if (!set)
		return;
	for (unsigned i = 0; i < set->nparts; i++)
		free(set->part[i].path);
	free(set->part);
	free(set->path);
	free(set);
}

/* PMDK's sizes: a number and an optional unit, exactly one of these. */
static int parse_size(const char *s, size_t *out)
{
	static const struct {
		const char *unit;
		unsigned long long mul;
	} units[] = {
		{ "B", 1 }, { "K", 1ull << 10 }, { "M", 1ull << 20 },
		{ "G", 1ull << 30 }, { "T", 1ull << 40 }, { "P", 1ull << 50 },
		{ "KiB", 1ull << 10 }, { "MiB", 1ull << 20 },
		{ "GiB", 1ull << 30 }, { "TiB", 1ull << 40 },
		{ "PiB", 1ull << 50 }, { "kB", 1000ull }, { "MB", 1000000ull },
		{ "GB", 1000000000ull }, { "TB", 1000000000000ull },
		{ "PB", 1000000000000000ull },
	};
	unsigned long long n;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -1;
	if (*end) {
		size_t i;

		for (i = 0; i < sizeof(units) / sizeof(*units); i++)
			if (!strcmp(end, units[i].unit))
				break;
		if (i == sizeof(units) / sizeof(*units) ||
		    n > SIZE_MAX / units[i].mul)
			return -1;
		n *= units[i].mul;
	}
	if (n == 0)
		return -1;
	*out = (size_t)n;
	return 0;
}

static int add_part(struct blk_set *set, const char *path, size_t size)
{
	struct blk_part *p = realloc(set->part,
				     (set->nparts + 1) * sizeof(*p));

	if (!p)
		return -1;
	set->part = p;
	memset(&p[set->nparts], 0, sizeof(*p));
	p[set->nparts].fd = -1;
	p[set->nparts].path = strdup(path);
	if (!p[set->nparts].path)
		return -1;
	p[set->nparts++].size = size;
	return 0;
}

/* One line after the first: 0 parsed, else the reason (EINVAL). */
static const char *parse_line(struct blk_set *set, char *line, int *err)
{
	char *save = NULL, *size_s, *path, *rest;
	size_t size;

	*err = EINVAL;
	if (!strncmp(line, "OPTION", 6)) {
		char *opt = strtok_r(line + 6, " \t", &save);

		if (!opt)
			return "missing option name";
		for (; opt; opt = strtok_r(NULL, " \t", &save)) {
			if (!strcmp(opt, "NOHDRS"))
				return "the NOHDRS poolset option is not "
				       "supported for local poolsets";
			if (strcmp(opt, "SINGLEHDR"))
				return "unknown option";
			*err = ENOTSUP;
			return "OPTION SINGLEHDR is not supported by ntmem's "
			       "libpmemblk";
		}
	}
	if (!strncmp(line, "REPLICA", 7)) {
		if (line[7] && !isblank((unsigned char)line[7]))
			return "exactly 'REPLICA' expected";
		*err = ENOTSUP;
		return "replication not supported";
	}
	size_s = strtok_r(line, " \t", &save);
	path = strtok_r(NULL, " \t", &save);
	rest = strtok_r(NULL, " \t", &save);
	if (!size_s || !path || rest)
		return "invalid token found in the current line";
	if (path[0] != '/')
		return "incorrect path (must be an absolute one)";
	if (!strcmp(size_s, "AUTO"))
		return "cannot determine size of a part";
	if (parse_size(size_s, &size))
		return "incorrect format of size";
	if (add_part(set, path, size)) {
		*err = ENOMEM;
		return "allocating memory failed";
	}
	return NULL;
}

int blk_set_parse(const char *path, int fd, struct blk_set **out)
{
	struct blk_set *set = calloc(1, sizeof(*set));
	const char *why = NULL;
	char *line = NULL;
	size_t cap = 0;
	unsigned lineno = 0;
	int dfd = dup(fd), err = EINVAL;
	FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;

	if (set)
		set->path = strdup(path);
	if (!set || !set->path || !f) {
		blk_error(errno, "cannot read the pool set file %s: %s", path,
			  strerror(errno));
		if (f)
			fclose(f);
		else if (dfd >= 0)
			close(dfd);
		blk_set_free(set);
		return -1;
	}
	rewind(f);
	lineno++;
	if (getline(&line, &cap, f) < 0 || strcmp(line, "PMEMPOOLSET\n"))
		why = "the first line must be exactly 'PMEMPOOLSET'";
	while (!why) {
		char *cp;

		lineno++;
		if (getline(&line, &cap, f) < 0) {
			if (!set->nparts)
				why = "no pool set parts";
			break;
		}
		/* PMDK's rules: a line that starts with '#' or is empty. */
		cp = strchr(line, '\n');
		if (cp)
			*cp = '\0';
		if (cp != line && (cp = strchr(line, '#')))
			*cp = '\0';
		if (cp == line)
			continue;
		why = parse_line(set, line, &err);
	}
	free(line);
	fclose(f);
	if (why) {
		/* PMDK's form: the file, then the reason and the line. */
		blk_error(err, "%s [%s:%u]", path, why, lineno);
		blk_set_free(set);
		return -1;
	}
	*out = set;
	return 0;
}

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* What part @i adds to the pool: its whole pages, less its header's. */
static size_t part_span(const struct blk_set *set, unsigned i)
{
	size_t pages = set->part[i].size / page_size() * page_size();

	return i ? pages - BLK_HDR_SIZE : pages;
}

size_t blk_set_size(const struct blk_set *set)
{
	size_t n = 0;

	for (unsigned i = 0; i < set->nparts; i++)
		n += part_span(set, i);
	return n;
}

/*
 * Open and lock every part (@create: making those that do not exist, of
 * their size, allocated, with @mode), check their sizes. 0, or -1 with
 * errno and the message, every descriptor closed and every file this call
 * made removed.
 */
static int parts_open(struct blk_set *set, bool create, bool rdonly,
		      mode_t mode)
{
	for (unsigned i = 0; i < set->nparts; i++) {
		set->part[i].fd = -1;
		set->part[i].made = false;
	}
	for (unsigned i = 0; i < set->nparts; i++) {
		struct blk_part *p = &set->part[i];
		struct stat st;
		int err;

		if (create) {
			p->fd = open(p->path, O_RDWR | O_CREAT | O_EXCL |
				     O_CLOEXEC, mode);
			p->made = p->fd >= 0;
		}
		if (p->fd < 0)
			p->fd = open(p->path, (rdonly ? O_RDONLY : O_RDWR) |
				     O_CLOEXEC);
		if (p->fd < 0) {
			blk_error(errno, "open \"%s\": %s", p->path,
				  strerror(errno));
			goto fail;
		}
		if (flock(p->fd, LOCK_EX | LOCK_NB)) {
			blk_error(errno, "flock \"%s\": %s", p->path,
				  strerror(errno));
			goto fail;
		}
		if (p->made) {
			/* As PMDK: a part it creates is always allocated. */
			err = posix_fallocate(p->fd, 0, (off_t)p->size);
			if (!err && fchmod(p->fd, mode))
				err = errno;
			if (err) {
				blk_error(err, "cannot allocate %zu bytes for "
					  "\"%s\": %s", p->size, p->path,
					  strerror(err));
				goto fail;
			}
		}
		if (fstat(p->fd, &st)) {
			blk_error(errno, "stat \"%s\": %s", p->path,
				  strerror(errno));
			goto fail;
		}
		if (!S_ISREG(st.st_mode) || (size_t)st.st_size != p->size) {
			blk_error(EINVAL, "file size does not match config: "
				  "%s, %zu != %zu", p->path,
				  (size_t)st.st_size, p->size);
			goto fail;
		}
	}
	return 0;
fail:
	blk_set_close_parts(set, true);
	return -1;
}

void blk_set_close_parts(struct blk_set *set, bool failed)
{
	int oerrno = errno;

	for (unsigned i = 0; i < set->nparts; i++) {
		struct blk_part *p = &set->part[i];

		if (p->fd >= 0)
			close(p->fd);
		p->fd = -1;
		if (failed && p->made)
			unlink(p->path);
		p->made = false;
	}
	errno = oerrno;
}

/* Map every part at its place in one reserved range. */
static int parts_map(struct pmemblk *pbp, const struct blk_set *set,
		     bool rdonly)
{
	size_t size = blk_set_size(set), off = 0;
	int prot = PROT_READ | (rdonly ? 0 : PROT_WRITE);
	unsigned char *base;
	bool sync = true;

	base = mmap(NULL, size, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		blk_error(errno, "%s: cannot reserve %zu bytes: %s", set->path,
			  size, strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < set->nparts; i++) {
		size_t len = part_span(set, i);
		off_t from = i ? BLK_HDR_SIZE : 0;
		void *at = base + off, *got;

		/* MAP_SYNC where the file is DAX: then flush + drain. */
		got = mmap(at, len, prot, MAP_SHARED_VALIDATE | MAP_SYNC |
			   MAP_FIXED, set->part[i].fd, from);
		if (got == MAP_FAILED) {
			sync = false;
			got = mmap(at, len, prot, MAP_SHARED | MAP_FIXED,
				   set->part[i].fd, from);
		}
		if (got == MAP_FAILED) {
			int err = errno;

			munmap(base, size);
			blk_error(err, "mmap \"%s\": %s", set->part[i].path,
				  strerror(err));
			return -1;
		}
		off += len;
	}
	pbp->base = base;
	pbp->size = size;
	pbp->set_mapped = true;
	pbp->is_pmem = sync;
	return 0;
}

struct pmemblk *blk_set_map(struct blk_set *set, bool create, bool rdonly,
			    mode_t mode)
{
	struct pmemblk *pbp;

	/* PMDK's size checks come before any file is touched. */
	for (unsigned i = 0; i < set->nparts; i++) {
		if (set->part[i].size < PMEMBLK_MIN_PART) {
			blk_error(EINVAL, "size %zu smaller than %zu",
				  set->part[i].size, PMEMBLK_MIN_PART);
			return NULL;
		}
	}
	if (create && blk_set_size(set) < PMEMBLK_MIN_POOL) {
		blk_error(EINVAL, "reservation pool size %zu smaller than %zu",
			  blk_set_size(set), PMEMBLK_MIN_POOL);
		return NULL;
	}
	pbp = blk_malloc(sizeof(*pbp));
	if (!pbp) {
		blk_error(ENOMEM, "cannot allocate the pool handle");
		return NULL;
	}
	memset(pbp, 0, sizeof(*pbp));
	pbp->rdonly = rdonly;
	if (parts_open(set, create, rdonly, mode))
		goto fail;
	if (parts_map(pbp, set, rdonly)) {
		blk_set_close_parts(set, true);
		goto fail;
	}
	return pbp;
fail:
	blk_free(pbp);
	return NULL;
}

int blk_set_persist(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page_size() - 1);

	/*
	 * The fence first: the BTT's non-temporal stores and write-backs
	 * are weakly ordered, and msync() must find them in memory, not in
	 * the CPU's write-combining buffers (ntm_ns_persist() orders a
	 * single-file pool's the same way). Then one msync over the range:
	 * the kernel writes back each part's pages it spans, every mapping
	 * in it being a part's.
	 */
	ntm_drain();
	if (msync((void *)a, (uintptr_t)p + n - a, MS_SYNC))
		return -errno;
	return 0;
}
