// SPDX-License-Identifier: MIT
/*
 * fuzz_bb_parse.c - the bad-sector list file parser, ntm_bb_parse()
 * (src/badblocks.h), against a reference written here from the header:
 * lines of "sector count" (two decimal numbers, one space, no other
 * characters, count at least 1, sector + count within 2^64), the last one
 * may lack its newline, no blank lines; -EINVAL with the first bad line's
 * number (from 1). Ranges are clipped to the device's @nsectors (dropped
 * past it) and merged; the result must be sorted, disjoint and not
 * touching, and cover exactly the sectors the model marks.
 *
 * The model keeps a bitmap, so the harness picks small devices (up to 4096
 * sectors) for most inputs; a flag bit picks a huge @nsectors, checked for
 * the list's shape and the error line only. The text is handed over in a
 * buffer of exactly its length, so ASan sees any read past it.
 */
#define _GNU_SOURCE	/* nftw() in fuzz.h */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "badblocks.h"
#include "fuzz.h"

#define SMALL_MAX 4096

/* One decimal number of the line [*p, end); false past 2^64 - 1. */
static bool number(const char **p, const char *end, uint64_t *v)
{
	const char *q = *p;
	unsigned __int128 w = 0;

	if (q == end || *q < '0' || *q > '9')
		return false;
	while (q < end && *q >= '0' && *q <= '9') {
		w = w * 10 + (unsigned)(*q++ - '0');
		if (w > UINT64_MAX)
			return false;
	}
	*p = q;
	*v = (uint64_t)w;
	return true;
}

/*
 * 0, or -EINVAL with *@line set to the first bad line. Marks the clipped
 * ranges in @bits when @nsectors is small.
 */
static int reference(const char *text, size_t len, uint64_t nsectors,
		     bool *bits, size_t *line)
{
	const char *p = text, *end = text + len;

	*line = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		uint64_t s, n;

		if (!eol)
			eol = end;
		++*line;
		if (!number(&p, eol, &s) || p == eol || *p++ != ' ' ||
		    !number(&p, eol, &n) || p != eol || n == 0 ||
		    n > UINT64_MAX - s)
			return -EINVAL;
		p = eol + 1;
		if (bits && s < nsectors)
			for (uint64_t i = s; i < nsectors && i - s < n; i++)
				bits[i] = true;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool bits[SMALL_MAX];
	struct fz in = { data, size };
	uint8_t sel = fz_u8(&in);
	bool huge = sel & 1;
	uint64_t nsectors = huge ? fz_uint(&in, 8) : fz_uint(&in, 2) % (SMALL_MAX + 1);
	struct ntm_bb_list list = { 0, NULL };
	size_t bad_line = 0, want_line;
	char *text = malloc(in.n ? in.n : 1);
	int r, w;

	FZ_CHECK(text, "no memory");
	memcpy(text, in.p, in.n);
	memset(bits, 0, sizeof(bits));
	r = ntm_bb_parse(text, in.n, nsectors, &list, &bad_line);
	w = reference(text, in.n, nsectors, huge ? NULL : bits, &want_line);
	free(text);

	FZ_CHECK(r == w, "%zu bytes, %llu sectors: returned %d, the contract %d",
		 in.n, (unsigned long long)nsectors, r, w);
	if (r) {
		FZ_CHECK(bad_line == want_line, "bad line %zu, the contract's %zu",
			 bad_line, want_line);
		return 0;
	}
	for (size_t i = 0; i < list.n; i++) {
		const struct ntm_badblock *b = &list.v[i];

		FZ_CHECK(b->count > 0 && b->sector < nsectors &&
			 b->count <= nsectors - b->sector,
			 "range %zu (%llu+%llu) empty or past %llu sectors", i,
			 (unsigned long long)b->sector,
			 (unsigned long long)b->count,
			 (unsigned long long)nsectors);
		FZ_CHECK(i == 0 || list.v[i - 1].sector + list.v[i - 1].count <
			 b->sector, "ranges %zu and %zu not sorted, disjoint and "
			 "apart", i - 1, i);
		if (huge)
			continue;
		for (uint64_t s = b->sector; s < b->sector + b->count; s++) {
			FZ_CHECK(bits[s], "sector %llu listed, not in the text",
				 (unsigned long long)s);
			bits[s] = false;	/* seen */
		}
	}
	for (size_t s = 0; !huge && s < SMALL_MAX; s++)
		FZ_CHECK(!bits[s], "sector %zu in the text, not in the list", s);
	ntm_bb_free(&list);
	return 0;
}
