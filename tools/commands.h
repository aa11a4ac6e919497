/* SPDX-License-Identifier: MIT */
/*
 * commands.h - the subcommands of the ntmem tool, each in its own file;
 * each parses its options with parse_args() (parse.h).
 */
#ifndef NTMEM_TOOL_COMMANDS_H
#define NTMEM_TOOL_COMMANDS_H

#include <stddef.h>

int cmd_info(int argc, char **argv);
int cmd_bench_copy(int argc, char **argv);
int cmd_bench_memmap(int argc, char **argv);
int cmd_bench_blk(int argc, char **argv);
int cmd_blk(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_bench_check(int argc, char **argv);

/*
 * The checking library's directory (check_discover.c), shared with `bench
 * check`: $NTMEM_CHECK_LIBDIR if set and non-empty, else the installed
 * one; made absolute into @dir. 0, or 2 after a message naming the
 * directory when it lacks libntmem-watch.so.0 or
 * libntmem-watch-preload.so.
 */
int check_libdir(const char *cmd, char *dir, size_t len);

#endif
