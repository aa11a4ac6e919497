# shellcheck shell=sh disable=SC2034 # fail, out and err are for the caller
# SPDX-License-Identifier: MIT
#
# cli_lib.sh - helpers for the shell checks of the ntmem command, sourced
# by check_cli.sh and check_cli_memmap.sh (after `set -u`). Each check
# prints "ok - ..." or "not ok - ..." and sets fail=1 on the first failure;
# the script ends with `exit $fail`. $out and $err hold the last command's
# stdout and stderr and are removed on exit.

fail=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fail=1; }

# expect STATUS DESCRIPTION CMD...: run, compare the exit status.
expect() {
	want=$1 what=$2
	shift 2
	"$@" >"$out" 2>"$err"
	got=$?
	if [ "$got" -eq "$want" ]; then ok "$what"; else
		bad "$what: exit $got, expected $want"; sed 's/^/# /' "$err"; fi
}

# err_names TEXT DESCRIPTION: stderr of the last command contains TEXT.
err_names() {
	if grep -q -- "$1" "$err"; then ok "$2"; else
		bad "$2: stderr lacks '$1'"; sed 's/^/# /' "$err"; fi
}

json_ok() {
	if python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$out" 2>"$err"; then
		ok "$1"; else bad "$1: not JSON"; sed 's/^/# /' "$err"; fi
}

# require_fio ENGINE: $fio is the system's fio, as installed (meson puts the
# build's library directories in LD_LIBRARY_PATH; an instrumented library
# would not even load here), with ENGINE; else the script skips (77).
require_fio() {
	fio=$(command -v fio) || { echo "SKIP: fio not found (apt-get install fio)"; exit 77; }
	if ! env -u LD_LIBRARY_PATH -u LD_PRELOAD "$fio" --enghelp 2>/dev/null |
		grep -qw "$1"; then
		echo "SKIP: $fio has no $1 engine"
		exit 77
	fi
}

# checking_asan: whether the checking library of `ntmem check`
# (NTMEM_CHECK_LIBDIR) is built with ASan. Then `ntmem check` preloads its
# shim ahead of the ASan runtime the programs link, an order ASan refuses
# unless told not to check: ASAN_OPTIONS says so (exported; the caller's
# own options come last and win).
checking_asan() {
	[ -n "${NTMEM_CHECK_LIBDIR:-}" ] &&
		ldd "$NTMEM_CHECK_LIBDIR/libntmem-watch.so.0" 2>/dev/null |
		grep -q 'libasan\.so' || return 1
	ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
	export ASAN_OPTIONS
}

# scratch_dir NAME [BASE]: $tmp, a fresh directory NAME-XXXXXX in BASE
# (default /dev/shm, tmpfs as emulated pmem usually is, or $TMPDIR when
# that is not writable), removed with $out and $err on exit.
scratch_dir() {
	base=${2:-/dev/shm}
	[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
	tmp=$(mktemp -d "$base/$1-XXXXXX") || exit 1
	trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT
}
