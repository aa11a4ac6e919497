/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what the libFuzzer harnesses share: reading numbers off the
 * input, failing with a message (abort(): libFuzzer keeps the input as a
 * crash artifact), and a scratch directory under /dev/shm that goes away
 * at exit. Header-only: each harness is one translation unit.
 */
#ifndef NTMEM_FUZZ_H
#define NTMEM_FUZZ_H

/* Needs _GNU_SOURCE (nftw), defined by each harness before any include. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The input, consumed from the front; an exhausted input reads as zeros. */
struct fz {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fz_u8(struct fz *f)
{
	if (!f->n)
		return 0;
	f->n--;
	return *f->p++;
}

/* @bytes (1 to 8) little-endian bytes. */
static inline uint64_t fz_uint(struct fz *f, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)fz_u8(f) << (8 * i);
	return v;
}

/* Report a broken promise and abort: the input becomes a crash artifact. */
__attribute__((format(printf, 3, 4), noreturn))
static inline void fz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

#define FZ_CHECK(cond, ...)                                     \
	do {                                                    \
		if (!(cond))                                    \
			fz_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

/* --- scratch directory -------------------------------------------------- */

static char fz_dir[64];

static int fz_rm_one(const char *path, const struct stat *sb, int type,
		     struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

static void fz_dir_remove(void)
{
	if (fz_dir[0])
		nftw(fz_dir, fz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Empty the scratch directory between two inputs. */
static inline void fz_scratch_clear(void)
{
	fz_dir_remove();
	FZ_CHECK(mkdir(fz_dir, 0700) == 0, "cannot recreate %s", fz_dir);
}

/*
 * A crash ends the harness with abort(), which skips atexit(): remove the
 * directories of earlier runs of @name whose process is gone.
 */
static inline void fz_remove_stale(const char *name)
{
	char prefix[48], path[300];
	size_t plen;
	struct dirent *e;
	DIR *d = opendir("/dev/shm");

	plen = (size_t)snprintf(prefix, sizeof(prefix), "ntmem-fuzz-%s-", name);
	while (d && (e = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(e->d_name, prefix, plen))
			continue;
		pid = strtol(e->d_name + plen, &end, 10);
		if (*end || pid <= 0 || (kill((pid_t)pid, 0) && errno == ESRCH)) {
			snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
			nftw(path, fz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
		}
	}
	if (d)
		closedir(d);
}

/*
 * The directory /dev/shm/ntmem-fuzz-@name-PID (memory, so the harness
 * costs no disk writes however many inputs it runs), made on the first
 * call and removed at exit. Aborts when it cannot be made: every input
 * would fail for the same reason.
 */
static inline const char *fz_scratch(const char *name)
{
	if (!fz_dir[0]) {
		fz_remove_stale(name);
		snprintf(fz_dir, sizeof(fz_dir), "/dev/shm/ntmem-fuzz-%s-%ld",
			 name, (long)getpid());
		FZ_CHECK(mkdir(fz_dir, 0700) == 0, "cannot make %s: %s", fz_dir,
			 strerror(errno));
		atexit(fz_dir_remove);
	}
	return fz_dir;
}

#endif /* NTMEM_FUZZ_H */
