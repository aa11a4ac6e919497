// SPDX-License-Identifier: MIT
/*
 * errors.c - pmem2_errormsg() and pmem2_perror(): the thread's last
 * message, set by every failing call through pmem2_err().
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dropin_note.h"	/* dropin_note_dep */
#include "pmem2.h"

/* Marks this object as ntmem's, not PMDK's (dropin_note.h). */
NTM_DROPIN_NOTE("libpmem2");

static __thread char errmsg[512];

int pmem2_err(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	return code;
}

int pmem2_err_errno(int err, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
	n = strlen(errmsg);
	snprintf(errmsg + n, sizeof(errmsg) - n, ": %s", strerror(err));
	return -err;
}

const char *pmem2_errormsg(void)
{
	return errmsg;
}

void pmem2_perror(const char *format, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, format);
	vsnprintf(what, sizeof(what), format, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", what, errmsg);
}
