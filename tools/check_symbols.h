/* SPDX-License-Identifier: MIT */
/*
 * check_symbols.h - the frames of `ntmem check`'s reports as "function
 * file:line" (check_symbols.c: elfutils' libdwfl over the program's and
 * its libraries' symbol and DWARF line tables).
 */
#ifndef NTMEM_TOOL_CHECK_SYMBOLS_H
#define NTMEM_TOOL_CHECK_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>

struct symbolizer;

/* A symbolizer that keeps the files it opened; NULL: none (a build
 * without libdw, or no memory), which symbolize() accepts. */
struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *s);

/*
 * @frame, as the checking library wrote it, into @buf (@n bytes) as
 * "function file:line", or "function+0xOFF" where the module has no line
 * table. @exact: the frame is the faulting instruction itself (a first
 * store's first frame), not a return address. *@is_main: the function is
 * main(). False when nothing is known (@buf untouched): the frame keeps
 * its form.
 */
bool symbolize(struct symbolizer *s, const char *frame, bool exact,
	       char *buf, size_t n, bool *is_main);

#endif /* NTMEM_TOOL_CHECK_SYMBOLS_H */
