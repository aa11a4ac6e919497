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
 *   sigaction()/signal() of any signal: a handler's sa_mask never
 *     blocks SIGSEGV in fact (the program is told it does);
 *   pthread_sigmask(), sigprocmask(), pthread_create(), and the temporary
 *     masks of sigsuspend(), pselect(), ppoll(), epoll_pwait(),
 *     epoll_pwait2(): SIGSEGV, which the checker's faults need, stays
 *     open in fact, while the program gets and is told the mask it asked
 *     for (watch_signals.c);
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
 *   mmap(): every writable shared mapping of a file is watched from its
 *     first store on (a pmem_* call that names it later makes it the
 *     program's pmem, whose stores are reported on: libpmemobj maps its
 *     pool itself, as a program that persists with pmem_msync() may);
 *   msync(), fsync(), fdatasync(), syncfs(), sync(): what they make
 *     durable of a file behind a page cache (the kernel's rule);
 *   libpmemobj's lock functions (pmemobj_mutex_lock(), ...; libpmemobj
 *     calls them through its PLT too): the lock's 64 bytes in the pool
 *     are run-time state libpmemobj never flushes, told to the checker;
 *   libpmemobj's transaction functions (pmemobj_tx_begin(), the
 *     pmemobj_tx_*add_range*() and *alloc() families, commit, process,
 *     end, ...): the checker learns what each transaction added and
 *     allocated, and which stores are the program's (made between calls
 *     into libpmemobj) and which libpmemobj's (made inside them);
 *   libpmemobj's persistence functions (pmemobj_persist(), ...): the
 *     write-backs made under them are the program's to answer for.
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
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>
#include <wchar.h>

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
#define REAL_OR(name, missing)                                          \
	static __typeof__(name) *real_##name;                           \
	if (!real_##name)                                               \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name); \
	if (!real_##name) {                                             \
		missing;                                                \
	}

/* ...for a function that fails with -1 and errno. */
#define REAL(name) REAL_OR(name, errno = ENOSYS; return -1)
/* ...for a function returning nothing. */
#define REAL_VOID(name) REAL_OR(name, return)

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	const struct ntm_watch_ops *o = watching();
	REAL(sigaction);

	if (o)
		return o->signal_action(sig, act, old);
	return real_sigaction(sig, act, old);
}

sighandler_t signal(int sig, sighandler_t handler)
{
	const struct ntm_watch_ops *o = watching();
	struct sigaction act = { .sa_handler = handler }, old;

	if (!o) {
		REAL_OR(signal, errno = ENOSYS; return SIG_ERR);
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

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	const struct ntm_watch_ops *o = watching();
	REAL_OR(pthread_sigmask, return ENOSYS);

	if (o)
		return o->set_mask(how, set, old, real_pthread_sigmask);
	return real_pthread_sigmask(how, set, old);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	const struct ntm_watch_ops *o = watching();
	REAL(sigprocmask);

	if (o)
		return o->set_mask(how, set, old, real_sigprocmask);
	return real_sigprocmask(how, set, old);
}

/*
 * A temporary mask a call waits with, SIGSEGV taken out while the checker
 * watches (a handler that runs meanwhile may store to a watched page):
 * @mask itself, or @buf.
 */
static const sigset_t *segv_open(const sigset_t *mask, sigset_t *buf)
{
	if (!mask || !watching() || sigismember(mask, SIGSEGV) != 1)
		return mask;
	*buf = *mask;
	sigdelset(buf, SIGSEGV);
	return buf;
}

int sigsuspend(const sigset_t *mask)
{
	sigset_t buf;
	REAL(sigsuspend);

	return real_sigsuspend(segv_open(mask, &buf));
}

int pselect(int n, fd_set *r, fd_set *w, fd_set *e,
	    const struct timespec *t, const sigset_t *mask)
{
	sigset_t buf;
	REAL(pselect);

	return real_pselect(n, r, w, e, t, segv_open(mask, &buf));
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t,
	  const sigset_t *mask)
{
	sigset_t buf;
	REAL(ppoll);

	return real_ppoll(fds, n, t, segv_open(mask, &buf));
}

int epoll_pwait(int fd, struct epoll_event *ev, int max, int timeout,
		const sigset_t *mask)
{
	sigset_t buf;
	REAL(epoll_pwait);

	return real_epoll_pwait(fd, ev, max, timeout, segv_open(mask, &buf));
}

int epoll_pwait2(int fd, struct epoll_event *ev, int max,
		 const struct timespec *t, const sigset_t *mask)
{
	sigset_t buf;
	REAL(epoll_pwait2);

	return real_epoll_pwait2(fd, ev, max, t, segv_open(mask, &buf));
}

/* A thread pthread_create() starts: its view of SIGSEGV first. */
struct thread_start {
	void *(*fn)(void *);
	void *arg;
	bool segv_blocked;	/* the creator's view, inherited */
};

static void *thread_trampoline(void *p)
{
	struct thread_start s = *(struct thread_start *)p;
	const struct ntm_watch_ops *o = watching();

	free(p);
	if (o)
		o->thread_start(s.segv_blocked);
	return s.fn(s.arg);
}

int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	const struct ntm_watch_ops *o = watching();
	struct thread_start *s;
	sigset_t attr_mask;
	int ret;
	REAL_OR(pthread_create, return ENOSYS);

	if (!o || !(s = malloc(sizeof(*s))))
		return real_pthread_create(t, attr, fn, arg);
	*s = (struct thread_start){ .fn = fn, .arg = arg };
	/* A mask the attribute sets is the thread's own (blocked in fact,
	 * the thread opens it and takes it as its view); else it inherits
	 * its creator's view. */
	if (!attr || pthread_attr_getsigmask_np(attr, &attr_mask))
		s->segv_blocked = o->segv_blocked();
	ret = real_pthread_create(t, attr, thread_trampoline, s);
	if (ret)
		free(s);
	return ret;
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

/* Whether mmap() with @prot and @flags made a writable shared mapping
 * of a file. */
static bool shared_writable(int prot, int flags, int fd)
{
	return fd >= 0 && (prot & PROT_WRITE) &&
	       (flags & MAP_TYPE) != MAP_PRIVATE && !(flags & MAP_ANONYMOUS);
}

void *mmap(void *p, size_t n, int prot, int flags, int fd, off_t off)
{
	const struct ntm_watch_ops *o = watching();
	void *got;
	REAL_OR(mmap, errno = ENOSYS; return MAP_FAILED);

	got = real_mmap(p, n, prot, flags, fd, off);
	if (o && got != MAP_FAILED && shared_writable(prot, flags, fd)) {
		int saved = errno;

		o->mapped(got, n, prot, flags, fd, off);
		errno = saved;
	}
	return got;
}

void *mmap64(void *p, size_t n, int prot, int flags, int fd, off64_t off)
{
	return mmap(p, n, prot, flags, fd, (off_t)off);
}

int msync(void *p, size_t n, int flags)
{
	const struct ntm_watch_ops *o = watching();
	REAL(msync);
	int ret = real_msync(p, n, flags);

	/* MS_ASYNC starts the write-out and does not wait for it. */
	if (o && !ret && (flags & MS_SYNC)) {
		int saved = errno;

		o->synced(p, n);
		errno = saved;
	}
	return ret;
}

/* After a successful fsync()-like call of @fd (-1: sync()). */
static int file_synced(int ret, int fd, bool whole_fs)
{
	const struct ntm_watch_ops *o = watching();

	if (o && !ret) {
		int saved = errno;

		o->file_synced(fd, whole_fs);
		errno = saved;
	}
	return ret;
}

int fsync(int fd)
{
	REAL(fsync);
	return file_synced(real_fsync(fd), fd, false);
}

int fdatasync(int fd)
{
	REAL(fdatasync);
	return file_synced(real_fdatasync(fd), fd, false);
}

int syncfs(int fd)
{
	REAL(syncfs);
	return file_synced(real_syncfs(fd), fd, true);
}

void sync(void)
{
	REAL_VOID(sync);

	real_sync();
	(void)file_synced(0, -1, false);
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
	void *want = NULL;
	va_list ap;
	REAL_OR(mremap, errno = ENOSYS; return MAP_FAILED);

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

/* Tell the checker of a transaction call (a no-op until it registers). */
static void obj_tell(enum ntm_watch_obj what, const void *p, size_t n,
		     const char *name)
{
	const struct ntm_watch_ops *o = watching();

	if (o)
		o->pmemobj_tx(what, p, n, name);
}

/* The lock's stores are libpmemobj's: a call into it, as the others. */
#define OBJ_LOCK_2(name)                                                \
	int name(void *pop, void *l)                                    \
	{                                                               \
		int ret;                                                \
		REAL(name);                                             \
		pmemobj_lock_seen(l);                                   \
		obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, #name);          \
		ret = real_##name(pop, l);                              \
		obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, #name);          \
		return ret;                                             \
	}
#define OBJ_LOCK_3(name)                                                \
	int name(void *pop, void *l, const struct timespec *t)          \
	{                                                               \
		int ret;                                                \
		REAL(name);                                             \
		pmemobj_lock_seen(l);                                   \
		obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, #name);          \
		ret = real_##name(pop, l, t);                           \
		obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, #name);          \
		return ret;                                             \
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
	int ret;

	REAL(pmemobj_cond_timedwait);
	pmemobj_lock_seen(c);
	pmemobj_lock_seen(m);
	obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, "pmemobj_cond_timedwait");
	ret = real_pmemobj_cond_timedwait(pop, c, m, t);
	obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, "pmemobj_cond_timedwait");
	return ret;
}

int pmemobj_cond_wait(void *pop, void *c, void *m)
{
	int ret;

	REAL(pmemobj_cond_wait);
	pmemobj_lock_seen(c);
	pmemobj_lock_seen(m);
	obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, "pmemobj_cond_wait");
	ret = real_pmemobj_cond_wait(pop, c, m);
	obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, "pmemobj_cond_wait");
	return ret;
}

/*
 * libpmemobj's transactions (PMDK's libpmemobj/tx_base.h), declared here
 * with the types the calls pass: PMEMoid is two 64-bit words by value.
 * Each wrapper tells the checker before the call what it must know of it
 * first (a longjmp() of an abort may skip what follows the call).
 */
typedef struct {
	uint64_t pool_uuid_lo, off;
} obj_oid;

#define OBJ_TX_STAGE_WORK 1	/* enum pobj_tx_stage's TX_STAGE_WORK */
#define OBJ_XADD_NO_FLUSH (1ull << 1)	/* POBJ_XADD_NO_FLUSH */
#define OBJ_PARAM_NONE 0	/* enum pobj_tx_param */
#define OBJ_PARAM_MUTEX 1
#define OBJ_PARAM_RWLOCK 2
#define OBJ_PARAM_CB 3
/* The values a pmemobj_tx_begin() passes on, at most (16 locks). */
#define OBJ_BEGIN_ARGS 33

int pmemobj_tx_begin(void *pop, void *env, ...);
int pmemobj_tx_add_range(obj_oid oid, uint64_t off, size_t size);
int pmemobj_tx_add_range_direct(const void *ptr, size_t size);
int pmemobj_tx_xadd_range(obj_oid oid, uint64_t off, size_t size,
			  uint64_t flags);
int pmemobj_tx_xadd_range_direct(const void *ptr, size_t size, uint64_t flags);
obj_oid pmemobj_tx_alloc(size_t size, uint64_t type_num);
obj_oid pmemobj_tx_zalloc(size_t size, uint64_t type_num);
obj_oid pmemobj_tx_xalloc(size_t size, uint64_t type_num, uint64_t flags);
obj_oid pmemobj_tx_realloc(obj_oid oid, size_t size, uint64_t type_num);
obj_oid pmemobj_tx_zrealloc(obj_oid oid, size_t size, uint64_t type_num);
obj_oid pmemobj_tx_strdup(const char *s, uint64_t type_num);
obj_oid pmemobj_tx_xstrdup(const char *s, uint64_t type_num, uint64_t flags);
obj_oid pmemobj_tx_wcsdup(const wchar_t *s, uint64_t type_num);
obj_oid pmemobj_tx_xwcsdup(const wchar_t *s, uint64_t type_num,
			   uint64_t flags);
int pmemobj_tx_free(obj_oid oid);
int pmemobj_tx_xfree(obj_oid oid, uint64_t flags);
int pmemobj_tx_lock(int type, void *lockp);
int pmemobj_tx_xlock(int type, void *lockp, uint64_t flags);
void pmemobj_tx_commit(void);
void pmemobj_tx_abort(int errnum);
void pmemobj_tx_process(void);
int pmemobj_tx_end(void);

/*
 * libpmemobj's calls outside transactions that store to a pool (the
 * atomic allocations, the root object, the atomic lists, reservations):
 * made while another thread's transaction runs, their stores are
 * libpmemobj's, not that transaction's. Pointers opaque, as above.
 */
#define OBJ_AROUND(before, after, type, name, params, args, fail)        \
	type name params;                                               \
	type name params                                                \
	{                                                               \
		static __typeof__(name) *real_##name;                   \
		type ret;                                               \
		if (!real_##name)                                       \
			real_##name = (__typeof__(name) *)              \
				dlsym(RTLD_NEXT, #name);                \
		if (!real_##name) {                                     \
			errno = ENOSYS;                                 \
			return fail;                                    \
		}                                                       \
		obj_tell(before, NULL, 0, #name);                       \
		ret = real_##name args;                                 \
		obj_tell(after, NULL, 0, #name);                        \
		return ret;                                             \
	}
#define OBJ_PLAIN(...) \
	OBJ_AROUND(NTM_WATCH_OBJ_ENTER, NTM_WATCH_OBJ_LEAVE, __VA_ARGS__)
#define OBJ_NULL ((obj_oid){ 0, 0 })
typedef void *obj_ctor;		/* pmemobj_constr */

OBJ_PLAIN(int, pmemobj_alloc, (void *pop, obj_oid *oidp, size_t size,
	  uint64_t type_num, obj_ctor ctor, void *arg),
	  (pop, oidp, size, type_num, ctor, arg), -1)
OBJ_PLAIN(int, pmemobj_xalloc, (void *pop, obj_oid *oidp, size_t size,
	  uint64_t type_num, uint64_t flags, obj_ctor ctor, void *arg),
	  (pop, oidp, size, type_num, flags, ctor, arg), -1)
OBJ_PLAIN(int, pmemobj_zalloc, (void *pop, obj_oid *oidp, size_t size,
	  uint64_t type_num), (pop, oidp, size, type_num), -1)
OBJ_PLAIN(int, pmemobj_realloc, (void *pop, obj_oid *oidp, size_t size,
	  uint64_t type_num), (pop, oidp, size, type_num), -1)
OBJ_PLAIN(int, pmemobj_zrealloc, (void *pop, obj_oid *oidp, size_t size,
	  uint64_t type_num), (pop, oidp, size, type_num), -1)
OBJ_PLAIN(int, pmemobj_strdup, (void *pop, obj_oid *oidp, const char *s,
	  uint64_t type_num), (pop, oidp, s, type_num), -1)
OBJ_PLAIN(int, pmemobj_wcsdup, (void *pop, obj_oid *oidp, const wchar_t *s,
	  uint64_t type_num), (pop, oidp, s, type_num), -1)
OBJ_PLAIN(obj_oid, pmemobj_root, (void *pop, size_t size), (pop, size),
	  OBJ_NULL)
OBJ_PLAIN(obj_oid, pmemobj_root_construct, (void *pop, size_t size,
	  obj_ctor ctor, void *arg), (pop, size, ctor, arg), OBJ_NULL)
OBJ_PLAIN(int, pmemobj_list_insert, (void *pop, size_t pe_offset, void *head,
	  obj_oid dest, int before, obj_oid oid),
	  (pop, pe_offset, head, dest, before, oid), -1)
OBJ_PLAIN(obj_oid, pmemobj_list_insert_new, (void *pop, size_t pe_offset,
	  void *head, obj_oid dest, int before, size_t size, uint64_t type_num,
	  obj_ctor ctor, void *arg),
	  (pop, pe_offset, head, dest, before, size, type_num, ctor, arg),
	  OBJ_NULL)
OBJ_PLAIN(int, pmemobj_list_remove, (void *pop, size_t pe_offset, void *head,
	  obj_oid oid, int free), (pop, pe_offset, head, oid, free), -1)
OBJ_PLAIN(int, pmemobj_list_move, (void *pop, size_t pe_old_offset,
	  void *head_old, size_t pe_new_offset, void *head_new, obj_oid dest,
	  int before, obj_oid oid),
	  (pop, pe_old_offset, head_old, pe_new_offset, head_new, dest, before,
	   oid), -1)
OBJ_PLAIN(obj_oid, pmemobj_reserve, (void *pop, void *act, size_t size,
	  uint64_t type_num), (pop, act, size, type_num), OBJ_NULL)
OBJ_PLAIN(obj_oid, pmemobj_xreserve, (void *pop, void *act, size_t size,
	  uint64_t type_num, uint64_t flags), (pop, act, size, type_num, flags),
	  OBJ_NULL)
OBJ_PLAIN(int, pmemobj_publish, (void *pop, void *actv, size_t actvcnt),
	  (pop, actv, actvcnt), -1)

void pmemobj_free(obj_oid *oidp);
void pmemobj_free(obj_oid *oidp)
{
	static __typeof__(pmemobj_free) *real_pmemobj_free;

	if (!real_pmemobj_free)
		real_pmemobj_free = (__typeof__(pmemobj_free) *)
			dlsym(RTLD_NEXT, "pmemobj_free");
	if (!real_pmemobj_free)
		return;
	obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, "pmemobj_free");
	real_pmemobj_free(oidp);
	obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, "pmemobj_free");
}

/* libpmemobj's own, looked up when first needed (never interposed). */
static void *obj_direct(obj_oid oid)
{
	static void *(*direct)(obj_oid);

	if (!direct)
		direct = (void *(*)(obj_oid))dlsym(RTLD_NEXT, "pmemobj_direct");
	return direct && oid.off ? direct(oid) : NULL;
}

static int obj_stage(void)
{
	static int (*stage)(void);

	if (!stage)
		stage = (int (*)(void))dlsym(RTLD_NEXT, "pmemobj_tx_stage");
	return stage ? stage() : 0;
}

static void obj_add(const void *p, size_t n, uint64_t flags, const char *name)
{
	obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, name);
	obj_tell(flags & OBJ_XADD_NO_FLUSH ? NTM_WATCH_OBJ_ADD_NO_FLUSH
					   : NTM_WATCH_OBJ_ADD, p, n, name);
}

/* After an allocation (in the call still): its usable bytes are added. */
static obj_oid obj_allocated(obj_oid oid, const char *name)
{
	static size_t (*usable)(obj_oid);
	void *p = obj_direct(oid);

	if (!usable)
		usable = (size_t (*)(obj_oid))dlsym(RTLD_NEXT,
						    "pmemobj_alloc_usable_size");
	if (p && usable)
		obj_tell(NTM_WATCH_OBJ_ALLOCATED, p, usable(oid), name);
	obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, name);
	return oid;
}

/*
 * pmemobj_tx_begin()'s parameters are a list ended by TX_PARAM_NONE: read
 * by their types, passed on as as many words (a word holds an int and a
 * pointer alike in the calling conventions of x86-64 and AArch64; the
 * callee reads no further than TX_PARAM_NONE).
 */
int pmemobj_tx_begin(void *pop, void *env, ...)
{
	uintptr_t a[OBJ_BEGIN_ARGS] = { 0 };
	unsigned n = 0;
	va_list ap;
	int ret;
	REAL(pmemobj_tx_begin);

	va_start(ap, env);
	while (n < OBJ_BEGIN_ARGS - 3) {
		int type = va_arg(ap, int);

		a[n++] = (uintptr_t)(unsigned)type;
		if (type == OBJ_PARAM_MUTEX || type == OBJ_PARAM_RWLOCK) {
			a[n++] = (uintptr_t)va_arg(ap, void *);
		} else if (type == OBJ_PARAM_CB) {
			a[n++] = (uintptr_t)va_arg(ap, void (*)(void));
			a[n++] = (uintptr_t)va_arg(ap, void *);
		} else {
			break;	/* TX_PARAM_NONE, or one libpmemobj refuses */
		}
	}
	va_end(ap);
	obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, "pmemobj_tx_begin");
	ret = real_pmemobj_tx_begin(pop, env, a[0], a[1], a[2], a[3], a[4],
				    a[5], a[6], a[7], a[8], a[9], a[10], a[11],
				    a[12], a[13], a[14], a[15], a[16], a[17],
				    a[18], a[19], a[20], a[21], a[22], a[23],
				    a[24], a[25], a[26], a[27], a[28], a[29],
				    a[30], a[31], a[32]);
	obj_tell(NTM_WATCH_OBJ_BEGUN, pop, (size_t)ret, "pmemobj_tx_begin");
	obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, "pmemobj_tx_begin");
	return ret;
}

#define OBJ_CALL(name, args, ...)                                       \
	do {                                                            \
		int ret;                                                \
		REAL(name);                                             \
		__VA_ARGS__;                                            \
		ret = real_##name args;                                 \
		obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, #name);          \
		return ret;                                             \
	} while (0)

int pmemobj_tx_add_range(obj_oid oid, uint64_t off, size_t size)
{
	char *p = obj_direct(oid);

	OBJ_CALL(pmemobj_tx_add_range, (oid, off, size),
		 obj_add(p ? p + off : NULL, size, 0, "pmemobj_tx_add_range"));
}

int pmemobj_tx_add_range_direct(const void *ptr, size_t size)
{
	OBJ_CALL(pmemobj_tx_add_range_direct, (ptr, size),
		 obj_add(ptr, size, 0, "pmemobj_tx_add_range_direct"));
}

int pmemobj_tx_xadd_range(obj_oid oid, uint64_t off, size_t size,
			  uint64_t flags)
{
	char *p = obj_direct(oid);

	OBJ_CALL(pmemobj_tx_xadd_range, (oid, off, size, flags),
		 obj_add(p ? p + off : NULL, size, flags,
			 "pmemobj_tx_xadd_range"));
}

int pmemobj_tx_xadd_range_direct(const void *ptr, size_t size, uint64_t flags)
{
	OBJ_CALL(pmemobj_tx_xadd_range_direct, (ptr, size, flags),
		 obj_add(ptr, size, flags, "pmemobj_tx_xadd_range_direct"));
}

int pmemobj_tx_free(obj_oid oid)
{
	OBJ_CALL(pmemobj_tx_free, (oid),
		 obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, "pmemobj_tx_free"));
}

int pmemobj_tx_xfree(obj_oid oid, uint64_t flags)
{
	OBJ_CALL(pmemobj_tx_xfree, (oid, flags),
		 obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, "pmemobj_tx_xfree"));
}

int pmemobj_tx_lock(int type, void *lockp)
{
	OBJ_CALL(pmemobj_tx_lock, (type, lockp),
		 obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, "pmemobj_tx_lock"));
}

int pmemobj_tx_xlock(int type, void *lockp, uint64_t flags)
{
	OBJ_CALL(pmemobj_tx_xlock, (type, lockp, flags),
		 obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, "pmemobj_tx_xlock"));
}

#define OBJ_ALLOC(name, params, args)                                   \
	obj_oid name params                                             \
	{                                                               \
		static __typeof__(name) *real_##name;                   \
		if (!real_##name)                                       \
			real_##name = (__typeof__(name) *)              \
				dlsym(RTLD_NEXT, #name);                \
		if (!real_##name) {                                     \
			errno = ENOSYS;                                 \
			return (obj_oid){ 0, 0 };                       \
		}                                                       \
		obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, #name);          \
		return obj_allocated(real_##name args, #name);          \
	}

OBJ_ALLOC(pmemobj_tx_alloc, (size_t size, uint64_t type_num), (size, type_num))
OBJ_ALLOC(pmemobj_tx_zalloc, (size_t size, uint64_t type_num), (size, type_num))
OBJ_ALLOC(pmemobj_tx_xalloc, (size_t size, uint64_t type_num, uint64_t flags),
	  (size, type_num, flags))
OBJ_ALLOC(pmemobj_tx_realloc, (obj_oid oid, size_t size, uint64_t type_num),
	  (oid, size, type_num))
OBJ_ALLOC(pmemobj_tx_zrealloc, (obj_oid oid, size_t size, uint64_t type_num),
	  (oid, size, type_num))
OBJ_ALLOC(pmemobj_tx_strdup, (const char *s, uint64_t type_num), (s, type_num))
OBJ_ALLOC(pmemobj_tx_xstrdup, (const char *s, uint64_t type_num, uint64_t flags),
	  (s, type_num, flags))
OBJ_ALLOC(pmemobj_tx_wcsdup, (const wchar_t *s, uint64_t type_num),
	  (s, type_num))
OBJ_ALLOC(pmemobj_tx_xwcsdup, (const wchar_t *s, uint64_t type_num,
			       uint64_t flags), (s, type_num, flags))

static unsigned obj_program_flags(void)
{
	return NTM_WATCH_OBJ_FROM_PROGRAM |
	       (obj_stage() == OBJ_TX_STAGE_WORK ? 0 : NTM_WATCH_OBJ_NOT_WORK);
}

void pmemobj_tx_commit(void)
{
	REAL_VOID(pmemobj_tx_commit);
	obj_tell(NTM_WATCH_OBJ_ENTER, NULL, 0, "pmemobj_tx_commit");
	obj_tell(NTM_WATCH_OBJ_COMMIT, NULL, 0, "pmemobj_tx_commit");
	real_pmemobj_tx_commit();
	obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, "pmemobj_tx_commit");
}

void pmemobj_tx_abort(int errnum)
{
	REAL_VOID(pmemobj_tx_abort);
	obj_tell(NTM_WATCH_OBJ_ENTER, NULL, NTM_WATCH_OBJ_NOT_WORK,
		 "pmemobj_tx_abort");
	real_pmemobj_tx_abort(errnum);
	obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, "pmemobj_tx_abort");
}

void pmemobj_tx_process(void)
{
	REAL_VOID(pmemobj_tx_process);
	obj_tell(NTM_WATCH_OBJ_ENTER, NULL, obj_program_flags(),
		 "pmemobj_tx_process");
	real_pmemobj_tx_process();
	obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, "pmemobj_tx_process");
}

int pmemobj_tx_end(void)
{
	int ret;
	REAL(pmemobj_tx_end);

	obj_tell(NTM_WATCH_OBJ_ENTER, NULL, obj_program_flags(),
		 "pmemobj_tx_end");
	ret = real_pmemobj_tx_end();
	obj_tell(NTM_WATCH_OBJ_ENDED, NULL, (size_t)obj_stage(), "pmemobj_tx_end");
	obj_tell(NTM_WATCH_OBJ_LEAVE, NULL, 0, "pmemobj_tx_end");
	return ret;
}

/*
 * libpmemobj's persistence functions (pmemobj_persist(), ...): the program
 * asks for the write-backs and fences made under them, which are then its
 * own, performance notes and all. libpmemobj's own write-backs are made
 * under its other calls; pmemobj_persist() reaches libpmem by a tail call,
 * so no frame of a backtrace names it. Not calls into libpmemobj's
 * transactions: what is stored under pmemobj_memcpy_persist() in a
 * transaction is still the program's store.
 */
#define OBJ_ASKED(...) \
	OBJ_AROUND(NTM_WATCH_OBJ_ASK, NTM_WATCH_OBJ_ASKED, __VA_ARGS__)
#define OBJ_ASKED_VOID(name, params, args)                              \
	void name params;                                               \
	void name params                                                \
	{                                                               \
		REAL_VOID(name);                                        \
		obj_tell(NTM_WATCH_OBJ_ASK, NULL, 0, #name);            \
		real_##name args;                                       \
		obj_tell(NTM_WATCH_OBJ_ASKED, NULL, 0, #name);          \
	}

OBJ_ASKED_VOID(pmemobj_persist, (void *pop, const void *addr, size_t len),
	       (pop, addr, len))
OBJ_ASKED_VOID(pmemobj_flush, (void *pop, const void *addr, size_t len),
	       (pop, addr, len))
OBJ_ASKED_VOID(pmemobj_drain, (void *pop), (pop))
OBJ_ASKED(int, pmemobj_xpersist, (void *pop, const void *addr, size_t len,
	  unsigned flags), (pop, addr, len, flags), -1)
OBJ_ASKED(int, pmemobj_xflush, (void *pop, const void *addr, size_t len,
	  unsigned flags), (pop, addr, len, flags), -1)
OBJ_ASKED(void *, pmemobj_memcpy_persist, (void *pop, void *dest,
	  const void *src, size_t len), (pop, dest, src, len), NULL)
OBJ_ASKED(void *, pmemobj_memset_persist, (void *pop, void *dest, int c,
	  size_t len), (pop, dest, c, len), NULL)
OBJ_ASKED(void *, pmemobj_memcpy, (void *pop, void *dest, const void *src,
	  size_t len, unsigned flags), (pop, dest, src, len, flags), NULL)
OBJ_ASKED(void *, pmemobj_memmove, (void *pop, void *dest, const void *src,
	  size_t len, unsigned flags), (pop, dest, src, len, flags), NULL)
OBJ_ASKED(void *, pmemobj_memset, (void *pop, void *dest, int c, size_t len,
	  unsigned flags), (pop, dest, c, len, flags), NULL)
