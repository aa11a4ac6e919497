/* SPDX-License-Identifier: MIT */
/*
 * watch/watch_report.h - how the checker writes what it found: one JSON
 * object per line (the records `ntmem check` reads; ntmem-check(1) lists
 * them), with code addresses named by dladdr(). Private.
 */
#ifndef NTMEM_WATCH_REPORT_H
#define NTMEM_WATCH_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One record being built; a record that would not fit is cut short. */
struct wrec {
	char buf[16384];
	size_t len;
	bool first;		/* no member written yet at this level */
};

void wrec_begin(struct wrec *w, const char *type);
void wrec_str(struct wrec *w, const char *key, const char *val);
void wrec_num(struct wrec *w, const char *key, uint64_t val);
void wrec_addr(struct wrec *w, const char *key, uintptr_t val);
/* "key":["name", ...] of the frames that are not the checking library's */
void wrec_frames(struct wrec *w, const char *key, void *const *frames,
		 int n);
/* Ends the record and writes it with one write() (O_APPEND: whole). */
void wrec_emit(struct wrec *w, int fd);

/* The checking library's own code (skipped in backtraces). */
bool watch_frame_ours(const void *pc);
/* The name of the function holding @pc when it is the library's own
 * exported entry point ("pmem_drain"), else NULL. */
const char *watch_frame_symbol(const void *pc);

#endif /* NTMEM_WATCH_REPORT_H */
