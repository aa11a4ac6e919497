/* SPDX-License-Identifier: MIT */
/*
 * aarch64/copy_mc.S - a read that survives SIGBUS, with no system call and
 * no sigsetjmp on its path, as x86_64/copy_mc.S: the SIGBUS handler in
 * mc.c recognises a fault at one of the two labelled loads below (the pc
 * of the interrupted context, uc_mcontext.pc) and moves it to the
 * matching fixup, so the copy returns instead of dying.
 *
 * size_t ntm_copy_mc_asm(void *dst, const void *src, size_t n)
 * returns the number of bytes NOT copied (0 on success).
 *
 * The bulk copy moves 32 bytes per load (LDP of a Q-register pair). A
 * faulting load changes no address register (x0-x2 are advanced only
 * after the store), so the fixup resumes byte by byte at the same x1, to
 * find the exact first byte that cannot be read; a fault on that byte
 * load returns x2, the bytes left. Only v0, v1 and x3 are used, all
 * caller-saved in the AAPCS64.
 */
	.text

	.globl	ntm_copy_mc_asm
	.hidden	ntm_copy_mc_asm
	.type	ntm_copy_mc_asm, %function
	.globl	ntm_copy_mc_bulk, ntm_copy_mc_tail, ntm_copy_mc_byte, ntm_copy_mc_fail
	.hidden	ntm_copy_mc_bulk, ntm_copy_mc_tail, ntm_copy_mc_byte, ntm_copy_mc_fail
	.p2align 4
ntm_copy_mc_asm:
	cmp	x2, #32
	b.lo	ntm_copy_mc_tail
ntm_copy_mc_bulk:			/* may fault: handler -> ntm_copy_mc_tail */
	ldp	q0, q1, [x1]
	stp	q0, q1, [x0]
	add	x1, x1, #32
	add	x0, x0, #32
	sub	x2, x2, #32
	cmp	x2, #32
	b.hs	ntm_copy_mc_bulk

ntm_copy_mc_tail:			/* the rest, or a retry from the fault */
	cbz	x2, 2f
ntm_copy_mc_byte:			/* may fault: handler -> ntm_copy_mc_fail */
	ldrb	w3, [x1]
	strb	w3, [x0]
	add	x1, x1, #1
	add	x0, x0, #1
	subs	x2, x2, #1
	b.ne	ntm_copy_mc_byte
2:	mov	x0, #0
	ret

ntm_copy_mc_fail:			/* x2 bytes, from x1 on, were not copied */
	mov	x0, x2
	ret
	.size	ntm_copy_mc_asm, . - ntm_copy_mc_asm

	.section .note.GNU-stack, "", %progbits
