#!/bin/sh
# SPDX-License-Identifier: MIT
#
# stage-domain.sh - the persistence-domain checks of make check-kernel,
# run by the guest's init (tests/kernel/init.sh, ntmem.stage=domain) on a
# machine whose NFIT names the persistence domain (QEMU's -machine
# nvdimm-persistence=cpu or mem-ctrl, scripts/kernel-check.sh): the
# kernel then gives the NVDIMM's region the domain ntmem.domain= on the
# command line names, cpu_cache or memory_controller, and ntmem, PMDK and
# the drop-in must all read it from there:
#
#   the region's persistence_domain, as the kernel shows it and as ntmem
#   info reports it; ntm_ns_open()'s domain of a devdax namespace and of a
#   file on ext4 -o dax on it, a persisted write on each; PMDK's
#   pmem_has_auto_flush() (1 only when every region is cpu_cache: eADR
#   makes flushes unnecessary) on Debian's libpmem and on the drop-in;
#   libpmem2's store granularity of the same two (BYTE on cpu_cache,
#   CACHE_LINE on memory_controller) on Debian's libpmem2 and on its
#   drop-in.
#
# TAP as in tests/kernel/stage.sh.

. /tap.sh

domain=$(sed -n 's/.*ntmem\.domain=\([a-z_]*\).*/\1/p' /proc/cmdline)
if [ "$domain" = cpu_cache ]; then auto_flush=1 granularity=BYTE
else auto_flush=0 granularity=CACHE_LINE; fi
echo "# the machine's NFIT names the persistence domain '$domain'"

nfit_bus=$(bus_of ACPI.NFIT) && region=$(region_of "$nfit_bus")
result $? "the NVDIMM's nd bus (provider ACPI.NFIT) has a region"
if [ -z "${region:-}" ] || [ -z "$domain" ]; then
	echo "Bail out! no region, or no ntmem.domain= on the command line"
	exit 1
fi
check "the kernel says $region's persistence domain is $domain" \
	grep -qx "$domain" "/sys/bus/nd/devices/$region/persistence_domain"
check_words "ntmem info --json: $region's persistence domain is $domain" \
	"\"name\": \"$region\", \"persistence_domain\": \"$domain\"}" "$NTMEM" info --json

if ns_check "devdax namespace, align 2M" "$region" -m devdax -a 2M; then
	check_words "devdax: ntm_ns_open's domain is $domain" \
		"kind=devdax cpu_durable=1 domain=$domain" "$PROBE" info "$dev"
	check "devdax: a pattern persisted and read back" "$PROBE" write "$dev"
	pmem_checks devdax "$dev" 1 1 "auto_flush=$auto_flush"
	pmem2_checks devdax "$dev" "granularity=$granularity deep_flush=0"
fi

mkdir -p "$MNT"
if ns_check "fsdax namespace" "$region" -m fsdax; then
	check "mkfs.ext4 $dev" mkfs_ext4 "$dev"
	if mounted ext4 dax "$dev"; then
		f=$MNT/domain
		check "ext4 dax: a 4 MiB file" dd if=/dev/zero of="$f" bs=1M count=4
		check_words "ext4 dax: ntm_ns_open's domain of a file is $domain" \
			"kind=fsdax cpu_durable=1 domain=$domain" "$PROBE" info "$f"
		check "ext4 dax: a pattern persisted and read back" "$PROBE" write "$f"
		pmem_checks "ext4 dax" "$f" 1 1 "auto_flush=$auto_flush"
		pmem2_checks "ext4 dax" "$f" "granularity=$granularity deep_flush=0"
		umount "$MNT"
	fi
fi

finish
