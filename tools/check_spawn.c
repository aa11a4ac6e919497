// SPDX-License-Identifier: MIT
/*
 * check_spawn.c - PROGRAM run with the checking library preloaded: its
 * environment (the contract's variables set, nothing else changed), and
 * the run itself, the signals a user sends to `ntmem check` passed on to
 * it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"

extern char **environ;

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NFORWARDED (sizeof(forwarded) / sizeof(*forwarded))

static volatile sig_atomic_t child_pid;

static void forward(int sig, siginfo_t *si, void *uc)
{
	pid_t pid = child_pid;

	(void)uc;
	if (pid <= 0)
		return;
	/*
	 * A key at the terminal (^C, ^\) signals the whole foreground
	 * process group, the program with it: sending it again would
	 * deliver it twice, and a program that counts its SIGINTs would
	 * take the second as "quit now". A kill(2) aimed at this process
	 * alone is passed on.
	 */
	if (si->si_code == SI_KERNEL && getpgid(pid) == getpgrp())
		return;
	kill(pid, sig);
}

/* NAME=VALUE */
static char *env_entry(const char *name, const char *value)
{
	char *s;

	return asprintf(&s, "%s=%s", name, value) < 0 ? NULL : s;
}

/* VALUE[:old value of NAME] */
static char *env_prepend(const char *name, const char *value)
{
	const char *old = getenv(name);
	char *s;

	if (!old || !*old)
		return env_entry(name, value);
	return asprintf(&s, "%s=%s:%s", name, value, old) < 0 ? NULL : s;
}

/* The variables child_env() sets (the last entries of its environment). */
static const char *const ours[] = {
	"LD_PRELOAD=", "LD_LIBRARY_PATH=", "NTMEM_CHECK_REPORT=",
	"NTMEM_CHECK_WATCH=", "GLIBC_TUNABLES=",
};
#define NOURS (sizeof(ours) / sizeof(*ours))

/*
 * Room in each thread's static TLS for a checking library that is
 * dlopen()ed late (a program that loads libpmem.so.1 when it needs it):
 * its thread-local variables are initial-exec, as its SIGSEGV handler
 * needs, and glibc's default room (512 bytes) is less than it takes. Set
 * first, so that a value the user gave wins.
 */
#define STATIC_TLS_ROOM "glibc.rtld.optional_static_tls=4096"

/*
 * The program's environment: this one with the variables of the contract
 * set, everything else unchanged. NULL when out of memory.
 */
char **child_env(const char *dir, const char *report)
{
	size_t n = 0, k = 0;
	char **env, *preload;

	while (environ[n])
		n++;
	env = calloc(n + NOURS + 1, sizeof(*env));
	if (!env)
		return NULL;
	if (asprintf(&preload, "%s/libntmem-watch-preload.so", dir) < 0) {
		free(env);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		bool skip = false;

		for (size_t o = 0; o < NOURS; o++)
			if (!strncmp(environ[i], ours[o], strlen(ours[o])))
				skip = true;
		if (!skip)
			env[k++] = environ[i];
	}
	env[k++] = env_prepend("LD_PRELOAD", preload);
	env[k++] = env_prepend("LD_LIBRARY_PATH", dir);
	env[k++] = env_entry("NTMEM_CHECK_REPORT", report);
	env[k++] = env_entry("NTMEM_CHECK_WATCH", "1");
	env[k++] = env_prepend("GLIBC_TUNABLES", STATIC_TLS_ROOM);
	free(preload);
	for (size_t i = k - NOURS; i < k; i++)
		if (!env[i]) {
			for (size_t f = k - NOURS; f < k; f++)
				free(env[f]);
			free(env);
			return NULL;
		}
	return env;
}

/* The entries child_env() allocated: its last NOURS. */
void free_env(char **env)
{
	size_t n = 0;

	if (!env)
		return;
	while (env[n])
		n++;
	for (size_t i = n >= NOURS ? n - NOURS : 0; i < n; i++)
		free(env[i]);
	free(env);
}

/*
 * Run @argv with @env and wait for it, passing on the signals of
 * forwarded[]. Returns its wait status (its pid in *@child), or -1 with
 * *@exec_errno set when it could not be executed (-1 and 0 for a failed
 * fork or pipe, errno set).
 */
int run_program(char **argv, char **env, int *exec_errno, pid_t *child)
{
	struct sigaction sa = { .sa_sigaction = forward, .sa_flags = SA_SIGINFO };
	struct sigaction old[NFORWARDED];
	sigset_t block, oldmask;
	int pipefd[2], status, e = 0;
	ssize_t got;
	pid_t pid;

	*exec_errno = 0;
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	/*
	 * Blocked from before the fork until the child's pid is known: a
	 * signal in between is held, then forwarded, not lost or fatal to
	 * this process alone (which would leave the program running).
	 */
	sigemptyset(&block);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	sigprocmask(SIG_BLOCK, &block, &oldmask);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NFORWARDED; i++) {
		sigaction(forwarded[i], NULL, &old[i]);
		/* nohup, a background job: the program inherits the SIG_IGN */
		if (old[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &sa, NULL);
	}
	pid = fork();
	if (pid == 0) {
		/* Default actions before unblocking: a held signal is its. */
		for (size_t i = 0; i < NFORWARDED; i++)
			sigaction(forwarded[i], &old[i], NULL);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		close(pipefd[0]);
		execvpe(argv[0], argv, env);
		e = errno;
		/* The pipe closes on a successful exec: nothing read means run. */
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0) {
		e = errno;
		close(pipefd[0]);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		errno = e;
		return -1;
	}
	child_pid = pid;
	*child = pid;
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	do
		got = read(pipefd[0], &e, sizeof(e));
	while (got < 0 && errno == EINTR);
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			status = 0;
			break;
		}
	child_pid = 0;
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &old[i], NULL);
	if (got == (ssize_t)sizeof(e)) {
		*exec_errno = e ? e : ENOEXEC;
		return -1;
	}
	return status;
}
