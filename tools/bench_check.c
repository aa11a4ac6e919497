// SPDX-License-Identifier: MIT
/*
 * bench_check.c - `ntmem bench check`: what `ntmem check` costs real,
 * unmodified programs. Each workload runs twice per run, on fresh files
 * each time:
 *
 *   plain     on ntmem's libpmem.so.1 drop-in ($libdir/ntmem), the
 *             library the checking library is built from
 *   checked   under `ntmem check --json` (this same executable), which
 *             preloads the checking library
 *
 * The workloads: Debian's fio, its libpmem engine, sequential and random
 * writes (fio-write, fio-randwrite); and ntmem-bench-pmemobj
 * (bench_pmemobj.c), a program of Debian's libpmemobj, whose libpmem.so.1
 * is libpmemobj's dependency: small transactional updates (pmemobj-tx)
 * and transactional allocations and frees (pmemobj-alloc). Each program
 * times its own work (fio's write IOPS, the other's operations per
 * second): the start of the program, the loading of the libraries and
 * the report at exit are not in the figures. The bench reports the median
 * of the runs for each, their ratio, and how many bugs the checked runs
 * reported: these programs are correct, so one bug fails the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ntmem.h>

#include "bench.h"
#include "commands.h"
#include "parse.h"

extern char **environ;

#define CMD "bench check"

/* --workload: which of the workloads below run. */
enum selection { SEL_ALL, SEL_FIO, SEL_PMEMOBJ, SEL_PMEMOBJ_TX, SEL_PMEMOBJ_ALLOC };
static const char *const selection_names[] = {
	"all", "fio", "pmemobj", "pmemobj-tx", "pmemobj-alloc", NULL,
};

struct options {
	uint64_t size, bs, ops;
	int runs, workload;
	const char *plain, *dir;
	bool json, csv;
};

enum cfg { C_PLAIN, C_CHECKED, NCFG };
static const char *const cfg_names[] = { "plain", "checked" };

enum program { P_FIO, P_PMEMOBJ, NPROG };
struct workload {
	const char *name;	/* the row's name */
	enum program prog;
	const char *arg;	/* fio's --rw, or ntmem-bench-pmemobj's WORKLOAD */
	const char *slowdown;	/* its meta line's key */
};
enum { NWL = 4 };
static const struct workload workloads[NWL] = {
	{ "fio-write", P_FIO, "write", "fio_write_slowdown" },
	{ "fio-randwrite", P_FIO, "randwrite", "fio_randwrite_slowdown" },
	{ "pmemobj-tx", P_PMEMOBJ, "tx", "pmemobj_tx_slowdown" },
	{ "pmemobj-alloc", P_PMEMOBJ, "alloc", "pmemobj_alloc_slowdown" },
};

/* ntmem-bench-pmemobj's pool (its POOL_SIZE): what a run writes. */
#define PMEMOBJ_POOL_SIZE (16ull << 20)
#define PMEMOBJ_PROGRAM "ntmem-bench-pmemobj"

struct bench {
	char fio[PATH_MAX], pmemobj[PATH_MAX + 32], self[PATH_MAX];
	char checkdir[PATH_MAX], plain[PATH_MAX];
	char dir[PATH_MAX];		/* the run's fresh directory */
	char file[PATH_MAX + 16], out[PATH_MAX + 16], err[PATH_MAX + 16];
	char report[PATH_MAX + 16], pool[PATH_MAX + 16];
	bool run_wl[NWL];	/* selected and available */
	bool dax;		/* dir is on a DAX file system (MAP_SYNC) */
	char **env[NCFG];
	char *ld_library_path;	/* the plain rows' LD_LIBRARY_PATH=... */
	char *bug_report;	/* the first checked run's report with bugs */
	int bug_wl;		/* its workload */
};

/* --- ending early -------------------------------------------------------- */

static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NSTOP (sizeof(stop_signals) / sizeof(*stop_signals))
static volatile sig_atomic_t stop_sig, running;

/*
 * Ended by a signal: pass it to the fio (or ntmem check) that runs, unless
 * the terminal already sent it to the whole process group; the run's
 * directory is removed before this process dies of the same signal.
 */
static void stop(int sig, siginfo_t *si, void *uc)
{
	pid_t pid = running;

	(void)uc;
	stop_sig = sig;
	if (pid > 0 && !(si->si_code == SI_KERNEL && getpgid(pid) == getpgrp()))
		kill(pid, sig);
}

static void stop_handlers(void)
{
	struct sigaction sa = { .sa_sigaction = stop, .sa_flags = SA_SIGINFO };
	struct sigaction old;

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSTOP; i++) {
		sigaction(stop_signals[i], NULL, &old);
		/* a run started ignoring it (nohup) keeps ignoring it */
		if (old.sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &sa, NULL);
	}
}

static void die_of_stop_signal(void)
{
	signal(stop_sig, SIG_DFL);
	raise(stop_sig);
}

/* --- running programs ---------------------------------------------------- */

/*
 * Run @argv (a path, or a name looked up in PATH) with @env, stdin from
 * /dev/null, stdout into @out and stderr into @err. Its wait status, or
 * -errno when it could not be started.
 */
static int spawn_wait(char *const argv[], char **env, const char *out,
		      const char *err)
{
	posix_spawn_file_actions_t fa;
	int ret, status;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC,
					 0600);
	posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_TRUNC,
					 0600);
	ret = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (ret)
		return -ret;
	running = pid;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			running = 0;
			return -errno;
		}
	running = 0;
	return status;
}

/* The whole of @path, NUL-terminated (malloc'ed), or NULL. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			char *b = realloc(buf, cap = cap ? cap * 2 : 65536);

			if (!b) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = b;
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

/* The last lines of @path on stderr, "# "-prefixed: why a run failed. */
static void show_tail(const char *path)
{
	char *text = slurp(path), *start;
	int lines = 0;

	if (!text)
		return;
	start = text + strlen(text);
	while (start > text && lines <= 8)
		if (*--start == '\n')
			lines++;
	for (char *line = strtok(start, "\n"); line; line = strtok(NULL, "\n"))
		fprintf(stderr, "#   %s\n", line);
	free(text);
}

/* The number after "@key" and a colon in @text, from @from on; NAN. */
static double number_after(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	char *end;
	double v;

	if (!p)
		return NAN;
	p += strlen(key);
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	if (*p++ != ':')
		return NAN;
	v = strtod(p, &end);
	return end == p ? NAN : v;
}

/*
 * fio's JSON (--output-format=json): the first job's "write" object, whose
 * first "iops" and "bw_bytes" keys are its totals (the latency objects
 * nested in it come after them). "rw": "write" in the options is a string,
 * never followed by '{'.
 */
static int fio_write_stats(const char *json, double *iops, double *bw)
{
	const char *p = json;

	while ((p = strstr(p, "\"write\""))) {
		const char *q = p + 7;

		while (*q == ' ' || *q == '\n' || *q == '\t')
			q++;
		if (*q == ':') {
			q++;
			while (*q == ' ' || *q == '\n' || *q == '\t')
				q++;
			if (*q == '{')
				break;
		}
		p += 7;
	}
	if (!p)
		return -1;
	*iops = number_after(p, "\"iops\"");
	*bw = number_after(p, "\"bw_bytes\"");
	return isnan(*iops) || *iops <= 0 ? -1 : 0;
}

/* Where an executable @name is in PATH, into @buf; 0 or -1. */
static int find_in_path(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		size_t n = strcspn(p, ":");

		snprintf(buf, len, "%.*s/%s", (int)n, n ? p : ".", name);
		if (access(buf, X_OK) == 0)
			return 0;
		p += n;
		if (!*p)
			return -1;
	}
}

/*
 * This environment with each "NAME=VALUE" of @set replacing NAME's value
 * and each bare "NAME" of @set removed; the entries of @set are not
 * copied. NULL when out of memory.
 */
static char **env_with(char *const *set, size_t nset)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + nset + 1, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;

		for (size_t s = 0; s < nset; s++) {
			size_t name = strcspn(set[s], "=");

			if (!strncmp(environ[i], set[s], name) &&
			    environ[i][name] == '=')
				replaced = true;
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t s = 0; s < nset; s++)
		if (strchr(set[s], '='))
			env[k++] = set[s];
	return env;
}

/* --- setting up ---------------------------------------------------------- */

static bool has_libpmem(const char *dir)
{
	char path[PATH_MAX + 16];

	snprintf(path, sizeof(path), "%s/libpmem.so.1", dir);
	return access(path, F_OK) == 0;
}

/*
 * The plain libpmem.so.1's directory: --plain-libdir, else the checking
 * directory's parent (installed: $libdir/ntmem/check and $libdir/ntmem),
 * else a build tree's compat/libpmem (its checking directory is
 * BUILDDIR/src/record/check).
 */
static int find_plain(struct bench *b, const struct options *o)
{
	char cand[2][PATH_MAX + 32], *real;

	if (o->plain) {
		real = realpath(o->plain, NULL);
		if (!real || !has_libpmem(real)) {
			free(real);
			return parse_bad_arg(CMD, "--plain-libdir", o->plain,
					     "a directory with ntmem's libpmem.so.1");
		}
		snprintf(b->plain, sizeof(b->plain), "%s", real);
		free(real);
		return 0;
	}
	snprintf(cand[0], sizeof(cand[0]), "%s/..", b->checkdir);
	snprintf(cand[1], sizeof(cand[1]), "%s/../../../compat/libpmem", b->checkdir);
	for (int i = 0; i < 2; i++) {
		real = realpath(cand[i], NULL);
		if (real && has_libpmem(real) && strlen(real) < sizeof(b->plain)) {
			snprintf(b->plain, sizeof(b->plain), "%s", real);
			free(real);
			return 0;
		}
		free(real);
	}
	fprintf(stderr, "ntmem " CMD ": no libpmem.so.1 in %s or %s: give "
		"--plain-libdir DIR (in a build tree: BUILDDIR/compat/libpmem)\n",
		cand[0], cand[1]);
	return 1;
}

/*
 * A workload's program is missing: with --workload naming it, an error;
 * under the default (all), a note, and its rows are left out.
 */
__attribute__((format(printf, 2, 3)))
static void say_missing(bool required, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "ntmem " CMD ": %s", required ? "" : "note: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", required ? "" : "; its rows are left out");
}

/* Find fio and check that it has the libpmem engine. 0 or 1. */
static int find_fio(struct bench *b, bool required)
{
	char *argv[] = { b->fio, "--enghelp", NULL }, *text;
	bool found = false;
	int st;

	if (find_in_path("fio", b->fio, sizeof(b->fio))) {
		say_missing(required, "fio not found in PATH; it measures fio's "
			    "libpmem engine (Debian: apt-get install fio)");
		return 1;
	}
	st = spawn_wait(argv, b->env[C_PLAIN], b->out, b->err);
	text = st == 0 ? slurp(b->out) : NULL;
	for (char *line = text ? strtok(text, "\n") : NULL; line;
	     line = strtok(NULL, "\n"))
		if (!strcmp(line + strspn(line, " \t"), "libpmem"))
			found = true;
	free(text);
	if (!found) {
		say_missing(required, "%s has no libpmem engine (fio --enghelp%s); "
			    "Debian's fio has one", b->fio,
			    st ? " failed" : " does not list it");
		if (st && required)
			show_tail(b->err);
		return 1;
	}
	return 0;
}

/*
 * Find ntmem-bench-pmemobj: beside this executable (a build tree's
 * tools/), else where it is installed. 0 or 1.
 */
static int find_pmemobj(struct bench *b, bool required)
{
	char self_dir[PATH_MAX];
	char *slash;

	snprintf(self_dir, sizeof(self_dir), "%s", b->self);
	slash = strrchr(self_dir, '/');
	if (slash)
		*slash = '\0';
	snprintf(b->pmemobj, sizeof(b->pmemobj), "%s/" PMEMOBJ_PROGRAM, self_dir);
	if (access(b->pmemobj, X_OK) == 0)
		return 0;
	snprintf(b->pmemobj, sizeof(b->pmemobj), "%s/" PMEMOBJ_PROGRAM,
		 NTMEM_BENCH_LIBEXECDIR);
	if (access(b->pmemobj, X_OK) == 0)
		return 0;
	say_missing(required, PMEMOBJ_PROGRAM " not found in %s or %s: ntmem was "
		    "built without Debian's libpmemobj-dev", self_dir,
		    NTMEM_BENCH_LIBEXECDIR);
	b->pmemobj[0] = '\0';
	return 1;
}

/* Is @wl one --workload @sel runs? */
static bool selected(int sel, int wl)
{
	switch (sel) {
	case SEL_FIO:
		return workloads[wl].prog == P_FIO;
	case SEL_PMEMOBJ:
		return workloads[wl].prog == P_PMEMOBJ;
	case SEL_PMEMOBJ_TX:
		return !strcmp(workloads[wl].name, "pmemobj-tx");
	case SEL_PMEMOBJ_ALLOC:
		return !strcmp(workloads[wl].name, "pmemobj-alloc");
	default:
		return true;
	}
}

/*
 * The workloads that run: those --workload selects whose programs are
 * here. A program --workload names that is missing is an error; under
 * the default, at least one must be here. 0 or 1.
 */
static int find_programs(struct bench *b, const struct options *o)
{
	bool required = o->workload != SEL_ALL, any = false;
	bool want[NPROG] = { false }, have[NPROG] = { false };

	for (int w = 0; w < NWL; w++)
		if (selected(o->workload, w))
			want[workloads[w].prog] = true;
	if (want[P_FIO])
		have[P_FIO] = !find_fio(b, required);
	if (want[P_PMEMOBJ])
		have[P_PMEMOBJ] = !find_pmemobj(b, required);
	for (int p = 0; p < NPROG; p++)
		if (want[p] && !have[p] && required)
			return 1;
	for (int w = 0; w < NWL; w++) {
		b->run_wl[w] = selected(o->workload, w) && have[workloads[w].prog];
		any |= b->run_wl[w];
	}
	if (!any) {
		fprintf(stderr, "ntmem " CMD ": neither fio nor " PMEMOBJ_PROGRAM
			" is here: nothing to measure\n");
		return 1;
	}
	return 0;
}

/*
 * Is @dir on a DAX file system? A MAP_SYNC mapping of a file there is
 * accepted only then, which is how libpmem and libpmemobj decide that a
 * file is pmem without PMEM_IS_PMEM_FORCE.
 */
static bool dir_is_dax(const char *dir)
{
	char path[PATH_MAX + 16];
	bool dax = false;
	void *p;
	int fd;

	snprintf(path, sizeof(path), "%s/dax-probe", dir);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return false;
	if (ftruncate(fd, 4096) == 0) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_SHARED_VALIDATE | MAP_SYNC, fd, 0);
		if (p != MAP_FAILED) {
			dax = true;
			munmap(p, 4096);
		}
	}
	close(fd);
	unlink(path);
	return dax;
}

static void teardown(struct bench *b)
{
	if (b->dir[0]) {
		unlink(b->file);
		unlink(b->out);
		unlink(b->err);
		unlink(b->report);
		unlink(b->pool);
		rmdir(b->dir);
	}
	for (int c = 0; c < NCFG; c++)
		free(b->env[c]);
	free(b->ld_library_path);
	free(b->bug_report);
}

static int setup(struct bench *b, const struct options *o)
{
	char tmpl[PATH_MAX];
	const char *old = getenv("LD_LIBRARY_PATH");
	ssize_t n;
	int ret;

	n = readlink("/proc/self/exe", b->self, sizeof(b->self) - 1);
	if (n < 0) {
		fprintf(stderr, "ntmem " CMD ": /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	b->self[n] = '\0';
	if (check_libdir(CMD, b->checkdir, sizeof(b->checkdir)))
		return 1;
	ret = find_plain(b, o);
	if (ret)
		return ret;
	snprintf(tmpl, sizeof(tmpl), "%s/ntmem-bench-check-XXXXXX", o->dir);
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "ntmem " CMD ": cannot create a directory in %s: %s\n",
			o->dir, strerror(errno));
		return 1;
	}
	snprintf(b->dir, sizeof(b->dir), "%s", tmpl);
	snprintf(b->file, sizeof(b->file), "%s/file", b->dir);
	snprintf(b->out, sizeof(b->out), "%s/out", b->dir);
	snprintf(b->err, sizeof(b->err), "%s/err", b->dir);
	snprintf(b->report, sizeof(b->report), "%s/report", b->dir);
	snprintf(b->pool, sizeof(b->pool), "%s/bench.pmem", b->dir);
	b->dax = dir_is_dax(b->dir);
	/*
	 * Plain: ntmem's libpmem.so.1 first in the search path. Checked:
	 * ntmem check puts the checking directory first itself. Both: the
	 * files are pmem, and the library announces itself on stderr. On
	 * a DAX file system the libraries see that themselves; elsewhere
	 * (a tmpfs: fio's engine refuses a file that is not pmem)
	 * PMEM_IS_PMEM_FORCE=1 says so.
	 */
	if (asprintf(&b->ld_library_path, "LD_LIBRARY_PATH=%s%s%s", b->plain,
		     old && *old ? ":" : "", old && *old ? old : "") < 0) {
		b->ld_library_path = NULL;
		fprintf(stderr, "ntmem " CMD ": out of memory\n");
		return 1;
	}
	{
		char *set[] = {
			b->dax ? "PMEM_IS_PMEM_FORCE" : "PMEM_IS_PMEM_FORCE=1",
			"NTMEM_VERBOSE=1", b->ld_library_path,
		};

		b->env[C_PLAIN] = env_with(set, 3);
		b->env[C_CHECKED] = env_with(set, 2);
	}
	if (!b->env[C_PLAIN] || !b->env[C_CHECKED]) {
		fprintf(stderr, "ntmem " CMD ": out of memory\n");
		return 1;
	}
	return find_programs(b, o);
}

/* --- one run ------------------------------------------------------------- */

/* The number after "@key " in @text (ntmem-bench-pmemobj's line); NAN. */
static double word_after(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	char *end;
	double v;

	if (!p)
		return NAN;
	p += strlen(key);
	v = strtod(p, &end);
	return end == p ? NAN : v;
}

/*
 * Workload @w's program, with its arguments, into @argv (NULL-terminated,
 * at most 16 entries); the strings it points to are in @buf.
 */
struct prog_args {
	char name[32], filename[PATH_MAX + 32], rw[32], bs[48], size[48];
	char ops[32];
};

static void program_argv(struct bench *b, const struct options *o, int w,
			 struct prog_args *buf, char **argv)
{
	const struct workload *wl = &workloads[w];
	int n = 0;

	if (wl->prog == P_PMEMOBJ) {
		snprintf(buf->ops, sizeof(buf->ops), "%llu", (unsigned long long)o->ops);
		argv[n++] = b->pmemobj;
		argv[n++] = (char *)wl->arg;
		argv[n++] = b->dir;
		argv[n++] = buf->ops;
		argv[n] = NULL;
		return;
	}
	snprintf(buf->name, sizeof(buf->name), "--name=%s", wl->arg);
	snprintf(buf->filename, sizeof(buf->filename), "--filename=%s", b->file);
	snprintf(buf->rw, sizeof(buf->rw), "--rw=%s", wl->arg);
	snprintf(buf->bs, sizeof(buf->bs), "--bs=%llu", (unsigned long long)o->bs);
	snprintf(buf->size, sizeof(buf->size), "--size=%llu",
		 (unsigned long long)o->size);
	argv[n++] = b->fio;
	argv[n++] = buf->name;
	argv[n++] = buf->filename;
	argv[n++] = "--ioengine=libpmem";
	argv[n++] = "--thread";
	argv[n++] = "--numjobs=1";
	argv[n++] = buf->rw;
	argv[n++] = buf->bs;
	argv[n++] = buf->size;
	argv[n++] = "--direct=1";
	argv[n++] = "--sync=1";
	argv[n++] = "--output-format=json";
	argv[n] = NULL;
}

/*
 * Workload @w, plain or checked, on fresh files: its operations per
 * second (fio's write IOPS), bytes/s (fio; NAN otherwise) and (checked)
 * the number of bugs reported; the first report with bugs is kept in
 * @b->bug_report. 0 or 1 (said why).
 */
static int run_once(struct bench *b, const struct options *o, int w,
		    enum cfg c, double *ops, double *bw, double *bugs)
{
	const struct workload *wl = &workloads[w];
	struct prog_args buf;
	char report[PATH_MAX + 32];
	char *prog[17], *checked[5 + 17] = {
		b->self, "check", "--json", report, "--",
	};
	char **argv = prog, *text;
	int st;

	program_argv(b, o, w, &buf, prog);
	snprintf(report, sizeof(report), "--report=%s", b->report);
	if (c == C_CHECKED) {
		memcpy(checked + 5, prog, sizeof(prog));
		argv = checked;
	}
	/* Every run starts from no file: the same layout work for each. */
	unlink(b->file);
	unlink(b->pool);
	unlink(b->report);
	st = spawn_wait(argv, b->env[c], b->out, b->err);
	if (stop_sig)
		return 1;
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		if (st < 0)
			fprintf(stderr, "ntmem " CMD ": cannot run %s: %s\n", argv[0],
				strerror(-st));
		else
			fprintf(stderr, "ntmem " CMD ": %s %s %s (%d); its "
				"standard error ends:\n", cfg_names[c], wl->name,
				WIFEXITED(st) ? "exited with status"
				: "died of signal", WIFEXITED(st) ? WEXITSTATUS(st)
				: WTERMSIG(st));
		show_tail(b->err);
		return 1;
	}
	text = slurp(b->out);
	*bw = NAN;
	if (wl->prog == P_FIO) {
		if (!text || fio_write_stats(text, ops, bw)) {
			fprintf(stderr, "ntmem " CMD ": %s %s: no write IOPS in fio's "
				"JSON output\n", cfg_names[c], wl->name);
			free(text);
			return 1;
		}
	} else {
		*ops = text ? word_after(text, "ops_per_sec ") : NAN;
		if (isnan(*ops) || *ops <= 0) {
			fprintf(stderr, "ntmem " CMD ": %s %s: no \"ops_per_sec\" in "
				"the output of %s\n", cfg_names[c], wl->name, b->pmemobj);
			free(text);
			return 1;
		}
	}
	free(text);
	*bugs = NAN;
	if (c == C_PLAIN) {
		/* The plain figures are of ntmem's library, not another. */
		text = slurp(b->err);
		if (!text || !strstr(text, "ntmem libpmem ")) {
			fprintf(stderr, "ntmem " CMD ": plain %s did not load ntmem's "
				"libpmem.so.1 from %s (no \"ntmem libpmem\" line "
				"with NTMEM_VERBOSE=1)\n", wl->name, b->plain);
			free(text);
			return 1;
		}
		free(text);
		return 0;
	}
	text = slurp(b->report);
	*bugs = text ? number_after(text, "\"errors\"") : NAN;
	if (isnan(*bugs)) {
		fprintf(stderr, "ntmem " CMD ": ntmem check wrote no report to %s\n",
			b->report);
		free(text);
		return 1;
	}
	if (*bugs > 0 && !b->bug_report) {
		b->bug_report = text;
		b->bug_wl = w;
		return 0;
	}
	free(text);
	return 0;
}

/*
 * A checked run reported bugs in a correct program: the checker is wrong
 * (or the program is), and the figures measure something else. Its bug
 * records, from the first report that had them, on stderr.
 */
static void show_bugs(const struct bench *b)
{
	char *text = b->bug_report;
	int shown = 0;

	fprintf(stderr, "ntmem " CMD ": the checked %s run reported bugs in a "
		"correct program (0 expected); its bug records:\n",
		workloads[b->bug_wl].name);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strstr(line, "\"type\":\"bug\""))
			continue;
		if (++shown > 20) {
			fprintf(stderr, "#   ... (more in the report)\n");
			break;
		}
		fprintf(stderr, "#   %s\n", line + strspn(line, " \t"));
	}
}

static const struct report_col columns[] = {
	{ "workload", COL_STR, 0 }, { "config", COL_STR, 0 },
	{ "bs", COL_REAL, 0 }, { "kops", COL_REAL, 1 },
	{ "min_kops", COL_REAL, 1 }, { "max_kops", COL_REAL, 1 },
	{ "mb_s", COL_REAL, 0 }, { "slowdown", COL_REAL, 2 },
	{ "bugs", COL_REAL, 0 },
};
#define NCOLS ((int)(sizeof(columns) / sizeof(columns[0])))

/* The rows, the meta lines before them and the end of the report. */
static void print_report(const struct bench *b, const struct options *o,
			 double med[NWL][NCFG], struct bench_stats st[NWL][NCFG],
			 struct bench_stats bws[NWL][NCFG], const double bugs[NWL])
{
	bool have[NPROG] = { false };
	char buf[160], left[80] = "";
	struct report rep;

	for (int w = 0; w < NWL; w++)
		if (b->run_wl[w])
			have[workloads[w].prog] = true;
		else if (selected(o->workload, w))
			snprintf(left + strlen(left), sizeof(left) - strlen(left),
				 "%s%s", left[0] ? ", " : "", workloads[w].name);
	report_init(&rep, bench_format(o->json, o->csv), "ntmem bench check",
		    columns, NCOLS);
	report_meta(&rep, "version", "%s", ntm_version());
	report_meta(&rep, "cpu", "%s", bench_cpu_model(buf, sizeof(buf)));
	if (have[P_FIO])
		report_meta(&rep, "fio", "%s --ioengine=libpmem --thread --numjobs=1 "
			    "--direct=1 --sync=1, %s of %s blocks on a fresh file "
			    "each run", b->fio,
			    parse_size_name(o->size, (char[32]){ 0 }, 32),
			    parse_size_name(o->bs, (char[32]){ 0 }, 32));
	if (have[P_PMEMOBJ])
		report_meta(&rep, "pmemobj", "%s tx|alloc, %llu transactions on a "
			    "fresh 16 MiB pool each run; kops: its own count",
			    b->pmemobj, (unsigned long long)o->ops);
	report_meta(&rep, "dir", "%s, %s", o->dir, b->dax ?
		    "DAX (MAP_SYNC), PMEM_IS_PMEM_FORCE unset" :
		    "not DAX, PMEM_IS_PMEM_FORCE=1");
	if (left[0])
		report_meta(&rep, "left_out", "%s (program not found)", left);
	report_meta(&rep, "plain", "%s/libpmem.so.1", b->plain);
	report_meta(&rep, "checked", "ntmem check, %s", b->checkdir);
	report_meta(&rep, "runs", "%d per row, plain and checked alternating; "
		    "thousands of operations (fio: writes) per second, median "
		    "[min, max]; slowdown: plain median over the row's", o->runs);
	report_meta(&rep, "bugs", "most reported by a checked run (0 expected)");
	for (int w = 0; w < NWL; w++)
		if (b->run_wl[w])
			report_meta(&rep, workloads[w].slowdown, "%.2f",
				    med[w][C_PLAIN] / med[w][C_CHECKED]);
	for (int w = 0; w < NWL; w++) {
		bool fio = workloads[w].prog == P_FIO;

		if (!b->run_wl[w])
			continue;
		for (int c = 0; c < NCFG; c++) {
			union report_cell cell[NCOLS] = {
				{ .s = workloads[w].name }, { .s = cfg_names[c] },
				{ .r = fio ? (double)o->bs : NAN },
				{ .r = med[w][c] / 1e3 },
				{ .r = st[w][c].min / 1e3 },
				{ .r = st[w][c].max / 1e3 },
				{ .r = fio ? bws[w][c].median / 1e6 : NAN },
				{ .r = med[w][C_PLAIN] / med[w][c] },
				{ .r = c == C_CHECKED ? bugs[w] : NAN },
			};
			report_row(&rep, cell);
		}
	}
	report_end(&rep);
}

static int run(const struct options *o)
{
	struct bench b = { 0 };
	bool fio = selected(o->workload, 0), obj = selected(o->workload, 2);
	uint64_t disk = (fio ? o->size : 0) > (obj ? PMEMOBJ_POOL_SIZE : 0) ?
			o->size : PMEMOBJ_POOL_SIZE;
	struct bench_room room = {
		.dir = o->dir, .disk = disk,
		.disk_what = "fio's file or the pmemobj pool",
		.mem = disk,
		.mem_what = "ntmem check's copies of the pages stored to",
	};
	double ops[NWL][NCFG][BENCH_MAX_RUNS], bw[NWL][NCFG][BENCH_MAX_RUNS];
	double bugs[NWL] = { 0 }, med[NWL][NCFG] = { { 0 } };
	struct bench_stats st[NWL][NCFG] = { 0 }, bws[NWL][NCFG] = { 0 };
	int ret = 1, nwl = 0, done = 0;
	char buf[160];

	stop_handlers();
	if (bench_check_room(CMD, &room))
		return 1;
	ret = setup(&b, o);
	if (ret)
		goto out;
	ret = 1;
	for (int w = 0; w < NWL; w++)
		nwl += b.run_wl[w];
	for (int r = 0; r < o->runs; r++)
		for (int w = 0; w < NWL; w++)
			for (int i = 0; b.run_wl[w] && i < NCFG; i++) {
				/* Alternate which goes first: drift hits both. */
				enum cfg c = (enum cfg)((i + r) % NCFG);
				double n;

				snprintf(buf, sizeof(buf), "run %d: %s %s", r + 1,
					 workloads[w].name, cfg_names[c]);
				bench_progress(++done, o->runs * nwl * NCFG, buf);
				if (run_once(&b, o, w, c, &ops[w][c][r],
					     &bw[w][c][r], &n))
					goto out;
				if (c == C_CHECKED && n > bugs[w])
					bugs[w] = n;
			}
	bench_progress_done();

	for (int w = 0; w < NWL; w++)
		for (int c = 0; b.run_wl[w] && c < NCFG; c++) {
			bench_stats(ops[w][c], o->runs, &st[w][c]);
			if (workloads[w].prog == P_FIO)
				bench_stats(bw[w][c], o->runs, &bws[w][c]);
			med[w][c] = st[w][c].median;
		}
	print_report(&b, o, med, st, bws, bugs);
	if (b.bug_report)
		show_bugs(&b);
	else
		ret = 0;
out:
	bench_progress_done();
	teardown(&b);
	if (stop_sig)
		die_of_stop_signal();
	return ret;
}

static void usage(FILE *out)
{
	fputs("usage: ntmem bench check [options]\n"
	      "\n"
	      "What ntmem check costs unmodified programs: each workload runs once on\n"
	      "ntmem's plain libpmem.so.1 and once under `ntmem check`, alternating:\n"
	      "  fio-write, fio-randwrite  Debian's fio writes a file with its libpmem\n"
	      "                engine (--direct=1 --sync=1: non-temporal copies, each\n"
	      "                drained, so every request is a persistence point)\n"
	      "  pmemobj-tx    " PMEMOBJ_PROGRAM " (Debian's libpmemobj): transactions\n"
	      "                each updating three small fields it adds first\n"
	      "  pmemobj-alloc the same program: transactions each allocating a\n"
	      "                zeroed object and freeing the one it replaces\n"
	      "Rows give each program's own count of operations per second (fio's\n"
	      "write IOPS; median, min, max of the runs; fio's bandwidth too);\n"
	      "slowdown is the plain median over the row's, bugs the bug reports of a\n"
	      "checked run: these programs persist what they write, so a bug fails\n"
	      "the run (exit 1, its records shown). Needs the checking library\n"
	      "(NTMEM_CHECK_LIBDIR), fio with the libpmem engine for the fio rows and\n"
	      "an ntmem built with libpmemobj-dev for the pmemobj rows. On a DAX file\n"
	      "system the files are pmem as they are; elsewhere PMEM_IS_PMEM_FORCE=1.\n"
	      "\n"
	      "  -w, --workload WHICH    all (default: those whose program is here),\n"
	      "                          fio, pmemobj, pmemobj-tx or pmemobj-alloc\n"
	      "  -s, --size BYTES        fio's file size (default 256m)\n"
	      "  -b, --bs BYTES          fio's block size, a multiple of 512 (default 4k)\n"
	      "  -n, --ops N             transactions of a pmemobj run (default 20000)\n"
	      "  -r, --runs N            runs of each row, median reported (default 5)\n"
	      "      --plain-libdir DIR  ntmem's libpmem.so.1 for the plain rows\n"
	      "                          (default: the checking directory's parent,\n"
	      "                          or a build tree's compat/libpmem)\n"
	      "      --dir DIR           where the files are made (default /dev/shm)\n"
	      "      --json, --csv       machine-readable output\n"
	      "  -h, --help              this text\n"
	      "\n"
	      "fio's file and the 16 MiB pmemobj pool are made anew in a fresh\n"
	      "directory under DIR for every run and removed at the end, also when\n"
	      "the run is ended by SIGINT or SIGTERM.\n",
	      out);
}

int cmd_bench_check(int argc, char **argv)
{
	struct options o = {
		.size = 256ull << 20, .bs = 4096, .ops = 20000, .runs = 5,
		.dir = "/dev/shm", .workload = SEL_ALL,
	};
	const struct opt opts[] = {
		{ .name = "workload", .letter = 'w', .kind = OPT_CHOICE,
		  .dest = &o.workload, .choices = selection_names },
		{ .name = "size", .letter = 's', .kind = OPT_U64, .dest = &o.size,
		  .min = 4096, .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .multiple = 4096 },
		{ .name = "bs", .letter = 'b', .kind = OPT_U64, .dest = &o.bs,
		  .min = 512, .max = 64u << 20, .flags = PARSE_SUFFIX,
		  .multiple = 512 },
		{ .name = "ops", .letter = 'n', .kind = OPT_U64, .dest = &o.ops,
		  .min = 1, .max = 1000000000 },
		BENCH_OPT_RUNS(&o.runs),
		{ .name = "plain-libdir", .kind = OPT_STR, .dest = &o.plain },
		{ .name = "dir", .kind = OPT_STR, .dest = &o.dir },
		BENCH_OPTS_FORMAT(&o.json, &o.csv),
		{ 0 },
	};
	const struct opt_cmd cmd = {
		.name = CMD, .opts = opts, .usage = usage,
	};
	int status;

	if (!parse_args(&cmd, argc, argv, &status))
		return status;
	if (bench_opt_format(CMD, o.json, o.csv))
		return 2;
	if (o.size < o.bs || o.size % o.bs) {
		char v[32];

		return parse_bad_arg(CMD, "--size",
				     parse_size_name(o.size, v, sizeof(v)),
				     "a multiple of --bs");
	}
	return run(&o);
}
