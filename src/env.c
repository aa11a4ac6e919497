// SPDX-License-Identifier: MIT
/*
 * env.c - the one place ntmem reads its environment variables.
 *
 *   NTMEM_ISA      generic|sse2|avx2|avx512  ceiling on the copy variant
 *                  (generic|neon on aarch64) (default: the best the CPU runs)
 *   NTMEM_FLUSH    clwb|clflushopt|clflush|none  ceiling on the write-back
 *                  (cvadp|cvap|cvac|none     (default: the best the CPU has)
 *                  on aarch64)
 *   NTMEM_VERBOSE  1|yes|true|on             print choices once to stderr,
 *                                            and every error's message
 *                  0|no|false|off|empty      (default: silent)
 *                  (any case; ntm_env_switch(); the libpmem and
 *                  libpmemblk drop-ins read it through ntm_verbose())
 *   NTMEM_NT_THRESHOLD  bytes (4k, 1m: binary suffixes)  below it,
 *                  ntm_memcpy_flush() into a destination that is not
 *                  8-byte aligned uses ordinary stores and write-backs
 *                  (default 256; `ntmem bench copy --calibrate`)
 *   NTMEM_PERSIST_DOMAIN  cpu_cache|memory_controller  the persistence
 *                  domain of every namespace and of ntm_persist() & co.
 *                  (default: each namespace's nd region in sysfs, and
 *                  memory_controller for memory outside namespaces)
 *
 * An unknown value of NTMEM_ISA, NTMEM_FLUSH, NTMEM_PERSIST_DOMAIN or
 * NTMEM_VERBOSE, or an NTMEM_NT_THRESHOLD that is not a size, is ignored
 * (NTMEM_VERBOSE is then off), and the dispatcher warns about it once on
 * stderr even without NTMEM_VERBOSE.
 *
 * Read once, by the dispatcher's first call; changing them later has no
 * effect in a running process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "copy_policy.h"
#include "env.h"
#include "ntmem/embed.h"	/* ntm_verbose() */

/* Levels are per architecture (NTM_ISA_NEON is level 1, as SSE2 is). */
static const char *const isa_names[] = {
	[NTM_ISA_GENERIC] = "generic",
#if defined(__aarch64__)
	[NTM_ISA_NEON] = "neon",
#else
	[NTM_ISA_SSE2] = "sse2",
	[NTM_ISA_AVX2] = "avx2",
	[NTM_ISA_AVX512] = "avx512",
#endif
};

/* Every instruction, whatever the build: a value names one instruction. */
static const char *const flush_names[] = {
	[NTM_FLUSH_NONE] = "none",
	[NTM_FLUSH_CLFLUSH] = "clflush",
	[NTM_FLUSH_CLFLUSHOPT] = "clflushopt",
	[NTM_FLUSH_CLWB] = "clwb",
	[NTM_FLUSH_DC_CVAC] = "cvac",
	[NTM_FLUSH_DC_CVAP] = "cvap",
	[NTM_FLUSH_DC_CVADP] = "cvadp",
};

static int index_of(const char *const *names, int count, const char *name)
{
	for (int i = 0; i < count; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

int ntm_isa_from_name(const char *name)
{
	return index_of(isa_names, (int)(sizeof(isa_names) / sizeof(*isa_names)), name);
}

int ntm_flush_from_name(const char *name)
{
	return index_of(flush_names, (int)(sizeof(flush_names) / sizeof(*flush_names)), name);
}

const char *ntm_flush_insn_name(enum ntm_flush_insn insn)
{
	if ((unsigned)insn < sizeof(flush_names) / sizeof(*flush_names))
		return flush_names[insn];
	return "unknown";
}

/*
 * Describe a value that was ignored in env->bad, one line each:
 * "VAR=VALUE ignored (WHY)". A typo silently ignored would leave the user
 * measuring the wrong variant, so the dispatcher prints these once.
 */
static void env_ignored(struct ntm_env *env, const char *var,
			const char *val, const char *why)
{
	size_t used = strlen(env->bad);

	snprintf(env->bad + used, sizeof(env->bad) - used, "%s%s=%s ignored (%s)",
		 used ? "\n" : "", var, val, why);
}

/*
 * Parse one variable that names one of @names; an unknown value is
 * described with the values that would have counted.
 */
static int read_cap(struct ntm_env *env, const char *var,
		    const char *const *names, int count)
{
	const char *val = getenv(var);
	char why[sizeof(env->bad)];
	size_t used;
	int cap;

	if (!val || !*val)
		return -1;
	cap = index_of(names, count, val);
	if (cap >= 0)
		return cap;
	used = (size_t)snprintf(why, sizeof(why), "unknown value; one of");
	for (int i = 0; i < count && used < sizeof(why); i++)
		used += (size_t)snprintf(why + used, sizeof(why) - used, "%c%s",
					 i ? '|' : ' ', names[i]);
	env_ignored(env, var, val, why);
	return -1;
}

/*
 * A size written as the ntmem tool's options are: decimal digits, no sign
 * and no leading zero, then optionally k, m, g or t (binary units). False
 * for anything else, and for a value that does not fit in a size_t.
 */
static bool parse_size(const char *s, size_t *out)
{
	size_t v = 0;
	unsigned shift = 0;

	if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (SIZE_MAX - (size_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (size_t)(*s - '0');
	}
	switch (*s) {
	case 'k': case 'K': shift = 10; s++; break;
	case 'm': case 'M': shift = 20; s++; break;
	case 'g': case 'G': shift = 30; s++; break;
	case 't': case 'T': shift = 40; s++; break;
	}
	if (*s || (shift && v > (SIZE_MAX >> shift)))
		return false;
	*out = v << shift;
	return true;
}

/*
 * NTMEM_NT_THRESHOLD: @def when unset or empty; a value that is not a size
 * is ignored and described in env->bad, as an unknown ceiling is.
 */
static size_t read_threshold(struct ntm_env *env, const char *var, size_t def)
{
	const char *val = getenv(var);
	size_t v;

	if (!val || !*val)
		return def;
	if (parse_size(val, &v))
		return v;
	env_ignored(env, var, val, "not a size in bytes: digits with an "
		    "optional k, m, g or t suffix");
	return def;
}

/*
 * An on/off variable's words. PMDK's libraries read their switches with
 * atoi(), which made "yes" off in the libpmem drop-in and on in ntmem:
 * one table now, and a word it does not hold is reported, not guessed.
 */
static const char *const switch_on[] = { "1", "yes", "true", "on" };
static const char *const switch_off[] = { "0", "no", "false", "off" };
#define SWITCH_WORDS (sizeof(switch_on) / sizeof(*switch_on))

int ntm_env_switch(const char *value)
{
	if (!value || !*value)
		return 0;
	for (size_t i = 0; i < SWITCH_WORDS; i++) {
		if (strcasecmp(value, switch_on[i]) == 0)
			return 1;
		if (strcasecmp(value, switch_off[i]) == 0)
			return 0;
	}
	return -1;
}

/* NTMEM_VERBOSE: off, and described in env->bad, for an unknown word. */
static bool read_switch(struct ntm_env *env, const char *var)
{
	const char *val = getenv(var);
	int on = ntm_env_switch(val);

	if (on >= 0)
		return on;
	env_ignored(env, var, val, "unknown value; on: 1|yes|true|on, off: "
		    "0|no|false|off, any case");
	return false;
}

/* NTMEM_PERSIST_DOMAIN's values: index + 1 is the enum ntm_persist_domain. */
static const char *const domain_names[] = {
	"memory_controller", "cpu_cache",
};

void ntm_env_read(struct ntm_env *env)
{
	int domain;

	env->bad[0] = '\0';
	env->isa_cap = read_cap(env, "NTMEM_ISA", isa_names,
				(int)(sizeof(isa_names) / sizeof(*isa_names)));
	env->flush_cap = read_cap(env, "NTMEM_FLUSH", flush_names,
				  (int)(sizeof(flush_names) / sizeof(*flush_names)));
	env->verbose = read_switch(env, "NTMEM_VERBOSE");
	env->nt_threshold = read_threshold(env, "NTMEM_NT_THRESHOLD",
					   NTM_NT_THRESHOLD_DEFAULT);
	domain = read_cap(env, "NTMEM_PERSIST_DOMAIN", domain_names,
			  (int)(sizeof(domain_names) / sizeof(*domain_names)));
	env->persist_domain = domain < 0 ? -1 : domain + NTM_PERSIST_MEMORY_CONTROLLER;
}

/* NTMEM_VERBOSE as the dispatcher's choice read it: -1 until it is made. */
static int verbose_chosen = -1;

void ntm_env_verbose_chosen(bool on)
{
	__atomic_store_n(&verbose_chosen, on, __ATOMIC_RELEASE);
}

bool ntm_verbose(void)
{
	int v = __atomic_load_n(&verbose_chosen, __ATOMIC_ACQUIRE);

	return v >= 0 ? v == 1 : ntm_env_switch(getenv("NTMEM_VERBOSE")) == 1;
}
