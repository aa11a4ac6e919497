#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-deb.sh [OUTDIR] - check the Debian packages scripts/build-deb.sh
# left in OUTDIR (default build-deb) the way a user meets them, without
# installing anything on this system: each package is unpacked with
# `dpkg -x` into the scratch root OUTDIR/root, and
#   1. examples/descriptors.c builds with `pkg-config --cflags --libs
#      ntmem` (and ntmem-check) against the scratch root only, and runs on
#      its libraries; it links against the static library too;
#   2. the scratch root's `ntmem --version` and `ntmem info` run;
#   3. tests/deb/pmdk_client.c, built against PMDK's own libpmem.h and
#      libpmemblk.h, runs on the drop-in directory of ntmem-pmem-compat
#      (LD_LIBRARY_PATH), and the drop-ins' NTMEM_VERBOSE banners show
#      they answered; tests/deb/pmem2_client.c, against PMDK's libpmem2.h,
#      says its libpmem2.so.1 is the package's; ntmem-pmem-system's ld.so.conf.d file sorts before
#      this system's (step 6 installs it and runs the program without
#      LD_LIBRARY_PATH);
#   4. every installed man page renders (mandoc), and `man` finds each
#      section-3 name, link pages included, in the scratch root;
#   5. lintian --fail-on error passes on every package;
#   6. the packages installed with dpkg -i, used and removed, in a mount
#      namespace over throwaway overlays (scripts/check-deb-install.sh).
# Prints one line per check; exits non-zero when one failed.
set -u
cd "$(dirname "$0")/.." || exit 1
out=${1:-build-deb}
root=$out/root
scratch=$out/scratch
fail=0

ok() { echo "check-deb: ok: $*"; }
bad() { echo "check-deb: FAIL: $*"; fail=1; }

debs=""
for deb in "$out"/*.deb; do
	case "$deb" in *-dbgsym_*) ;; *) [ -f "$deb" ] && debs="$debs $deb" ;; esac
done
[ -n "$debs" ] || { echo "check-deb: no packages in $out: run make deb" >&2; exit 1; }

rm -rf "$root" "$scratch"
mkdir -p "$root" "$scratch"
root=$(cd "$root" && pwd)
scratch=$(cd "$scratch" && pwd)
for deb in $debs; do
	dpkg -x "$deb" "$root" || bad "dpkg -x $deb"
done

triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
libdir=$root/usr/lib/$triplet
dropins=$libdir/ntmem

# --- 1. an example through pkg-config, on the packaged files only ------------

# Only the scratch root's .pc files, their paths moved into it; the
# default filtering of -I/usr/include and -L/usr/lib is off, so the
# compiler is pointed at the scratch root and cannot fall back to a copy
# installed on this system unnoticed.
pc() {
	PKG_CONFIG_LIBDIR=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root \
	PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
		pkg-config "$@"
}

# build_run PKG: descriptors.c with PKG's flags, run on the scratch root's
# libraries; the library it loaded must be the scratch root's.
build_run() {
	exe=$scratch/descriptors-$1
	flags=$(pc --cflags --libs "$1") || { bad "pkg-config $1"; return; }
	case "$flags" in
	*"-I$root/usr/include"*"-L$libdir "*) ;;
	*) bad "pkg-config $1 does not point into the scratch root: $flags"; return ;;
	esac
	# shellcheck disable=SC2086 # the flags are meant to split into words
	if ! cc -o "$exe" examples/descriptors.c $flags; then
		bad "cc examples/descriptors.c \$(pkg-config --cflags --libs $1)"
		return
	fi
	lib=$(LD_LIBRARY_PATH=$libdir ldd "$exe" | grep -o "$libdir/lib$1\.so\.0")
	[ -n "$lib" ] || { bad "descriptors ($1) did not load lib$1.so.0 from the scratch root"; return; }
	if LD_LIBRARY_PATH=$libdir "$exe" 100000 >"$scratch/descriptors-$1.out" 2>&1; then
		ok "examples/descriptors.c built with pkg-config $1, ran on $lib"
	else
		bad "descriptors ($1) failed: $(cat "$scratch/descriptors-$1.out")"
	fi
}
build_run ntmem
build_run ntmem-check

# The static library: no libntmem.so.0 at run time.
# shellcheck disable=SC2046 # the flags are meant to split into words
if cc -o "$scratch/descriptors-static" examples/descriptors.c \
	$(pc --cflags ntmem) "$libdir/libntmem.a" -lpthread &&
	! ldd "$scratch/descriptors-static" | grep -q libntmem &&
	"$scratch/descriptors-static" 100000 >/dev/null 2>&1; then
	ok "examples/descriptors.c linked with libntmem.a, ran"
else
	bad "examples/descriptors.c with the static libntmem.a"
fi

# --- 2. the tool -------------------------------------------------------------

tool=$root/usr/bin/ntmem
v=$(LD_LIBRARY_PATH=$libdir "$tool" --version 2>&1)
case "$v" in
"ntmem $(sed -n "s/^ntmem (\([^)]*\)).*/\1/p;q" debian/changelog)") ok "ntmem --version: $v" ;;
*) bad "ntmem --version: $v" ;;
esac
if LD_LIBRARY_PATH=$libdir "$tool" info >"$scratch/info.out" 2>&1; then
	ok "ntmem info ($(wc -l <"$scratch/info.out") lines)"
else
	bad "ntmem info: $(cat "$scratch/info.out")"
fi

# --- 3. the drop-ins under a PMDK program ------------------------------------

client=$scratch/pmdk_client
# check_banners LOG WHAT: both drop-ins announced themselves in LOG.
check_banners() {
	if grep -q '^ntmem libpmem ' "$1" && grep -q '^ntmem libpmemblk ' "$1" &&
	   grep -q '^pmdk_client: libpmem and libpmemblk calls ok' "$1"; then
		ok "$2"
	else
		bad "$2: $(cat "$1")"
	fi
}
if cc -Wall -Wextra -Werror -o "$client" tests/deb/pmdk_client.c -lpmem -lpmemblk; then
	mkdir -p "$scratch/run1"
	NTMEM_VERBOSE=1 LD_LIBRARY_PATH=$dropins "$client" "$scratch/run1" \
		>"$scratch/client1.out" 2>&1
	check_banners "$scratch/client1.out" \
		"a PMDK program ran on the drop-ins with LD_LIBRARY_PATH=/usr/lib/$triplet/ntmem"

	# ntmem-pmem-system's file names the drop-in directory and sorts
	# before every file of this system's /etc/ld.so.conf.d (ldconfig reads
	# them in that order and keeps a SONAME's first directory). Step 6
	# installs it for real: ldconfig, then the program with no
	# LD_LIBRARY_PATH.
	conf=$(ls "$root"/etc/ld.so.conf.d/*.conf 2>/dev/null)
	first=$( (ls /etc/ld.so.conf.d/*.conf 2>/dev/null; echo "$conf") |
		awk -F/ '{ print $NF "\t" $0 }' | sort | head -n 1 | cut -f2)
	if [ -n "$conf" ] && [ "$first" = "$conf" ] &&
	   [ "$(cat "$root$(readlink "$conf")")" = "/usr/lib/$triplet/ntmem" ]; then
		ok "ntmem-pmem-system's ${conf#"$root"} names the drop-ins and sorts first"
	else
		bad "ntmem-pmem-system's ld.so.conf.d file (${conf#"$root"}) is not the first or names another directory"
	fi
else
	bad "cc tests/deb/pmdk_client.c -lpmem -lpmemblk (PMDK's headers: libpmem-dev, libpmemblk-dev)"
fi

# tests/deb/pmem2_client.c, built against PMDK's own libpmem2.h, on the
# drop-in directory: the libpmem2.so.1 it called (it has no banner) is
# the package's.
client2=$scratch/pmem2_client
if cc -Wall -Wextra -Werror -o "$client2" tests/deb/pmem2_client.c -lpmem2; then
	mkdir -p "$scratch/run2"
	LD_LIBRARY_PATH=$dropins "$client2" "$scratch/run2" >"$scratch/client2.out" 2>&1
	if grep -q "^pmem2_client: libpmem2 calls ok, from $dropins/libpmem2\.so\.1\$" \
		"$scratch/client2.out"; then
		ok "a libpmem2 program ran on the drop-in with LD_LIBRARY_PATH=/usr/lib/$triplet/ntmem"
	else
		bad "a libpmem2 program with LD_LIBRARY_PATH=/usr/lib/$triplet/ntmem: $(cat "$scratch/client2.out")"
	fi
else
	bad "cc tests/deb/pmem2_client.c -lpmem2 (PMDK's header: libpmem2-dev)"
fi

# --- 4. the manual -----------------------------------------------------------

pages=0 broken=""
for page in "$root"/usr/share/man/man*/*; do
	pages=$((pages + 1))
	# mandoc reads gzip; dh_installman made every ".so" page a symlink.
	if ! text=$(mandoc -Tutf8 -Werror "$page" 2>&1) || [ -z "$text" ]; then
		broken="$broken ${page#"$root"}"
	fi
done
if [ -z "$broken" ] && [ "$pages" -gt 0 ]; then
	ok "all $pages installed man pages render"
else
	bad "man pages that do not render (of $pages):$broken"
fi
# man(1) itself, by name only, as a user runs it: every section-3 name,
# link pages included, resolves to a page in the scratch root.
unfound=""
n=0
for page in "$root"/usr/share/man/man3/*.3.gz; do
	name=$(basename "$page" .3.gz)
	n=$((n + 1))
	MANPATH=$root/usr/share/man man -w 3 "$name" 2>/dev/null |
		grep -q "^$root/" || unfound="$unfound $name"
done
if [ -z "$unfound" ]; then
	ok "man finds all $n section-3 names in the scratch root"
else
	bad "man does not find:$unfound"
fi
# One page and one link page through man-db's whole pipeline (groff).
for page in "$root"/usr/share/man/man3/*.3.gz; do
	[ -L "$page" ] || continue
	name=$(basename "$page" .3.gz)
	if MANPATH=$root/usr/share/man MANWIDTH=80 man 3 "$name" 2>/dev/null |
		grep -q "$name"; then
		ok "man 3 $name renders its family's page ($(readlink "$page"))"
	else
		bad "man 3 $name"
	fi
	break
done

# --- 5. lintian --------------------------------------------------------------

# Once, on every package (debug symbols too); warnings are printed, only
# errors fail.
if lintian --fail-on error --tag-display-limit 0 "$out"/*.deb >"$scratch/lintian.out" 2>&1; then
	ok "lintian: no errors ($(grep -c '^W:' "$scratch/lintian.out") warnings)"
else
	bad "lintian"
fi
grep -E '^[EWI]:' "$scratch/lintian.out"

# --- 6. installed, in a private mount namespace -------------------------------

scripts/check-deb-install.sh "$out" "$scratch"
case $? in
0) ;;
77) echo "check-deb: skipped: dpkg -i in a private mount namespace (unshare -m or overlayfs not permitted here)" ;;
*) fail=1 ;;
esac

[ "$fail" -eq 0 ] && echo "check-deb: all checks passed" || echo "check-deb: some checks FAILED"
exit $fail
