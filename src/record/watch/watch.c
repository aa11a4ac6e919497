// SPDX-License-Identifier: MIT
/*
 * watch.c - the checker behind `ntmem check`: it watches a program's plain
 * stores into pmem, which no recorder hook can see, and judges them at the
 * program's persistence points against the write-backs and non-temporal
 * stores the library's recorder hooks do see (ntmem/hook.h).
 *
 * In outline: every writable pmem mapping is write-protected, so that the
 * first store to a page faults and the page is copied (watch_pages.c,
 * watch_signals.c); write-backs and non-temporal stores copy the lines
 * they make durable at the next fence (watch_perf.c); at each fence the
 * pages are compared with what is durable of them, and what is still not
 * durable at unmap or exit is reported (watch_judge.c). watch_maps.c
 * keeps the watched mappings, watch_remap.c follows the program's own
 * mprotect() and mremap() of them, watch_tx.c judges libpmemobj's
 * transactions, and watch_internal.h holds what they share (the lock
 * among it). This file starts the checker, ends it (exit, _exit, a fatal
 * signal, fork()) and writes the records that frame a process's part of
 * the report.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <gnu/lib-names.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ntmem/ns.h>

#include "watch/watch_internal.h"
#include "watch/watch_report.h"

void watch_note(const char *fmt, ...)
{
	struct wrec w;
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wrec_begin(&w, watch_record_names[REC_NOTE]);
	wrec_str(&w, "message", msg);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, watch_report_fd);
}

/*
 * Nothing of this process is watched, and why: a note of kind "unchecked"
 * (its message ends "nothing is watched"), so that `ntmem check` does not
 * take the silence that follows for a clean run.
 */
static void unchecked(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void unchecked(const char *fmt, ...)
{
	struct wrec w;
	char why[400], msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg), "%s: nothing is watched", why);
	wrec_begin(&w, watch_record_names[REC_NOTE]);
	wrec_str(&w, "kind", watch_note_names[NOTE_UNCHECKED]);
	wrec_str(&w, "message", msg);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, watch_report_fd);
}

/* --- start and end -------------------------------------------------------- */

/* Set by the first ending of the process to be judged. */
static int ended;
/*
 * The process whose memory this is: a child of vfork() shares it, and its
 * _exit() must not judge (nor end the checking of) its parent's pages.
 * A child of fork() takes it over (fork_child()).
 */
static pid_t owner;

/*
 * How the process ends, judged or not: {"type":"end","how":"exit"|"_exit"|
 * "signal", "status" (of _exit), "signal" (its name), "judged": 1 or 0}.
 */
static void end_record(enum end_how how, int status, int sig, bool judged)
{
	struct wrec w;
	char name[32];

	wrec_begin(&w, watch_record_names[REC_END]);
	wrec_str(&w, "how", watch_how_names[how]);
	if (how == HOW_UNDERSCORE_EXIT)
		wrec_num(&w, "status", (uint64_t)(status & 0xff));
	if (sig)
		wrec_str(&w, "signal", watch_signal_name(sig, name, sizeof(name)));
	wrec_num(&w, "judged", judged);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, watch_report_fd);
}

/*
 * The process ends (exit, _exit, a fatal signal: @point names it): every
 * line still not durable is reported, once. Async-signal-safe enough for
 * a signal handler: no malloc(), no stdio streams, the lock taken only
 * when this thread was not inside the checker (a signal that interrupts
 * the checker is recorded unjudged).
 */
void watch_judge_end(const char *point, enum end_how how, int status, int sig)
{
	struct point end = { .name = point };
	struct bad_list bl = { 0 };
	struct wpage *gone = NULL;
	const struct ntm_interval *v;
	bool judged = false;
	size_t n;

	if (!NTM_WATCH_ON() || getpid() != owner ||
	    __atomic_exchange_n(&ended, 1, __ATOMIC_ACQ_REL))
		return;
	if (!watch_inside) {
		watch_inside = 1;
		watch_lock();
		watch_drop_records(0, UINTPTR_MAX, &bl, &gone);
		if (bl.n)
			watch_report_all(&bl, WHEN_EXIT, &end);
		watch_free_list(gone);
		watch_perf_report();
		/* Nothing after this is judged: stores in later destructors
		 * are not seen (and pages get the program's protections, so
		 * they do not fault). */
		__atomic_store_n(&ntm_watch_on, 0, __ATOMIC_RELAXED);
		v = watch_ranges_view(&n);
		for (size_t i = 0; i < n; i++)
			watch_restore_prot(v[i].user, v[i].lo, v[i].hi);
		watch_unlock();
		watch_inside = 0;
		judged = true;
	}
	end_record(how, status, sig, judged);
}

/* _exit() or _Exit() (@name) of the program, with @status. */
static void ending(const char *name, int status)
{
	watch_judge_end(name, HOW_UNDERSCORE_EXIT, status, 0);
}

__attribute__((destructor))
static void watch_end(void)
{
	watch_judge_end("exit", HOW_EXIT, 0, 0);
}

/*
 * fork(): the lock is taken around it, so the child does not inherit it
 * held; the child starts from a clean slate (every page record dropped,
 * its pages protected again, the performance counts zeroed): what the
 * parent left not durable is the parent's to make durable, and to be
 * reported for.
 */
static __thread bool fork_locked __attribute__((tls_model("initial-exec")));

static void fork_prepare(void)
{
	if (!watch_inside) {
		watch_lock();
		fork_locked = true;
	}
}

static void fork_parent(void)
{
	if (fork_locked) {
		fork_locked = false;
		watch_unlock();
	}
}

static void fork_child(void)
{
	owner = getpid();
	if (!fork_locked)
		return;
	for (int l = LIST_FIRST; l < LIST_COUNT; l++)
		while (watch_lists[l])
			watch_page_clean(watch_lists[l]);
	watch_perf_forget();
	fork_parent();
}

static const struct ntm_watch_ops ops = {
	.signal_action = watch_signal_action,
	.will_store = watch_will_store,
	.will_unmap = watch_will_unmap,
	.set_mask = watch_sigmask,
	.segv_blocked = watch_segv_blocked,
	.thread_start = watch_thread_start,
	.mapped = watch_mapped,
	.synced = watch_program_synced,
	.file_synced = watch_file_synced,
	.protect = watch_protect,
	.remap = watch_remap,
	.ending = ending,
	.pmemobj_lock = watch_pmemobj_lock,
	.pmemobj_tx = watch_pmemobj_tx,
};

/*
 * {"type":"start","pid":N}: this process is watched from here on, the
 * positive evidence `ntmem check` needs before it calls a run checked.
 */
static void start_record(void)
{
	struct wrec w;

	wrec_begin(&w, watch_record_names[REC_START]);
	wrec_num(&w, "pid", (uint64_t)getpid());
	wrec_emit(&w, watch_report_fd);
}

/*
 * libc's own @name, past the preload shim's (and any other interposer's):
 * looked up in libc itself, not with RTLD_NEXT, which searches only the
 * objects after this one. This library comes after libc when it is a
 * dependency's dependency (a libpmemobj program's libpmem.so.1), and then
 * RTLD_NEXT finds nothing; were the shim after it, RTLD_NEXT would find
 * the shim's, which calls back into the checker. @libc: the handle of the
 * libc already loaded.
 */
static void *real(void *libc, const char *name)
{
	void *f = libc ? dlsym(libc, name) : NULL;

	if (!f)
		unchecked("cannot find libc's %s: %s", name,
			  libc ? "not in it" : "libc is not loaded as " LIBC_SO);
	return f;
}

__attribute__((constructor))
static void watch_start(void)
{
	const char *on = getenv("NTMEM_CHECK_WATCH");
	const char *path = getenv("NTMEM_CHECK_REPORT");
	const char *e = getenv("NTMEM_CHECK_EAGER");
	void (*reg)(const struct ntm_watch_ops *);
	struct sigaction act = { 0 }, old;
	void *warm[2], *libc;

	if (!on || strcmp(on, "1"))
		return;
	watch_eager = e && !strcmp(e, "1");
	owner = getpid();
	watch_domain = ntm_persist_domain_active();
	watch_report_fd = path && *path ? open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
				  : -1;
	if (watch_report_fd < 0)
		watch_report_fd = dup(STDERR_FILENO);
	/*
	 * The real functions, past the preload shim's: the checker's own
	 * handlers, protections and unmappings must not be taken for the
	 * program's.
	 */
	libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
	watch_real_sigaction = (int (*)(int, const struct sigaction *,
				  struct sigaction *))real(libc, "sigaction");
	watch_real_mprotect = (int (*)(void *, size_t, int))real(libc, "mprotect");
	watch_real_munmap = (int (*)(void *, size_t))real(libc, "munmap");
	watch_real_mremap = (void *(*)(void *, size_t, size_t, int, ...))
		real(libc, "mremap");
	watch_real_sigmask = (int (*)(int, const sigset_t *, sigset_t *))
		real(libc, "pthread_sigmask");
	if (!watch_real_sigaction || !watch_real_mprotect || !watch_real_munmap ||
	    !watch_real_mremap || !watch_real_sigmask)
		return;
	/* backtrace() loads its unwinder on first use: not in a handler. */
	backtrace(warm, 2);
	act.sa_sigaction = watch_on_segv;
	act.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&act.sa_mask);
	if (watch_real_sigaction(SIGSEGV, &act, &old)) {
		unchecked("cannot install the SIGSEGV handler: %s",
			  strerror(errno));
		return;
	}
	if (old.sa_handler != SIG_DFL)
		watch_segv_action(&old, NULL);
	reg = (void (*)(const struct ntm_watch_ops *))
		dlsym(RTLD_DEFAULT, "ntm_watch_preload_register");
	/* Which frames are the shim's is looked up now, not in a handler. */
	(void)watch_frame_ours((const void *)watch_start);
	if (reg) {
		/* Without the shim the program's own handlers would replace
		 * these: only SIGSEGV's, which the checker needs, then. */
		watch_fatal_install();
		/* Started with SIGSEGV blocked (posix_spawnattr_setsigmask(),
		 * a mask exec() kept): open it, the program still sees it
		 * blocked. Without the shim the mask is the program's. */
		watch_segv_open();
		watch_shim_present = true;
		reg(&ops);
	} else {
		watch_note("no preload shim: a SIGSEGV handler the program installs "
		     "replaces the checker's");
	}
	if (pthread_atfork(fork_prepare, fork_parent, fork_child))
		watch_note("cannot register the fork handlers: a child of fork() "
		     "inherits its parent's pending lines");
	start_record();
	watch_events_start();
	__atomic_store_n(&ntm_watch_on, 1, __ATOMIC_RELEASE);
}

