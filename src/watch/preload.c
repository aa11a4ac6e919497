// SPDX-License-Identifier: MIT
/*
 * preload.c - libntmem-watch-preload.so, the small library `ntmem check`
 * puts in LD_PRELOAD so the checker (watch.c) sees what a program does
 * through libc:
 *
 *   sigaction()/signal() of SIGSEGV: the checker's write-protection faults
 *     arrive as SIGSEGV; a handler the program installs is kept by the
 *     checker and called for every fault that is not the checker's,
 *     instead of replacing the checker's handler;
 *   sigaction()/signal() of the other signals that end a process by
 *     default: while the program leaves one at SIG_DFL the checker's
 *     handler stands in, judges what the program left, and dies of the
 *     signal as the program would have (the program is told SIG_DFL);
 *   _exit()/_Exit(): judged first, as exit() is by the checker's
 *     destructor;
 *   mprotect(): a page the program makes read-only and writable again is
 *     still watched; mremap(): a watched mapping that moves or grows is
 *     followed (or, where it cannot be, no longer watched, with a note);
 *   read()/pread(): the kernel's stores into a write-protected page would
 *     fail with EFAULT instead of faulting, so the pages are made writable
 *     (and their contents kept) first;
 *   munmap(): the lines of a watched mapping that are not durable are
 *     reported before it goes;
 *   libpmemobj's lock functions (pmemobj_mutex_lock(), ...; libpmemobj
 *     calls them through its PLT too): the lock's 64 bytes in the pool
 *     are run-time state libpmemobj never flushes, told to the checker.
 *
 * It has no version script on purpose: only an unversioned definition
 * stands in front of glibc's versioned symbols. It does not load the
 * checker: until the checker registers (its constructor, when the program
 * loads libpmem.so.1 or libntmem.so.0 from the checking directory), every
 * call goes straight to libc, so `ntmem check -- sh -c '...'` runs the
 * shell unchanged.
 */
#define _GNU_SOURCE
/*
 * Both pread() and pread64() are defined here: with 64-bit file offsets
 * forced, glibc's headers would make pread() another name for pread64().
 */
#undef _FILE_OFFSET_BITS
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "watch/watch.h"

static const struct ntm_watch_ops *ops;

/* Called once by the checker when it starts. */
void ntm_watch_preload_register(const struct ntm_watch_ops *o);
void ntm_watch_preload_register(const struct ntm_watch_ops *o)
{
	__atomic_store_n(&ops, o, __ATOMIC_RELEASE);
}

static const struct ntm_watch_ops *watching(void)
{
	return __atomic_load_n(&ops, __ATOMIC_ACQUIRE);
}

/*
 * libc's definition of @name (declared as ours is), resolved once. Here
 * RTLD_NEXT is right, whatever the load order: a preloaded library comes
 * before libc, and the next definition is another interposer's (a
 * sanitizer's) or libc's, never this one. The checker (watch.c) is not
 * preloaded, and asks libc itself.
 */
#define REAL(name)                                                      \
	static __typeof__(name) *real_##name;                           \
	if (!real_##name)                                               \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name); \
	if (!real_##name) {                                             \
		errno = ENOSYS;                                         \
		return -1;                                              \
	}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	const struct ntm_watch_ops *o = watching();
	REAL(sigaction);

	if (o && o->keeps_signal(sig))
		return o->signal_action(sig, act, old);
	return real_sigaction(sig, act, old);
}

sighandler_t signal(int sig, sighandler_t handler)
{
	const struct ntm_watch_ops *o = watching();
	struct sigaction act = { .sa_handler = handler }, old;
	static sighandler_t (*real_signal)(int, sighandler_t);

	if (!o || !o->keeps_signal(sig)) {
		if (!real_signal)
			real_signal = (sighandler_t (*)(int, sighandler_t))
				dlsym(RTLD_NEXT, "signal");
		if (!real_signal) {
			errno = ENOSYS;
			return SIG_ERR;
		}
		return real_signal(sig, handler);
	}
	/* glibc's signal(): BSD semantics, restarting system calls. */
	act.sa_flags = SA_RESTART;
	sigemptyset(&act.sa_mask);
	sigaddset(&act.sa_mask, sig);
	if (o->signal_action(sig, &act, &old))
		return SIG_ERR;
	return old.sa_handler;
}

ssize_t read(int fd, void *buf, size_t n)
{
	const struct ntm_watch_ops *o = watching();
	REAL(read);

	if (o)
		o->will_store(buf, n);
	return real_read(fd, buf, n);
}

ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	const struct ntm_watch_ops *o = watching();
	REAL(pread);

	if (o)
		o->will_store(buf, n);
	return real_pread(fd, buf, n, off);
}

ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	const struct ntm_watch_ops *o = watching();
	REAL(pread64);

	if (o)
		o->will_store(buf, n);
	return real_pread64(fd, buf, n, off);
}

int munmap(void *p, size_t n)
{
	const struct ntm_watch_ops *o = watching();
	REAL(munmap);

	if (o)
		o->will_unmap(p, n);
	return real_munmap(p, n);
}

int mprotect(void *p, size_t n, int prot)
{
	const struct ntm_watch_ops *o = watching();
	REAL(mprotect);

	if (o)
		return o->protect(p, n, prot);
	return real_mprotect(p, n, prot);
}

void *mremap(void *old, size_t olen, size_t nlen, int flags, ...)
{
	const struct ntm_watch_ops *o = watching();
	static void *(*real_mremap)(void *, size_t, size_t, int, ...);
	void *want = NULL;
	va_list ap;

	if (!real_mremap)
		real_mremap = (void *(*)(void *, size_t, size_t, int, ...))
			dlsym(RTLD_NEXT, "mremap");
	if (!real_mremap) {
		errno = ENOSYS;
		return MAP_FAILED;
	}
	/* The fourth argument is there only with MREMAP_FIXED. */
	if (flags & MREMAP_FIXED) {
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	if (o)
		return o->remap(old, olen, nlen, flags, want);
	return real_mremap(old, olen, nlen, flags, want);
}

/* Both end the process without exit()'s destructors: judged first. */
static _Noreturn void end_now(const char *name, int status)
{
	const struct ntm_watch_ops *o = watching();
	static void (*real_exit)(int);

	if (o)
		o->ending(name, status);
	if (!real_exit)
		real_exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
	if (real_exit)
		real_exit(status);
	syscall(SYS_exit_group, status);
	for (;;)
		;
}

void _exit(int status)
{
	end_now("_exit", status);
}

void _Exit(int status)
{
	end_now("_Exit", status);
}

/*
 * libpmemobj's persistent locks (PMDK's libpmemobj/thread.h), declared
 * here with opaque pointers: the checker needs only the lock's address.
 * Each tells the checker the lock (and a condition variable's mutex) is
 * libpmemobj's, then calls libpmemobj's. A program without libpmemobj
 * never calls them.
 */
struct timespec;
int pmemobj_mutex_lock(void *pop, void *m);
int pmemobj_mutex_trylock(void *pop, void *m);
int pmemobj_mutex_timedlock(void *pop, void *m, const struct timespec *t);
int pmemobj_mutex_unlock(void *pop, void *m);
int pmemobj_rwlock_rdlock(void *pop, void *l);
int pmemobj_rwlock_wrlock(void *pop, void *l);
int pmemobj_rwlock_timedrdlock(void *pop, void *l, const struct timespec *t);
int pmemobj_rwlock_timedwrlock(void *pop, void *l, const struct timespec *t);
int pmemobj_rwlock_tryrdlock(void *pop, void *l);
int pmemobj_rwlock_trywrlock(void *pop, void *l);
int pmemobj_rwlock_unlock(void *pop, void *l);
int pmemobj_cond_broadcast(void *pop, void *c);
int pmemobj_cond_signal(void *pop, void *c);
int pmemobj_cond_timedwait(void *pop, void *c, void *m,
			   const struct timespec *t);
int pmemobj_cond_wait(void *pop, void *c, void *m);

static void pmemobj_lock_seen(const void *lock)
{
	const struct ntm_watch_ops *o = watching();

	if (o && lock)
		o->pmemobj_lock(lock);
}

#define OBJ_LOCK_2(name)                                                \
	int name(void *pop, void *l)                                    \
	{                                                               \
		REAL(name);                                             \
		pmemobj_lock_seen(l);                                   \
		return real_##name(pop, l);                             \
	}
#define OBJ_LOCK_3(name)                                                \
	int name(void *pop, void *l, const struct timespec *t)          \
	{                                                               \
		REAL(name);                                             \
		pmemobj_lock_seen(l);                                   \
		return real_##name(pop, l, t);                          \
	}

OBJ_LOCK_2(pmemobj_mutex_lock)
OBJ_LOCK_2(pmemobj_mutex_trylock)
OBJ_LOCK_3(pmemobj_mutex_timedlock)
OBJ_LOCK_2(pmemobj_mutex_unlock)
OBJ_LOCK_2(pmemobj_rwlock_rdlock)
OBJ_LOCK_2(pmemobj_rwlock_wrlock)
OBJ_LOCK_3(pmemobj_rwlock_timedrdlock)
OBJ_LOCK_3(pmemobj_rwlock_timedwrlock)
OBJ_LOCK_2(pmemobj_rwlock_tryrdlock)
OBJ_LOCK_2(pmemobj_rwlock_trywrlock)
OBJ_LOCK_2(pmemobj_rwlock_unlock)
OBJ_LOCK_2(pmemobj_cond_broadcast)
OBJ_LOCK_2(pmemobj_cond_signal)

int pmemobj_cond_timedwait(void *pop, void *c, void *m,
			   const struct timespec *t)
{
	REAL(pmemobj_cond_timedwait);
	pmemobj_lock_seen(c);
	pmemobj_lock_seen(m);
	return real_pmemobj_cond_timedwait(pop, c, m, t);
}

int pmemobj_cond_wait(void *pop, void *c, void *m)
{
	REAL(pmemobj_cond_wait);
	pmemobj_lock_seen(c);
	pmemobj_lock_seen(m);
	return real_pmemobj_cond_wait(pop, c, m);
}
