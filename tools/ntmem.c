// SPDX-License-Identifier: MIT
/*
 * ntmem.c - the ntmem command: finds the subcommand and hands it argv.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <ntmem.h>

#include "commands.h"

struct command {
	const char *group;	/* "bench" for "ntmem bench copy", or NULL */
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{ NULL, "info", cmd_info,
	  "CPU features, chosen copy variant, write-back instruction" },
	{ "bench", "copy", cmd_bench_copy,
	  "copy throughput against glibc, PMDK and the streaming limit" },
	{ "bench", "memmap", cmd_bench_memmap,
	  "memmap init time of a namespace, the seeds' experiment" },
	{ "bench", "blk", cmd_bench_blk,
	  "block I/O IOPS and latency: direct, hardened, PMDK" },
	{ "bench", "check", cmd_bench_check,
	  "fio's libpmem engine with and without ntmem check" },
	{ NULL, "blk", cmd_blk,
	  "emulated pmem block device: create (BTT), check, bad sectors" },
	{ NULL, "check", cmd_check,
	  "run a program, report stores a crash could lose" },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: ntmem <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "%s%s%s",
			 commands[i].group ? commands[i].group : "",
			 commands[i].group ? " " : "", commands[i].name);
		fprintf(out, "  %-12s %s\n", name, commands[i].summary);
	}
	fprintf(out, "\n'ntmem <command> --help' describes a command's options;"
		     " man ntmem-<command> has them all.\n");
}

/*
 * A command's status, unless what it printed was lost: a full disk or a
 * closed pipe behind standard output turns a report the user never got
 * into a failure (status 1) rather than a silent success. Buffered
 * output is flushed here, once, for every command.
 */
static int output_written(const char *group, const char *name, int status)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return status;
	fprintf(stderr, "ntmem %s%s%s: cannot write standard output: %s\n",
		group ? group : "", group ? " " : "", name, strerror(errno ? errno : EIO));
	return status ? status : 1;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
	    !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return output_written(NULL, "help", argc < 2 ? 2 : 0);
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("ntmem %s\n", ntm_version());
		return output_written(NULL, "version", 0);
	}
	for (size_t i = 0; i < NCOMMANDS; i++) {
		const struct command *c = &commands[i];

		if (!c->group && !strcmp(argv[1], c->name))
			return output_written(c->group, c->name, c->run(argc - 1, argv + 1));
		if (c->group && !strcmp(argv[1], c->group) && argc > 2 &&
		    !strcmp(argv[2], c->name))
			return output_written(c->group, c->name, c->run(argc - 2, argv + 2));
	}
	fprintf(stderr, "ntmem: unknown command '%s%s%s'\n", argv[1],
		argc > 2 && argv[2][0] != '-' ? " " : "",
		argc > 2 && argv[2][0] != '-' ? argv[2] : "");
	usage(stderr);
	return 2;
}
