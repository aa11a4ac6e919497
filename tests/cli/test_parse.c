// SPDX-License-Identifier: MIT
/*
 * test_parse.c - the tool's number parser, parse_num(), on a table of
 * good and bad inputs, and the option tables of parse_args() on the
 * cases every subcommand relies on: exact names, '=' values, ranges,
 * lists, choices, positional arguments, "--".
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "parse.h"

#define K (1ull << 10)
#define T (1ull << 40)

struct num_case {
	const char *s;
	uint64_t min, max;
	unsigned flags;
	int ret;		/* 0, -EINVAL or -ERANGE */
	uint64_t want;		/* when ret == 0 */
};

static const struct num_case num_cases[] = {
	/* good */
	{ "0", 0, UINT64_MAX, 0, 0, 0 },
	{ "1", 0, UINT64_MAX, 0, 0, 1 },
	{ "4096", 0, UINT64_MAX, 0, 0, 4096 },
	{ "10", 0, UINT64_MAX, 0, 0, 10 },
	{ "18446744073709551615", 0, UINT64_MAX, 0, 0, UINT64_MAX },
	{ "4k", 0, UINT64_MAX, PARSE_SUFFIX, 0, 4 * K },
	{ "4K", 0, UINT64_MAX, PARSE_SUFFIX, 0, 4 * K },
	{ "2m", 0, UINT64_MAX, PARSE_SUFFIX, 0, 2ull << 20 },
	{ "100g", 0, UINT64_MAX, PARSE_SUFFIX, 0, 100ull << 30 },
	{ "1t", 0, UINT64_MAX, PARSE_SUFFIX, 0, T },
	{ "0k", 0, UINT64_MAX, PARSE_SUFFIX, 0, 0 },
	{ "16777215t", 0, UINT64_MAX, PARSE_SUFFIX, 0, 16777215ull << 40 },
	{ "4096", 0, UINT64_MAX, PARSE_SUFFIX, 0, 4096 },
	{ "5", 5, 5, 0, 0, 5 },
	/* the bounds are inclusive, after the suffix */
	{ "1k", 1024, 1024, PARSE_SUFFIX, 0, 1024 },
	{ "1k", 1025, 2048, PARSE_SUFFIX, -ERANGE, 0 },
	{ "0", 1, 10, 0, -ERANGE, 0 },
	{ "11", 1, 10, 0, -ERANGE, 0 },
	{ "2t", 0, T, PARSE_SUFFIX, -ERANGE, 0 },
	/* overflow */
	{ "18446744073709551616", 0, UINT64_MAX, 0, -ERANGE, 0 },
	{ "99999999999999999999999999", 0, UINT64_MAX, 0, -ERANGE, 0 },
	{ "16777216t", 0, UINT64_MAX, PARSE_SUFFIX, -ERANGE, 0 },
	{ "18446744073709551615k", 0, UINT64_MAX, PARSE_SUFFIX, -ERANGE, 0 },
	/* not a number: what strtoul and strtod would have taken */
	{ NULL, 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "-1", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "-0", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "+4k", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ " 4", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "4 ", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "\t4", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "010", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "00", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "0x1000", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "0X10", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "1e3", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "1e3k", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "1.5m", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ ".5", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "4.", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "k", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "4kk", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "4kb", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "4KiB", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "4B", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "4p", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "4x", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "5x", 0, UINT64_MAX, 0, -EINVAL, 0 },
	/* a suffix where none is allowed */
	{ "4k", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "1,2", 0, UINT64_MAX, 0, -EINVAL, 0 },
	{ "inf", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "nan", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
	{ "\xd9\xa3", 0, UINT64_MAX, 0, -EINVAL, 0 },	/* Arabic-Indic 3 */
	/* malformed and overflowing at once: the form is what is wrong */
	{ "99999999999999999999x", 0, UINT64_MAX, PARSE_SUFFIX, -EINVAL, 0 },
};

static void test_parse_num_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(num_cases) / sizeof(*num_cases); i++) {
		const struct num_case *c = &num_cases[i];
		uint64_t out = 0x5a5a5a5a5a5a5a5aull;
		int ret = parse_num(c->s, c->min, c->max, c->flags, &out);

		if (ret != c->ret)
			fail_msg("parse_num(\"%s\", %llu, %llu, %u): %d, expected %d",
				 c->s ? c->s : "(null)", (unsigned long long)c->min,
				 (unsigned long long)c->max, c->flags, ret, c->ret);
		if (ret == 0 && out != c->want)
			fail_msg("parse_num(\"%s\") = %llu, expected %llu", c->s,
				 (unsigned long long)out,
				 (unsigned long long)c->want);
		/* a failed parse leaves the destination alone */
		if (ret != 0 && out != 0x5a5a5a5a5a5a5a5aull)
			fail_msg("parse_num(\"%s\") failed but wrote %llu",
				 c->s ? c->s : "(null)", (unsigned long long)out);
	}
}

/* Every number 0..99999 and a sample up to 2^64-1 reads back as printed. */
static void test_parse_num_round_trip(void **state)
{
	char buf[32];
	uint64_t out, v = 1;

	(void)state;
	for (uint64_t i = 0; i < 100000; i++) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)i);
		assert_int_equal(parse_num(buf, 0, UINT64_MAX, PARSE_SUFFIX, &out), 0);
		assert_true(out == i);
	}
	for (int i = 0; i < 200; i++, v = v * 3 + 7) {
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
		assert_int_equal(parse_num(buf, 0, UINT64_MAX, 0, &out), 0);
		assert_true(out == v);
	}
}

static void test_size_name(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(parse_size_name(0, buf, sizeof(buf)), "0");
	assert_string_equal(parse_size_name(100, buf, sizeof(buf)), "100");
	assert_string_equal(parse_size_name(4096, buf, sizeof(buf)), "4k");
	assert_string_equal(parse_size_name(4097, buf, sizeof(buf)), "4097");
	assert_string_equal(parse_size_name(2ull << 20, buf, sizeof(buf)), "2m");
	assert_string_equal(parse_size_name(1ull << 50, buf, sizeof(buf)), "1024t");
}

/* --- parse_args ----------------------------------------------------------- */

static void no_usage(FILE *out)
{
	fputs("usage\n", out);
}

struct args {
	uint64_t size, list[4];
	int runs, nlist, choice;
	const char *str, *path;
	bool flag, size_given;
};

static bool even(uint64_t v)
{
	return v % 2 == 0;
}

/* parse_args() over a NULL-terminated argument list; returns the status
 * (-1 when it says to run) and fills @a. */
static int run_args(struct args *a, bool with_path, ...)
{
	static const char *const choices[] = { "dev", "mem", NULL };
	const struct opt opts[] = {
		{ .name = "size", .letter = 's', .kind = OPT_U64, .dest = &a->size,
		  .min = 4096, .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .multiple = 4096, .given = &a->size_given },
		{ .name = "runs", .letter = 'r', .kind = OPT_INT, .dest = &a->runs,
		  .min = 1, .max = 101 },
		{ .name = "list", .kind = OPT_U64_LIST, .dest = a->list, .min = 0,
		  .max = 100, .max_count = 4, .count = &a->nlist, .valid = even },
		{ .name = "map", .kind = OPT_CHOICE, .dest = &a->choice,
		  .choices = choices },
		{ .name = "str", .kind = OPT_STR, .dest = &a->str },
		{ .name = "flag", .kind = OPT_FLAG, .dest = &a->flag },
		{ 0 },
	};
	const struct opt_cmd cmd = {
		.name = "test", .opts = opts, .usage = no_usage,
		.arg_name = with_path ? "PATH" : NULL, .arg_expected = "one path",
		.arg = &a->path,
	};
	char *argv[16] = { "cmd" };
	int argc = 1, status = -7;
	va_list ap;

	memset(a, 0, sizeof(*a));
	a->runs = 5;
	va_start(ap, with_path);
	for (char *s; (s = va_arg(ap, char *)) && argc < 15;)
		argv[argc++] = s;
	va_end(ap);
	if (parse_args(&cmd, argc, argv, &status))
		return -1;
	return status;
}

static void test_parse_args(void **state)
{
	struct args a;

	(void)state;
	/* defaults stay when an option is not given */
	assert_int_equal(run_args(&a, false, NULL), -1);
	assert_int_equal(a.runs, 5);
	assert_false(a.size_given);

	assert_int_equal(run_args(&a, false, "--size", "8k", "-r", "7", "--flag",
				  "--map", "mem", "--str", "-x", NULL), -1);
	assert_true(a.size == 8192 && a.size_given && a.runs == 7 && a.flag);
	assert_int_equal(a.choice, 1);
	assert_string_equal(a.str, "-x");	/* a value may start with '-' */

	assert_int_equal(run_args(&a, false, "--size=12k", "-r101", NULL), -1);
	assert_true(a.size == 12288 && a.runs == 101);

	assert_int_equal(run_args(&a, false, "--list", "0,2,100", NULL), -1);
	assert_int_equal(a.nlist, 3);
	assert_true(a.list[0] == 0 && a.list[1] == 2 && a.list[2] == 100);

	/* usage errors: exit status 2 */
	static const char *const bad[][3] = {
		{ "--size", "5000" },		/* not a multiple of 4k */
		{ "--size", "0" },
		{ "--size", "-4096" },
		{ "--size", "1.5m" },
		{ "--size", "2048t" },		/* above PARSE_SIZE_MAX */
		{ "--runs", "0" },
		{ "--runs", "102" },
		{ "--runs", "2147483648" },
		{ "--runs", "1k" },		/* no suffix on a count */
		{ "--list", "2,3" },		/* 3 is odd */
		{ "--list", "2,,4" },
		{ "--list", "2," },
		{ "--list", "," },
		{ "--list", "" },
		{ "--list", "2,4,6,8,10" },	/* more than 4 */
		{ "--map", "dax" },
		{ "--map", "" },
		{ "--siz", "4k" },		/* no abbreviations */
		{ "--sizes", "4k" },
		{ "-q", "1" },
		{ "--flag=1" },
		{ "--size" },			/* value missing */
		{ "stray" },			/* no positional argument */
		{ "--", "stray" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int st = run_args(&a, false, bad[i][0], bad[i][1], NULL);

		if (st != 2)
			fail_msg("%s %s: status %d, expected 2", bad[i][0],
				 bad[i][1] ? bad[i][1] : "", st);
	}

	/* --help wins, status 0 */
	assert_int_equal(run_args(&a, false, "--size", "8k", "--help", NULL), 0);
	assert_int_equal(run_args(&a, false, "-h", NULL), 0);

	/* one positional argument, anywhere, "--" for one that starts with '-' */
	assert_int_equal(run_args(&a, true, "p", "--flag", NULL), -1);
	assert_string_equal(a.path, "p");
	assert_int_equal(run_args(&a, true, "--flag", "p", NULL), -1);
	assert_string_equal(a.path, "p");
	assert_int_equal(run_args(&a, true, "--", "-p", NULL), -1);
	assert_string_equal(a.path, "-p");
	assert_int_equal(run_args(&a, true, "-", NULL), -1);
	assert_string_equal(a.path, "-");
	assert_int_equal(run_args(&a, true, NULL), 2);
	assert_int_equal(run_args(&a, true, "p", "q", NULL), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_num_table),
		cmocka_unit_test(test_parse_num_round_trip),
		cmocka_unit_test(test_size_name),
		cmocka_unit_test(test_parse_args),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
