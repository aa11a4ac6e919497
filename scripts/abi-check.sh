#!/bin/sh
# SPDX-License-Identifier: MIT
#
# abi-check.sh - the ABI of built shared libraries against a release's
# baseline (abi/<version>/<arch>/<SONAME>.abi), with abigail-tools.
#
# usage: abi-check.sh [-H HEADERS_DIR]... BASELINE_DIR LIB...
#        abi-check.sh [-H HEADERS_DIR]... -r ABI_ROOT -a ARCH LIB...
#        abi-check.sh [-H HEADERS_DIR]... -w OUT_DIR LIB...
#
# Each LIB is compared with <its SONAME>.abi in BASELINE_DIR; -r takes the
# highest version under ABI_ROOT (abi/) and its ARCH directory. -w writes
# those files instead (scripts/abi-baseline.sh does, for a tagged release),
# so the baseline and the check read a library the same way: abidw, from
# its debug info, with the types of the public headers (-H: every
# directory holding them) and not the library's private ones. A struct a
# public header only declares (struct ntm_ns, struct ntm_variant) may
# change inside; what a caller can see may not.
#
# Incompatible, exit 1: abidiff's incompatible bit (8), a removed function
# or variable or ELF symbol, a changed one (a parameter, a return type, a
# public struct it reaches), a changed SONAME. Additions alone are
# compatible: they are printed and pass. A change the project decides is
# compatible (a reserved word given a meaning) goes into a suppression
# file passed with -s (libabigail's [suppress_type] syntax); -s may be
# given more than once.
#
# Needs the libraries built with debug info (-g; meson's default
# debugoptimized has it). Exit 0 pass, 1 fail, 77 skip (abidiff or abidw
# not installed, or no baseline for ARCH).

set -u

usage() {
	sed -n 's/^# usage: /usage: /p; s/^#        /       /p' "$0" >&2
	exit 2
}

headers=
suppr=
root=
arch=
out=
while getopts H:r:a:w:s: opt; do
	case $opt in
	H) headers="$headers --headers-dir $OPTARG" ;;
	r) root=$OPTARG ;;
	a) arch=$OPTARG ;;
	w) out=$OPTARG ;;
	s) suppr="$suppr --suppressions $OPTARG" ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))

for tool in abidw abidiff objdump; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "SKIP: $tool not found (Debian: apt-get install abigail-tools)"
		exit 77
	fi
done

if [ -n "$out" ]; then
	base=$out
elif [ -n "$root" ]; then
	[ -n "$arch" ] || usage
	# The newest release: version directories in version order (the
	# root also holds other files, such as opaque.suppr).
	# shellcheck disable=SC2012 # version numbers: no odd file names
	version=$(ls "$root" 2>/dev/null | grep -E '^[0-9]+(\.[0-9]+)*$' |
		  sort -V | tail -n 1)
	base=$root/$version/$arch
	if [ -z "$version" ] || [ ! -d "$base" ]; then
		echo "SKIP: no ABI baseline for $arch under $root"
		exit 77
	fi
else
	[ $# -ge 1 ] || usage
	base=$1
	shift
fi
[ $# -ge 1 ] || usage

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# One way to read a library, for the baseline and the check alike. No
# locations and no paths: the file must not change when a line moves or
# the tree is built elsewhere.
abi_dump() {
	# shellcheck disable=SC2086 # $headers is a list of options
	abidw $headers --drop-private-types --no-corpus-path \
	      --no-comp-dir-path --no-show-locs --out-file "$2" "$1"
}

soname_of() {
	objdump -p "$1" | awk '$1 == "SONAME" { print $2 }'
}

# "Functions changes summary: 1 Removed, 2 Changed (3 filtered out), 4
# Added functions" and the like: the sum of the Removed and Changed counts.
removed_or_changed() {
	sed -n 's/.*changes summary: //p' "$1" |
		awk '{ for (i = 2; i <= NF; i++)
			 if ($i ~ /^Removed/ || $i ~ /^Changed/) n += $(i - 1) }
		     END { print n + 0 }'
}

status=0
if [ -n "$out" ]; then
	mkdir -p "$out" || exit 1
fi
for lib in "$@"; do
	soname=$(soname_of "$lib")
	if [ -z "$soname" ]; then
		echo "FAIL: $lib: no SONAME (not a shared library?)"
		status=1
		continue
	fi
	if ! objdump -h "$lib" | grep -q '\.debug_info'; then
		echo "FAIL: $lib has no debug info: build it with -g"
		status=1
		continue
	fi
	if [ -n "$out" ]; then
		if abi_dump "$lib" "$out/$soname.abi"; then
			echo "wrote $out/$soname.abi"
		else
			echo "FAIL: abidw $lib"
			status=1
		fi
		continue
	fi
	if [ ! -f "$base/$soname.abi" ]; then
		echo "FAIL: $lib: no baseline $base/$soname.abi"
		status=1
		continue
	fi
	if ! abi_dump "$lib" "$tmp/$soname.abi"; then
		echo "FAIL: abidw $lib"
		status=1
		continue
	fi
	# shellcheck disable=SC2086 # $suppr is a list of options
	abidiff $suppr "$base/$soname.abi" \
		"$tmp/$soname.abi" >"$tmp/diff" 2>&1
	rc=$?
	# abidiff's exit status is a bit set: 1 error, 2 usage, 4 a change,
	# 8 a change it knows is incompatible.
	why=
	if [ $((rc & 3)) -ne 0 ]; then
		why="abidiff failed (exit $rc)"
	elif [ $((rc & 8)) -ne 0 ]; then
		why="incompatible change"
	elif [ $((rc & 4)) -ne 0 ]; then
		if [ "$(removed_or_changed "$tmp/diff")" -ne 0 ]; then
			why="removed or changed interfaces"
		elif grep -q 'SONAME changed' "$tmp/diff"; then
			why="SONAME changed"
		fi
	fi
	if [ -n "$why" ]; then
		echo "FAIL: $soname: $why against $base/$soname.abi"
		status=1
	elif [ $((rc & 4)) -ne 0 ]; then
		echo "ok: $soname: additions only against $base/$soname.abi"
	else
		echo "ok: $soname: same ABI as $base/$soname.abi"
	fi
	sed 's/^/    /' "$tmp/diff"
done
exit $status
