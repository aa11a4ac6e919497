#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_pmem2_interop.sh INTEROP DROPIN_DIR - pmem2_interop (built against
# PMDK's <libpmem2.h>, linked with -lpmem2) prints the same lines on
# Debian's libpmem2.so.1 and on ntmem's drop-in (DROPIN_DIR first on
# LD_LIBRARY_PATH), with PMEM2_FORCE_GRANULARITY unset and set to each
# value PMDK reads (and one it ignores).
# Exit 0 pass, 1 fail, 77 skip (no PMDK libpmem2, or no interop build).
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 INTEROP DROPIN_DIR" >&2
	exit 1
fi
prog=$1 dropin=$2
if [ ! -x "$prog" ]; then
	echo "SKIP: libpmem2-dev is not installed"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
for force in unset BYTE cache_line CACHELINE page bogus; do
	if [ "$force" = unset ]; then
		set -- env -u PMEM2_FORCE_GRANULARITY
	else
		set -- env PMEM2_FORCE_GRANULARITY="$force"
	fi
	if ! "$@" "$prog" "$tmp" >"$tmp/pmdk.out" 2>&1; then
		echo "not ok - PMDK run ($force) failed:"; cat "$tmp/pmdk.out"
		fail=1; continue
	fi
	if ! "$@" LD_LIBRARY_PATH="$dropin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	     "$prog" "$tmp" >"$tmp/ntmem.out" 2>&1; then
		echo "not ok - drop-in run ($force) failed:"; cat "$tmp/ntmem.out"
		fail=1; continue
	fi
	if diff -u "$tmp/pmdk.out" "$tmp/ntmem.out"; then
		echo "ok - PMEM2_FORCE_GRANULARITY=$force: $(wc -l <"$tmp/ntmem.out") lines the same"
	else
		echo "not ok - PMEM2_FORCE_GRANULARITY=$force: outputs differ (- PMDK, + ntmem)"
		fail=1
	fi
done
exit $fail
