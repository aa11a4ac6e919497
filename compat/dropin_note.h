/* SPDX-License-Identifier: MIT */
/*
 * dropin_note.h - an ELF note that marks a shared object as one of
 * ntmem's drop-ins for a PMDK library.
 *
 * The drop-ins carry PMDK's sonames and export exactly PMDK's symbols, so
 * nothing in their dynamic interface tells them apart from PMDK. A tool
 * that loads "libpmem.so.1" as PMDK, to measure ntmem against it, must
 * not end up measuring ntmem against itself when the drop-ins are the
 * system's (ntmem-pmem-system) or on LD_LIBRARY_PATH: it looks for this
 * note in the loaded object's PT_NOTE segments (tools/peer_pmdk.c).
 *
 * A note is the ELF way to label a file: it is loaded with the object
 * (no file reading), costs one small read-only section and leaves the
 * symbol table as PMDK's.
 */
#ifndef NTMEM_COMPAT_DROPIN_NOTE_H
#define NTMEM_COMPAT_DROPIN_NOTE_H

/* The note's name (owner) and type ("NT", 1): no suffix, it is stringified. */
#define NTM_DROPIN_NOTE_NAME "ntmem"
#define NTM_DROPIN_NOTE_TYPE 0x4e540001
#define NTM_DROPIN_NOTE_STR_(x) #x
#define NTM_DROPIN_NOTE_STR(x) NTM_DROPIN_NOTE_STR_(x)

/*
 * NTM_DROPIN_NOTE("libpmem") at file scope: the note, its descriptor the
 * PMDK library the object replaces. Written in assembly because only a
 * section of type SHT_NOTE is placed in a PT_NOTE segment, and C cannot
 * give a section that type ("%note", not "@note": "@" starts a comment in
 * some assemblers, 32-bit Arm's). Name and descriptor are padded to 4
 * bytes.
 */
#define NTM_DROPIN_NOTE(lib)                                                 \
	__asm__(".pushsection .note.ntmem, \"a\", %note\n"                    \
		".balign 4\n"                                                 \
		".long 2f - 1f\n"		/* namesz */                  \
		".long 4f - 3f\n"		/* descsz */                  \
		".long " NTM_DROPIN_NOTE_STR(NTM_DROPIN_NOTE_TYPE) "\n"       \
		"1: .asciz \"" NTM_DROPIN_NOTE_NAME "\"\n"                    \
		"2: .balign 4\n"                                              \
		"3: .asciz \"" lib "\"\n"                                     \
		"4: .balign 4\n"                                              \
		".popsection\n")

#endif /* NTMEM_COMPAT_DROPIN_NOTE_H */
