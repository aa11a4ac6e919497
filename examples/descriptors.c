// SPDX-License-Identifier: MIT
/*
 * descriptors.c - the README's example: initialise an array of 64-byte
 * descriptors from a template with non-temporal stores, then publish it.
 *
 *   cc descriptors.c $(pkg-config --cflags --libs ntmem) -o descriptors
 *   ./descriptors 1000000
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <ntmem.h>

struct desc {			/* 64 bytes, like a struct page */
	uint64_t flags;
	uint64_t owner;
	uint64_t index;		/* differs per slot */
	uint64_t spare[5];
};

int main(int argc, char **argv)
{
	size_t count = argc > 1 ? strtoull(argv[1], NULL, 0) : 1000000;
	struct desc *map = aligned_alloc(64, count * sizeof(*map) + 64);
	const struct desc tmpl = { .flags = 1u << 10, .owner = 0xabcd };
	volatile int ready = 0;

	if (!map || count == 0) {
		fprintf(stderr, "descriptors: bad count or out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < count; i++) {
		struct desc d = tmpl;	/* per-slot field merged in registers */

		d.index = i;
		/* constant size: straight-line MOVNTDQ stores, no call */
		ntm_memcpy_nt(&map[i], &d, sizeof(d));
	}
	ntm_drain();			/* the copies are ordered before ... */
	ready = 1;			/* ... the store that publishes them */

	for (size_t i = 0; i < count; i++)
		if (map[i].index != i || map[i].owner != tmpl.owner) {
			fprintf(stderr, "descriptors: slot %zu is wrong\n", i);
			return 1;
		}
	printf("%zu descriptors initialised and published (ready=%d)\n",
	       count, ready);
	free(map);
	return 0;
}
