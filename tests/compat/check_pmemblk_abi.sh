#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_pmemblk_abi.sh LIBPMEMBLK_SO NTMEM_HEADER - ntmem's
# libpmemblk.so.1 has the ABI of Debian's (PMDK 1.12.1), and its
# libpmemblk.h PMDK's API:
#
#   - the dynamic symbol table defines exactly the 16 libpmemblk functions,
#     each a function in .text under the default version LIBPMEMBLK_1.0,
#     plus the LIBPMEMBLK_1.0 node, and nothing else; the SONAME is
#     libpmemblk.so.1 and LIBPMEMBLK_1.0 its only version definition;
#   - the same LIBPMEMBLK_1.0 set as Debian's library ($PMDK_LIBPMEMBLK);
#   - both headers, preprocessed ($CC -E, so _WIN32 branches drop out),
#     declare the same pmemblk_* functions;
#   - a program printing every constant, the sizes of the argument types
#     and calling each function through a pointer of PMDK's prototype
#     compiles against both headers and prints the same.
# Comparisons with Debian's files are skipped ("skip -") when those are
# not installed. Exit 0 pass, 1 fail, 77 skip (no objdump).
set -u
OBJDUMP=${OBJDUMP:-objdump}
CC=${CC:-cc}
pmdk_lib=${PMDK_LIBPMEMBLK:-/lib/x86_64-linux-gnu/libpmemblk.so.1}
pmdk_h=${PMDK_LIBPMEMBLK_H:-/usr/include/libpmemblk.h}
if ! command -v "$OBJDUMP" >/dev/null 2>&1; then
	echo "SKIP: $OBJDUMP not found"
	exit 77
fi
if [ $# -ne 2 ]; then
	echo "usage: $0 LIBPMEMBLK_SO NTMEM_HEADER" >&2
	exit 1
fi
lib=$1 ntmem_h=$2
# ok, bad; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
tmp=$(mktemp -d) || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT
skip() { echo "skip - $1"; }

funcs="pmemblk_check_version pmemblk_create pmemblk_open pmemblk_close
pmemblk_check pmemblk_bsize pmemblk_nblock pmemblk_read pmemblk_write
pmemblk_set_zero pmemblk_set_error pmemblk_set_funcs pmemblk_errormsg
pmemblk_ctl_get pmemblk_ctl_set pmemblk_ctl_exec"
for f in $funcs; do echo "$f"; done | sort >"$tmp/funcs"

defined() {
	"$OBJDUMP" -T "$1" >"$tmp/dyn" 2>&1 || return 1
	awk '/^[0-9a-f]+ / && $0 !~ /\*UND\*/ { print $(NF - 1), $NF }' \
		"$tmp/dyn" | sort >"$2"
}

{ echo "LIBPMEMBLK_1.0 LIBPMEMBLK_1.0"; sed 's/^/LIBPMEMBLK_1.0 /' "$tmp/funcs"; } |
	sort >"$tmp/want"
if ! defined "$lib" "$tmp/ours"; then
	bad "$OBJDUMP -T $lib"
elif cmp -s "$tmp/want" "$tmp/ours"; then
	ok "exports exactly the 16 functions @@LIBPMEMBLK_1.0 and the node"
	n=$(grep -c '^[0-9a-f]* g  *DF \.text.* LIBPMEMBLK_1\.0  *pmemblk_' "$tmp/dyn")
	if [ "$n" -eq 16 ]; then ok "all 16 are global functions in .text"
	else bad "$n of the 16 are global functions in .text"; fi
else
	bad "the dynamic symbol table differs from the 16 functions"
	comm -3 "$tmp/want" "$tmp/ours" | sed 's/^/#   /'
fi

if "$OBJDUMP" -p "$lib" >"$tmp/priv" 2>&1; then
	soname=$(awk '$1 == "SONAME" { print $2 }' "$tmp/priv")
	if [ "$soname" = libpmemblk.so.1 ]; then ok "SONAME is libpmemblk.so.1"
	else bad "SONAME is '$soname'"; fi
	defs=$(awk '/^Version definitions:/ { on = 1; next }
		    on && NF == 0 { on = 0 }
		    on && $1 ~ /^[0-9]+$/ && $2 != "0x01" { print $4 }' "$tmp/priv")
	if [ "$defs" = LIBPMEMBLK_1.0 ]; then ok "one version definition: LIBPMEMBLK_1.0"
	else bad "version definitions: '$defs'"; fi
else
	bad "$OBJDUMP -p $lib"
fi

if ! [ -f "$pmdk_lib" ]; then
	skip "PMDK's $pmdk_lib is not installed"
elif defined "$pmdk_lib" "$tmp/pmdk" &&
	cmp -s "$tmp/pmdk" "$tmp/ours"; then
	ok "the same LIBPMEMBLK_1.0 symbols as $pmdk_lib"
else
	bad "the symbols differ from $pmdk_lib's"
	comm -3 "$tmp/pmdk" "$tmp/ours" | sed 's/^/#   /'
fi

header_funcs() {
	# shellcheck disable=SC2086 # CC is words
	$CC -E -P -x c "$1" 2>"$err" | tr -s ' \t\n' '   ' |
		grep -o 'pmemblk_[A-Za-z0-9_]* *(' | tr -d ' (' | sort -u >"$2"
}
if ! [ -f "$pmdk_h" ]; then
	skip "PMDK's $pmdk_h is not installed"
else
	header_funcs "$pmdk_h" "$tmp/h_pmdk"
	header_funcs "$ntmem_h" "$tmp/h_ntmem"
	if [ -s "$tmp/h_ntmem" ] && cmp -s "$tmp/h_pmdk" "$tmp/h_ntmem" &&
		cmp -s "$tmp/funcs" "$tmp/h_ntmem"; then
		ok "both headers declare the 16 functions"
	else
		bad "the headers' functions differ"
		comm -3 "$tmp/h_pmdk" "$tmp/h_ntmem" | sed 's/^/#   /'
	fi
	# Each prototype assigned to a pointer of PMDK's exact type: a
	# different declaration does not compile.
	cat >"$tmp/print.c" <<'EOC'
#include <stdio.h>
#include HEADER
#define P(c) printf(#c " %llu %zu\n", (unsigned long long)(c), sizeof(c))
int main(void)
{
	const char *(*v)(unsigned, unsigned) = pmemblk_check_version;
	PMEMblkpool *(*o)(const char *, size_t) = pmemblk_open;
	PMEMblkpool *(*c)(const char *, size_t, size_t, mode_t) = pmemblk_create;
	int (*ck)(const char *, size_t) = pmemblk_check;
	void (*cl)(PMEMblkpool *) = pmemblk_close;
	size_t (*b)(PMEMblkpool *) = pmemblk_bsize, (*n)(PMEMblkpool *) = pmemblk_nblock;
	int (*r)(PMEMblkpool *, void *, long long) = pmemblk_read;
	int (*w)(PMEMblkpool *, const void *, long long) = pmemblk_write;
	int (*z)(PMEMblkpool *, long long) = pmemblk_set_zero, (*e)(PMEMblkpool *, long long) = pmemblk_set_error;
	void (*f)(void *(*)(size_t), void (*)(void *), void *(*)(void *, size_t),
		  char *(*)(const char *)) = pmemblk_set_funcs;
	const char *(*m)(void) = pmemblk_errormsg;
	int (*g)(PMEMblkpool *, const char *, void *) = pmemblk_ctl_get;
	int (*s)(PMEMblkpool *, const char *, void *) = pmemblk_ctl_set;
	int (*x)(PMEMblkpool *, const char *, void *) = pmemblk_ctl_exec;
	P(PMEMBLK_MAJOR_VERSION); P(PMEMBLK_MINOR_VERSION); P(PMEMBLK_MIN_POOL);
	P(PMEMBLK_MIN_PART); P(PMEMBLK_MIN_BLK);
	return !(v && o && c && ck && cl && b && n && r && w && z && e && f && m && g && s && x);
}
EOC
	# An instrumented library loads only after its ASan runtime.
	preload=
	if ldd "$lib" 2>/dev/null | grep -q 'libasan\.so'; then
		preload=$(ldd "$lib" | awk '/libasan\.so/ { print $3 }')
	fi
	for h in pmdk ntmem; do
		if [ $h = pmdk ]; then hdr=$pmdk_h; else hdr=$ntmem_h; fi
		# Warnings are errors in the compile only: the linker warns
		# about an instrumented library's runtime.
		# shellcheck disable=SC2086
		if $CC -Wall -Werror -DHEADER="\"$hdr\"" -c -o "$tmp/print_$h.o" \
			"$tmp/print.c" 2>"$err" &&
			$CC -o "$tmp/print_$h" "$tmp/print_$h.o" "$lib" 2>"$err" &&
			LD_LIBRARY_PATH="$(dirname "$lib")" LD_PRELOAD="$preload" \
			ASAN_OPTIONS=detect_leaks=0 "$tmp/print_$h" >"$tmp/c_$h" 2>"$err"; then
			ok "a program against the $h header compiles, links and runs on ntmem's library"
		else
			bad "the program against the $h header"; sed 's/^/# /' "$err"
		fi
	done
	if [ -s "$tmp/c_ntmem" ] && cmp -s "$tmp/c_pmdk" "$tmp/c_ntmem"; then
		ok "PMEMBLK_* constants: same values and types ($(wc -l <"$tmp/c_ntmem"))"
	else
		bad "the headers' constants differ"; diff "$tmp/c_pmdk" "$tmp/c_ntmem" | sed 's/^/#   /'
	fi
fi
exit $fail
