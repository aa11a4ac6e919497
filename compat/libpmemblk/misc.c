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
 *
 * As PMDK, the library sets them when it is loaded from PMEMBLK_CONF
 * ("name=value;name=value", no blanks) and then from the file
 * PMEMBLK_CONF_FILE names (the same, '#' starting a comment to the end
 * of the line, blanks ignored); a value is a boolean whose first
 * character is 1, y or Y, or 0, n or N. An unknown name or value is
 * passed over, as PMDK passes it over at load. An entry that is not
 * name=value makes PMDK abort the program; here it is passed over with
 * one line on stderr naming it (ntmem-libpmemblk(7)).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
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

/* PMDK's boolean: 1, y or Y on; 0, n or N off (the first character). */
static int parse_boolean(const char *v, int *out)
{
	switch (v[0]) {
	case '1': case 'y': case 'Y':
		*out = 1;
		return 0;
	case '0': case 'n': case 'N':
		*out = 0;
		return 0;
	default:
		return -1;
	}
}

/*
 * Apply the configuration @text (from @where: the variable or the file
 * named), entries separated by ';'. Changed in place.
 */
static void load_config(char *text, const char *where)
{
	char *save = NULL;

	for (char *q = strtok_r(text, ";", &save); q;
	     q = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(q, '='), *name = q, *value;
		int v;

		if (!eq || eq == q || !eq[1] || strchr(eq + 1, '=')) {
			fprintf(stderr, "ntmem libpmemblk: %s: entry '%s' is "
				"not name=value: passed over\n", where, q);
			continue;
		}
		*eq = '\0';
		value = eq + 1;
		for (size_t i = 0; i < sizeof(ctls) / sizeof(*ctls); i++)
			if (!strcmp(name, ctls[i].name) &&
			    parse_boolean(value, &v) == 0)
				*ctls[i].value = v;
	}
}

/*
 * PMEMBLK_CONF_FILE's text: comments and blanks dropped, at most 1 MiB
 * read (PMDK's limit). NULL, said on stderr, if it cannot be read (PMDK
 * aborts the program).
 */
static char *config_file_text(const char *path)
{
	FILE *f = fopen(path, "re");
	char *text = strdup("");
	size_t len = 0, cap = 1;
	bool comment = false;
	int c;

	if (!f || !text) {
		fprintf(stderr, "ntmem libpmemblk: PMEMBLK_CONF_FILE '%s' cannot "
			"be read (%s): passed over\n", path, strerror(errno));
		if (f)
			fclose(f);
		free(text);
		return NULL;
	}
	while ((c = fgetc(f)) != EOF && len < (1u << 20)) {
		if (c == '#')
			comment = true;
		else if (c == '\n')
			comment = false;
		if (comment || c == '#' || isspace(c))
			continue;
		if (len + 2 > cap) {
			char *t = realloc(text, cap ? 2 * cap : 256);

			if (!t)
				break;
			text = t;
			cap = cap ? 2 * cap : 256;
		}
		text[len++] = (char)c;
		text[len] = '\0';
	}
	fclose(f);
	return text;
}

/* The ctl values PMEMBLK_CONF and PMEMBLK_CONF_FILE set, in that order. */
static void load_configs(void)
{
	const char *env = getenv("PMEMBLK_CONF");
	const char *file = getenv("PMEMBLK_CONF_FILE");

	if (env) {
		char *copy = strdup(env);

		if (copy)
			load_config(copy, "PMEMBLK_CONF");
		free(copy);
	}
	if (file && *file) {
		char *text = config_file_text(file);

		if (text)
			load_config(text, file);
		free(text);
	}
}

__attribute__((constructor)) static void pmemblk_compat_init(void)
{
	load_configs();
	/* ntmem's rule: "yes" is on here as in the library (ntm_verbose()). */
	blk_ctl_verbose = ntm_verbose();
	if (blk_ctl_verbose)
		ntm_dropin_banner("libpmemblk", PMEMBLK_MAJOR_VERSION,
				  PMEMBLK_MINOR_VERSION, false);
}
