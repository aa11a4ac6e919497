// SPDX-License-Identifier: MIT
/*
 * introspect.c - ntmem/introspect.h: the environment as the dispatcher
 * read it and the nd regions under a caller's sysfs tree, through the
 * library's own readers (env.c, persist_domain.c). A tool that showed
 * them with copies of those readers would show what its copies judged,
 * not what the library did.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "copy_policy.h"
#include "dispatch.h"
#include "error.h"
#include "ntmem/introspect.h"
#include "persist_domain.h"

/*
 * struct ntm_env_info as the first release has it: a caller compiled with
 * it passes its size, and fields added later stay unset for it. Never
 * changes.
 */
struct env_info_first {
	size_t nt_threshold;
	size_t nt_threshold_default;
	enum ntm_persist_domain persist_domain_override;
	char ignored[512];
};
#define ENV_INFO_FIRST_SIZE sizeof(struct env_info_first)

_Static_assert(sizeof(struct ntm_env_info) >= ENV_INFO_FIRST_SIZE &&
		       offsetof(struct ntm_env_info, ignored) ==
			       offsetof(struct env_info_first, ignored),
	       "struct ntm_env_info only grows at its end");

_Static_assert(sizeof(((struct ntm_env_info *)0)->ignored) ==
		       sizeof(((struct ntm_dispatch *)0)->env_ignored),
	       "every ignored line the table keeps fits");

int ntm_introspect_env(struct ntm_env_info *info, size_t size)
{
	const struct ntm_dispatch *d;
	struct ntm_env_info now;

	if (!info)
		return ntm_error(-EINVAL, "info: NULL");
	if (size < ENV_INFO_FIRST_SIZE)
		return ntm_error(-EINVAL, "size %zu: smaller than any struct "
				 "ntm_env_info (%zu bytes)", size,
				 ENV_INFO_FIRST_SIZE);
	d = ntm_dispatch();
	memset(&now, 0, sizeof(now));
	now.nt_threshold = d->nt_threshold;
	now.nt_threshold_default = NTM_NT_THRESHOLD_DEFAULT;
	now.persist_domain_override = d->domain_override;
	memcpy(now.ignored, d->env_ignored, sizeof(now.ignored));
	now.nt_short_unaligned = d->nt_short;
	now.glibc_rep_movsb_threshold = ntm_glibc_rep_movsb_threshold(
		d->features, getenv("GLIBC_TUNABLES"));
	snprintf(now.cpu_vendor, sizeof(now.cpu_vendor), "%s",
		 ntm_cpu_vendor_name(ntm_cpu_vendor()));
	now.cpu_family = ntm_cpu_family();
	if (size > sizeof(now)) {
		memset((char *)info + sizeof(now), 0, size - sizeof(now));
		size = sizeof(now);
	}
	memcpy(info, &now, size);
	return 0;
}

/* ntm_introspect_regions()'s walk: the caller's function and its count. */
struct region_walk {
	const char *root;
	int (*fn)(void *arg, const struct ntm_nd_region *region);
	void *arg;
	int called;
};

static int visit_region(void *arg, const char *name, int domain)
{
	struct region_walk *w = arg;
	struct ntm_nd_region region;

	(void)domain;	/* read again with the bus, by ntm_nd_region_read() */
	ntm_nd_region_read(w->root, name, &region);
	w->called++;
	return w->fn(w->arg, &region) ? 1 : 0;
}

int ntm_introspect_regions(const char *sysfs_root,
			   int (*fn)(void *arg, const struct ntm_nd_region *region),
			   void *arg)
{
	struct region_walk w = { sysfs_root, fn, arg, 0 };
	int ret;

	if (!sysfs_root)
		return ntm_error(-EINVAL, "sysfs_root: NULL");
	if (!fn)
		return ntm_error(-EINVAL, "fn: NULL");
	ret = ntm_persist_domain_regions(sysfs_root, visit_region, &w);
	/* Only listing fails: visit_region() stops the walk with 1. */
	if (ret < 0)
		return ntm_error(ret, "%s/bus/nd/devices: cannot be listed",
				 sysfs_root);
	return w.called;
}
