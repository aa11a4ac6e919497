// SPDX-License-Identifier: MIT
/*
 * watch_names.c - the names the checker writes in its report, each from
 * the one list of <ntmem/check_report.def> that `ntmem check` reads by,
 * so that the writer and the reader cannot disagree.
 */
#include "watch/watch_internal.h"

const char *const watch_record_names[] = {
#define NTM_CHECK_RECORD(id, name) [REC_##id] = name,
#include <ntmem/check_report.def>
};

const char *const watch_bug_names[] = {
#define NTM_CHECK_BUG_KIND(id, name, found, words) [BUG_##id] = name,
#include <ntmem/check_report.def>
};

const char *const watch_when_names[] = {
#define NTM_CHECK_BUG_WHEN(id, name) [WHEN_##id] = name,
#include <ntmem/check_report.def>
};

const char *const watch_perf_names[] = {
#define NTM_CHECK_PERF_KIND(id, name, words) [PERF_##id] = name,
#include <ntmem/check_report.def>
};

const char *const watch_note_names[] = {
#define NTM_CHECK_NOTE_KIND(id, name) [NOTE_##id] = name,
#include <ntmem/check_report.def>
};

const char *const watch_how_names[] = {
#define NTM_CHECK_END_HOW(id, name) [HOW_##id] = name,
#include <ntmem/check_report.def>
};
