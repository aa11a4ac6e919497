// SPDX-License-Identifier: MIT
/*
 * watch_state.c - the checker's state, defined in one place (what each is:
 * watch_state.h). Every file of the checker reads and changes it under
 * watch_lock(), but for the per-thread flags and what is set once at start.
 */
#include "watch/watch_internal.h"

/* On once the checker has started (watch.h). */
int ntm_watch_on;

/* The run: the report's file, its settings, the lock. */
int watch_report_fd = -1;
bool watch_eager;
enum ntm_persist_domain watch_domain;
int watch_lock_word;
bool watch_shim_present;

/* The watched mappings, their pages not durable, the page records. */
struct ntm_interval_table watch_table = NTM_INTERVAL_TABLE_INIT(MAX_RANGES);
struct wpage *watch_lists[LIST_COUNT];
unsigned watch_warm_pages;
struct watch_chunks watch_page_records = { .size = sizeof(struct wpage) };

/* Per thread. */
__thread int watch_inside __attribute__((tls_model("initial-exec")));
__thread uint64_t watch_my_fences __attribute__((tls_model("initial-exec")));
__thread struct wtx *watch_my_tx __attribute__((tls_model("initial-exec")));
__thread unsigned watch_obj_depth __attribute__((tls_model("initial-exec")));
__thread unsigned watch_obj_asked __attribute__((tls_model("initial-exec")));

/* libc's own, past the preload shim's. */
int (*watch_real_sigaction)(int, const struct sigaction *, struct sigaction *);
int (*watch_real_mprotect)(void *, size_t, int);
int (*watch_real_munmap)(void *, size_t);
void *(*watch_real_mremap)(void *, size_t, size_t, int, ...);
int (*watch_real_sigmask)(int, const sigset_t *, sigset_t *);
