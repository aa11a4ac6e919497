#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_dropin_diff.sh PROG DROPIN_PATH [OPTION VALUE...] - the drop-ins
# against PMDK, many threads at once (dropin_diff, diff.h): PROG runs
# from one seed on Debian's PMDK libraries, then with DROPIN_PATH (ntmem's
# drop-in directories, colon-separated) first on the library path; each
# run must keep every invariant, and their traces must be equal line for
# line. Both runs are made with PMEM_IS_PMEM_FORCE unset, then again with
# it 1. The OPTIONs are PROG's (--threads, --rounds, --ops, --libs).
#
# The seed is NTMEM_DIFF_SEED when set, else a new one each run; it is
# printed, with the command that replays it, whatever happens. The runs'
# files are in NTMEM_DIFF_DIR, else /dev/shm (a few hundred MiB: every
# pool is allocated), else TMPDIR; every one is removed at the end.
# Exit 0 pass, 1 fail, 77 skip (PROG not built: no PMDK headers).
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 PROG DROPIN_PATH [OPTION VALUE...]" >&2
	exit 1
fi
prog=$1 dropin=$2
shift 2
if [ ! -x "$prog" ]; then
	echo "SKIP: PMDK's libpmem, libpmem2 or libpmemblk headers are not installed"
	exit 77
fi
seed=${NTMEM_DIFF_SEED:-$(od -A n -N 4 -t u4 /dev/urandom | tr -d ' ')}
base=${NTMEM_DIFF_DIR:-}
if [ -z "$base" ]; then
	base=${TMPDIR:-/tmp}
	[ -d /dev/shm ] && [ -w /dev/shm ] && base=/dev/shm
fi
tmp=$(mktemp -d "$base/ntmem-diff-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
echo "# seed $seed; replay: NTMEM_DIFF_SEED=$seed $0 $prog $dropin $*"


# loaded NAME DROPIN: each library of run NAME came from one of the
# drop-in directories (DROPIN yes) or from none of them (DROPIN no).
loaded() {
	for lib in libpmem libpmem2 libpmemblk; do
		from=$(sed -n "s|^$lib: ||p" "$tmp/$1.out")
		dir=$(cd "$(dirname "$from")" 2>/dev/null && pwd -P)
		case ":$dropin_real:" in
		*":$dir:"*) is=yes ;;
		*) is=no ;;
		esac
		if [ -n "$dir" ] && [ "$is" = "$2" ]; then
			echo "ok - $1 run: $lib from $from"
		else
			echo "not ok - $1 run: $lib from '$from'"; fail=1
		fi
	done
}
dropin_real=$(echo "$dropin" | tr ':' '\n' | while read -r d; do
	(cd "$d" 2>/dev/null && pwd -P); done | tr '\n' ':')

# PROG's options are words without blanks: kept in one variable.
opts=$*
# Each pair of runs twice: PMEM_IS_PMEM_FORCE unset (the files are not
# pmem: libpmemblk persists with msync()) and 1 (flush + drain).
for force in unset 1; do
for name in pmdk ntmem; do
	run=$name-force-$force
	mkdir "$tmp/$run"
	if [ "$name" = pmdk ]; then
		libpath= # the system's libraries only
		# Built with ThreadSanitizer, PMDK's run reports nothing: PMDK is
		# not instrumented, and its own atomics and the locks it makes
		# on first use look like races. ntmem's run is the one judged.
		tsan="${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_bugs=0"
	else
		libpath="$dropin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
		tsan=${TSAN_OPTIONS:-}
	fi
	if [ "$force" = unset ]; then
		set -- env -u LD_PRELOAD -u PMEM_IS_PMEM_FORCE
	else
		set -- env -u LD_PRELOAD PMEM_IS_PMEM_FORCE="$force"
	fi
	# shellcheck disable=SC2086 # $opts are separate words
	"$@" LD_LIBRARY_PATH="$libpath" TSAN_OPTIONS="$tsan" \
		"$prog" --seed "$seed" $opts "$tmp/$run" "$tmp/$run.trace" \
		>"$tmp/$run.out" 2>"$tmp/$run.err"
	st=$?
	tail -n 1 "$tmp/$run.out" | sed "s/^/# $run: /"
	if [ "$st" -eq 0 ]; then
		echo "ok - $run: every invariant held"
	else
		echo "not ok - $run: exit $st"
		sed 's/^/# /' "$tmp/$run.err" | head -n 40
		fail=1
	fi
	rm -rf "${tmp:?}/$run"
done
loaded "pmdk-force-$force" no
loaded "ntmem-force-$force" yes
a=$tmp/pmdk-force-$force.trace b=$tmp/ntmem-force-$force.trace
if [ -s "$a" ] && cmp -s "$a" "$b"; then
	echo "ok - PMEM_IS_PMEM_FORCE $force: the traces are equal ($(wc -l <"$b") lines)"
else
	echo "not ok - PMEM_IS_PMEM_FORCE $force: the traces differ (- PMDK, + ntmem; first differences):"
	diff -u "$a" "$b" | sed -n '3,60p' | sed 's/^/# /'
	fail=1
fi
done
if [ "$fail" -ne 0 ]; then
	echo "# replay this seed: NTMEM_DIFF_SEED=$seed $0 $prog $dropin $opts"
fi
exit $fail
