# SPDX-License-Identifier: MIT
#
# tap.sh - what every stage of make check-kernel's guest shares, sourced
# by tests/kernel/stage.sh and the other stages (stage-*.sh): the TAP
# lines of a check (result, check, check_words, check_fails, skip, todo),
# the run's closing lines (finish), the nd buses and regions (bus_of,
# region_of), namespaces made with ndctl (make_ns, ns_check), PMDK's
# libpmem program on both libpmems (pmem_checks), the
# checker's mutation proof (checker_mutants), DAX file systems (mkfs_ext4,
# mounted), the libpmem2 program on both libraries (pmem2_checks) and
# where the project's programs are.

P=/ntmem
NTMEM=$P/tools/ntmem
PROBE=$P/tests/kernel/kernel_ns_probe
PMEM_PROBE=$P/tests/kernel/kernel_pmem_probe
DROPIN=$P/compat/libpmem
DEBIAN_LIBPMEM=/lib/x86_64-linux-gnu/libpmem.so.1
# tests/kernel/pmem2_probe.c, PMDK's libpmem2 API on Debian's libpmem2 and
# (LD_LIBRARY_PATH=$DROPIN2) on ntmem's drop-in: pmem2_checks.
PMEM2_PROBE=$P/tests/kernel/kernel_pmem2_probe
DROPIN2=$P/compat/libpmem2
DEBIAN_LIBPMEM2=/lib/x86_64-linux-gnu/libpmem2.so.1
# PMEM2_E_GRANULARITY_NOT_SUPPORTED (libpmem2/base.h): pmem2_map_new()'s
# code when the mapping cannot give the granularity asked for.
PMEM2_NO_GRANULARITY=-100009
# tests/compat/pmemblk_tool.c, PMDK's libpmemblk API, linked with ntmem's drop-in
# and with Debian's libpmemblk (make check's pmemblk_interop uses them).
BLK_NTMEM=$P/tests/compat/pmemblk_tool_ntmem
BLK_PMDK=$P/tests/compat/pmemblk_tool_pmdk
MNT=/mnt/pmem
# The checks' own scratch files: not in /tmp, which the test programs'
# run mounts over (scratch_test_programs).
S=/run/stage
mkdir -p "$S"
out=$S/check.out err=$S/check.err

NL='
' DEFAULT_IFS=$IFS

n=0 passed=0 failed=0 todo=0
todo_reason=

# todo REASON: the next check tests a known defect (TAP TODO).
todo() { todo_reason=$1; }

# result STATUS WHAT: one TAP line for a check that exited STATUS.
result() {
	n=$((n + 1))
	# The kernel's log stamps it: the console then shows where the time
	# of a slow run went, check by check.
	echo "ntmem: check $n done: $2" >/dev/kmsg 2>/dev/null
	if [ -n "$todo_reason" ]; then
		todo=$((todo + 1))
		if [ "$1" -eq 0 ]; then
			echo "ok $n - $2 # TODO $todo_reason"
		else
			echo "not ok $n - $2 # TODO $todo_reason"
		fi
	elif [ "$1" -eq 0 ]; then
		passed=$((passed + 1))
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
	fi
	todo_reason=
}

# show FILE [LINES]: FILE as diagnostic lines.
show() { head -n "${2:-20}" "$1" | sed 's/^/# /'; }

# said STATUS CMD...: the diagnostic line of a command that failed, on one
# line (a script given to sh -c may span several).
said() {
	st=$1
	shift
	echo "# exit $st: $*" | tr '\n\t' '  ' | tr -s ' '
	echo
}

# run CMD...: stdout in $out, stderr in $err; the command's status.
run() {
	"$@" >"$out" 2>"$err"
}

# check WHAT CMD...: CMD exits 0.
check() {
	what=$1
	shift
	run "$@"
	st=$?
	result "$st" "$what"
	[ "$st" -eq 0 ] || { said "$st" "$@"; show "$out"; show "$err"; }
	return "$st"
}

# check_words WHAT "WORD..." CMD...: CMD exits 0 and each WORD is a whole
# word of its output (grep -w: "is_pmem=1" is not found in "pmem_is_pmem=1").
# WORDs are separated by spaces, or by newlines when there is one (a WORD
# with spaces in it, such as a JSON member).
check_words() {
	what=$1 words=$2
	shift 2
	run "$@"
	st=$? missing=
	if [ "$st" -eq 0 ]; then
		case $words in
		*"$NL"*) IFS=$NL ;;
		esac
		for w in $words; do
			grep -qwF -- "$w" "$out" || missing="$missing '$w'"
		done
		IFS=$DEFAULT_IFS
	fi
	[ "$st" -eq 0 ] && [ -z "$missing" ]
	ok=$?
	result "$ok" "$what"
	show "$out" 3
	if [ "$st" -ne 0 ]; then
		said "$st" "$@"
		show "$err"
	elif [ -n "$missing" ]; then
		echo "# missing from the output:$missing"
	fi
	return "$ok"
}

# check_fails WHAT TEXT CMD...: CMD fails, with TEXT on its standard error.
check_fails() {
	what=$1 text=$2
	shift 2
	run "$@"
	st=$?
	[ "$st" -ne 0 ] && grep -qF -- "$text" "$err"
	result $? "$what"
	show "$err" 3
}

# skip WHAT WHY: a check that cannot run here (TAP SKIP, counts as passed).
skip() {
	n=$((n + 1)) passed=$((passed + 1))
	echo "ok $n - $1 # SKIP $2"
}

# bus_of PROVIDER: the ndbus whose provider attribute is PROVIDER.
bus_of() {
	for b in /sys/bus/nd/devices/ndbus*; do
		[ "$(cat "$b/provider" 2>/dev/null)" = "$1" ] && { basename "$b"; return 0; }
	done
	return 1
}

# region_of BUS [SIZE|-NAME]: the region under BUS (of SIZE bytes, or
# other than region NAME).
region_of() {
	for r in /sys/bus/nd/devices/"$1"/region*; do
		[ -d "$r" ] || continue
		case "${2:-}" in
		"") ;;
		-*) [ "$(basename "$r")" != "${2#-}" ] || continue ;;
		*) [ "$(cat "$r/size")" = "$2" ] || continue ;;
		esac
		basename "$r"
		return 0
	done
	return 1
}

# make_ns REGION ARGS...: namespaceR.0 of REGION recreated with ndctl in
# the mode ARGS give; $dev is then its device (/dev/pmemN or /dev/daxN.M).
# On a region with labels (a CXL region's) namespaceR.0 is at first a
# seed of no size, which cannot be reconfigured: it is made on the region
# then, and takes the seed's name.
make_ns() {
	ns_region=$1 ns=namespace${1#region}.0
	shift
	dev=
	if [ "$(cat "/sys/bus/nd/devices/$ns/size" 2>/dev/null)" = 0 ]; then
		run ndctl create-namespace -r "$ns_region" "$@" || return 1
	else
		run ndctl create-namespace -f -e "$ns" "$@" || return 1
	fi
	name=$(sed -n 's/.*"\(blockdev\|chardev\)":"\([^"]*\)".*/\2/p' "$out" | head -n 1)
	[ -n "$name" ] && dev=/dev/$name && [ -e "$dev" ]
}

# pmem_checks WHERE PATH PMDK DROPIN [TODO]: the PMDK program on PATH,
# without PMEM_IS_PMEM_FORCE, reports is_pmem PMDK on Debian's libpmem and
# DROPIN on ntmem's drop-in (the check marked TODO when given).
pmem_checks() {
	if [ ! -x "$PMEM_PROBE" ]; then
		skip "$1: PMDK program on both libpmems" "kernel_pmem_probe not built (libpmem-dev)"
		return
	fi
	check_words "$1: Debian's libpmem says is_pmem $3" \
		"is_pmem=$3 pmem_is_pmem=$3 lib=$DEBIAN_LIBPMEM" \
		env -u PMEM_IS_PMEM_FORCE "$PMEM_PROBE" "$2"
	[ -n "${5:-}" ] && todo "$5"
	check_words "$1: ntmem's drop-in says is_pmem $4" \
		"is_pmem=$4 pmem_is_pmem=$4 lib=$DROPIN/libpmem.so.1" \
		env -u PMEM_IS_PMEM_FORCE LD_LIBRARY_PATH="$DROPIN" "$PMEM_PROBE" "$2"
}

# ns_check WHAT REGION ARGS...: make_ns as a check.
ns_check() {
	what=$1
	shift
	make_ns "$@"
	st=$?
	result "$st" "$what"
	if [ "$st" -ne 0 ]; then
		echo "# ndctl create-namespace $*: exit $st, device '$dev'"
		show "$out"
		show "$err"
	fi
	return "$st"
}

# checker_mutants WHAT KIND WHERE SKIP: the checker's program-mutation
# proof (tests/check/check_mutants.sh) on KIND: "dax", the DAX file system
# mounted on WHERE (MAP_SYNC mappings, pmem as they are), or "devdax",
# the device WHERE: each persistence call of the corpus's correct
# programs deleted in turn is reported there too. SKIP: patterns of the
# programs left out ("" for none).
checker_mutants() {
	script=/ntmem-src/tests/check/check_mutants.sh
	if [ ! -f "$script" ] || [ ! -d "$P/src/record/check" ]; then
		skip "$1: the checker's mutation proof" "the corpus or the checking library not built"
		return
	fi
	case $2 in
	dax) mkdir -p "$3/mutants"; where="NTMEM_MUTANTS_DAX_DIR=$3/mutants" ;;
	devdax) where="NTMEM_MUTANTS_DEVDAX=$3" ;;
	esac
	run env NTMEM_CHECK_LIBDIR="$P/src/record/check" NTMEM_MUTANTS_KINDS="$2" \
		"$where" NTMEM_DISK_TMPDIR=/tmp \
		NTMEM_MUTANTS_SKIP="$4" sh "$script" "$NTMEM" "$P/tests/check"
	result $? "$1: every mutant of the checker's corpus reported (deleted persistence calls${4:+; not $4})"
	grep '^# recall\|^# .* programs\|^not ok\|^# equivalent' "$out" | sed 's/^# //; s/^/# /'
	[ "$2" = devdax ] || rm -rf "$3/mutants"
}

# mkfs_ext4 DEV: ext4 that can mount -o dax. DAX needs blocks of the page
# size, and mke2fs gives a device under 512 MiB (its "small" type, such as
# the virtio-pmem namespace) 1 KiB blocks: the kernel then refuses dax
# ("unsupported blocksize for DAX"). Lazy init: nothing is zeroed now.
mkfs_ext4() {
	mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=1,lazy_journal_init=1 "$1"
}

# mounted FS OPTIONS DEV: DEV mounted on $MNT, as a check.
mounted() {
	check "mount -t $1 -o $2 $3" mount -t "$1" -o "$2" "$3" "$MNT"
}
# pmem2_checks WHERE PATH "WORD...": the libpmem2 program on PATH (an
# existing file or devdax device) on Debian's libpmem2, then on the
# drop-in, then on Debian's again, without PMEM2_FORCE_GRANULARITY: each
# run maps it whole, copies its own 64 KiB pattern in, deep-flushes it
# and reads it back after a remap (read_back=1), and each finds the
# last run's pattern (previous=1): what one library made durable the
# other reads. Every WORD (name=value lines of the probe: granularity,
# alignment, ...) is in both libraries' answers, and all their answers
# are the same (all lines but lib= and previous=).
pmem2_checks() {
	if [ ! -x "$PMEM2_PROBE" ] || [ ! -e "$DROPIN2/libpmem2.so.1" ]; then
		skip "$1: libpmem2 program on both libraries" \
			"kernel_pmem2_probe (libpmem2-dev) or the drop-in not built"
		return
	fi
	check_words "$1: Debian's libpmem2: $3" "$3 read_back=1 lib=$DEBIAN_LIBPMEM2" \
		env -u PMEM2_FORCE_GRANULARITY "$PMEM2_PROBE" "$2" 1
	grep -v '^lib=' "$out" >"$S/pmem2-debian.out"
	echo "# $(grep -v '^lib=' "$out" | tr '\n' ' ')"
	check_words "$1: ntmem's libpmem2 drop-in: $3, reads Debian's data" \
		"$3 previous=1 read_back=1 lib=$DROPIN2/libpmem2.so.1" \
		env -u PMEM2_FORCE_GRANULARITY LD_LIBRARY_PATH="$DROPIN2" "$PMEM2_PROBE" "$2" 2 1
	grep -v '^lib=\|^previous=' "$out" >"$S/pmem2-dropin.out"
	echo "# $(grep -v '^lib=' "$out" | tr '\n' ' ')"
	check_words "$1: Debian's libpmem2 reads the data the drop-in persisted" \
		"previous=1 read_back=1" env -u PMEM2_FORCE_GRANULARITY "$PMEM2_PROBE" "$2" 3 2
	[ -n "${4:-}" ] && todo "$4"
	check "$1: Debian's libpmem2 and the drop-in give the same answers" \
		diff "$S/pmem2-debian.out" "$S/pmem2-dropin.out"
}

# finish: the plan, the TODO count and the closing "P passed, F failed"
# line the host looks for; the stage's exit status.
finish() {
	echo "1..$n"
	[ "$todo" -eq 0 ] || echo "# $todo TODO: known defects"
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
