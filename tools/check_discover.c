// SPDX-License-Identifier: MIT
/*
 * check_discover.c - where `ntmem check` and `ntmem bench check` find the
 * checking library (libntmem-watch.so.0, built from src/record/) and its
 * preload shim: NTMEM_CHECK_LIBDIR, else this build tree's src/record/check when
 * this ntmem is the one a meson build tree made, else the installed
 * directory.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

#ifndef NTMEM_CHECK_LIBDIR_DEFAULT
#error "NTMEM_CHECK_LIBDIR_DEFAULT: the installed checking library's directory (tools/meson.build)"
#endif

/* The two files of the checking library's directory (src/record/check/). */
static const char *const libdir_files[] = {
	"libntmem-watch.so.0", "libntmem-watch-preload.so",
};

/*
 * The build tree's checking directory when this ntmem is the one a meson
 * build tree made (BUILDDIR/tools/ntmem, with BUILDDIR/build.ninja and
 * BUILDDIR/src/record/check): a user trying ntmem from a clone needs no variable.
 * False otherwise.
 */
static bool build_tree_libdir(char *out, size_t len)
{
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	/* BUILDDIR/tools/ntmem -> BUILDDIR */
	for (int up = 0; up < 2; up++) {
		slash = strrchr(exe, '/');
		if (!slash || slash == exe)
			return false;
		*slash = '\0';
	}
	snprintf(probe, sizeof(probe), "%s/build.ninja", exe);
	if (access(probe, F_OK))
		return false;
	snprintf(probe, sizeof(probe), "%s/src/record/check/%s", exe, libdir_files[0]);
	if (access(probe, F_OK))
		return false;
	n = snprintf(out, len, "%s/src/record/check", exe);
	return n > 0 && (size_t)n < len;
}

int check_libdir(const char *cmd, char *dir, size_t len)
{
	const char *d = getenv("NTMEM_CHECK_LIBDIR");
	const char *from = "NTMEM_CHECK_LIBDIR";
	char *real, path[PATH_MAX + 64], tree[PATH_MAX];

	if ((!d || !*d) && build_tree_libdir(tree, sizeof(tree))) {
		d = tree;
		from = "this build tree";
	} else if (!d || !*d) {
		d = NTMEM_CHECK_LIBDIR_DEFAULT;
		from = "the installed directory";
	}
	/*
	 * Absolute: PROGRAM may change directory before it runs another
	 * program, which inherits LD_PRELOAD.
	 */
	real = realpath(d, NULL);
	if (!real) {
		fprintf(stderr, "ntmem %s: no checking library: %s (%s): %s; "
			"set NTMEM_CHECK_LIBDIR to the directory of "
			"libntmem-watch.so.0\n", cmd, d, from, strerror(errno));
		return 2;
	}
	for (size_t i = 0; i < sizeof(libdir_files) / sizeof(*libdir_files); i++) {
		snprintf(path, sizeof(path), "%s/%s", real, libdir_files[i]);
		if (access(path, F_OK)) {
			fprintf(stderr, "ntmem %s: no checking library in %s (%s): "
				"%s: %s; set NTMEM_CHECK_LIBDIR to the directory "
				"of libntmem-watch.so.0\n", cmd, d, from,
				libdir_files[i], strerror(errno));
			free(real);
			return 2;
		}
	}
	if (strlen(real) >= len) {
		fprintf(stderr, "ntmem %s: %s: path too long\n", cmd, real);
		free(real);
		return 2;
	}
	snprintf(dir, len, "%s", real);
	free(real);
	return 0;
}
