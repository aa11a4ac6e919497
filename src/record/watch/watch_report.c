// SPDX-License-Identifier: MIT
/*
 * watch_report.c - the checker's records: JSON objects, one per line, each
 * written with a single write() to a file opened O_APPEND, so the records
 * of several processes (a program that forks) never interleave inside a
 * line. Code addresses are named with dladdr(): "symbol+0xoff (file+0xrel)",
 * where file+0xrel is what addr2line(1) takes.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "watch/watch_report.h"

static void put(struct wrec *w, const char *s, size_t n)
{
	/* Keep room for the closing "}\n". */
	if (w->len + n + 2 > sizeof(w->buf))
		n = w->len + 2 < sizeof(w->buf) ? sizeof(w->buf) - w->len - 2 : 0;
	memcpy(w->buf + w->len, s, n);
	w->len += n;
}

static void putc_(struct wrec *w, char c)
{
	put(w, &c, 1);
}

/* A JSON string: quotes, backslashes and control bytes escaped. */
static void put_string(struct wrec *w, const char *s)
{
	putc_(w, '"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char esc[8];

		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			put(w, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put(w, esc, 6);
		} else {
			putc_(w, (char)c);
		}
	}
	putc_(w, '"');
}

static void key(struct wrec *w, const char *k)
{
	if (!w->first)
		putc_(w, ',');
	w->first = false;
	put_string(w, k);
	putc_(w, ':');
}

void wrec_begin(struct wrec *w, const char *type)
{
	w->len = 0;
	w->first = true;
	putc_(w, '{');
	wrec_str(w, "type", type);
}

void wrec_str(struct wrec *w, const char *k, const char *val)
{
	key(w, k);
	if (val)
		put_string(w, val);
	else
		put(w, "null", 4);
}

void wrec_num(struct wrec *w, const char *k, uint64_t val)
{
	char num[24];

	key(w, k);
	put(w, num, (size_t)snprintf(num, sizeof(num), "%" PRIu64, val));
}

void wrec_addr(struct wrec *w, const char *k, uintptr_t val)
{
	char num[24];

	snprintf(num, sizeof(num), "%#" PRIxPTR, val);
	wrec_str(w, k, num);
}

/* The checking library's own load address, found through one of its
 * functions. */
static const void *own_base(void)
{
	static const void *base;
	Dl_info info;

	if (!base && dladdr((const void *)own_base, &info))
		base = info.dli_fbase;
	return base;
}

/* The preload shim's load address (its wrappers stand between a program
 * and libpmemobj: their frames name nothing), or NULL without it. */
static const void *shim_base(void)
{
	static const void *base;
	static bool looked;
	Dl_info info;
	void *reg;

	if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
		reg = dlsym(RTLD_DEFAULT, "ntm_watch_preload_register");
		if (reg && dladdr(reg, &info))
			base = info.dli_fbase;
		__atomic_store_n(&looked, true, __ATOMIC_RELEASE);
	}
	return base;
}

bool watch_frame_ours(const void *pc)
{
	Dl_info info;

	return dladdr(pc, &info) && (info.dli_fbase == own_base() ||
				     (info.dli_fbase && info.dli_fbase == shim_base()));
}

const char *watch_frame_symbol(const void *pc)
{
	Dl_info info;

	if (!dladdr(pc, &info) || info.dli_fbase != own_base())
		return NULL;
	return info.dli_sname;
}

static void frame_name(const void *pc, char *out, size_t len)
{
	Dl_info info;
	const char *file;

	if (!dladdr(pc, &info)) {
		snprintf(out, len, "%p", pc);
		return;
	}
	file = info.dli_fname && *info.dli_fname ? info.dli_fname
						 : program_invocation_name;
	if (info.dli_sname && info.dli_saddr)
		snprintf(out, len, "%s+%#tx (%s+%#tx)", info.dli_sname,
			 (const char *)pc - (const char *)info.dli_saddr, file,
			 (const char *)pc - (const char *)info.dli_fbase);
	else
		snprintf(out, len, "%s+%#tx", file,
			 (const char *)pc - (const char *)info.dli_fbase);
}

void wrec_frames(struct wrec *w, const char *k, void *const *frames, int n)
{
	bool first = true;

	key(w, k);
	putc_(w, '[');
	for (int i = 0; i < n; i++) {
		char name[512];

		if (watch_frame_ours(frames[i]))
			continue;
		frame_name(frames[i], name, sizeof(name));
		if (!first)
			putc_(w, ',');
		first = false;
		put_string(w, name);
	}
	putc_(w, ']');
}

void wrec_emit(struct wrec *w, int fd)
{
	int saved = errno;
	size_t off = 0;

	w->buf[w->len++] = '}';
	w->buf[w->len++] = '\n';
	while (off < w->len) {
		ssize_t got = write(fd, w->buf + off, w->len - off);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		off += (size_t)got;
	}
	errno = saved;
}
