#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kernel-check.sh [--build DIR] [--work DIR] [--timeout SECONDS]
#                 [--accel auto|kvm|tcg] [--boots NAME,...] [--full]
#                 - make check-kernel: ntmem on a
# real Linux kernel's DAX stack. Debian's kernel under QEMU, booted
# six times:
#
#   guest       a label-less NVDIMM (1 GiB), a virtio-pmem device (512 MiB)
#               and an NVDIMM with a label area (256 MiB, label-size=128K),
#               each backed by a sparse file on the disk: the guest
#               (tests/kernel/init.sh) makes fsdax, devdax, sector, raw
#               and file-system namespaces on them with ndctl and runs
#               tests/kernel/stage.sh
#   domain-cpu, domain-mem-ctrl   one NVDIMM each, on a machine whose NFIT
#               names the persistence domain (QEMU's nvdimm-persistence):
#               tests/kernel/stage-domain.sh
#   cxl         a q35 machine with CXL: one host bridge, two root ports,
#               a type-3 memory device with persistent memory (512 MiB)
#               and a label area behind the first: the guest loads the
#               CXL drivers, makes a pmem region with cxl(1) and runs
#               tests/kernel/stage-cxl.sh on its namespaces
#   cxl-one-port  the same with one root port, whose stores are lost:
#               ntmem must refuse to lay out a BTT there
#   mce         one NVDIMM, on Debian's generic kernel (the cloud kernel
#               has no machine-check support): the host injects machine
#               checks through QEMU's monitor where the guest asks, and
#               tests/kernel/stage-mce.sh follows them into the region's
#               badblocks and ntmem's list of a devdax namespace; skipped
#               without that kernel ($NTMEM_MCE_KERNEL_DIR)
#   full        with --full only: one label-less NVDIMM (4 GiB), make
#               check's long tests with their scratch directory on ext4
#               -o dax and xfs -o dax: tests/kernel/stage-full.sh (its
#               timeout NTMEM_KERNEL_FULL_TIMEOUT)
#
# every check on the build in DIR (default build), with the kernel's own
# nd, pmem and dax drivers underneath. --boots runs only the boots it
# names (comma-separated), to try one stage's change. --full (make
# check-kernel-full) adds one more boot after them, full: make check's
# crash-image and recorder tests, CLI suites and scratch-directory test
# programs on DAX file systems (tests/kernel/stage-full.sh; --boots full
# runs it alone).
#
# The kernel is read from Debian's kernel directories, boot/ and
# lib/modules/ under the system's root (or $NTMEM_KERNEL_ROOT, a kernel
# package unpacked with dpkg -x; each alone: $NTMEM_KERNEL_BOOT_DIR,
# $NTMEM_KERNEL_MODULES_DIR), and
# never booted on this machine: linux-image-cloud-amd64's by preference
# (the facts below were observed with it), else any Debian kernel with
# its modules. Everything the run makes is in the work directory
# (default DIR/kernel): the guest's root (kernel-stage.sh), the backing
# files, a directory per boot with console.log (the kernel's console),
# tap.log (the checks' TAP, a serial port of its own) and qemu.log, and
# meson-logs/testlog.json, one entry a check, in meson's format, so
# scripts/test-summary.sh counts the run with the rest of make check.
#
# Exit status 0 when every boot reported a complete run (its plan, every
# check, its closing "P passed, F failed" line) without a failure (a
# check marked TODO, a known defect, does not fail it); 1 otherwise: a
# failed check, a guest that died, or one that did not finish within its
# timeout (the main boot's default 900 s, NTMEM_KERNEL_TIMEOUT; the
# short ones a quarter of that and a minute), with the last lines of its
# console; 77 when it cannot run here (no QEMU, no kernel).
set -eu

src=$(cd "$(dirname "$0")/.." && pwd -P)
build=build work='' accel=${NTMEM_KERNEL_ACCEL:-auto} boots='' full=0
# A hang is what the timeout is for: the main boot's 2-3 minutes of work
# on 2 idle cores took 6 with both busy (make check runs this beside its
# other parts).
timeout=${NTMEM_KERNEL_TIMEOUT:-900}
while [ $# -gt 0 ]; do
	case "$1" in
	--build) build=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--accel) accel=$2; shift 2 ;;
	--boots) boots=$2; shift 2 ;;
	--full) full=1; shift ;;
	*)
		echo "usage: $0 [--build DIR] [--work DIR] [--timeout SECONDS] [--accel auto|kvm|tcg] [--boots NAME,...] [--full]" >&2
		exit 2
		;;
	esac
done
case "$accel" in auto | kvm | tcg) ;; *) echo "kernel-check: --accel auto, kvm or tcg" >&2; exit 2 ;; esac
work=${work:-$build/kernel}

skip() { echo "check-kernel: skipped: $*"; exit 77; }
die() { echo "kernel-check: $*" >&2; exit 1; }

qemu=$(command -v qemu-system-x86_64) ||
	skip "needs qemu-system-x86_64 (scripts/install-deps.sh kernel)"
[ "$(uname -m)" = x86_64 ] || skip "the guest is x86-64 and this machine is $(uname -m)"

# Where Debian's kernel packages put the kernels and their modules, under
# a root: the system's (empty), or an unpacked package's. The generic
# kernel of the mce boot below is read from such a root too.
kernel_root=${NTMEM_KERNEL_ROOT:-}
boot_dir=${NTMEM_KERNEL_BOOT_DIR:-$kernel_root/boot}
modules_dir=${NTMEM_KERNEL_MODULES_DIR:-$kernel_root/lib/modules}
export NTMEM_KERNEL_MODULES_DIR="$modules_dir" # for kernel-stage.sh

# pick_kernel: "KVER" of the newest readable kernel with its modules.
pick_kernel() {
	for flavour in -cloud-amd64 ''; do
		for k in $(printf '%s\n' "$boot_dir"/vmlinuz-*"$flavour" | sort -rV); do
			ver=${k#"$boot_dir"/vmlinuz-}
			[ -r "$k" ] && [ -f "$modules_dir/$ver/modules.dep" ] && { echo "$ver"; return 0; }
		done
	done
	return 1
}
kver=$(pick_kernel) ||
	skip "needs a readable Debian kernel in $boot_dir with its modules (linux-image-cloud-amd64)"
kernel=$boot_dir/vmlinuz-$kver
[ -x "$build/tools/ntmem" ] || die "$build/tools/ntmem not built"

mkdir -p "$work"
work=$(cd "$work" && pwd -P)
# QEMU's -object and -serial options split at commas and colons.
case "$work" in
*,* | *:*) die "the work directory '$work' has a comma or colon, which QEMU's options cannot take" ;;
esac
"$src/scripts/kernel-stage.sh" "$build" "$kver" "$work/guest-root" "$work/initramfs.cpio"

# --- accelerator ----------------------------------------------------------

# KVM is used only when a stock kernel boots under it: here /dev/kvm
# opens, but the guest hangs in early boot (this machine is itself a
# nested guest), and -cpu host fails on MSR 0x10a. A tiny initramfs whose
# init prints a word and powers off tells, within a short timeout; the
# answer is kept in the work directory per host kernel, QEMU and guest
# kernel, as a hanging probe costs its whole timeout.
# -cpu max under KVM is the host's CPU with what KVM can offer; here it
# aborts on that MSR, which the probe also sees.
kvm_cpu=max
kvm_boots() {
	[ -r /dev/kvm ] && [ -w /dev/kvm ] || return 1
	key="$(uname -r) $("$qemu" --version | head -n 1) $kver"
	cache=$work/kvm-probe
	if [ -f "$cache" ] && [ "$(head -n 1 "$cache")" = "$key" ]; then
		[ "$(sed -n 2p "$cache")" = yes ]
		return
	fi
	probe=$work/kvm-probe.d
	rm -rf "$probe"
	mkdir -p "$probe/guest-root/bin" "$probe/guest-root/proc"
	cp "$work/guest-root/bin/busybox" "$probe/guest-root/bin/"
	printf '#!/bin/busybox sh\n/bin/busybox echo KVM-PROBE-BOOTED\n/bin/busybox poweroff -f\n' \
		>"$probe/guest-root/init"
	chmod 755 "$probe/guest-root/init"
	(cd "$probe/guest-root" && find . | bin/busybox cpio -o -H newc 2>/dev/null) >"$probe/initramfs"
	timeout -k 5 30 "$qemu" -accel kvm -cpu "$kvm_cpu" -machine pc -m 256M -nodefaults \
		-display none -no-reboot -serial "file:$probe/console" \
		-kernel "$kernel" -initrd "$probe/initramfs" \
		-append "console=ttyS0 panic=-1 quiet" >/dev/null 2>&1 || true
	if grep -q KVM-PROBE-BOOTED "$probe/console" 2>/dev/null; then ok=yes; else ok=no; fi
	printf '%s\n%s\n' "$key" "$ok" >"$cache"
	rm -rf "$probe"
	[ "$ok" = yes ]
}
case "$accel" in
auto) if kvm_boots; then accel=kvm; else accel=tcg; fi ;;
esac
# TCG: -cpu max gives the guest CLWB, CLFLUSHOPT and AVX2 to choose from.
if [ "$accel" = kvm ]; then cpu=$kvm_cpu; smp=2; else cpu=max; smp=1; fi

# --- the boots ------------------------------------------------------------

# boot NAME SECONDS MACHINE APPEND QEMU-ARGS...: one guest, up to SECONDS,
# its files in $work/NAME (console.log, the kernel's; tap.log, the
# checks', a serial port of its own; qemu.log). MACHINE is added to
# -machine pc,nvdimm=on; APPEND to the kernel's command line (ntmem.stage=
# names the stage init.sh runs, ntmem.regions= how many nd regions it
# waits for); QEMU-ARGS are the memory devices. The TAP is then read by
# verdict. -machine nvdimm=on with memory slots and maxmem: NVDIMMs and
# virtio-pmem are memory devices outside the boot memory; share=on on
# their backends: the guest's stores reach the backing file (MAP_SHARED),
# as on pmem. A boot on another kernel, CPU or machine sets boot_kernel,
# boot_kver, boot_initrd, boot_cpu and boot_machine (instead of
# pc,nvdimm=on) around its call (the mce and cxl boots).
boot() {
	name=$1 seconds=$2 machine=$3 append=$4
	shift 4
	case ",${boots:-$name}," in
	*",$name,"*) ;;
	*) echo "check-kernel: boot '$name' not asked for (--boots)"; return 0 ;;
	esac
	dir=$work/$name
	mkdir -p "$dir"
	rm -f "$dir/console.log" "$dir/tap.log" "$dir/qemu.log"
	echo "check-kernel: boot '$name' (${boot_kver:-$kver} under QEMU, $accel)"
	set +e
	timeout -k 10 "$seconds" "$qemu" -accel "$accel" -cpu "${boot_cpu:-$cpu}" -smp "$smp" \
		-machine "${boot_machine:-pc,nvdimm=on}$machine" -m 1G,slots=4,maxmem=8G \
		-nodefaults -display none -no-reboot \
		-serial "file:$dir/console.log" -serial "file:$dir/tap.log" \
		"$@" -kernel "${boot_kernel:-$kernel}" -initrd "${boot_initrd:-$work/initramfs.cpio}" \
		-append "console=ttyS0 panic=-1 $append" >"$dir/qemu.log" 2>&1
	qstatus=$?
	set -e
	verdict "$name" "$seconds"
}

# backing FILE SIZE: a fresh sparse backing file each run: a label-less
# NVDIMM keeps no labels, and whatever an earlier run left on it (a BTT
# or pfn info block) would make the kernel bring the namespace up in
# that mode.
backing() {
	rm -f "$1"
	truncate -s "$2" "$1"
}

# verdict NAME SECONDS: boot NAME's TAP judged (a complete run: its plan,
# every check, its closing "P passed, F failed" line, no failure but a
# check marked TODO, a known defect), its checks added to testlog.json as
# meson tests named "kernel:NAME / ..." (for scripts/test-summary.sh; a
# TODO is EXPECTEDFAIL, or OK once it passes; SKIP as skipped; an
# incomplete run as one more, failed, entry), and the totals to
# $all_passed, $all_todo and $problems.
verdict() {
	dir=$work/$1
	tr -d '\r' <"$dir/tap.log" >"$dir/tap.txt" 2>/dev/null || : >"$dir/tap.txt"
	sed "s/^/[$1] /" "$dir/tap.txt"
	# "CHECKS PLAN PASSED FAILED TODO FAILED_NOT_TODO BAIL SUMMARY"
	v=$(awk '
		/^(not )?ok [0-9]+ / { checks++; if ($1 == "not" && $0 !~ /# TODO /) bad++ }
		/^1\.\.[0-9]+$/ { plan = substr($0, 4) }
		/^[0-9]+ passed, [0-9]+ failed$/ { p = $1; f = $3; summary = 1 }
		/^Bail out!/ { bail = 1 }
		/# TODO / { todo++ }
		END { printf "%d %d %d %d %d %d %d %d\n", checks, plan, p, f, todo, bad, bail, summary }
	' "$dir/tap.txt")
	# shellcheck disable=SC2086 # eight numbers, split into the arguments
	set -- "$1" "$2" $v
	problem=
	if [ "$qstatus" -eq 124 ] || [ "$qstatus" -eq 137 ]; then
		problem="the guest did not finish within $2 s"
	elif [ "$qstatus" -ne 0 ]; then
		problem="QEMU exited $qstatus: $(tail -n 3 "$dir/qemu.log" | tr '\n' ' ')"
	elif [ "$9" -ne 0 ]; then
		problem="the guest bailed out"
	elif [ "${10}" -eq 0 ] || [ "$4" -eq 0 ] || [ "$3" -ne "$4" ]; then
		problem="the guest's run is incomplete ($3 checks, plan $4, summary line ${10})"
	elif [ "$8" -ne 0 ] || [ "$6" -ne 0 ]; then
		problem="failed checks: $8"
	fi
	all_passed=$((all_passed + $5)) all_todo=$((all_todo + $7))
	awk -v boot="$1" -v problem="$problem" '
		function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
		/^(not )?ok [0-9]+ / {
			line = $0
			result = ($1 == "ok") ? "OK" : "FAIL"
			if (line ~ /# TODO /) result = ($1 == "ok") ? "OK" : "EXPECTEDFAIL"
			if (line ~ /# SKIP /) result = "SKIP"
			sub(/^(not )?ok /, "", line)
			printf "{\"name\": \"kernel:%s / %s\", \"result\": \"%s\"}\n", boot, esc(line), result
		}
		END {
			if (problem != "")
				printf "{\"name\": \"kernel:%s / the run\", \"result\": \"ERROR\", \"stdout\": \"%s\"}\n", boot, esc(problem)
		}' "$dir/tap.txt" >>"$work/meson-logs/testlog.json"
	[ -z "$problem" ] && return 0
	problems="$problems [$1] $problem;"
	echo "check-kernel: boot '$1' FAILED: $problem"
	echo "check-kernel: the last lines of its console ($dir/console.log):"
	tr -d '\r' <"$dir/console.log" 2>/dev/null | tail -n 30 | sed 's/^/  | /'
	[ -s "$dir/qemu.log" ] && { echo "check-kernel: QEMU said:"; sed 's/^/  | /' "$dir/qemu.log"; }
	return 0
}

mkdir -p "$work/meson-logs"
: >"$work/meson-logs/testlog.json"
all_passed=0 all_todo=0 problems=
echo "check-kernel: $kver under QEMU ($accel), build $build, work $work"
start=$(date +%s)

# The main boot, "guest" (tests/kernel/stage.sh): a label-less NVDIMM, a
# virtio-pmem device and an NVDIMM with a label area. Without label-size
# an NVDIMM has no labels: one namespace per region, in any mode; with it,
# ndctl init-labels writes v1.1 or v1.2 labels. The devices are placed
# one after the other in this order, and the label area comes off the
# NVDIMM's size: a device after the labelled one would start 128 KiB off
# 2 MiB, and its fsdax or devdax namespace is refused ("misaligned"). So
# that one comes last.
backing "$work/nvdimm0.img" 1G
backing "$work/nvdimm1.img" 256M
backing "$work/virtio-pmem0.img" 512M
boot guest "$timeout" "" "ntmem.stage=main ntmem.regions=3" \
	-object "memory-backend-file,id=nvm0,share=on,mem-path=$work/nvdimm0.img,size=1G" \
	-device nvdimm,id=nvdimm0,memdev=nvm0 \
	-object "memory-backend-file,id=vpm0,share=on,mem-path=$work/virtio-pmem0.img,size=512M" \
	-device virtio-pmem-pci,id=vpmem0,memdev=vpm0 \
	-object "memory-backend-file,id=nvm1,share=on,mem-path=$work/nvdimm1.img,size=256M" \
	-device nvdimm,id=nvdimm1,memdev=nvm1,label-size=128K

# Persistence domains (tests/kernel/stage-domain.sh): QEMU's NFIT has a
# Platform Capabilities structure only when -machine nvdimm-persistence
# asks for one, and then the kernel gives every NFIT region the domain it
# names: cpu (eADR: the CPU caches are inside it) shows "cpu_cache",
# mem-ctrl (ADR) "memory_controller". It is a property of the machine,
# so one short boot each, with one label-less NVDIMM. A quarter of the
# main boot's timeout: a few checks after the same boot.
# They run neither fio nor pmempool: the small image (kernel-stage.sh).
boot_initrd=$work/initramfs-small.cpio
for persistence in cpu:cpu_cache mem-ctrl:memory_controller; do
	backing "$work/nvdimm-domain.img" 256M
	boot "domain-${persistence%%:*}" $((timeout / 4 + 60)) ",nvdimm-persistence=${persistence%%:*}" \
		"ntmem.stage=domain ntmem.regions=1 ntmem.domain=${persistence#*:}" \
		-object "memory-backend-file,id=nvm0,share=on,mem-path=$work/nvdimm-domain.img,size=256M" \
		-device nvdimm,id=nvdimm0,memdev=nvm0
done
rm -f "$work/nvdimm-domain.img"
unset boot_initrd

# --- cxl: a CXL memory device's persistent memory -------------------------

# The boot cxl (tests/kernel/stage-cxl.sh): a q35 machine with CXL, one
# host bridge (pxb-cxl) with two root ports and, behind the first, a
# type-3 memory device whose persistent memory (512 MiB, a multiple of
# the 256 MiB the region's decoders need) and label storage area are
# fresh sparse files each run (a label area an earlier boot wrote brings
# the region up disabled), and a fixed memory window of 4 GiB routed to
# the host bridge. The second root port, empty, is not decoration: with a
# single port the kernel (6.1) treats the host bridge as pass-through and
# never programs its decoder, while QEMU (7.2) routes the window only
# through that decoder, so region, labels and namespaces all succeed and
# every store is lost. The guest loads the CXL drivers and makes the
# region itself: no nd region exists at boot (ntmem.regions=0). QEMU 7.2
# names the device's persistent backend memdev (8.0 persistent-memdev).
# Short, as the domain boots, with the main boot's image (pmempool reads
# the libpmemobj pools there).
# cxl_boot NAME PORTS APPEND: that machine with PORTS root ports (1 or 2),
# the device behind the first, fresh backing files.
cxl_boot() {
	backing "$work/cxl-pmem0.img" 512M
	backing "$work/cxl-lsa0.img" 128K
	second_port=
	[ "$2" = 2 ] && second_port="-device cxl-rp,port=1,bus=cxl.1,id=cxl_rp1,chassis=0,slot=3"
	boot_machine=q35,cxl=on
	# shellcheck disable=SC2086 # $second_port: one device's two words, or none
	boot "$1" $((timeout / 4 + 60)) \
		",cxl-fmw.0.targets.0=cxl.1,cxl-fmw.0.size=4G" \
		"ntmem.stage=cxl ntmem.regions=0 $3" \
		-object "memory-backend-file,id=cxl-mem0,share=on,mem-path=$work/cxl-pmem0.img,size=512M" \
		-object "memory-backend-file,id=cxl-lsa0,share=on,mem-path=$work/cxl-lsa0.img,size=128K" \
		-device pxb-cxl,bus_nr=12,bus=pcie.0,id=cxl.1 \
		-device cxl-rp,port=0,bus=cxl.1,id=cxl_rp0,chassis=0,slot=2 \
		$second_port \
		-device cxl-type3,bus=cxl_rp0,memdev=cxl-mem0,lsa=cxl-lsa0,id=cxl-pmem0
	unset boot_machine
	rm -f "$work/cxl-pmem0.img" "$work/cxl-lsa0.img"
}
cxl_boot cxl 2 ""
# The same with one root port (cxl-one-port, the small image): the guest
# makes the region and a namespace, which succeed, and checks that a
# store does not read back and that ntmem refuses to lay out a BTT there.
boot_initrd=$work/initramfs-small.cpio
cxl_boot cxl-one-port 1 ntmem.cxl_ports=1
unset boot_initrd

# --- mce: a machine check's media error on devdax ------------------------

# The boot mce (tests/kernel/stage-mce.sh) has the host inject a machine
# check, an uncorrected memory error at an address of the NVDIMM, through
# QEMU's monitor, and the guest follow it into the region's badblocks and
# ntmem's list. The cloud kernel has no CONFIG_X86_MCE: this boot runs
# Debian's generic kernel, unpacked (never installed) into
# $NTMEM_MCE_KERNEL_DIR by scripts/install-deps.sh kernel, on a CPU that
# says GenuineIntel: the kernel decides on Intel's rules whether an error
# is a memory error with a usable address (mce_is_memory_error(),
# mce_usable_address()), and TCG's max CPU is AuthenticAMD by default.
# Without that kernel the boot is one skipped entry, naming why.
# Where make check-kernel-deps unpacks it: the work directory's, unless
# NTMEM_MCE_KERNEL_DIR names another (kept across clean builds, say).
mce_kernel_dir=${NTMEM_MCE_KERNEL_DIR:-$work/generic-kernel}

# The error, as QEMU's mce command takes it (CPU 0, bank 1: Linux leaves
# bank 0 of an old Intel family-6 CPU, which TCG's max is, alone):
# MCi_STATUS VAL|UC|EN|MISCV|ADDRV|S with MCACOD 0x00c0, a memory
# scrubbing error, uncorrected but not needing action (SRAO: the kernel
# logs it and hands it to its decoders, nfit's among them, without a
# panic); MCG_STATUS RIPV|MCIP; MCi_MISC address mode physical (2 in bits
# 8:6) with its least significant valid bit 12: a 4 KiB page, which nfit
# adds to the bus's bad ranges whole.
mce_status=0xbd000000000000c0 mce_mcg_status=0x5 mce_misc=0x8c

# mce_kver: the newest kernel in $mce_kernel_dir with its modules and
# machine-check support; 1 with the reason on stdout when there is none.
mce_kver() {
	for k in $(printf '%s\n' "$mce_kernel_dir"/boot/vmlinuz-* | sort -rV); do
		ver=${k#"$mce_kernel_dir"/boot/vmlinuz-}
		if [ -r "$k" ] && [ -f "$mce_kernel_dir/lib/modules/$ver/modules.dep" ] &&
			grep -qx CONFIG_X86_MCE=y "$mce_kernel_dir/boot/config-$ver" 2>/dev/null; then
			echo "$ver"
			return 0
		fi
	done
	echo "no kernel with CONFIG_X86_MCE and its modules in $mce_kernel_dir (scripts/install-deps.sh kernel unpacks Debian's generic one there)"
	return 1
}

# mce_injector DIR: the host's half of the mce boot, in the background
# while the guest runs. Each "inject ADDR now" line the guest writes on
# its third serial port (DIR/request.log) becomes one machine check at
# ADDR on QEMU's monitor, a pipe chardev (DIR/monitor.in, DIR/monitor.out,
# FIFOs opened read-write so neither side waits for the other), and
# what the monitor answers goes to DIR/monitor.log. The word after the
# address marks a complete line: the serial port writes byte by byte,
# and half an address must never be injected. It polls once a second
# until it is killed.
mce_injector() {
	set +e
	exec 3<>"$1/monitor.in" 4<>"$1/monitor.out"
	injected=0
	while :; do
		# Reading what the monitor said is the second's wait.
		timeout 1 cat <&4 >>"$1/monitor.log"
		tr -d '\r' <"$1/request.log" 2>/dev/null |
			sed -n 's/^inject \(0x[0-9a-f][0-9a-f]*\) now$/\1/p' >"$1/requests"
		while [ "$injected" -lt "$(wc -l <"$1/requests")" ]; do
			injected=$((injected + 1))
			addr=$(sed -n "${injected}p" "$1/requests")
			echo "mce 0 1 $mce_status $mce_mcg_status $addr $mce_misc" >&3
			echo "check-kernel: boot 'mce': the guest asked, the host injected a machine check at $addr"
		done
	done
}

# mce_skipped WHY: the boot as one skipped entry (it was asked for, and
# cannot run here).
mce_skipped() {
	echo "check-kernel: boot 'mce' skipped: $1"
	printf '{"name": "kernel:mce / the run", "result": "SKIP", "stdout": "%s"}\n' \
		"$(echo "$1" | sed 's/\\/\\\\/g; s/"/\\"/g')" >>"$work/meson-logs/testlog.json"
}

case ",${boots:-mce}," in
*,mce,*)
	if ! mkver=$(mce_kver); then
		mce_skipped "$mkver"
	elif ! NTMEM_KERNEL_MODULES_DIR=$mce_kernel_dir/lib/modules "$src/scripts/kernel-stage.sh" \
		"$build" "$mkver" "$work/mce-root" "$work/mce-initramfs.cpio"; then
		# The kernel is there: a root that cannot be built for it is a
		# failure, as it is for the main kernel.
		problems="$problems [mce] kernel-stage.sh failed for $mkver;"
		printf '{"name": "kernel:mce / the run", "result": "ERROR", "stdout": "kernel-stage.sh failed for %s"}\n' \
			"$mkver" >>"$work/meson-logs/testlog.json"
	else
		mdir=$work/mce
		mkdir -p "$mdir"
		rm -f "$mdir/request.log" "$mdir/requests" "$mdir/monitor.log" \
			"$mdir/monitor.in" "$mdir/monitor.out"
		mkfifo "$mdir/monitor.in" "$mdir/monitor.out"
		: >"$mdir/request.log"
		mce_injector "$mdir" &
		injector=$!
		backing "$work/nvdimm-mce.img" 256M
		boot_kernel=$mce_kernel_dir/boot/vmlinuz-$mkver boot_kver=$mkver \
			boot_initrd=$work/mce-initramfs-small.cpio boot_cpu=max,vendor=GenuineIntel
		boot mce $((timeout / 4 + 60)) "" "ntmem.stage=mce ntmem.regions=1" \
			-object "memory-backend-file,id=nvm0,share=on,mem-path=$work/nvdimm-mce.img,size=256M" \
			-device nvdimm,id=nvdimm0,memdev=nvm0 \
			-chardev "pipe,id=mon0,path=$mdir/monitor" -mon chardev=mon0,mode=readline \
			-serial "file:$mdir/request.log"
		unset boot_kernel boot_kver boot_initrd boot_cpu
		kill "$injector" 2>/dev/null || true
		wait "$injector" 2>/dev/null || true
		rm -f "$work/nvdimm-mce.img" "$mdir/monitor.in" "$mdir/monitor.out"
	fi
	;;
*) echo "check-kernel: boot 'mce' not asked for (--boots)" ;;
esac

# --- full: make check's long tests on DAX file systems (--full) ---------

# The boot full (tests/kernel/stage-full.sh), only when asked for (--full,
# or --boots naming it): one label-less NVDIMM, its fsdax namespace made
# ext4 -o dax and then xfs -o dax, the scratch directory of make check's
# tests on it: 4 GiB, as test_pmemblk_compat keeps 2.4 GiB of pools there
# at once. Its own root (kernel-stage.sh with NTMEM_KERNEL_STAGE_FULL:
# the tests, python3), so the other boots' stays small. Its timeout,
# NTMEM_KERNEL_FULL_TIMEOUT: about 3 times the 24 minutes it took here
# under TCG with both cores busy.
full_timeout=${NTMEM_KERNEL_FULL_TIMEOUT:-4200}
case "$full,$boots," in
1,, | *,full,*)
	NTMEM_KERNEL_STAGE_FULL=1 "$src/scripts/kernel-stage.sh" "$build" "$kver" \
		"$work/full-root" "$work/full-initramfs.cpio"
	backing "$work/nvdimm-full.img" 4G
	boot_initrd=$work/full-initramfs.cpio
	boot full "$full_timeout" "" "ntmem.stage=full ntmem.regions=1" \
		-object "memory-backend-file,id=nvm0,share=on,mem-path=$work/nvdimm-full.img,size=4G" \
		-device nvdimm,id=nvdimm0,memdev=nvm0
	unset boot_initrd
	rm -f "$work/nvdimm-full.img"
	;;
esac

elapsed=$(($(date +%s) - start))
if [ -n "$problems" ]; then
	echo "check-kernel: FAILED after ${elapsed} s:$problems"
	exit 1
fi
if grep -qs '^not ok .*# TODO ' "$work"/*/tap.txt; then
	echo "check-kernel: known defects (TODO):"
	grep '^not ok .*# TODO ' "$work"/*/tap.txt | sed 's/^/  /'
fi
# A TODO check that passes: its defect looks fixed, and its marker should go.
if grep -qs '^ok .*# TODO ' "$work"/*/tap.txt; then
	echo "check-kernel: TODO checks that pass now (drop their TODO in tests/kernel/stage*.sh):"
	grep '^ok .*# TODO ' "$work"/*/tap.txt | sed 's/^/  /'
fi
echo "check-kernel: $all_passed passed, $all_todo TODO, 0 failed in ${elapsed} s ($kver, $accel)"
