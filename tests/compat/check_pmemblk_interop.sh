#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_pmemblk_interop.sh TOOL_NTMEM TOOL_PMDK - pools move between
# ntmem's libpmemblk.so.1 and Debian's (PMDK 1.12.1) both ways, and
# Debian's pmempool accepts ntmem's pools.
#
# TOOL_NTMEM and TOOL_PMDK are pmemblk_tool.c built against PMDK's header
# and linked with ntmem's drop-in and with Debian's library; `which`
# proves each runs on the library it should. For block sizes 512 and 4096
# (at PMEMBLK_MIN_POOL, and 4096 also at 64 MiB), and 512 in a pool of
# 20983865 bytes (not whole pages: PMDK's BTT takes the whole ones):
#   - ntmem creates; every block written by ntmem reads back on PMDK, then
#     PMDK rewrites every 3rd block and ntmem reads all of them back;
#   - PMDK creates and never writes (its BTT is laid out at the first
#     write): ntmem reads zeros and writes, PMDK reads and rewrites every
#     5th block, ntmem reads all of them back;
#   - both libraries give the same block count for the same pool size;
#   - `pmempool info` and `pmempool check` exit 0 on ntmem's pools, check
#     says "consistent"; the BTT info block's fields (offsets, counts,
#     sizes, flags) are those PMDK writes for the same geometry;
#   - PMEMBLK_CONF and PMEMBLK_CONF_FILE set the same ctl values on both;
#   - `pmempool info` on a pool PMDK never opened (fresh and written);
#   - a pool created over a file of random bytes (zero header page): both
#     libraries' pmemblk_check() say consistent, it reads zeros and moves;
#   - pmemblk_check() on both libraries: 1 on a good pool, then 0 on a pool
#     whose BTT map has two blocks mapped to one (ntmem and PMDK agree),
#     and -1 (a header checksum error) after a pool header byte changes;
#   - pool sets of three parts (one not whole pages), on the disk: each
#     library's set is read and written by the other (every 61st block,
#     the others read as zeros: each write ends in msync()), both give the
#     same block count, and
#     pmempool info and check accept ntmem's set.
# Exit 0 pass, 1 fail, 77 skip (no Debian libpmemblk or pmempool).
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 TOOL_NTMEM TOOL_PMDK" >&2
	exit 1
fi
ntm=$1 pmdk=$2
# ok, bad, expect; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
# Pools in tmpfs when there is one: every block write ends in msync(),
# cheap there and slow on a disk.
shm=/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && shm=/dev/shm
tmp=$(mktemp -d "$shm/ntmem-pmemblk-XXXXXX") || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT

# The PMDK tool runs without the build's library path: only the system's.
P() { env -u LD_LIBRARY_PATH -u LD_PRELOAD "$pmdk" "$@"; }
N() { "$ntm" "$@"; }

case $(P which 2>/dev/null) in
*/libpmemblk.so.1) ;;
*) echo "SKIP: Debian's libpmemblk is not usable"; exit 77 ;;
esac
lib_n=$(N which)
if [ "$lib_n" = "$(P which)" ]; then
	bad "the ntmem tool runs on $lib_n, PMDK's library"
	exit 1
fi
ok "ntmem's tool runs on $lib_n, PMDK's on $(P which)"
pmempool=$(command -v pmempool) || pmempool=
# Debian's pmempool as installed: with the build's LD_LIBRARY_PATH it would
# load ntmem's libpmemblk.so.1 (an instrumented one does not even load).
PP() { env -u LD_LIBRARY_PATH -u LD_PRELOAD "$pmempool" "$@"; }

# run DESC CMD...: expect exit 0 and no wrong block.
run() {
	what=$1
	shift
	expect 0 "$what" "$@"
	if grep -q ' [1-9][0-9]* wrong' "$out"; then
		bad "$what: $(cat "$out")"; sed 's/^/# /' "$err"
	fi
}

# info_fields POOL: the BTT info block's flags and geometry, without
# UUIDs, version and checksum (offset 8192 is the BTT; the flags at byte
# 48, the sizes, counts and offsets from 56 to 96).
info_fields() {
	od -A n -t x1 -j $((8192 + 48)) -N 4 "$1" | tr -s ' \n' ' '
	od -A n -t x1 -j $((8192 + 56)) -N 40 "$1" | tr -s ' \n' ' '
}
info_major() {
	od -A n -t u2 -j $((8192 + 52)) -N 2 "$1" | tr -d ' '
}

min=16785408
for geo in "512 $min" "4096 $min" "4096 67108864" "512 20983865"; do
	# shellcheck disable=SC2086 # two words
	set -- $geo
	bs=$1 size=$2 tag="bsize $1, $2 bytes"
	a=$tmp/ntmem-$bs-$size b=$tmp/pmdk-$bs-$size

	expect 0 "$tag: ntmem creates" N create "$a" "$bs" "$size"
	n_ntm=$(awk '{ print $4 }' "$out")
	expect 0 "$tag: PMDK creates" P create "$b" "$bs" "$size"
	n_pmdk=$(awk '{ print $4 }' "$out")
	if [ -n "$n_ntm" ] && [ "$n_ntm" = "$n_pmdk" ]; then
		ok "$tag: both have $n_ntm blocks"
	else
		bad "$tag: ntmem has '$n_ntm' blocks, PMDK '$n_pmdk'"
	fi

	# ntmem's pool, PMDK's reads and writes.
	run "$tag: ntmem writes every block" N write "$a" 11 1
	run "$tag: PMDK reads ntmem's blocks" P verify "$a" 11 1 0
	run "$tag: PMDK rewrites every 3rd block" P write "$a" 12 3
	run "$tag: ntmem reads PMDK's and its own" N verify "$a" 12 3 11

	# PMDK's pool, never written: ntmem lays out the BTT PMDK would.
	run "$tag: ntmem reads PMDK's fresh pool: zeros" N verify "$b" 0 1 0
	run "$tag: ntmem writes every block of PMDK's pool" N write "$b" 21 1
	run "$tag: PMDK reads them" P verify "$b" 21 1 0
	run "$tag: PMDK rewrites every 5th block" P write "$b" 22 5
	run "$tag: ntmem reads them" N verify "$b" 22 5 21

	# Same geometry, same BTT info block (after a PMDK write lays it out).
	c=$tmp/pmdk-layout
	rm -f "$c"
	P create "$c" "$bs" "$size" >/dev/null && P write "$c" 1 100000000 >/dev/null
	if [ "$(info_fields "$a")" = "$(info_fields "$c")" ]; then
		ok "$tag: BTT info geometry equals PMDK's"
	else
		bad "$tag: BTT info differs: ntmem $(info_fields "$a") PMDK $(info_fields "$c")"
	fi
	if [ "$(info_major "$a")" = "$(info_major "$c")" ]; then
		ok "$tag: BTT info version equals PMDK's"
	else
		bad "$tag: BTT info major version $(info_major "$a"), PMDK writes $(info_major "$c")"
	fi

	if [ -n "$pmempool" ]; then
		expect 0 "$tag: pmempool info on ntmem's pool" PP info "$a"
		if grep -q "Block size *: $bs\$" "$out"; then ok "$tag: pmempool info: block size $bs"
		else bad "$tag: pmempool info lacks the block size"; sed 's/^/# /' "$out"; fi
		expect 0 "$tag: pmempool check on ntmem's pool" PP check -v "$a"
		if grep -q ": consistent" "$out"; then ok "$tag: pmempool check: consistent"
		else bad "$tag: pmempool check does not say consistent"; sed 's/^/# /' "$out"; fi
	fi
	rm -f "$a" "$b" "$c"
done

# --- PMEMBLK_CONF and PMEMBLK_CONF_FILE ----------------------------------

# Both libraries set the ctl values from them when loaded, the same way
# (PMDK's own test framework sets fallocate.at_create=0: a create over a
# sparse 512 GiB file then allocates nothing). Unknown names and values
# are passed over by both.
printf '# comment\nprefault.at_open = y ;# more\n sds.at_create=n\n' \
	>"$tmp/blk.conf"
for conf in "fallocate.at_create=0;" "prefault.at_create=1;copy_on_write.at_open=Yes" \
	"fallocate.at_create=n;nosuch.query=1;sds.at_create=maybe" "" "file"; do
	if [ "$conf" = file ]; then
		set -- env -u PMEMBLK_CONF PMEMBLK_CONF_FILE="$tmp/blk.conf"
	else
		set -- env PMEMBLK_CONF="$conf"
	fi
	"$@" "$ntm" ctl >"$tmp/ctl.ntmem" 2>&1
	"$@" env -u LD_LIBRARY_PATH -u LD_PRELOAD "$pmdk" ctl >"$tmp/ctl.pmdk" 2>&1
	if cmp -s "$tmp/ctl.ntmem" "$tmp/ctl.pmdk"; then
		ok "PMEMBLK_CONF '$conf': the same ctl values as PMDK's"
	else
		bad "PMEMBLK_CONF '$conf': ctl values differ (- PMDK, + ntmem)"
		diff -u "$tmp/ctl.pmdk" "$tmp/ctl.ntmem" | sed 's/^/# /'
	fi
done
# An entry that is not name=value: PMDK aborts the program at load;
# ntmem passes it over, saying so, and takes the rest.
expect 0 "PMEMBLK_CONF with an entry that is not name=value" \
	env PMEMBLK_CONF="fallocate.at_create;sds.at_create=0" "$ntm" ctl
err_names "entry 'fallocate.at_create' is not name=value" \
	"the bad entry is named"
grep -q "^sds.at_create 0\$" "$out" && ok "the entry after it is taken" ||
	bad "the entry after the bad one was not taken"
rm -f "$tmp/blk.conf" "$tmp/ctl.ntmem" "$tmp/ctl.pmdk"

# --- pools only ntmem touched, as pmempool sees them ---------------------

# PMDK's pmempool finds the BTT from the run-time fields PMDK's library
# stores beside the descriptor (data - addr); ntmem wrote zeros there, and
# pmempool info refused its pools ("wrong BTT layout offset") until PMDK
# had opened them once. A fresh pool, then one written, PMDK never near.
if [ -n "$pmempool" ]; then
	a=$tmp/only-ntmem
	expect 0 "ntmem only: ntmem creates" N create "$a" 4096 "$min"
	expect 0 "ntmem only: pmempool info on the fresh pool" PP info "$a"
	run "ntmem only: ntmem writes" N write "$a" 7 1
	expect 0 "ntmem only: pmempool info on the written pool" PP info "$a"
	if grep -q "^\[ARENA 0\]" "$out"; then ok "ntmem only: pmempool info finds arena 0"
	else bad "ntmem only: pmempool info finds no arena"; sed 's/^/# /' "$out" "$err"; fi
	rm -f "$a"
fi

# A pool made over a file of old data (PMDK's blk_pool TEST8: garbage
# after a zero header page, poolsize 0): no BTT is laid out until the
# first write, whatever the bytes hold, so it is consistent, opens and
# reads zeros on both libraries (ntmem refused to open it: "no BTT info
# block").
a=$tmp/garbage
head -c $((17 * 1048576)) /dev/urandom >"$a"
dd if=/dev/zero of="$a" bs=8192 count=1 conv=notrunc 2>/dev/null
expect 0 "garbage: ntmem creates over it" N create "$a" 4096 0
expect 0 "garbage: ntmem's pmemblk_check is 1" N check "$a"
expect 0 "garbage: PMDK's pmemblk_check is 1" P check "$a"
run "garbage: ntmem reads zeros" N verify "$a" 0 1 0
run "garbage: ntmem writes" N write "$a" 8 7
run "garbage: PMDK reads them" P verify "$a" 8 7 0
expect 0 "garbage: PMDK's pmemblk_check after the writes is 1" P check "$a"
rm -f "$a"

# --- pmemblk_check(): good, then a corrupt map, then a corrupt header ----

a=$tmp/check
expect 0 "check: ntmem creates" N create "$a" 4096 "$min"
run "check: ntmem writes" N write "$a" 5 1
expect 0 "check: ntmem's pmemblk_check on a good pool is 1" N check "$a"
expect 0 "check: PMDK's pmemblk_check on it is 1" P check "$a"
# The map (mapoff 0xff7000 from the arena) maps block 1 to what block 0
# maps to: two LBAs share one block.
map=$((8192 + 0xff7000))
# printf(1) takes octal escapes in every shell.
entry=$(od -A n -t o1 -j "$map" -N 4 "$a" | tr -s ' \n' ' ' |
	sed 's/ *\([0-7][0-7]*\)/\\\1/g')
cp "$a" "$a.good"
# shellcheck disable=SC2059 # the escapes are the format
printf "$entry" |
	dd of="$a" bs=1 seek=$((map + 4)) conv=notrunc 2>/dev/null
expect 3 "check: ntmem's pmemblk_check on a duplicate map entry is 0" N check "$a"
expect 3 "check: PMDK's pmemblk_check on it is 0" P check "$a"
if [ -n "$pmempool" ]; then
	expect 1 "check: pmempool check calls it not consistent" \
		PP check "$a"
fi
cp "$a.good" "$a"
printf 'X' | dd of="$a" bs=1 seek=200 conv=notrunc 2>/dev/null
expect 4 "check: ntmem's pmemblk_check on a bad header checksum is -1" N check "$a"
err_names "checksum" "check: the message names the checksum"
expect 4 "check: PMDK's pmemblk_check on it is -1" P check "$a"

# --- pool sets: three parts (44 MiB each set, in the pools' directory) -----

sets=$(mktemp -d "$shm/ntmem-pmemblk-set-XXXXXX") || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp" "$sets"' EXIT
for who in ntmem pmdk; do
	printf 'PMEMPOOLSET\n# three parts\n20M %s\n8M %s\n16781313 %s\n' \
		"$sets/$who.0" "$sets/$who.1" "$sets/$who.2" >"$sets/$who.set"
done
expect 0 "set: ntmem creates" N create "$sets/ntmem.set" 512 0
n_ntm=$(awk '{ print $4 }' "$out")
expect 0 "set: PMDK creates" P create "$sets/pmdk.set" 512 0
n_pmdk=$(awk '{ print $4 }' "$out")
if [ -n "$n_ntm" ] && [ "$n_ntm" = "$n_pmdk" ]; then
	ok "set: both have $n_ntm blocks"
else
	bad "set: ntmem has '$n_ntm' blocks, PMDK '$n_pmdk'"
fi
a=$sets/ntmem.set b=$sets/pmdk.set
run "set: ntmem writes its set" N write "$a" 31 61
run "set: PMDK reads it" P verify "$a" 31 61 0
run "set: PMDK rewrites those blocks" P write "$a" 32 61
run "set: ntmem reads them" N verify "$a" 32 61 0
run "set: ntmem reads PMDK's fresh set: zeros" N verify "$b" 0 1 0
run "set: ntmem writes PMDK's set" N write "$b" 33 61
run "set: PMDK reads it" P verify "$b" 33 61 0
expect 0 "set: ntmem's pmemblk_check" N check "$a"
expect 0 "set: PMDK's pmemblk_check on ntmem's set" P check "$a"
if [ -n "$pmempool" ]; then
	expect 0 "set: pmempool info on ntmem's set" PP info "$a"
	if grep -q "3 part(s)" "$out" && grep -q "Block size *: 512\$" "$out"
	then ok "set: pmempool info: 3 parts, block size 512"
	else bad "set: pmempool info"; sed 's/^/# /' "$out"; fi
	expect 0 "set: pmempool check on ntmem's set" PP check -v "$a"
	if grep -q ": consistent" "$out"; then ok "set: pmempool check: consistent"
	else bad "set: pmempool check does not say consistent"; sed 's/^/# /' "$out"; fi
fi

exit $fail
