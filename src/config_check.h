/* SPDX-License-Identifier: MIT */
/*
 * config_check.h - the growth rule of the public config structs
 * (ntm_memmap_config, ntm_blk_config, ntm_btt_config, ntm_crash_config).
 * Never installed.
 *
 * Each struct ends in a flags word and reserved words. A later release
 * gives a flag bit or a reserved word a meaning whose zero is the
 * behaviour of today, so a program that zero-initialises its config
 * keeps working unchanged. Refusing what is not zero now is what makes
 * that safe the other way round: a program built for the later release
 * that sets a new field gets -EINVAL from an older library, which cannot
 * honour it, instead of being silently ignored.
 */
#ifndef NTMEM_CONFIG_CHECK_H
#define NTMEM_CONFIG_CHECK_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/*
 * 0 when @flags has no bit outside @known and every one of the @n words
 * of @reserved is 0; else -EINVAL with ntm_errmsg() naming the field
 * ("cfg->flags has unknown bits 0x..", "cfg->reserved[2] must be 0").
 * The caller checks before it allocates or writes anything.
 */
static inline int ntm_config_check(unsigned flags, unsigned known,
				   const uint64_t *reserved, size_t n)
{
	if (flags & ~known)
		return ntm_error(-EINVAL, "cfg->flags has unknown bits 0x%x",
				 flags & ~known);
	for (size_t i = 0; i < n; i++)
		if (reserved[i])
			return ntm_error(-EINVAL, "cfg->reserved[%zu] must be 0",
					 i);
	return 0;
}

/* The check for a config struct whose reserved words are @cfg->reserved. */
#define NTM_CONFIG_CHECK(cfg, known)                              \
	ntm_config_check((cfg)->flags, (known), (cfg)->reserved,  \
			 sizeof((cfg)->reserved) / sizeof((cfg)->reserved[0]))

#endif /* NTMEM_CONFIG_CHECK_H */
