// SPDX-License-Identifier: MIT
/*
 * aarch64/flush.c - cache-line write-back loops, one per DC instruction:
 *
 *   DC CVAP   clean to the Point of Persistence (Armv8.2 DCPoP): what
 *             ntm_persist() needs; the default where the CPU has it.
 *   DC CVAC   clean to the Point of Coherency: every Armv8 CPU; the
 *             write-back of CPUs without DCPoP, as Linux's
 *             dcache_clean_pop() falls back to it.
 *   DC CVADP  clean to the Point of Deep Persistence (Armv8.5 DCPoDP),
 *             only when NTMEM_FLUSH=cvadp asks (see ntm_flush_select()).
 *
 * None of them waits: the caller's ntm_drain() (DSB SY, see
 * ntmem/arch/aarch64.h) completes them. The assembler of a baseline
 * Armv8.0 build does not know the names DC CVAP and DC CVADP, so they are
 * written as the SYS instructions they are (op1 3, CRn c7, op2 1; CRm c12
 * for CVAP, c13 for CVADP).
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
 * loses the record too and the recorder sees the line left dirty. The
 * "+m" operand ties the instruction to the line's memory, as a store
 * would be, without a blanket "memory" clobber.
 */
static inline __attribute__((always_inline)) void cvap_line(uintptr_t a)
{
	__asm__ volatile("sys #3, c7, c12, #1, %1"
			 : "+m"(*(volatile char *)a) : "r"(a));
	NTM_REC(NTM_REC_WRITEBACK, (const void *)a, 1);
}

static inline __attribute__((always_inline)) void cvac_line(uintptr_t a)
{
	__asm__ volatile("dc cvac, %1" : "+m"(*(volatile char *)a) : "r"(a));
	NTM_REC(NTM_REC_WRITEBACK, (const void *)a, 1);
}

static inline __attribute__((always_inline)) void cvadp_line(uintptr_t a)
{
	__asm__ volatile("sys #3, c7, c13, #1, %1"
			 : "+m"(*(volatile char *)a) : "r"(a));
	NTM_REC(NTM_REC_WRITEBACK, (const void *)a, 1);
}

/* Clean and invalidate to the Point of Coherency: a dirty line is written. */
static inline __attribute__((always_inline)) void civac_line(uintptr_t a)
{
	__asm__ volatile("dc civac, %1" : "+m"(*(volatile char *)a) : "r"(a));
	NTM_REC(NTM_REC_WRITEBACK, (const void *)a, 1);
}

static void flush_cvap(const void *p, size_t n, size_t line)
{
	uintptr_t end = (uintptr_t)p + n;

	for (uintptr_t a = line_down(p, line); a < end; a += line)
		cvap_line(a);
}

static void flush_cvac(const void *p, size_t n, size_t line)
{
	uintptr_t end = (uintptr_t)p + n;

	for (uintptr_t a = line_down(p, line); a < end; a += line)
		cvac_line(a);
}

static void flush_cvadp(const void *p, size_t n, size_t line)
{
	uintptr_t end = (uintptr_t)p + n;

	for (uintptr_t a = line_down(p, line); a < end; a += line)
		cvadp_line(a);
}

/*
 * DSB SY after the invalidation: the Arm ARM guarantees a DC CIVAC done
 * only after a DSB, and no instruction after a DSB executes before it
 * completes, so the reader's next loads cannot be satisfied from a line
 * the loop was dropping: they miss and fetch what another host wrote.
 * (A DMB would order the loads only as observed, not wait for the DC.)
 * SY for the reason ntm_arch_drain() gives; Linux's dcache_inval_poc()
 * also ends its DC CIVAC loop with DSB SY.
 */
static inline __attribute__((always_inline)) void dsb_complete(void)
{
	__asm__ volatile("dsb sy" ::: "memory");
	NTM_REC(NTM_REC_FENCE, NULL, 0);
}

static void invalidate_civac(const void *p, size_t n, size_t line)
{
	uintptr_t end = (uintptr_t)p + n;

	for (uintptr_t a = line_down(p, line); a < end; a += line)
		civac_line(a);
	dsb_complete();
}

ntm_flush_fn ntm_invalidate_impl(uint32_t features)
{
	if (features & NTM_CPU_DC_CVAC)
		return invalidate_civac;
	return NULL;
}

ntm_flush_fn ntm_flush_impl(enum ntm_flush_insn insn)
{
	switch (insn) {
	case NTM_FLUSH_DC_CVADP:
		return flush_cvadp;
	case NTM_FLUSH_DC_CVAP:
		return flush_cvap;
	case NTM_FLUSH_DC_CVAC:
		return flush_cvac;
	case NTM_FLUSH_NONE:
	case NTM_FLUSH_CLFLUSH:	/* x86-64's: never selected here */
	case NTM_FLUSH_CLFLUSHOPT:
	case NTM_FLUSH_CLWB:
		break;
	}
	return NULL; /* nothing to write back */
}
