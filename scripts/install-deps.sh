#!/bin/sh
# SPDX-License-Identifier: MIT
#
# install-deps.sh - install the Debian packages a make target needs, and
# only those that are missing. The one place the project's dependencies
# are listed; every make target that needs something calls it first.
#
#   scripts/install-deps.sh build   compiler, meson, ninja, pkg-config
#   scripts/install-deps.sh check   build + cmocka, PMDK headers, fio (tests)
#                                   + the fuzz set (make check runs fuzzers)
#                                   + the aarch64 cross build and qemu-user
#   scripts/install-deps.sh fuzz    build + clang and libFuzzer
#   scripts/install-deps.sh bench   build + PMDK's libpmem (the peer) + gnuplot
#   scripts/install-deps.sh deb     build + the Debian packaging tools and
#                                   what make check-deb needs
#   scripts/install-deps.sh kernel  build + QEMU, a Debian kernel and the
#                                   guest's tools (make check-kernel)
#   scripts/install-deps.sh ceph    build + Ceph's monitor, manager, OSD
#                                   and tools (make check-ceph)
#
# As root it runs apt-get; otherwise it prints the command to run and fails.
# On a system without dpkg it only checks that the commands exist.
set -eu

# libdw-dev: elfutils' libdw, with which `ntmem check` prints a report's
# frames as "function file:line" (tools/check_symbols.c).
build_pkgs="gcc libc6-dev meson ninja-build pkg-config libdw-dev"
# libcmocka-dev: test assertions. libpmem-dev: PMDK's own libpmem.h, to
# prove programs written against it build and run on ntmem's drop-in.
# fio: a real client of libpmem, run on the drop-in with verification.
# libpmemblk1, libpmemblk-dev, pmdk-tools: PMDK's libpmemblk, its header
# and pmempool, to prove the libpmemblk drop-in's ABI and that pools move
# both ways between it and PMDK (fio's pmemblk engine needs libpmemblk1).
# ThreadSanitizer's runtime (libtsan2 for gcc 12) comes with gcc itself:
# libgcc-12-dev depends on it.
check_pkgs="libcmocka-dev binutils libpmem-dev fio libpmemblk1 libpmemblk-dev pmdk-tools"
# abigail-tools: abidiff of the built library against the last release's
# (the ABI check). mandoc: mandoc -Tlint on every man page, and renders
# the installed pages (the man tests).
check_pkgs="$check_pkgs abigail-tools mandoc"
# libpmemobj-dev: PMDK's libpmemobj, on Debian's libpmem and on the
# drop-in (make check-kernel's libpmemobj program, tests/kernel).
check_pkgs="$check_pkgs libpmemobj-dev"
# valgrind: its headers give the library the client requests that tell
# memcheck and helgrind what they cannot know (src/valgrind/), and the
# tool runs the drop-in under them as PMDK's own tests do
# (tests/compat/check_valgrind.sh).
check_pkgs="$check_pkgs valgrind"
# libpmem2-dev: PMDK's libpmem2.h and libpmem2.so.1 (libpmem2-dev brings
# the library), to build programs against PMDK's header and run them on
# the libpmem2 drop-in and on PMDK side by side.
check_pkgs="$check_pkgs libpmem2-dev"
# The aarch64 cross build and its tests under qemu-user (make check-aarch64,
# cross/aarch64-linux-gnu.ini): Debian's cross compiler and C library, the
# user-mode emulator, and cmocka for arm64 from a multiarch install (it
# brings libc6:arm64, the glibc the tests run on).
check_pkgs="$check_pkgs gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static libcmocka-dev:arm64"
# clang: libFuzzer exists only for clang. Its runtime archives
# (libclang_rt.fuzzer, .asan, .ubsan) are in libclang-rt-dev, which clang
# only recommends, and recommends are not installed here.
fuzz_pkgs="clang libclang-rt-dev"
# libpmem1: PMDK, loaded at run time as the benchmark peer; never linked.
# gnuplot-nox: turns `ntmem bench ... --csv` output into plots.
bench_pkgs="libpmem1 gnuplot-nox fio"
# make deb: dpkg-buildpackage (dpkg-dev) running debian/rules with
# debhelper's meson build system (no fakeroot: Rules-Requires-Root: no).
# make check-deb: lintian on the packages, mandoc to render the installed
# pages, and libpmem-dev, libpmemblk-dev for PMDK's headers (a program
# built against them runs on the drop-in package); libpmemobj-dev builds
# ntmem-tools' libpmemobj workload of ntmem bench check; valgrind: its
# headers (Build-Depends: the client requests of src/valgrind/).
deb_pkgs="debhelper dpkg-dev lintian mandoc libpmem-dev libpmemblk-dev libpmemobj-dev libpmem2-dev valgrind libdw-dev"

# make check-kernel (scripts/kernel-check.sh): qemu-system-x86 boots
# linux-image-cloud-amd64 (installed into /boot and /lib/modules, read
# from there, never booted on this machine) with an NVDIMM and virtio-pmem;
# the guest's root is built from busybox-static (its shell and tools, no
# libraries needed), ndctl (namespaces), e2fsprogs and xfsprogs (DAX file
# systems), kmod's depmod (modules.dep) and the check build's programs,
# among them a PMDK program built against libpmem-dev (in the check set).
kernel_pkgs="qemu-system-x86 linux-image-cloud-amd64 ndctl e2fsprogs xfsprogs busybox-static kmod"

# make check-ceph (scripts/check-ceph.sh): a one-host Ceph cluster whose
# OSDs keep BlueStore on ntmem's libpmem and on PMDK's (libpmem1, which
# ceph-osd links). ceph-mgr: without a manager no placement group state
# is reported, and the script waits for them to be active and clean.
# ceph-common: the ceph, rados and ceph-authtool commands.
ceph_pkgs="ceph-mon ceph-mgr ceph-osd ceph-common libpmem1"

# The mce boot of make check-kernel injects a machine check, and the cloud
# kernel is built without CONFIG_X86_MCE: it boots Debian's generic
# kernel (the package linux-image-amd64 depends on), unpacked with dpkg -x
# into $NTMEM_MCE_KERNEL_DIR (boot/, lib/modules/ as the package has
# them, with a modules.dep from depmod) and never installed: its postinst
# would build an initramfs for this machine, and /boot would then hold a
# second kernel for kernel-check.sh to choose from. Nothing when a kernel
# is already unpacked there; a failure is only a note (the boot is then
# skipped, naming why).
# The Makefile names it (its work directory for check-kernel); run by
# hand, the default build's.
mce_kernel_dir=${NTMEM_MCE_KERNEL_DIR:-$(cd "$(dirname "$0")/.." && pwd -P)/build/kernel/generic-kernel}
mce_kernel() {
	for k in "$mce_kernel_dir"/boot/vmlinuz-*; do
		[ -f "$mce_kernel_dir/lib/modules/${k##*/vmlinuz-}/modules.dep" ] && return 0
	done
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: note: the generic kernel for check-kernel's mce boot is not in $mce_kernel_dir; run as root to unpack it there" >&2
		return 1
	fi
	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[^ ]*\)$/\1/p' | head -n 1)
	if [ -z "$pkg" ]; then
		apt-get update -qq || true
		pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[^ ]*\)$/\1/p' | head -n 1)
	fi
	[ -n "$pkg" ] || { echo "install-deps: note: no linux-image-amd64 in the package lists" >&2; return 1; }
	echo "install-deps: unpacking $pkg into $mce_kernel_dir (check-kernel's mce boot)"
	mkdir -p "$mce_kernel_dir"
	rm -rf "$mce_kernel_dir"/.unpack.* # what a run cut short left
	tmp=$(mktemp -d "$mce_kernel_dir/.unpack.XXXXXX")
	# apt-get download as root warns that _apt cannot write the directory.
	if (cd "$tmp" && chmod 755 . && apt-get download -qq "$pkg" >/dev/null 2>&1) &&
		dpkg -x "$tmp"/*.deb "$tmp/tree" &&
		ver=$(ls "$tmp/tree/lib/modules") &&
		depmod -b "$tmp/tree" "$ver"; then
		# The tree is moved into place whole, so a run cut short leaves
		# no kernel half there (the test above would take it).
		mkdir -p "$mce_kernel_dir/boot" "$mce_kernel_dir/lib/modules"
		rm -rf "$mce_kernel_dir/lib/modules/$ver"
		mv "$tmp/tree/lib/modules/$ver" "$mce_kernel_dir/lib/modules/$ver"
		mv "$tmp/tree/boot/"* "$mce_kernel_dir/boot/"
		rm -rf "$tmp"
		return 0
	fi
	rm -rf "$tmp"
	echo "install-deps: note: $pkg could not be downloaded or unpacked into $mce_kernel_dir: check-kernel's mce boot will be skipped" >&2
	return 1
}

case "${1:-build}" in
build) want="$build_pkgs" ;;
check) want="$build_pkgs $check_pkgs $fuzz_pkgs" ;;
fuzz) want="$build_pkgs $fuzz_pkgs" ;;
bench) want="$build_pkgs $bench_pkgs" ;;
deb) want="$build_pkgs $deb_pkgs" ;;
kernel) want="$build_pkgs $kernel_pkgs" ;;
ceph) want="$build_pkgs $ceph_pkgs" ;;
*)
	echo "usage: $0 build|check|fuzz|bench|deb|kernel|ceph" >&2
	exit 2
	;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
	cmds="cc meson ninja pkg-config"
	case "${1:-build}" in check | fuzz) cmds="$cmds clang" ;; esac
	for cmd in $cmds; do
		command -v "$cmd" >/dev/null 2>&1 ||
			{ echo "install-deps: '$cmd' is missing; install it with your package manager" >&2; exit 1; }
	done
	exit 0
fi

missing=""
for pkg in $want; do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	case "$status" in
	*"install ok installed"*) ;;
	*) missing="$missing $pkg" ;;
	esac
done
# Steps beyond packages, after them (they use the packages' tools).
extra_steps() {
	case "${1:-build}" in kernel) mce_kernel || true ;; esac
}
if [ -z "$missing" ]; then
	extra_steps "${1:-build}"
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages:$missing" >&2
	echo "install-deps: run as root: apt-get install -y$missing" >&2
	exit 1
fi

echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# An arm64 package (name:arm64) needs the architecture known to dpkg.
case "$missing" in
*:arm64*)
	dpkg --print-foreign-architectures | grep -qx arm64 ||
		dpkg --add-architecture arm64
	;;
esac
apt-get update -qq
# shellcheck disable=SC2086 # the list is meant to split into words
apt-get install -y -qq --no-install-recommends $missing >/dev/null
extra_steps "${1:-build}"
