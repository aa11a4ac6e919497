#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_pmem_abi.sh LIBPMEM_SO NTMEM_HEADER [PRINT_NTMEM [PRINT_PMDK]] -
# ntmem's libpmem.so.1 has PMDK's ABI, and its libpmem.h PMDK's API:
#
#   - the dynamic symbol table (objdump -T) defines exactly the 23 libpmem
#     functions, each under the default version LIBPMEM_1.0 (sym@@LIBPMEM_1.0;
#     objdump prints a hidden sym@LIBPMEM_1.0 in parentheses), plus the
#     LIBPMEM_1.0 version definition itself, and nothing else; LIBPMEM_1.0
#     is its only version definition besides the base one;
#   - the SONAME is libpmem.so.1 (objdump -p);
#   - the same LIBPMEM_1.0 function set as Debian's PMDK library
#     ($PMDK_LIBPMEM, default /lib/x86_64-linux-gnu/libpmem.so.1);
#   - ntmem's header and PMDK's ($PMDK_LIBPMEM_H, default
#     /usr/include/libpmem.h), run through the preprocessor ($CC -E, so
#     comments and _WIN32 branches drop out), declare the same pmem_*
#     function names;
#   - PRINT_NTMEM and PRINT_PMDK (pmem_abi_print.c built against each
#     header; it did not compile if a declaration or a prototype differs)
#     print the same flag and version constants, values and types.
#
# The comparisons with Debian's library and header are skipped, with a
# "skip -" line, when those are not installed.
# Exit 0 pass, 1 fail, 77 skip (no objdump).
set -u
OBJDUMP=${OBJDUMP:-objdump}
CC=${CC:-cc}
pmdk_lib=${PMDK_LIBPMEM:-/lib/x86_64-linux-gnu/libpmem.so.1}
pmdk_h=${PMDK_LIBPMEM_H:-/usr/include/libpmem.h}

if ! command -v "$OBJDUMP" >/dev/null 2>&1; then
	echo "SKIP: $OBJDUMP not found"
	exit 77
fi
if [ $# -lt 2 ] || [ $# -gt 4 ]; then
	echo "usage: $0 LIBPMEM_SO NTMEM_HEADER [PRINT_NTMEM [PRINT_PMDK]]" >&2
	exit 1
fi
lib=$1 ntmem_h=$2 print_ntmem=${3:-} print_pmdk=${4:-}
# ok, bad; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
tmp=$(mktemp -d) || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT

skip() { echo "skip - $1"; }

# The 23 functions of PMDK's libpmem.so.1, sorted.
for f in pmem_map_file pmem_unmap pmem_is_pmem pmem_flush pmem_drain \
	pmem_persist pmem_msync pmem_has_hw_drain pmem_has_auto_flush \
	pmem_deep_flush pmem_deep_drain pmem_deep_persist pmem_memcpy \
	pmem_memmove pmem_memset pmem_memcpy_nodrain pmem_memcpy_persist \
	pmem_memmove_nodrain pmem_memmove_persist pmem_memset_nodrain \
	pmem_memset_persist pmem_check_version pmem_errormsg; do
	echo "$f"
done | sort >"$tmp/funcs"

# defined LIB OUT: "VERSION SYMBOL" of every symbol LIB defines (the last
# two fields of objdump -T; undefined imports skipped).
defined() {
	if ! "$OBJDUMP" -T "$1" >"$tmp/dyn" 2>&1; then
		sed 's/^/# /' "$tmp/dyn"
		return 1
	fi
	awk '/^[0-9a-f]+ / && $0 !~ /\*UND\*/ { print $(NF - 1), $NF }' \
		"$tmp/dyn" | sort >"$2"
}

# --- exports -------------------------------------------------------------

{
	echo "LIBPMEM_1.0 LIBPMEM_1.0"
	sed 's/^/LIBPMEM_1.0 /' "$tmp/funcs"
} | sort >"$tmp/want"
: >"$tmp/ours"
if ! [ -f "$lib" ]; then
	bad "$lib does not exist"
elif ! defined "$lib" "$tmp/ours"; then
	bad "$OBJDUMP -T $lib"
elif cmp -s "$tmp/want" "$tmp/ours"; then
	ok "exports exactly the 23 functions @@LIBPMEM_1.0 and the node"
else
	bad "the dynamic symbol table differs from the 23 @@LIBPMEM_1.0 functions"
	comm -23 "$tmp/want" "$tmp/ours" | sed 's/^/#   missing: /'
	comm -13 "$tmp/want" "$tmp/ours" | sed 's/^/#   extra: /'
fi
if [ -f "$lib" ] && [ -s "$tmp/ours" ]; then
	# Functions (DF), not data or anything else.
	n=$(grep -c '^[0-9a-f]* g  *DF \.text.* LIBPMEM_1\.0  *pmem_' "$tmp/dyn")
	if [ "$n" -eq 23 ]; then ok "all 23 are global functions in .text"
	else bad "$n of the 23 are global functions in .text (DF .text)"; fi
fi

# --- SONAME and version definitions --------------------------------------

if ! [ -f "$lib" ]; then
	: # already reported
elif "$OBJDUMP" -p "$lib" >"$tmp/priv" 2>&1; then
	soname=$(awk '$1 == "SONAME" { print $2 }' "$tmp/priv")
	if [ "$soname" = libpmem.so.1 ]; then ok "SONAME is libpmem.so.1"
	else bad "SONAME is '$soname', expected libpmem.so.1"; fi
	# "Version definitions:" lines are "INDEX FLAGS HASH NAME"; flag 0x01
	# marks the base definition (the file's own name).
	defs=$(awk '/^Version definitions:/ { on = 1; next }
		    on && NF == 0 { on = 0 }
		    on && $1 ~ /^[0-9]+$/ && $2 != "0x01" { print $4 }' "$tmp/priv")
	if [ "$defs" = LIBPMEM_1.0 ]; then ok "one version definition: LIBPMEM_1.0"
	else bad "version definitions: '$(echo "$defs" | tr '\n' ' ')', expected LIBPMEM_1.0"; fi
else
	bad "$OBJDUMP -p $lib"
fi

# --- Debian's PMDK library -----------------------------------------------

if ! [ -f "$pmdk_lib" ]; then
	skip "PMDK's $pmdk_lib is not installed: no comparison with it"
elif ! defined "$pmdk_lib" "$tmp/pmdk"; then
	bad "$OBJDUMP -T $pmdk_lib"
else
	grep '^LIBPMEM_1\.0 pmem_' "$tmp/pmdk" >"$tmp/pmdk_funcs"
	grep '^LIBPMEM_1\.0 pmem_' "$tmp/ours" >"$tmp/our_funcs"
	if cmp -s "$tmp/pmdk_funcs" "$tmp/our_funcs"; then
		ok "the LIBPMEM_1.0 functions of $pmdk_lib ($(wc -l <"$tmp/pmdk_funcs"))"
	else
		bad "the LIBPMEM_1.0 functions differ from $pmdk_lib's"
		comm -23 "$tmp/pmdk_funcs" "$tmp/our_funcs" | sed 's/^/#   only PMDK: /'
		comm -13 "$tmp/pmdk_funcs" "$tmp/our_funcs" | sed 's/^/#   only ntmem: /'
	fi
fi

# --- headers -------------------------------------------------------------

# header_funcs HEADER OUT: the pmem_* names HEADER declares as functions,
# after preprocessing (comments, macros and #ifdef _WIN32 branches gone).
header_funcs() {
	# shellcheck disable=SC2086 # CC and the flags are words
	$CC ${PMEM_ABI_CPPFLAGS:-} -E -P -x c "$1" >"$tmp/pp" 2>"$err" ||
		return 1
	tr -s ' \t\n' '   ' <"$tmp/pp" |
		grep -o 'pmem_[A-Za-z0-9_]* *(' | tr -d ' (' | sort -u >"$2"
}

if ! [ -f "$ntmem_h" ]; then
	bad "ntmem's header $ntmem_h does not exist"
elif ! [ -f "$pmdk_h" ]; then
	skip "PMDK's $pmdk_h is not installed: no header comparison"
elif ! command -v "${CC%% *}" >/dev/null 2>&1; then
	skip "no C compiler ($CC) to preprocess the headers"
elif ! header_funcs "$pmdk_h" "$tmp/h_pmdk"; then
	bad "$CC -E $pmdk_h"; sed 's/^/# /' "$err"
elif ! header_funcs "$ntmem_h" "$tmp/h_ntmem"; then
	bad "$CC -E $ntmem_h"; sed 's/^/# /' "$err"
else
	if cmp -s "$tmp/h_pmdk" "$tmp/h_ntmem"; then
		ok "both headers declare the same $(wc -l <"$tmp/h_ntmem") pmem_* functions"
	else
		bad "the headers declare different pmem_* functions"
		comm -23 "$tmp/h_pmdk" "$tmp/h_ntmem" | sed 's/^/#   only PMDK: /'
		comm -13 "$tmp/h_pmdk" "$tmp/h_ntmem" | sed 's/^/#   only ntmem: /'
	fi
	if cmp -s "$tmp/funcs" "$tmp/h_ntmem"; then
		ok "ntmem's header declares the 23 exported functions"
	else
		bad "ntmem's header and the 23 exported functions differ"
		comm -3 "$tmp/funcs" "$tmp/h_ntmem" | sed 's/^/#   /'
	fi
fi

# --- constants (pmem_abi_print) ------------------------------------------

if [ -z "$print_ntmem" ]; then
	skip "pmem_abi_print against ntmem's header was not built"
elif ! "$print_ntmem" >"$tmp/c_ntmem" 2>"$err"; then
	bad "$print_ntmem failed"; sed 's/^/# /' "$err"
elif [ -z "$print_pmdk" ]; then
	skip "pmem_abi_print against PMDK's header was not built (no libpmem.h)"
	if grep -q undefined "$tmp/c_ntmem"; then
		bad "ntmem's header lacks: $(grep undefined "$tmp/c_ntmem" | tr '\n' ' ')"
	fi
elif ! "$print_pmdk" >"$tmp/c_pmdk" 2>"$err"; then
	bad "$print_pmdk failed"; sed 's/^/# /' "$err"
elif cmp -s "$tmp/c_pmdk" "$tmp/c_ntmem"; then
	ok "PMEM_* constants: same values and types ($(grep -c ' [0-9-]' "$tmp/c_ntmem")), 23 prototypes"
else
	bad "the headers' constants differ (PMDK < > ntmem)"
	diff "$tmp/c_pmdk" "$tmp/c_ntmem" | grep '^[<>]' | sed 's/^/#   /'
fi

exit $fail
