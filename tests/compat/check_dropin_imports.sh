#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_dropin_imports.sh LIBPMEM_SO LIBPMEMBLK_SO [WATCH_SO [LIBPMEM2_SO]] -
# the drop-ins call libc
# by the names PMDK's libraries call it: no drop-in imports NAME64 (the
# large-file twin _FILE_OFFSET_BITS=64 redirects NAME to) where Debian's
# library of the same SONAME imports NAME. On LP64 the two are one
# function, but a mock or an LD_PRELOAD shim written for PMDK defines NAME
# and would never see the drop-in's calls (ftruncate, posix_fallocate,
# open, mmap, fstat, ...). WATCH_SO, ntmem check's library, is a libpmem
# and a libpmem2 too: programs load it as either under the checker.
#
# Debian's libraries are looked for in /lib/$($CC -print-multiarch)
# ($PMDK_LIBPMEM, $PMDK_LIBPMEMBLK, $PMDK_LIBPMEM2 override); a drop-in whose PMDK twin is
# not installed is skipped. Exit 0 pass, 1 fail, 77 skip (no nm, or
# neither of Debian's libraries).
set -u
export LC_ALL=C # one collation for sort and join
NM=${NM:-nm}
CC=${CC:-cc}
if ! command -v "$NM" >/dev/null 2>&1; then
	echo "SKIP: $NM not found"
	exit 77
fi
if [ $# -lt 2 ] || [ $# -gt 4 ]; then
	echo "usage: $0 LIBPMEM_SO LIBPMEMBLK_SO [WATCH_SO [LIBPMEM2_SO]]" >&2
	exit 1
fi
# ok, bad; fail, $out, $err
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
tmp=$(mktemp -d) || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT

# shellcheck disable=SC2086 # CC may be a command with arguments
multiarch=$($CC -print-multiarch 2>/dev/null)
pmdk_dir=/lib/${multiarch:-x86_64-linux-gnu}

# imports LIB FILE: the names LIB imports (dynamic, undefined), without
# their versions, sorted.
imports() {
	"$NM" -D --undefined-only "$1" >"$out" 2>"$err" || return 1
	awk '{ sub(/@.*/, "", $NF); print $NF }' "$out" | sort -u >"$2"
}

# compare NAME OURS PMDK: every NAME64 OURS imports whose plain NAME PMDK
# imports is a failure; the names checked are listed.
compare() {
	name=$1 ours=$2 pmdk=$3
	label="$name ($(basename "$ours"))"
	if ! [ -f "$pmdk" ]; then
		echo "skip - $name: $pmdk is not installed (apt-get install ${name}1)"
		return 77
	fi
	if ! imports "$ours" "$tmp/ours"; then
		bad "$label: $NM -D $ours"; sed 's/^/# /' "$err"; return 1
	fi
	if ! imports "$pmdk" "$tmp/pmdk"; then
		bad "$label: $NM -D $pmdk"; sed 's/^/# /' "$err"; return 1
	fi
	# NAME64 of ours, as "NAME NAME64"; joined with PMDK's plain names.
	sed -n 's/^\(.*[^0-9_]\)64$/\1 &/p' "$tmp/ours" | sort >"$tmp/ours64"
	join "$tmp/ours64" "$tmp/pmdk" >"$tmp/clash"
	if [ -s "$tmp/clash" ]; then
		bad "$label: imports the large-file names of what PMDK imports plain"
		awk '{ print "# " $2 " (PMDK: " $1 ")" }' "$tmp/clash"
	else
		ok "$label: no NAME64 import where PMDK's imports NAME ($(wc -l \
			<"$tmp/ours64" | tr -d ' ') *64 imports in all)"
	fi
	return 0
}

checked=0
compare libpmem "$1" "${PMDK_LIBPMEM:-$pmdk_dir/libpmem.so.1}" && checked=1
compare libpmemblk "$2" "${PMDK_LIBPMEMBLK:-$pmdk_dir/libpmemblk.so.1}" &&
	checked=1
if [ $# -ge 3 ]; then
	compare libpmem "$3" "${PMDK_LIBPMEM:-$pmdk_dir/libpmem.so.1}" &&
		checked=1
fi
if [ $# -eq 4 ]; then
	compare libpmem2 "$4" "${PMDK_LIBPMEM2:-$pmdk_dir/libpmem2.so.1}" &&
		checked=1
	compare libpmem2 "$3" "${PMDK_LIBPMEM2:-$pmdk_dir/libpmem2.so.1}" &&
		checked=1
fi
if [ "$checked" -eq 0 ] && [ "$fail" -eq 0 ]; then
	echo "SKIP: neither of Debian's libraries is installed"
	exit 77
fi
exit $fail
