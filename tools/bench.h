/* SPDX-License-Identifier: MIT */
/*
 * bench.h - what every `ntmem bench` command shares: a clock, statistics
 * over repeated runs, pre-faulted non-zero memory, CPU pinning, a check
 * that a run fits in memory and on disk before it starts, and a progress
 * line. Options are parsed by parse.h.
 */
#ifndef NTMEM_TOOL_BENCH_H
#define NTMEM_TOOL_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "parse.h"
#include "report.h"

/* Monotonic nanoseconds. */
uint64_t bench_now_ns(void);

/*
 * Median, min and max of n samples (1 to BENCH_MAX_RUNS). The samples
 * keep their run order: bench copy pairs run r of one row with run r of
 * another.
 */
struct bench_stats {
	double median, min, max;
};
void bench_stats(const double *samples, int n, struct bench_stats *out);

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

/* A one-line progress indicator on stderr, only when stderr is a tty. */
void bench_progress(int done, int total, const char *what);
void bench_progress_done(void);

struct ntm_variant;
/*
 * The widest copy variant this CPU runs: its NT fill of a region is the
 * streaming-write limit every benchmark compares against.
 */
const struct ntm_variant *bench_widest_variant(void);

/*
 * The streaming limit's speed over a run's groups (each times it): its
 * spread says whether the machine wrote at one speed all run long. On a
 * shared VM it does not always: an EPYC VM's limit fell from 35 to 19-21
 * GB/s for minutes while the cached copies kept their speed, and the NT
 * rows of those groups rose to 1.4-1.7x glibc. A steady run of the same
 * machine kept the limit's group medians within 8%, so a spread of more
 * than BENCH_LIMIT_STEADY says the groups' ratios were measured on
 * different machines, in effect, and a verdict over them should be rerun.
 */
#define BENCH_LIMIT_STEADY 1.15
struct bench_limit_range {
	double lo, hi;	/* GB/s; 0 before the first group */
};
void bench_limit_note(struct bench_limit_range *lr, double gbps);
/* "; the machine's write speed moved ...: rerun ..." or " (steady)". */
const char *bench_limit_verdict(const struct bench_limit_range *lr);

/*
 * What a run will write before it writes it: a run that does not fit
 * would die of SIGBUS (a full tmpfs under a mapping) or be killed for
 * memory part way, so it is refused up front instead.
 */
struct bench_room {
	const char *dir;	/* where the run's files live, or NULL */
	uint64_t disk;		/* bytes the run writes into files in @dir */
	const char *disk_what;	/* what those bytes are, for the message */
	uint64_t mem;		/* bytes of memory the run touches */
	const char *mem_what;
};
/*
 * 0 when @r fits: @r->disk in @dir's free space (statvfs), and @r->mem,
 * plus @r->disk when @dir is a tmpfs (its pages are memory), within
 * MemAvailable. Otherwise print what is needed and what is available and
 * return 1, the exit status of a run that could not start.
 */
int bench_check_room(const char *cmd, const struct bench_room *r);

/*
 * The setup of a copy benchmark: pin to @cpu, check that @dst_len +
 * @src_len bytes of memory are there (@what names them), and map both
 * regions (transparent huge pages when @huge). 0, or 1 (the exit status)
 * after a message naming @cmd; nothing stays mapped then.
 */
int bench_map_copy_regions(const char *cmd, int cpu, bool huge,
			   const char *what, struct bench_region *dst,
			   size_t dst_len, struct bench_region *src,
			   size_t src_len);

/* Runs per case: at least 5 for a median, at most this. */
#define BENCH_MAX_RUNS 101

/*
 * Option table entries (parse.h) every benchmark spells the same way:
 * --runs, --no-pmdk, --json/--csv, and for the namespace benchmarks
 * --device/--dir.
 */
#define BENCH_OPT_RUNS(runs)                                                \
	{ .name = "runs", .letter = 'r', .kind = OPT_INT, .dest = (runs),   \
	  .min = 1, .max = BENCH_MAX_RUNS }
#define BENCH_OPT_NO_PMDK(flag)                                             \
	{ .name = "no-pmdk", .kind = OPT_FLAG, .dest = (flag) }
#define BENCH_OPTS_FORMAT(json, csv)                                        \
	{ .name = "json", .kind = OPT_FLAG, .dest = (json) },               \
	{ .name = "csv", .kind = OPT_FLAG, .dest = (csv) }
#define BENCH_OPTS_NAMESPACE(device, dir)                                   \
	{ .name = "device", .letter = 'd', .kind = OPT_STR, .dest = (device) }, \
	{ .name = "dir", .kind = OPT_STR, .dest = (dir) }

/* Output format from --json / --csv; both given is a usage error (2). */
enum report_format bench_format(bool json, bool csv);
int bench_opt_format(const char *cmd, bool json, bool csv);

/* Describe the host: transparent huge page mode and the CPU model. */
const char *bench_thp_mode(char *buf, size_t len);
const char *bench_cpu_model(char *buf, size_t len);

#endif
