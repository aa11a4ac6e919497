// SPDX-License-Identifier: MIT
/*
 * crash_torn_sector.c - how often a power cut during one FUA sector write
 * through ntm_blk_write() leaves the sector torn: neither all old nor all
 * new. A fact to document, not a property to assert: the raw block device
 * writes a sector with non-temporal stores, each 8-byte unit reaches
 * media on its own, and nothing makes the sector atomic (that is the BTT's
 * job). The program prints its figures and fails only when its sanity
 * facts do not hold: the all-old and the all-new states are seen and are
 * not torn, and at least one torn state exists - so the day sector writes
 * become atomic, this program notices and its figures must be revisited.
 *
 * For 512- and 4096-byte sectors of an emulated namespace in /dev/shm
 * (anonymous memory if that fails), with the recorder build, the crash
 * images of one sector write at its fences and write-backs: the FUA fence,
 * where every unit of the sector is pending (2^64 or 2^512 states, all
 * but two of them torn: sampled), and the point after the write returned.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ntmem.h>
#include <ntmem/crash.h>

#define NS_SIZE (64u << 10)
#define SECTOR_NO 3		/* the sector written: not the first */
#define SAMPLES 4096		/* states per point beyond 2^12 */

struct torn {
	struct ntm_blk *blk;
	size_t ss;		/* sector size */
	uint64_t off;		/* its byte offset */
	unsigned char *old_data, *new_data;
	uint64_t old, new, torn;	/* images of each kind */
	ssize_t written;	/* what ntm_blk_write() returned */
};

static int check(void *image, size_t size, void *arg)
{
	struct torn *t = arg;

	if (!memcmp(image, t->old_data, size))
		t->old++;
	else if (!memcmp(image, t->new_data, size))
		t->new++;
	else
		t->torn++;
	return 0;	/* a torn sector is the fact measured, not a failure */
}

static void workload(void *arg)
{
	struct torn *t = arg;

	t->written = ntm_blk_write(t->blk, t->new_data, t->ss, t->off,
				   NTM_BLK_FUA);
}

/* Every unit differs between old and new, so each flip shows. */
static void fill(unsigned char *p, size_t n, uint64_t seed)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = (i / 8 + 1) * 0x9e3779b97f4a7c15ull ^ seed;

		memcpy(p + i, &v, 8);
	}
}

static int run(struct ntm_ns *ns, unsigned ss)
{
	struct ntm_blk_config bc = { .sector_size = ss };
	struct ntm_crash_config cfg = {
		.size = ss,
		.points = NTM_CRASH_AT_FENCE | NTM_CRASH_AT_WRITEBACK,
		.samples = SAMPLES,
		.check = check,
	};
	struct ntm_crash_result res;
	struct torn t = { .ss = ss, .off = (uint64_t)SECTOR_NO * ss };
	int ret, ok = 1;

	t.old_data = aligned_alloc(64, ss);
	t.new_data = aligned_alloc(64, ss);
	if (!t.old_data || !t.new_data)
		return 1;
	fill(t.old_data, ss, 0x6f6c64);
	fill(t.new_data, ss, 0x6e6577);
	ret = ntm_blk_open(&t.blk, ns, &bc);
	if (ret) {
		fprintf(stderr, "crash_torn_sector: blk_open: %s\n",
			ntm_errmsg());
		return 1;
	}
	/* The old contents, durable before the run takes them as such. */
	if (ntm_blk_write(t.blk, t.old_data, ss, t.off, NTM_BLK_FUA) !=
	    (ssize_t)ss) {
		fprintf(stderr, "crash_torn_sector: write: %s\n", ntm_errmsg());
		return 1;
	}

	cfg.region = (unsigned char *)ntm_ns_base(ns) + t.off;
	cfg.arg = &t;
	ret = ntm_crash_run(&cfg, workload, &t, &res);
	if (ret < 0 || t.written != (ssize_t)ss) {
		fprintf(stderr, "crash_torn_sector: %u-byte sector: run %d, "
			"write %zd\n", ss, ret, t.written);
		return 1;
	}
	printf("%u-byte sector, FUA write: %llu crash points (at most %llu "
	       "units pending), %llu states checked, %llu torn (%.2f%%), "
	       "%llu all old, %llu all new\n", ss,
	       (unsigned long long)res.points,
	       (unsigned long long)res.max_pending,
	       (unsigned long long)res.states, (unsigned long long)t.torn,
	       res.states ? 100.0 * t.torn / res.states : 0.0,
	       (unsigned long long)t.old, (unsigned long long)t.new);

	/* The sanity facts: what the engine must show for any sector write. */
	if (t.old + t.new + t.torn != res.states || res.failures) {
		fprintf(stderr, "crash_torn_sector: images and states disagree\n");
		ok = 0;
	}
	if (!t.old || !t.new) {
		fprintf(stderr, "crash_torn_sector: the all-old or the all-new "
			"state was not seen whole\n");
		ok = 0;
	}
	if (res.max_pending != ss / 8) {
		fprintf(stderr, "crash_torn_sector: %llu units pending at the "
			"fence, expected %u\n",
			(unsigned long long)res.max_pending, ss / 8);
		ok = 0;
	}
	if (!t.torn) {
		fprintf(stderr, "crash_torn_sector: no torn state: are sector "
			"writes atomic now? Revisit these figures.\n");
		ok = 0;
	}
	ntm_blk_close(t.blk);
	free(t.old_data);
	free(t.new_data);
	return !ok;
}

int main(void)
{
	static const unsigned sizes[] = { 512, 4096 };
	char path[64];
	struct ntm_ns *ns;
	int bad = 0;

	snprintf(path, sizeof(path), "/dev/shm/ntmem-torn-%ld", (long)getpid());
	if (ntm_ns_create(&ns, path, NS_SIZE, 4096,
			  NTM_NS_EMULATE | NTM_NS_TEMPORARY) &&
	    ntm_ns_anon(&ns, NS_SIZE, 4096)) {
		fprintf(stderr, "crash_torn_sector: no namespace: %s\n",
			ntm_errmsg());
		return 1;
	}
	printf("namespace: %s, %u KiB; sampled points: %u states + all old "
	       "+ all new\n", ntm_ns_kind_name(ntm_ns_kind(ns)), NS_SIZE >> 10,
	       SAMPLES);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		bad |= run(ns, sizes[i]);
	}
	ntm_ns_close(ns);
	return bad;
}
