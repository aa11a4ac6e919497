// SPDX-License-Identifier: MIT
/*
 * version.c - pmem_check_version(), pmem_errormsg() and the load-time
 * constructor that reads the environment.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <ntmem.h>

#include "compat.h"
#include "include/libpmem.h"

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
 * when sysfs cannot be read.
 */
int pmem_auto_flush_detect(void)
{
	const char *dir = "/sys/bus/nd/devices";
	DIR *d = opendir(dir);
	struct dirent *e;
	int regions = 0, cpu_cache = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[512], domain[32] = "";
		FILE *f;

		if (strncmp(e->d_name, "region", 6))
			continue;
		snprintf(path, sizeof(path), "%s/%s/persistence_domain", dir,
			 e->d_name);
		f = fopen(path, "r");
		if (!f) {
			closedir(d);
			return -1;
		}
		if (!fgets(domain, sizeof(domain), f))
			domain[0] = '\0';
		fclose(f);
		regions++;
		cpu_cache += strncmp(domain, "cpu_cache", 9) == 0;
	}
	closedir(d);
	return regions && regions == cpu_cache;
}

__attribute__((constructor)) static void pmem_compat_init(void)
{
	pmem_env_read();
	if (pmem_env.verbose)
		fprintf(stderr, "ntmem libpmem %s: PMDK libpmem %d.%d drop-in, "
			"copies %s, write-back %s\n", ntm_version(),
			PMEM_MAJOR_VERSION, PMEM_MINOR_VERSION,
			ntm_variant_active()->name,
			ntm_flush_insn_name(ntm_flush_active()));
}
