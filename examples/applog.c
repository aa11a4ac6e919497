// SPDX-License-Identifier: MIT
/*
 * applog.c - the durable append-only log of applog.h.
 *
 * Three things make it crash-safe, and each has its line below:
 *   1. records are copied so that no line of them stays in the CPU cache
 *      (ntm_memcpy_flush), then fenced (ntm_drain) BEFORE the commit word
 *      that covers them is stored;
 *   2. the commit word is one aligned 8-byte store, which a power cut
 *      leaves whole (old or new), never half of each;
 *   3. recovery trusts nothing past the commit word, and checks what is
 *      below it (a checksum per record), so a bug or a bad medium is
 *      reported instead of being read back as data.
 *
 * make check runs this file under crash images
 * (tests/record/test_crash_applog.c): every media state a power cut may
 * leave at every fence and write-back.
 */
#include <errno.h>
#include <string.h>

#include <ntmem.h>

#include "applog.h"

/*
 * CRC-32C (Castagnoli), a byte per step. The table is filled before main()
 * runs, so no thread ever sees it half-built.
 */
static uint32_t crc_table[256];

__attribute__((constructor)) static void crc_table_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (c & 1 ? 0x82f63b78 : 0);
		crc_table[i] = c;
	}
}

static uint32_t crc32c(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;

	crc = ~crc;
	while (n--)
		crc = crc >> 8 ^ crc_table[(crc ^ *b++) & 0xff];
	return ~crc;
}

/* The checksum covers the length too, so a torn length is caught. */
static uint32_t rec_crc(uint32_t len, const void *data)
{
	return crc32c(crc32c(0, &len, sizeof(len)), data, len);
}

/*
 * One aligned 8-byte store of the commit word. With a constant size of 8
 * and an 8-byte aligned destination the copy is inlined as a single
 * non-temporal MOVNTI on x86-64: nothing is called, no line is left dirty,
 * and x86-64 writes an aligned 8-byte store to media whole. ntm_memcpy_nt()
 * emits the same instruction here; ntm_memcpy_flush() is used because its
 * contract (no dirty line on return) also holds where a CPU has no
 * non-temporal store and the copy is a cached store plus a write-back.
 */
static void store_commit(struct applog *log, uint64_t end)
{
	ntm_memcpy_flush(log->base + APPLOG_COMMIT, &end, sizeof(end));
}

int applog_format(struct applog *log, void *base, size_t size)
{
	struct applog_head head = {
		.version = APPLOG_VERSION,
		.size = size,
	};
	uint64_t magic = APPLOG_MAGIC;

	if ((uintptr_t)base % 64 || size < 2 * APPLOG_DATA)
		return -EINVAL;
	*log = (struct applog){ .base = base, .size = size };

	/*
	 * The header with its magic still 0, and an empty commit word. Until
	 * the magic below is durable a crash leaves no log here or, over an
	 * old log of this region, that log or an empty one: the other header
	 * fields are the same.
	 */
	ntm_memcpy_flush(log->base, &head, sizeof(head));
	store_commit(log, 0);
	/* The header and the empty commit word are durable before ... */
	ntm_drain();
	/* ... the magic that says they are valid, */
	ntm_memcpy_flush(log->base, &magic, sizeof(magic));
	/* and the magic is durable before format returns. */
	ntm_drain();
	return 0;
}

int applog_recover(struct applog *log, void *base, size_t size)
{
	const unsigned char *b = base;
	struct applog_head head;
	uint64_t end, pos = 0, count = 0;

	/*
	 * Plain loads are enough to read pmem; a program that must survive
	 * poisoned media reads through ntm_copy_mc() (ntmem/mc.h) instead.
	 */
	if (size < 2 * APPLOG_DATA)
		return -EINVAL;
	memcpy(&head, b, sizeof(head));
	if (head.magic != APPLOG_MAGIC)
		return -ENODATA;
	if (head.version != APPLOG_VERSION || head.size != size)
		return -EINVAL;
	memcpy(&end, b + APPLOG_COMMIT, sizeof(end));
	if (end > size - APPLOG_DATA)
		return -EIO;

	/* Walk the committed records; each must end inside the commit. */
	while (pos < end) {
		uint32_t len, crc;

		if (end - pos < APPLOG_REC_HEAD)
			return -EIO;
		memcpy(&len, b + APPLOG_DATA + pos, sizeof(len));
		memcpy(&crc, b + APPLOG_DATA + pos + 4, sizeof(crc));
		pos += APPLOG_REC_HEAD;
		if (len == 0 || len > end - pos ||
		    rec_crc(len, b + APPLOG_DATA + pos) != crc)
			return -EIO;
		pos += len;
		count++;
	}
	*log = (struct applog){ .base = base, .size = size, .end = end,
				.tail = end, .count = count };
	return 0;
}

int applog_add(struct applog *log, const void *rec, size_t len)
{
	uint32_t h[2];
	unsigned char *at;

	if (len == 0 || len > UINT32_MAX)
		return -EINVAL;
	if (len + APPLOG_REC_HEAD > log->size - APPLOG_DATA - log->tail)
		return -ENOSPC;
	h[0] = (uint32_t)len;
	h[1] = rec_crc(h[0], rec);

	/*
	 * Past the commit word, so a crash during these copies leaves bytes
	 * recovery ignores. Records are packed: most start unaligned, and
	 * ntm_memcpy_flush() then copies the partial head and tail lines with
	 * ordinary stores and writes them back. No fence yet: see commit.
	 */
	at = log->base + APPLOG_DATA + log->tail;
	ntm_memcpy_flush(at, h, sizeof(h));
	ntm_memcpy_flush(at + sizeof(h), rec, len);
	log->tail += APPLOG_REC_HEAD + len;
	log->pending++;
	return 0;
}

void applog_commit(struct applog *log)
{
	if (log->tail == log->end)
		return;
	/*
	 * The records' non-temporal stores and write-backs are weakly
	 * ordered: without this fence the commit word below may reach media
	 * first, and a crash would leave it covering a torn record.
	 */
	ntm_drain();
	store_commit(log, log->tail);
	/* The commit word is durable before the caller is told so. */
	ntm_drain();
	log->end = log->tail;
	log->count += log->pending;
	log->pending = 0;
}

int applog_append(struct applog *log, const void *rec, size_t len)
{
	int ret = applog_add(log, rec, len);

	if (ret)
		return ret;
	applog_commit(log);
	return 0;
}

const void *applog_next(const struct applog *log, uint64_t *pos,
			uint32_t *len)
{
	const unsigned char *at = log->base + APPLOG_DATA + *pos;

	if (*pos >= log->end)
		return NULL;
	memcpy(len, at, sizeof(*len));
	*pos += APPLOG_REC_HEAD + *len;
	return at + APPLOG_REC_HEAD;
}
