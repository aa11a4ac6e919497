#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_valgrind.sh PROBE - the libpmem drop-in under valgrind's tools, as
# PMDK's own tests run libpmemobj on it (valgrind_probe.c): memcheck
# finds no error in a pmem_msync() whose page holds bytes the program
# marked not addressable, and helgrind no race when threads bind the
# copy entries at once. Exit 0 pass, 1 fail, 77 skip (no valgrind).
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 PROBE" >&2
	exit 1
fi
probe=$1
if [ ! -x "$probe" ] || ! command -v valgrind >/dev/null 2>&1; then
	echo "SKIP: valgrind or its headers are not installed"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
# check NAME TOOL ARGS...: the probe under valgrind's TOOL, no error.
check() {
	name=$1 tool=$2
	shift 2
	if valgrind -q --tool="$tool" --error-exitcode=3 "$probe" "$@" \
		>"$tmp/out" 2>&1; then
		echo "ok - $name: $tool reports nothing"
	else
		echo "not ok - $name: $tool says:"; sed 's/^/# /' "$tmp/out"
		fail=1
	fi
}
check "pmem_msync of a page memcheck was told is partly not addressable" \
	memcheck msync "$tmp"
check "threads binding the copy entries at once" helgrind threads
exit $fail
