// SPDX-License-Identifier: MIT
/*
 * bench_check.c - `ntmem bench check`: what `ntmem check` costs a real,
 * unmodified program. Debian's fio runs its libpmem engine twice per run
 * and pattern, with the same job on a fresh file each time:
 *
 *   plain     on ntmem's libpmem.so.1 drop-in ($libdir/ntmem), the
 *             library the checking library is built from
 *   checked   under `ntmem check --json` (this same executable), which
 *             preloads the checking library
 *
 * and reports fio's own write IOPS (median of the runs) for each, their
 * ratio, and how many bugs the checked runs reported. fio measures its
 * job only: the start of the program, the loading of the libraries and
 * the report at exit are not in the figures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ntmem.h>

#include "bench.h"
#include "commands.h"
#include "parse.h"

extern char **environ;

#define CMD "bench check"

struct options {
	uint64_t size, bs;
	int runs;
	const char *plain, *dir;
	bool json, csv;
};

enum cfg { C_PLAIN, C_CHECKED, NCFG };
static const char *const cfg_names[] = { "plain", "checked" };
enum { NPAT = 2 };
static const char *const pattern_names[NPAT] = { "write", "randwrite" };

struct bench {
	char fio[PATH_MAX], self[PATH_MAX];
	char checkdir[PATH_MAX], plain[PATH_MAX];
	char dir[PATH_MAX];		/* the run's fresh directory */
	char file[PATH_MAX + 16], out[PATH_MAX + 16], err[PATH_MAX + 16];
	char report[PATH_MAX + 16];
	char **env[NCFG];
	char *ld_library_path;	/* the plain rows' LD_LIBRARY_PATH=... */
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
 * This environment with each "NAME=VALUE" of @set replacing NAME's value;
 * the entries of @set are not copied. NULL when out of memory.
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
			size_t name = strcspn(set[s], "=") + 1;

			if (!strncmp(environ[i], set[s], name))
				replaced = true;
		}
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t s = 0; s < nset; s++)
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
 * else a build tree's compat/libpmem beside its src/watch.
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
	snprintf(cand[1], sizeof(cand[1]), "%s/../../compat/libpmem", b->checkdir);
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

/* Find fio and check that it has the libpmem engine. 0 or 1. */
static int find_fio(struct bench *b)
{
	char *argv[] = { b->fio, "--enghelp", NULL }, *text;
	bool found = false;
	int st;

	if (find_in_path("fio", b->fio, sizeof(b->fio))) {
		fprintf(stderr, "ntmem " CMD ": fio not found in PATH; it measures "
			"fio's libpmem engine (Debian: apt-get install fio)\n");
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
		fprintf(stderr, "ntmem " CMD ": %s has no libpmem engine (fio "
			"--enghelp%s); Debian's fio has one\n", b->fio,
			st ? " failed" : " does not list it");
		if (st)
			show_tail(b->err);
		return 1;
	}
	return 0;
}

static void teardown(struct bench *b)
{
	if (b->dir[0]) {
		unlink(b->file);
		unlink(b->out);
		unlink(b->err);
		unlink(b->report);
		rmdir(b->dir);
	}
	for (int c = 0; c < NCFG; c++)
		free(b->env[c]);
	free(b->ld_library_path);
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
	/*
	 * Plain: ntmem's libpmem.so.1 first in the search path. Checked:
	 * ntmem check puts the checking directory first itself. Both:
	 * the file is pmem (a tmpfs is not DAX: fio's engine refuses it
	 * otherwise), and the library announces itself on stderr.
	 */
	if (asprintf(&b->ld_library_path, "LD_LIBRARY_PATH=%s%s%s", b->plain,
		     old && *old ? ":" : "", old && *old ? old : "") < 0) {
		b->ld_library_path = NULL;
		fprintf(stderr, "ntmem " CMD ": out of memory\n");
		return 1;
	}
	{
		char *set[] = { "PMEM_IS_PMEM_FORCE=1", "NTMEM_VERBOSE=1",
				b->ld_library_path };

		b->env[C_PLAIN] = env_with(set, 3);
		b->env[C_CHECKED] = env_with(set, 2);
	}
	if (!b->env[C_PLAIN] || !b->env[C_CHECKED]) {
		fprintf(stderr, "ntmem " CMD ": out of memory\n");
		return 1;
	}
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
	return find_fio(b);
}

/* --- one run ------------------------------------------------------------- */

/*
 * fio's job @rw, plain or checked, on a fresh file: its write IOPS and
 * bytes/s, and (checked) the number of bugs reported. 0 or 1 (said why).
 */
static int run_fio(struct bench *b, const struct options *o, int pat,
		   enum cfg c, double *iops, double *bw, double *bugs)
{
	char name[32], filename[PATH_MAX + 32], rw[32], bs[48], size[48];
	char report[PATH_MAX + 32];
	char *fio_args[] = {
		b->fio, name, filename, "--ioengine=libpmem", "--thread",
		"--numjobs=1", rw, bs, size, "--direct=1", "--sync=1",
		"--output-format=json", NULL,
	};
	char *checked[6 + sizeof(fio_args) / sizeof(*fio_args)] = {
		b->self, "check", "--json", report, "--",
	};
	char **argv = fio_args, *text;
	int st;

	snprintf(name, sizeof(name), "--name=%s", pattern_names[pat]);
	snprintf(filename, sizeof(filename), "--filename=%s", b->file);
	snprintf(rw, sizeof(rw), "--rw=%s", pattern_names[pat]);
	snprintf(bs, sizeof(bs), "--bs=%llu", (unsigned long long)o->bs);
	snprintf(size, sizeof(size), "--size=%llu", (unsigned long long)o->size);
	snprintf(report, sizeof(report), "--report=%s", b->report);
	if (c == C_CHECKED) {
		memcpy(checked + 5, fio_args, sizeof(fio_args));
		argv = checked;
	}
	/* Every run starts from no file: the same layout work for each. */
	unlink(b->file);
	unlink(b->report);
	st = spawn_wait(argv, b->env[c], b->out, b->err);
	if (stop_sig)
		return 1;
	if (st < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		if (st < 0)
			fprintf(stderr, "ntmem " CMD ": cannot run %s: %s\n", argv[0],
				strerror(-st));
		else
			fprintf(stderr, "ntmem " CMD ": %s fio --rw=%s %s (%d); its "
				"standard error ends:\n", cfg_names[c],
				pattern_names[pat], WIFEXITED(st) ? "exited with status"
				: "died of signal", WIFEXITED(st) ? WEXITSTATUS(st)
				: WTERMSIG(st));
		show_tail(b->err);
		return 1;
	}
	text = slurp(b->out);
	if (!text || fio_write_stats(text, iops, bw)) {
		fprintf(stderr, "ntmem " CMD ": %s fio --rw=%s: no write IOPS in "
			"its JSON output\n", cfg_names[c], pattern_names[pat]);
		free(text);
		return 1;
	}
	free(text);
	*bugs = NAN;
	if (c == C_PLAIN) {
		/* The plain figures are of ntmem's library, not another. */
		text = slurp(b->err);
		if (!text || !strstr(text, "ntmem libpmem")) {
			fprintf(stderr, "ntmem " CMD ": plain fio did not load ntmem's "
				"libpmem.so.1 from %s (no \"ntmem libpmem\" line "
				"with NTMEM_VERBOSE=1)\n", b->plain);
			free(text);
			return 1;
		}
		free(text);
		return 0;
	}
	text = slurp(b->report);
	*bugs = text ? number_after(text, "\"errors\"") : NAN;
	free(text);
	if (isnan(*bugs)) {
		fprintf(stderr, "ntmem " CMD ": ntmem check wrote no report to %s\n",
			b->report);
		return 1;
	}
	return 0;
}

static const struct report_col columns[] = {
	{ "pattern", COL_STR, 0 }, { "config", COL_STR, 0 },
	{ "bs", COL_INT, 0 }, { "kiops", COL_REAL, 1 },
	{ "min_kiops", COL_REAL, 1 }, { "max_kiops", COL_REAL, 1 },
	{ "mb_s", COL_REAL, 0 }, { "slowdown", COL_REAL, 2 },
	{ "bugs", COL_REAL, 0 },
};
#define NCOLS ((int)(sizeof(columns) / sizeof(columns[0])))

static int run(const struct options *o)
{
	struct bench b = { 0 };
	struct bench_room room = {
		.dir = o->dir, .disk = o->size,
		.disk_what = "fio's file",
		.mem = o->size,
		.mem_what = "ntmem check's copies of the pages stored to",
	};
	double iops[NPAT][NCFG][BENCH_MAX_RUNS], bw[NPAT][NCFG][BENCH_MAX_RUNS];
	double bugs[NPAT] = { 0 }, med[NPAT][NCFG];
	struct bench_stats st[NPAT][NCFG], bws[NPAT][NCFG];
	struct report rep;
	char buf[160];
	int ret = 1;

	stop_handlers();
	if (bench_check_room(CMD, &room))
		return 1;
	ret = setup(&b, o);
	if (ret)
		goto out;
	ret = 1;
	for (int r = 0; r < o->runs; r++)
		for (int p = 0; p < NPAT; p++)
			for (int i = 0; i < NCFG; i++) {
				/* Alternate which goes first: drift hits both. */
				enum cfg c = (enum cfg)((i + r) % NCFG);
				double n;

				snprintf(buf, sizeof(buf), "run %d: %s %s", r + 1,
					 pattern_names[p], cfg_names[c]);
				bench_progress(r * NPAT * NCFG + p * NCFG + i + 1,
					       o->runs * NPAT * NCFG, buf);
				if (run_fio(&b, o, p, c, &iops[p][c][r],
					    &bw[p][c][r], &n))
					goto out;
				if (c == C_CHECKED && n > bugs[p])
					bugs[p] = n;
			}
	bench_progress_done();

	for (int p = 0; p < NPAT; p++)
		for (int c = 0; c < NCFG; c++) {
			bench_stats(iops[p][c], o->runs, &st[p][c]);
			bench_stats(bw[p][c], o->runs, &bws[p][c]);
			med[p][c] = st[p][c].median;
		}
	report_init(&rep, bench_format(o->json, o->csv), "ntmem bench check",
		    columns, NCOLS);
	report_meta(&rep, "version", "%s", ntm_version());
	report_meta(&rep, "cpu", "%s", bench_cpu_model(buf, sizeof(buf)));
	report_meta(&rep, "fio", "%s --ioengine=libpmem --thread --numjobs=1 "
		    "--direct=1 --sync=1, %s of %s blocks on a fresh file in %s "
		    "each run, PMEM_IS_PMEM_FORCE=1", b.fio,
		    parse_size_name(o->size, (char[32]){ 0 }, 32),
		    parse_size_name(o->bs, (char[32]){ 0 }, 32), o->dir);
	report_meta(&rep, "plain", "%s/libpmem.so.1", b.plain);
	report_meta(&rep, "checked", "ntmem check, %s", b.checkdir);
	report_meta(&rep, "runs", "%d per row, plain and checked alternating; "
		    "fio's write IOPS, median [min, max]; slowdown: plain "
		    "median over the row's; bugs: most reported by a checked run",
		    o->runs);
	report_meta(&rep, "write_slowdown", "%.2f",
		    med[0][C_PLAIN] / med[0][C_CHECKED]);
	report_meta(&rep, "randwrite_slowdown", "%.2f",
		    med[1][C_PLAIN] / med[1][C_CHECKED]);
	for (int p = 0; p < NPAT; p++)
		for (int c = 0; c < NCFG; c++) {
			union report_cell cell[NCOLS] = {
				{ .s = pattern_names[p] }, { .s = cfg_names[c] },
				{ .i = (long long)o->bs },
				{ .r = med[p][c] / 1e3 },
				{ .r = st[p][c].min / 1e3 },
				{ .r = st[p][c].max / 1e3 },
				{ .r = bws[p][c].median / 1e6 },
				{ .r = med[p][C_PLAIN] / med[p][c] },
				{ .r = c == C_CHECKED ? bugs[p] : NAN },
			};
			report_row(&rep, cell);
		}
	report_end(&rep);
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
	      "What ntmem check costs an unmodified program: Debian's fio writes a\n"
	      "file with its libpmem engine, once on ntmem's plain libpmem.so.1 and\n"
	      "once under `ntmem check`, alternating, for sequential and random\n"
	      "writes (--direct=1 --sync=1: non-temporal copies, each drained, so\n"
	      "every request is a persistence point the checker judges). Rows give\n"
	      "fio's own write IOPS (median, min, max of the runs) and bandwidth;\n"
	      "slowdown is the plain median over the row's, bugs the bug reports of\n"
	      "a checked run (0 expected: fio persists what it writes). Needs fio\n"
	      "with the libpmem engine and the checking library (NTMEM_CHECK_LIBDIR).\n"
	      "\n"
	      "  -s, --size BYTES        fio's file size (default 256m)\n"
	      "  -b, --bs BYTES          block size, a multiple of 512 (default 4k)\n"
	      "  -r, --runs N            runs of each row, median reported (default 5)\n"
	      "      --plain-libdir DIR  ntmem's libpmem.so.1 for the plain rows\n"
	      "                          (default: the checking directory's parent,\n"
	      "                          or a build tree's compat/libpmem)\n"
	      "      --dir DIR           where fio's file is made (default /dev/shm)\n"
	      "      --json, --csv       machine-readable output\n"
	      "  -h, --help              this text\n"
	      "\n"
	      "The file is made anew in a fresh directory under DIR for every run and\n"
	      "removed at the end, also when the run is ended by SIGINT or SIGTERM.\n",
	      out);
}

int cmd_bench_check(int argc, char **argv)
{
	struct options o = {
		.size = 256ull << 20, .bs = 4096, .runs = 5, .dir = "/dev/shm",
	};
	const struct opt opts[] = {
		{ .name = "size", .letter = 's', .kind = OPT_U64, .dest = &o.size,
		  .min = 4096, .max = PARSE_SIZE_MAX, .flags = PARSE_SUFFIX,
		  .multiple = 4096 },
		{ .name = "bs", .letter = 'b', .kind = OPT_U64, .dest = &o.bs,
		  .min = 512, .max = 64u << 20, .flags = PARSE_SUFFIX,
		  .multiple = 512 },
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
