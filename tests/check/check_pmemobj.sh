#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_pmemobj.sh NTMEM BINDIR - the libpmemobj corpus (Debian's
# libpmemobj; libpmem.so.1 is its dependency) under `ntmem check --json`,
# plainly and with NTMEM_CHECK_EAGER=1. Each program prints
# "expect OFFSET LENGTH", where its one bug is in its pool; the run must
# report exactly that bug: one record, of an expected kind, in
# <name>.pmem, at that offset and length, its first store's frames
# reaching the program. Its twin (<name>_fixed) must get no report at all:
# no bug, no performance note, checked in full. libpmemobj's own stores
# (pool creation, heap, lanes, logs, lists, transactions, close) are
# libpmemobj's: a report of one is a failure here. Then a pool left by a
# run killed in a transaction is opened (recovery) under the checker: no
# report either.
#
# A store in a transaction to pool memory that nothing of the
# transaction added or allocated is reported as kind "tx-unadded", with
# the frames of its pmemobj_tx_begin too, whether or not the commit
# happens to flush its cache line (pmemobj_tx_short_add: the range added
# is smaller than the store; pmemobj_tx_neighbour: an unadded field next
# to a TX_ADD_FIELD one), and only once: not also as a durability bug
# (pmemobj_tx_unadded, whose line nothing flushes). A range added twice in
# a transaction is a performance note of kind "tx-add-twice"
# (pmemobj_tx_add_twice); a pmemobj_persist() in a transaction of a range
# it added, which its commit writes back again, one of kind
# "tx-flush-repeat" (pmemobj_tx_flush_repeat; its twin persists only a
# range added with POBJ_XADD_NO_FLUSH, which the commit leaves alone).
#
# pmemobj_hashmap is a transactional hash map that grows (a rehash moves
# every entry in one transaction, which extends the lane's undo log) and
# frees what it removes: its twin, correct, gets no report (libpmemobj
# bumps its undo log extension's generation number without a persist, on
# purpose); its last removal's unadded count store is tx-unadded.
#
# Then the same programs on a disk file system without
# PMEM_IS_PMEM_FORCE, as a developer without pmem runs them: libpmemobj
# maps the pool itself and persists with pmem_msync(), the checker
# watches the pool from its mmap() and judges it by the kernel's rule (a
# store is durable once an msync() covering its page returned): the same
# bug at the same offset, of kind "not-synced" where a persist was
# missing, the twins clean, checked in full.
#
# Correct programs with no twin (the list "clean") get no report either:
# pmemobj_big_root, a 4 KiB root object, which libpmemobj builds in a run
# over a chunk it used as scratch while free.
#
# The checking library comes from NTMEM_CHECK_LIBDIR (set by meson).
# Exit 0 pass, 1 fail, 77 skip (no libpmemobj programs, no python3).
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 NTMEM BINDIR" >&2
	exit 1
fi
ntmem=$1 bindir=$2
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
if [ ! -x "$bindir/pmemobj_root_store" ]; then
	echo "SKIP: no libpmemobj programs (libpmemobj-dev not installed)"
	exit 77
fi
here=$(dirname "$0")
# ok, bad, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$here/../lib/cli_lib.sh"
# The pools: 8 MiB each (PMEMOBJ_MIN_POOL), on tmpfs as emulated pmem is.
scratch_dir ntmem-check-pmemobj
sum=$tmp/summary

# A sanitized build (checking_asan, cli_lib.sh).
checking_asan

# The page-cache runs' pools: a disk file system (not tmpfs); where there
# is none to write to (a kernel guest's bare root) those runs skip.
disk=$(mktemp -d "${NTMEM_DISK_TMPDIR:-/var/tmp}/ntmem-check-pmemobj-XXXXXX" \
	2>/dev/null) || disk=
trap 'rm -f "$out" "$err"; rm -rf "$tmp" ${disk:+"$disk"}' EXIT

# NAME KINDS GAP SYNC_KINDS: KINDS the kinds accepted (comma-separated;
# "when" and the point follow from the kind and are not compared); GAP
# "-", or the item whose checks the bug needs (a known gap: TODO, not a
# failure); SYNC_KINDS those accepted on the page cache.
corpus="
pmemobj_root_store not-written-back,never-written-back - not-synced
pmemobj_tx_unadded tx-unadded - tx-unadded
pmemobj_tx_hot tx-unadded - tx-unadded
pmemobj_tx_short_add tx-unadded - tx-unadded
pmemobj_tx_neighbour tx-unadded - tx-unadded
pmemobj_plain_memcpy not-written-back,never-written-back - not-synced
pmemobj_store_after_persist not-written-back,never-written-back - not-synced
pmemobj_alloc_ctor not-written-back,never-written-back,stored-after-write-back - not-synced
pmemobj_list not-written-back,never-written-back - not-synced
pmemobj_threads not-written-back,never-written-back - not-synced
pmemobj_hashmap tx-unadded - tx-unadded
"

# The runs' pmem: "force" (tmpfs, PMEM_IS_PMEM_FORCE=1) or "sync" (the
# disk, PMEM_IS_PMEM_FORCE unset).
pmem_mode() {
	mode=$1
	if [ "$mode" = force ]; then
		PMEM_IS_PMEM_FORCE=1
		export PMEM_IS_PMEM_FORCE
		pools=$tmp
	else
		unset PMEM_IS_PMEM_FORCE
		pools=$disk
	fi
}
pmem_mode force

# run PROGRAM ARGS...: `ntmem check --json` on it, the JSON in its own
# file, its summary in $sum; $got the exit status, $json_ok.
run() {
	name=$1
	shift
	"$ntmem" check --json --report "$tmp/$name.json" \
		-- "$bindir/$name" "$@" >"$out" 2>"$err"
	got=$?
	if python3 "$here/report_summary.py" "$tmp/$name.json" "$name" \
		>"$sum" 2>>"$err"; then json_ok=1; else json_ok=0; fi
}

# fresh_run PROGRAM: run it on a directory of its own, empty.
fresh_run() {
	rm -rf "${pools:?}/$1.d"
	mkdir "$pools/$1.d" || exit 1
	run "$1" "$pools/$1.d"
}

# passed WHAT: exit 0 passed through, a report that parses, checked in full.
passed() {
	if [ "$got" -eq 0 ] && [ "$json_ok" = 1 ] && grep -q '^status 0 ' "$sum" &&
		grep -q '"checked": "all"' "$tmp/$name.json"; then
		return 0
	fi
	bad "$1: ntmem check exit $got, expected 0, checked in full"
	sed 's/^/# /' "$out" "$err" "$sum" 2>/dev/null
	return 1
}

# clean WHAT: the last run reported nothing (no bug, no perf note).
clean() {
	passed "$1" || return
	if grep -q '^status 0 errors 0 bugs 0$' "$sum" && ! grep -q '^perf ' "$sum"
	then
		ok "$1: no report"
	else
		bad "$1: reports, expected none"
		sed 's/^/# /' "$sum"
		python3 -m json.tool "$tmp/$name.json" | sed 's/^/# /'
	fi
}

# the_bug WHAT KINDS GAP: the last run reported exactly the bug its
# program printed, and nothing else.
the_bug() {
	what=$1 kinds=$2 gap=$3
	passed "$what" || return
	exp=$(sed -n 's/^expect \([0-9]* [0-9]*\)$/\1/p' "$out")
	if [ -z "$exp" ]; then
		bad "$what: the program printed no \"expect OFFSET LENGTH\""
		return
	fi
	bugs=$(grep '^bug ' "$sum")
	n=$(printf '%s' "$bugs" | grep -c '^bug ')
	rec=$(printf '%s\n' "$bugs" | head -1)
	# "bug KIND WHEN OFFSET LENGTH FILE POINT at= first_store="
	# shellcheck disable=SC2086 # split the record into its fields
	set -- $rec
	found=0
	if [ "$n" -eq 1 ] && [ "$4 $5" = "$exp" ] && [ "$6" = "$name.pmem" ]; then
		for kind in $(echo "$kinds" | tr , ' '); do
			[ "$2" = "$kind" ] && found=1
		done
	fi
	if [ "$gap" != - ]; then
		if [ "$found" = 1 ]; then
			ok "$what: $2 at $exp (no longer a gap: update the table)"
		else
			echo "not ok - $what: the bug at $exp is not reported ($n bug records) # TODO needs issue 20 $gap (transaction checks)"
		fi
		return
	fi
	if [ "$found" = 1 ]; then
		ok "$what: $2 at $exp in $name.pmem"
	else
		bad "$what: $n bug records, expected one, $kinds at $exp in $name.pmem"
		sed 's/^/# /' "$sum"
		return
	fi
	case " $9 " in
	*" first_store=yes "*) ok "$what: the first store's frames reach the program" ;;
	*) bad "$what: the first store's frames do not reach the program ($9)"
		python3 -m json.tool "$tmp/$name.json" | sed 's/^/# /' ;;
	esac
	if [ "$2" = tx-unadded ]; then
		shift 9
		if [ "$1" = tx_begin=yes ]; then
			ok "$what: the frames of its pmemobj_tx_begin reach the program"
		else
			bad "$what: the frames of its pmemobj_tx_begin do not reach the program ($1)"
			python3 -m json.tool "$tmp/$name.json" | sed 's/^/# /'
		fi
	fi
	if grep -q '^perf ' "$sum"; then
		bad "$what: performance notes, expected none"
		sed 's/^/# /' "$sum"
	fi
}

# eager_mode 0|1: NTMEM_CHECK_EAGER off or on for the next runs, and $how
# the words their rows add.
eager_mode() {
	if [ "$1" = 1 ]; then
		NTMEM_CHECK_EAGER=1
		export NTMEM_CHECK_EAGER
		how=" (eager)"
	else
		unset NTMEM_CHECK_EAGER
		how=
	fi
}

oldifs=$IFS
IFS='
'
for line in $corpus; do
	IFS=$oldifs
	# shellcheck disable=SC2086 # split the line into its fields
	set -- $line
	prog=$1 kinds=$2 gap=$3 sync_kinds=$4
	for eager in 0 1; do
		eager_mode "$eager"
		fresh_run "$prog"
		the_bug "$prog$how" "$kinds" "$gap"
		fresh_run "${prog}_fixed"
		clean "${prog}_fixed$how"
	done
	# The page cache: no point reports early there (eager is the same).
	unset NTMEM_CHECK_EAGER
	if [ -z "$disk" ]; then
		echo "ok # SKIP $prog (page cache): no disk directory to write to"
		continue
	fi
	pmem_mode sync
	fresh_run "$prog"
	the_bug "$prog (page cache)" "$sync_kinds" -
	fresh_run "${prog}_fixed"
	clean "${prog}_fixed (page cache)"
	pmem_mode force
done
unset NTMEM_CHECK_EAGER

# --- correct programs with no twin: no report ----------------------------

clean_progs="pmemobj_big_root"
for prog in $clean_progs; do
	for eager in 0 1; do
		eager_mode "$eager"
		fresh_run "$prog"
		clean "$prog$how"
	done
	unset NTMEM_CHECK_EAGER
	[ -n "$disk" ] || continue
	pmem_mode sync
	fresh_run "$prog"
	clean "$prog (page cache)"
	pmem_mode force
done
unset NTMEM_CHECK_EAGER

# --- performance notes of transactions -----------------------------------

# one_note PROG KIND WHAT: PROG's run gets one note of KIND (count 1, at
# the program's call) and no bug; its twin no report at all.
one_note() {
	fresh_run "$1"
	if passed "$1"; then
		if grep -q '^status 0 errors 0 bugs 0$' "$sum" &&
			[ "$(grep -c '^perf ' "$sum")" -eq 1 ] &&
			grep -q "^perf $2 1 at=yes\$" "$sum"; then
			ok "$1: one $2 note at the program's call ($3), no bug"
		else
			bad "$1: expected one $2 note (count 1, at the program: $3) and no bug"
			sed 's/^/# /' "$sum"
		fi
	fi
	fresh_run "${1}_fixed"
	clean "${1}_fixed"
}

one_note pmemobj_tx_add_twice tx-add-twice "a range added twice"
one_note pmemobj_tx_flush_repeat tx-flush-repeat \
	"a persist the commit repeats"

# --- recovery after a killed run -------------------------------------------

rm -rf "$tmp/recover" && mkdir "$tmp/recover" || exit 1
PMEM_IS_PMEM_FORCE=1 "$bindir/pmemobj_recover" "$tmp/recover" crash \
	>"$out" 2>"$err"
rc=$?
if [ "$rc" -ne 137 ] && [ "$rc" -ne $((128 + 9)) ]; then
	bad "pmemobj_recover crash: exit $rc, expected SIGKILL's 137"
	sed 's/^/# /' "$err"
fi
for eager in 0 1; do
	cp "$tmp/recover/pmemobj_recover.pmem" "$tmp/recover/killed.pmem"
	eager_mode "$eager"
	run pmemobj_recover "$tmp/recover" open
	if grep -qx 'value 1' "$out"; then
		ok "pmemobj_recover open$how: the killed transaction rolled back"
	else
		bad "pmemobj_recover open$how: expected \"value 1\""
		sed 's/^/# /' "$out" "$err"
	fi
	clean "pmemobj_recover open$how (recovery, open, close)"
	mv "$tmp/recover/killed.pmem" "$tmp/recover/pmemobj_recover.pmem"
done
unset NTMEM_CHECK_EAGER

exit $fail
