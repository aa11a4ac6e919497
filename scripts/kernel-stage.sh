#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kernel-stage.sh BUILD KVER ROOT OUT - the root file system of the make
# check-kernel guest, as an initramfs (newc cpio) at OUT, and without fio
# and pmempool (the short boots run neither) at OUT-small.cpio (OUT less
# its .cpio), assembled in the directory ROOT (emptied first) without
# root privileges:
#
#   /init, /stage*.sh, /tap.sh   tests/kernel/init.sh, the stages
#                       (stage.sh, stage-domain.sh, stage-mce.sh,
#                       stage-cxl.sh) and
#                       what they share
#   /bin/busybox        Debian's busybox-static: the shell and every tool
#   ndctl, mke2fs, mkfs.xfs   and their shared libraries
#   pmempool, fio       the same, when installed
#   /ntmem/...          the project's programs from the build directory
#                       BUILD, at the same relative paths (tools/ntmem,
#                       tools/ntmem-bench-pmemobj: bench check's
#                       libpmemobj workloads,
#                       src/libntmem.so.0, compat/libpmem/libpmem.so.1,
#                       compat/libpmem2/libpmem2.so.1,
#                       tests/kernel/..., tests/compat/pmemblk_tool_*: a PMDK
#                       program on each libpmemblk, some of make check's
#                       test programs, src/record/ and tests/check/: the
#                       persistence checker and its corpus), so the
#                       RUNPATHs the build gave
#                       them ($ORIGIN/../src) find the libraries in the
#                       guest as they do here
#   /lib/modules/KVER   the nd, dax, virtio-pmem and xfs modules with what
#                       they depend on, and a modules.dep made by depmod -b
#
# Shared libraries are copied with their dependencies as ldd lists them,
# each at the path ldd resolved it to (the loader's default directories),
# so the guest needs no ld.so.cache. PMDK's own libraries (Debian's
# libpmem, libpmem2, libpmemblk, libpmemobj and their libndctl and
# libdaxctl) come in so, as the probes' dependencies. An initramfs rather than a disk
# image: the cloud kernel has virtio_blk only as a module, so a disk
# would need an initramfs to load it anyway, and everything fits in tens
# of MiB of guest memory (unpacking it is as fast as mounting a disk).
set -eu

if [ $# -ne 4 ]; then
	echo "usage: $0 BUILD KVER ROOT OUT" >&2
	exit 2
fi
build=$(cd "$1" && pwd -P) kver=$2 root=$3 out=$4
src=$(cd "$(dirname "$0")/.." && pwd -P)
mods=${NTMEM_KERNEL_MODULES_DIR:-${NTMEM_KERNEL_ROOT:-}/lib/modules}/$kver

die() { echo "kernel-stage: $*" >&2; exit 1; }

[ -d "$mods" ] || die "no modules for $kver in $mods"
busybox=$(command -v busybox) || die "busybox not found (scripts/install-deps.sh kernel)"
# A dynamic busybox would need its libraries before /init could run.
file_type=$(LC_ALL=C ldd "$busybox" 2>&1 || true)
case "$file_type" in
*"not a dynamic executable"* | *"statically linked"*) ;;
*) die "$busybox is not static (install busybox-static)" ;;
esac

rm -rf "$root"
mkdir -p "$root/bin" "$root/etc" "$root/ntmem"

# copy_lib PATH: PATH (a resolved library path) at the same place in ROOT.
copy_lib() {
	[ -e "$root$1" ] && return 0
	mkdir -p "$root$(dirname "$1")"
	cp -L "$1" "$root$1"
}

# copy_elf FILE DEST: FILE at ROOT/DEST, and every library ldd resolves for
# it. A library inside BUILD is skipped: the project's own libraries are
# copied at their relative paths under /ntmem, where the RUNPATH points.
copy_elf() {
	mkdir -p "$root$(dirname "$2")"
	cp -L "$1" "$root$2"
	libs=$(ldd "$1") || die "ldd $1 failed"
	for lib in $(echo "$libs" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p'); do
		case "$(readlink -f "$lib")" in
		"$build"/*) continue ;;
		esac
		copy_lib "$lib"
	done
	echo "$libs" | grep -q "not found" && die "ldd $1: a library is missing"
	return 0
}

cp "$busybox" "$root/bin/busybox"
cp "$src/tests/kernel/init.sh" "$root/init"
for f in stage.sh stage-domain.sh stage-mce.sh stage-cxl.sh tap.sh; do
	cp "$src/tests/kernel/$f" "$root/$f"
done
chmod 755 "$root/init" "$root/stage.sh" "$root/stage-domain.sh" "$root/stage-mce.sh" \
	"$root/stage-cxl.sh"

# The system's tools the checks use. /usr/sbin is not on every user's PATH.
PATH=$PATH:/usr/sbin:/sbin
for tool in ndctl mke2fs mkfs.xfs; do
	path=$(command -v "$tool") || die "$tool not found (scripts/install-deps.sh kernel)"
	copy_elf "$path" "/bin/$tool"
done
# cxl (ndctl's package) makes the CXL boot's region: where it is missing
# that boot's checks report it.
if path=$(command -v cxl); then
	copy_elf "$path" /bin/cxl
else
	echo "kernel-stage: note: cxl not found (ndctl): the CXL boot cannot make a region" >&2
fi
ln -s mke2fs "$root/bin/mkfs.ext4"
[ -f /etc/mke2fs.conf ] && cp /etc/mke2fs.conf "$root/etc/"

# The project's programs. The probes are optional in a build without them
# (no tests): the checks that need one then report it missing.
for rel in tools/ntmem tools/ntmem-bench-pmemobj src/libntmem.so.0 compat/libpmem/libpmem.so.1 \
	compat/libpmemblk/libpmemblk.so.1 compat/libpmem2/libpmem2.so.1 \
	tests/kernel/kernel_ns_probe \
	tests/kernel/kernel_pmem_probe tests/kernel/kernel_obj_probe \
	tests/kernel/kernel_pmem2_probe \
	tests/compat/pmemblk_tool_ntmem \
	tests/compat/pmemblk_tool_pmdk tests/unit/test_ns tests/unit/test_blk \
	tests/unit/test_badblocks tests/unit/test_embed; do
	if [ -e "$build/$rel" ]; then
		copy_elf "$build/$rel" "/ntmem/$rel"
	else
		echo "kernel-stage: note: $build/$rel not built" >&2
	fi
done

# The persistence checker (ntmem check): its libraries, which are one file
# under several names (symlinks, kept as such), and the corpus of
# programs with one durability bug each and their fixed twins.
# src/record/check holds only links, into src/record: both are copied, the
# links kept as such.
if [ -d "$build/src/record/check" ]; then
	mkdir -p "$root/ntmem/src/record/check"
	for f in "$build"/src/record/lib*.so* "$build"/src/record/check/lib*.so*; do
		case "$f" in *.p) continue ;; esac
		rel=${f#"$build"/}
		if [ -L "$f" ]; then
			cp -P "$f" "$root/ntmem/$rel"
		elif [ -f "$f" ]; then
			copy_elf "$f" "/ntmem/$rel"
		fi
	done
fi
for f in "$build"/tests/check/*; do
	[ -f "$f" ] && [ -x "$f" ] && copy_elf "$f" "/ntmem/tests/check/$(basename "$f")"
done
# The checker's program-mutation proof (tests/check/check_mutants.sh): the
# script, its list of equivalent mutants, the corpus's sources (a site is
# named by its source line) and the test library it sources.
mkdir -p "$root/ntmem-src/tests/check" "$root/ntmem-src/tests/lib"
cp "$src/tests/check/check_mutants.sh" "$src/tests/check/mutants_equivalent" \
	"$src"/tests/check/*.c "$src"/tests/check/*.h "$root/ntmem-src/tests/check/"
cp "$src/tests/lib/cli_lib.sh" "$root/ntmem-src/tests/lib/"

# make check-kernel-full's guest (NTMEM_KERNEL_STAGE_FULL=1): its stage,
# the tests it runs and python3 (scripts/kernel-stage-full.sh).
if [ "${NTMEM_KERNEL_STAGE_FULL:-}" = 1 ]; then
	# shellcheck source=scripts/kernel-stage-full.sh
	. "$src/scripts/kernel-stage-full.sh"
fi

# The modules init.sh loads, and every module they depend on, from the
# kernel's own modules.dep ("path: dep dep ..." lines, paths relative to
# the modules directory).
want="nfit nd_pmem nd_btt dax_pmem device_dax virtio_pci virtio_pmem xfs"
# What the kernel asks modprobe for itself, where it is a module and not
# built in: crc32c for xfs' libcrc32c on Debian's generic kernel (the
# cloud kernel builds it in).
if grep -q '/crc32c_generic\.ko[.a-z]*:' "$mods/modules.dep"; then
	want="$want crc32c_generic"
fi
# The CXL boot's drivers (tests/kernel/stage-cxl.sh), where the kernel
# builds them as modules (cxl_core and cxl_port are built in here).
for m in cxl_acpi cxl_pci cxl_mem cxl_pmem; do
	grep -q "/$m\.ko[.a-z]*:" "$mods/modules.dep" && want="$want $m"
done
paths=$(awk -v want="$want" '
	{ sub(/:$/, "", $1); dep[$1] = $0 }
	{ n = $1; sub(/.*\//, "", n); sub(/\.ko.*$/, "", n); byname[n] = $1 }
	function add(p,   i, k, f) {
		if (p in seen) return
		seen[p] = 1
		print p
		k = split(dep[p], f, " ")
		for (i = 2; i <= k; i++) add(f[i])
	}
	END {
		k = split(want, w, " ")
		for (i = 1; i <= k; i++) {
			if (!(w[i] in byname)) { print "missing:" w[i]; continue }
			add(byname[w[i]])
		}
	}' "$mods/modules.dep")
# In the guest they are where its modprobe looks, /lib/modules/KVER,
# wherever they were read from here ($NTMEM_KERNEL_MODULES_DIR).
guest_mods=/lib/modules/$kver
for p in $paths; do
	case "$p" in missing:*) die "module ${p#missing:} not in $mods/modules.dep" ;; esac
	mkdir -p "$root$guest_mods/$(dirname "$p")"
	cp "$mods/$p" "$root$guest_mods/$p"
done
for f in modules.order modules.builtin modules.builtin.modinfo; do
	[ -f "$mods/$f" ] && cp "$mods/$f" "$root$guest_mods/"
done
depmod=$(command -v depmod) || die "depmod not found (kmod)"
"$depmod" -b "$root" "$kver"

# cpio ROOT-RELATIVE-LIST: the newc archive of those paths of ROOT.
cpio_of() {
	(cd "$root" && LC_ALL=C sort "$1" | "$busybox" cpio -o -H newc 2>/dev/null)
}
mkdir -p "$(dirname "$out")"
small=${out%.cpio}-small.cpio
(cd "$root" && find .) >"$out.base-list"
cpio_of "$out.base-list" >"$small.tmp"

# PMDK's pmempool (pmdk-tools) and fio (its libpmem engine, under ntmem
# check), from the check set: without one, the checks that need it skip.
# fio brings every library Debian built it with (ceph's, ICU's: about
# 80 MiB of the image), as ldd lists them: the loader needs them all.
# Staged last, so what they add (and nothing the rest needs) is an
# archive of its own, appended to the small one for OUT: a boot that
# runs neither (the short ones) unpacks the small one alone
# (OUT-small.cpio), 26 MiB instead of 104. The kernel unpacks
# concatenated newc archives in order, the directories the second
# needs being in it or already made by the first.
for tool in pmempool fio; do
	if path=$(command -v "$tool"); then
		copy_elf "$path" "/bin/$tool"
	else
		echo "kernel-stage: note: $tool not found (scripts/install-deps.sh check)" >&2
	fi
done
LC_ALL=C sort "$out.base-list" >"$out.base-list.sorted"
(cd "$root" && find .) | LC_ALL=C sort | LC_ALL=C comm -23 - "$out.base-list.sorted" >"$out.tools-list"
{ cat "$small.tmp"; cpio_of "$out.tools-list"; } >"$out.tmp"
rm -f "$out.base-list" "$out.base-list.sorted" "$out.tools-list"
mv "$small.tmp" "$small"
mv "$out.tmp" "$out"
