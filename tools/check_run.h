/* SPDX-License-Identifier: MIT */
/*
 * check_run.h - what the parts of `ntmem check` share: the report's
 * records as read back (check_report_read.c, by the contract of
 * <ntmem/check_report.def>), what a run's report says of it
 * (check_verdict.c), printing it (check_print.c) and running the program
 * (check_spawn.c). cmd_check.c is the command that puts them together;
 * the checking library's directory is found by check_libdir()
 * (commands.h, check_discover.c).
 */
#ifndef NTMEM_TOOL_CHECK_RUN_H
#define NTMEM_TOOL_CHECK_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

/* --- the report's records (check_report_read.c) -------------------------- */

struct strv {
	char **v;
	int n;
};

enum rec_type {
#define NTM_CHECK_RECORD(id, name) REC_##id,
#include <ntmem/check_report.def>
};

/* The names of the contract's lists, as the reader resolved them. */
enum bug_kind {
#define NTM_CHECK_BUG_KIND(id, name, found, words) BUG_##id,
#include <ntmem/check_report.def>
};
enum bug_when {
#define NTM_CHECK_BUG_WHEN(id, name) WHEN_##id,
#include <ntmem/check_report.def>
};
enum perf_kind {
#define NTM_CHECK_PERF_KIND(id, name, words) PERF_##id,
#include <ntmem/check_report.def>
};
enum note_kind {
	NOTE_PLAIN,	/* no "kind", or one this reader does not know */
#define NTM_CHECK_NOTE_KIND(id, name) NOTE_##id,
#include <ntmem/check_report.def>
};
enum end_how {
#define NTM_CHECK_END_HOW(id, name) HOW_##id,
#include <ntmem/check_report.def>
};

/* One record; the strings' members are named as the contract's keys. */
struct record {
	enum rec_type type;
	char *kind, *when, *file, *address, *point, *message, *how, *signal;
	long long offset, length, count, pid, status, judged;
	struct strv backtrace, first_store, site, tx_begin;
	/* kind, when and how resolved: those of the record's type */
	union {
		enum bug_kind bug;
		enum perf_kind perf;
		enum note_kind note;
	} kind_id;
	enum bug_when when_id;
	enum end_how how_id;
	/* the line itself (valid JSON), or a note object made for it */
	char *json;
	bool ours;	/* a note of ntmem check's, not the library's */
};

struct run_report {
	struct record *rec;
	int n, cap;
	int errors, perf_notes;
	/*
	 * What was checked: records only a watching checking library writes
	 * (start, and bug, perf, end), and notes that a process watched
	 * nothing ("kind":"unchecked") or that memory went unwatched
	 * ("kind":"unwatched").
	 */
	int watching, unchecked, unwatched;
	long long pids[8];	/* the processes that reported, first 8 */
	int npids;
};

/*
 * Every line of the report file at @fd into @rr, from its start; a line
 * that is no record of the contract becomes a note of ours (for pid
 * @child) that says why. 0 or -errno.
 */
int read_report(int fd, long long child, struct run_report *rr);
/* What read_report() allocated in @rr. */
void run_report_free(struct run_report *rr);

/* --- what the report says of the run (check_verdict.c) ------------------- */

/* The exit status of a run that exited 0 but was not checked in full. */
#define NOT_CHECKED_STATUS 4

enum checked { CHECKED_ALL, CHECKED_PART, CHECKED_NONE };

extern const char *const checked_names[];

/*
 * Whether the run was checked: "none" when no process of it was watched
 * (no record that only a watching checking library writes), "part" when
 * one was but memory went unwatched or another process watched nothing,
 * "all" otherwise. @why: the words for the summary when not all.
 */
enum checked run_checked(const struct run_report *rr, char *why, size_t len);

/*
 * How PROGRAM ended, from its wait @status and the end record its checking
 * library wrote (the last of pid @child): "exited 7 via _exit", "killed by
 * SIGTERM (core dumped)", "killed by SIGKILL, not judged: ...". *@judged:
 * whether the library judged that end.
 */
void describe_end(char *buf, size_t len, int status,
		  const struct run_report *rr, long long child, bool *judged);

/* --- printing (check_print.c) -------------------------------------------- */

/* The text report: each record, how PROGRAM (pid @child) @ended, a summary. */
void print_human(FILE *out, const struct run_report *rr, bool perf,
		 long long child, const char *ended);
/* The --json report: one object (ntmem-check(1)). */
void print_json(FILE *out, const struct run_report *rr, int status,
		const char *ended, bool judged);

/* --- running the program (check_spawn.c) --------------------------------- */

/*
 * The program's environment: this one with the variables of the contract
 * set (the checking library of @dir preloaded, its report @report),
 * everything else unchanged. NULL when out of memory.
 */
char **child_env(const char *dir, const char *report);
/* What child_env() allocated (NULL: nothing). */
void free_env(char **env);

/*
 * Run @argv with @env and wait for it, passing on SIGINT, SIGTERM, SIGHUP
 * and SIGQUIT. Returns its wait status (its pid in *@child), or -1 with
 * *@exec_errno set when it could not be executed (-1 and 0 for a failed
 * fork or pipe, errno set).
 */
int run_program(char **argv, char **env, int *exec_errno, pid_t *child);

#endif
