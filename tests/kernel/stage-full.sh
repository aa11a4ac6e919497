#!/bin/sh
# SPDX-License-Identifier: MIT
#
# stage-full.sh - the long checks of make check-kernel-full, run by the
# guest's init (tests/kernel/init.sh, ntmem.stage=full) on one label-less
# NVDIMM (scripts/kernel-check.sh --full): make check's own tests, each
# run as meson runs it (its arguments and environment, from
# /full-tests.sh, which scripts/kernel-stage-full.sh made from meson's
# list), with their scratch directory on a real kernel's DAX file system:
#
#   ext4 -o dax   /tmp bind-mounted on it (the tests' scratch directory,
#                 $NTMEM_TEST_SCRATCH's default and the CLI suites'), and
#                 NTMEM_TEST_SCRATCH_DAX a directory on it: the crash-image
#                 and recorder tests and the test programs that work in
#                 memory and /dev/shm ("once"), then the CLI suites and
#                 the test programs that make files there ("each")
#   xfs -o dax    the same, the "each" tests again
#
# and the checker's program-mutation proof with every program of its
# corpus on ext4 -o dax and on a Device DAX (4 KiB aligned).
#
# /dev/shm is a tmpfs, as on the systems make check runs on: the tests
# that want emulated pmem there find it. No test takes a device: the
# devdax namespaces are the main stage's (tests/kernel/stage.sh), but for
# the mutation proof's.
#
# Each test is one TAP check, its failed and skipped sub-tests named in
# diagnostics (cmocka's "[  FAILED  ] name", the shell suites' "not ok -"
# lines); exit 77 is a skip, as meson counts it. TAP as in stage.sh.

. /tap.sh

# A test's own meson timeout, times this, before it is killed: under TCG
# everything is many times slower than on the host (see kernel-check.sh
# for the boot's own timeout).
TCG_SLOWDOWN=10

# full_test GROUP NAME TIMEOUT VAR=VALUE... -- CMD...: one test of
# /full-tests.sh, run as a check when its GROUP is in $groups; $where
# names the file system in the check.
full_test() {
	group=$1 name=$2 limit=$3
	shift 3
	case " $groups " in *" $group "*) ;; *) return 0 ;; esac
	vars=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		vars="$vars $1"
		shift
	done
	shift
	started=$(date +%s)
	# shellcheck disable=SC2086 # VAR=VALUE words, none with spaces
	(cd $P && run timeout $((${limit:-120} * TCG_SLOWDOWN)) \
		env $vars NTMEM_TEST_SCRATCH_DAX="$MNT/dax-scratch" "$@")
	st=$?
	took=$(($(date +%s) - started))
	if [ "$st" -eq 77 ]; then
		skip "$where: $name" "the test skipped itself (exit 77): $(tail -n 1 "$out")"
		return
	fi
	result "$st" "$where: $name passes"
	echo "# $name: ${took} s"
	skipped=$(sed -n 's/^\[  SKIPPED \] \([a-z0-9_]*\)$/\1/p' "$out" "$err" | sort -u)
	[ -z "$skipped" ] || echo "# skipped: $(echo "$skipped" | tr '\n' ' ')"
	[ "$st" -eq 0 ] && return
	failed_tests=$(sed -n 's/^\[  FAILED  \] \([a-z0-9_]*\)$/\1/p' "$out" "$err" | sort -u)
	if [ -n "$failed_tests" ]; then
		echo "# failed: $(echo "$failed_tests" | tr '\n' ' ')"
		# Why: cmocka's messages, without its progress lines.
		cat "$err" "$out" | grep -v '^\[ \(RUN   \|      OK\|  PASSED\|  SKIPPED\|=========\)' |
			head -n 15 | sed 's/^/#   /'
	fi
	grep -h '^not ok' "$out" "$err" | head -n 20 | sed 's/^/# /'
	if [ -z "$failed_tests" ] && ! grep -q '^not ok' "$out" "$err"; then
		said "$st" "$@"
		tail -n 10 "$out" | sed 's/^/# /'
		show "$err" 10
	fi
}

# on_dax WHAT GROUPS: the tests of GROUPS with /tmp bind-mounted on the
# DAX file system mounted on $MNT (WHAT names it).
on_dax() {
	where=$1 groups=$2
	mkdir -p "$MNT/tmp" "$MNT/dax-scratch"
	chmod 1777 "$MNT/tmp"
	check "$where: /tmp bind-mounted on $MNT" mount -o bind "$MNT/tmp" /tmp || return
	# shellcheck source=/dev/null # made by scripts/kernel-stage-full.sh
	. /full-tests.sh
	umount /tmp
}

mkdir -p "$MNT" /dev/shm
check "/dev/shm: a tmpfs, as the tests expect" mount -t tmpfs -o size=256m tmpfs /dev/shm
if [ ! -f /full-tests.sh ]; then
	echo "Bail out! no /full-tests.sh: the root was not made with NTMEM_KERNEL_STAGE_FULL=1"
	exit 1
fi
echo "# $(grep -c '^full_test' /full-tests.sh) tests in /full-tests.sh"

nfit_bus=$(bus_of ACPI.NFIT) && region=$(region_of "$nfit_bus")
result $? "the NVDIMM's nd bus (provider ACPI.NFIT) has a region"
if [ -z "${region:-}" ]; then
	echo "Bail out! no region"
	exit 1
fi

if ns_check "NVDIMM: fsdax namespace (map=dev)" "$region" -m fsdax -M dev; then
	pmem=$dev
	check "mkfs.ext4 $pmem" mkfs_ext4 "$pmem"
	if mounted ext4 dax "$pmem"; then
		on_dax "ext4 dax" "once each"
		checker_mutants "ext4 dax" dax "$MNT" ""
		umount "$MNT"
	fi
	# XFS refuses -o dax on a file system with reflink, mkfs.xfs's default.
	check "mkfs.xfs $pmem" mkfs.xfs -q -f -m reflink=0 "$pmem"
	if mounted xfs dax "$pmem"; then
		on_dax "xfs dax" "each"
		umount "$MNT"
	fi
fi

# The checker's mutation proof on a Device DAX, the libpmemobj programs
# too (the main stage's devdax leaves them out for time): each pool is
# the whole device. own_map_msync cannot run on a device (stage.sh).
if ns_check "NVDIMM: devdax namespace, align 4K" "$region" -m devdax -a 4K; then
	checker_mutants "devdax 4K" devdax "$dev" "own_map_msync_*"
fi

finish
