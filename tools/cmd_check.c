// SPDX-License-Identifier: MIT
/*
 * cmd_check.c - `ntmem check [options] -- PROGRAM ARGS...`: a persistence
 * checker for unmodified programs. PROGRAM runs with ntmem's checking
 * library preloaded (built from src/watch/, installed in
 * $libdir/ntmem/check), which appends one JSON line per finding to a
 * report file this command created; when PROGRAM has ended, the lines are
 * read back, printed for a person (or as one JSON object) and PROGRAM's
 * exit status is passed on.
 *
 * The report is a file, not a pipe: a program that forks, execs or dies
 * of a signal part way still leaves every line it wrote, and nothing
 * blocks when this process is slow to read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "parse.h"
#include "report.h"

#ifndef NTMEM_CHECK_LIBDIR_DEFAULT
#error "NTMEM_CHECK_LIBDIR_DEFAULT: the installed checking library's directory (tools/meson.build)"
#endif

extern char **environ;

/* The two files of the checking library's directory (src/watch/). */
static const char *const libdir_files[] = {
	"libntmem-watch.so.0", "libntmem-watch-preload.so",
};

/*
 * The build tree's checking directory when this ntmem is the one a meson
 * build tree made (BUILDDIR/tools/ntmem, with BUILDDIR/build.ninja and
 * BUILDDIR/src/watch): a user trying ntmem from a clone needs no variable.
 * False otherwise.
 */
static bool build_tree_libdir(char *out, size_t len)
{
	char exe[PATH_MAX], probe[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return false;
	exe[n] = '\0';
	/* BUILDDIR/tools/ntmem -> BUILDDIR */
	for (int up = 0; up < 2; up++) {
		slash = strrchr(exe, '/');
		if (!slash || slash == exe)
			return false;
		*slash = '\0';
	}
	snprintf(probe, sizeof(probe), "%s/build.ninja", exe);
	if (access(probe, F_OK))
		return false;
	snprintf(probe, sizeof(probe), "%s/src/watch/%s", exe, libdir_files[0]);
	if (access(probe, F_OK) || strlen(exe) + sizeof("/src/watch") > len)
		return false;
	snprintf(out, len, "%s/src/watch", exe);
	return true;
}

int check_libdir(const char *cmd, char *dir, size_t len)
{
	const char *d = getenv("NTMEM_CHECK_LIBDIR");
	const char *from = "NTMEM_CHECK_LIBDIR";
	char *real, path[PATH_MAX + 64], tree[PATH_MAX];

	if ((!d || !*d) && build_tree_libdir(tree, sizeof(tree))) {
		d = tree;
		from = "this build tree";
	} else if (!d || !*d) {
		d = NTMEM_CHECK_LIBDIR_DEFAULT;
		from = "the installed directory";
	}
	/*
	 * Absolute: PROGRAM may change directory before it runs another
	 * program, which inherits LD_PRELOAD.
	 */
	real = realpath(d, NULL);
	if (!real) {
		fprintf(stderr, "ntmem %s: no checking library: %s (%s): %s; "
			"set NTMEM_CHECK_LIBDIR to the directory of "
			"libntmem-watch.so.0\n", cmd, d, from, strerror(errno));
		return 2;
	}
	for (size_t i = 0; i < sizeof(libdir_files) / sizeof(*libdir_files); i++) {
		snprintf(path, sizeof(path), "%s/%s", real, libdir_files[i]);
		if (access(path, F_OK)) {
			fprintf(stderr, "ntmem %s: no checking library in %s (%s): "
				"%s: %s; set NTMEM_CHECK_LIBDIR to the directory "
				"of libntmem-watch.so.0\n", cmd, d, from,
				libdir_files[i], strerror(errno));
			free(real);
			return 2;
		}
	}
	if (strlen(real) >= len) {
		fprintf(stderr, "ntmem %s: %s: path too long\n", cmd, real);
		free(real);
		return 2;
	}
	snprintf(dir, len, "%s", real);
	free(real);
	return 0;
}

/* --- the report's records ----------------------------------------------- */

struct strv {
	char **v;
	int n;
};

enum rec_type { REC_BUG, REC_PERF, REC_NOTE, REC_END, REC_START };

struct record {
	enum rec_type type;
	char *kind, *when, *file, *address, *point, *message, *how, *signal;
	long long offset, length, count, pid, status, judged;
	struct strv backtrace, first_store, site, tx_begin;
	/* the line itself (valid JSON), or a note object made for it */
	char *json;
	bool ours;	/* a note of ntmem check's, not the library's */
};

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

enum jkind { J_STR, J_STR_NULL, J_INT, J_STRV };

struct field {
	const char *key;
	enum jkind kind;
	size_t off;
};

#define FIELD(k, kind, member) { k, kind, offsetof(struct record, member) }

/* Where each key of the contract goes; "type" is read on its own. */
static const struct field fields[] = {
	FIELD("kind", J_STR, kind),
	FIELD("when", J_STR, when),
	FIELD("file", J_STR_NULL, file),
	FIELD("offset", J_INT, offset),
	FIELD("length", J_INT, length),
	FIELD("address", J_STR, address),
	FIELD("point", J_STR, point),
	FIELD("backtrace", J_STRV, backtrace),
	FIELD("first_store", J_STRV, first_store),
	FIELD("tx_begin", J_STRV, tx_begin),
	FIELD("count", J_INT, count),
	FIELD("site", J_STRV, site),
	FIELD("message", J_STR, message),
	FIELD("pid", J_INT, pid),
	FIELD("how", J_STR, how),
	FIELD("status", J_INT, status),
	FIELD("signal", J_STR, signal),
	FIELD("judged", J_INT, judged),
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

static void record_free(struct record *r)
{
	free(r->kind);
	free(r->when);
	free(r->file);
	free(r->address);
	free(r->point);
	free(r->message);
	free(r->how);
	free(r->signal);
	strv_free(&r->backtrace);
	strv_free(&r->first_store);
	strv_free(&r->tx_begin);
	strv_free(&r->site);
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

static bool one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

static const char *const bug_kinds[] = {
	"not-written-back", "stored-after-write-back", "not-fenced",
	"never-written-back", "tx-unadded", NULL,
};
static const char *const bug_whens[] = {
	"point", "unmap", "exit", "transaction", NULL,
};
static const char *const perf_kinds[] = {
	"unchanged-write-back", "repeated-write-back", "tx-add-twice",
	"tx-flush-repeat", NULL,
};
static const char *const end_hows[] = { "exit", "_exit", "signal", NULL };

/* The keys each type must have, as bits of fields[]. */
static unsigned need_mask(enum rec_type t)
{
	static const char *const bug[] = {
		"kind", "when", "file", "offset", "length", "address", "point",
		"backtrace", "first_store", "pid", NULL,
	};
	static const char *const perf[] = { "kind", "count", "site", "pid", NULL };
	static const char *const note[] = { "message", "pid", NULL };
	static const char *const end[] = { "how", "judged", "pid", NULL };
	static const char *const start[] = { "pid", NULL };
	const char *const *keys = t == REC_BUG ? bug : t == REC_PERF ? perf :
				  t == REC_END ? end : t == REC_START ? start
				  : note;
	unsigned mask = 0;

	for (size_t i = 0; i < NFIELDS; i++)
		if (one_of(fields[i].key, keys))
			mask |= 1u << i;
	return mask;
}

/* Parse @line into @r: true, or false with the reason in @j->err. */
/* The value of a known key @f into @r. */
static bool field_value(struct jp *j, const struct field *f, struct record *r)
{
	void *dest = (char *)r + f->off;

	switch (f->kind) {
	case J_STR_NULL:
		if (!strncmp(j->p, "null", 4)) {
			j->p += 4;
			return true;
		}
		/* fall through */
	case J_STR:
		return jstring(j, (char **)dest);
	case J_INT:
		return jint(j, (long long *)dest);
	case J_STRV:
		return jstrv(j, (struct strv *)dest);
	}
	return fail(j, "a known kind of value");
}

/* Parse @line into @r: true, or false with the reason in @j->err. */
static bool parse_record(const char *line, struct record *r, struct jp *j)
{
	char *type = NULL, *key = NULL;
	unsigned seen = 0, need;

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
	if (!strcmp(type, "bug"))
		r->type = REC_BUG;
	else if (!strcmp(type, "perf"))
		r->type = REC_PERF;
	else if (!strcmp(type, "note"))
		r->type = REC_NOTE;
	else if (!strcmp(type, "end"))
		r->type = REC_END;
	else if (!strcmp(type, "start"))
		r->type = REC_START;
	else {
		fail(j, "\"type\" bug, perf, note, end or start");
		goto bad;
	}
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
	if ((r->type == REC_BUG && (!one_of(r->kind, bug_kinds) ||
				    !one_of(r->when, bug_whens))) ||
	    (r->type == REC_PERF && !one_of(r->kind, perf_kinds)) ||
	    (r->type == REC_END && !one_of(r->how, end_hows))) {
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

struct run_report {
	struct record *rec;
	int n, cap;
	int errors, perf_notes;
	/*
	 * What was checked: records only a watching checking library writes
	 * (start, and bug, perf, end), and notes that a process watched
	 * nothing ("kind":"unchecked") or that memory went unwatched
	 * ("kind":"unwatched").
	 */
	int watching, unchecked, unwatched;
	long long pids[8];	/* the processes that reported, first 8 */
	int npids;
};

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

/* Read every line of the report at @fd. */
static int read_report(int fd, long long child, struct run_report *rr)
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
		if (r->type == REC_NOTE && !r->ours && r->kind &&
		    !strcmp(r->kind, "unchecked"))
			rr->unchecked++;
		else if (r->type == REC_NOTE && !r->ours && r->kind &&
			 !strcmp(r->kind, "unwatched"))
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

/* --- what was checked ---------------------------------------------------- */

/* The exit status of a run that exited 0 but was not checked in full. */
#define NOT_CHECKED_STATUS 4

enum checked { CHECKED_ALL, CHECKED_PART, CHECKED_NONE };

static const char *const checked_names[] = {
	[CHECKED_ALL] = "all", [CHECKED_PART] = "part", [CHECKED_NONE] = "none",
};

/*
 * Whether the run was checked: "none" when no process of it was watched
 * (no record that only a watching checking library writes), "part" when
 * one was but memory went unwatched or another process watched nothing,
 * "all" otherwise. @why: the words for the summary when not all.
 */
static enum checked run_checked(const struct run_report *rr, char *why,
				size_t len)
{
	*why = '\0';
	if (!rr->watching && rr->unchecked) {
		snprintf(why, len, "the checking library could not watch "
			 "anything (see the note%s)", rr->unchecked == 1 ? "" : "s");
		return CHECKED_NONE;
	}
	if (!rr->watching) {
		snprintf(why, len, "no process loaded the checking library");
		return CHECKED_NONE;
	}
	if (!rr->unwatched && !rr->unchecked)
		return CHECKED_ALL;
	if (rr->unwatched && rr->unchecked)
		snprintf(why, len, "%d part%s of mappings not watched, %d "
			 "process%s not watched", rr->unwatched,
			 rr->unwatched == 1 ? "" : "s", rr->unchecked,
			 rr->unchecked == 1 ? "" : "es");
	else if (rr->unwatched)
		snprintf(why, len, "%d part%s of mappings not watched",
			 rr->unwatched, rr->unwatched == 1 ? "" : "s");
	else
		snprintf(why, len, "%d process%s not watched", rr->unchecked,
			 rr->unchecked == 1 ? "" : "es");
	return CHECKED_PART;
}

/* --- printing ------------------------------------------------------------ */

static const char *bug_words(const char *kind)
{
	if (!strcmp(kind, "not-written-back"))
		return "stored, not written back";
	if (!strcmp(kind, "stored-after-write-back"))
		return "stored again after its write-back";
	if (!strcmp(kind, "not-fenced"))
		return "written back, not fenced";
	if (!strcmp(kind, "tx-unadded"))
		return "stored in a transaction, not added to it";
	return "never written back";
}

static const char *perf_words(const char *kind)
{
	if (!strcmp(kind, "tx-add-twice"))
		return "ranges added to a transaction that already held them";
	if (!strcmp(kind, "tx-flush-repeat"))
		return "write-backs in a transaction of ranges it added, which "
		       "its commit writes back again";
	return !strcmp(kind, "unchanged-write-back")
		? "write-backs of lines that had not changed"
		: "repeated write-backs of a line with no store between";
}

/* @s for a terminal: control characters (a newline in a path) as '?'. */
static void put_text(FILE *out, const char *s)
{
	for (; s && *s; s++)
		fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, out);
}

/*
 * The frames of a backtrace down to the program's main(): what lies below
 * it (libc's start-up code) is the same in every report and says nothing.
 */
static void put_frames(FILE *out, const char *label, const struct strv *s)
{
	for (int i = 0; i < s->n; i++) {
		fprintf(out, "    %s: ", label);
		put_text(out, s->v[i]);
		fputc('\n', out);
		if (!strncmp(s->v[i], "main+", 5))
			break;
	}
}

/*
 * The headline's "when": a line found at a persistence point and still not
 * durable at unmap or exit names both; a line found at the end names it.
 */
static void put_when(FILE *out, const struct record *r)
{
	bool at_end = !strcmp(r->kind, "not-fenced") ||
		      !strcmp(r->kind, "never-written-back");

	/* A transaction bug: found at the program's next call into
	 * libpmemobj (its commit, say). */
	if (!strcmp(r->when, "transaction")) {
		fputs(", found at ", out);
		put_text(out, r->point);
		return;
	}
	fputs(at_end ? " before " : " at ", out);
	put_text(out, r->point);
	if (!at_end && r->when && strcmp(r->when, "point")) {
		fputs(", still not durable at ", out);
		put_text(out, r->when);
	}
}

/*
 * How PROGRAM ended, from its wait @status and the end record its checking
 * library wrote (the last of pid @child): "exited 7 via _exit", "killed by
 * SIGTERM (core dumped)", "killed by SIGKILL, not judged: ...". *@judged:
 * whether the library judged that end.
 */
static void describe_end(char *buf, size_t len, int status,
			 const struct run_report *rr, long long child,
			 bool *judged)
{
	const struct record *end = NULL;
	char sig[32];

	for (int i = 0; i < rr->n; i++)
		if (rr->rec[i].type == REC_END && rr->rec[i].pid == child)
			end = &rr->rec[i];
	*judged = end && end->judged;
	if (WIFEXITED(status)) {
		snprintf(buf, len, "exited %d%s", WEXITSTATUS(status),
			 end && !strcmp(end->how, "_exit") ? " via _exit" : "");
		return;
	}
	if (sigabbrev_np(WTERMSIG(status)))
		snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(WTERMSIG(status)));
	else
		snprintf(sig, sizeof(sig), "signal %d", WTERMSIG(status));
	snprintf(buf, len, "killed by %s%s%s", sig,
		 WCOREDUMP(status) ? " (core dumped)" : "",
		 *judged ? "" : end ? ", not judged: the signal came while the "
				      "checker held its lock"
			      : ", not judged: what it left is not known");
}

static void print_human(FILE *out, const struct run_report *rr, bool perf,
			long long child, const char *ended)
{
	char why[160];
	enum checked checked = run_checked(rr, why, sizeof(why));
	/* Which process said it, when more than one did. */
	bool many = rr->npids > 1;

	for (int i = 0; i < rr->n; i++) {
		const struct record *r = &rr->rec[i];

		switch (r->type) {
		case REC_BUG:
			fprintf(out, "ntmem check: %s", bug_words(r->kind));
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
			put_frames(out, "at", &r->backtrace);
			put_frames(out, "first store", &r->first_store);
			put_frames(out, "transaction begun", &r->tx_begin);
			break;
		case REC_PERF:
			if (!perf)
				break;
			fprintf(out, "ntmem check: performance: %lld %s",
				r->count, perf_words(r->kind));
			if (many)
				fprintf(out, " (pid %lld)", r->pid);
			fputc('\n', out);
			put_frames(out, "at", &r->site);
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

static void print_json(FILE *out, const struct run_report *rr, int status,
		       const char *ended, bool judged)
{
	char why[160];
	enum checked checked = run_checked(rr, why, sizeof(why));

	fprintf(out, "{\"errors\": %d, \"perf_notes\": %d, \"exit_status\": %d, "
		"\"ended\": ", rr->errors, rr->perf_notes, status);
	report_json_string(out, ended);
	fprintf(out, ", \"judged\": %s, \"reports\": [", judged ? "true" : "false");
	for (int i = 0; i < rr->n; i++) {
		fputs(i ? ",\n  " : "\n  ", out);
		put_json_utf8(out, rr->rec[i].json ? rr->rec[i].json : "null");
	}
	fprintf(out, "%s], \"checked\": \"%s\", \"not_checked\": ",
		rr->n ? "\n" : "", checked_names[checked]);
	if (*why)
		report_json_string(out, why);
	else
		fputs("null", out);
	fputs("}\n", out);
}

/* --- running the program ------------------------------------------------- */

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NFORWARDED (sizeof(forwarded) / sizeof(*forwarded))

static volatile sig_atomic_t child_pid;

static void forward(int sig, siginfo_t *si, void *uc)
{
	pid_t pid = child_pid;

	(void)uc;
	if (pid <= 0)
		return;
	/*
	 * A key at the terminal (^C, ^\) signals the whole foreground
	 * process group, the program with it: sending it again would
	 * deliver it twice, and a program that counts its SIGINTs would
	 * take the second as "quit now". A kill(2) aimed at this process
	 * alone is passed on.
	 */
	if (si->si_code == SI_KERNEL && getpgid(pid) == getpgrp())
		return;
	kill(pid, sig);
}

/* NAME=VALUE */
static char *env_entry(const char *name, const char *value)
{
	char *s;

	return asprintf(&s, "%s=%s", name, value) < 0 ? NULL : s;
}

/* VALUE[:old value of NAME] */
static char *env_prepend(const char *name, const char *value)
{
	const char *old = getenv(name);
	char *s;

	if (!old || !*old)
		return env_entry(name, value);
	return asprintf(&s, "%s=%s:%s", name, value, old) < 0 ? NULL : s;
}

/* The variables child_env() sets (the last entries of its environment). */
static const char *const ours[] = {
	"LD_PRELOAD=", "LD_LIBRARY_PATH=", "NTMEM_CHECK_REPORT=",
	"NTMEM_CHECK_WATCH=", "GLIBC_TUNABLES=",
};
#define NOURS (sizeof(ours) / sizeof(*ours))

/*
 * Room in each thread's static TLS for a checking library that is
 * dlopen()ed late (a program that loads libpmem.so.1 when it needs it):
 * its thread-local variables are initial-exec, as its SIGSEGV handler
 * needs, and glibc's default room (512 bytes) is less than it takes. Set
 * first, so that a value the user gave wins.
 */
#define STATIC_TLS_ROOM "glibc.rtld.optional_static_tls=4096"

/*
 * The program's environment: this one with the variables of the contract
 * set, everything else unchanged. NULL when out of memory.
 */
static char **child_env(const char *dir, const char *report)
{
	size_t n = 0, k = 0;
	char **env, *preload;

	while (environ[n])
		n++;
	env = calloc(n + NOURS + 1, sizeof(*env));
	if (!env)
		return NULL;
	if (asprintf(&preload, "%s/libntmem-watch-preload.so", dir) < 0) {
		free(env);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		bool skip = false;

		for (size_t o = 0; o < NOURS; o++)
			if (!strncmp(environ[i], ours[o], strlen(ours[o])))
				skip = true;
		if (!skip)
			env[k++] = environ[i];
	}
	env[k++] = env_prepend("LD_PRELOAD", preload);
	env[k++] = env_prepend("LD_LIBRARY_PATH", dir);
	env[k++] = env_entry("NTMEM_CHECK_REPORT", report);
	env[k++] = env_entry("NTMEM_CHECK_WATCH", "1");
	env[k++] = env_prepend("GLIBC_TUNABLES", STATIC_TLS_ROOM);
	free(preload);
	for (size_t i = k - NOURS; i < k; i++)
		if (!env[i]) {
			for (size_t f = k - NOURS; f < k; f++)
				free(env[f]);
			free(env);
			return NULL;
		}
	return env;
}

/* The entries child_env() allocated: its last NOURS. */
static void free_env(char **env)
{
	size_t n = 0;

	if (!env)
		return;
	while (env[n])
		n++;
	for (size_t i = n >= NOURS ? n - NOURS : 0; i < n; i++)
		free(env[i]);
	free(env);
}

/*
 * Run @argv with @env and wait for it, passing on the signals of
 * forwarded[]. Returns its wait status (its pid in *@child), or -1 with
 * *@exec_errno set when it could not be executed (-1 and 0 for a failed
 * fork or pipe, errno set).
 */
static int run_program(char **argv, char **env, int *exec_errno,
		       pid_t *child)
{
	struct sigaction sa = { .sa_sigaction = forward, .sa_flags = SA_SIGINFO };
	struct sigaction old[NFORWARDED];
	sigset_t block, oldmask;
	int pipefd[2], status, e = 0;
	ssize_t got;
	pid_t pid;

	*exec_errno = 0;
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	/*
	 * Blocked from before the fork until the child's pid is known: a
	 * signal in between is held, then forwarded, not lost or fatal to
	 * this process alone (which would leave the program running).
	 */
	sigemptyset(&block);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	sigprocmask(SIG_BLOCK, &block, &oldmask);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFORWARDED; i++) {
		sigaction(forwarded[i], NULL, &old[i]);
		/* nohup, a background job: the program inherits the SIG_IGN */
		if (old[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &sa, NULL);
	}
	pid = fork();
	if (pid == 0) {
		/* Default actions before unblocking: a held signal is its. */
		for (size_t i = 0; i < NFORWARDED; i++)
			sigaction(forwarded[i], &old[i], NULL);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		close(pipefd[0]);
		execvpe(argv[0], argv, env);
		e = errno;
		/* The pipe closes on a successful exec: nothing read means run. */
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0) {
		e = errno;
		close(pipefd[0]);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		errno = e;
		return -1;
	}
	child_pid = pid;
	*child = pid;
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	do
		got = read(pipefd[0], &e, sizeof(e));
	while (got < 0 && errno == EINTR);
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = 0;
			break;
		}
	child_pid = 0;
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &old[i], NULL);
	if (got == (ssize_t)sizeof(e)) {
		*exec_errno = e ? e : ENOEXEC;
		return -1;
	}
	return status;
}

/* --- the command --------------------------------------------------------- */

static void usage(FILE *out)
{
	fputs("usage: ntmem check [--json] [--report FILE] [--error-exitcode N]\n"
	      "                   [--perf] [--eager] -- PROGRAM [ARGS...]\n"
	      "\n"
	      "Runs PROGRAM, unmodified, with ntmem's checking library preloaded and\n"
	      "reports the stores it made to persistent memory that a crash could lose:\n"
	      "lines a persistence point (pmem_drain, pmem_persist, pmem_msync,\n"
	      "ntm_drain, ntm_persist, a FUA block write) found not written back, or\n"
	      "stored again after their write-back, and lines never made durable, when\n"
	      "they are still not durable at unmap or exit (with --eager: at the\n"
	      "point). The mappings watched are those of pmem_map_file and ntm_ns_*,\n"
	      "and shared file mappings that pmem_* calls touch. See ntmem-check(1)\n"
	      "for what it cannot see.\n"
	      "\n"
	      "  --json              one JSON object instead of the text report:\n"
	      "                      errors, perf_notes, exit_status, ended (how PROGRAM\n"
	      "                      ended), judged, reports (the records), checked\n"
	      "                      (all, part or none), not_checked (why, or null)\n"
	      "  --report FILE       write the report to FILE instead of standard error\n"
	      "  --error-exitcode N  exit with N (1 to 255) when an error was reported\n"
	      "                      and PROGRAM was not killed by a signal\n"
	      "  --perf              also print the performance notes: write-backs of\n"
	      "                      lines that had not changed, repeated write-backs\n"
	      "  --eager             report a line at the first persistence point that\n"
	      "                      finds it not durable, not at unmap or exit (for\n"
	      "                      programs that make every store durable at once)\n"
	      "  -h, --help          this text\n"
	      "\n"
	      "The -- may be left out when PROGRAM does not start with '-'. Exit status:\n"
	      "PROGRAM's, 128+N when it died of signal N, N of --error-exitcode when\n"
	      "an error was reported, 4 when PROGRAM exited 0 but was not checked in\n"
	      "full (no process loaded the checking library, it could not watch, or\n"
	      "memory went unwatched: the summary says which), 127 when it could not\n"
	      "be executed, 2 when ntmem check could not start it (a usage error, no\n"
	      "checking library). The library is looked for in NTMEM_CHECK_LIBDIR, if\n"
	      "set, else in BUILDDIR/src/watch when this ntmem is BUILDDIR/tools/ntmem,\n"
	      "else in " NTMEM_CHECK_LIBDIR_DEFAULT ".\n",
	      out);
}

int cmd_check(int argc, char **argv)
{
	bool json = false, perf = false, eager = false;
	const char *report_path = NULL;
	int error_exitcode = 0;
	const struct opt opts[] = {
		{ .name = "json", .kind = OPT_FLAG, .dest = &json },
		{ .name = "report", .kind = OPT_STR, .dest = &report_path,
		  .expected = "a file to write the report to" },
		{ .name = "error-exitcode", .kind = OPT_INT,
		  .dest = &error_exitcode, .min = 1, .max = 255 },
		{ .name = "perf", .kind = OPT_FLAG, .dest = &perf },
		{ .name = "eager", .kind = OPT_FLAG, .dest = &eager },
		{ 0 },
	};
	const struct opt_cmd cmd = {
		.name = "check", .opts = opts, .usage = usage,
	};
	char dir[PATH_MAX], tmpl[PATH_MAX], ended[160], why[160];
	const char *tmpdir = getenv("TMPDIR");
	bool judged;
	struct run_report rr = { 0 };
	FILE *out = stderr, *text;
	char **env, *buf = NULL;
	size_t buflen = 0;
	int nopt = argc, prog = argc, status, fd, exec_errno, ret, pstatus;
	pid_t pid = 0;

	/*
	 * The options end at "--" or at the first argument that is not
	 * one: everything after belongs to PROGRAM, its own --help too.
	 */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool takes_value = false;

		if (!strcmp(a, "--")) {
			nopt = i;
			prog = i + 1;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			nopt = prog = i;
			break;
		}
		for (const struct opt *o = opts; o->name; o++)
			if (a[1] == '-' && !strcmp(a + 2, o->name) &&
			    o->kind != OPT_FLAG)
				takes_value = true;
		if (takes_value)
			i++;
	}
	if (!parse_args(&cmd, nopt, argv, &status))
		return status;
	if (prog >= argc)
		return parse_bad_arg("check", "PROGRAM", "(none)",
				     "a program to run, after --");
	ret = check_libdir("check", dir, sizeof(dir));
	if (ret)
		return ret;
	/* Before the run: a report that cannot be written is said now. */
	if (report_path) {
		out = fopen(report_path, "we");
		if (!out) {
			fprintf(stderr, "ntmem check: invalid --report '%s': "
				"expected a file to write the report to (%s)\n",
				report_path, strerror(errno));
			return 2;
		}
	}
	snprintf(tmpl, sizeof(tmpl), "%s/ntmem-check-XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ntmem check: cannot create the report file %s: %s\n",
			tmpl, strerror(errno));
		if (out != stderr)
			fclose(out);
		return 2;
	}
	/* The checking library reads it; the program inherits it. */
	env = NULL;
	if (eager && setenv("NTMEM_CHECK_EAGER", "1", 1)) {
		perror("ntmem check: setenv");
		ret = 2;
		goto out;
	}
	env = child_env(dir, tmpl);
	if (!env) {
		fprintf(stderr, "ntmem check: out of memory\n");
		ret = 2;
		goto out;
	}
	status = run_program(argv + prog, env, &exec_errno, &pid);
	if (status < 0) {
		if (exec_errno)
			fprintf(stderr, "ntmem check: cannot run '%s': %s\n",
				argv[prog], strerror(exec_errno));
		else
			fprintf(stderr, "ntmem check: cannot start '%s': %s\n",
				argv[prog], strerror(errno));
		ret = exec_errno ? 127 : 2;
		goto out;
	}
	pstatus = WIFSIGNALED(status) ? 128 + WTERMSIG(status)
				       : WEXITSTATUS(status);
	ret = read_report(fd, (long long)pid, &rr);
	if (ret)
		fprintf(stderr, "ntmem check: cannot read the report file %s: %s\n",
			tmpl, strerror(-ret));
	/*
	 * Put together in memory, then written at once: stderr is
	 * unbuffered, and a report of many frames would be as many writes.
	 */
	describe_end(ended, sizeof(ended), status, &rr, (long long)pid, &judged);
	text = open_memstream(&buf, &buflen);
	if (json)
		print_json(text ? text : out, &rr, pstatus, ended, judged);
	else
		print_human(text ? text : out, &rr, perf, (long long)pid, ended);
	if (text && !fclose(text))
		fwrite(buf, 1, buflen, out);
	free(buf);
	ret = pstatus;
	if (error_exitcode && rr.errors && !WIFSIGNALED(status))
		ret = error_exitcode;
	else if (!ret && run_checked(&rr, why, sizeof(why)) != CHECKED_ALL)
		ret = NOT_CHECKED_STATUS;
out:
	for (int i = 0; i < rr.n; i++)
		record_free(&rr.rec[i]);
	free(rr.rec);
	free_env(env);
	unlink(tmpl);
	close(fd);
	if (out != stderr && fclose(out)) {
		fprintf(stderr, "ntmem check: --report %s: %s\n", report_path,
			strerror(errno));
		if (!ret)
			ret = 2;
	}
	return ret;
}
