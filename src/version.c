// SPDX-License-Identifier: MIT
/* version.c - the run-time twin of the NTM_VERSION_* macros. */
#include "ntmem.h"

const char *ntm_version(void)
{
	return NTM_VERSION_STRING;
}
