/* SPDX-License-Identifier: MIT */
/*
 * env.h - the one place the library's environment variables are read and
 * parsed (src/env.c; the variables and their rules are listed there).
 * Never installed.
 */
#ifndef NTMEM_ENV_H
#define NTMEM_ENV_H

#include <stdbool.h>
#include <stddef.h>

struct ntm_env {
	int isa_cap;	/* enum ntm_isa ceiling, or -1 when NTMEM_ISA is unset */
	int flush_cap;	/* enum ntm_flush_insn ceiling, or -1 when unset */
	int persist_domain; /* enum ntm_persist_domain, -1: NTMEM_PERSIST_DOMAIN unset */
	size_t nt_threshold; /* NTMEM_NT_THRESHOLD, or NTM_NT_THRESHOLD_DEFAULT */
	bool verbose;	/* NTMEM_VERBOSE by ntm_env_switch()'s rule */
	char bad[512];	/* values that were ignored, one line each, or "" */
};

void ntm_env_read(struct ntm_env *env);
/* Parse one variant or flush name; -1 when unknown. */
int ntm_isa_from_name(const char *name);
int ntm_flush_from_name(const char *name);
/*
 * An on/off variable's value (NTMEM_VERBOSE): 1 for 1, yes, true or on;
 * 0 for 0, no, false, off, empty or unset (NULL); case-insensitive. -1
 * for anything else, which the caller takes as off and reports.
 */
int ntm_env_switch(const char *value);

/*
 * The dispatcher's choice read NTMEM_VERBOSE as @on: ntm_verbose()
 * (ntmem/embed.h) answers so from now on; before, it reads the variable
 * each time, by the same rule, without making the choice.
 */
void ntm_env_verbose_chosen(bool on);

#endif /* NTMEM_ENV_H */
