// SPDX-License-Identifier: MIT
/*
 * parse.c - the tool's one command-line parser; see parse.h.
 *
 * Written by hand rather than on strtoul()/getopt_long(): strtoul takes
 * "-1" as 2^64 - 1, "010" as octal and " 4" with its space, and getopt
 * accepts abbreviated option names; each of those let a typo run a
 * different benchmark from the one asked for.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "parse.h"

int parse_num(const char *s, uint64_t min, uint64_t max, unsigned flags,
	      uint64_t *out)
{
	uint64_t v = 0;
	bool overflow = false;
	unsigned shift = 0;
	const char *p = s;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	/* "010" is ten to some and eight to strtoul: refuse to guess */
	if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			v = v * 10 + d;
	}
	if (*p && (flags & PARSE_SUFFIX)) {
		switch (*p) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		case 't': case 'T': shift = 40; break;
		default: return -EINVAL;
		}
		p++;
	}
	if (*p)
		return -EINVAL;
	if (overflow || (shift && v > UINT64_MAX >> shift))
		return -ERANGE;
	v <<= shift;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

const char *parse_size_name(uint64_t bytes, char *buf, size_t len)
{
	static const char units[] = "kmgt";
	int u = -1;
	uint64_t v = bytes;

	while (v >= 1024 && v % 1024 == 0 && u < 3)
		v /= 1024, u++;
	if (u < 0)
		snprintf(buf, len, "%llu", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%llu%c", (unsigned long long)v, units[u]);
	return buf;
}

int parse_bad_arg(const char *cmd, const char *option, const char *value,
		  const char *expected)
{
	fprintf(stderr, "ntmem %s: invalid %s '%s': expected %s (%s)\n", cmd,
		option, value, expected, strerror(EINVAL));
	return 2;
}

/* What a good value of @o looks like, from its kind and range. */
static const char *describe(const struct opt *o, char *buf, size_t len)
{
	char lo[32], hi[32], mult[48] = "";
	bool size = o->flags & PARSE_SUFFIX;
	size_t used = 0;

	if (o->expected)
		return o->expected;
	switch (o->kind) {
	case OPT_FLAG:
		return "no value";
	case OPT_STR:
		return "a value";
	case OPT_CHOICE:
		for (int i = 0; o->choices[i]; i++)
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0,
						 "%s%s", i == 0 ? "" : o->choices[i + 1] ? ", " : " or ",
						 o->choices[i]);
		return buf;
	case OPT_INT:
	case OPT_U64:
	case OPT_U64_LIST:
		break;
	}
	if (size) {
		parse_size_name(o->min, lo, sizeof(lo));
		parse_size_name(o->max, hi, sizeof(hi));
	} else {
		snprintf(lo, sizeof(lo), "%llu", (unsigned long long)o->min);
		snprintf(hi, sizeof(hi), "%llu", (unsigned long long)o->max);
	}
	if (o->multiple > 1)
		snprintf(mult, sizeof(mult), ", a multiple of %s",
			 parse_size_name(o->multiple, (char[32]){ 0 }, 32));
	if (o->kind == OPT_U64_LIST)
		snprintf(buf, len, "a comma list of at most %d %s from %s to %s%s",
			 o->max_count, size ? "sizes (k, m, g, t suffixes)"
					    : "decimal numbers", lo, hi, mult);
	else
		snprintf(buf, len, "%s from %s to %s%s",
			 size ? "a size (k, m, g, t suffixes)" : "a decimal number",
			 lo, hi, mult);
	return buf;
}

/* One number of option @o: 0 or -errno. */
static int one_num(const struct opt *o, const char *s, uint64_t *v)
{
	int ret = parse_num(s, o->min, o->max, o->flags, v);

	if (!ret && o->multiple > 1 && *v % o->multiple)
		ret = -EINVAL;
	if (!ret && o->valid && !o->valid(*v))
		ret = -EINVAL;
	return ret;
}

/* Store @val into @o's destination: 0 or -EINVAL. */
static int store(const struct opt *o, const char *val)
{
	uint64_t v, list[256];
	int n = 0;

	switch (o->kind) {
	case OPT_FLAG:
		*(bool *)o->dest = true;
		return 0;
	case OPT_STR:
		*(const char **)o->dest = val;
		return 0;
	case OPT_CHOICE:
		for (int i = 0; o->choices[i]; i++)
			if (strcmp(val, o->choices[i]) == 0) {
				*(int *)o->dest = i;
				return 0;
			}
		return -EINVAL;
	case OPT_INT:
		if (one_num(o, val, &v))
			return -EINVAL;
		*(int *)o->dest = (int)v;
		return 0;
	case OPT_U64:
		if (one_num(o, val, &v))
			return -EINVAL;
		*(uint64_t *)o->dest = v;
		return 0;
	case OPT_U64_LIST:
		/* Every element, empty ones too ("64,,4k", "64,"), is checked. */
		for (const char *p = val;; p++) {
			size_t len = strcspn(p, ",");
			char tok[32];

			if (len == 0 || len >= sizeof(tok) || n == o->max_count ||
			    n == (int)(sizeof(list) / sizeof(*list)))
				return -EINVAL;
			memcpy(tok, p, len);
			tok[len] = '\0';
			if (one_num(o, tok, &list[n++]))
				return -EINVAL;
			p += len;
			if (!*p)
				break;
		}
		memcpy(o->dest, list, (size_t)n * sizeof(*list));
		*o->count = n;
		return 0;
	}
	return -EINVAL;
}

static const struct opt *find_long(const struct opt *opts, const char *name,
				   size_t len)
{
	for (const struct opt *o = opts; o->name; o++)
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return o;
	return NULL;
}

static const struct opt *find_letter(const struct opt *opts, char letter)
{
	for (const struct opt *o = opts; o->name; o++)
		if (o->letter && o->letter == letter)
			return o;
	return NULL;
}

/* "an option of this command: --size, --json, --help" */
static int bad_option(const struct opt_cmd *cmd, const char *arg)
{
	char list[512] = "one of ";
	size_t used = strlen(list);

	for (const struct opt *o = cmd->opts; o->name && used < sizeof(list); o++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "--%s, ",
					 o->name);
	if (used < sizeof(list))
		snprintf(list + used, sizeof(list) - used, "--help");
	return parse_bad_arg(cmd->name, "option", arg, list);
}

bool parse_args(const struct opt_cmd *cmd, int argc, char **argv, int *status)
{
	bool options_end = false, have_arg = false;
	char what[600], optname[64];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		const struct opt *o;
		bool attached = false;

		if (options_end || a[0] != '-' || a[1] == '\0') {
			if (!cmd->arg_name || have_arg) {
				*status = parse_bad_arg(cmd->name, "argument", a,
							cmd->arg_name ? cmd->arg_expected
								      : "options only");
				return false;
			}
			*cmd->arg = a;
			have_arg = true;
			continue;
		}
		if (strcmp(a, "--") == 0) {
			options_end = true;
			continue;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			cmd->usage(stdout);
			*status = 0;
			return false;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');

			o = find_long(cmd->opts, a + 2, eq ? (size_t)(eq - a - 2)
							   : strlen(a + 2));
			if (eq)
				val = eq + 1, attached = true;
		} else {
			o = find_letter(cmd->opts, a[1]);
			if (a[2])
				val = a + 2, attached = true;
		}
		if (!o) {
			*status = bad_option(cmd, a);
			return false;
		}
		snprintf(optname, sizeof(optname), "--%s", o->name);
		if (o->kind == OPT_FLAG && attached) {
			*status = parse_bad_arg(cmd->name, optname, val, "no value");
			return false;
		}
		if (o->kind != OPT_FLAG && !attached) {
			if (i + 1 == argc) {
				*status = parse_bad_arg(cmd->name, optname, "(none)",
							describe(o, what, sizeof(what)));
				return false;
			}
			val = argv[++i];
		}
		if (store(o, val)) {
			*status = parse_bad_arg(cmd->name, optname, val,
						describe(o, what, sizeof(what)));
			return false;
		}
		if (o->given)
			*o->given = true;
	}
	if (cmd->arg_name && !have_arg) {
		*status = parse_bad_arg(cmd->name, cmd->arg_name, "(none)",
					cmd->arg_expected);
		return false;
	}
	return true;
}
