// SPDX-License-Identifier: MIT
/*
 * bench_blk_open.c - `ntmem bench blk --open`: the cost of a libpmemblk
 * pool before and at its first I/O, by pool size (1, 32 and 512 GiB unless
 * --sizes), for ntmem's libpmemblk.so.1 drop-in and PMDK's (Debian's
 * libpmemblk1), both loaded into this process and called through the same
 * pmemblk_* functions:
 *
 *   create      pmemblk_create() + pmemblk_close() of a new pool file
 *   open        pmemblk_open()
 *   first write pmemblk_write() of block 0 (a new pool's BTT is laid out
 *               there, in both libraries)
 *   close       pmemblk_close()
 *   reopen      pmemblk_open() of the pool that now has a BTT
 *   first read  pmemblk_read() of block 0 (ntmem scans the arena's map at
 *               its first access)
 *
 * and what the file holds after the create and at the end: allocated
 * (st_blocks) and written (FIEMAP extents that are not unwritten, after a
 * sync). Both libraries posix_fallocate() a new pool whole, so allocation
 * is the pool's size; what differs is what is written.
 *
 * The sizes are what a disk holds, not memory: a --dir on a tmpfs or
 * ramfs is refused. One pool exists at a time, removed after its row.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <ntmem.h>

#include "bench.h"
#include "bench_blk_open.h"
#include "parse.h"
#include "peer_pmdk.h"	/* peer_dropin_path() */
#include "peer_pmemblk.h"
#include "report.h"

#define CMD "bench blk"

#ifndef NTMEM_CHECK_LIBDIR_DEFAULT
#error "NTMEM_CHECK_LIBDIR_DEFAULT: the installed checking library's directory (tools/meson.build)"
#endif

enum lib { L_NTMEM, L_PMDK, NLIB };
static const char *const lib_names[NLIB] = { "ntmem", "pmdk" };

/* What one pool's life measures: times in ms, then sizes in KiB. */
enum measure { M_CREATE, M_OPEN, M_WRITE, M_CLOSE, M_REOPEN, M_READ,
	       M_ALLOC_CREATE, M_WRITTEN_CREATE, M_ALLOC_END, M_WRITTEN_END,
	       NMEASURE };
#define NTIMES (M_READ + 1)

static const struct report_col columns[] = {
	{ "pool", COL_STR, 0 },		{ "impl", COL_STR, 0 },
	{ "create_ms", COL_REAL, 3 },	{ "open_ms", COL_REAL, 3 },
	{ "first_write_ms", COL_REAL, 3 }, { "close_ms", COL_REAL, 3 },
	{ "reopen_ms", COL_REAL, 3 },	{ "first_read_ms", COL_REAL, 3 },
	/* KiB with one digit: exact for any multiple of 512 bytes */
	{ "alloc_create_kib", COL_REAL, 1 },
	{ "written_create_kib", COL_REAL, 1 },
	{ "alloc_kib", COL_REAL, 1 },	{ "written_kib", COL_REAL, 1 },
};
#define NCOLS ((int)(sizeof(columns) / sizeof(columns[0])))

static double ms_since(uint64_t t0)
{
	return (double)(bench_now_ns() - t0) / 1e6;
}

/*
 * KiB of @path allocated (st_blocks) and written: the extents FIEMAP
 * reports that are not unwritten (fallocate()d, never written), after
 * FIEMAP_FLAG_SYNC has written the page cache back. Written is NaN where
 * the file system has no FIEMAP. 0 or -errno.
 */
static int file_kib(const char *path, double *alloc, double *written)
{
	enum { BATCH = 64 };
	struct {
		struct fiemap map;
		struct fiemap_extent ext[BATCH];
	} fm;
	uint64_t start = 0, bytes = 0;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool last = false;

	if (fd < 0 || fstat(fd, &st)) {
		int err = -errno;

		if (fd >= 0)
			close(fd);
		return err;
	}
	*alloc = (double)st.st_blocks * 512 / 1024;
	while (!last) {
		memset(&fm, 0, sizeof(fm));
		fm.map.fm_start = start;
		fm.map.fm_length = FIEMAP_MAX_OFFSET - start;
		fm.map.fm_flags = FIEMAP_FLAG_SYNC;
		fm.map.fm_extent_count = BATCH;
		if (ioctl(fd, FS_IOC_FIEMAP, &fm.map)) {
			bytes = UINT64_MAX;
			break;
		}
		if (!fm.map.fm_mapped_extents)
			break;
		for (unsigned i = 0; i < fm.map.fm_mapped_extents; i++) {
			const struct fiemap_extent *e = &fm.ext[i];

			if (!(e->fe_flags & FIEMAP_EXTENT_UNWRITTEN))
				bytes += e->fe_length;
			start = e->fe_logical + e->fe_length;
			last = e->fe_flags & FIEMAP_EXTENT_LAST;
		}
	}
	close(fd);
	*written = bytes == UINT64_MAX ? NAN : (double)bytes / 1024;
	return 0;
}

/*
 * One pool's life through @lib, every figure into @m. The pool is removed
 * whatever happens. 0, or -1 after a message naming the failed call.
 */
static int one_pool(struct peer_pmemblk *lib, const char *name,
		    const char *path, uint64_t size, uint64_t bs, double *m)
{
	const char *failed = NULL;
	void *pool, *buf = malloc(bs), *back = malloc(bs);
	uint64_t t0;
	int ret;

	if (!buf || !back) {
		free(buf);
		free(back);
		fprintf(stderr, "ntmem " CMD ": out of memory\n");
		return -1;
	}
	bench_fill_pattern(buf, bs, (unsigned)size);
	t0 = bench_now_ns();
	pool = lib->create(path, bs, size, 0600);
	if (!pool) {
		failed = "pmemblk_create";
		goto out;
	}
	lib->close(pool);
	m[M_CREATE] = ms_since(t0);
	ret = file_kib(path, &m[M_ALLOC_CREATE], &m[M_WRITTEN_CREATE]);
	if (ret) {
		fprintf(stderr, "ntmem " CMD ": %s: %s\n", path, strerror(-ret));
		goto gone;
	}

	t0 = bench_now_ns();
	pool = lib->open(path, bs);
	m[M_OPEN] = ms_since(t0);
	if (!pool) {
		failed = "pmemblk_open";
		goto out;
	}
	t0 = bench_now_ns();
	ret = lib->write(pool, buf, 0);
	m[M_WRITE] = ms_since(t0);
	t0 = bench_now_ns();
	lib->close(pool);
	m[M_CLOSE] = ms_since(t0);
	if (ret) {
		failed = "pmemblk_write";
		goto out;
	}

	t0 = bench_now_ns();
	pool = lib->open(path, bs);
	m[M_REOPEN] = ms_since(t0);
	if (!pool) {
		failed = "pmemblk_open (again)";
		goto out;
	}
	t0 = bench_now_ns();
	ret = lib->read(pool, back, 0);
	m[M_READ] = ms_since(t0);
	lib->close(pool);
	if (ret) {
		failed = "pmemblk_read";
		goto out;
	}
	if (memcmp(buf, back, bs)) {
		fprintf(stderr, "ntmem " CMD ": %s: block 0 of %s reads back other "
			"data than was written\n", name, path);
		goto gone;
	}
	ret = file_kib(path, &m[M_ALLOC_END], &m[M_WRITTEN_END]);
	if (ret) {
		fprintf(stderr, "ntmem " CMD ": %s: %s\n", path, strerror(-ret));
		goto gone;
	}
	unlink(path);
	free(buf);
	free(back);
	return 0;
out:
	fprintf(stderr, "ntmem " CMD ": %s: %s %s: %s\n", name, failed, path,
		lib->errormsg());
gone:
	unlink(path);
	free(buf);
	free(back);
	return -1;
}

/* ntmem's drop-in (peer_dropin_path()): 0, or -1 after its message. */
static int find_dropin(char *path, size_t len)
{
	char why[3 * PATH_MAX];

	if (peer_dropin_path("libpmemblk", "libpmemblk.so.1", path, len, why,
			     sizeof(why)))
		return 0;
	fprintf(stderr, "ntmem " CMD ": %s\n", why);
	return -1;
}

/* @a / @b, NaN unless both are figures and @b is not 0. */
static double ratio(double a, double b)
{
	return isnan(a) || isnan(b) || b == 0 ? NAN : a / b;
}

static void print(const struct blk_open_options *o, struct peer_pmemblk *lib,
		  const bool *on, const char *pmdk_why,
		  double med[][NLIB][NMEASURE])
{
	struct report rep;
	char buf[160], sizes[BLK_OPEN_MAX_SIZES][32];

	report_init(&rep, bench_format(o->json, o->csv), "ntmem bench blk --open",
		    columns, NCOLS);
	report_meta(&rep, "version", "%s", ntm_version());
	report_meta(&rep, "cpu", "%s", bench_cpu_model(buf, sizeof(buf)));
	report_meta(&rep, "dir", "%s", o->dir);
	report_meta(&rep, "ntmem", "%s", lib[L_NTMEM].path);
	report_meta(&rep, "pmdk", "%s", on[L_PMDK] ? lib[L_PMDK].path : pmdk_why);
	report_meta(&rep, "pools", "block size %llu; %d pool%s of each size "
		    "and library, median; one pool at a time, removed after "
		    "its figures; page cache warm", (unsigned long long)o->bs,
		    o->runs, o->runs == 1 ? "" : "s");
	report_meta(&rep, "rows", "ntmem, pmdk, and x_pmdk: ntmem / pmdk");
	for (int s = 0; s < o->nsizes; s++) {
		parse_size_name(o->sizes[s], sizes[s], sizeof(sizes[s]));
		for (int l = 0; l <= NLIB; l++) {
			union report_cell cell[NCOLS] = {
				{ .s = sizes[s] },
				{ .s = l < NLIB ? lib_names[l] : "x_pmdk" },
			};

			if (l < NLIB ? !on[l] : !on[L_PMDK])
				continue;
			for (int m = 0; m < NMEASURE; m++)
				cell[2 + m].r = l < NLIB ? med[s][l][m] :
					ratio(med[s][L_NTMEM][m], med[s][L_PMDK][m]);
			report_row(&rep, cell);
		}
	}
	report_end(&rep);
}

int bench_blk_open(const struct blk_open_options *o)
{
	struct peer_pmemblk lib[NLIB];
	bool on[NLIB] = { true, false };
	char why[512], pmdk_why[256] = "disabled (--no-pmdk)";
	char path[PATH_MAX];
	double (*med)[NLIB][NMEASURE] = calloc((size_t)o->nsizes, sizeof(*med));
	double *all = calloc((size_t)o->nsizes * NLIB * NMEASURE * (size_t)o->runs,
			     sizeof(double));
	struct bench_room room = {
		.dir = o->dir,
		.disk_what = "the largest pool of --sizes (pmemblk_create "
			     "allocates it whole)",
		.mem_what = "the figures",
	};
	struct statfs fs;
	int status = 1;

	memset(lib, 0, sizeof(lib));
	if (!med || !all) {
		fprintf(stderr, "ntmem " CMD ": out of memory\n");
		goto out;
	}
	if (statfs(o->dir, &fs)) {
		fprintf(stderr, "ntmem " CMD ": --dir %s: %s\n", o->dir,
			strerror(errno));
		goto out;
	}
	/* Pools of 512 GiB in memory would measure memory, or not fit. */
	if (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC) {
		status = parse_bad_arg(CMD, "--dir", o->dir, "a directory on a "
				       "disk file system with --open, not a tmpfs "
				       "or ramfs (its files are memory)");
		goto out;
	}
	for (int s = 0; s < o->nsizes; s++)
		if (o->sizes[s] > room.disk)
			room.disk = o->sizes[s];
	room.mem = (uint64_t)o->nsizes * NLIB * NMEASURE * (uint64_t)o->runs *
		   sizeof(double);
	if (bench_check_room(CMD, &room))
		goto out;
	/*
	 * PMDK's first: once ntmem's is loaded, dlopen() of the soname would
	 * return it (the loader matches loaded objects by soname).
	 */
	if (o->pmdk)
		on[L_PMDK] = peer_pmemblk_load(&lib[L_PMDK], pmdk_why,
					       sizeof(pmdk_why));
	if (find_dropin(path, sizeof(path)))
		goto out;
	if (!peer_pmemblk_load_path(&lib[L_NTMEM], path, why, sizeof(why))) {
		fprintf(stderr, "ntmem " CMD ": %s\n", why);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/ntmem-bench-open-%d", o->dir,
		 (int)getpid());
	for (int r = 0; r < o->runs; r++)
		for (int s = 0; s < o->nsizes; s++)
			for (int l = 0; l < NLIB; l++) {
				double *m = all + (((size_t)s * NLIB + (size_t)l) *
						   NMEASURE * (size_t)o->runs) +
					    (size_t)r * NMEASURE;

				if (!on[l])
					continue;
				parse_size_name(o->sizes[s], why, sizeof(why));
				bench_progress(r * o->nsizes * NLIB + s * NLIB + l + 1,
					       o->runs * o->nsizes * NLIB, why);
				if (one_pool(&lib[l], lib_names[l], path, o->sizes[s],
					     o->bs, m))
					goto out;
			}
	bench_progress_done();
	for (int s = 0; s < o->nsizes; s++)
		for (int l = 0; l < NLIB; l++)
			for (int m = 0; m < NMEASURE; m++) {
				double v[BENCH_MAX_RUNS];
				struct bench_stats st;

				for (int r = 0; r < o->runs; r++)
					v[r] = all[(((size_t)s * NLIB + (size_t)l) *
						    NMEASURE * (size_t)o->runs) +
						   (size_t)r * NMEASURE + (size_t)m];
				bench_stats(v, o->runs, &st);
				med[s][l][m] = on[l] ? st.median : NAN;
			}
	print(o, lib, on, pmdk_why, med);
	status = 0;
out:
	bench_progress_done();
	for (int l = 0; l < NLIB; l++)
		peer_pmemblk_unload(&lib[l]);
	free(med);
	free(all);
	return status;
}
