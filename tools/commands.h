/* SPDX-License-Identifier: MIT */
/*
 * commands.h - the subcommands of the ntmem tool, each in its own file,
 * and the one way they report a bad argument.
 */
#ifndef NTMEM_TOOL_COMMANDS_H
#define NTMEM_TOOL_COMMANDS_H

int cmd_info(int argc, char **argv);
int cmd_bench_copy(int argc, char **argv);
int cmd_bench_memmap(int argc, char **argv);
int cmd_bench_blk(int argc, char **argv);
int cmd_blk(int argc, char **argv);

/*
 * Print "ntmem CMD: invalid OPTION 'VALUE': expected WHAT (-EINVAL)" to
 * stderr and return the exit status for a usage error (2).
 */
int cmd_bad_arg(const char *cmd, const char *option, const char *value,
		const char *expected);

#endif
