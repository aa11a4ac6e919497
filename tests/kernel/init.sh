#!/bin/busybox sh
# SPDX-License-Identifier: MIT
#
# init.sh - PID 1 of the make check-kernel guest (scripts/kernel-check.sh
# boots it as /init of an initramfs that scripts/kernel-stage.sh built).
# It mounts the kernel's file systems, loads the nd, dax and virtio-pmem
# drivers, waits for the nd regions (the NVDIMMs' and virtio-pmem's),
# runs the checks (/stage.sh, or the stage ntmem.stage= names) and powers
# the machine off.
#
# The checks' output goes to the second serial port, /dev/ttyS1, which the
# host reads as its own file: the kernel's console is ttyS0, so a kernel
# message printed during a check can never split a TAP line. A failure
# here, before the checks run, is a "Bail out!" line there: the host then
# reports the run incomplete and shows the console.

/bin/busybox --install -s /bin
# The kernel runs /sbin/modprobe itself for a module it wants (crc32c for
# xfs' libcrc32c, for one): it must exist.
/bin/busybox mkdir -p /sbin /proc /sys /dev /tmp /mnt /run
/bin/busybox ln -sf /bin/modprobe /sbin/modprobe
mount -t proc proc /proc
mount -t sysfs sysfs /sys
# The cloud kernel does not mount devtmpfs itself (DEVTMPFS_MOUNT is off).
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null

# The seeds' experiment: the kernel's own "memmap_init_zone_device
# initialised N pages in M ms" (a pr_debug) for every fsdax map=dev and
# devdax namespace made from here on, read back from dmesg by the checks.
for ddc in /sys/kernel/debug/dynamic_debug/control /proc/dynamic_debug/control; do
	[ -w "$ddc" ] && echo 'func memmap_init_zone_device +p' >"$ddc" 2>/dev/null && break
done

tap=/dev/ttyS1
[ -c "$tap" ] || tap=/dev/console
exec >"$tap" 2>&1

bail() {
	echo "Bail out! $*"
	sync
	poweroff -f
}

# libnvdimm and nfit: the NVDIMM (QEMU's NFIT); nd_pmem, nd_btt: its block
# devices; dax_pmem, device_dax: devdax; virtio_pci, virtio_pmem (with
# nd_virtio): the virtio-pmem region; xfs is a module of this kernel, ext4
# built in. No udev: nothing loads a driver on demand, so all are loaded
# before any namespace is made.
for m in nfit nd_pmem nd_btt dax_pmem device_dax virtio_pci virtio_pmem xfs; do
	modprobe "$m" || bail "modprobe $m failed"
done

# nd regions are probed asynchronously: wait (bounded) for as many as the
# host gave the machine devices (ntmem.regions= on the command line).
want=$(sed -n 's/.*ntmem\.regions=\([0-9]*\).*/\1/p' /proc/cmdline)
tries=0
until [ "$(find /sys/bus/nd/devices/ -name 'region*' | wc -l)" -ge "${want:-2}" ]; do
	tries=$((tries + 1))
	[ "$tries" -le 300 ] || bail "not ${want:-2} nd regions: $(ls /sys/bus/nd/devices)"
	sleep 0.1
done

echo "# guest: $(uname -r), $(nproc) cpu, nd devices:" /sys/bus/nd/devices/* | sed 's|/sys/bus/nd/devices/||g'
# ntmem.stage= names the checks: main (/stage.sh), or domain
# (/stage-domain.sh).
stage=$(sed -n 's/.*ntmem\.stage=\([a-z]*\).*/\1/p' /proc/cmdline)
case "${stage:-main}" in
main) sh /stage.sh ;;
*) [ -f "/stage-$stage.sh" ] || bail "no stage '$stage'"; sh "/stage-$stage.sh" ;;
esac
echo "# stage exited $?"
sync
poweroff -f
