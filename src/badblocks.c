// SPDX-License-Identifier: MIT
/*
 * badblocks.c - the bad-sector list as a value, its strict parser, and
 * its file kept with write-temporary, fsync, rename, fsync-directory.
 * See badblocks.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "badblocks.h"
#include "error.h"

/*
 * A list file this large is not one ntmem wrote: 64 MiB is over two
 * million ranges, far more than any device reports.
 */
#define BB_FILE_MAX (64u << 20)

void ntm_bb_free(struct ntm_bb_list *list)
{
	free(list->v);
	list->v = NULL;
	list->n = 0;
}

bool ntm_bb_overlaps(const struct ntm_bb_list *list, uint64_t sector,
		     uint64_t count)
{
	const struct ntm_badblock *v = list->v;

	/* Sorted and disjoint: stop at the first range that starts after. */
	for (size_t i = 0; i < list->n && v[i].sector < sector + count; i++)
		if (v[i].sector + v[i].count > sector)
			return true;
	return false;
}

int ntm_bb_change(const struct ntm_bb_list *in, uint64_t s, uint64_t n,
		  bool add, struct ntm_bb_list *out)
{
	/* Adding merges ranges; removing splits at most one into two. */
	struct ntm_badblock *v = malloc((in->n + 1) * sizeof(*v));
	size_t k = 0, i = 0;

	if (!v)
		return -ENOMEM;
	if (add) {
		/* Ranges wholly before [s, s+n), not even touching it. */
		for (; i < in->n && in->v[i].sector + in->v[i].count < s; i++)
			v[k++] = in->v[i];
		/* Merge every range that overlaps or touches [s, s+n). */
		for (; i < in->n && in->v[i].sector <= s + n; i++) {
			uint64_t end = in->v[i].sector + in->v[i].count;

			if (end > s + n)
				n = end - s;
			if (in->v[i].sector < s)
				n += s - in->v[i].sector, s = in->v[i].sector;
		}
		v[k++] = (struct ntm_badblock){ s, n };
		for (; i < in->n; i++)
			v[k++] = in->v[i];
	} else {
		for (; i < in->n; i++) {
			uint64_t bs = in->v[i].sector, be = bs + in->v[i].count;

			if (be <= s || bs >= s + n) {
				v[k++] = in->v[i];
				continue;
			}
			if (bs < s)	/* the part before the cleared range */
				v[k++] = (struct ntm_badblock){ bs, s - bs };
			if (be > s + n)	/* the part after it */
				v[k++] = (struct ntm_badblock){ s + n, be - (s + n) };
		}
	}
	out->v = v;
	out->n = k;
	return 0;
}

int ntm_bb_list_add(void *arg, uint64_t sector, uint64_t count)
{
	struct ntm_bb_list *list = arg, next;
	int ret = ntm_bb_change(list, sector, count, true, &next);

	if (ret == 0) {
		ntm_bb_free(list);
		*list = next;
	}
	return ret;
}

/* One decimal number, digits only; advances *@p. False on overflow. */
static bool parse_u64(const char **p, const char *end, uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;

	if (q == end || *q < '0' || *q > '9')
		return false;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		if (v > (UINT64_MAX - (uint64_t)(*q - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*q - '0');
	}
	*p = q;
	*out = v;
	return true;
}

int ntm_bb_parse(const char *text, size_t len, uint64_t nsectors,
		 struct ntm_bb_list *out, size_t *bad_line)
{
	struct ntm_bb_list list = { 0, NULL };
	const char *p = text, *end = text + len;
	size_t line = 0;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		struct ntm_bb_list next;
		uint64_t s, n;

		if (!eol)
			eol = end;	/* the last line may lack its newline */
		line++;
		/* Exactly: digits, one space, digits, end of line. */
		if (!parse_u64(&p, eol, &s) || p == eol || *p++ != ' ' ||
		    !parse_u64(&p, eol, &n) || p != eol || n == 0 ||
		    n > UINT64_MAX - s) {
			ntm_bb_free(&list);
			*bad_line = line;
			return -EINVAL;
		}
		p = eol + 1;
		/* A list written for a larger device: keep what is ours. */
		if (s >= nsectors)
			continue;
		if (n > nsectors - s)
			n = nsectors - s;
		if (ntm_bb_change(&list, s, n, true, &next)) {
			ntm_bb_free(&list);
			return -ENOMEM;
		}
		ntm_bb_free(&list);
		list = next;
	}
	*out = list;
	return 0;
}

/* Read all of regular file @fd (at most BB_FILE_MAX bytes) into *@buf. */
static int read_all(int fd, const char *path, char **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *b;

	if (fstat(fd, &st))
		return ntm_error(-errno, "badblocks '%s': cannot stat", path);
	if (S_ISDIR(st.st_mode))
		return ntm_error(-EISDIR, "badblocks '%s': a directory", path);
	if (!S_ISREG(st.st_mode))
		return ntm_error(-EINVAL, "badblocks '%s': not a regular file",
				 path);
	if (st.st_size > BB_FILE_MAX)
		return ntm_error(-EFBIG, "badblocks '%s': %lld bytes, more than "
				 "a list can be (%u)", path,
				 (long long)st.st_size, BB_FILE_MAX);
	b = malloc((size_t)st.st_size + 1);
	if (!b)
		return ntm_error(-ENOMEM, "badblocks '%s': no memory", path);
	/* Stop at the size seen by fstat: a file growing under us is cut. */
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, b + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			free(b);
			return ntm_error(err, "badblocks '%s': cannot read", path);
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	*buf = b;
	*len = got;
	return 0;
}

int ntm_bb_load(const char *path, uint64_t nsectors, struct ntm_bb_list *out)
{
	/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	size_t len = 0, line = 0;
	char *text = NULL;
	int ret;

	if (fd < 0) {
		if (errno == ENOENT) {
			*out = (struct ntm_bb_list){ 0, NULL };
			return 0;
		}
		return ntm_error(-errno, "badblocks '%s': cannot open", path);
	}
	ret = read_all(fd, path, &text, &len);
	close(fd);
	if (ret)
		return ret;
	ret = ntm_bb_parse(text, len, nsectors, out, &line);
	free(text);
	if (ret == -EINVAL)
		return ntm_error(ret, "badblocks '%s': line %zu is not "
				 "\"sector count\"", path, line);
	if (ret)
		return ntm_error(ret, "badblocks '%s': no memory", path);
	return 0;
}

/* write() all of @buf, retrying short writes; 0 or -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w, len -= (size_t)w;
	}
	return 0;
}

static int write_list(int fd, const struct ntm_bb_list *list)
{
	char buf[8192];
	size_t used = 0;
	int ret;

	for (size_t i = 0; i < list->n; i++) {
		/* Two 20-digit numbers, a space and a newline always fit. */
		if (sizeof(buf) - used < 64) {
			ret = write_all(fd, buf, used);
			if (ret)
				return ret;
			used = 0;
		}
		used += (size_t)snprintf(buf + used, sizeof(buf) - used,
					 "%llu %llu\n",
					 (unsigned long long)list->v[i].sector,
					 (unsigned long long)list->v[i].count);
	}
	return write_all(fd, buf, used);
}

/* fsync the directory holding @path, so a rename in it is durable. */
static int fsync_dir_of(const char *path)
{
	char copy[PATH_MAX];
	int fd, ret = 0;

	snprintf(copy, sizeof(copy), "%s", path);
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fsync(fd))
		ret = -errno;
	close(fd);
	return ret;
}

int ntm_bb_save(const char *path, const struct ntm_bb_list *list)
{
	char tmp[PATH_MAX], old[PATH_MAX];
	bool had_old;
	int fd, ret;

	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= (int)sizeof(tmp) ||
	    snprintf(old, sizeof(old), "%s.old", path) >= (int)sizeof(old))
		return ntm_error(-ENAMETOOLONG, "badblocks '%s': path too long",
				 path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return ntm_error(-errno, "badblocks '%s': cannot create a "
				 "temporary file beside it", path);
	ret = write_list(fd, list);
	if (ret) {
		ret = ntm_error(ret, "badblocks '%s': cannot write", tmp);
		goto out_tmp;
	}
	/* The data must be on the medium before the name points at it. */
	if (fsync(fd)) {
		ret = ntm_error(-errno, "badblocks '%s': cannot fsync", tmp);
		goto out_tmp;
	}
	/*
	 * Keep the old list under a second name, so that a failed directory
	 * fsync below can put it back: then the call changed nothing.
	 */
	unlink(old);
	had_old = link(path, old) == 0;
	if (rename(tmp, path)) {
		ret = ntm_error(-errno, "badblocks '%s': cannot rename %s over it",
				path, tmp);
		goto out_old;
	}
	close(fd);
	/* The rename itself is durable only once the directory is. */
	ret = fsync_dir_of(path);
	if (ret) {
		if (had_old)
			rename(old, path);
		else
			unlink(path);
		return ntm_error(ret, "badblocks '%s': cannot fsync its "
				 "directory", path);
	}
	if (had_old)
		unlink(old);
	return 0;

out_old:
	if (had_old)
		unlink(old);
out_tmp:
	close(fd);
	unlink(tmp);
	return ret;
}

/*
 * Hold the list file at @path locked against every other change, in any
 * process (flock: released when *@fd is closed, or when the process
 * dies). A change replaces the file by rename, so the lock is taken on
 * the file the path names and checked to still be it once held; a
 * changer that waited on a file renamed away meanwhile locks the new
 * one. A missing file is made empty (the same list), *@made set so a
 * failed change can take it away again. 0 or -errno with the message set.
 */
static int lock_list(const char *path, int *fd, bool *made)
{
	for (;;) {
		struct stat held, named;
		int f;

		*made = false;
		/* O_NONBLOCK: opening a FIFO must not wait for a writer. */
		f = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (f < 0 && errno == ENOENT) {
			f = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC |
				 O_NOCTTY, 0600);
			*made = f >= 0;
			if (f < 0 && errno == EEXIST)
				continue;	/* made by another changer */
		}
		if (f < 0)
			return ntm_error(-errno, "badblocks '%s': cannot open",
					 path);
		if (fstat(f, &held)) {
			int err = -errno;

			close(f);
			return ntm_error(err, "badblocks '%s': cannot stat", path);
		}
		if (!S_ISREG(held.st_mode)) {
			close(f);
			return ntm_error(S_ISDIR(held.st_mode) ? -EISDIR : -EINVAL,
					 "badblocks '%s': not a regular file",
					 path);
		}
		while (flock(f, LOCK_EX) && errno == EINTR)
			;
		if (stat(path, &named) == 0 && named.st_dev == held.st_dev &&
		    named.st_ino == held.st_ino) {
			*fd = f;
			return 0;
		}
		/* Replaced (or removed) while we waited: lock what is there. */
		close(f);
	}
}

int ntm_bb_update(const char *path, uint64_t nsectors, uint64_t sector,
		  uint64_t count, bool add, struct ntm_bb_list *out)
{
	struct ntm_bb_list cur;
	bool made;
	int fd, ret;

	ret = lock_list(path, &fd, &made);
	if (ret)
		return ret;
	/* What the file holds now: other processes' changes included. */
	ret = ntm_bb_load(path, nsectors, &cur);
	if (ret)
		goto out;
	ret = ntm_bb_change(&cur, sector, count, add, out);
	ntm_bb_free(&cur);
	if (ret) {
		ret = ntm_error(ret, "badblocks: no memory");
		goto out;
	}
	ret = ntm_bb_save(path, out);
	if (ret)
		ntm_bb_free(out);
out:
	/* A failed change leaves no file where there was none. */
	if (ret && made)
		unlink(path);
	close(fd);
	return ret;
}
