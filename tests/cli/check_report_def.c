// SPDX-License-Identifier: MIT
/*
 * check_report_def.c - <ntmem/check_report.def> expanded as a parser of
 * one's own would (C99, only the installed headers' directory), for
 * check_report_def.sh:
 *
 *   names    each name of the contract, "LIST NAME" a line
 *   records  one line per record the contract allows: each bug kind at
 *            each when, each perf kind, each note kind and a plain note,
 *            each end how, a start; every key of the type, required and
 *            optional, with a value of its shape
 *   missing  each record type once without each key it requires
 *
 * `ntmem check` must take every line of "records" as a record and none of
 * "missing" as one.
 */
#include <stdio.h>
#include <string.h>

enum rec {
#define NTM_CHECK_RECORD(id, name) REC_##id,
#include <ntmem/check_report.def>
	NREC };

static const char *const rec_names[] = {
#define NTM_CHECK_RECORD(id, name) name,
#include <ntmem/check_report.def>
};

struct key {
	const char *name, *value;
};

/* A value of each shape, as the report has it. */
#define VALUE_string "\"x\""
#define VALUE_string_or_null "null"
#define VALUE_integer "1"
#define VALUE_strings "[\"f+0x1\",\"main+0x2\"]"

static const struct key keys[] = {
#define NTM_CHECK_KEY(key, shape) { #key, VALUE_##shape },
#include <ntmem/check_report.def>
};

struct has {
	enum rec rec;
	const char *key;
	int required;
};

static const struct has has[] = {
#define NTM_CHECK_RECORD_KEY(rec, key, presence) \
	{ REC_##rec, #key, PRESENCE_##presence },
#define PRESENCE_required 1
#define PRESENCE_optional 0
#include <ntmem/check_report.def>
};

static const char *const bug_kinds[] = {
#define NTM_CHECK_BUG_KIND(id, name, found, words) name,
#include <ntmem/check_report.def>
};
static const char *const bug_whens[] = {
#define NTM_CHECK_BUG_WHEN(id, name) name,
#include <ntmem/check_report.def>
};
static const char *const perf_kinds[] = {
#define NTM_CHECK_PERF_KIND(id, name, words) name,
#include <ntmem/check_report.def>
};
static const char *const end_hows[] = {
#define NTM_CHECK_END_HOW(id, name) name,
#include <ntmem/check_report.def>
};

#define N(a) (sizeof(a) / sizeof(*(a)))

static const char *value_of(const char *key)
{
	for (size_t i = 0; i < N(keys); i++)
		if (!strcmp(keys[i].name, key))
			return keys[i].value;
	return NULL;
}

/*
 * A record of @rec with every key it carries but @leave_out (NULL: none);
 * @kind, @when, @how: the values of those keys, NULL for the first of the
 * contract's (a note's kind: any string).
 */
static int record(enum rec rec, const char *leave_out, const char *kind,
		  const char *when, const char *how)
{
	if (!kind)
		kind = rec == REC_BUG ? bug_kinds[0] :
		       rec == REC_PERF ? perf_kinds[0] : "x";
	if (!when)
		when = bug_whens[0];
	if (!how)
		how = end_hows[0];
	printf("{\"type\":\"%s\"", rec_names[rec]);
	for (size_t i = 0; i < N(has); i++) {
		const char *k = has[i].key, *v = value_of(k);

		if (has[i].rec != rec || (leave_out && !strcmp(k, leave_out)))
			continue;
		if (!v) {
			fprintf(stderr, "key %s of a record has no shape\n", k);
			return 1;
		}
		if (!strcmp(k, "kind"))
			printf(",\"kind\":\"%s\"", kind);
		else if (!strcmp(k, "when"))
			printf(",\"when\":\"%s\"", when);
		else if (!strcmp(k, "how"))
			printf(",\"how\":\"%s\"", how);
		else
			printf(",\"%s\":%s", k, v);
	}
	puts("}");
	return 0;
}

static int names(void)
{
#define NTM_CHECK_RECORD(id, name) puts("record " name);
#define NTM_CHECK_KEY(key, shape) puts("key " #key);
#define NTM_CHECK_BUG_KIND(id, name, found, words) puts("bug-kind " name);
#define NTM_CHECK_BUG_WHEN(id, name) puts("bug-when " name);
#define NTM_CHECK_PERF_KIND(id, name, words) puts("perf-kind " name);
#define NTM_CHECK_NOTE_KIND(id, name) puts("note-kind " name);
#define NTM_CHECK_END_HOW(id, name) puts("end-how " name);
#include <ntmem/check_report.def>
	return 0;
}

static int records(void)
{
	int bad = 0;

	for (size_t k = 0; k < N(bug_kinds); k++)
		for (size_t w = 0; w < N(bug_whens); w++)
			bad |= record(REC_BUG, NULL, bug_kinds[k], bug_whens[w],
				      NULL);
	for (size_t k = 0; k < N(perf_kinds); k++)
		bad |= record(REC_PERF, NULL, perf_kinds[k], NULL, NULL);
#define NTM_CHECK_NOTE_KIND(id, name) \
	bad |= record(REC_NOTE, NULL, name, NULL, NULL);
#include <ntmem/check_report.def>
	for (size_t h = 0; h < N(end_hows); h++)
		bad |= record(REC_END, NULL, NULL, NULL, end_hows[h]);
	bad |= record(REC_NOTE, "kind", NULL, NULL, NULL);
	bad |= record(REC_START, NULL, NULL, NULL, NULL);
	return bad;
}

static int missing(void)
{
	int bad = 0;

	for (size_t i = 0; i < N(has); i++)
		if (has[i].required)
			bad |= record(has[i].rec, has[i].key, NULL, NULL, NULL);
	return bad;
}

int main(int argc, char **argv)
{
	const char *what = argc == 2 ? argv[1] : "";

	if (!strcmp(what, "names"))
		return names();
	if (!strcmp(what, "records"))
		return records();
	if (!strcmp(what, "missing"))
		return missing();
	fprintf(stderr, "usage: check_report_def names|records|missing\n");
	return 2;
}
