// SPDX-License-Identifier: MIT
/*
 * cli_no_threads.c - an LD_PRELOAD module for check_cli_faults.sh: every
 * pthread_create() fails with EAGAIN, as under a thread or memory limit,
 * so a multi-threaded memmap init fails and the tool must say so instead
 * of timing it as a fast success.
 */
#include <errno.h>
#include <pthread.h>

int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
		   void *(*start)(void *), void *arg)
{
	(void)thread, (void)attr, (void)start, (void)arg;
	return EAGAIN;
}
