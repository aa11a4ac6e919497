/* SPDX-License-Identifier: MIT */
/*
 * x86_64/copy_mc.S - a read that survives SIGBUS, with no system call and
 * no sigsetjmp on its path: like the kernel's exception table, the SIGBUS
 * handler in mc.c recognises a fault at one of the two labelled loads
 * below and moves the interrupted context's instruction pointer to the
 * matching fixup, so the copy returns instead of dying.
 *
 * size_t ntm_copy_mc_asm(void *dst, const void *src, size_t n)
 * returns the number of bytes NOT copied (0 on success).
 *
 * The bulk copy is REP MOVSB (fast with ERMS/FSRM): on a fault it stops
 * with RSI, RDI and RCX at the faulting byte, as a restartable string
 * instruction must. The fixup then copies byte by byte from there, to
 * find the exact first byte that cannot be read; a fault on that byte
 * load returns RCX, the bytes left.
 */
	.text

	.globl	ntm_copy_mc_asm
	.hidden	ntm_copy_mc_asm
	.type	ntm_copy_mc_asm, @function
	.globl	ntm_copy_mc_bulk, ntm_copy_mc_tail, ntm_copy_mc_byte, ntm_copy_mc_fail
	.hidden	ntm_copy_mc_bulk, ntm_copy_mc_tail, ntm_copy_mc_byte, ntm_copy_mc_fail
	.p2align 4
ntm_copy_mc_asm:
	movq	%rdx, %rcx
ntm_copy_mc_bulk:			/* may fault: handler -> ntm_copy_mc_tail */
	rep movsb
	xorl	%eax, %eax
	ret

ntm_copy_mc_tail:			/* retry from the faulting position */
	testq	%rcx, %rcx
	jz	2f
ntm_copy_mc_byte:			/* may fault: handler -> ntm_copy_mc_fail */
	movb	(%rsi), %al
	movb	%al, (%rdi)
	incq	%rsi
	incq	%rdi
	decq	%rcx
	jnz	ntm_copy_mc_byte
2:	xorl	%eax, %eax
	ret

ntm_copy_mc_fail:			/* RCX bytes, from RSI on, were not copied */
	movq	%rcx, %rax
	ret
	.size	ntm_copy_mc_asm, . - ntm_copy_mc_asm

	.section .note.GNU-stack, "", @progbits
