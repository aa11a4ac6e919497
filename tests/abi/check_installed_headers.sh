#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_installed_headers.sh MESON BUILDROOT CC [CROSS_CC...] - the headers
# as libntmem-dev installs them, and nothing else: `meson install --tags
# devel` into a scratch directory, then each installed header compiled
# alone (-Wall -Wextra -Werror, gnu11 and c99 with only that directory on
# the include path) by CC and by each CROSS_CC that exists here (the
# aarch64 cross compiler: a header that includes one the install left out,
# or code only one architecture compiles, fails there and not on x86-64).
# An architecture's own header (ntmem/arch/x86_64.h, aarch64.h) is
# compiled alone only by that architecture's compiler; ntmem.h includes
# the right one everywhere. Exit 0 pass, 1 fail.
set -u
meson=$1 buildroot=$2
shift 2

fail=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fail=1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ntmem-headers-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
if ! "$meson" install -C "$buildroot" --no-rebuild --tags devel \
	--destdir "$tmp/root" >"$tmp/install.log" 2>&1; then
	bad "meson install --tags devel"
	sed 's/^/# /' "$tmp/install.log"
	exit 1
fi
inc=$(find "$tmp/root" -name ntmem.h -path '*/include/ntmem.h' | head -n 1)
inc=${inc%/ntmem.h}
if [ -z "$inc" ]; then
	bad "ntmem.h is installed"
	exit 1
fi
headers=$(cd "$inc" && find . -name '*.h' | sed 's|^\./||' | LC_ALL=C sort)
echo "# $(echo "$headers" | wc -l) headers installed"

for cc in "$@"; do
	if ! command -v "${cc%% *}" >/dev/null 2>&1; then
		echo "# skip - $cc is not installed"
		continue
	fi
	machine=$($cc -dumpmachine)
	for h in $headers; do
		case "$h" in
		ntmem/arch/generic.h) ;;
		ntmem/arch/*) [ "${machine%%-*}" = "$(basename "$h" .h)" ] || continue ;;
		esac
		printf '#include <%s>\nint ntm_header_check;\n' "$h" >"$tmp/tu.c"
		for std in gnu11 c99; do
			# shellcheck disable=SC2086 # CC may be several words
			if $cc -std=$std -Wall -Wextra -Werror -fsyntax-only \
				-I"$inc" "$tmp/tu.c" >"$tmp/cc.log" 2>&1; then
				ok "$cc -std=$std: <$h> alone"
			else
				bad "$cc -std=$std: <$h> alone"
				head -n 5 "$tmp/cc.log" | sed 's/^/# /'
			fi
		done
	done
done
exit "$fail"
