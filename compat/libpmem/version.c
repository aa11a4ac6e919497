// SPDX-License-Identifier: MIT
/*
 * version.c - pmem_check_version(), pmem_errormsg() and the load-time
 * constructor that reads the environment.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <ntmem.h>
#include <ntmem/embed.h>

#include "dropin_note.h"	/* dropin_note_dep */
#include "compat.h"
#include "include/libpmem.h"

/* Marks this object as ntmem's, not PMDK's (dropin_note.h). */
NTM_DROPIN_NOTE("libpmem");

static __thread char errmsg[256];

void pmem_set_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errmsg, sizeof(errmsg), fmt, ap);
	va_end(ap);
}

const char *pmem_errormsg(void)
{
	return errmsg;
}

const char *pmem_check_version(unsigned major_required, unsigned minor_required)
{
	if (major_required != PMEM_MAJOR_VERSION) {
		pmem_set_error("libpmem major version mismatch (need %u, found %u)",
			       major_required, PMEM_MAJOR_VERSION);
		return errmsg;
	}
	if (minor_required > PMEM_MINOR_VERSION) {
		pmem_set_error("libpmem minor version mismatch (need %u, found %u)",
			       minor_required, PMEM_MINOR_VERSION);
		return errmsg;
	}
	return NULL;
}

/*
 * 1 when every nd region says its persistence domain is the CPU cache
 * (eADR: flushes are unnecessary), 0 otherwise or without regions, -1
 * when sysfs cannot be read: PMDK's answer, from the library's own reader
 * (ntm_persist_domain_system()). NTMEM_PERSIST_DOMAIN, when set, is the
 * answer instead (cpu_cache: 1, memory_controller: 0): the drop-in then
 * agrees with the write-backs ntmem itself skips or makes. It does not
 * start the dispatcher, which the constructor must not start before it
 * has set PMDK's ceilings.
 */
int pmem_auto_flush_detect(void)
{
	int domain = ntm_persist_domain_system();

	return domain < 0 ? -1 : domain == NTM_PERSIST_CPU_CACHE;
}

__attribute__((constructor)) static void pmem_compat_init(void)
{
	pmem_env_read();
	if (pmem_env.verbose)
		ntm_dropin_banner("libpmem", PMEM_MAJOR_VERSION,
				  PMEM_MINOR_VERSION, true);
}
