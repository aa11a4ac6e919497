#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_unchecked.sh NTMEM BINDIR - a run that was not checked is not a
# pass: `ntmem check` on a program that never loads the checking library
# (a shell), and on correct programs whose memory the checker could not
# all watch (BINDIR/unwatched_maps: a second mapping mremap() made, one
# mapping more than it watches). Each exits 4 (the program's non-zero
# status is passed on instead; --error-exitcode's status wins when a bug
# was reported), its summary says what was not checked and never
# "0 errors" alone, and --json has checked ("none" or "part") and
# not_checked (why). A checked run of the same program exits 0.
#
# The checking library comes from NTMEM_CHECK_LIBDIR (set by meson).
# Exit 0 pass, 1 fail.
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 NTMEM BINDIR" >&2
	exit 1
fi
ntmem=$1 bindir=$2
here=$(dirname "$0")
# ok, bad, expect, err_names, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$here/../lib/cli_lib.sh"
scratch_dir ntmem-check-unchecked

# lacks TEXT DESCRIPTION: stderr of the last command does not contain TEXT.
lacks() {
	if grep -q -- "$1" "$err"; then bad "$2: '$1'"; sed 's/^/# /' "$err"
	else ok "$2"; fi
}

# --- nothing checked ------------------------------------------------------

expect 4 "a program that loads no checking library: 4" \
	"$ntmem" check -- sh -c 'exit 0'
err_names "^ntmem check: not checked: no process loaded the checking library (pid [0-9]*)$" \
	"nothing checked: the summary says so"
lacks "errors," "nothing checked: no error count"
expect 3 "nothing checked, the program's exit 3: passed on" \
	"$ntmem" check -- sh -c 'exit 3'
err_names "not checked: no process loaded" "exit 3: still said not checked"
expect 4 "nothing checked, --error-exitcode 9: 4" \
	"$ntmem" check --error-exitcode 9 -- sh -c 'exit 0'
expect 4 "nothing checked, --json: 4" "$ntmem" check --json -- sh -c 'exit 0'
err_names '"checked": "none", "not_checked": "no process loaded the checking library"}' \
	"--json: checked none, and why"

# --- checked in part ------------------------------------------------------

for mode in second many; do
	rm -rf "$tmp/d" && mkdir "$tmp/d"
	expect 4 "unwatched_maps $mode: 4" env PMEM_IS_PMEM_FORCE=1 \
		"$ntmem" check -- "$bindir/unwatched_maps" "$tmp/d" "$mode"
	err_names "^ntmem check: checked in part, 1 part of mappings not watched: 0 errors, 0 performance notes (pid [0-9]*)$" \
		"unwatched_maps $mode: the summary says checked in part"
	lacks "^ntmem check: 0 errors" "unwatched_maps $mode: never '0 errors' alone"
	rm -rf "$tmp/d" && mkdir "$tmp/d"
	expect 4 "unwatched_maps $mode, --json: 4" env PMEM_IS_PMEM_FORCE=1 \
		"$ntmem" check --json -- "$bindir/unwatched_maps" "$tmp/d" "$mode"
	err_names '"kind":"unwatched"' "unwatched_maps $mode, --json: the unwatched note"
	err_names '"checked": "part", "not_checked": "1 part of mappings not watched"}' \
		"unwatched_maps $mode, --json: checked part, and why"
done
err_names "many-256.pmem offset 0 length 4096: not watched: too many mappings" \
	"many: the mapping past the limit is named"
if [ "$(grep -c '"kind":"unwatched"' "$err")" -eq 1 ]; then
	ok "many: noted once"; else bad "many: noted more than once"; fi

# The same program, all of it watched: a checked run.
rm -rf "$tmp/d" && mkdir "$tmp/d"
expect 0 "missing_flush_fixed: checked, 0" env PMEM_IS_PMEM_FORCE=1 \
	"$ntmem" check --error-exitcode 9 -- "$bindir/missing_flush_fixed" "$tmp/d"
err_names "^ntmem check: 0 errors, 0 performance notes (pid [0-9]*)$" \
	"a checked run: 0 errors"
rm -rf "$tmp/d" && mkdir "$tmp/d"
expect 9 "missing_flush, --error-exitcode 9: 9" env PMEM_IS_PMEM_FORCE=1 \
	"$ntmem" check --error-exitcode 9 -- "$bindir/missing_flush" "$tmp/d"

exit $fail
