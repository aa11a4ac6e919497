/* SPDX-License-Identifier: MIT */
/*
 * bench_calibrate.h - `ntmem bench copy --calibrate` (bench_calibrate.c),
 * started by bench_copy.c with the options the two share.
 */
#ifndef NTMEM_TOOL_BENCH_CALIBRATE_H
#define NTMEM_TOOL_BENCH_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

#define CALIBRATE_MAX_SIZES 64
#define CALIBRATE_MAX_ALIGNS 16

struct calibrate_options {
	uint64_t sizes[CALIBRATE_MAX_SIZES];	/* ascending after the call */
	int nsizes;			/* 0: the default sizes */
	uint64_t aligns[CALIBRATE_MAX_ALIGNS];
	int naligns;			/* 0: offsets 0 and 1 */
	bool quick;			/* fewer default sizes */
	uint64_t total;			/* bytes written per run */
	int runs;
	int cpu;			/* -1: the current one */
	bool huge, json, csv;
};

/* Measure, print the table and the thresholds; the exit status. */
int bench_copy_calibrate(struct calibrate_options *o);

#endif
