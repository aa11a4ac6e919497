// SPDX-License-Identifier: MIT
/*
 * misc.c - pmemblk_errormsg(), pmemblk_check_version(),
 * pmemblk_set_funcs(), the pmemblk_ctl_*() queries, and the load-time
 * constructor.
 *
 * The ctl queries are PMDK 1.12.1's for libpmemblk, all int-valued, read
 * and write, none runnable; any other name, or a runnable use, fails with
 * EINVAL and "invalid query entry point NAME" as PMDK's does:
 *   fallocate.at_create   create allocates the file's blocks (default 1)
 *   sds.at_create         accepted, recorded; pools never carry the
 *                         shutdown state (ntmem-libpmemblk(7))
 *   copy_on_write.at_open, prefault.at_create, prefault.at_open
 *                         accepted, recorded, no effect
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ntmem.h>
#include <ntmem/embed.h>

#include "dropin_note.h"	/* dropin_note_dep */
#include "blk.h"
#include "include/libpmemblk.h"

/* Marks this object as ntmem's, not PMDK's (dropin_note.h). */
NTM_DROPIN_NOTE("libpmemblk");

static __thread char errmsg[512];

void blk_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	errno = err;
}

const char *pmemblk_errormsg(void)
{
	return errmsg;
}

const char *pmemblk_check_version(unsigned major_required,
				  unsigned minor_required)
{
	if (major_required != PMEMBLK_MAJOR_VERSION) {
		blk_error(errno, "libpmemblk major version mismatch (need %u, "
			  "found %u)", major_required, PMEMBLK_MAJOR_VERSION);
		return errmsg;
	}
	if (minor_required > PMEMBLK_MINOR_VERSION) {
		blk_error(errno, "libpmemblk minor version mismatch (need %u, "
			  "found %u)", minor_required, PMEMBLK_MINOR_VERSION);
		return errmsg;
	}
	return NULL;
}

static void *(*malloc_fn)(size_t) = malloc;
static void (*free_fn)(void *) = free;

void *blk_malloc(size_t n)
{
	return malloc_fn(n);
}

void blk_free(void *p)
{
	free_fn(p);
}

/*
 * Only the pool handles come from these; realloc and strdup are never
 * needed (PMDK takes all four, so all four are accepted).
 */
void pmemblk_set_funcs(void *(*malloc_func)(size_t size),
		       void (*free_func)(void *ptr),
		       void *(*realloc_func)(void *ptr, size_t size),
		       char *(*strdup_func)(const char *s))
{
	(void)realloc_func;
	(void)strdup_func;
	malloc_fn = malloc_func ? malloc_func : malloc;
	free_fn = free_func ? free_func : free;
}

int blk_ctl_fallocate_at_create = 1;
int blk_ctl_verbose;
static int ctl_sds_at_create = 1, ctl_cow_at_open, ctl_prefault_at_create,
	   ctl_prefault_at_open;

static const struct {
	const char *name;
	int *value;
} ctls[] = {
	{ "prefault.at_create", &ctl_prefault_at_create },
	{ "prefault.at_open", &ctl_prefault_at_open },
	{ "fallocate.at_create", &blk_ctl_fallocate_at_create },
	{ "copy_on_write.at_open", &ctl_cow_at_open },
	{ "sds.at_create", &ctl_sds_at_create },
};

enum ctl_op { CTL_GET, CTL_SET, CTL_EXEC };

/* The pool does not matter: every query is global, as in PMDK. */
static int ctl_query(const char *name, enum ctl_op op, void *arg)
{
	if (!name) {
		blk_error(EINVAL, "invalid query");
		return -1;
	}
	for (size_t i = 0; op != CTL_EXEC && i < sizeof(ctls) / sizeof(*ctls);
	     i++) {
		if (strcmp(name, ctls[i].name))
			continue;
		if (!arg) {
			blk_error(EINVAL, "invalid argument");
			return -1;
		}
		if (op == CTL_GET)
			memcpy(arg, ctls[i].value, sizeof(int));
		else
			memcpy(ctls[i].value, arg, sizeof(int));
		return 0;
	}
	blk_error(EINVAL, "invalid query entry point %s", name);
	return -1;
}

int pmemblk_ctl_get(PMEMblkpool *pbp, const char *name, void *arg)
{
	(void)pbp;
	return ctl_query(name, CTL_GET, arg);
}

int pmemblk_ctl_set(PMEMblkpool *pbp, const char *name, void *arg)
{
	(void)pbp;
	return ctl_query(name, CTL_SET, arg);
}

int pmemblk_ctl_exec(PMEMblkpool *pbp, const char *name, void *arg)
{
	(void)pbp;
	return ctl_query(name, CTL_EXEC, arg);
}

__attribute__((constructor)) static void pmemblk_compat_init(void)
{
	/* ntmem's rule: "yes" is on here as in the library (ntm_verbose()). */
	blk_ctl_verbose = ntm_verbose();
	if (blk_ctl_verbose)
		ntm_dropin_banner("libpmemblk", PMEMBLK_MAJOR_VERSION,
				  PMEMBLK_MINOR_VERSION, false);
}
