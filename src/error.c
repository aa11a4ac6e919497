// SPDX-License-Identifier: MIT
/*
 * error.c - the message behind the last -errno a library call returned in
 * this thread. The library never prints (unless NTMEM_VERBOSE is on);
 * callers that want to tell a user why read ntm_errmsg().
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "ntmem.h"
#include "ntmem/embed.h"

static __thread char last_error[256];

int ntm_error(int err, const char *fmt, ...)
{
	va_list ap;
	int used;

	va_start(ap, fmt);
	used = vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	if (used >= 0 && (size_t)used < sizeof(last_error))
		snprintf(last_error + used, sizeof(last_error) - used, " (%s)",
			 strerror(-err));
	/*
	 * ntm_verbose(), not the dispatch table: an error before the choice
	 * (a bad ceiling from ntm_dispatch_set_caps()) must not make it.
	 */
	if (ntm_verbose())
		fprintf(stderr, "ntmem: %s\n", last_error);
	return err;
}

void ntm_error_clear(void)
{
	last_error[0] = '\0';
}

int ntm_error_cause(int err, const char *fmt, ...)
{
	char cause[sizeof(last_error)];
	va_list ap;
	int used;

	if (!last_error[0]) {
		char what[sizeof(last_error)];

		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		return ntm_error(err, "%s", what);
	}
	memcpy(cause, last_error, sizeof(cause));
	va_start(ap, fmt);
	used = vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	if (used >= 0 && (size_t)used + 2 < sizeof(last_error)) {
		/* ": cause", cut to what is left (snprintf would warn of it) */
		size_t room = sizeof(last_error) - (size_t)used - 3;
		size_t n = strlen(cause) < room ? strlen(cause) : room;

		memcpy(last_error + used, ": ", 2);
		memcpy(last_error + used + 2, cause, n);
		last_error[used + 2 + n] = '\0';
	}
	if (ntm_verbose())
		fprintf(stderr, "ntmem: %s\n", last_error);
	return err;
}

const char *ntm_errmsg(void)
{
	return last_error;
}
