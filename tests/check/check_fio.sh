#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_fio.sh NTMEM - Debian's unmodified fio, its libpmem engine run
# under `ntmem check --json` (the checking library standing in for
# libpmem.so.1): 4 KiB sequential and random writes of a 16 MiB file, each
# verified by fio (crc32c), and a sequential read of what was written.
# fio exits 0 and every block is written and verified, and the report is
# what the engine's persistence calls deserve:
#   --direct=1 --sync=1   non-temporal copies, each drained: no bug
#   --end_fsync=1         cached stores written back, no drain per write,
#                         one pmem_drain() at the end (fio's final sync):
#                         no bug
#   fio's defaults        the same without that final drain: fio's engine
#                         (since fio 3.26) unmaps without a drain, so one
#                         not-fenced record at pmem_unmap covering the
#                         whole file; a read job after it: no bug
#   --direct=1            non-temporal copies, never drained: the same
#                         record
# The last two are fio's own durability gap, and prove the checker watches
# fio's stores.
#
# The checking library comes from NTMEM_CHECK_LIBDIR (set by meson).
# Files live in a fresh directory in /dev/shm. Exit 0 pass, 1 fail, 77 skip
# (no fio, a fio without the libpmem engine, no python3).
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 NTMEM" >&2
	exit 1
fi
ntmem=$1
here=$(dirname "$0")
# ok, bad, expect, require_fio, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$here/../lib/cli_lib.sh"
require_fio libpmem
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
scratch_dir ntmem-check-fio
sum=$tmp/summary
size_mib=16
blocks=$((size_mib * 256))

# A checking library built with ASan (checking_asan, cli_lib.sh) loads
# into fio (which is not) only with the ASan runtime preloaded. No leak
# detection: fio's own exit-time allocations.
preload=${LD_PRELOAD:-}
if checking_asan; then
	preload=$(ldd "$NTMEM_CHECK_LIBDIR/libntmem-watch.so.0" |
		awk '/libasan\.so/ { print $3 }')
	ASAN_OPTIONS="detect_leaks=0:$ASAN_OPTIONS"
	echo "# the checking library is built with ASan: LD_PRELOAD=$preload"
fi

# fio finds libpmem.so.1 where `ntmem check` points LD_LIBRARY_PATH.
if [ -n "${NTMEM_CHECK_LIBDIR:-}" ]; then
	LD_LIBRARY_PATH=$NTMEM_CHECK_LIBDIR ldd "$fio" >"$out" 2>"$err"
	if grep -q "libpmem\.so\.1 => $NTMEM_CHECK_LIBDIR/libpmem\.so\.1 " "$out"
	then ok "ldd fio: libpmem.so.1 => $NTMEM_CHECK_LIBDIR/libpmem.so.1"
	else
		bad "ldd fio does not resolve libpmem.so.1 in $NTMEM_CHECK_LIBDIR"
		grep pmem "$out" | sed 's/^/# /'
	fi
fi

# run_fio NAME FILE OPTIONS...: fio on $tmp/FILE under ntmem check, the
# JSON report in $tmp/NAME.json, fio's output in $out/$err, the summary in
# $sum; the exit status in $got.
run_fio() {
	name=$1 file=$2
	shift 2
	PMEM_IS_PMEM_FORCE=1 LD_PRELOAD=$preload "$ntmem" check --json --report "$tmp/$name.json" \
		-- "$fio" --name="$name" --filename="$tmp/$file" \
		--ioengine=libpmem --thread --numjobs=1 --size=${size_mib}m \
		--bs=4k "$@" >"$out" 2>"$err"
	got=$?
	python3 "$here/report_summary.py" "$tmp/$name.json" fio >"$sum" 2>>"$err"
}

# fio_ok WHAT ISSUED: exit 0, no error in fio's output, the blocks fio
# issued (its "issued rwts: total=R,W," line) as expected.
fio_ok() {
	if [ "$got" -eq 0 ]; then ok "$1: exit 0"; else
		bad "$1: exit $got"; sed 's/^/# /' "$err" | tail -20; fi
	cat "$out" >>"$err"
	if grep -qiE 'verify.*(fail|mismatch)|bad (magic|header)|err= *[1-9]' "$err"
	then
		bad "$1: fio reports an error"
		grep -iE 'verify|bad |err=' "$err" | head -5 | sed 's/^/# /'
	fi
	if grep -q "issued rwts: total=$2," "$out"; then
		ok "$1: issued $2 reads,writes"
	else
		bad "$1: issued rwts not $2"
		grep 'issued rwts' "$out" | sed 's/^/# /'
	fi
}

# clean WHAT: the report parses, has fio's exit status and no bug.
clean() {
	if grep -q "^status $got errors 0 bugs 0$" "$sum"; then
		ok "$1: no bug reported"
	else
		bad "$1: bugs reported, expected none"
		sed 's/^/# /' "$sum" | head -20
	fi
}

# unfenced WHAT FILE: the report has one bug, the whole of FILE written
# back (or stored non-temporally) and unmapped without a fence.
unfenced() {
	want="bug not-fenced unmap 0 $((size_mib << 20)) $2 pmem_unmap"
	if grep -q "^status $got errors 1 bugs 1$" "$sum" &&
		grep -q "^$want " "$sum"; then
		ok "$1: no drain before pmem_unmap is reported"
	else
		bad "$1: expected one record '$want'"
		sed 's/^/# /' "$sum" | head -20
	fi
}

verify="--verify=crc32c --do_verify=1 --verify_state_save=0"
# [tag, options, whether the writes are fenced before the unmap]
for round in "direct-sync --direct=1,--sync=1 fenced" \
	"end-fsync --end_fsync=1 fenced" "defaults - unfenced"; do
	# shellcheck disable=SC2086 # split the round into its words
	set -- $round
	tag=$1 opts=$(echo "$2" | tr , ' ') fenced=$3
	[ "$opts" = - ] && opts=
	for rw in write randwrite read; do
		what="fio --rw=$rw ${opts:-(defaults)}"
		case $rw in
		read)
			# what the sequential write of this round left
			# shellcheck disable=SC2086 # opts is a list of options
			run_fio "$rw-$tag" "write-$tag" --rw=read $opts
			fio_ok "$what" "$blocks,0"
			clean "$what"
			;;
		*)
			# shellcheck disable=SC2086 # lists of options
			run_fio "$rw-$tag" "$rw-$tag" --rw="$rw" $opts $verify
			fio_ok "$what, verified" "$blocks,$blocks"
			if [ "$fenced" = fenced ]; then clean "$what"
			else unfenced "$what" "$rw-$tag"; fi
			;;
		esac
	done
done

run_fio nodrain nodrain --rw=write --direct=1
fio_ok "fio --rw=write --direct=1" "0,$blocks"
unfenced "fio --rw=write --direct=1" nodrain

exit $fail
