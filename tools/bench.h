/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what every `ntmem bench` command shares: a clock, statistics
 * over repeated runs, pre-faulted non-zero memory, CPU pinning, size
 * parsing and a progress line.
 */
#ifndef NTMEM_TOOL_BENCH_H
#define NTMEM_TOOL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"

/* Monotonic nanoseconds. */
uint64_t bench_now_ns(void);

/* Median, min and max of n samples (sorted in place). */
struct bench_stats {
	double median, min, max;
};
void bench_stats(double *samples, int n, struct bench_stats *out);

/*
 * A pre-faulted anonymous region filled with a non-zero pattern: this
 * machine writes all-zero lines faster than data, and first-touch page
 * faults would be timed with the copy otherwise.
 */
struct bench_region {
	void *base;
	size_t len;
	bool huge;	/* transparent huge pages were requested */
};
int bench_region_alloc(struct bench_region *r, size_t len, bool huge);
void bench_region_free(struct bench_region *r);
/* Fill with a non-zero byte pattern derived from @seed. */
void bench_fill_pattern(void *p, size_t len, unsigned seed);

/* Pin the calling thread to @cpu; -1 keeps the current CPU. 0 or -errno. */
int bench_pin_cpu(int cpu);
/* The CPU the caller runs on. */
int bench_current_cpu(void);

/*
 * Parse "4096", "4k", "1.5m", "2g" (binary units) into bytes. Returns 0 or
 * -EINVAL. A list parser splits on commas.
 */
int bench_parse_size(const char *s, size_t *out);
int bench_parse_size_list(const char *s, size_t *out, int max, int *count);

/* Human-readable size: "64", "4k", "1m" when exact, else bytes. */
const char *bench_size_name(size_t bytes, char *buf, size_t len);

/* A one-line progress indicator on stderr, only when stderr is a tty. */
void bench_progress(int done, int total, const char *what);
void bench_progress_done(void);

struct ntm_variant;
/*
 * The widest copy variant this CPU runs: its NT fill of a region is the
 * streaming-write limit every benchmark compares against.
 */
const struct ntm_variant *bench_widest_variant(void);

/* Runs per case: at least 5 for a median, at most this. */
#define BENCH_MAX_RUNS 101

/*
 * Parse option @opt's whole-number @arg in [@min, @max] into @out. Return:
 * 0, or the usage exit status after naming the bad value (cmd_bad_arg()).
 */
int bench_opt_int(const char *cmd, const char *opt, const char *arg, long min,
		  long max, int *out);
/* --runs: 1 to BENCH_MAX_RUNS. */
#define bench_opt_runs(cmd, arg, runs) \
	bench_opt_int(cmd, "--runs", arg, 1, BENCH_MAX_RUNS, runs)

/* Output format from --json / --csv; both given is a usage error (2). */
enum report_format bench_format(bool json, bool csv);
int bench_opt_format(const char *cmd, bool json, bool csv);

/* Describe the host: transparent huge page mode and the CPU model. */
const char *bench_thp_mode(char *buf, size_t len);
const char *bench_cpu_model(char *buf, size_t len);

#endif
