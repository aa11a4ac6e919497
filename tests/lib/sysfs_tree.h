/* SPDX-License-Identifier: MIT */
/*
 * sysfs_tree.h - fake sysfs trees for the persistence-domain tests, laid
 * out as the kernel lays them out: nd regions are directories below their
 * bus in devices/, bus/nd/devices/regionN are relative links to them, and
 * dev/char/MAJ:MIN, dev/block/MAJ:MIN are relative links to devices below
 * a region (or anywhere else).
 *
 * Include after <cmocka.h> and testutil.h (tu_remove_tree() removes a
 * tree). Paths are relative to the tree's root; every helper creates the
 * parent directories it needs and fails the test on an error.
 */
#ifndef NTMEM_TEST_SYSFS_TREE_H
#define NTMEM_TEST_SYSFS_TREE_H

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The parent directories of @rel under @root, @root included. */
static inline void st_parents(const char *root, const char *rel)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *p = path + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
}

/* A file @rel holding @text. */
static inline void st_put(const char *root, const char *rel, const char *text)
{
	char path[1024];
	FILE *f;

	st_parents(root, rel);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (!f)
		fail_msg("create %s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
}

/* A directory @rel (and its parents). */
static inline void st_dir(const char *root, const char *rel)
{
	char with_slash[300];

	snprintf(with_slash, sizeof(with_slash), "%s/", rel);
	st_parents(root, with_slash);
}

/* A link @rel -> @target (relative, as sysfs's are). */
static inline void st_link(const char *root, const char *rel, const char *target)
{
	char path[1024];

	st_parents(root, rel);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (symlink(target, path))
		fail_msg("symlink %s: %s", path, strerror(errno));
}

/*
 * An nd region devices/@parent/@name on the nd bus, whose
 * persistence_domain holds @domain ("cpu_cache\n", "\n", ...); NULL: no
 * attribute, as the kernel hides it when neither flag is set.
 */
static inline void st_region(const char *root, const char *parent,
			     const char *name, const char *domain)
{
	char rel[256], target[256];

	snprintf(rel, sizeof(rel), "devices/%s/%s", parent, name);
	st_dir(root, rel);
	if (domain) {
		snprintf(rel, sizeof(rel), "devices/%s/%s/persistence_domain",
			 parent, name);
		st_put(root, rel, domain);
	}
	snprintf(rel, sizeof(rel), "bus/nd/devices/%s", name);
	snprintf(target, sizeof(target), "../../../devices/%s/%s", parent, name);
	st_link(root, rel, target);
}

/*
 * A region whose attribute exists but cannot be read: a directory in its
 * place fails read() with EISDIR, for root too (file modes would not).
 */
static inline void st_region_unreadable(const char *root, const char *parent,
					const char *name)
{
	char rel[256];

	st_region(root, parent, name, NULL);
	snprintf(rel, sizeof(rel), "devices/%s/%s/persistence_domain", parent,
		 name);
	st_dir(root, rel);
}

#endif /* NTMEM_TEST_SYSFS_TREE_H */
