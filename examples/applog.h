/* SPDX-License-Identifier: MIT */
/*
 * applog.h - a durable append-only log on persistent memory: the example
 * of how ntmem's copies and fences make data survive a power cut.
 *
 * On media (offsets from the start of the region, little-endian):
 *
 *     0  struct applog_head: magic, version, region size
 *    64  commit word: bytes of committed records (one aligned 8-byte word)
 *   128  records, packed: { uint32_t len; uint32_t crc; len bytes }
 *
 * The rule the code keeps: a record is durable before the commit word
 * that covers it is stored, and the commit word is a single aligned
 * 8-byte store, which a power cut leaves either old or new. So recovery
 * finds a prefix of the appended records, never a torn one, and every
 * append that returned is in it.
 *
 * The region must be memory whose durability is CPU cache write-back plus
 * a fence (ntm_ns_cpu_durable(): devdax, fsdax, pmem emulated on tmpfs).
 * One writer at a time; readers after recovery only.
 */
#ifndef APPLOG_H
#define APPLOG_H

#include <stddef.h>
#include <stdint.h>

#define APPLOG_MAGIC 0x676f4c7070416d4eULL	/* "NmAppLog" */
#define APPLOG_VERSION 1u
#define APPLOG_COMMIT 64		/* offset of the commit word */
#define APPLOG_DATA 128			/* offset of the first record */
#define APPLOG_REC_HEAD 8		/* len + crc before each record */

struct applog_head {		/* one cache line at offset 0 */
	uint64_t magic;		/* APPLOG_MAGIC; stored last by format */
	uint32_t version;	/* APPLOG_VERSION */
	uint32_t reserved;	/* 0 */
	uint64_t size;		/* bytes of the whole region */
	uint64_t spare[5];	/* 0 */
};

struct applog {			/* the writer's view, in DRAM */
	unsigned char *base;	/* the region */
	size_t size;		/* its bytes */
	uint64_t end;		/* committed record bytes (= the commit word) */
	uint64_t tail;		/* record bytes written, committed or not */
	uint64_t count;		/* committed records */
	uint64_t pending;	/* records written past the commit word */
};

/*
 * applog_format() - make [@base, @base + @size) an empty log, durably;
 * whatever was there is gone. @base 64-byte aligned, @size >= 256.
 * Return: 0 or -EINVAL.
 */
int applog_format(struct applog *log, void *base, size_t size);

/*
 * applog_recover() - open the log in [@base, @base + @size) after a clean
 * shutdown or a crash: the records below the commit word, each checked
 * against its checksum. Bytes past it (a record whose append never
 * returned) are ignored and will be overwritten. Writes nothing.
 * Return: 0, -ENODATA (no log here: the magic is missing), -EINVAL (a
 * log of another version or size), -EIO (a committed record is damaged).
 */
int applog_recover(struct applog *log, void *base, size_t size);

/*
 * applog_append() - add one record of @len bytes (at least 1, at most
 * UINT32_MAX), durable on return: applog_add() then applog_commit().
 * Return: 0, -EINVAL (@len), -ENOSPC (the log is full).
 */
int applog_append(struct applog *log, const void *rec, size_t len);

/*
 * applog_add() - write one record past the tail, not yet committed: a
 * crash before the next applog_commit() loses it. Adding several records
 * and committing once (group commit) pays the two fences once.
 * Return: as applog_append().
 */
int applog_add(struct applog *log, const void *rec, size_t len);

/* applog_commit() - make every added record durable and part of the log */
void applog_commit(struct applog *log);

/*
 * applog_next() - walk the committed records: start with *@pos = 0; each
 * call returns the next record (pointing into the region) and its length,
 * or NULL after the last one.
 */
const void *applog_next(const struct applog *log, uint64_t *pos,
			uint32_t *len);

#endif /* APPLOG_H */
