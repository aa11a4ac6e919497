#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_watch.sh WATCH_DIR CASES SIGNAL_CASES - the watcher of `ntmem
# check` (the libraries in WATCH_DIR) runs each case of watch_cases.c
# (CASES) and of signal_cases.c (SIGNAL_CASES: programs that block
# SIGSEGV) with the same output and exit status as without it, and reports
# exactly the bugs the case has. The watcher is started here through its environment
# (what `ntmem check` sets), so this tests the libraries alone.
# Exit 0 pass, 1 fail.
set -u
if [ $# -ne 3 ]; then
	echo "usage: $0 WATCH_DIR CASES SIGNAL_CASES" >&2
	exit 1
fi
wdir=$1 cases=$2 signal_cases=$3
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
scratch_dir ntmem-watch
rep=$tmp/report

# run_case CASE [VAR=VALUE...]: plain, then watched; sets $plain_rc,
# $watched_rc, and leaves the records in $rep. A watched run that hangs is
# killed after 30 s (exit 137: never the plain run's status here but
# for end-sigkill, whose plain run cannot hang).
run_case() {
	c=$1
	shift
	rm -rf "$tmp/d" && mkdir "$tmp/d"
	env "$@" PMEM_IS_PMEM_FORCE=1 "$cases" "$c" "$tmp/d" >"$tmp/plain.out" 2>"$err"
	plain_rc=$?
	rm -rf "$tmp/d" && mkdir "$tmp/d"
	: >"$rep"
	env "$@" PMEM_IS_PMEM_FORCE=1 NTMEM_CHECK_WATCH=1 NTMEM_CHECK_REPORT="$rep" \
		LD_PRELOAD="$wdir/libntmem-watch-preload.so" \
		LD_LIBRARY_PATH="$wdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		timeout -s KILL 30 "$cases" "$c" "$tmp/d" >"$out" 2>>"$err"
	watched_rc=$?
}

same_run() {
	if [ "$plain_rc" -eq "$watched_rc" ] && cmp -s "$tmp/plain.out" "$out"; then
		ok "$c: same output and exit status ($watched_rc) as without the watcher"
	else
		bad "$c: exit $watched_rc (plain $plain_rc), output differs or not"
		sed 's/^/# /' "$out" "$err"
	fi
}

bugs() { grep -c '"type":"bug"' "$rep"; }

no_bugs() {
	if [ "$(bugs)" -eq 0 ]; then ok "$c: no report"; else
		bad "$c: $(bugs) reports, expected none"; sed 's/^/# /' "$rep"; fi
}

# one_bug FIELDS...: exactly one record, and it has each "key":value given.
one_bug() {
	if [ "$(bugs)" -ne 1 ]; then
		bad "$c: $(bugs) reports, expected one"; sed 's/^/# /' "$rep"
		return
	fi
	for f in "$@"; do
		if ! grep '"type":"bug"' "$rep" | grep -q -- "$f"; then
			bad "$c: the report lacks $f"; sed 's/^/# /' "$rep"
			return
		fi
	done
	ok "$c: one report with $*"
}

for c in segv-handler signal-handler; do
	run_case $c
	same_run
	no_bugs
	grep -qx caught "$out" || bad "$c: the program's handler did not run"
done

run_case segv-default
if [ "$watched_rc" -eq 139 ] && [ "$plain_rc" -eq 139 ]; then
	ok "segv-default: a real fault still kills with SIGSEGV"
else
	bad "segv-default: exit $watched_rc (plain $plain_rc), expected 139"
fi

for c in read threads shared-page fork; do
	run_case $c
	same_run
	no_bugs
done

# A vfork() child's _exit() judges nothing of the memory it shares: the
# parent's pending line is the parent's, and the parent is still watched.
run_case vfork
same_run
one_bug '"kind":"never-written-back"' '"when":"unmap"' '"offset":8192,' \
	'"length":8,' '"point":"pmem_unmap"'

run_case threads-bug
same_run
# Thread 2 (page 3) forgot the flush of its last line: 3 * 4096 + 7 * 64.
one_bug '"kind":"not-written-back"' '"when":"unmap"' '"offset":12736,' \
	'"length":8,' '"point":"pmem_drain"'

run_case discover
same_run
one_bug '"kind":"never-written-back"' '"when":"unmap"' '"offset":8232,' \
	'"length":8,' '"point":"munmap"' 'plain"'

run_case copy-mc
same_run
no_bugs

run_case eager NTMEM_CHECK_EAGER=1
same_run
one_bug '"kind":"not-written-back"' '"when":"point"' '"offset":4120,' \
	'"length":8,' '"point":"pmem_drain"'
run_case eager
no_bugs

# In a cpu_cache persistence domain a fence alone makes a store durable:
# the missing flush is no bug there, even reported eagerly.
run_case eager NTMEM_CHECK_EAGER=1 NTMEM_PERSIST_DOMAIN=cpu_cache
c="eager, NTMEM_PERSIST_DOMAIN=cpu_cache"
no_bugs

run_case perf
same_run
no_bugs
if grep -q '"type":"perf","kind":"unchanged-write-back","count":3,' "$rep" &&
	grep -q '"type":"perf","kind":"repeated-write-back","count":1,' "$rep"; then
	ok "perf: 3 unchanged and 1 repeated write-back counted"
else
	bad "perf: the performance notes"; sed 's/^/# /' "$rep"
fi

run_case msync
same_run
one_bug '"kind":"never-written-back"' '"when":"unmap"' '"offset":12344,' \
	'"length":8,' '"point":"pmem_unmap"'

# has_record PATTERN DESCRIPTION: a record of the report matches PATTERN.
has_record() {
	if grep -q -- "$1" "$rep"; then ok "$c: $2"; else
		bad "$c: $2: no record like $1"; sed 's/^/# /' "$rep"; fi
}

# mremap: the mapping is followed to its new address, the new pages of a
# grown mapping are watched like the old ones, and nothing stops watching.
run_case mremap-grow
same_run
one_bug '"kind":"never-written-back"' '"when":"unmap"' '"offset":1060880,' \
	'"length":8,' '"point":"munmap"'
run_case mremap-move
same_run
one_bug '"kind":"not-written-back"' '"when":"unmap"' '"offset":20608,' \
	'"length":8,' '"point":"pmem_drain"'
run_case mremap-shrink
same_run
one_bug '"kind":"never-written-back"' '"when":"unmap"' '"offset":528416,' \
	'"length":8,' '"point":"mremap"'
for c in mremap-grow mremap-move mremap-shrink; do
	run_case $c
	if grep -q '"kind":"unwatched"' "$rep"; then
		bad "$c: watching stopped"; sed 's/^/# /' "$rep"
	else ok "$c: watching never stopped"; fi
done

# A second mapping of the same pages cannot be watched: a note says which.
run_case mremap-dup
same_run
no_bugs
has_record '"type":"note","kind":"unwatched",.*"offset":4096,"length":4096,' \
	'a note: the second mapping is not watched'

# Several threads at once: mprotect() and mremap() of their own mappings
# while another persists into the pool.
run_case remap-threads
same_run
one_bug '"kind":"never-written-back"' '"when":"unmap"' '"offset":3072,' \
	'"length":8,' '"point":"munmap"' 'remap1"'
# Its only write-backs of unchanged lines are the pool thread's 336
# (watch_cases.c): any other is a store the watcher missed, which leaves
# no record for the write-back after it to find. Every round of every
# thread is a chance to see a lost store, where the report above has one.
if [ "$(grep -c '"kind":"unchanged-write-back"' "$rep")" -eq 1 ] &&
	grep -q '"kind":"unchanged-write-back","count":336,' "$rep"; then
	ok "remap-threads: no store missed (336 write-backs of unchanged lines)"
else
	bad "remap-threads: write-backs of lines found unchanged: stores were missed"
	sed 's/^/# /' "$rep"
fi

# mprotect: a page made read-only and writable again is still watched; a
# read-only or inaccessible page stays so.
run_case mprotect
same_run
one_bug '"kind":"never-written-back"' '"when":"unmap"' '"offset":4096,' \
	'"length":8192,' '"point":"pmem_unmap"'
run_case mprotect-keep
same_run
no_bugs
for line in "store to PROT_READ: fault" "load from PROT_READ: no fault" \
	"load from PROT_NONE: fault" "store after PROT_READ|PROT_WRITE: no fault"; do
	grep -qxF "$line" "$out" || bad "$c: not '$line'"
done

# How a program ends: each is judged (the 64 bytes never flushed), the
# program's own ending applies afterwards (same status, same signal), and
# an "end" record says how it ended. SIGKILL cannot be seen.
for ending in exit:exit:0 _exit:_exit:7 abort:SIGABRT:134 sigterm:SIGTERM:143 \
	segv:SIGSEGV:139 handler:exit:3; do
	c=end-${ending%%:*}
	rest=${ending#*:}
	point=${rest%%:*}
	status=${rest#*:}
	run_case "$c"
	same_run
	if [ "$watched_rc" -ne "$status" ]; then
		bad "$c: exit $watched_rc, expected $status"; fi
	one_bug '"kind":"never-written-back"' '"when":"exit"' '"offset":8320,' \
		'"length":64,' "\"point\":\"$point\""
done
run_case end-exit
has_record '"type":"end","how":"exit","judged":1,' 'an end record: exit'
run_case end-_exit
has_record '"type":"end","how":"_exit","status":7,"judged":1,' \
	'an end record: _exit(7)'
run_case end-sigterm
has_record '"type":"end","how":"signal","signal":"SIGTERM","judged":1,' \
	'an end record: SIGTERM'
grep -qxF "SIGTERM: default" "$out" || bad "$c: the program saw its handler changed"
run_case end-abort
has_record '"type":"end","how":"signal","signal":"SIGABRT","judged":1,' \
	'an end record: SIGABRT'
run_case end-handler
grep -qxF handler "$out" || bad "$c: the program's SIGTERM handler did not run"
run_case end-sigkill
same_run
no_bugs
if [ "$watched_rc" -eq 137 ]; then ok "$c: killed by SIGKILL"; else
	bad "$c: exit $watched_rc, expected 137"; fi

# --- programs that block SIGSEGV (signal_cases.c) --------------------------
cases=$signal_cases

# view_ok: the masks the case read back were those it set.
view_ok() {
	if grep -qx 'view ok' "$out"; then ok "$c: the program sees the masks it set"
	else bad "$c: the program saw other masks than it set"; sed 's/^/# /' "$out"; fi
}

for c in threads-blocked main-blocked attr-mask sa-mask wait-masks \
	raise-blocked spawn; do
	run_case $c
	same_run
	no_bugs
	view_ok
done

# Worker 2 (page 3) leaves its last line, 3 * 64 into it, unflushed.
run_case threads-blocked-bug
same_run
one_bug '"kind":"never-written-back"' '"when":"unmap"' '"offset":12480,' \
	'"length":8,' '"point":"pmem_unmap"'

# A real fault while SIGSEGV is blocked ends the process as the kernel
# ends it (SIG_DFL, whatever handler the program set), judged first.
run_case fault-blocked
same_run
no_bugs
if [ "$watched_rc" -eq 139 ] && ! grep -qx caught "$out"; then
	ok "$c: killed by SIGSEGV, the program's handler not run"
else
	bad "$c: exit $watched_rc, expected 139 without the handler"
fi
has_record '"type":"end","how":"signal","signal":"SIGSEGV","judged":1,' \
	'an end record: SIGSEGV'

exit $fail
