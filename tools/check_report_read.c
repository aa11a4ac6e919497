// SPDX-License-Identifier: MIT
/*
 * check_report_read.c - the report file read back: each line one record
 * of the contract (<ntmem/check_report.def>), read by a strict JSON
 * reader; a line that is none is kept as a note of ours that says where
 * and why, never guessed at.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_run.h"
#include "report.h"

/*
 * A strict reader of one report line: a JSON object whose values are
 * strings, non-negative integers, null or arrays of strings - the only
 * shapes the contract's records have. Anything else (a nested object, a
 * fraction, a truncated line) makes the line malformed: it is shown as a
 * note, never guessed at.
 */
struct jp {
	const char *start, *p;
	const char *err;	/* what was expected where p stopped */
};

static bool fail(struct jp *j, const char *what)
{
	if (!j->err)
		j->err = what;
	return false;
}

static void skip_ws(struct jp *j)
{
	while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
		j->p++;
}

static int hex4(const char *p)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		int c = p[i], d;

		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return -1;
		v = v * 16 + d;
	}
	return v;
}

static char *put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | cp >> 18);
		*o++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/* A string, decoded into *@out (malloc'ed). */
static bool jstring(struct jp *j, char **out)
{
	const char *p = j->p;
	char *buf, *o;

	if (*p != '"')
		return fail(j, "a string");
	/* Decoding never lengthens: \uXXXX is 6 bytes for at most 3. */
	buf = o = malloc(strlen(p) + 1);
	if (!buf)
		return fail(j, "memory for a string");
	for (p++; *p != '"'; p++) {
		unsigned char c = (unsigned char)*p;
		int u, lo;

		if (c == '\0' || c < 0x20) {
			j->p = p;
			free(buf);
			return fail(j, c ? "no control character in a string"
					 : "the string's closing quote");
		}
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		switch (*++p) {
		case '"': case '\\': case '/': *o++ = *p; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			u = hex4(p + 1);
			if (u < 0)
				goto bad_escape;
			p += 4;
			if (u >= 0xd800 && u < 0xdc00) {
				lo = p[1] == '\\' && p[2] == 'u' ? hex4(p + 3) : -1;
				if (lo < 0xdc00 || lo >= 0xe000)
					goto bad_escape;
				u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
				p += 6;
			} else if ((u >= 0xdc00 && u < 0xe000) || u == 0) {
				/* a lone low surrogate; NUL ends a C string */
				goto bad_escape;
			}
			o = put_utf8(o, (unsigned)u);
			break;
		default:
			goto bad_escape;
		}
	}
	*o = '\0';
	j->p = p + 1;
	*out = buf;
	return true;
bad_escape:
	j->p = p;
	free(buf);
	return fail(j, "a valid escape in a string");
}

/* A whole non-negative number: no sign, fraction, exponent or leading 0. */
static bool jint(struct jp *j, long long *out)
{
	const char *p = j->p;
	long long v = 0;

	if (*p < '0' || *p > '9')
		return fail(j, "a non-negative integer");
	if (p[0] == '0' && p[1] >= '0' && p[1] <= '9')
		return fail(j, "an integer without leading zeros");
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (LLONG_MAX - (*p - '0')) / 10)
			return fail(j, "an integer that fits in 63 bits");
		v = v * 10 + (*p - '0');
	}
	if (*p == '.' || *p == 'e' || *p == 'E') {
		j->p = p;
		return fail(j, "an integer");
	}
	j->p = p;
	*out = v;
	return true;
}

static void strv_free(struct strv *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = 0;
}

/* An array of strings (the frames of a backtrace). */
static bool jstrv(struct jp *j, struct strv *out)
{
	struct strv s = { 0 };

	if (*j->p != '[')
		return fail(j, "an array of strings");
	j->p++;
	skip_ws(j);
	if (*j->p == ']') {
		j->p++;
		*out = s;
		return true;
	}
	for (;;) {
		char *str, **v;

		skip_ws(j);
		if (!jstring(j, &str))
			goto bad;
		v = realloc(s.v, (size_t)(s.n + 1) * sizeof(*v));
		if (!v) {
			free(str);
			fail(j, "memory for an array");
			goto bad;
		}
		s.v = v;
		s.v[s.n++] = str;
		skip_ws(j);
		if (*j->p == ']')
			break;
		if (*j->p != ',') {
			fail(j, "',' or ']' in an array");
			goto bad;
		}
		j->p++;
	}
	j->p++;
	*out = s;
	return true;
bad:
	strv_free(&s);
	return false;
}

/* The shapes of the contract's values (<ntmem/check_report.def>). */
enum shape { SHAPE_string, SHAPE_string_or_null, SHAPE_integer, SHAPE_strings };

struct field {
	const char *key;
	enum shape shape;
	size_t off;
};

/*
 * Where each key of the contract goes, in the member of struct record of
 * its name (a key without one does not compile); "type" is read on its
 * own. A key's index here is its bit in the masks below.
 */
static const struct field fields[] = {
#define NTM_CHECK_KEY(key, shape) \
	{ #key, SHAPE_##shape, offsetof(struct record, key) },
#include <ntmem/check_report.def>
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

enum key_index {
#define NTM_CHECK_KEY(key, shape) KEY_##key,
#include <ntmem/check_report.def>
};

_Static_assert(NFIELDS <= sizeof(unsigned) * CHAR_BIT,
	       "a bit of an unsigned for each key of the contract");

static void free_string(char **s) { free(*s); }
static void free_string_or_null(char **s) { free(*s); }
static void free_integer(long long *n) { (void)n; }
static void free_strings(struct strv *s) { strv_free(s); }

static void record_free(struct record *r)
{
#define NTM_CHECK_KEY(key, shape) free_##shape(&r->key);
#include <ntmem/check_report.def>
	free(r->json);
}

/*
 * A value of a key this reader does not know: read with the same strict
 * rules and dropped (a newer checking library may add keys; the line is
 * kept whole in --json output).
 */
static bool skip_value(struct jp *j)
{
	char *s;
	long long n;
	struct strv v;

	if (*j->p == '"') {
		if (!jstring(j, &s))
			return false;
		free(s);
		return true;
	}
	if (*j->p == '[') {
		if (!jstrv(j, &v))
			return false;
		strv_free(&v);
		return true;
	}
	if (!strncmp(j->p, "null", 4)) {
		j->p += 4;
		return true;
	}
	return jint(j, &n);
}

/* The names of each list of the contract, by the reader's ids (check_run.h). */
static const char *const rec_names[] = {
#define NTM_CHECK_RECORD(id, name) [REC_##id] = name,
#include <ntmem/check_report.def>
};
static const char *const bug_kinds[] = {
#define NTM_CHECK_BUG_KIND(id, name, found, words) [BUG_##id] = name,
#include <ntmem/check_report.def>
};
static const char *const bug_whens[] = {
#define NTM_CHECK_BUG_WHEN(id, name) [WHEN_##id] = name,
#include <ntmem/check_report.def>
};
static const char *const perf_kinds[] = {
#define NTM_CHECK_PERF_KIND(id, name, words) [PERF_##id] = name,
#include <ntmem/check_report.def>
};
static const char *const note_kinds[] = {
	[NOTE_PLAIN] = NULL,
#define NTM_CHECK_NOTE_KIND(id, name) [NOTE_##id] = name,
#include <ntmem/check_report.def>
};
static const char *const end_hows[] = {
#define NTM_CHECK_END_HOW(id, name) [HOW_##id] = name,
#include <ntmem/check_report.def>
};
#define NAMES(list) list, sizeof(list) / sizeof(*list)

/* The index of @s in @list, or -1 when it is none of its names. */
static int name_index(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; s && i < n; i++)
		if (list[i] && !strcmp(s, list[i]))
			return (int)i;
	return -1;
}

/* The keys each record type must have, as bits of fields[]. */
static unsigned need_mask(enum rec_type t)
{
	static const struct {
		enum rec_type type;
		enum key_index key;
		bool required;
	} has[] = {
#define NTM_CHECK_RECORD_KEY(rec, key, presence) \
		{ REC_##rec, KEY_##key, PRESENCE_##presence },
#define PRESENCE_required true
#define PRESENCE_optional false
#include <ntmem/check_report.def>
#undef PRESENCE_required
#undef PRESENCE_optional
	};
	unsigned mask = 0;

	for (size_t i = 0; i < sizeof(has) / sizeof(*has); i++)
		if (has[i].type == t && has[i].required)
			mask |= 1u << has[i].key;
	return mask;
}

/*
 * What a line whose "type" is none of the contract's was expected to
 * have: "\"type\" bug, perf, note, end or start".
 */
static const char *expected_type(void)
{
	static char what[128];
	size_t n = sizeof(rec_names) / sizeof(*rec_names), len;

	if (*what)
		return what;
	len = (size_t)snprintf(what, sizeof(what), "\"type\"");
	for (size_t i = 0; i < n && len < sizeof(what); i++)
		len += (size_t)snprintf(what + len, sizeof(what) - len, "%s%s",
					!i ? " " : i + 1 < n ? ", " : " or ",
					rec_names[i]);
	return what;
}

/* The value of a known key @f into @r. */
static bool field_value(struct jp *j, const struct field *f, struct record *r)
{
	void *dest = (char *)r + f->off;

	switch (f->shape) {
	case SHAPE_string_or_null:
		if (!strncmp(j->p, "null", 4)) {
			j->p += 4;
			return true;
		}
		/* fall through */
	case SHAPE_string:
		return jstring(j, (char **)dest);
	case SHAPE_integer:
		return jint(j, (long long *)dest);
	case SHAPE_strings:
		return jstrv(j, (struct strv *)dest);
	}
	return fail(j, "a known shape of value");
}

/*
 * The kind, when and how of @r (a record of a known type with its keys)
 * resolved to the reader's ids: false when one is none of the contract's.
 * A note's kind is free: one this reader does not know is a plain note.
 */
static bool resolve_names(struct record *r)
{
	int kind, when, how;

	switch (r->type) {
	case REC_BUG:
		kind = name_index(r->kind, NAMES(bug_kinds));
		when = name_index(r->when, NAMES(bug_whens));
		if (kind < 0 || when < 0)
			return false;
		r->kind_id.bug = (enum bug_kind)kind;
		r->when_id = (enum bug_when)when;
		return true;
	case REC_PERF:
		kind = name_index(r->kind, NAMES(perf_kinds));
		if (kind < 0)
			return false;
		r->kind_id.perf = (enum perf_kind)kind;
		return true;
	case REC_NOTE:
		kind = name_index(r->kind, NAMES(note_kinds));
		r->kind_id.note = kind < 0 ? NOTE_PLAIN : (enum note_kind)kind;
		return true;
	case REC_END:
		how = name_index(r->how, NAMES(end_hows));
		if (how < 0)
			return false;
		r->how_id = (enum end_how)how;
		return true;
	case REC_START:
		return true;
	}
	return false;
}

/* Parse @line into @r: true, or false with the reason in @j->err. */
static bool parse_record(const char *line, struct record *r, struct jp *j)
{
	char *type = NULL, *key = NULL;
	unsigned seen = 0, need;
	int t;

	memset(r, 0, sizeof(*r));
	j->start = j->p = line;
	j->err = NULL;
	skip_ws(j);
	if (*j->p != '{')
		return fail(j, "'{'");
	j->p++;
	skip_ws(j);
	while (*j->p != '}') {
		const struct field *f = NULL;
		bool ok;

		if (!jstring(j, &key))
			goto bad;
		skip_ws(j);
		if (*j->p != ':') {
			fail(j, "':'");
			goto bad;
		}
		j->p++;
		skip_ws(j);
		for (size_t i = 0; i < NFIELDS; i++)
			if (!strcmp(key, fields[i].key)) {
				f = &fields[i];
				if (seen & (1u << i)) {
					fail(j, "each key once");
					goto bad;
				}
				seen |= 1u << i;
			}
		if (!strcmp(key, "type")) {
			ok = !type ? jstring(j, &type) : fail(j, "one \"type\"");
		} else if (f) {
			ok = field_value(j, f, r);
		} else {
			ok = skip_value(j);
		}
		if (!ok)
			goto bad;
		free(key);
		key = NULL;
		skip_ws(j);
		if (*j->p == '}')
			break;
		if (*j->p != ',') {
			fail(j, "',' or '}'");
			goto bad;
		}
		j->p++;
		skip_ws(j);
		if (*j->p == '}') {
			fail(j, "a key after ','");
			goto bad;
		}
	}
	j->p++;
	skip_ws(j);
	if (*j->p) {
		fail(j, "the end of the line after the object");
		goto bad;
	}
	if (!type) {
		fail(j, "a \"type\"");
		goto bad;
	}
	t = name_index(type, NAMES(rec_names));
	if (t < 0) {
		fail(j, expected_type());
		goto bad;
	}
	r->type = (enum rec_type)t;
	need = need_mask(r->type);
	for (size_t i = 0; i < NFIELDS; i++)
		if ((need & (1u << i)) && !(seen & (1u << i))) {
			/* "a bug record's \"address\"" */
			static char what[64];

			snprintf(what, sizeof(what), "a %s record's \"%s\"", type,
				 fields[i].key);
			fail(j, what);
			goto bad;
		}
	if (!resolve_names(r)) {
		fail(j, r->type == REC_PERF ? "a perf kind of the contract" :
			r->type == REC_END ? "an end how of the contract"
			: "a bug kind and when of the contract");
		goto bad;
	}
	free(type);
	return true;
bad:
	free(type);
	free(key);
	record_free(r);
	memset(r, 0, sizeof(*r));
	return false;
}

static struct record *add_record(struct run_report *rr)
{
	if (rr->n == rr->cap) {
		int cap = rr->cap ? rr->cap * 2 : 64;
		struct record *r = realloc(rr->rec, (size_t)cap * sizeof(*r));

		if (!r)
			return NULL;
		rr->rec = r;
		rr->cap = cap;
	}
	return &rr->rec[rr->n++];
}

static void add_pid(struct run_report *rr, long long pid)
{
	for (int i = 0; i < rr->npids; i++)
		if (rr->pids[i] == pid)
			return;
	if (rr->npids < (int)(sizeof(rr->pids) / sizeof(*rr->pids)))
		rr->pids[rr->npids++] = pid;
}

/* A note of ours for line @lineno that did not parse, as a record. */
static void malformed(struct record *r, long lineno, const char *line,
		      const struct jp *j, long long pid)
{
	char *msg = NULL, *json = NULL;
	size_t jlen = 0;
	FILE *f;
	int col = (int)(j->p - j->start) + 1;

	if (asprintf(&msg, "report line %ld malformed at byte %d (expected %s), "
		     "ignored: %.120s%s", lineno, col, j->err ? j->err : "?",
		     line, strlen(line) > 120 ? "..." : "") < 0)
		msg = NULL;
	/* The note's JSON, escaped by the one escaper every command uses. */
	f = open_memstream(&json, &jlen);
	if (f) {
		fputs("{\"type\":\"note\",\"message\":", f);
		report_json_string(f, msg ? msg : "report line malformed");
		fprintf(f, ",\"pid\":%lld}", pid);
		fclose(f);
	}
	memset(r, 0, sizeof(*r));
	r->type = REC_NOTE;
	r->message = msg;
	r->pid = pid;
	r->json = json;
	r->ours = true;
}

int read_report(int fd, long long child, struct run_report *rr)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long lineno = 0;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	f = fdopen(dup(fd), "r");
	if (!f)
		return -errno;
	while ((len = getline(&line, &cap, f)) >= 0) {
		struct record *r;
		struct jp j;
		size_t n = (size_t)len;

		lineno++;
		while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' ||
			     line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = '\0';
		/* A record never spans lines; an empty one says nothing. */
		if (!n)
			continue;
		r = add_record(rr);
		if (!r)
			break;
		/* A NUL inside the line would cut it short: malformed. */
		if (strlen(line) != n) {
			j.start = j.p = line + strlen(line);
			j.err = "no NUL byte";
			malformed(r, lineno, line, &j, child);
		} else if (parse_record(line, r, &j)) {
			r->json = strdup(line);
		} else {
			malformed(r, lineno, line, &j, child);
		}
		if (r->type == REC_BUG)
			rr->errors++;
		else if (r->type == REC_PERF)
			rr->perf_notes++;
		if (r->type == REC_NOTE && !r->ours &&
		    r->kind_id.note == NOTE_UNCHECKED)
			rr->unchecked++;
		else if (r->type == REC_NOTE && !r->ours &&
			 r->kind_id.note == NOTE_UNWATCHED)
			rr->unwatched++;
		else if (r->type != REC_NOTE)
			rr->watching++;
		/* End and start records say nothing was found: their pids
		 * are not named. */
		if (!r->ours && r->type != REC_END && r->type != REC_START)
			add_pid(rr, r->pid);
	}
	free(line);
	fclose(f);
	return 0;
}

void run_report_free(struct run_report *rr)
{
	for (int i = 0; i < rr->n; i++)
		record_free(&rr->rec[i]);
	free(rr->rec);
	rr->rec = NULL;
	rr->n = rr->cap = 0;
}
