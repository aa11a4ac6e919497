#!/bin/sh
# SPDX-License-Identifier: MIT
#
# abi-baseline.sh - write the ABI baseline of a release: the tree of TAG
# is built (debugoptimized: abidw reads the debug info) in a scratch
# directory, and scripts/abi-check.sh -w of this tree dumps its libraries
# into abi/<version>/<arch>/<SONAME>.abi, the files the abi_diff test
# compares every later build with.
#
# usage: scripts/abi-baseline.sh [-o ABI_ROOT] TAG
#
# TAG: any git revision (a release tag; HEAD for the committed tree).
# <version> is TAG without a leading "v", or the tree's project version
# when TAG names no version (HEAD). <arch> is this machine's cpu family
# (uname -m). ABI_ROOT defaults to abi/ of this tree. Commit the files it
# writes; the check uses the highest version under abi/. Needs meson,
# ninja and abigail-tools, as the build and the check do.

set -eu

usage() {
	echo "usage: $0 [-o ABI_ROOT] TAG" >&2
	exit 2
}

here=$(cd "$(dirname "$0")/.." && pwd)
root=$here/abi
while getopts o: opt; do
	case $opt in
	o) root=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
tag=$1

git -C "$here" rev-parse --verify -q "$tag^{commit}" >/dev/null ||
	{ echo "$0: $tag: no such revision" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src"
git -C "$here" archive "$tag" | tar -x -C "$tmp/src"

version=${tag#v}
case $version in
[0-9]*.[0-9]*) ;;
*)	version=$(sed -n "s/^ *version: *'\([0-9][0-9.]*\)'.*/\1/p" \
		"$tmp/src/meson.build" | head -n 1) ;;
esac
[ -n "$version" ] || { echo "$0: no version for $tag" >&2; exit 1; }

# Only the libraries: no tests, no tool.
meson setup "$tmp/build" "$tmp/src" --buildtype=debugoptimized \
	-Dtests=disabled -Dtools=false >"$tmp/setup.log" 2>&1 ||
	{ cat "$tmp/setup.log" >&2; exit 1; }
ninja -C "$tmp/build" >"$tmp/build.log" 2>&1 ||
	{ tail -n 30 "$tmp/build.log" >&2; exit 1; }
# meson's cpu family of a native build: uname -m on the Linux machines
# ntmem builds for (x86_64, aarch64).
arch=$(uname -m)

libs=
# libntmem-check.so.0: in src/ up to 0.1.0, in src/record after it.
for l in src/libntmem.so.0 src/libntmem-check.so.0 src/record/libntmem-check.so.0 \
	 compat/libpmem/libpmem.so.1 compat/libpmemblk/libpmemblk.so.1; do
	[ -e "$tmp/build/$l" ] && libs="$libs $tmp/build/$l"
done
headers="-H $tmp/src/include/ntmem -H $tmp/build/include/ntmem"
for d in libpmem libpmemblk; do
	headers="$headers -H $tmp/src/compat/$d/include"
done

out=$root/$version/$arch
rm -rf "$out"
# shellcheck disable=SC2086 # lists of options and files
sh "$here/scripts/abi-check.sh" $headers -w "$out" $libs
echo "baseline of $tag ($(git -C "$here" rev-parse --short "$tag^{commit}")) in $out"
