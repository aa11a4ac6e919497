// SPDX-License-Identifier: MIT
/*
 * portable/flush.c - no write-back instruction is known here, so there is
 * nothing to flush; ntm_flush_active() reports "none" and callers that need
 * durability must use msync() (the namespace layer does).
 */
#include "internal.h"

ntm_flush_fn ntm_flush_impl(enum ntm_flush_insn insn)
{
	(void)insn;
	return NULL;
}
