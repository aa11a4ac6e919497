// SPDX-License-Identifier: MIT
/*
 * check_print.c - a run's report printed: for a person (each bug with its
 * frames, performance notes with --perf, notes, how PROGRAM ended and a
 * summary that never says "0 errors" of a run that was not checked) or
 * as one JSON object (--json) that holds every record's line. Frames are
 * symbolized (check_symbols.c): the text shows "function file:line", the
 * JSON adds "<key>_src" beside each frames key.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_run.h"
#include "check_symbols.h"
#include "report.h"

/* What each kind of the contract is called in the text report. */
enum found { FOUND_point, FOUND_end, FOUND_transaction };

static const struct {
	const char *words;
	enum found found;
} bug_kinds[] = {
#define NTM_CHECK_BUG_KIND(id, name, found, words) \
	[BUG_##id] = { words, FOUND_##found },
#include <ntmem/check_report.def>
};

static const char *const perf_words[] = {
#define NTM_CHECK_PERF_KIND(id, name, words) [PERF_##id] = words,
#include <ntmem/check_report.def>
};

/* @s for a terminal: control characters (a newline in a path) as '?'. */
static void put_text(FILE *out, const char *s)
{
	for (; s && *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/* The "module+0xADDR" part of a frame as the library wrote it. */
static const char *frame_module(const char *frame)
{
	const char *open = strrchr(frame, '(');

	return open ? open + 1 : frame;
}

/*
 * The frames of a backtrace down to the program's main(): what lies below
 * it (libc's start-up code) is the same in every report and says nothing.
 * Each as "function file:line (module+0xADDR)" where that is known.
 * @exact_first: the first frame is a faulting instruction.
 */
static void put_frames(FILE *out, const char *label, const struct strv *s,
		       struct symbolizer *sym, bool exact_first)
{
	for (int i = 0; i < s->n; i++) {
		char src[1024];
		bool is_main;
		const char *mod = frame_module(s->v[i]);

		fprintf(out, "    %s: ", label);
		if (symbolize(sym, s->v[i], exact_first && i == 0, src,
			      sizeof(src), &is_main)) {
			put_text(out, src);
			fputs(" (", out);
			/* the module part, without the closing parenthesis
			 * the library's form has after it */
			fwrite(mod, 1, strcspn(mod, ")"), out);
			fputc(')', out);
		} else {
			put_text(out, s->v[i]);
		}
		fputc('\n', out);
		if (is_main || !strncmp(s->v[i], "main+", 5))
			break;
	}
}

/*
 * The headline's "when": a line found at a persistence point and still not
 * durable at unmap or exit names both; a line found at the end names it.
 */
static void put_when(FILE *out, const struct record *r)
{
	/* Found at the end: "point" is the unmap or exit itself. */
	bool at_end = bug_kinds[r->kind_id.bug].found == FOUND_end;

	/* A transaction bug: found at the program's next call into
	 * libpmemobj (its commit, say). */
	if (r->when_id == WHEN_TRANSACTION) {
		fputs(", found at ", out);
		put_text(out, r->point);
		return;
	}
	fputs(at_end ? " before " : " at ", out);
	put_text(out, r->point);
	if (!at_end && r->when_id != WHEN_POINT) {
		fputs(", still not durable at ", out);
		put_text(out, r->when);
	}
}

void print_human(FILE *out, const struct run_report *rr, bool perf,
		 long long child, const char *ended)
{
	char why[160];
	enum checked checked = run_checked(rr, why, sizeof(why));
	/* Which process said it, when more than one did. */
	bool many = rr->npids > 1;
	struct symbolizer *sym = symbolizer_new();

	for (int i = 0; i < rr->n; i++) {
		const struct record *r = &rr->rec[i];

		switch (r->type) {
		case REC_BUG:
			fprintf(out, "ntmem check: %s",
				bug_kinds[r->kind_id.bug].words);
			put_when(out, r);
			fputs(": ", out);
			if (r->file) {
				put_text(out, r->file);
			} else {
				fputs("anonymous memory at ", out);
				put_text(out, r->address);
			}
			fprintf(out, " offset %lld length %lld", r->offset, r->length);
			if (many)
				fprintf(out, " (pid %lld)", r->pid);
			fputc('\n', out);
			put_frames(out, "at", &r->backtrace, sym, false);
			put_frames(out, "first store", &r->first_store, sym, true);
			put_frames(out, "transaction begun", &r->tx_begin, sym,
				   false);
			break;
		case REC_PERF:
			if (!perf)
				break;
			fprintf(out, "ntmem check: performance: %lld %s",
				r->count, perf_words[r->kind_id.perf]);
			if (many)
				fprintf(out, " (pid %lld)", r->pid);
			fputc('\n', out);
			put_frames(out, "at", &r->site, sym, false);
			break;
		case REC_NOTE:
			fputs("ntmem check: note: ", out);
			put_text(out, r->message);
			if (many && !r->ours)
				fprintf(out, " (pid %lld)", r->pid);
			fputc('\n', out);
			break;
		case REC_END:
			break;	/* PROGRAM's is said below */
		case REC_START:
			break;	/* counted in what was checked */
		}
	}
	symbolizer_free(sym);
	fprintf(out, "ntmem check: pid %lld %s\n", child, ended);
	/* Never "0 errors" for a run that was not checked. */
	if (checked == CHECKED_NONE)
		fprintf(out, "ntmem check: not checked: %s (pid %lld", why, child);
	else
		fprintf(out, "ntmem check: %s%s%s%d error%s, %d performance "
			"note%s (pid %lld", checked == CHECKED_PART ?
			"checked in part, " : "", why, *why ? ": " : "",
			rr->errors, rr->errors == 1 ? "" : "s", rr->perf_notes,
			rr->perf_notes == 1 ? "" : "s", child);
	for (int i = 0; i < rr->npids; i++)
		if (rr->pids[i] != child)
			fprintf(out, ", %lld", rr->pids[i]);
	fputs(")\n", out);
}

/* The length of the UTF-8 sequence at @s, or 0 when it is not one. */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	int n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* no overlong forms, no surrogates, nothing past U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * A record's JSON line: JSON text is UTF-8, but a path (or a malformed
 * line quoted in a note) may hold any bytes. They can only be inside
 * strings (the reader takes nothing else), where \ufffd stands for each.
 */
static void put_json_utf8(FILE *out, const char *line)
{
	const unsigned char *s = (const unsigned char *)line;

	while (*s) {
		int n = utf8_len(s);

		if (n) {
			fwrite(s, 1, (size_t)n, out);
			s += n;
		} else {
			fputs("\\ufffd", out);
			s++;
		}
	}
}

/*
 * ,"@key_src":[...] for the frames @s: each symbolized as the text report
 * has it ("function file:line"), or null where nothing is known.
 */
static void put_src(FILE *out, const char *key, const struct strv *s,
		    struct symbolizer *sym, bool exact_first)
{
	if (!s->n)
		return;
	fprintf(out, ",\"%s_src\":[", key);
	for (int i = 0; i < s->n; i++) {
		char src[1024];
		bool is_main;

		if (i)
			fputc(',', out);
		if (symbolize(sym, s->v[i], exact_first && i == 0, src,
			      sizeof(src), &is_main))
			report_json_string(out, src);
		else
			fputs("null", out);
	}
	fputc(']', out);
}

/*
 * A record's line, with the symbolized frames added before its closing
 * brace (added keys only: every key the library wrote stays as it was).
 */
static void put_record_json(FILE *out, const struct record *r,
			    struct symbolizer *sym)
{
	size_t len = r->json ? strlen(r->json) : 0;
	char *head;

	if (!len || r->json[len - 1] != '}' ||
	    (r->type != REC_BUG && r->type != REC_PERF) || !sym ||
	    !(head = strndup(r->json, len - 1))) {
		put_json_utf8(out, r->json ? r->json : "null");
		return;
	}
	put_json_utf8(out, head);
	free(head);
	put_src(out, "backtrace", &r->backtrace, sym, false);
	put_src(out, "first_store", &r->first_store, sym, true);
	put_src(out, "tx_begin", &r->tx_begin, sym, false);
	put_src(out, "site", &r->site, sym, false);
	fputc('}', out);
}

void print_json(FILE *out, const struct run_report *rr, int status,
		const char *ended, bool judged)
{
	char why[160];
	enum checked checked = run_checked(rr, why, sizeof(why));
	struct symbolizer *sym = symbolizer_new();

	fprintf(out, "{\"errors\": %d, \"perf_notes\": %d, \"exit_status\": %d, "
		"\"ended\": ", rr->errors, rr->perf_notes, status);
	report_json_string(out, ended);
	fprintf(out, ", \"judged\": %s, \"reports\": [", judged ? "true" : "false");
	for (int i = 0; i < rr->n; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		put_record_json(out, &rr->rec[i], sym);
	}
	symbolizer_free(sym);
	fprintf(out, "%s], \"checked\": \"%s\", \"not_checked\": ",
		rr->n ? "\n" : "", checked_names[checked]);
	if (*why)
		report_json_string(out, why);
	else
		fputs("null", out);
	fputs("}\n", out);
}

