/* SPDX-License-Identifier: MIT */
/*
 * commands.h - the subcommands of the ntmem tool, each in its own file;
 * each parses its options with parse_args() (parse.h).
 */
#ifndef NTMEM_TOOL_COMMANDS_H
#define NTMEM_TOOL_COMMANDS_H

int cmd_info(int argc, char **argv);
int cmd_bench_copy(int argc, char **argv);
int cmd_bench_memmap(int argc, char **argv);
int cmd_bench_blk(int argc, char **argv);
int cmd_blk(int argc, char **argv);

#endif
