// SPDX-License-Identifier: MIT
/*
 * check_symbols.c - the frames of `ntmem check`'s reports as a user reads
 * them: "function file:line", from the program's and its libraries'
 * symbol tables and DWARF line tables, read with elfutils' libdwfl (the
 * library made for it: it finds separate debug files too, by build id and
 * .gnu_debuglink). The checking library writes each frame as
 * "symbol+0xOFF (module+0xADDR)" or "module+0xADDR" (ADDR: from the
 * module's load address, which is its lowest segment's); a frame that
 * cannot be resolved keeps that form.
 *
 * Built without libdw (HAVE_LIBDW unset), every frame keeps its form.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_symbols.h"

#ifdef HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

/* Modules looked up per report: the program and its libraries. */
#define MAX_MODULES 64

struct module {
	char *path;
	Dwfl *dwfl;		/* NULL: the file could not be read */
	Dwfl_Module *mod;
	Dwarf_Addr low;		/* where its lowest segment is */
};

struct symbolizer {
	struct module m[MAX_MODULES];
	int n;
};

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

struct symbolizer *symbolizer_new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->n; i++) {
		if (s->m[i].dwfl)
			dwfl_end(s->m[i].dwfl);
		free(s->m[i].path);
	}
	free(s);
}

/* The module of @path, opened once; NULL when it cannot be. */
static struct module *module_of(struct symbolizer *s, const char *path)
{
	struct module *m;

	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->m[i].path, path))
			return s->m[i].dwfl ? &s->m[i] : NULL;
	if (s->n == MAX_MODULES || !(s->m[s->n].path = strdup(path)))
		return NULL;
	m = &s->m[s->n++];
	/* One session per file: offline, each is laid out at its own
	 * addresses, which two libraries would share. */
	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl)
		return NULL;
	m->mod = dwfl_report_offline(m->dwfl, path, path, -1);
	if (!m->mod || dwfl_report_end(m->dwfl, NULL, NULL)) {
		dwfl_end(m->dwfl);
		m->dwfl = NULL;
		return NULL;
	}
	dwfl_module_info(m->mod, NULL, &m->low, NULL, NULL, NULL, NULL, NULL);
	return m;
}

/*
 * Splits a frame into its module's path (into @path) and the address
 * from the module's start: "sym+0xO (path+0xA)" or "path+0xA".
 */
static bool parse_frame(const char *frame, char *path, size_t n,
			uint64_t *addr)
{
	const char *open = strrchr(frame, '(');
	const char *start = open ? open + 1 : frame;
	const char *end = open ? strrchr(start, ')') : frame + strlen(frame);
	const char *plus;
	char *stop;

	if (!end || *start != '/')
		return false;
	for (plus = end; plus > start && *plus != '+'; plus--)
		;
	if (plus == start || (size_t)(plus - start) >= n)
		return false;
	*addr = strtoull(plus + 1, &stop, 16);
	if (stop != end)
		return false;
	memcpy(path, start, (size_t)(plus - start));
	path[plus - start] = '\0';
	return true;
}

/*
 * A line table's file name as a path a user can open: one relative to
 * the compilation's directory @dir ("../tests/x.c" of a build directory)
 * is joined to it and resolved. Into @buf (@n bytes).
 */
static const char *source_path(const char *dir, const char *file, char *buf,
			       size_t n)
{
	char joined[4096], *real;

	if (file[0] == '/' || !dir || snprintf(joined, sizeof(joined), "%s/%s", dir, file) >=
	    (int)sizeof(joined))
		return file;
	real = realpath(joined, NULL);
	snprintf(buf, n, "%s", real ? real : joined);
	free(real);
	return buf;
}

/* The source file @idx of the CU @cu's file table, or NULL. */
static const char *cu_file(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t nfiles;

	if (dwarf_getsrcfiles(cu, &files, &nfiles) || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* The name of @die, through its abstract origin (an inlined copy's). */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

/*
 * "function file:line" of a code address, into @buf: the function the
 * line table's row (@file, @lineno) is in, which is an inlined one where
 * the address is in code the compiler inlined, then for each level out
 * ", inlined in NAME FILE:LINE" (its call site), as a debugger's frames
 * would show them. @name: the symbol (the outermost function).
 */
static void with_inlines(Dwfl_Module *mod, Dwarf_Addr addr, const char *name,
			 const char *file, int lineno, char *buf, size_t n)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, &bias);
	Dwarf_Die *scopes = NULL;
	int nscopes = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	const char *inner = NULL;
	int i;

	/* Scopes run from the innermost out. */
	for (i = 0; i < nscopes; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine)
			break;
	if (i < nscopes)
		inner = die_name(&scopes[i]);
	snprintf(buf, n, "%s %s:%d", inner ? inner : name ? name : "??", file,
		 lineno);
	for (; i < nscopes; i++) {
		Dwarf_Attribute a;
		Dwarf_Word cfile, cline;
		const char *outer = NULL, *cf;
		char path[4096];
		size_t len;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine ||
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cfile) ||
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cline) ||
		    !(cf = cu_file(cu, cfile)))
			continue;
		/* The call is in the next function out. */
		for (int j = i + 1; j < nscopes && !outer; j++)
			if (dwarf_tag(&scopes[j]) == DW_TAG_inlined_subroutine ||
			    dwarf_tag(&scopes[j]) == DW_TAG_subprogram)
				outer = die_name(&scopes[j]);
		cf = source_path(dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &a)),
				 cf, path, sizeof(path));
		len = strlen(buf);
		snprintf(buf + len, n - len, ", inlined in %s %s:%llu",
			 outer ? outer : name ? name : "??", cf,
			 (unsigned long long)cline);
	}
	free(scopes);
}

bool symbolize(struct symbolizer *s, const char *frame, bool exact,
	       char *buf, size_t n, bool *is_main)
{
	char path[4096], src[4096];
	uint64_t off;
	struct module *m;
	Dwarf_Addr pc, lookup, row = 0;
	const char *name, *file;
	Dwfl_Line *line;
	GElf_Off sym_off = 0;
	GElf_Sym sym;
	int lineno = 0;

	*is_main = false;
	if (!s || !parse_frame(frame, path, sizeof(path), &off) ||
	    !(m = module_of(s, path)))
		return false;
	pc = m->low + off;
	/* A return address is the instruction after the call: its line is
	 * the call's only when looked up one byte back. */
	lookup = exact || !pc ? pc : pc - 1;
	name = dwfl_module_addrinfo(m->mod, lookup, &sym_off, &sym, NULL, NULL,
				    NULL);
	line = dwfl_module_getsrc(m->mod, lookup);
	file = line ? dwfl_lineinfo(line, &row, &lineno, NULL, NULL, NULL) : NULL;
	/* A row that starts before the function is another's (code with no
	 * line table of its own, as crt1's _start, finds its neighbour's). */
	if (file && name && row < lookup - sym_off)
		file = NULL;
	if (file)
		file = source_path(dwfl_line_comp_dir(line), file, src,
				   sizeof(src));
	if (!name && !file)
		return false;
	*is_main = name && !strcmp(name, "main");
	if (file && lineno > 0)
		with_inlines(m->mod, lookup, name, file, lineno, buf, n);
	else
		snprintf(buf, n, "%s+%#" PRIx64, name,
			 (uint64_t)(sym_off + (lookup != pc)));
	return true;
}

#else /* !HAVE_LIBDW */

struct symbolizer {
	int unused;
};

struct symbolizer *symbolizer_new(void)
{
	return NULL;
}

void symbolizer_free(struct symbolizer *s)
{
	(void)s;
}

bool symbolize(struct symbolizer *s, const char *frame, bool exact,
	       char *buf, size_t n, bool *is_main)
{
	(void)s, (void)frame, (void)exact, (void)buf, (void)n;
	*is_main = false;
	return false;
}

#endif /* HAVE_LIBDW */
