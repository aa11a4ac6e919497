#!/bin/sh
# SPDX-License-Identifier: MIT
#
# stage-mce.sh - a devdax namespace's media errors as a machine check
# reports them, run by the guest's init (tests/kernel/init.sh,
# ntmem.stage=mce) on Debian's generic kernel (the cloud kernel has no
# CONFIG_X86_MCE) with one label-less NVDIMM (scripts/kernel-check.sh,
# boot mce). The host injects the machine check through QEMU's monitor
# when the guest asks for it: the guest writes "inject ADDR" (a physical
# address) on its third serial port, /dev/ttyS2, a file the host polls,
# and the host sends the monitor's mce command, an uncorrected memory
# scrubbing error at ADDR (SRAO: the kernel logs it and goes on). The
# kernel's nfit driver adds the error's 4 KiB to the NVDIMM bus's bad
# ranges, and the region lists them in regionN/badblocks (512-byte
# sectors from the region's first byte), as ACPI's address range scrub
# would on a real machine. Then:
#
#   the region's badblocks lists the page; ntm_blk_open()'s list of the
#   devdax device (kernel_ns_probe badblocks, ntmem blk badblocks) names
#   the same page in the device's own sectors, which start at its data
#   offset (after the pfn info block and, with map=dev, the struct pages
#   the namespace keeps), not at the region's or the namespace's start;
#   a read of it through ntm_blk_read() is EIO.
#
# Two errors: the device's first page (the probe's read covers it), and
# one some MiB in, where an offset wrong by a page, or a list clipped at
# the wrong end, would show. TAP as in tests/kernel/stage.sh.

. /tap.sh

request=/dev/ttyS2
# How long to wait for the kernel to list an injected error: the host
# polls once a second, and the guest under TCG is slow.
wait_tries=600

# The second error's place in the device: 3 MiB and 8 KiB in.
second_off=$((3 * 1048576 + 8192))

nfit_bus=$(bus_of ACPI.NFIT) && region=$(region_of "$nfit_bus")
result $? "the NVDIMM's nd bus (provider ACPI.NFIT) has a region"
if [ -z "${region:-}" ] || [ ! -c "$request" ]; then
	echo "Bail out! no region, or no $request to ask the host for the machine check"
	exit 1
fi
check "the kernel has machine-check support (/sys/devices/system/machinecheck)" \
	test -d /sys/devices/system/machinecheck/machinecheck0

if ! ns_check "devdax namespace, align 2M" "$region" -m devdax -a 2M; then
	finish
	exit
fi
rsys=/sys/bus/nd/devices/$region
ns=namespace${region#region}.0
# The namespace's holder is the nd dax device whose resource is where
# the device's data starts (the namespace's start plus the info block's
# data offset); ntmem reads the dax character device's own instead.
holder=$(cat "/sys/bus/nd/devices/$ns/holder")
region_start=$(cat "$rsys/resource")
ns_start=$(cat "/sys/bus/nd/devices/$ns/resource")
data_start=$(cat "/sys/bus/nd/devices/$holder/resource")
echo "# $region at $region_start, $ns at $ns_start, $holder ($dev) data at $data_start"
check "the region lists no bad blocks before the machine check" \
	sh -c "! grep -q . $rsys/badblocks"

# sectors OFF: "SECTOR+COUNT" of the 4 KiB page at device offset OFF, in
# the device's 512-byte sectors.
sectors() { echo "$(($1 / 512))+8"; }
# region_line OFF: the region's badblocks line for that page.
region_line() { echo "$(((data_start + $1 - region_start) / 512)) 8"; }

# inject OFF: ask the host for a machine check at device offset OFF and
# wait (bounded) until the region lists the page.
inject() {
	addr=$(printf '0x%x' $((data_start + $1)))
	echo "inject $addr now" >"$request"
	want=$(region_line "$1")
	tries=0
	until grep -qx "$want" "$rsys/badblocks"; do
		tries=$((tries + 1))
		[ "$tries" -le "$wait_tries" ] || return 1
		sleep 0.1
	done
}

check "machine check at $dev's first page: $region's badblocks lists '$(region_line 0)'" \
	inject 0
# What the kernel said of it: the mce core's log line, and memory_failure()'s
# (it cannot recover a devdax page no one maps, and needs not).
dmesg | grep -iE 'mce:|machine check|hardware error|memory failure' | tail -n 8 | sed 's/^/# /'
check_words "ntm_blk_open's list of $dev: sectors $(sectors 0), a read of them EIO" \
	"badblocks=$(sectors 0) read=eio" "$PROBE" badblocks "$dev"

check "machine check at $dev + $second_off: $region's badblocks lists '$(region_line $second_off)'" \
	inject $second_off
check_words "ntm_blk_open's list of $dev: sectors $(sectors 0) and $(sectors $second_off)" \
	"badblocks=$(sectors 0),$(sectors $second_off)" "$PROBE" badblocks "$dev"
check_words "ntmem blk badblocks --json $dev: both pages, in the device's sectors" \
	"{\"sector\": 0, \"count\": 8}$NL{\"sector\": $((second_off / 512)), \"count\": 8}" \
	"$NTMEM" blk badblocks "$dev" --json
echo "# $region's badblocks:"
show "$rsys/badblocks"

finish
