// SPDX-License-Identifier: MIT
/*
 * bench.c - shared benchmark helpers; see bench.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>
#include <ntmem.h>

#include "bench.h"
#include "parse.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void bench_stats(const double *samples, int n, struct bench_stats *out)
{
	double s[BENCH_MAX_RUNS];

	if (n > BENCH_MAX_RUNS)
		n = BENCH_MAX_RUNS;
	memcpy(s, samples, (size_t)n * sizeof(*s));
	qsort(s, (size_t)n, sizeof(*s), cmp_double);
	out->min = s[0];
	out->max = s[n - 1];
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void bench_fill_pattern(void *p, size_t len, unsigned seed)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
	unsigned char *b = p;
	size_t i = 0;

	/* xorshift words with bit 0 of every byte forced on: never zero. */
	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		w = x | 0x0101010101010101ull;
		memcpy(b + i, &w, 8);
	}
	for (; i < len; i++)
		b[i] = (unsigned char)(0x5a + i);
}

int bench_region_alloc(struct bench_region *r, size_t len, bool huge)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	/* Ask for huge pages before the first touch, so the fill gets them. */
	if (huge)
		madvise(p, len, MADV_HUGEPAGE);
	bench_fill_pattern(p, len, (unsigned)len);
	r->base = p;
	r->len = len;
	r->huge = huge;
	return 0;
}

void bench_region_free(struct bench_region *r)
{
	if (r->base)
		munmap(r->base, r->len);
	r->base = NULL;
}

int bench_pin_cpu(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		cpu = sched_getcpu();
	if (cpu < 0)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	return 0;
}

int bench_current_cpu(void)
{
	return sched_getcpu();
}

/* "26843545600 bytes (25.0 GiB)" */
static const char *bytes_name(uint64_t n, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)n;
	int u = -1;

	while (v >= 1024 && u < 4)
		v /= 1024, u++;
	if (u < 0)
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
	else
		snprintf(buf, len, "%llu bytes (%.1f %s)", (unsigned long long)n,
			 v, units[u]);
	return buf;
}

/* MemAvailable from /proc/meminfo in bytes; 0 when unknown. */
static uint64_t mem_available(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}

int bench_check_room(const char *cmd, const struct bench_room *r)
{
	uint64_t mem = r->mem, avail;
	char need[64], have[64];

	if (r->dir && r->disk) {
		struct statvfs vfs;
		struct statfs fs;

		if (statvfs(r->dir, &vfs) == 0 && vfs.f_blocks) {
			uint64_t free_bytes = (uint64_t)vfs.f_bavail * vfs.f_frsize;

			if (r->disk > free_bytes) {
				fprintf(stderr, "ntmem %s: %s: %s needed in %s, which "
					"has %s free: use a smaller size or another "
					"--dir\n", cmd, r->disk_what,
					bytes_name(r->disk, need, sizeof(need)),
					r->dir,
					bytes_name(free_bytes, have, sizeof(have)));
				return 1;
			}
		}
		/* A file in tmpfs or ramfs is memory, not disk. */
		if (statfs(r->dir, &fs) == 0 &&
		    (fs.f_type == TMPFS_MAGIC || fs.f_type == RAMFS_MAGIC))
			mem += r->disk;
	}
	avail = mem_available();
	if (avail && mem > avail) {
		fprintf(stderr, "ntmem %s: %s%s%s: %s of memory needed, "
			"MemAvailable is %s: use a smaller size\n", cmd,
			r->mem_what, mem != r->mem ? " and the files in " : "",
			mem != r->mem ? r->dir : "",
			bytes_name(mem, need, sizeof(need)),
			bytes_name(avail, have, sizeof(have)));
		return 1;
	}
	return 0;
}

void bench_progress(int done, int total, const char *what)
{
	if (!isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "\r\033[K[%d/%d] %s", done, total, what);
	fflush(stderr);
}

void bench_progress_done(void)
{
	if (isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
}

void bench_limit_note(struct bench_limit_range *lr, double gbps)
{
	if (lr->lo == 0 || gbps < lr->lo)
		lr->lo = gbps;
	if (gbps > lr->hi)
		lr->hi = gbps;
}

const char *bench_limit_verdict(const struct bench_limit_range *lr)
{
	return lr->hi > BENCH_LIMIT_STEADY * lr->lo
		       ? "; the machine's write speed moved during the run: "
			 "rerun before trusting the verdicts"
		       : " (steady)";
}

const struct ntm_variant *bench_widest_variant(void)
{
	const struct ntm_variant *best = ntm_variant_at(0);

	/* ntm_variant_at() is ordered from the lowest ISA to the highest. */
	for (size_t i = 1; i < ntm_variant_count(); i++)
		if (ntm_variant_supported(ntm_variant_at(i)))
			best = ntm_variant_at(i);
	return best;
}

int bench_opt_format(const char *cmd, bool json, bool csv)
{
	return json && csv ? parse_bad_arg(cmd, "--csv", "with --json",
					   "one output format")
			   : 0;
}

enum report_format bench_format(bool json, bool csv)
{
	return json ? REPORT_JSON : csv ? REPORT_CSV : REPORT_TABLE;
}

/* First line of @path into @buf, without the newline; "" when unreadable. */
static const char *read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	return buf;
}

const char *bench_thp_mode(char *buf, size_t len)
{
	/* "always [madvise] never": the bracketed word is the mode. */
	char line[128];
	char *open, *close;

	read_line("/sys/kernel/mm/transparent_hugepage/enabled", line,
		  sizeof(line));
	open = strchr(line, '[');
	close = open ? strchr(open, ']') : NULL;
	if (!open || !close) {
		snprintf(buf, len, "unknown");
		return buf;
	}
	*close = '\0';
	snprintf(buf, len, "%s", open + 1);
	return buf;
}

const char *bench_cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(buf, len, "unknown");
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (strncmp(line, "model name", 10) == 0 && colon) {
			colon++;
			while (*colon == ' ')
				colon++;
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, len, "%s", colon);
			break;
		}
	}
	fclose(f);
	return buf;
}

int bench_map_copy_regions(const char *cmd, int cpu, bool huge,
			   const char *what, struct bench_region *dst,
			   size_t dst_len, struct bench_region *src,
			   size_t src_len)
{
	struct bench_room room = { .mem = dst_len + src_len, .mem_what = what };
	int ret = bench_pin_cpu(cpu);

	if (ret) {
		fprintf(stderr, "ntmem %s: --cpu %d: %s\n", cmd, cpu,
			strerror(-ret));
		return 1;
	}
	if (bench_check_room(cmd, &room))
		return 1;
	ret = bench_region_alloc(dst, dst_len, huge);
	if (!ret)
		ret = bench_region_alloc(src, src_len, huge);
	if (ret) {
		fprintf(stderr, "ntmem %s: cannot map %zu bytes: %s\n", cmd,
			dst->base ? src_len : dst_len, strerror(-ret));
		bench_region_free(dst);
		return 1;
	}
	return 0;
}
