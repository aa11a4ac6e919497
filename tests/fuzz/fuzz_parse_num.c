// SPDX-License-Identifier: MIT
/*
 * fuzz_parse_num.c - the tool's number parser, parse_num() (tools/parse.h),
 * against a reference written here from the header's contract alone:
 * decimal digits, no sign, no leading zero but "0" itself, with
 * PARSE_SUFFIX one k/m/g/t (either case, binary units); -EINVAL for any
 * other text, -ERANGE for a number above 2^64 - 1 (with its suffix) or
 * outside [min, max]; *out written only on success. The input is the
 * flags, min and max, then the text (NUL-terminated by the harness, and
 * cut at the first NUL in the input); a flag bit passes NULL instead.
 */
#define _GNU_SOURCE	/* nftw() in fuzz.h */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"
#include "fuzz.h"

/* The contract, spelled out the slow way: syntax first, then range. */
static int reference(const char *s, uint64_t min, uint64_t max,
		     unsigned flags, uint64_t *out)
{
	size_t digits = 0, len;
	unsigned shift = 0;
	bool over = false;
	uint64_t v = 0;

	if (!s)
		return -EINVAL;
	len = strlen(s);
	while (digits < len && s[digits] >= '0' && s[digits] <= '9')
		digits++;
	if (digits == 0 || (digits > 1 && s[0] == '0'))
		return -EINVAL;
	if (digits < len) {
		const char *units = "kKmMgGtT", *u;

		if (!(flags & PARSE_SUFFIX) || digits + 1 != len)
			return -EINVAL;
		u = strchr(units, s[digits]);
		if (!u || !*u)
			return -EINVAL;
		shift = 10 * (unsigned)(1 + (u - units) / 2);
	}
	for (size_t i = 0; i < digits; i++) {
		unsigned __int128 w = (unsigned __int128)v * 10 + (unsigned)(s[i] - '0');

		if (w > UINT64_MAX)
			over = true;
		v = (uint64_t)w;
	}
	if (over || (shift && v > (UINT64_MAX >> shift)))
		return -ERANGE;
	v <<= shift;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	uint8_t sel = fz_u8(&in);
	unsigned flags = sel & 1 ? PARSE_SUFFIX : 0;
	uint64_t min = 0, max = UINT64_MAX, got = 0x1111, want = 0x2222;
	char text[96];
	size_t n;
	int r, w;

	if (sel & 2)
		min = fz_uint(&in, 8);
	if (sel & 4)
		max = fz_uint(&in, 8);
	n = in.n < sizeof(text) - 1 ? in.n : sizeof(text) - 1;
	memcpy(text, in.p, n);
	text[n] = '\0';

	r = parse_num(sel & 8 ? NULL : text, min, max, flags, &got);
	w = reference(sel & 8 ? NULL : text, min, max, flags, &want);
	FZ_CHECK(r == w, "parse_num(\"%s\", %llu, %llu, 0x%x) returned %d, "
		 "the contract %d", sel & 8 ? "(null)" : text,
		 (unsigned long long)min, (unsigned long long)max, flags, r, w);
	if (r == 0)
		FZ_CHECK(got == want, "parse_num(\"%s\") = %llu, the contract %llu",
			 text, (unsigned long long)got, (unsigned long long)want);
	else
		FZ_CHECK(got == 0x1111, "parse_num(\"%s\") failed (%d) but wrote "
			 "*out", sel & 8 ? "(null)" : text, r);
	return 0;
}
