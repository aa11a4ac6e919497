// SPDX-License-Identifier: MIT
/*
 * inline_nocall.c - not run: compiled at -O2 into a static library whose
 * disassembly check_inline_nocall.sh inspects, to prove that a constant-size
 * copy of a fixed size really is inline.
 *
 * For every N of NTM_FIXED_SIZES, copyN (ntm_memcpy_nt front door), flushN
 * (ntm_memcpy_flush front door) and namedN (ntm_memcpy_nt_N) must contain
 * non-temporal stores and no call: copyN and namedN copy an unaligned
 * destination inline with ordinary stores (ntm_memcpy_nt()'s contract),
 * flushN calls its out-of-line ntm_memcpy_flush there, which writes the
 * lines back. copy_var and flush_var (a run-time size) must contain the
 * variable-size path's non-temporal stores (MOVNTDQ and the 8-byte
 * MOVNTI) and one reference to their door's out-of-line function, for
 * every other size. The control copy_60 (a constant without a fixed path)
 * must call or jump to ntm_memcpy_nt and store nothing itself, which
 * shows the check can see a call.
 */
#include <ntmem.h>

#define COPY_FNS(N)                                          \
	void *copy##N(void *d, const void *s);               \
	void *copy##N(void *d, const void *s)                \
	{                                                    \
		return ntm_memcpy_nt(d, s, N);               \
	}                                                    \
	void *flush##N(void *d, const void *s);              \
	void *flush##N(void *d, const void *s)               \
	{                                                    \
		return ntm_memcpy_flush(d, s, N);            \
	}                                                    \
	void *named##N(void *d, const void *s);              \
	void *named##N(void *d, const void *s)               \
	{                                                    \
		return ntm_memcpy_nt_##N(d, s);              \
	}
NTM_FIXED_SIZES(COPY_FNS)
#undef COPY_FNS

void *copy_var(void *d, const void *s, size_t n);
void *copy_var(void *d, const void *s, size_t n)
{
	return ntm_memcpy_nt(d, s, n);
}

void *flush_var(void *d, const void *s, size_t n);
void *flush_var(void *d, const void *s, size_t n)
{
	return ntm_memcpy_flush(d, s, n);
}

void *copy_60(void *d, const void *s);
void *copy_60(void *d, const void *s)
{
	return ntm_memcpy_nt(d, s, 60);
}
