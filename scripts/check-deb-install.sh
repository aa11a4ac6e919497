#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-deb-install.sh OUTDIR SCRATCH - install the packages in OUTDIR
# with dpkg, as `apt install ./ntmem*.deb` would, and use them as a user
# does, without changing this system: the script runs in a mount
# namespace of its own (it starts one with unshare -m) where /usr, /etc
# and /var are overlays whose changes go to a tmpfs that disappears with
# the namespace. Part of scripts/check-deb.sh; SCRATCH holds its
# pmdk_client and pmem2_client, and its files go to SCRATCH/installed.
#
# Checks: dpkg -i of every package (maintainer scripts, triggers, ldconfig
# included); a program built with `pkg-config --cflags --libs ntmem`
# against the installed files runs with no LD_LIBRARY_PATH; `man` finds
# a page; `ntmem check` runs a program with the checking libraries of
# ntmem-tools; with ntmem-pmem-system a PMDK program loads the drop-ins,
# and after `dpkg -r ntmem-pmem-system` PMDK's libpmem again (when
# Debian's libpmem1 is installed), both for a libpmem2 program too;
# purging everything leaves no file.
# Exit status 0 ok, 1 a check failed, 77 the namespace or overlays are
# not permitted here (nothing was checked).
set -u

# The script starts itself again in a new mount namespace, with private
# propagation, and mounts nothing unless it can prove it is there: its
# namespace must be readable and differ from its parent's (the process
# that ran unshare, in the namespace everything else on this machine
# uses). Any doubt, or any mount that fails, ends it before dpkg runs.
if [ "${1:-}" != --in-private-namespace ]; then
	unshare --mount --propagation private true 2>/dev/null || exit 77
	exec unshare --mount --propagation private -- \
		"$0" --in-private-namespace "$@"
fi
shift
out=$1 scratch=$2/installed
ns_self=$(readlink /proc/self/ns/mnt)
ns_parent=$(readlink "/proc/$PPID/ns/mnt")
if [ -z "$ns_self" ] || [ -z "$ns_parent" ] || [ "$ns_self" = "$ns_parent" ]; then
	echo "check-deb-install: not in a mount namespace of its own; nothing mounted" >&2
	exit 77
fi
rm -rf "$scratch"
ov=$scratch/overlay
mkdir -p "$ov"
mount -t tmpfs tmpfs "$ov" 2>/dev/null || exit 77
for d in usr etc var; do
	mkdir -p "$ov/upper/$d" "$ov/workdir/$d"
	mount -t overlay overlay \
		-o "lowerdir=/$d,upperdir=$ov/upper/$d,workdir=$ov/workdir/$d" "/$d" ||
		exit 77
	grep -q " /$d .* - overlay " /proc/self/mountinfo || exit 77
done

fail=0
ok() { echo "check-deb: ok: $*"; }
bad() { echo "check-deb: FAIL: $*"; fail=1; }
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
client=$2/pmdk_client client2=$2/pmem2_client

debs=""
for deb in "$out"/*.deb; do
	case "$deb" in *-dbgsym_*) ;; *) debs="$debs $deb" ;; esac
done
pkgs=""
for deb in $debs; do
	pkgs="$pkgs $(dpkg-deb -f "$deb" Package)"
done
# shellcheck disable=SC2086 # the lists are meant to split into words
if dpkg -i $debs >"$scratch/dpkg-i.out" 2>&1; then
	ok "dpkg -i:$pkgs"
else
	bad "dpkg -i: $(cat "$scratch/dpkg-i.out")"
	exit 1
fi

# shellcheck disable=SC2046 # the flags are meant to split into words
if cc -o "$scratch/descriptors-installed" examples/descriptors.c \
	$(pkg-config --cflags --libs ntmem) &&
	ldd "$scratch/descriptors-installed" | grep -q "lib/$triplet/libntmem\.so\.0 " &&
	env -u LD_LIBRARY_PATH "$scratch/descriptors-installed" 1000 >/dev/null; then
	ok "installed: descriptors.c built with pkg-config ntmem, ran from /usr/lib/$triplet"
else
	bad "installed: descriptors.c with pkg-config ntmem"
fi

if man -w 3 ntm_memcpy_nt | grep -q "^/usr/share/man/man3/"; then
	ok "installed: man -w 3 ntm_memcpy_nt: $(man -w 3 ntm_memcpy_nt)"
else
	bad "installed: man -w 3 ntm_memcpy_nt"
fi

# ntmem check from its compiled-in library directory (no NTMEM_CHECK_LIBDIR).
mkdir -p "$scratch/inst-check"
if env -u NTMEM_CHECK_LIBDIR ntmem check -- "$client" "$scratch/inst-check" \
	>"$scratch/inst-check.out" 2>&1 &&
	grep -q '^ntmem check: 0 errors' "$scratch/inst-check.out"; then
	ok "installed: ntmem check ran a PMDK program: $(grep '^ntmem check:' "$scratch/inst-check.out")"
else
	bad "installed: ntmem check: $(cat "$scratch/inst-check.out")"
fi

# dropins_answer DIR: the PMDK program, no LD_LIBRARY_PATH, printed the
# drop-ins' banners (0) or not (1).
dropins_answer() {
	mkdir -p "$1"
	env -u LD_LIBRARY_PATH NTMEM_VERBOSE=1 "$client" "$1" >"$1.out" 2>&1 ||
		{ cat "$1.out"; return 2; }
	grep -q '^ntmem libpmem ' "$1.out" && grep -q '^ntmem libpmemblk ' "$1.out"
}
dropins_answer "$scratch/inst-system"
case $? in
0) ok "installed: with ntmem-pmem-system a PMDK program loads the drop-ins" ;;
*) bad "installed: with ntmem-pmem-system a PMDK program did not load the drop-ins" ;;
esac

# pmem2_answer DIR: the libpmem2 program (built by check-deb.sh against
# PMDK's libpmem2.h), no LD_LIBRARY_PATH, called the drop-in (0) or
# another libpmem2.so.1 (1).
pmem2_answer() {
	mkdir -p "$1"
	env -u LD_LIBRARY_PATH "$client2" "$1" >"$1.out" 2>&1 ||
		{ cat "$1.out"; return 2; }
	grep -q "^pmem2_client: libpmem2 calls ok, from /usr/lib/$triplet/ntmem/libpmem2\.so\.1\$" "$1.out"
}
if [ -x "$client2" ]; then
	pmem2_answer "$scratch/inst-system2"
	case $? in
	0) ok "installed: with ntmem-pmem-system a libpmem2 program loads the drop-in" ;;
	*) bad "installed: with ntmem-pmem-system a libpmem2 program did not load the drop-in" ;;
	esac
fi

dpkg -r ntmem-pmem-system >/dev/null 2>&1 || bad "dpkg -r ntmem-pmem-system"
if dpkg-query -W libpmem1 libpmemblk1 >/dev/null 2>&1; then
	dropins_answer "$scratch/inst-pmdk"
	case $? in
	1) ok "installed: after dpkg -r ntmem-pmem-system PMDK's libraries answer again" ;;
	*) bad "installed: after dpkg -r ntmem-pmem-system the drop-ins still answer" ;;
	esac
fi
if [ -x "$client2" ] && dpkg-query -W libpmem2 >/dev/null 2>&1; then
	pmem2_answer "$scratch/inst-pmdk2"
	case $? in
	1) ok "installed: after dpkg -r ntmem-pmem-system PMDK's libpmem2 answers again" ;;
	*) bad "installed: after dpkg -r ntmem-pmem-system the libpmem2 drop-in still answers" ;;
	esac
fi

# shellcheck disable=SC2086
dpkg -P $pkgs >/dev/null 2>&1 || bad "dpkg -P"
left=$(ls -d /usr/lib/"$triplet"/ntmem /usr/include/ntmem /usr/bin/ntmem \
	/etc/ld.so.conf.d/*ntmem* 2>/dev/null)
if [ -z "$left" ]; then
	ok "dpkg -P of every package leaves none of their files"
else
	bad "left after dpkg -P: $left"
fi
exit $fail
