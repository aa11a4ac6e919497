// SPDX-License-Identifier: MIT
/*
 * portable/flush.c - no write-back instruction is known here, so there is
 * nothing to flush; ntm_flush_active() reports "none" and callers that need
 * durability must use msync() (the namespace layer does).
 * A port that adds a write-back instruction here wraps it in an
 * always_inline primitive with NTM_REC(NTM_REC_WRITEBACK, line, 1) beside
 * it, as x86_64/flush.c does, so the recorder build sees every line.
 */
#include "dispatch.h"
#include "flush.h"

ntm_flush_fn ntm_flush_impl(enum ntm_flush_insn insn)
{
	(void)insn;
	return NULL;
}

ntm_flush_fn ntm_invalidate_impl(uint32_t features)
{
	(void)features;
	return NULL;
}
