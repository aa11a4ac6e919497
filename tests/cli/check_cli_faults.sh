#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_cli_faults.sh NTMEM NO_THREADS_SO - the benchmarks when the machine
# says no:
#   - a run that does not fit (a namespace on a full tmpfs, memory beyond
#     MemAvailable) is refused up front, naming what it needs and what is
#     available, instead of dying of SIGBUS or exhausting memory (the
#     tmpfs part as root, on a 16 MiB tmpfs mounted here);
#   - bench memmap --dedup puts vm.max_map_count back when it is ended by
#     SIGINT or SIGTERM, not only on a normal exit (root only);
#   - a memmap init that fails (NO_THREADS_SO makes pthread_create() fail)
#     ends the run with the call and the library's message.
# No check needs the run to be fast; the runs that do run are tiny.
set -u
ntmem=$1 no_threads=$2
# ok, bad, expect, err_names; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
tmp=$(mktemp -d /tmp/ntmem-cli-faults-XXXXXX) || exit 1
mnt=$tmp/tmpfs
map_count=/proc/sys/vm/max_map_count
saved_maps=$(cat "$map_count" 2>/dev/null || echo "")
cleanup() {
	rm -f "$out" "$err"
	if [ -n "$saved_maps" ] && [ "$(id -u)" = 0 ]; then
		echo "$saved_maps" >"$map_count" 2>/dev/null
	fi
	umount "$mnt" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
quick="--runs 1 --no-pmdk"

# --- up-front refusals ---------------------------------------------------

# More memory than any machine has: refused before anything is mapped.
# shellcheck disable=SC2086 # $quick is a list of options
expect 1 "bench memmap --map mem --size 1024t" "$ntmem" bench memmap $quick \
	--dir "$tmp" --size 1024t --map mem --align 4k --layout 64 --strategy fixed
err_names "17592186044416 bytes (16.0 TiB) of memory needed, MemAvailable is" \
	"map=mem: names the memory needed and MemAvailable"
# shellcheck disable=SC2086
expect 1 "bench copy --sizes 1024t" "$ntmem" bench copy $quick --no-huge \
	--sizes 1024t --align 0
err_names "2251799813697536 bytes (2.0 PiB) of memory needed" \
	"bench copy: names the bytes it needs, not --total"
# shellcheck disable=SC2086
expect 1 "bench blk --ops 100000000 --runs 101" "$ntmem" bench blk \
	--no-pmdk --dir "$tmp" --size 16m --ops 100000000 --runs 101
err_names "of memory needed, MemAvailable is" "bench blk: latencies beyond memory"
if [ -z "$(find "$tmp" -mindepth 1)" ]; then ok "refused runs leave nothing"
else bad "refused runs left files"; find "$tmp" -mindepth 1 | sed 's/^/# /'; fi

# A 16 MiB tmpfs: what used to end in SIGBUS.
mkdir "$mnt"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=16m tmpfs "$mnt" 2>/dev/null; then
	# 1 GiB of 96-byte descriptors, map=dev: 24 MiB into the namespace.
	# shellcheck disable=SC2086
	expect 1 "bench memmap --dir (16 MiB tmpfs) --size 1g" "$ntmem" bench \
		memmap $quick --dir "$mnt" --size 1g --layout 96 --strategy fixed
	err_names "25165824 bytes (24.0 MiB) needed in $mnt, which has" \
		"bench memmap: names the bytes and the directory"
	err_names "free" "bench memmap: names the free space"
	# shellcheck disable=SC2086
	expect 1 "bench blk --dir (16 MiB tmpfs) --size 64m" "$ntmem" bench blk \
		$quick --dir "$mnt" --size 64m --ops 10
	err_names "67108864 bytes (64.0 MiB) needed in $mnt" \
		"bench blk: names the namespace size and the directory"
	# What fits still runs: 64 MiB of 96-byte descriptors is 1.5 MiB.
	# shellcheck disable=SC2086
	expect 0 "bench memmap --dir (16 MiB tmpfs) --size 64m" "$ntmem" bench \
		memmap $quick --dir "$mnt" --size 64m --layout 96 --strategy fixed
	# shellcheck disable=SC2086
	expect 0 "bench blk --dir (16 MiB tmpfs) --size 8m" "$ntmem" bench blk \
		$quick --dir "$mnt" --size 8m --ops 10
	if [ -z "$(find "$mnt" -mindepth 1)" ]; then ok "the tmpfs is left empty"
	else bad "files left on the tmpfs"; fi
	umount "$mnt"
else
	echo "# skip: a 16 MiB tmpfs needs root and mount (not permitted here)"
fi

# --- vm.max_map_count after a signal --------------------------------------

# signal_restores SIG STATUS: a --dedup run, ended by SIG once it has
# raised vm.max_map_count, dies of SIG and leaves the old value.
signal_restores() {
	sig=$1 want=$2
	# 64 GiB of 2 MiB pages: 32768 compound pages, two maps each. A
	# script's background job starts with SIGINT ignored (and the tool
	# keeps it so): python puts the default action back before the exec.
	python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$ntmem" bench memmap --dir "$tmp" \
		--size 64g --dedup --map mem --align 2m --layout 64 --runs 101 \
		--no-pmdk >"$out" 2>"$err" &
	pid=$!
	i=0
	while [ "$(cat "$map_count")" = "$saved_maps" ] && [ $i -lt 600 ] &&
		kill -0 "$pid" 2>/dev/null; do
		sleep 0.05
		i=$((i + 1))
	done
	raised=$(cat "$map_count")
	kill -s "$sig" "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	got=$?
	now=$(cat "$map_count")
	if [ "$raised" = "$saved_maps" ]; then
		bad "SIG$sig: the run never raised vm.max_map_count"
		sed 's/^/# /' "$err"
	elif [ "$now" = "$saved_maps" ] && [ "$got" = "$want" ]; then
		ok "SIG$sig: died of it (exit $got), vm.max_map_count back from $raised to $now"
	else
		bad "SIG$sig: exit $got (expected $want), vm.max_map_count $now (was $saved_maps)"
		echo "$saved_maps" >"$map_count"
	fi
}
if [ "$(id -u)" = 0 ] && [ -n "$saved_maps" ] && [ "$saved_maps" -lt 131072 ] &&
	echo "$saved_maps" 2>/dev/null >"$map_count"; then
	signal_restores INT 130
	signal_restores TERM 143
	expect 0 "a --dedup run to its end" "$ntmem" bench memmap $quick \
		--dir "$tmp" --size 1g --dedup --map mem --align 2m --layout 64 \
		--strategy fixed
	if grep -q "vm.max_map_count.*raised from $saved_maps" "$out" &&
		[ "$(cat "$map_count")" = "$saved_maps" ]; then
		ok "a normal exit restores vm.max_map_count"; else
		bad "a normal exit: vm.max_map_count $(cat "$map_count")"; fi
else
	echo "# skip: vm.max_map_count needs root, a writable $map_count and a value below 131072"
fi

# --- a memmap init that fails --------------------------------------------

# No thread can be started: ntm_memmap_init() runs every share on the
# calling thread (test_memmap checks its memmap), but the benchmark's own
# two-thread fill, the limit it compares with, cannot run: the run fails
# naming it, rather than timing a one-thread fill as two. ASan wants to be
# first in the library list; this module only replaces one function.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
# shellcheck disable=SC2086
expect 1 "bench memmap --threads 2, pthread_create failing" \
	env LD_PRELOAD="$no_threads" "$ntmem" bench memmap $quick --dir "$tmp" \
	--size 64m --map mem --align 2m --layout 64 --strategy fixed --threads 2
err_names "the limit's fill: Resource temporarily unavailable" \
	"the failed fill is named with its error"
if [ -s "$out" ] && grep -q "fixed" "$out"; then
	bad "a row was printed for the failed run"; else ok "no row for the failed run"; fi

exit "$fail"
