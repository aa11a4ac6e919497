// SPDX-License-Identifier: MIT
/*
 * fuzz_map.c - pmem_map_file() of the libpmem drop-in with arguments
 * decoded from the input: the path (an existing file of some size, an
 * empty one, a missing one, one in a missing directory, a directory, a
 * symbolic link, a dangling one, /dev/null, /dev/zero, NULL), the flags
 * (any bits), the length (zero, small, and sizes no file system can give)
 * and the mode, in a scratch directory under /dev/shm.
 *
 * Whatever the arguments:
 *   - it does not crash, and leaves no file descriptor and no mapping
 *     behind once a successful mapping is unmapped;
 *   - a failure returns NULL with errno set; unknown flags and a NULL
 *     path are EINVAL;
 *   - a failed call leaves no file behind that was not there before (a
 *     failed PMEM_FILE_CREATE removes what it created);
 *   - a success maps the file's size (len with PMEM_FILE_CREATE on a
 *     file), writable, and pmem_unmap() of it returns 0.
 */
#define _GNU_SOURCE	/* nftw() in fuzz.h */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libpmem.h"
#include "fuzz.h"

#define KNOWN_FLAGS (PMEM_FILE_CREATE | PMEM_FILE_EXCL | PMEM_FILE_SPARSE | \
		     PMEM_FILE_TMPFILE)

/* Entries of a directory, "." and ".." left out; -1 when unreadable. */
static long count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	long n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* Lines of /proc/self/maps naming the scratch directory or /dev/zero. */
static long count_maps(const char *dir)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	long n = 0;

	FZ_CHECK(f, "cannot read /proc/self/maps");
	while (fgets(line, sizeof(line), f))
		n += strstr(line, dir) || strstr(line, "/dev/zero");
	fclose(f);
	return n;
}

static void make_file(const char *path, size_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	FZ_CHECK(fd >= 0 && ftruncate(fd, (off_t)size) == 0,
		 "cannot make %s", path);
	close(fd);
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = fz_scratch("map");
	struct fz in = { data, size };
	uint8_t target = fz_u8(&in), lensel = fz_u8(&in);
	int flags = fz_u8(&in);
	mode_t mode = (mode_t)fz_uint(&in, 2) & 07777;
	size_t fsize = (size_t)fz_uint(&in, 2), len = 0, mapped = 0;
	char path[160], file[160];
	const char *p = path;
	long fds, maps, entries;
	bool existed, fixed_size;
	int is_pmem = -1, err;
	void *addr;

	if (lensel & 0x80)
		flags |= INT32_MIN;	/* the sign bit: unknown too */
	switch (lensel % 5) {
	case 0: len = 0; break;
	case 1: len = (size_t)fz_uint(&in, 2); break;
	case 2: len = (size_t)fz_u8(&in) * 4096; break;
	/* Beyond any tmpfs: refused up front, never allocated. */
	case 3: len = ((size_t)1 << 50) + fz_uint(&in, 2); break;
	default: len = SIZE_MAX - fz_uint(&in, 2); break;
	}

	snprintf(file, sizeof(file), "%s/file", dir);
	switch (target % 10) {
	case 0: make_file(file, fsize % 65537); p = file; break;
	case 1: make_file(file, 0); p = file; break;
	case 2: snprintf(path, sizeof(path), "%s/new", dir); break;
	case 3: snprintf(path, sizeof(path), "%s/missing/new", dir); break;
	case 4: p = dir; break;
	case 5:
		make_file(file, fsize % 65537);
		snprintf(path, sizeof(path), "%s/link", dir);
		FZ_CHECK(symlink("file", path) == 0, "cannot link %s", path);
		break;
	case 6:
		snprintf(path, sizeof(path), "%s/dangling", dir);
		FZ_CHECK(symlink("gone", path) == 0, "cannot link %s", path);
		break;
	case 7: p = "/dev/null"; break;
	case 8: p = "/dev/zero"; break;
	default: p = NULL; break;
	}
	existed = p && exists(p);
	/* A dangling link "exists", and so would the file CREATE makes. */
	if (target % 10 == 6)
		existed = false;
	fixed_size = p && !(flags & PMEM_FILE_CREATE);
	entries = count_entries(dir);
	fds = count_entries("/proc/self/fd");
	maps = count_maps(dir);

	errno = 0;
	addr = pmem_map_file(p, len, flags, mode, &mapped, &is_pmem);
	err = errno;

	if (!addr) {
		FZ_CHECK(err != 0, "%s len %zu flags 0x%x: failed without errno",
			 p ? p : "NULL", len, flags);
		if (!p || (flags & ~KNOWN_FLAGS))
			FZ_CHECK(err == EINVAL, "%s flags 0x%x: errno %d, not EINVAL",
				 p ? p : "NULL", flags, err);
		if (p && !existed) {
			const char *made = target % 10 == 6 ? "gone" : p;
			char gone[160];

			if (target % 10 == 6) {
				snprintf(gone, sizeof(gone), "%s/gone", dir);
				made = gone;
			}
			FZ_CHECK(!exists(made), "%s len %zu flags 0x%x mode 0%o: "
				 "failed (%s) but left %s behind", p, len, flags,
				 (unsigned)mode, strerror(err), made);
		}
		FZ_CHECK(count_entries(dir) == entries, "%s len %zu flags 0x%x: "
			 "failed (%s) and changed the directory", p ? p : "NULL",
			 len, flags, strerror(err));
	} else {
		unsigned char *m = addr;
		struct stat st;

		FZ_CHECK(p && !(flags & ~KNOWN_FLAGS), "mapped with flags 0x%x "
			 "path %s", flags, p ? p : "NULL");
		FZ_CHECK(is_pmem == 0 || is_pmem == 1, "is_pmem %d", is_pmem);
		FZ_CHECK(mapped > 0, "%s: mapped 0 bytes", p);
		if (!(flags & PMEM_FILE_TMPFILE) && stat(p, &st) == 0 &&
		    S_ISREG(st.st_mode)) {
			FZ_CHECK(mapped == (size_t)st.st_size, "%s: mapped %zu of "
				 "a %lld-byte file", p, mapped,
				 (long long)st.st_size);
			if (fixed_size)
				FZ_CHECK(len == 0, "%s: mapped with len %zu "
					 "without PMEM_FILE_CREATE", p, len);
			else
				FZ_CHECK(mapped == len, "%s: CREATE with len %zu "
					 "mapped %zu", p, len, mapped);
		}
		/* Writable, both ends. */
		m[0] ^= 0x5a;
		m[mapped - 1] ^= 0xa5;
		FZ_CHECK(pmem_unmap(addr, mapped) == 0, "%s: pmem_unmap failed",
			 p);
	}
	FZ_CHECK(count_entries("/proc/self/fd") == fds, "%s len %zu flags 0x%x: "
		 "a file descriptor was left open", p ? p : "NULL", len, flags);
	FZ_CHECK(count_maps(dir) == maps, "%s len %zu flags 0x%x: a mapping "
		 "was left behind", p ? p : "NULL", len, flags);
	fz_scratch_clear();
	return 0;
}
