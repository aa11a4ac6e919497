# SPDX-License-Identifier: MIT
#
# tap.sh - what every stage of make check-kernel's guest shares, sourced
# by tests/kernel/stage.sh and the other stages (stage-*.sh): the TAP
# lines of a check (result, check, check_words, check_fails, skip, todo),
# the run's closing lines (finish), the nd buses and regions (bus_of,
# region_of), namespaces made with ndctl (make_ns, ns_check), PMDK's
# libpmem program on both libpmems (pmem_checks), libpmemobj pools on both
# (obj_checks), the seeds' memmap experiment on a namespace (memmap_seed),
# the kernel's BTT and ntmem's on a sector namespace (btt_interop), the
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
# seed of no size, or gone once destroyed, and cannot be reconfigured: it
# is made on the region then, and takes the seed's name.
make_ns() {
	ns_region=$1 ns=namespace${1#region}.0
	shift
	dev=
	ns_size=$(cat "/sys/bus/nd/devices/$ns/size" 2>/dev/null)
	if [ "${ns_size:-0}" = 0 ]; then
		run ndctl create-namespace -r "$ns_region" "$@" || return 1
	else
		run ndctl create-namespace -f -e "$ns" "$@" || return 1
	fi
	name=$(sed -n 's/.*"\(blockdev\|chardev\)":"\([^"]*\)".*/\2/p' "$out" | head -n 1)
	[ -n "$name" ] && dev=/dev/$name && [ -e "$dev" ]
}

# pmem_checks WHERE PATH PMDK DROPIN [WORD]: the PMDK program on PATH,
# without PMEM_IS_PMEM_FORCE, reports is_pmem PMDK on Debian's libpmem and
# DROPIN on ntmem's drop-in, and WORD (a name=value line of the probe,
# auto_flush=N) from both when given.
pmem_checks() {
	if [ ! -x "$PMEM_PROBE" ]; then
		skip "$1: PMDK program on both libpmems" "kernel_pmem_probe not built (libpmem-dev)"
		return
	fi
	check_words "$1: Debian's libpmem says is_pmem $3${5:+, $5}" \
		"is_pmem=$3 pmem_is_pmem=$3 ${5:+$5 }lib=$DEBIAN_LIBPMEM" \
		env -u PMEM_IS_PMEM_FORCE "$PMEM_PROBE" "$2"
	check_words "$1: ntmem's drop-in says is_pmem $4${5:+, $5}" \
		"is_pmem=$4 pmem_is_pmem=$4 ${5:+$5 }lib=$DROPIN/libpmem.so.1" \
		env -u PMEM_IS_PMEM_FORCE LD_LIBRARY_PATH="$DROPIN" "$PMEM_PROBE" "$2"
}

# The kernel's memmap_init_zone_device lines so far (init.sh turned them on).
MEMMAP_LINE="memmap_init_zone_device initialised"
memmap_lines() { dmesg | grep -c "$MEMMAP_LINE"; }

# memmap_seed WHAT SEEN TARGET: the seeds' experiment on one namespace:
# the kernel's memmap_init_zone_device line for it (the first after SEEN
# lines) beside ntmem bench memmap --device TARGET (the namespace's devdax
# device, or a file on its file system). Under TCG neither time is
# performance; the point is that both ran on the same real namespace.
# $mm_kernel and $mm_ntmem are then the two page counts, and
# $S/memmap.out the bench's output.
memmap_seed() {
	kline=$(dmesg | grep "$MEMMAP_LINE" | tail -n +"$(($2 + 1))" | head -n 1)
	kline=${kline#*] }
	run "$NTMEM" bench memmap --device "$3" --layout 64 --strategy fixed --runs 1 --no-pmdk
	st=$?
	nline=$(grep "^$MEMMAP_LINE" "$out" | head -n 1)
	[ "$st" -eq 0 ] && [ -n "$kline" ] && [ -n "$nline" ]
	result $? "$1: the kernel's memmap init line and ntmem bench memmap --device on it"
	echo "# kernel (this namespace): ${kline:-no line in dmesg}"
	echo "# ntmem ($3): ${nline:-none}"
	echo "# (under TCG the times are not performance: both ran on this namespace)"
	[ "$st" -eq 0 ] || { echo "# exit $st"; show "$err"; }
	mm_kernel=$(echo "$kline" | sed -n 's/.*initialised \([0-9]*\) pages.*/\1/p')
	mm_ntmem=$(echo "$nline" | sed -n 's/.*initialised \([0-9]*\) pages.*/\1/p')
	cp "$out" $S/memmap.out
}

# obj_checks WHERE POOL SIZE: Debian's libpmemobj on both libpmems,
# without PMEM_IS_PMEM_FORCE: a pool at POOL (a new file of SIZE bytes,
# or a devdax device with SIZE 0: the whole device, its first 2 MiB
# zeroed first as pmemblk_checks does) made with libpmemobj on one
# libpmem, a transaction committed and one aborted there; the contents
# verified and pmemobj_check() on the other (not of a device dax:
# PMDK's check maps privately). LD_LIBRARY_PATH=$DROPIN puts the drop-in
# under libpmemobj (libpmem.so.1 is its dependency, not the probe's):
# the probe prints which libpmem.so.1 answered. libpmemobj decides on its
# own that the pool is pmem (a device dax, a MAP_SYNC mapping): on both,
# pool_is_pmem=1. Then pmempool info and check (Debian's pmdk-tools) of
# the pool the drop-in made.
OBJ_PROBE=$P/tests/kernel/kernel_obj_probe
OBJ_VALUE=value=0x6e746d656d6f626a
obj_checks() {
	if [ ! -x "$OBJ_PROBE" ]; then
		skip "$1: libpmemobj pools on both libpmems" "kernel_obj_probe not built (libpmemobj-dev)"
		return
	fi
	for maker in drop-in debian; do
		if [ $maker = drop-in ]; then
			mk="the drop-in" mk_path=$DROPIN mk_lib=$DROPIN/libpmem.so.1
			rd="Debian's libpmem" rd_path='' rd_lib=$DEBIAN_LIBPMEM
		else
			mk="Debian's libpmem" mk_path='' mk_lib=$DEBIAN_LIBPMEM
			rd="the drop-in" rd_path=$DROPIN rd_lib=$DROPIN/libpmem.so.1
		fi
		if [ "$3" = 0 ]; then
			"$PROBE" zero "$2" 2097152 >/dev/null
		else
			rm -f "$2"
		fi
		check_words "$1: libpmemobj on $mk makes a pool (pmem), commits, aborts" \
			"aborted=1 $OBJ_VALUE items=1 pool_is_pmem=1 lib=$mk_lib" \
			env -u PMEM_IS_PMEM_FORCE LD_LIBRARY_PATH="$mk_path" "$OBJ_PROBE" create "$2" "$3" ||
			continue
		check_words "$1: libpmemobj on $rd opens the pool made on $mk, as committed" \
			"$OBJ_VALUE items=1 pool_is_pmem=1 lib=$rd_lib" \
			env -u PMEM_IS_PMEM_FORCE LD_LIBRARY_PATH="$rd_path" "$OBJ_PROBE" verify "$2"
		if [ "$3" = 0 ]; then
			skip "$1: pmemobj_check() on $rd of the pool made on $mk" \
				"PMDK's check maps the pool privately, which device dax refuses"
		else
			check_words "$1: pmemobj_check() on $rd finds the pool made on $mk consistent" \
				"consistent=1 lib=$rd_lib" \
				env -u PMEM_IS_PMEM_FORCE LD_LIBRARY_PATH="$rd_path" "$OBJ_PROBE" check "$2"
		fi
		[ $maker = drop-in ] || continue
		if ! command -v pmempool >/dev/null; then
			skip "$1: pmempool of the pool made on the drop-in" "pmempool not in the guest (pmdk-tools)"
			continue
		fi
		check_words "$1: pmempool info reads the pool made on the drop-in" \
			"PMEMOBJ ntmem_kernel_obj clean" env -u PMEM_IS_PMEM_FORCE pmempool info "$2"
		grep -E "^(Signature|Layout|Last shutdown|Heap size) " "$out" | sed 's/^/# /'
		check_words "$1: pmempool check finds the pool made on the drop-in consistent" "$2: consistent" \
			env -u PMEM_IS_PMEM_FORCE pmempool check -v "$2"
		tail -n 1 "$out" | sed 's/^/# /'
	done
}

# force_raw 0|1 [NAMESPACE]: the namespace (default the label-less
# NVDIMM's) re-enabled with force_raw so.
force_raw() {
	ndctl disable-namespace "${2:-$ns0}" >/dev/null 2>&1 &&
		echo "$1" >"/sys/bus/nd/devices/${2:-$ns0}/force_raw" &&
		ndctl enable-namespace "${2:-$ns0}" >/dev/null 2>&1
}

# blockdev_of NAMESPACE: its block device, as ndctl lists it.
blockdev_of() {
	ndctl list -n "$1" | sed -n 's/.*"blockdev":"\([^"]*\)".*/\/dev\/\1/p' | head -n 1
}

# btt_interop WHAT REGION OFFSET BTT_VERSION: a sector namespace (4096)
# made on REGION (which has labels), its last block written with dd and
# read by ntm_btt_open() at OFFSET of the namespace re-enabled raw
# (force_raw); then the other way: ntmem lays a BTT out at OFFSET, its
# parent the namespace, writes block 7, and the kernel, the namespace
# enabled as it was, must read it. The kernel's BTT is BTT_VERSION, and
# ntmem lays that version out (PROBE_BTT_VERSION). The namespace is
# destroyed after.
btt_interop() {
	run ndctl create-namespace -r "$2" -m sector -l 4096
	st=$?
	lns=$(sed -n 's/.*"dev":"\(namespace[^"]*\)".*/\1/p' "$out" | head -n 1)
	dev=$(sed -n 's/.*"blockdev":"\([^"]*\)".*/\/dev\/\1/p' "$out" | head -n 1)
	[ "$st" -eq 0 ] && [ -n "$lns" ] && [ -b "$dev" ]
	result $? "$1: a sector namespace (4096) made: ${lns:-none} ${dev:-}" ||
		{ show "$out"; show "$err"; return; }
	sdev=$dev
	nlba=$(($(cat "/sys/block/${dev#/dev/}/size") * 512 / 4096))
	lba=$((nlba - 1))
	"$PROBE" pattern 4096 23 >$S/want
	check "$1: block $lba written through $dev" \
		dd if=$S/want of="$dev" bs=4096 seek="$lba" count=1 conv=fsync
	check "$1: $lns re-enabled raw (force_raw)" force_raw 1 "$lns" || return
	raw=$(blockdev_of "$lns")
	check_words "$1: ntm_btt_open at $3 reads block $lba of the kernel's BTT $4, sees $nlba blocks" \
		"read_back=1 version=$4 lbasize=4096 nlba=$nlba" \
		"$PROBE" btt-read "$raw" "$3" 4096 "$lba" 23
	PROBE_BTT_VERSION=$4
	export PROBE_BTT_VERSION
	check_words "$1: ntmem lays a BTT $4 out at $3 of $raw, block 7 written" \
		"written=1 version=$4" \
		"$PROBE" btt-write "$raw" "$3" 4096 7 24 "$(cat "/sys/bus/nd/devices/$lns/uuid")"
	unset PROBE_BTT_VERSION
	"$PROBE" pattern 4096 24 >$S/want
	check "$1: the kernel, $lns enabled again, reads block 7 as ntmem wrote it" \
		sh -c "ndctl disable-namespace $lns && echo 0 >/sys/bus/nd/devices/$lns/force_raw &&
		       ndctl enable-namespace $lns && [ -b $sdev ] &&
		       dd if=$sdev of=$S/got bs=4096 skip=7 count=1 && cmp $S/want $S/got"
	ndctl disable-namespace "$lns" >/dev/null 2>&1
	echo 0 >"/sys/bus/nd/devices/$lns/force_raw"
	ndctl destroy-namespace -f "$lns" >/dev/null 2>&1
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
