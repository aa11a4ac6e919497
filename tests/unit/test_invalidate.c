// SPDX-License-Identifier: MIT
/*
 * test_invalidate.c - ntm_invalidate(), for memory another host writes.
 *
 * Built twice. Against the library (test_invalidate):
 *   two_processes   the protocol of ntm_invalidate(3) over one shared
 *                   mapping (a memfd) between two processes: the writer
 *                   copies a payload with ntm_memcpy_flush(), drains,
 *                   then publishes a sequence number (an 8-byte store,
 *                   ntm_persist()); the reader invalidates the number's
 *                   line until it changes, then invalidates the payload,
 *                   reads it and acknowledges the round the same way:
 *                   2000 rounds, every payload right to the byte. One
 *                   machine's caches are coherent, so this proves the
 *                   protocol runs and loses nothing, not that a stale line
 *                   is dropped (the recorder proves the instructions);
 *   edges           n = 0 touches nothing (NULL is fine), odd offsets and
 *                   lengths keep the data.
 * Against the recorder build (test_record_invalidate, NTM_RECORD):
 *   recorded        after ntm_invalidate() every line of the range is
 *                   written back once, no other line is, and every unit
 *                   stored before it is durable (the write-back and its
 *                   completing fence are both there), at offsets 0..63 and
 *                   lengths 1..300; meson runs it under each NTMEM_FLUSH,
 *                   and NTMEM_FLUSH=clflush selects CLFLUSH here too.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <ntmem.h>
#ifdef NTM_RECORD
#include <ntmem/check.h>
#endif

#define LINE 64
#define ROUNDS 2000
#define PAYLOAD 4096

#ifndef NTM_RECORD

struct shared {
	volatile uint64_t seq;		/* writer: published last, own line */
	uint8_t pad[LINE - sizeof(uint64_t)];
	volatile uint64_t ack;		/* reader: the round it has read */
	uint8_t pad2[LINE - sizeof(uint64_t)];
	uint8_t payload[PAYLOAD];
};

/* Wait until another process published @want in *@word. */
static void await(volatile uint64_t *word, uint64_t want)
{
	for (;;) {
		ntm_invalidate((const void *)word, sizeof(*word));
		if (*word == want)
			return;
	}
}

/* Publish @v in *@word for another process. */
static void publish(volatile uint64_t *word, uint64_t v)
{
	*word = v;
	ntm_persist((const void *)word, sizeof(*word));
}

static void fill(uint8_t *buf, uint64_t round)
{
	for (size_t i = 0; i < PAYLOAD; i++)
		buf[i] = (uint8_t)(round * 131 + i * 7 + 1);
}

static int reader(struct shared *sh)
{
	uint8_t want[PAYLOAD];

	for (uint64_t round = 1; round <= ROUNDS; round++) {
		await(&sh->seq, round);
		/* Drop stale payload lines, then read what the writer wrote. */
		ntm_invalidate(sh->payload, PAYLOAD);
		fill(want, round);
		if (memcmp(sh->payload, want, PAYLOAD))
			return 1;
		publish(&sh->ack, round);
	}
	return 0;
}

static void two_processes(void **state)
{
	int fd = memfd_create("ntmem-invalidate", MFD_CLOEXEC);
	struct shared *sh;
	pid_t pid;
	int status;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, sizeof(*sh)), 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(sh != MAP_FAILED);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(reader(sh));
	for (uint64_t round = 1; round <= ROUNDS; round++) {
		uint8_t src[PAYLOAD];

		fill(src, round);
		ntm_memcpy_flush(sh->payload, src, PAYLOAD);
		ntm_drain();	/* the payload before the number */
		publish(&sh->seq, round);
		/* One round in flight: the reader has read it before the next. */
		if (round < ROUNDS)
			await(&sh->ack, round);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	munmap(sh, sizeof(*sh));
	close(fd);
}

static void edges(void **state)
{
	uint8_t buf[512], copy[512];

	(void)state;
	ntm_invalidate(NULL, 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 3 + 1);
	memcpy(copy, buf, sizeof(buf));
	for (size_t off = 0; off < 64; off += 7)
		for (size_t n = 1; off + n <= sizeof(buf); n += 61)
			ntm_invalidate(buf + off, n);
	assert_memory_equal(buf, copy, sizeof(buf));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_processes),
		cmocka_unit_test(edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* NTM_RECORD */

static void recorded(void **state)
{
	static uint8_t arena[3 * 4096] __attribute__((aligned(4096)));
	uint8_t *base = arena + 4096;

	(void)state;
	assert_int_equal(ntm_check_track(arena, sizeof(arena)), 0);
	ntm_check_start();
	for (size_t off = 0; off < 64; off++) {
		for (size_t n = 1; n <= 300; n += (n < 70 ? 1 : 23)) {
			uintptr_t lo = ((uintptr_t)base + off) & ~(uintptr_t)(LINE - 1);
			uintptr_t hi = ((uintptr_t)base + off + n + LINE - 1) &
				       ~(uintptr_t)(LINE - 1);
			struct ntm_check_counts c;

			ntm_check_reset();
			memset(base + off, (int)(n + off), n);
			ntm_check_store(base + off, n);
			ntm_invalidate(base + off, n);
			if (!ntm_check_durable(base + off, n))
				fail_msg("off %zu n %zu: %s", off, n,
					 ntm_check_message());
			/* Each line of the range written back once... */
			assert_int_equal(ntm_check_query((void *)lo, hi - lo, &c), 0);
			assert_int_equal(c.lines_written_back, c.lines);
			assert_int_equal(c.writebacks, c.lines);
			/* ...and no line around it. */
			assert_int_equal(ntm_check_query(arena, lo - (uintptr_t)arena,
							 &c), 0);
			assert_int_equal(c.writebacks, 0);
			assert_int_equal(ntm_check_query((void *)hi,
							 (uintptr_t)(arena + sizeof(arena)) - hi,
							 &c), 0);
			assert_int_equal(c.writebacks, 0);
		}
	}
	ntm_check_stop();
	ntm_check_untrack(arena);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(recorded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif /* NTM_RECORD */
