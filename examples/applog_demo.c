// SPDX-License-Identifier: MIT
/*
 * applog_demo.c - the durable log of applog.h on an emulated pmem namespace.
 *
 *   cc applog_demo.c applog.c $(pkg-config --cflags --libs ntmem) -o applog_demo
 *   ./applog_demo [DIR]		(DIR on tmpfs; default /dev/shm)
 *
 * Maps a 1 MiB namespace file in DIR (unlinked as soon as it is mapped),
 * formats a log, appends records of several sizes one at a time and as a
 * group, then writes one record that is never committed - what a crash in
 * the middle of an append leaves - and recovers the log from the mapping
 * as a restarted program would: the committed records, not the last one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ntmem.h>

#include "applog.h"

#define NS_SIZE (1u << 20)

static const char *const texts[] = {
	"hello",
	"a record that is not a multiple of 8 bytes",
	"durable before the commit word, the commit word durable before return",
	"x",
};

static int fail(const char *what, int err)
{
	fprintf(stderr, "applog_demo: %s: %s\n", what, strerror(-err));
	return 1;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	unsigned char big[1000];
	struct applog log;
	struct ntm_ns *ns;
	char path[4096];
	uint64_t pos = 0;
	uint32_t len;
	const void *rec;
	size_t i, n = 0;
	int ret;

	snprintf(path, sizeof(path), "%s/applog-demo-%ld", dir, (long)getpid());
	ret = ntm_ns_create(&ns, path, NS_SIZE, 4096,
			    NTM_NS_EMULATE | NTM_NS_TEMPORARY);
	if (ret) {
		fprintf(stderr, "applog_demo: %s\n", ntm_errmsg());
		return 1;
	}
	if (!ntm_ns_cpu_durable(ns)) {
		fprintf(stderr, "applog_demo: %s is not on tmpfs: this log is "
			"made durable by write-back + fence, not msync()\n", dir);
		ntm_ns_close(ns);
		return 1;
	}
	printf("namespace: %u KiB, %s, in %s (unlinked)\n", NS_SIZE >> 10,
	       ntm_ns_kind_name(ntm_ns_kind(ns)), dir);

	ret = applog_format(&log, ntm_ns_base(ns), ntm_ns_size(ns));
	if (ret)
		return fail("format", ret);
	printf("format: %zu bytes for records, commit word at offset %d\n",
	       log.size - APPLOG_DATA, APPLOG_COMMIT);

	/* One at a time: each durable when applog_append() returns. */
	for (i = 0; i < 3; i++) {
		ret = applog_append(&log, texts[i], strlen(texts[i]));
		if (ret)
			return fail("append", ret);
	}
	memset(big, 0xa5, sizeof(big));
	ret = applog_append(&log, big, sizeof(big));
	if (ret)
		return fail("append", ret);
	printf("append: %llu records, each durable on return (2 fences each)\n",
	       (unsigned long long)log.count);

	/* A group: several records, one pair of fences. */
	for (i = 0; i < 3; i++) {
		ret = applog_add(&log, texts[3], strlen(texts[3]));
		if (ret)
			return fail("add", ret);
	}
	applog_commit(&log);
	printf("group commit: 3 more records, 2 fences for the three\n");

	/* Written, never committed: a crash before applog_commit(). */
	ret = applog_add(&log, "lost", 4);
	if (ret)
		return fail("add", ret);
	printf("add without commit: 1 record past the commit word "
	       "(%llu bytes written, %llu committed)\n",
	       (unsigned long long)log.tail, (unsigned long long)log.end);

	/* Restart: everything the program knew is gone but the media. */
	memset(&log, 0, sizeof(log));
	ret = applog_recover(&log, ntm_ns_base(ns), ntm_ns_size(ns));
	if (ret)
		return fail("recover", ret);
	printf("recover: commit word %llu, %llu records, every checksum good\n",
	       (unsigned long long)log.end, (unsigned long long)log.count);
	while ((rec = applog_next(&log, &pos, &len))) {
		if (len == sizeof(big) && !memcmp(rec, big, len))
			printf("  #%zu %4u bytes of 0xa5\n", n++, len);
		else
			printf("  #%zu %4u bytes  \"%.*s\"\n", n++, len,
			       (int)len, (const char *)rec);
	}
	if (log.count != 7) {
		fprintf(stderr, "applog_demo: expected 7 records\n");
		return 1;
	}
	printf("the uncommitted record was ignored: a prefix of the appends\n");

	/* The space it took is simply written over. */
	ret = applog_append(&log, "after recovery", 14);
	if (ret)
		return fail("append", ret);
	ret = applog_recover(&log, ntm_ns_base(ns), ntm_ns_size(ns));
	if (ret)
		return fail("recover", ret);
	printf("append after recovery, recover again: %llu records\n",
	       (unsigned long long)log.count);
	ntm_ns_close(ns);
	return log.count == 8 ? 0 : 1;
}
