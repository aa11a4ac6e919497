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
 *
 * A person's label is the line each drop-in prints when it is loaded and
 * NTMEM_VERBOSE is on (ntm_dropin_banner()): written once here, so the
 * drop-ins say it alike and by the same rule.
 */
#ifndef NTMEM_COMPAT_DROPIN_NOTE_H
#define NTMEM_COMPAT_DROPIN_NOTE_H

#include <stdbool.h>
#include <stdio.h>

#include <ntmem.h>		/* ntm_version(), ntm_variant_active(), ... */
#include <ntmem/embed.h>	/* ntm_verbose() */

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

/*
 * The note's counterpart at run time: the line that proves which library
 * a program loaded, "ntmem LIB VERSION: PMDK LIB MAJOR.MINOR drop-in",
 * printed by each drop-in's constructor when NTMEM_VERBOSE is on by
 * ntmem's one rule (ntm_verbose()), and nothing otherwise. With @copies,
 * the copy variant and write-back instruction the drop-in uses are named
 * too: asking makes ntmem's choice, so call it after
 * ntm_dispatch_set_caps(). One write of the whole line, so the lines of
 * drop-ins loaded together do not interleave.
 */
static inline void ntm_dropin_banner(const char *lib, int major, int minor,
				     bool copies)
{
	char line[256];
	int n;

	if (!ntm_verbose())
		return;
	n = snprintf(line, sizeof(line), "ntmem %s %s: PMDK %s %d.%d drop-in",
		     lib, ntm_version(), lib, major, minor);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	if (copies)
		snprintf(line + n, sizeof(line) - (size_t)n,
			 ", copies %s, write-back %s",
			 ntm_variant_name(ntm_variant_active()),
			 ntm_flush_insn_name(ntm_flush_active()));
	fprintf(stderr, "%s\n", line);
}

#endif /* NTMEM_COMPAT_DROPIN_NOTE_H */
