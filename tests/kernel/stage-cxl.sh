#!/bin/sh
# SPDX-License-Identifier: MIT
#
# stage-cxl.sh - the CXL checks of make check-kernel, run by the guest's
# init (tests/kernel/init.sh, ntmem.stage=cxl) on a q35 machine with one
# CXL host bridge, two root ports and a type-3 memory device with
# persistent memory and a label storage area behind the first
# (scripts/kernel-check.sh, boot cxl). Nothing is set up before it: the
# kernel's CXL drivers are loaded here, and a pmem region is made on the
# memory device with cxl(1), as a user of a CXL machine would:
#
#   the memory device and its region (cxl create-region); the nd bus the
#   region appears on (provider CXL) and its persistence domain, as the
#   kernel shows it and as ntmem info reports it, with the CXL region,
#   its interleave and its memory device; a sector namespace, whose
#   BTT 2.0 the kernel and ntmem each read of the other; a devdax namespace
#   (align 2 MiB, with ntmem's BTT laid out on it, written and read back
#   opened again) and an fsdax one with ext4 -o dax and xfs -o dax on it:
#   ntm_ns_open()'s kind and domain and ntm_ns_region()'s regions, a
#   persisted pattern read back
#   through another mapping (the check that a region's stores reach the
#   device), PMDK's program on Debian's libpmem and on the drop-in
#   (is_pmem 1 without PMEM_IS_PMEM_FORCE), the libpmem2 program on both
#   libraries, Debian's libpmemobj on both libpmems, the kernel's memmap
#   line beside ntmem bench memmap --device (devdax), and ntmem check on
#   a corpus program and its fixed twin.
#
# With ntmem.cxl_ports=1 (the boot cxl-one-port) the host bridge has one
# root port: the region and a devdax namespace are made without an error,
# a persisted pattern does not read back, and ntmem refuses to lay out a
# BTT there, naming why.
#
# TAP as in tests/kernel/stage.sh.

. /tap.sh

# Nothing of CXL is there before its drivers are loaded here.
echo "# CXL: $(cat /sys/bus/cxl/devices/*/uevent 2>/dev/null | grep -c DEVTYPE) cxl devices before the drivers load"

for m in cxl_acpi cxl_pci cxl_mem cxl_pmem; do
	check "modprobe $m" modprobe "$m"
done

# wait_for WHAT TENTHS CMD...: CMD succeeds within TENTHS tenths of a
# second (the drivers probe asynchronously).
wait_for() {
	what=$1 tries=$2
	shift 2
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ "$i" -le "$tries" ] || { result 1 "$what"; return 1; }
		sleep 0.1
	done
	result 0 "$what"
}

has_memdev() { cxl list -M | grep -q '"memdev":"mem0"'; }
wait_for "the memory device mem0 is enumerated (cxl list -M)" 100 has_memdev

check_words "cxl create-region: a pmem region of mem0's 512 MiB, one way" \
	'"size":536870912' cxl create-region -m -t pmem -d decoder0.0 -w 1 mem0
cxl_region=$(sed -n 's/.*"region":"\(region[0-9]*\)".*/\1/p' "$out" | head -n 1)
echo "# cxl region: ${cxl_region:-none}"

has_cxl_bus() { cxl_bus=$(bus_of CXL) && region=$(region_of "$cxl_bus"); }
wait_for "the region is an nd region on the nd bus whose provider is CXL" 100 has_cxl_bus
cxl_bus=$(bus_of CXL) && region=$(region_of "$cxl_bus")
if [ -z "${region:-}" ]; then
	echo "Bail out! no nd region on a CXL bus: $(ls /sys/bus/nd/devices)"
	exit 1
fi
domain=$(cat "/sys/bus/nd/devices/$region/persistence_domain" 2>/dev/null)
# ntmem.cxl_ports=1: the host bridge has one root port (the boot
# cxl-one-port), whose memory QEMU 7.2 and Linux 6.1 lose together:
# everything seems to be made, and no store reaches the device.
if [ "$(sed -n 's/.*ntmem\.cxl_ports=\([0-9]*\).*/\1/p' /proc/cmdline)" = 1 ]; then
	ns_check "one root port: a devdax namespace is made as if all were well" \
		"$region" -m devdax -a 2M || { finish; exit 0; }
	run "$PROBE" write "$dev"
	result "$([ $? -ne 0 ] && echo 0 || echo 1)" \
		"one root port: a pattern written and persisted does not read back"
	show "$err" 3
	check_fails "one root port: ntmem refuses to lay out a BTT whose info block does not read back" \
		"does not read back" "$PROBE" btt-write "$dev" 0 4096 7 22
	finish
	exit 0
fi
echo "# nd region $region on $cxl_bus, persistence_domain '$domain'"
check "the kernel names $region's persistence domain (memory_controller or cpu_cache)" \
	grep -qxE 'memory_controller|cpu_cache' "/sys/bus/nd/devices/$region/persistence_domain"
check_words "ntmem info --json: $region and its persistence domain $domain" \
	"\"name\": \"$region\", \"persistence_domain\": \"$domain\"}" "$NTMEM" info --json
check_words "ntmem info --json: $region is CXL's $cxl_region, one way, of mem0" \
	"\"provider\": \"CXL\"$NL\"cxl\": {\"region\": \"$cxl_region\", \"interleave_ways\": 1, \"interleave_granularity\": 256, \"memdevs\": [\"mem0\"]}, \"name\": \"$region\"" \
	"$NTMEM" info --json
check_words "ntmem info: $region is CXL's $cxl_region" \
	"$region $domain; CXL $cxl_region, 1-way interleave of 256 B, memory devices mem0$NL" \
	"$NTMEM" info

# checker WHERE DIR: ntmem check reports missing_flush's bug in a file of
# DIR (a DAX file system on the CXL region) and not its fixed twin's.
checker() {
	if [ ! -x "$P/tests/check/missing_flush" ] || [ ! -d "$P/src/record/check" ]; then
		skip "$1: ntmem check on a corpus program" "the corpus or the checking library not built"
		return
	fi
	run env NTMEM_CHECK_LIBDIR="$P/src/record/check" "$NTMEM" check --json \
		--error-exitcode 3 -- "$P/tests/check/missing_flush" "$2"
	bug_st=$?
	grep -q '"kind":"not-written-back"' "$err"
	kind_st=$?
	run env NTMEM_CHECK_LIBDIR="$P/src/record/check" "$NTMEM" check --json \
		--error-exitcode 3 -- "$P/tests/check/missing_flush_fixed" "$2"
	fixed_st=$?
	[ "$bug_st" -eq 3 ] && [ "$kind_st" -eq 0 ] && [ "$fixed_st" -eq 0 ]
	result $? "$1: ntmem check reports missing_flush's bug and not its fixed twin's"
	echo "# missing_flush: exit $bug_st, missing_flush_fixed: exit $fixed_st"
}

# The kernel writes v1.2 labels on the device's label area: its BTT is
# 2.0, at the namespace's first byte.
btt_interop "sector (labels v1.2)" "$region" 0 2.0

seen=$(memmap_lines)
if ns_check "devdax namespace, align 2M" "$region" -m devdax -a 2M; then
	check_words "devdax: ntm_ns_open says kind devdax, domain $domain; ntm_ns_region its CXL region" \
		"kind=devdax cpu_durable=1 domain=$domain region=$region provider=CXL cxl_region=$cxl_region cxl_ways=1 cxl_memdevs=mem0" \
		"$PROBE" info "$dev"
	check "devdax: a pattern persisted and read back" "$PROBE" write "$dev"
	pmem_checks devdax "$dev" 1 1
	memmap_seed devdax "$seen" "$dev"
	obj_checks devdax "$dev" 0
	check_words "devdax: ntmem lays out a BTT (4096-byte blocks), block 7 written" \
		"written=1" "$PROBE" btt-write "$dev" 0 4096 7 22
	check_words "devdax: the BTT opened again reads block 7 back" \
		"read_back=1" "$PROBE" btt-read "$dev" 0 4096 7 22
fi

mkdir -p "$MNT"
if ns_check "fsdax namespace" "$region" -m fsdax; then
	check "mkfs.ext4 $dev" mkfs_ext4 "$dev"
	if mounted ext4 dax "$dev"; then
		f=$MNT/cxl
		check "ext4 dax: a 4 MiB file" dd if=/dev/zero of="$f" bs=1M count=4
		check_words "ext4 dax: ntm_ns_open says kind fsdax, domain $domain; ntm_ns_region its CXL region" \
			"kind=fsdax cpu_durable=1 domain=$domain region=$region provider=CXL cxl_region=$cxl_region" \
			"$PROBE" info "$f"
		check "ext4 dax: a pattern persisted and read back" "$PROBE" write "$f"
		pmem_checks "ext4 dax" "$f" 1 1
		pmem2_checks "ext4 dax" "$f" "granularity=CACHE_LINE deep_flush=0"
		obj_checks "ext4 dax" "$MNT/obj" 8388608
		mkdir -p "$MNT/corpus"
		checker "ext4 dax" "$MNT/corpus"
		umount "$MNT"
	fi
	check "mkfs.xfs $dev" mkfs.xfs -q -f -m reflink=0 "$dev"
	if mounted xfs dax "$dev"; then
		f=$MNT/cxl
		check "xfs dax: a 4 MiB file" dd if=/dev/zero of="$f" bs=1M count=4
		check "xfs dax: a pattern persisted and read back" "$PROBE" write "$f"
		pmem_checks "xfs dax" "$f" 1 1
		umount "$MNT"
	fi
fi

finish
