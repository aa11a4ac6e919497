// SPDX-License-Identifier: MIT
/*
 * cmd_check.c - `ntmem check [options] -- PROGRAM ARGS...`: a persistence
 * checker for unmodified programs. PROGRAM runs with ntmem's checking
 * library preloaded (built from src/record/, installed in
 * $libdir/ntmem/check), which appends one JSON line per finding to a
 * report file this command created; when PROGRAM has ended, the lines are
 * read back, printed for a person (or as one JSON object) and PROGRAM's
 * exit status is passed on.
 *
 * The report is a file, not a pipe: a program that forks, execs or dies
 * of a signal part way still leaves every line it wrote, and nothing
 * blocks when this process is slow to read.
 *
 * This file is the command line and the run put together; the parts are
 * check_discover.c (the checking library's directory), check_spawn.c
 * (the program's environment and run), check_report_read.c (the report's
 * records, by <ntmem/check_report.def>), check_verdict.c (checked or not,
 * how the program ended) and check_print.c (text and --json).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check_run.h"
#include "commands.h"
#include "parse.h"

#ifndef NTMEM_CHECK_LIBDIR_DEFAULT
#error "NTMEM_CHECK_LIBDIR_DEFAULT: the installed checking library's directory (tools/meson.build)"
#endif

static void usage(FILE *out)
{
	fputs("usage: ntmem check [--json] [--report FILE] [--error-exitcode N]\n"
	      "                   [--perf] [--eager] -- PROGRAM [ARGS...]\n"
	      "\n"
	      "Runs PROGRAM, unmodified, with ntmem's checking library preloaded and\n"
	      "reports the stores it made to persistent memory that a crash could lose:\n"
	      "lines a persistence point (pmem_drain, pmem_persist, pmem_msync,\n"
	      "ntm_drain, ntm_persist, a FUA block write) found not written back, or\n"
	      "stored again after their write-back, and lines never made durable, when\n"
	      "they are still not durable at unmap or exit (with --eager: at the\n"
	      "point). The mappings watched are those of pmem_map_file and ntm_ns_*,\n"
	      "and shared file mappings that pmem_* calls touch. See ntmem-check(1)\n"
	      "for what it cannot see.\n"
	      "\n"
	      "  --json              one JSON object instead of the text report:\n"
	      "                      errors, perf_notes, exit_status, ended (how PROGRAM\n"
	      "                      ended), judged, reports (the records), checked\n"
	      "                      (all, part or none), not_checked (why, or null)\n"
	      "  --report FILE       write the report to FILE instead of standard error\n"
	      "  --error-exitcode N  exit with N (1 to 255) when an error was reported\n"
	      "                      and PROGRAM was not killed by a signal\n"
	      "  --perf              also print the performance notes: write-backs of\n"
	      "                      lines that had not changed, repeated write-backs\n"
	      "  --eager             report a line at the first persistence point that\n"
	      "                      finds it not durable, not at unmap or exit (for\n"
	      "                      programs that make every store durable at once)\n"
	      "  -h, --help          this text\n"
	      "\n"
	      "The -- may be left out when PROGRAM does not start with '-'. Exit status:\n"
	      "PROGRAM's, 128+N when it died of signal N, N of --error-exitcode when\n"
	      "an error was reported, 4 when PROGRAM exited 0 but was not checked in\n"
	      "full (no process loaded the checking library, it could not watch, or\n"
	      "memory went unwatched: the summary says which), 127 when it could not\n"
	      "be executed, 2 when ntmem check could not start it (a usage error, no\n"
	      "checking library). The library is looked for in NTMEM_CHECK_LIBDIR, if\n"
	      "set, else in BUILDDIR/src/record/check when this ntmem is BUILDDIR/tools/ntmem,\n"
	      "else in " NTMEM_CHECK_LIBDIR_DEFAULT ".\n",
	      out);
}

int cmd_check(int argc, char **argv)
{
	bool json = false, perf = false, eager = false;
	const char *report_path = NULL;
	int error_exitcode = 0;
	const struct opt opts[] = {
		{ .name = "json", .kind = OPT_FLAG, .dest = &json },
		{ .name = "report", .kind = OPT_STR, .dest = &report_path,
		  .expected = "a file to write the report to" },
		{ .name = "error-exitcode", .kind = OPT_INT,
		  .dest = &error_exitcode, .min = 1, .max = 255 },
		{ .name = "perf", .kind = OPT_FLAG, .dest = &perf },
		{ .name = "eager", .kind = OPT_FLAG, .dest = &eager },
		{ 0 },
	};
	const struct opt_cmd cmd = {
		.name = "check", .opts = opts, .usage = usage,
	};
	char dir[PATH_MAX], tmpl[PATH_MAX], ended[160], why[160];
	const char *tmpdir = getenv("TMPDIR");
	bool judged;
	struct run_report rr = { 0 };
	FILE *out = stderr, *text;
	char **env, *buf = NULL;
	size_t buflen = 0;
	int nopt = argc, prog = argc, status, fd, exec_errno, ret, pstatus;
	pid_t pid = 0;

	/*
	 * The options end at "--" or at the first argument that is not
	 * one: everything after belongs to PROGRAM, its own --help too.
	 */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool takes_value = false;

		if (!strcmp(a, "--")) {
			nopt = i;
			prog = i + 1;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			nopt = prog = i;
			break;
		}
		for (const struct opt *o = opts; o->name; o++)
			if (a[1] == '-' && !strcmp(a + 2, o->name) &&
			    o->kind != OPT_FLAG)
				takes_value = true;
		if (takes_value)
			i++;
	}
	if (!parse_args(&cmd, nopt, argv, &status))
		return status;
	if (prog >= argc)
		return parse_bad_arg("check", "PROGRAM", "(none)",
				     "a program to run, after --");
	ret = check_libdir("check", dir, sizeof(dir));
	if (ret)
		return ret;
	/* Before the run: a report that cannot be written is said now. */
	if (report_path) {
		out = fopen(report_path, "we");
		if (!out) {
			fprintf(stderr, "ntmem check: invalid --report '%s': "
				"expected a file to write the report to (%s)\n",
				report_path, strerror(errno));
			return 2;
		}
	}
	snprintf(tmpl, sizeof(tmpl), "%s/ntmem-check-XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	fd = mkostemp(tmpl, O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ntmem check: cannot create the report file %s: %s\n",
			tmpl, strerror(errno));
		if (out != stderr)
			fclose(out);
		return 2;
	}
	/* The checking library reads it; the program inherits it. */
	env = NULL;
	if (eager && setenv("NTMEM_CHECK_EAGER", "1", 1)) {
		perror("ntmem check: setenv");
		ret = 2;
		goto out;
	}
	env = child_env(dir, tmpl);
	if (!env) {
		fprintf(stderr, "ntmem check: out of memory\n");
		ret = 2;
		goto out;
	}
	status = run_program(argv + prog, env, &exec_errno, &pid);
	if (status < 0) {
		if (exec_errno)
			fprintf(stderr, "ntmem check: cannot run '%s': %s\n",
				argv[prog], strerror(exec_errno));
		else
			fprintf(stderr, "ntmem check: cannot start '%s': %s\n",
				argv[prog], strerror(errno));
		ret = exec_errno ? 127 : 2;
		goto out;
	}
	pstatus = WIFSIGNALED(status) ? 128 + WTERMSIG(status)
				       : WEXITSTATUS(status);
	ret = read_report(fd, (long long)pid, &rr);
	if (ret)
		fprintf(stderr, "ntmem check: cannot read the report file %s: %s\n",
			tmpl, strerror(-ret));
	/*
	 * Put together in memory, then written at once: stderr is
	 * unbuffered, and a report of many frames would be as many writes.
	 */
	describe_end(ended, sizeof(ended), status, &rr, (long long)pid, &judged);
	text = open_memstream(&buf, &buflen);
	if (json)
		print_json(text ? text : out, &rr, pstatus, ended, judged);
	else
		print_human(text ? text : out, &rr, perf, (long long)pid, ended);
	if (text && !fclose(text))
		fwrite(buf, 1, buflen, out);
	free(buf);
	ret = pstatus;
	if (error_exitcode && rr.errors && !WIFSIGNALED(status))
		ret = error_exitcode;
	else if (!ret && run_checked(&rr, why, sizeof(why)) != CHECKED_ALL)
		ret = NOT_CHECKED_STATUS;
out:
	run_report_free(&rr);
	free_env(env);
	unlink(tmpl);
	close(fd);
	if (out != stderr && fclose(out)) {
		fprintf(stderr, "ntmem check: --report %s: %s\n", report_path,
			strerror(errno));
		if (!ret)
			ret = 2;
	}
	return ret;
}
