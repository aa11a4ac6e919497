#!/bin/sh
# SPDX-License-Identifier: MIT
#
# stage.sh - the checks of make check-kernel, run by the guest's init
# (tests/kernel/init.sh) on namespaces the guest's own nd and dax drivers
# make with ndctl: ntmem's tool, its probes (tests/kernel/*.c) and a PMDK
# program on the real nd buses of a label-less NVDIMM (1 GiB), an NVDIMM
# with a label area (256 MiB) and a virtio-pmem device (512 MiB), which
# scripts/kernel-check.sh gives QEMU.
#
# Output is TAP: "ok N - what", "not ok N - what", diagnostics as "# ..."
# lines, then the plan "1..N" and a last line "P passed, F failed". A check
# of a defect the project knows and has not fixed yet is marked
# "# TODO defect: ..." (TAP's TODO): its failure does not fail the run,
# and the host lists it; when it passes, the defect is fixed and the
# marker should go.
#
# In order:
#   buses        the NFIT and virtio-pmem buses and their regions; ntmem
#                info (text and --json) on them
#   fsdax        ext4 -o dax, ext4 -o dax=never, xfs -o dax on the NVDIMM:
#                ntm_ns_open's kind and durability, a persisted write, a
#                PMDK program on Debian's libpmem and on the drop-in, a
#                libpmem2 program on Debian's libpmem2 and on the drop-in,
#                libpmemblk pools both ways, libpmemobj pools both ways
#                (and pmempool), BTTs (ntmem blk, ntm_blk), the seeds'
#                memmap experiment, ntmem check on its corpus, on fio and
#                on the libpmemobj corpus, ntmem bench check's libpmemobj
#                workloads, make check's test programs with /tmp on DAX, a
#                bad page under a file (/sys/block/pmemN/badblocks)
#   devdax       2M and 4K: the same where it applies, the memmap lines
#                of the kernel and of ntmem bench memmap --device
#   BTT          the kernel's and ntmem's, both ways: label-less (512 and
#                4096-byte sectors), v1.1 and v1.2 labels
#   virtio-pmem  fsdax (the kernel refuses MAP_SYNC: libpmem2's PAGE
#                granularity) and devdax (accepted, yet nothing makes its
#                writes durable)
#
# Without labels a region holds exactly one namespace, namespaceR.0: the
# label-less NVDIMM's are made one after the other, each replacing the
# last (ndctl create-namespace -f -e).

. /tap.sh

# pmemblk_checks WHERE POOL SIZE: pools of 4 KiB blocks at POOL (a new
# file of SIZE bytes, or a devdax device with SIZE 0: the whole device)
# made by each libpmemblk, written by it and read back by the other, on a
# real DAX mapping and without PMEM_IS_PMEM_FORCE; pmemblk_check() of
# each. A device's first 2 MiB are zeroed first: PMDK refuses to make a
# pool over what looks like data ("Non-empty file detected").
pmemblk_checks() {
	if [ ! -x "$BLK_NTMEM" ] || [ ! -x "$BLK_PMDK" ]; then
		skip "$1: libpmemblk pools both ways" "pmemblk_tool not built (libpmemblk-dev)"
		return
	fi
	for maker in ntmem pmdk; do
		if [ $maker = ntmem ]; then mk=$BLK_NTMEM rd=$BLK_PMDK other=pmdk
		else mk=$BLK_PMDK rd=$BLK_NTMEM other=ntmem; fi
		if [ "$3" = 0 ]; then
			"$PROBE" zero "$2" 2097152 >/dev/null
		else
			rm -f "$2"
		fi
		check_words "$1: a pool made by $maker's libpmemblk" "bsize 4096" \
			env -u PMEM_IS_PMEM_FORCE "$mk" create "$2" 4096 "$3" || continue
		check "$1: $maker writes every 7th block" \
			env -u PMEM_IS_PMEM_FORCE "$mk" write "$2" 5 7 || continue
		check "$1: $other's libpmemblk reads them back, the rest zeros" \
			env -u PMEM_IS_PMEM_FORCE "$rd" verify "$2" 5 7 0
		if [ "$3" = 0 ] && [ $other = pmdk ]; then
			skip "$1: pmdk's pmemblk_check() of $maker's pool" \
				"PMDK's check maps the pool privately, which device dax refuses"
		else
			check "$1: $other's pmemblk_check() finds $maker's pool consistent" \
				env -u PMEM_IS_PMEM_FORCE "$rd" check "$2"
		fi
	done
}

# fs_checks WHAT MOUNT_OPTS KIND: a file on the file system mounted on
# $MNT as ntmem and PMDK see it; KIND is what ntm_ns_open() must say.
fs_checks() {
	f=$MNT/ns
	truncate -s 64M "$f"
	if [ "$3" = fsdax ]; then
		check_words "$1 $2: ntm_ns_open says fsdax, cpu-durable" \
			"kind=fsdax cpu_durable=1 align=2097152" "$PROBE" info "$f"
		check "$1 $2: a pattern persisted and read back" "$PROBE" write "$f"
		pmem_checks "$1 $2" "$f" 1 1
		# MAP_SYNC: the CPU's stores reach the media once flushed.
		pmem2_checks "$1 $2" "$f" \
			"size=67108864 align=4096 map_byte=$PMEM2_NO_GRANULARITY map_cache_line=0 granularity=CACHE_LINE deep_flush=0 badblocks=0"
		if [ "$1 $2" = "ext4 dax" ]; then
			obj_checks "$1 $2" "$MNT/obj" 8388608
		fi
	else
		check_words "$1 $2: ntm_ns_open says file, not cpu-durable" \
			"kind=file cpu_durable=0" "$PROBE" info "$f"
		check "$1 $2: a pattern persisted (msync) and read back" "$PROBE" write "$f"
		pmem_checks "$1 $2" "$f" 0 0
		# No MAP_SYNC: only msync() makes a store durable.
		pmem2_checks "$1 $2" "$f" \
			"size=67108864 align=4096 map_cache_line=$PMEM2_NO_GRANULARITY granularity=PAGE deep_flush=0 badblocks=0"
	fi
}

# bad_sector_checks: a page marked bad in the block device's list
# (/sys/block/pmemN/badblocks takes "SECTOR COUNT", in 512-byte sectors)
# under the first page of a file on the DAX file system mounted on $MNT,
# whose device is $pmem. Nothing clears it (that needs the platform): the
# namespace is not used as a block device again.
bad_sector_checks() {
	f=$MNT/bad
	dd if=/dev/zero of="$f" bs=1M count=2 conv=fsync 2>/dev/null
	check_words "$1: FIEMAP says where the file is" "physical" "$PROBE" fiemap "$f" ||
		return
	sector=$(($(sed -n 's/.* physical=\([0-9]*\) .*/\1/p' "$out") / 512))
	check "$1: sectors $sector+8 marked bad in ${pmem#/dev/}'s list" \
		sh -c "echo '$sector 8' >/sys/block/${pmem#/dev/}/badblocks"
	check_fails "$1: read(2) of the file's first page is EIO" "Input/output error" \
		dd if="$f" of=/dev/null bs=4096 count=1
	check_words "$1: ntm_blk_read of that page is EIO, not SIGBUS" "read=eio" \
		"$PROBE" badblocks "$f"
	check_words "$1: ntm_blk_badblocks lists the file's bad sectors" "badblocks=0+8" \
		"$PROBE" badblocks "$f"
}

# scratch_test_programs WHAT: make check's test programs that make their
# scratch files in $NTMEM_TEST_SCRATCH (default /tmp; tests/lib/testutil.h),
# run twice: with /tmp bind-mounted on the DAX file system mounted on $MNT
# (the tests that need an emulated namespace skip there, the others run
# on fsdax; NTMEM_TEST_SCRATCH_DAX names the same file system for the
# tests of emulation on DAX), and with /tmp as booted (not DAX): every test
# then runs.
TEST_PROGRAMS="test_ns test_blk test_badblocks test_embed"
scratch_test_programs() {
	mkdir -p "$MNT/tmp" "$MNT/dax-scratch"
	mount -o bind "$MNT/tmp" /tmp || { result 1 "$1: /tmp bind-mounted on $MNT"; return; }
	for t in $TEST_PROGRAMS; do
		scratch_test_program "$1" "$t" "with /tmp on DAX"
	done
	umount /tmp
	for t in $TEST_PROGRAMS; do
		scratch_test_program "$1" "$t" "with /tmp not DAX"
	done
}

# scratch_test_program WHAT PROGRAM HOW: one run of a test program, the
# names of its failed and skipped tests shown (not cmocka's whole report).
scratch_test_program() {
	if [ ! -x "$P/tests/unit/$2" ]; then
		skip "$1: $2 $3" "not built"
		return
	fi
	run env NTMEM_TEST_SCRATCH_DAX="$MNT/dax-scratch" "$P/tests/unit/$2"
	st=$?
	result "$st" "$1: $2 passes $3"
	skipped=$(sed -n 's/^\[  SKIPPED \] \(test_[a-z0-9_]*\)$/\1/p' "$out" | sort -u)
	[ -z "$skipped" ] || echo "# skipped: $(echo "$skipped" | tr '\n' ' ')"
	failed_tests=$(sed -n 's/^\[  FAILED  \] \(test_[a-z0-9_]*\)$/\1/p' "$out" | sort -u)
	if [ -n "$failed_tests" ]; then
		echo "# failed: $(echo "$failed_tests" | tr '\n' ' ')"
	elif [ "$st" -ne 0 ]; then
		said "$st" "$P/tests/unit/$2"
		tail -n 5 "$out" | sed 's/^/# /'
		show "$err" 5
	fi
}

# checker_corpus WHAT: ntmem check on the corpus of tests/check (each
# program maps a 1 MiB file with PMDK's libpmem API and has one durability
# bug; its _fixed twin has none) with the files on the DAX file system
# mounted on $MNT: the checker watches MAP_SYNC mappings as it watches
# page-cache ones, so each bug is reported (exit 3) and no twin is.
checker_corpus() {
	if [ ! -d "$P/tests/check" ] || [ ! -d "$P/src/record/check" ]; then
		skip "$1: ntmem check on the corpus" "the corpus or the checking library not built"
		return
	fi
	mkdir -p "$MNT/corpus"
	for prog in "$P"/tests/check/*_fixed; do
		bug=${prog%_fixed}
		name=$(basename "$bug")
		# libpmemobj's programs: checker_pmemobj
		case $name in pmemobj_*) continue ;; esac
		run env NTMEM_CHECK_LIBDIR="$P/src/record/check" "$NTMEM" check --json \
			--error-exitcode 3 -- "$bug" "$MNT/corpus"
		bug_st=$?
		# The JSON report is on standard error, one report a line.
		kinds=$(sed -n 's/.*"kind": *"\([a-z-]*\)".*/\1/p' "$err" | sort -u | tr '\n' ' ')
		run env NTMEM_CHECK_LIBDIR="$P/src/record/check" "$NTMEM" check --json \
			--error-exitcode 3 -- "$prog" "$MNT/corpus"
		fixed_st=$?
		[ "$bug_st" -eq 3 ] && [ "$fixed_st" -eq 0 ]
		result $? "$1: ntmem check reports $name's bug and not its fixed twin's"
		echo "# $name: exit $bug_st (${kinds:-no report}), ${name}_fixed: exit $fixed_st"
		[ "$fixed_st" -eq 0 ] || { show "$out" 5; show "$err" 5; }
	done
}

# checker_devdax_2m WHAT DEV: a program under ntmem check on a Device DAX
# of 2 MiB alignment, whose single pages cannot be write-protected and
# unprotected alone: the mapping stops being watched at the first store,
# the program runs to its end (never killed), the run is checked in part
# (exit 4) and its report says why.
checker_devdax_2m() {
	if [ ! -x "$P/tests/check/missing_flush_fixed" ] || [ ! -d "$P/src/record/check" ]; then
		skip "$1: ntmem check on it" "the corpus or the checking library not built"
		return
	fi
	run env NTMEM_CHECK_LIBDIR="$P/src/record/check" "$NTMEM" check -- \
		"$P/tests/check/missing_flush_fixed" "$2"
	st=$?
	[ "$st" -eq 4 ] && grep -q 'checked in part' "$err" &&
		grep -q 'cannot be unprotected alone' "$err"
	result $? "$1: ntmem check on a program that stores to it: checked in part (exit 4), never killed"
	[ "$st" -eq 4 ] || { said "$st" "ntmem check"; show "$err" 8; }
}


# checker_fio WHAT: Debian's unmodified fio, its libpmem engine, under
# ntmem check on a file of the DAX file system mounted on $MNT, without
# PMEM_IS_PMEM_FORCE (tests/check/check_fio.sh is make check's version):
# fio's libpmem.so.1 is then the checking library (the drop-in with the
# checker's hooks). 2 MiB of 4 KiB random writes, non-temporal and each
# drained (--direct=1 --sync=1), verified by fio: exit 0, nothing
# reported, the run judged. Then the same writes never drained: fio's
# own durability gap, one not-fenced record at pmem_unmap (exit 3),
# which shows the checker watched fio's stores on DAX.
FIO_ERRORS='verify.*(fail|mismatch)|bad (magic|header)|err= *[1-9]'
checker_fio() {
	if ! command -v fio >/dev/null || [ ! -d "$P/src/record/check" ]; then
		skip "$1: fio under ntmem check" "no fio in the guest, or the checking library not built"
		return
	fi
	watch=$P/src/record/check
	check "$1: fio's libpmem.so.1 under ntmem check is the checking library" sh -c \
		"LD_LIBRARY_PATH=$watch /lib64/ld-linux-x86-64.so.2 --list $(command -v fio) |
		 grep -F 'libpmem.so.1 => $watch/libpmem.so.1 '"
	grep -F libpmem.so.1 "$out" | sed 's/^[[:space:]]*/# /'
	rm -f "$MNT/fio" "$MNT/fio-nodrain"
	run env -u PMEM_IS_PMEM_FORCE NTMEM_CHECK_LIBDIR="$watch" "$NTMEM" check --json \
		--error-exitcode 3 --report $S/fio.json -- fio --name=kernel \
		--filename="$MNT/fio" --ioengine=libpmem --thread --numjobs=1 --size=2m \
		--bs=4k --rw=randwrite --direct=1 --sync=1 --verify=crc32c --do_verify=1 \
		--verify_state_save=0
	st=$?
	[ "$st" -eq 0 ] && grep -q '"errors": 0,.*"judged": true' $S/fio.json &&
		grep -q "issued rwts: total=512,512," "$out" &&
		! grep -qiE "$FIO_ERRORS" "$out" "$err"
	result $? "$1: fio --ioengine=libpmem --direct=1 --sync=1 under ntmem check: written, verified, nothing reported"
	echo "# exit $st; $(head -n 1 $S/fio.json)"
	grep "issued rwts" "$out" | sed 's/^[[:space:]]*/# /'
	[ "$st" -eq 0 ] || { show $S/fio.json 5; show "$err" 5; }
	run env -u PMEM_IS_PMEM_FORCE NTMEM_CHECK_LIBDIR="$watch" "$NTMEM" check --json \
		--error-exitcode 3 --report $S/fio.json -- fio --name=kernel \
		--filename="$MNT/fio-nodrain" --ioengine=libpmem --thread --numjobs=1 \
		--size=2m --bs=4k --rw=write --direct=1
	st=$?
	[ "$st" -eq 3 ] && grep -q '"errors": 1,' $S/fio.json &&
		grep -q '"kind":"not-fenced","when":"unmap","file":"'"$MNT/fio-nodrain"'","offset":0,"length":2097152,.*"point":"pmem_unmap"' $S/fio.json
	result $? "$1: fio --direct=1 without a drain under ntmem check: its stores unfenced at pmem_unmap"
	echo "# exit $st; $(head -n 1 $S/fio.json)"
	sed -n 's/.*"kind":"\([a-z-]*\)","when":"\([a-z]*\)","file":"\([^"]*\)","offset":\([0-9]*\),"length":\([0-9]*\).*/# \1 at \2: \3 +\4 \5 bytes/p' $S/fio.json
	rm -f "$MNT/fio" "$MNT/fio-nodrain"
}

# checker_pmemobj WHAT: programs of the libpmemobj corpus of tests/check (Debian's
# libpmemobj, its libpmem.so.1 the checking library: the drop-in with the
# checker's hooks) under ntmem check with its pools on the DAX file system
# mounted on $MNT, without PMEM_IS_PMEM_FORCE (libpmemobj finds a MAP_SYNC
# mapping pmem itself; tests/check/check_pmemobj.sh is make check's
# version). A program that prints "expect OFFSET LENGTH" has one bug
# there: one bug record at exactly that place of its pool (exit 3); one
# that prints none reports no bug (its finding is a note); every _fixed
# twin gets no report at all. Then one of ntmem bench check's libpmemobj
# workloads, a tiny run, plain and checked on the same file system:
# the bench sees DAX and unsets PMEM_IS_PMEM_FORCE, and no checked run
# may report a bug.
checker_pmemobj() {
	watch=$P/src/record/check
	if [ ! -x "$P/tests/check/pmemobj_root_store_fixed" ] || [ ! -d "$watch" ]; then
		skip "$1: ntmem check on the libpmemobj corpus" \
			"the corpus (libpmemobj-dev) or the checking library not built"
		return
	fi
	# Three of the corpus, each under ntmem check about 7 s of TCG: a
	# missing persist in the root object, a transaction's unadded store,
	# an allocation's constructor (libpmemobj's allocator around it). The
	# whole corpus runs on DAX in make check-kernel-full (check_pmemobj)
	# and on the host in make check.
	for name in pmemobj_root_store pmemobj_tx_short_add pmemobj_alloc_ctor; do
		fixed=$P/tests/check/${name}_fixed
		bug=${fixed%_fixed}
		name=$(basename "$bug")
		rm -rf "$MNT/obj-corpus"
		mkdir -p "$MNT/obj-corpus"
		run env -u PMEM_IS_PMEM_FORCE NTMEM_CHECK_LIBDIR="$watch" "$NTMEM" check \
			--json --report $S/obj.json --error-exitcode 3 -- "$bug" "$MNT/obj-corpus"
		bug_st=$?
		exp=$(sed -n 's/^expect \([0-9]*\) \([0-9]*\)$/"offset":\1,"length":\2,/p' "$out")
		nbugs=$(grep -c '"type":"bug"' $S/obj.json)
		if [ -n "$exp" ]; then
			[ "$bug_st" -eq 3 ] && [ "$nbugs" -eq 1 ] &&
				grep -F '"type":"bug"' $S/obj.json |
				grep -qF "\"file\":\"$MNT/obj-corpus/$name.pmem\",$exp"
		else
			[ "$bug_st" -eq 0 ] && [ "$nbugs" -eq 0 ]
		fi
		st=$?
		result $st "$1: ntmem check on $name (libpmemobj): ${exp:+its bug at }${exp:-no bug}"
		echo "# $name: exit $bug_st, $nbugs bug records; $(head -n 1 $S/obj.json | cut -c1-120)"
		sed -n 's/.*"type":"bug","kind":"\([a-z-]*\)".*"offset":\([0-9]*\),"length":\([0-9]*\).*/#   \1 at +\2 \3 bytes/p' $S/obj.json
		rm -rf "$MNT/obj-corpus"
		mkdir -p "$MNT/obj-corpus"
		run env -u PMEM_IS_PMEM_FORCE NTMEM_CHECK_LIBDIR="$watch" "$NTMEM" check \
			--json --report $S/obj.json --error-exitcode 3 -- "$fixed" "$MNT/obj-corpus"
		fixed_st=$?
		[ "$fixed_st" -eq 0 ] && grep -q '^{"errors": 0, "perf_notes": 0,' $S/obj.json &&
			grep -q '"checked": "all"' $S/obj.json
		result $? "$1: ntmem check on ${name}_fixed (libpmemobj): no report, checked in full"
		[ "$fixed_st" -eq 0 ] || { echo "# exit $fixed_st"; show "$err" 5; }
	done
	rm -rf "$MNT/obj-corpus"
	if [ ! -x "$P/tools/ntmem-bench-pmemobj" ]; then
		skip "$1: ntmem bench check's libpmemobj workloads" "ntmem-bench-pmemobj not built"
		return
	fi
	mkdir -p "$MNT/bench"
	# One workload (the bench starts each program twice, plain and
	# checked): the allocator's, whose transactions allocate and free.
	for wl in pmemobj-alloc; do
		run env -u PMEM_IS_PMEM_FORCE NTMEM_CHECK_LIBDIR="$watch" "$NTMEM" bench check \
			--workload $wl --runs 1 --ops 200 --dir "$MNT/bench" --csv
		st=$?
		[ "$st" -eq 0 ] && grep -q "^# dir: $MNT/bench, DAX (MAP_SYNC), PMEM_IS_PMEM_FORCE unset" "$out" &&
			grep -q "^$wl,plain," "$out" && grep -q "^$wl,checked,.*,0\$" "$out"
		result $? "$1: ntmem bench check --workload $wl on DAX: plain and checked, no bug"
		grep "^$wl," "$out" | sed 's/^/# /'
		[ "$st" -eq 0 ] || { echo "# exit $st"; show "$err" 8; }
	done
	rmdir "$MNT/bench" 2>/dev/null
}

mkdir -p "$MNT"

# --- the buses and regions --------------------------------------------------

# Told apart by size: the label-less one is 1 GiB; the other is 256 MiB
# less its label area.
nfit_bus=$(bus_of ACPI.NFIT) && nfit_region=$(region_of "$nfit_bus" 1073741824) &&
	label_region=$(region_of "$nfit_bus" "-$nfit_region")
result $? "the NVDIMMs' nd bus (provider ACPI.NFIT) has their two regions"
echo "# $nfit_bus: ${nfit_region:-} (label-less), ${label_region:-} (labels)"
virtio_bus=$(bus_of virtio-pmem) && virtio_region=$(region_of "$virtio_bus")
result $? "virtio-pmem's nd bus (provider virtio-pmem) has a region"
echo "# $virtio_bus: $virtio_region"
if [ -z "${nfit_region:-}" ] || [ -z "${virtio_region:-}" ]; then
	echo "Bail out! no regions to check"
	exit 1
fi

check_words "ntmem info lists both nd regions" "$nfit_region $virtio_region" \
	"$NTMEM" info
grep "region" "$out" | head -n 4 | sed 's/^/# /'
# QEMU's NFIT has no platform capabilities: no persistence_domain file.
check_words "ntmem info --json lists both regions, domain none (QEMU's NFIT has none)" \
	"\"name\": \"$nfit_region\", \"persistence_domain\": \"none\"}
\"name\": \"$virtio_region\"" "$NTMEM" info --json
check_words "ntmem info names the virtio-pmem bus of $virtio_region, never cpu-durable" \
	"$virtio_region virtio-pmem $virtio_bus never cpu-durable" "$NTMEM" info
check_words "ntmem info --json: $virtio_region is async, on $virtio_bus" \
	"\"bus\": \"$virtio_bus\"$NL\"provider\": \"virtio-pmem\", \"async\": true, \"name\": \"$virtio_region\"" \
	"$NTMEM" info --json

# --- NVDIMM, fsdax: ext4 -o dax, ext4 -o dax=never, xfs -o dax ----------

seen=$(memmap_lines)
if ns_check "NVDIMM: fsdax namespace (map=dev)" "$nfit_region" -m fsdax -M dev; then
	pmem=$dev
	check "mkfs.ext4 $pmem" mkfs_ext4 "$pmem"
	if mounted ext4 dax "$pmem"; then
		fs_checks ext4 dax fsdax
		memmap_seed "fsdax map=dev" "$seen" "$MNT/ns"
		pmemblk_checks "ext4 dax" "$MNT/pool" 67108864
		checker_corpus "ext4 dax"
		# The libpmemobj programs, about 7 s a run under TCG, are
		# make check-kernel-full's (stage-full.sh).
		checker_mutants "ext4 dax" dax "$MNT" "pmemobj_*"
		checker_fio "ext4 dax"
		checker_pmemobj "ext4 dax"
		scratch_test_programs "ext4 dax"
		check "ext4 dax: ntmem blk create --btt on a file" \
			"$NTMEM" blk create "$MNT/blk" --size 64m --btt
		check "ext4 dax: ntmem blk check of that BTT" "$NTMEM" blk check "$MNT/blk"
		check_words "ext4 dax: ntm_blk BTT of 512-byte sectors written, reopened, read back" \
			"btt_sector=512 read_back=1" "$PROBE" btt "$MNT/ns" 512
		umount "$MNT"
	fi
	if mounted ext4 dax=never "$pmem"; then
		fs_checks ext4 dax=never file
		umount "$MNT"
	fi
	# XFS refuses -o dax on a file system with reflink, mkfs.xfs's default.
	check "mkfs.xfs $pmem" mkfs.xfs -q -f -m reflink=0 "$pmem"
	if mounted xfs dax "$pmem"; then
		fs_checks xfs dax fsdax
		bad_sector_checks "xfs dax"
		umount "$MNT"
	fi
fi

# --- NVDIMM, devdax 2M and 4K ---------------------------------------------

seen=$(memmap_lines)
if ns_check "NVDIMM: devdax namespace, align 2M" "$nfit_region" -m devdax -a 2M; then
	dax=$dev
	memmap_seed "devdax 2M" "$seen" "$dax"
	# The kernel's memmap (in the namespace's reserved room, before the
	# device's first byte) has a descriptor for every 4 KiB page of the
	# device; ntmem's map=dev memmap is stored on the device itself, so
	# it describes the pages after its own.
	dax_pages=$(($(cat "/sys/bus/dax/devices/${dax#/dev/}/size") / 4096))
	[ "${mm_kernel:-0}" -eq "$dax_pages" ] && [ "${mm_ntmem:-0}" -gt 0 ] &&
		[ "$mm_ntmem" -lt "$dax_pages" ]
	result $? "devdax 2M: the kernel's memmap covers the device's $dax_pages pages, ntmem's those after its own"
	echo "# kernel ${mm_kernel:-?} pages, ntmem ${mm_ntmem:-?} (its memmap takes $((dax_pages - ${mm_ntmem:-0})) pages of the device)"
	check_words "devdax 2M: ntmem bench memmap --device labels the run devdax" \
		"devdax" grep "^devdax\|^fsdax" $S/memmap.out
	check_words "devdax 2M: ntm_ns_open says devdax, cpu-durable, 2 MiB aligned" \
		"kind=devdax cpu_durable=1 align=2097152" "$PROBE" info "$dax"
	check "devdax 2M: a pattern persisted and read back" "$PROBE" write "$dax"
	checker_devdax_2m "devdax 2M" "$dax"
	pmem_checks "devdax 2M" "$dax" 1 1
	pmem2_checks "devdax 2M" "$dax" \
		"size=$(cat "/sys/bus/dax/devices/${dax#/dev/}/size") align=2097152 map_byte=$PMEM2_NO_GRANULARITY granularity=CACHE_LINE deep_flush=0 badblocks=0"
	check_words "devdax 2M: ntm_blk lays a BTT of 4096-byte sectors, read back reopened" \
		"btt_sector=4096 read_back=1" "$PROBE" btt "$dax" 4096
	check "devdax 2M: ntmem blk check of that BTT" "$NTMEM" blk check "$dax"
	size=$(cat "/sys/bus/dax/devices/${dax#/dev/}/size" 2>/dev/null)
	check "devdax 2M: ntmem blk create $dax --size $size --btt" \
		"$NTMEM" blk create "$dax" --size "${size:-0}" --btt
	check_words "devdax 2M: ntmem blk create $dax --btt (no --size) lays a BTT over the whole device" \
		"$size devdax" "$NTMEM" blk create "$dax" --btt --sector-size 4096
	check "devdax 2M: ntmem blk check of the BTT blk create laid" \
		"$NTMEM" blk check "$dax"
	check_fails "devdax 2M: ntmem blk create $dax --size 4m (not its size) is refused" \
		"the device '$dax' has $size bytes" \
		"$NTMEM" blk create "$dax" --size 4m --btt
	[ -c "$dax" ]
	result $? "devdax 2M: a refused blk create leaves the device node"
	obj_checks "devdax 2M" "$dax" 0
fi
if ns_check "NVDIMM: devdax namespace, align 4K" "$nfit_region" -m devdax -a 4K; then
	pmemblk_checks "devdax 4K" "$dev" 0
	# A device dax is a pool of its whole size: a poolsize is refused by
	# both, and the device stays.
	if [ -x "$BLK_NTMEM" ] && [ -x "$BLK_PMDK" ]; then
		check_fails "devdax 4K: ntmem's pmemblk_create with a poolsize is refused" \
			"size must be zero for device dax" \
			env -u PMEM_IS_PMEM_FORCE "$BLK_NTMEM" create "$dev" 4096 67108864
		check_fails "devdax 4K: pmdk's pmemblk_create with a poolsize is refused" "" \
			env -u PMEM_IS_PMEM_FORCE "$BLK_PMDK" create "$dev" 4096 67108864
		[ -c "$dev" ]
		result $? "devdax 4K: refused pmemblk_creates leave the device node"
	fi
	check_words "devdax 4K: ntm_ns_open says devdax, 4 KiB aligned" \
		"kind=devdax cpu_durable=1 align=4096" "$PROBE" info "$dev"
	# own_map_msync maps its file itself, asks pmem_is_pmem() and
	# persists with pmem_msync() where the answer is no: of a device
	# mapped so, ntmem's libpmem answers no, as PMDK's does (only
	# pmem_map_file() makes pmem), and a device refuses msync(). A
	# program libpmem(7) calls correct that cannot run on a device:
	# shown here, left out of the proof. The libpmemobj programs:
	# stage-full.sh.
	if [ -x "$P/tests/check/own_map_msync_fixed" ]; then
		check_fails "devdax 4K: own_map_msync (a device mapped by the program, persisted by pmem_msync) fails on it: not a program for a device" \
			"pmem_msync: Invalid argument" "$P/tests/check/own_map_msync_fixed" "$dev"
	fi
	checker_mutants "devdax 4K" devdax "$dev" "pmemobj_* own_map_msync_*"
	check "devdax 4K: a pattern persisted and read back" "$PROBE" write "$dev"
	pmem2_checks "devdax 4K" "$dev" "align=4096 granularity=CACHE_LINE badblocks=0"
fi

# --- BTT: the kernel's read by ntmem, ntmem's read by the kernel -----------

# Label-less (as v1.1 labels): the kernel's BTT 1.1 info block is at
# namespace offset 4096, its parent_uuid zero. force_raw shows the
# namespace's raw bytes (/dev/pmemN) whatever is on it; the kernel probes
# a raw namespace for a BTT when it is enabled.
ns0=namespace${nfit_region#region}.0
raw_dev=/dev/pmem${nfit_region#region}
sector_dev=${raw_dev}s

# kernel_btt_to_ntmem LBASIZE: the kernel's BTT (a sector namespace), its
# last block written with dd, read by ntm_btt_open() at offset 4096 of
# the raw namespace; and at offset 0, where no BTT starts.
kernel_btt_to_ntmem() {
	ns_check "kernel BTT $1: sector namespace" "$nfit_region" -m sector -l "$1" || return
	nlba=$(($(cat "/sys/block/${dev#/dev/}/size") * 512 / $1))
	lba=$((nlba - 1))
	"$PROBE" pattern "$1" 21 >$S/want
	check "kernel BTT $1: block $lba written through $dev" \
		dd if=$S/want of="$dev" bs="$1" seek="$lba" count=1 conv=fsync
	check "kernel BTT $1: the namespace re-enabled raw (force_raw)" force_raw 1 || return
	check_words "kernel BTT $1: ntm_btt_open at 4096 reads block $lba, sees $nlba blocks" \
		"read_back=1 version=1.1 lbasize=$1 nlba=$nlba readonly=0" \
		"$PROBE" btt-read "$raw_dev" 4096 "$1" "$lba" 21
	check_fails "kernel BTT $1: ntm_btt_open at offset 0 (no info block there) refuses" \
		"open the BTT" "$PROBE" btt-read "$raw_dev" 0 "$1" 0 21
	show "$out" 2
	force_raw 0
}

# ntmem_btt_to_kernel LBASIZE: ntm_btt_open() lays a BTT out at offset
# 4096 of a raw namespace and writes block 7; re-enabled, the kernel
# finds it (a sector device of LBASIZE) and reads block 7 back.
ntmem_btt_to_kernel() {
	ns_check "ntmem BTT $1: raw namespace" "$nfit_region" -m raw || return
	check_words "ntmem BTT $1: laid out at 4096 of $dev, block 7 written" "written=1" \
		"$PROBE" btt-write "$dev" 4096 "$1" 7 22 || return
	nlba=$(sed -n 's/.* nlba=\([0-9]*\) .*/\1/p' "$out")
	ndctl disable-namespace "$ns0" >/dev/null 2>&1
	check "ntmem BTT $1: the kernel enables the namespace as a sector device" \
		sh -c "ndctl enable-namespace $ns0 && [ -b $sector_dev ]" || return
	check_words "ntmem BTT $1: the kernel's sector size and block count are ntmem's" \
		"$1 $((nlba * $1 / 512))" sh -c "cat /sys/block/${sector_dev#/dev/}/queue/logical_block_size /sys/block/${sector_dev#/dev/}/size"
	"$PROBE" pattern "$1" 22 >$S/want
	check "ntmem BTT $1: the kernel reads block 7 as ntmem wrote it" \
		sh -c "dd if=$sector_dev of=$S/got bs=$1 skip=7 count=1 && cmp $S/want $S/got"
}

for lbasize in 4096 512; do
	kernel_btt_to_ntmem "$lbasize"
	ntmem_btt_to_kernel "$lbasize"
done

# labelled_btt VERSION OFFSET BTT_VERSION: namespace labels of VERSION on the
# labelled NVDIMM (ndctl init-labels), then btt_interop on them: the
# kernel puts a BTT 1.1 at 4096 on v1.1 labels (parent_uuid the
# namespace's uuid), a BTT 2.0 at 0 on v1.2. BTT_VERSION is the version
# the labels call for: the kernel's BTT has it, and ntmem lays it out
# (PROBE_BTT_VERSION).
labelled_btt() {
	nmem=$(cut -d, -f1 "/sys/bus/nd/devices/$label_region/mapping0")
	check "labels v$1: ndctl init-labels -V $1 $nmem" sh -c \
		"ndctl disable-region $label_region && ndctl init-labels -f -V $1 $nmem &&
		 ndctl enable-region $label_region" || return
	btt_interop "labels v$1" "$label_region" "$2" "$3"
}

labelled_btt 1.1 4096 1.1
labelled_btt 1.2 0 2.0

# --- virtio-pmem: fsdax (MAP_SYNC refused), devdax -------------------------

if ns_check "virtio-pmem: fsdax namespace" "$virtio_region" -m fsdax; then
	vpmem=$dev
	check "mkfs.ext4 $vpmem" mkfs_ext4 "$vpmem"
	# DAX mounts, but virtio-pmem's writes reach the host only when the
	# guest asks (a flush request): the kernel refuses MAP_SYNC, and ntmem
	# must fall back to msync.
	if mounted ext4 dax "$vpmem"; then
		fs_checks "virtio-pmem ext4" dax file
		umount "$MNT"
	fi
fi
if ns_check "virtio-pmem: devdax namespace" "$virtio_region" -m devdax; then
	vdax=$dev
	check "virtio-pmem devdax: the kernel warns it cannot guarantee persistence" \
		sh -c 'dmesg | grep -q "unable to guarantee persistence of writes"'
	check_words "virtio-pmem devdax: ntm_ns_open says not cpu-durable" \
		"kind=devdax cpu_durable=0" "$PROBE" info "$vdax"
	# No durable path exists there: a device has no fsync (msync of it
	# fails) and 6.1 shows a region's deep_flush, whose write would ask
	# the host to flush, only for regions with DIMMs. ntm_ns_persist()
	# and the drop-in's pmem_msync() refuse rather than return as if the
	# data were safe.
	check "virtio-pmem: $virtio_region has no deep_flush (6.1: only regions with DIMMs)" \
		test ! -e "/sys/bus/nd/devices/$virtio_region/deep_flush"
	check_fails "virtio-pmem devdax: ntm_ns_persist refuses: no durable path" \
		"has no durable path" "$PROBE" write "$vdax"
	# The BTT writes back and fences itself: it must persist through the
	# namespace too, and so cannot be laid out where nothing is durable
	# (the BTT names the step that failed, its layout's first persist,
	# and the namespace's reason).
	check_fails "virtio-pmem devdax: ntmem blk create --btt refuses: nothing is durable" \
		"persist of arena 0: " "$NTMEM" blk create "$vdax" --btt
	cp "$err" "$S/btt-create.err"
	check "virtio-pmem devdax: ... and says the namespace has no durable path" \
		grep -qF "has no durable path" "$S/btt-create.err"
	# libpmem2 takes any devdax mapping for the media: what each
	# library's granularity is on one whose writes nothing makes durable.
	pmem2_checks "virtio-pmem devdax" "$vdax" "badblocks=0"
	if [ -x "$PMEM_PROBE" ]; then
		# PMDK says 1 here: the drop-in is to be right where PMDK is not.
		check_words "virtio-pmem devdax: Debian's libpmem says is_pmem 1" \
			"is_pmem=1 pmem_is_pmem=1 lib=$DEBIAN_LIBPMEM" \
			env -u PMEM_IS_PMEM_FORCE "$PMEM_PROBE" "$vdax"
		# The probe calls pmem_msync() only when is_pmem is 0.
		check_fails "virtio-pmem devdax: the drop-in says is_pmem 0, pmem_msync refuses" \
			"has no durable path" env -u PMEM_IS_PMEM_FORCE \
			LD_LIBRARY_PATH="$DROPIN" "$PMEM_PROBE" "$vdax"
	else
		skip "virtio-pmem devdax: PMDK program on both libpmems" \
			"kernel_pmem_probe not built (libpmem-dev)"
	fi
fi

finish
