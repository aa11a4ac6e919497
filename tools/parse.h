/* SPDX-License-Identifier: MIT */
/*
 * parse.h - the one command-line parser of the ntmem tool: a strict number
 * parser, and an option table per subcommand (name, kind, range,
 * destination) that every subcommand hands its argv to. A bad value is
 * named as the user typed it, with what was expected, and is a usage
 * error (exit status 2).
 *
 * parse.c depends on nothing but libc, so a fuzz harness or unit test can
 * link it alone.
 */
#ifndef NTMEM_TOOL_PARSE_H
#define NTMEM_TOOL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* parse_num() flag: accept one k, m, g or t suffix (either case). */
#define PARSE_SUFFIX (1u << 0)

/**
 * parse_num() - a whole decimal number, strictly
 * @s:     NUL-terminated text: decimal digits, no sign, no leading zero
 *         (only "0" itself starts with 0), no spaces, no fraction or
 *         exponent, no 0x; with PARSE_SUFFIX one trailing k, m, g or t
 *         (binary units: 2^10, 2^20, 2^30, 2^40), e.g. "4096", "4k", "100g"
 * @min:   smallest value accepted (after the suffix is applied)
 * @max:   largest value accepted
 * @flags: PARSE_SUFFIX or 0
 * @out:   the value; written only on success
 *
 * Pure: reads @s up to its NUL and nothing else, no errno, no locale, no
 * allocation. Any input string is safe, including NULL.
 *
 * Return: 0; -EINVAL when @s is not such a number (empty, "-1", "010",
 * "0x10", "1.5m", "1e3", "+4k", " 4", "4kb"); -ERANGE when it is one but
 * exceeds 2^64 - 1 (with its suffix) or lies outside [@min, @max].
 */
int parse_num(const char *s, uint64_t min, uint64_t max, unsigned flags,
	      uint64_t *out);

/* Largest size any option takes: 1024t. The run's own checks go lower. */
#define PARSE_SIZE_MAX (1ull << 50)

/*
 * Human-readable size: "64", "4k", "1m" when exact, else bytes. Returns
 * @buf.
 */
const char *parse_size_name(uint64_t bytes, char *buf, size_t len);

enum opt_kind {
	OPT_FLAG,	/* no value; dest: bool, set to true */
	OPT_STR,	/* any text; dest: const char *, pointing into argv */
	OPT_CHOICE,	/* one of .choices; dest: int, the index */
	OPT_INT,	/* parse_num() within [min, max] <= INT_MAX; dest: int */
	OPT_U64,	/* parse_num() within [min, max]; dest: uint64_t */
	OPT_U64_LIST,	/* comma list of those; dest: uint64_t[max_count] */
};

struct opt {
	const char *name;	/* "size" for --size (and --size=VALUE) */
	char letter;		/* 's' for -s VALUE / -sVALUE, or 0 */
	enum opt_kind kind;
	void *dest;
	/* numbers */
	uint64_t min, max;
	unsigned flags;		/* PARSE_SUFFIX: a size in bytes */
	uint64_t multiple;	/* each value a multiple of this; 0: any */
	bool (*valid)(uint64_t v);	/* a further check, or NULL */
	/* OPT_U64_LIST: at most max_count values; their number into *count */
	int max_count;
	int *count;
	/* OPT_CHOICE: the names, NULL-terminated */
	const char *const *choices;
	/* what a good value looks like, for the error; NULL: from the range */
	const char *expected;
	bool *given;		/* set true when the option appears; or NULL */
};

struct opt_cmd {
	const char *name;		/* "bench copy", for messages */
	const struct opt *opts;		/* ends with an entry whose name is NULL */
	/* -h / --help print this to stdout; a usage error adds nothing */
	void (*usage)(FILE *out);
	/* one positional argument ("PATH"), or NULL when it takes none */
	const char *arg_name;
	const char *arg_expected;	/* "a namespace path" */
	const char **arg;
};

/**
 * parse_args() - parse @argv[1..@argc) against @cmd's option table
 *
 * Options are exact long names (no abbreviations) or their letters; a value
 * is the next argument or follows '='; "--" ends the options. Every number
 * goes through parse_num() and the option's range. An option the table
 * does not list, a flag given a value, a missing or repeated positional
 * argument are usage errors. Destinations of options not given keep the
 * caller's defaults.
 *
 * Return: true to run the command; false to return *@status now: 0 after
 * --help, 2 after a usage error named on stderr.
 */
bool parse_args(const struct opt_cmd *cmd, int argc, char **argv, int *status);

/*
 * Print "ntmem CMD: invalid OPTION 'VALUE': expected WHAT (Invalid
 * argument)" to stderr and return the exit status for a usage error (2):
 * for the checks that span options, after parse_args().
 */
int parse_bad_arg(const char *cmd, const char *option, const char *value,
		  const char *expected);

#endif
