#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_pmem2_exports.sh DROPIN_SO MAP - ntmem's libpmem2.so.1:
#   - its SONAME is libpmem2.so.1;
#   - the functions it defines are exactly those of its version script,
#     each under LIBPMEM2_1.0, its only version definition;
#   - they are a subset of Debian's libpmem2.so.1 LIBPMEM2_1.0 set
#     ($PMDK_LIBPMEM2; skipped, with a "skip -" line, when not installed),
#     and all of them: none of Debian's is missing.
# Exit 0 pass, 1 fail, 77 skip (no objdump).
set -u
OBJDUMP=${OBJDUMP:-objdump}
pmdk=${PMDK_LIBPMEM2:-/usr/lib/x86_64-linux-gnu/libpmem2.so.1}
if ! command -v "$OBJDUMP" >/dev/null 2>&1; then
	echo "SKIP: $OBJDUMP not found"
	exit 77
fi
if [ $# -ne 2 ]; then
	echo "usage: $0 DROPIN_SO MAP" >&2
	exit 1
fi
lib=$1 map=$2
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

# defined LIB: "VERSION SYMBOL" of what LIB defines (imports skipped).
defined() {
	"$OBJDUMP" -T "$1" | awk '$2 ~ /g/ && $4 != "*UND*" { print $(NF-1), $NF }' |
		sort
}

soname=$("$OBJDUMP" -p "$lib" | awk '$1 == "SONAME" { print $2 }')
if [ "$soname" = libpmem2.so.1 ]; then
	echo "ok - SONAME libpmem2.so.1"
else
	echo "not ok - SONAME is '$soname'"; fail=1
fi

# The map's names: the lines between "global:" and "local:".
sed -n '/global:/,/local:/p' "$map" | sed -n 's/^[[:space:]]*\(pmem2_[a-z_0-9]*\);.*/\1/p' |
	sort >"$tmp/map"
defined "$lib" >"$tmp/defined"
awk '$2 != "LIBPMEM2_1.0" { print $2 }' "$tmp/defined" >"$tmp/funcs"
if awk '$1 != "LIBPMEM2_1.0" { bad = 1 } END { exit bad }' "$tmp/defined"; then
	echo "ok - every definition under LIBPMEM2_1.0"
else
	echo "not ok - definitions outside LIBPMEM2_1.0:"
	awk '$1 != "LIBPMEM2_1.0"' "$tmp/defined"; fail=1
fi
if diff -u "$tmp/map" "$tmp/funcs" >"$tmp/diff"; then
	echo "ok - exports equal libpmem2.map ($(wc -l <"$tmp/map") functions)"
else
	echo "not ok - exports differ from libpmem2.map (- map, + exported):"
	cat "$tmp/diff"; fail=1
fi

if [ ! -r "$pmdk" ]; then
	echo "skip - Debian's libpmem2.so.1 is not installed ($pmdk)"
	exit $fail
fi
defined "$pmdk" | awk '$1 == "LIBPMEM2_1.0" && $2 != "LIBPMEM2_1.0" { print $2 }' \
	>"$tmp/pmdk"
extra=$(comm -23 "$tmp/funcs" "$tmp/pmdk")
if [ -z "$extra" ]; then
	echo "ok - a subset of Debian's LIBPMEM2_1.0 ($(wc -l <"$tmp/pmdk") functions)"
else
	echo "not ok - exported, but not in Debian's LIBPMEM2_1.0: $extra"; fail=1
fi
missing=$(comm -13 "$tmp/funcs" "$tmp/pmdk")
if [ -z "$missing" ]; then
	echo "ok - every one of Debian's $(wc -l <"$tmp/pmdk") exported"
else
	echo "not ok - Debian's, not exported:" $missing; fail=1
fi
exit $fail
