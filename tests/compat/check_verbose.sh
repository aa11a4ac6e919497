#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_verbose.sh LIB_PROBE PMEM_PROBE PMEMBLK_PROBE - NTMEM_VERBOSE means
# the same in the library and in both drop-ins (verbose_probe.c): 1, yes,
# true, on in any case print each one's line; 0, no, false, off, empty
# print nothing; any other word prints nothing but the library's one
# warning line naming it. (The libpmem drop-in used to read it with
# atoi(), so "yes" was on in the library and off there.)
set -u
. "$(dirname "$0")/../lib/cli_lib.sh"

lib=$1 pmem=$2 blk=$3
dir=$(mktemp -d)
trap 'rm -f "$out" "$err"; rm -rf "$dir"' EXIT

# err_lacks TEXT DESCRIPTION: stderr of the last command does not contain TEXT.
err_lacks() {
	if grep -q -- "$1" "$err"; then bad "$2: stderr has '$1'"
		sed 's/^/# /' "$err"; else ok "$2"; fi
}

# run VALUE: each probe under NTMEM_VERBOSE=VALUE; then checks on $err of
# each: $lib_err, $pmem_err, $blk_err.
run() {
	expect 0 "library, NTMEM_VERBOSE='$1'" env NTMEM_VERBOSE="$1" "$lib"
	cp "$err" "$dir/lib.err"; cp "$out" "$dir/lib.out"
	expect 0 "libpmem, NTMEM_VERBOSE='$1'" env NTMEM_VERBOSE="$1" "$pmem"
	cp "$err" "$dir/pmem.err"
	rm -f "$dir/pool"
	expect 0 "libpmemblk, NTMEM_VERBOSE='$1'" env NTMEM_VERBOSE="$1" \
		"$blk" "$dir/pool"
	cp "$err" "$dir/blk.err"
}

# has FILE TEXT DESCRIPTION / lacks FILE TEXT DESCRIPTION
has() { cp "$1" "$err"; err_names "$2" "$3"; }
lacks() { cp "$1" "$err"; err_lacks "$2" "$3"; }

for v in 1 yes YES true True on ON; do
	run "$v"
	has "$dir/lib.err" "copy variant" "library verbose with '$v'"
	if [ "$(sort -u "$dir/lib.out")" = "verbose 1" ]; then
		ok "ntm_verbose() is 1 with '$v'"
	else bad "ntm_verbose() with '$v': $(tr '\n' ' ' <"$dir/lib.out")"; fi
	has "$dir/pmem.err" "ntmem libpmem " "libpmem verbose with '$v'"
	has "$dir/blk.err" "ntmem libpmemblk " "libpmemblk verbose with '$v'"
	for f in lib pmem blk; do
		lacks "$dir/$f.err" "ignored" "$f: no warning with '$v'"
	done
done

for v in 0 no NO false off OFF ""; do
	run "$v"
	for f in lib pmem blk; do
		if [ -s "$dir/$f.err" ]; then
			bad "$f prints with '$v'"; sed 's/^/# /' "$dir/$f.err"
		else ok "$f silent with '$v'"; fi
	done
	if [ "$(sort -u "$dir/lib.out")" = "verbose 0" ]; then
		ok "ntm_verbose() is 0 with '$v'"
	else bad "ntm_verbose() with '$v': $(tr '\n' ' ' <"$dir/lib.out")"; fi
done

for v in 2 y enable verbose; do
	run "$v"
	for f in lib pmem blk; do
		has "$dir/$f.err" "NTMEM_VERBOSE=$v ignored" "$f warns about '$v'"
		lacks "$dir/$f.err" "copy variant" "$f: '$v' is off"
		if [ "$(grep -c . "$dir/$f.err")" -eq 1 ]; then
			ok "$f: one line for '$v'"
		else bad "$f: more than one line for '$v'"
			sed 's/^/# /' "$dir/$f.err"; fi
	done
	lacks "$dir/pmem.err" "ntmem libpmem " "libpmem: '$v' is off"
	lacks "$dir/blk.err" "ntmem libpmemblk " "libpmemblk: '$v' is off"
done

exit $fail
