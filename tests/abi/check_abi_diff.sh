#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_abi_diff.sh - scripts/abi-check.sh can fail, and passes additions.
#
# usage: check_abi_diff.sh ABI_CHECK LIBNTMEM BROKEN [-H DIR]...
#
# BROKEN is libntmem linked again from the same objects under the same
# SONAME with a version script that lacks ntm_flush (tests/abi/meson.build).
# Against a baseline written from LIBNTMEM it must be refused, naming
# ntm_flush. The other way round - a baseline written from BROKEN, the
# real LIBNTMEM checked against it - ntm_flush is an addition and must
# pass. Both baselines are written here, so this runs on any
# architecture, with or without a committed baseline for it.
# Exit 0 pass, 1 fail, 77 skip (no abidiff: what abi-check.sh says).

set -u
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"

[ $# -ge 3 ] || { echo "usage: $0 ABI_CHECK LIBNTMEM BROKEN [-H DIR]..." >&2; exit 1; }
check=$1
lib=$2
broken=$3
shift 3
headers="$*"

if ! command -v abidiff >/dev/null 2>&1 || ! command -v abidw >/dev/null 2>&1; then
	echo "SKIP: abidiff/abidw not installed"
	exit 77
fi

scratch_dir abi-diff "${TMPDIR:-/tmp}"

# shellcheck disable=SC2086 # $headers: a list of -H DIR options
expect 0 "a baseline is written from the library" \
	sh "$check" $headers -w "$tmp/lib" "$lib"
# shellcheck disable=SC2086
expect 1 "the same library without ntm_flush fails against it" \
	sh "$check" $headers "$tmp/lib" "$broken"
sed 's/^/# /' "$out"
if grep -q '^FAIL: libntmem.so.0: ' "$out" &&
   grep -q "ntm_flush" "$out"; then
	ok "the report names the library and the removed ntm_flush"
else
	bad "the report names the library and the removed ntm_flush"
fi

# A changed type (abidiff's exit 4 only, not its incompatible 8): the
# baseline's struct ntm_memmap_config made 8 bytes shorter, as if the
# library had grown it.
mkdir -p "$tmp/short"
sed "s/\(<class-decl name='ntm_memmap_config' size-in-bits='\)\([0-9]*\)'/\1short\2'/" \
	"$tmp/lib/libntmem.so.0.abi" |
	awk '{ if (match($0, /short[0-9]+/)) {
		n = substr($0, RSTART + 5, RLENGTH - 5) - 64
		$0 = substr($0, 1, RSTART - 1) n substr($0, RSTART + RLENGTH) }
	       print }' >"$tmp/short/libntmem.so.0.abi"
# shellcheck disable=SC2086
expect 1 "a public struct of another size fails" \
	sh "$check" $headers "$tmp/short" "$lib"
sed 's/^/# /' "$out"
if grep -q '^FAIL: libntmem.so.0: removed or changed' "$out" &&
   grep -q "ntm_memmap_config" "$out"; then
	ok "the report names the changed struct"
else
	bad "the report names the changed struct"
fi

# shellcheck disable=SC2086
expect 0 "a baseline is written from the library without ntm_flush" \
	sh "$check" $headers -w "$tmp/broken" "$broken"
# shellcheck disable=SC2086
expect 0 "the library with ntm_flush passes against that baseline" \
	sh "$check" $headers "$tmp/broken" "$lib"
sed 's/^/# /' "$out"
if grep -q '^ok: libntmem.so.0: additions only' "$out" &&
   grep -q "ntm_flush" "$out"; then
	ok "it is an addition, and named"
else
	bad "it is an addition, and named"
fi

exit $fail
