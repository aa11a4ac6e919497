// SPDX-License-Identifier: MIT
/*
 * diff_pmem.c - libpmem's part of dropin_diff (diff.h).
 *
 * Each thread has three files of its own and a temporary file (mapped
 * with PMEM_FILE_TMPFILE, gone at its unmap), each with a model of its
 * bytes. Its calls: pmem_map_file() with every flag and the refusals
 * PMDK defines (a missing file, EXCL on an existing one, a length
 * without CREATE or none with it, unknown flags), growing and shrinking
 * a file through CREATE, pmem_unmap(), every copy, move and fill
 * (persist, nodrain + drain, each PMEM_F_MEM_* flag set), stores made
 * durable by pmem_persist(), flush + drain, pmem_msync() and the deep
 * calls, pmem_is_pmem(). Every write is read back through the mapping,
 * and a whole mapping is compared with its model when it is made and
 * before it goes, so a store that lands in another thread's file, or is
 * lost, is found.
 *
 * One file is mapped once for all threads (the shared mapping); each
 * thread writes its own stripe of it with the same calls, and the main
 * thread compares every stripe at the end of each round.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpmem.h>

#include "diff.h"

#define PMEM_FILES 3
#define TMPFILE_SLOT PMEM_FILES		/* the PMEM_FILE_TMPFILE mapping */
#define STRIPE (64 << 10)		/* each thread's part of the shared map */
#define WRITE_MAX (64 << 10)

struct pfile {
	char path[PATH_MAX];
	bool exists;
	size_t size;		/* the file's length */
	unsigned char *model;	/* its bytes */
	char *addr;		/* mapped (the whole file), or NULL */
	size_t len;
};

struct diff_pmem {
	struct pfile f[PMEM_FILES + 1];
	unsigned char *stripe;	/* the model of its stripe of the shared map */
};

struct diff_pmem_shared {
	char path[PATH_MAX];
	char *addr;
	size_t len;
};

/* Sizes a created file gets: whole pages, and lengths that are not. */
static const size_t sizes[] = {
	4096, 8192, 65536, 262144, 4097, 12345, 200000,
};

/* Make @f's model @size bytes long, new bytes zero. */
static void model_resize(struct diff_thread *t, struct pfile *f, size_t size)
{
	unsigned char *m = realloc(f->model, size ? size : 1);

	if (!m) {
		diff_bad(t, "no memory for a model of %zu bytes", size);
		exit(1);
	}
	if (size > f->size)
		memset(m + f->size, 0, size - f->size);
	f->model = m;
	f->size = size;
}

/* The whole mapping of @f against its model. */
static void check_mapping(struct diff_thread *t, struct pfile *f, unsigned k)
{
	char what[64];

	snprintf(what, sizeof(what), "libpmem file %u", k);
	(void)diff_same(t, f->addr, f->model, f->len, what);
}

/* --- pmem_map_file and pmem_unmap ----------------------------------------- */

static void trace_map(struct diff_thread *t, const char *what, unsigned k,
		      size_t len, int flags, void *p, size_t mapped,
		      int is_pmem, int err)
{
	if (p)
		diff_trace(t, "pmem map %s %u len %zu flags %#x -> %zu is_pmem %d",
			   what, k, len, flags, mapped, is_pmem);
	else
		diff_trace(t, "pmem map %s %u len %zu flags %#x -> NULL %s", what,
			   k, len, flags, diff_errno_name(err));
}

/* pmem_map_file() of slot @k, one of the ways its state allows. */
static void op_map(struct diff_thread *t, unsigned k)
{
	struct pfile *f = &t->pmem->f[k];
	size_t len = sizes[diff_below(t, sizeof(sizes) / sizeof(sizes[0]))];
	size_t mapped = 0;
	int is_pmem = -1, flags, err;
	const char *what;
	unsigned how = diff_below(t, 8);
	char *p;

	if (f->addr)
		return;
	if (k == TMPFILE_SLOT) {
		/* A file with no name in the directory, gone at unmap. */
		what = how < 6 ? "tmpfile" : "tmpfile-nocreate";
		flags = PMEM_FILE_TMPFILE |
			(how < 6 ? PMEM_FILE_CREATE : 0) |
			(how & 1 ? PMEM_FILE_EXCL : 0);
		len = how < 6 ? len : 0;
		errno = 0;
		p = pmem_map_file(t->dir, len, flags, 0600, &mapped, &is_pmem);
		err = errno;
		t->calls++;
		trace_map(t, what, k, len, flags, p, mapped, 0, err);
		if (p) {
			f->size = 0;
			model_resize(t, f, len);
			f->addr = p;
			f->len = mapped;
			check_mapping(t, f, k);
		}
		return;
	}
	if (!f->exists) {
		switch (how) {
		case 0: /* no CREATE: ENOENT */
			what = "missing", flags = 0, len = 0;
			break;
		case 1: /* CREATE with no length: EINVAL */
			what = "create-len0", flags = PMEM_FILE_CREATE, len = 0;
			break;
		default:
			what = "create";
			flags = PMEM_FILE_CREATE | (how & 2 ? PMEM_FILE_EXCL : 0) |
				(how & 4 ? PMEM_FILE_SPARSE : 0);
			break;
		}
	} else {
		switch (how) {
		case 0: /* EXCL on an existing file: EEXIST, file untouched */
			what = "excl", flags = PMEM_FILE_CREATE | PMEM_FILE_EXCL;
			break;
		case 1: /* a length without CREATE: EINVAL */
			what = "len-nocreate", flags = 0;
			break;
		case 2: /* an unknown flag: EINVAL */
			what = "badflag", flags = 1 << 6, len = 0;
			break;
		case 3: /* CREATE again: the file takes the new length */
			what = "resize", flags = PMEM_FILE_CREATE;
			break;
		default: /* the whole file as it is */
			what = "open", flags = 0, len = 0;
			break;
		}
	}
	errno = 0;
	p = pmem_map_file(f->path, len, flags, 0600, &mapped, &is_pmem);
	err = errno;
	t->calls++;
	trace_map(t, what, k, len, flags, p, mapped, is_pmem, err);
	if (!p)
		return;
	if (flags & PMEM_FILE_CREATE) {
		if (!f->exists)
			f->size = 0;
		model_resize(t, f, len);
		f->exists = true;
	}
	f->addr = p;
	f->len = mapped;
	if (mapped != f->size)
		diff_bad(t, "libpmem file %u: %zu bytes mapped, the file has %zu",
			 k, mapped, f->size);
	else
		check_mapping(t, f, k);
}

static void op_unmap(struct diff_thread *t, unsigned k)
{
	struct pfile *f = &t->pmem->f[k];
	int ret, err;

	if (!f->addr)
		return;
	check_mapping(t, f, k);
	errno = 0;
	ret = pmem_unmap(f->addr, f->len);
	err = errno;
	t->calls++;
	diff_trace(t, "pmem unmap %u -> %d %s", k, ret,
		   diff_errno_name(ret ? err : 0));
	if (ret == 0)
		f->addr = NULL;
	if (k == TMPFILE_SLOT && ret == 0)
		f->size = 0;
}

/* --- writes --------------------------------------------------------------- */

/*
 * One write into [@base + @off, +@len) (@model mirrors @base), made
 * durable one of the ways libpmem offers; traced as @name. The range is
 * read back.
 */
static void write_range(struct diff_thread *t, const char *name, char *base,
			unsigned char *model, size_t size)
{
	static const unsigned flag_bits[] = {
		PMEM_F_MEM_NODRAIN, PMEM_F_MEM_NONTEMPORAL,
		PMEM_F_MEM_TEMPORAL, PMEM_F_MEM_WC, PMEM_F_MEM_WB,
		PMEM_F_MEM_NOFLUSH,
	};
	size_t off = diff_rand(t) % size;
	size_t len = 1 + diff_rand(t) % (size - off < WRITE_MAX ?
					 size - off : WRITE_MAX);
	unsigned how = diff_below(t, 13), flags = 0;
	unsigned char *src = malloc(len);
	int c = (int)diff_below(t, 256), ret = 0;
	void *r = base + off;
	size_t from = diff_rand(t) % (size - len + 1);

	if (!src)
		exit(1);
	diff_fill(src, len, diff_rand(t));
	for (unsigned b = 0; b < sizeof(flag_bits) / sizeof(flag_bits[0]); b++)
		if (diff_below(t, 3) == 0)
			flags |= flag_bits[b];
	switch (how) {
	case 0:
		r = pmem_memcpy_persist(base + off, src, len);
		break;
	case 1:
		r = pmem_memcpy_nodrain(base + off, src, len);
		pmem_drain();
		t->calls++;
		break;
	case 2: /* within the mapping, overlapping or not */
		r = pmem_memmove_persist(base + off, base + from, len);
		memmove(model + off, model + from, len);
		break;
	case 3:
		r = pmem_memmove_nodrain(base + off, base + from, len);
		memmove(model + off, model + from, len);
		pmem_drain();
		t->calls++;
		break;
	case 4:
		r = pmem_memset_persist(base + off, c, len);
		memset(model + off, c, len);
		break;
	case 5:
		r = pmem_memset_nodrain(base + off, c, len);
		memset(model + off, c, len);
		pmem_drain();
		t->calls++;
		break;
	case 6:
		r = pmem_memcpy(base + off, src, len, flags);
		break;
	case 7:
		r = pmem_memmove(base + off, base + from, len, flags);
		memmove(model + off, model + from, len);
		break;
	case 8:
		r = pmem_memset(base + off, c, len, flags);
		memset(model + off, c, len);
		break;
	case 9:
		memcpy(base + off, src, len);
		pmem_persist(base + off, len);
		break;
	case 10:
		memcpy(base + off, src, len);
		pmem_flush(base + off, len);
		pmem_drain();
		t->calls++;
		break;
	case 11:
		memcpy(base + off, src, len);
		errno = 0;
		ret = pmem_msync(base + off, len);
		break;
	default:
		memcpy(base + off, src, len);
		errno = 0;
		ret = pmem_deep_persist(base + off, len);
		break;
	}
	t->calls++;
	/* The cases that write src; the others changed the model above. */
	if (how <= 1 || how == 6 || how >= 9)
		memcpy(model + off, src, len);
	diff_trace(t, "pmem write %s how %u off %zu len %zu flags %#x -> %s %d",
		   name, how, off, len, flags, r == base + off ? "dst" : "other",
		   ret);
	(void)diff_same(t, base + off, model + off, len, name);
	free(src);
}

static void op_write(struct diff_thread *t, unsigned k)
{
	struct pfile *f = &t->pmem->f[k];
	char name[32];

	if (!f->addr || !f->len)
		return;
	snprintf(name, sizeof(name), "file-%u", k);
	write_range(t, name, f->addr, f->model, f->len);
}

static void op_is_pmem(struct diff_thread *t, unsigned k)
{
	struct pfile *f = &t->pmem->f[k];
	size_t off, len;

	if (!f->addr || !f->len)
		return;
	off = diff_rand(t) % f->len;
	len = 1 + diff_rand(t) % (f->len - off);
	diff_trace(t, "pmem is_pmem %u off %zu len %zu -> %d", k, off, len,
		   pmem_is_pmem(f->addr + off, len));
	t->calls++;
}

/* --- the harness's calls -------------------------------------------------- */

static int pmem_run_init(struct diff_run *run)
{
	struct diff_pmem_shared *s = calloc(1, sizeof(*s));
	size_t mapped;
	int is_pmem;

	if (!s)
		return -1;
	snprintf(s->path, sizeof(s->path), "%s/pmem-shared", run->dir);
	s->len = (size_t)run->threads * STRIPE;
	s->addr = pmem_map_file(s->path, s->len, PMEM_FILE_CREATE |
				PMEM_FILE_EXCL, 0600, &mapped, &is_pmem);
	if (!s->addr || mapped != s->len) {
		fprintf(stderr, "dropin_diff: pmem_map_file %s: %s\n", s->path,
			pmem_errormsg());
		return -1;
	}
	run->pmem = s;
	return 0;
}

static int pmem_thread_init(struct diff_thread *t)
{
	t->pmem = calloc(1, sizeof(*t->pmem));
	if (!t->pmem)
		return -1;
	for (unsigned k = 0; k < PMEM_FILES; k++)
		diff_path(t, t->pmem->f[k].path, "pmem-%u", k);
	t->pmem->stripe = calloc(1, STRIPE);
	return t->pmem->stripe ? 0 : -1;
}

static void write_stripe(struct diff_thread *t)
{
	char *base = t->run->pmem->addr + (size_t)t->id * STRIPE;

	write_range(t, "shared", base, t->pmem->stripe, STRIPE);
}

static void pmem_burst(struct diff_thread *t)
{
	if (!t->pmem)
		return;
	write_stripe(t);
	write_stripe(t);
}

static void pmem_op(struct diff_thread *t)
{
	unsigned k = diff_below(t, PMEM_FILES + 1);

	if (!t->pmem)
		return;
	switch (diff_below(t, 10)) {
	case 0:
	case 1:
		op_map(t, k);
		break;
	case 2:
		op_unmap(t, k);
		break;
	case 3:
		op_is_pmem(t, k);
		break;
	case 4:
		write_stripe(t);
		break;
	case 5:
		/* A file not mapped goes (not a library call). */
		if (k < PMEM_FILES && t->pmem->f[k].exists &&
		    !t->pmem->f[k].addr) {
			unlink(t->pmem->f[k].path);
			t->pmem->f[k].exists = false;
			diff_trace(t, "pmem unlink %u", k);
		}
		break;
	default:
		op_write(t, k);
		break;
	}
}

static void pmem_round_end(struct diff_thread *main_t, unsigned round)
{
	const struct diff_run *run = main_t->run;

	(void)round;
	for (unsigned i = 0; i < run->threads; i++) {
		char what[64];

		if (!run->t[i].pmem)
			continue;
		snprintf(what, sizeof(what), "shared libpmem stripe of thread %u",
			 i);
		(void)diff_same(main_t, run->pmem->addr + (size_t)i * STRIPE,
				run->t[i].pmem->stripe, STRIPE, what);
	}
	diff_trace(main_t, "pmem shared stripes compared");
}

static void pmem_thread_fini(struct diff_thread *t)
{
	if (!t->pmem)
		return;
	for (unsigned k = 0; k <= PMEM_FILES; k++) {
		struct pfile *f = &t->pmem->f[k];

		op_unmap(t, k);
		if (f->addr)
			diff_bad(t, "libpmem file %u cannot be unmapped", k);
		if (f->exists)
			unlink(f->path);
		free(f->model);
	}
	free(t->pmem->stripe);
	free(t->pmem);
	t->pmem = NULL;
}

static void pmem_run_fini(struct diff_thread *main_t)
{
	struct diff_pmem_shared *s = main_t->run->pmem;

	if (pmem_unmap(s->addr, s->len))
		diff_bad(main_t, "the shared libpmem mapping cannot be unmapped");
	unlink(s->path);
	free(s);
	main_t->run->pmem = NULL;
}

const struct diff_lib diff_pmem_lib = {
	.name = "pmem",
	.bit = DIFF_LIB_PMEM,
	.run_init = pmem_run_init,
	.thread_init = pmem_thread_init,
	.burst = pmem_burst,
	.op = pmem_op,
	.round_end = pmem_round_end,
	.thread_fini = pmem_thread_fini,
	.run_fini = pmem_run_fini,
};
