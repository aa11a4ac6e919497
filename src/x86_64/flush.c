// SPDX-License-Identifier: MIT
/*
 * x86_64/flush.c - cache-line write-back loops, one per instruction.
 *
 * None of them fences: CLWB and CLFLUSHOPT are weakly ordered and need the
 * caller's ntm_drain() (SFENCE). CLFLUSH is ordered against other stores
 * and CLFLUSHes, but the non-temporal stores around it are not, so callers
 * drain the same way whichever instruction is in use.
 */
#include "dispatch.h"
#include "flush.h"

/* First line that overlaps p, for a power-of-two line size. */
static inline uintptr_t line_down(const void *p, size_t line)
{
	return (uintptr_t)p & ~(uintptr_t)(line - 1);
}

/*
 * One primitive per instruction: the instruction and its report to the
 * recorder (ntmem/hook.h) together, so a loop that loses its write-back
 * loses the record too and the recorder sees the line left dirty.
 */
static inline __attribute__((always_inline)) void clwb_line(uintptr_t a)
{
	__asm__ volatile("clwb %0" : "+m"(*(volatile char *)a));
	NTM_REC(NTM_REC_WRITEBACK, (const void *)a, 1);
}

static inline __attribute__((always_inline)) void clflushopt_line(uintptr_t a)
{
	__asm__ volatile("clflushopt %0" : "+m"(*(volatile char *)a));
	NTM_REC(NTM_REC_WRITEBACK, (const void *)a, 1);
}

static inline __attribute__((always_inline)) void clflush_line(uintptr_t a)
{
	__asm__ volatile("clflush %0" : "+m"(*(volatile char *)a));
	NTM_REC(NTM_REC_WRITEBACK, (const void *)a, 1);
}

static void flush_clwb(const void *p, size_t n, size_t line)
{
	uintptr_t end = (uintptr_t)p + n;

	for (uintptr_t a = line_down(p, line); a < end; a += line)
		clwb_line(a);
}

static void flush_clflushopt(const void *p, size_t n, size_t line)
{
	uintptr_t end = (uintptr_t)p + n;

	for (uintptr_t a = line_down(p, line); a < end; a += line)
		clflushopt_line(a);
}

static void flush_clflush(const void *p, size_t n, size_t line)
{
	uintptr_t end = (uintptr_t)p + n;

	for (uintptr_t a = line_down(p, line); a < end; a += line)
		clflush_line(a);
}

/*
 * Write back and invalidate, for ntm_invalidate(): CLFLUSHOPT (CLFLUSH on
 * CPUs without it; CLWB may keep the line, which is the point of it), then
 * MFENCE. SFENCE would order the flushes only before later stores; the
 * reader's next accesses are loads, which MFENCE orders after every
 * earlier CLFLUSHOPT, so they miss and fetch what another host wrote.
 */
static inline __attribute__((always_inline)) void mfence_complete(void)
{
	__asm__ volatile("mfence" ::: "memory");
	NTM_REC(NTM_REC_FENCE, NULL, 0);
}

static void invalidate_clflushopt(const void *p, size_t n, size_t line)
{
	flush_clflushopt(p, n, line);
	mfence_complete();
}

static void invalidate_clflush(const void *p, size_t n, size_t line)
{
	flush_clflush(p, n, line);
	mfence_complete();
}

ntm_flush_fn ntm_invalidate_impl(uint32_t features)
{
	if (features & NTM_CPU_CLFLUSHOPT)
		return invalidate_clflushopt;
	/* CLFLUSH is baseline x86-64: every CPU has it. */
	return invalidate_clflush;
}

ntm_flush_fn ntm_flush_impl(enum ntm_flush_insn insn)
{
	switch (insn) {
	case NTM_FLUSH_CLWB:
		return flush_clwb;
	case NTM_FLUSH_CLFLUSHOPT:
		return flush_clflushopt;
	case NTM_FLUSH_CLFLUSH:
		return flush_clflush;
	case NTM_FLUSH_NONE:
	case NTM_FLUSH_DC_CVAC:	/* aarch64's: never selected here */
	case NTM_FLUSH_DC_CVAP:
	case NTM_FLUSH_DC_CVADP:
		break;
	}
	return NULL; /* nothing to write back */
}
