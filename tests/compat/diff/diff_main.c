// SPDX-License-Identifier: MIT
/*
 * diff_main.c - dropin_diff: the rounds, the threads, the trace and the
 * checks of the whole process (diff.h says what the harness is).
 *
 *   dropin_diff [--seed N] [--threads N] [--rounds N] [--ops N]
 *               [--libs pmem,pmem2,blk] DIR TRACE
 *
 * DIR is an empty scratch directory (the run's files, removed by the
 * caller); TRACE is written at the end: each thread's lines in turn, the
 * main thread's last. Standard output says where each library was loaded
 * from and, last, one summary line with the seed and the number of calls.
 * Exit 0 when every invariant held, 1 when one failed, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpmem.h>
#include <libpmem2.h>
#include <libpmemblk.h>

#include "diff.h"
#include "../../lib/testutil.h"

static const struct diff_lib *const libs[] = {
	&diff_pmem_lib, &diff_pmem2_lib, &diff_blk_lib,
};
#define NLIBS (sizeof(libs) / sizeof(libs[0]))

/* Said on stderr per thread before the rest are only counted. */
#define BAD_SHOWN 10

/* --- helpers for the libraries' files ------------------------------------- */

uint64_t diff_rand(struct diff_thread *t)
{
	return tu_rand(&t->rng);
}

unsigned diff_below(struct diff_thread *t, unsigned n)
{
	return (unsigned)(diff_rand(t) % n);
}

void diff_trace(struct diff_thread *t, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	/* "r<round> " + the line + "\n" */
	if (t->trace_len + (size_t)n + 16 > t->trace_cap) {
		size_t cap = t->trace_cap ? 2 * t->trace_cap : 1 << 16;
		char *p = realloc(t->trace, cap);

		if (!p) {
			fprintf(stderr, "dropin_diff: no memory for the trace\n");
			exit(1);
		}
		t->trace = p;
		t->trace_cap = cap;
	}
	t->trace_len += (size_t)sprintf(t->trace + t->trace_len, "r%u %s\n",
					t->round, line);
}

void diff_bad(struct diff_thread *t, const char *fmt, ...)
{
	va_list ap;

	if (t->bad++ >= BAD_SHOWN)
		return;
	fprintf(stderr, "dropin_diff: thread %u, round %u: ", t->id, t->round);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *diff_errno_name(int err)
{
	const char *name = err ? strerrorname_np(err) : "0";

	return name ? name : "E?";
}

void diff_fill(unsigned char *p, size_t n, uint64_t tag)
{
	uint64_t st = tag * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;

	tu_fill_random(p, n, st ? st : 1);
}

bool diff_same(struct diff_thread *t, const void *p, const void *want,
	       size_t n, const char *what)
{
	size_t at = tu_first_diff(p, want, n);

	if (at == n)
		return true;
	diff_bad(t, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what,
		 at, n, ((const unsigned char *)p)[at],
		 ((const unsigned char *)want)[at]);
	return false;
}

void diff_path(const struct diff_thread *t, char *buf, const char *fmt, ...)
{
	char name[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	snprintf(buf, PATH_MAX, "%s/%s", t->dir, name);
}

/* --- the process ---------------------------------------------------------- */

/* Descriptors the process has open. */
static unsigned open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	if (!d)
		return 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Mappings of files under @dir (deleted ones too). */
static unsigned mappings_under(const char *dir)
{
	FILE *f = fopen("/proc/self/maps", "r");
	size_t len = strlen(dir);
	char line[PATH_MAX + 128];
	unsigned n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		const char *path = strchr(line, '/');

		if (path && !strncmp(path, dir, len) && path[len] == '/')
			n++;
	}
	fclose(f);
	return n;
}

/* Where the library that holds @fn was loaded from. */
static const char *loaded_from(void *fn)
{
	Dl_info info;

	return dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "?";
}

static void *thread_main(void *arg)
{
	struct diff_thread *t = arg;
	const struct diff_run *run = t->run;

	if (t->round == 0)
		for (size_t l = 0; l < NLIBS; l++)
			if ((run->libs & libs[l]->bit) && libs[l]->thread_init(t))
				diff_bad(t, "%s: the thread's objects could not "
					 "be made", libs[l]->name);
	pthread_barrier_wait(&t->run->start);
	for (size_t l = 0; l < NLIBS; l++)
		if (run->libs & libs[l]->bit)
			libs[l]->burst(t);
	for (unsigned i = 0; i < run->ops; i++) {
		const struct diff_lib *lib = libs[diff_below(t, NLIBS)];

		if (run->libs & lib->bit)
			lib->op(t);
	}
	return NULL;
}

static int run_rounds(struct diff_run *run)
{
	struct diff_thread *main_t = &run->t[run->threads];
	pthread_t *th = calloc(run->threads, sizeof(*th));

	if (!th)
		return -1;
	for (unsigned r = 0; r < run->rounds; r++) {
		main_t->round = r;
		for (size_t l = 0; l < NLIBS; l++)
			if ((run->libs & libs[l]->bit) && libs[l]->round_begin &&
			    libs[l]->round_begin(main_t, r)) {
				free(th);
				return -1;
			}
		pthread_barrier_init(&run->start, NULL, run->threads);
		for (unsigned i = 0; i < run->threads; i++) {
			run->t[i].round = r;
			if (pthread_create(&th[i], NULL, thread_main, &run->t[i])) {
				fprintf(stderr, "dropin_diff: pthread_create: %s\n",
					strerror(errno));
				exit(1);
			}
		}
		for (unsigned i = 0; i < run->threads; i++)
			pthread_join(th[i], NULL);
		pthread_barrier_destroy(&run->start);
		for (size_t l = 0; l < NLIBS; l++)
			if ((run->libs & libs[l]->bit) && libs[l]->round_end)
				libs[l]->round_end(main_t, r);
	}
	free(th);
	return 0;
}

static int write_trace(const struct diff_run *run, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "dropin_diff: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i <= run->threads; i++) {
		const struct diff_thread *t = &run->t[i];

		fprintf(f, "== %s %u\n", i < run->threads ? "thread" : "main",
			t->id);
		fwrite(t->trace, 1, t->trace_len, f);
	}
	if (fclose(f)) {
		fprintf(stderr, "dropin_diff: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: dropin_diff [--seed N] [--threads N] "
		"[--rounds N] [--ops N] [--libs pmem,pmem2,blk] DIR TRACE\n");
	return 2;
}

/* A number option's value: decimal, within [lo, hi]. */
static int number(const char *opt, const char *v, unsigned long long lo,
		  unsigned long long hi, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || *out < lo || *out > hi) {
		fprintf(stderr, "dropin_diff: invalid %s '%s': expected %llu "
			"to %llu\n", opt, v, lo, hi);
		return -1;
	}
	return 0;
}

static int parse_libs(const char *v, unsigned *libs_out)
{
	char copy[64], *save = NULL;

	snprintf(copy, sizeof(copy), "%s", v);
	*libs_out = 0;
	for (char *w = strtok_r(copy, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		size_t l;

		for (l = 0; l < NLIBS && strcmp(w, libs[l]->name); l++)
			;
		if (l == NLIBS) {
			fprintf(stderr, "dropin_diff: invalid --libs '%s': "
				"expected pmem, pmem2 and blk, separated by "
				"commas\n", v);
			return -1;
		}
		*libs_out |= libs[l]->bit;
	}
	return *libs_out ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct diff_run run = {
		.seed = 1, .threads = 8, .rounds = 6, .ops = 300,
		.libs = DIFF_LIB_PMEM | DIFF_LIB_PMEM2 | DIFF_LIB_BLK,
	};
	unsigned long calls = 0, bad = 0;
	unsigned fds, maps;
	int i;

	for (i = 1; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		unsigned long long v;

		if (!strcmp(argv[i], "--libs")) {
			if (parse_libs(argv[i + 1], &run.libs))
				return usage();
			continue;
		}
		if (!strcmp(argv[i], "--seed")) {
			if (number(argv[i], argv[i + 1], 0, UINT64_MAX, &v))
				return usage();
			run.seed = v;
		} else if (!strcmp(argv[i], "--threads")) {
			if (number(argv[i], argv[i + 1], 1, 64, &v))
				return usage();
			run.threads = (unsigned)v;
		} else if (!strcmp(argv[i], "--rounds")) {
			if (number(argv[i], argv[i + 1], 1, 10000, &v))
				return usage();
			run.rounds = (unsigned)v;
		} else if (!strcmp(argv[i], "--ops")) {
			if (number(argv[i], argv[i + 1], 0, 1000000, &v))
				return usage();
			run.ops = (unsigned)v;
		} else {
			fprintf(stderr, "dropin_diff: unknown option '%s'\n",
				argv[i]);
			return usage();
		}
	}
	if (argc - i != 2)
		return usage();
	if (strlen(argv[i]) >= sizeof(run.dir)) {
		fprintf(stderr, "dropin_diff: invalid DIR: longer than %zu "
			"bytes\n", sizeof(run.dir) - 1);
		return usage();
	}
	snprintf(run.dir, sizeof(run.dir), "%s", argv[i]);

	printf("libpmem: %s\n", loaded_from((void *)pmem_map_file));
	printf("libpmem2: %s\n", loaded_from((void *)pmem2_map_new));
	printf("libpmemblk: %s\n", loaded_from((void *)pmemblk_create));
	fflush(stdout);

	fds = open_fds();
	maps = mappings_under(run.dir);
	run.t = calloc(run.threads + 1, sizeof(*run.t));
	if (!run.t)
		return 1;
	for (unsigned k = 0; k <= run.threads; k++) {
		struct diff_thread *t = &run.t[k];

		t->run = &run;
		t->id = k;
		/* Each thread's stream from the seed alone (never 0). */
		t->rng = (run.seed + 1) * 0x9e3779b97f4a7c15ull ^
			 (k + 1) * 0xbf58476d1ce4e5b9ull;
		if (!t->rng)
			t->rng = 1;
		snprintf(t->dir, sizeof(t->dir), "%s/t%u", run.dir, k);
		if (mkdir(t->dir, 0700)) {
			fprintf(stderr, "dropin_diff: mkdir %s: %s\n", t->dir,
				strerror(errno));
			return 1;
		}
	}
	for (size_t l = 0; l < NLIBS; l++)
		if ((run.libs & libs[l]->bit) && libs[l]->run_init(&run))
			return 1;
	if (run_rounds(&run))
		return 1;
	for (unsigned k = 0; k < run.threads; k++)
		for (size_t l = 0; l < NLIBS; l++)
			if (run.libs & libs[l]->bit)
				libs[l]->thread_fini(&run.t[k]);
	for (size_t l = 0; l < NLIBS; l++)
		if (run.libs & libs[l]->bit)
			libs[l]->run_fini(&run.t[run.threads]);

	/* Everything is closed and unmapped: so must the process be. */
	if (open_fds() != fds)
		diff_bad(&run.t[run.threads], "%u descriptors open at the start, "
			 "%u at the end", fds, open_fds());
	if (mappings_under(run.dir) != maps)
		diff_bad(&run.t[run.threads], "%u mappings of the run's files "
			 "left at the end", mappings_under(run.dir) - maps);

	for (unsigned k = 0; k <= run.threads; k++) {
		if (k < run.threads)
			calls += run.t[k].calls;
		bad += run.t[k].bad;
	}
	if (write_trace(&run, argv[i + 1]))
		return 1;
	printf("dropin_diff: seed %llu, %u threads, %u rounds of %u operations "
	       "per thread: %lu library calls by the threads (%lu more to "
	       "check the shared objects), %lu invariant failures\n",
	       (unsigned long long)run.seed, run.threads, run.rounds, run.ops,
	       calls, run.t[run.threads].calls, bad);
	for (unsigned k = 0; k <= run.threads; k++)
		free(run.t[k].trace);
	free(run.t);
	return bad ? 1 : 0;
}
