#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_dropin_interpose.sh PROBE LIBPMEM_SO LIBPMEMBLK_SO - a program that
# defines ftruncate() and posix_fallocate() (dropin_interpose.c, the way
# PMDK's mocks and LD_PRELOAD shims interpose) sees the drop-ins call them:
# pmem_map_file(PMEM_FILE_CREATE) calls both, pmemblk_create() calls
# posix_fallocate(). A drop-in that calls their large-file twins
# (ftruncate64, posix_fallocate64) instead goes unseen and fails.
#
# The same probe runs Debian's libpmem.so.1 and libpmemblk.so.1 when they
# are installed (in /lib/$($CC -print-multiarch), $PMDK_LIBPMEM and
# $PMDK_LIBPMEMBLK override), with LD_LIBRARY_PATH unset so that PMDK's
# libpmemblk loads PMDK's libpmem: the expectations are what PMDK does.
# Files live in a fresh directory in /dev/shm (a few MiB).
# Exit 0 pass, 1 fail.
set -u
CC=${CC:-cc}
if [ $# -ne 3 ]; then
	echo "usage: $0 PROBE LIBPMEM_SO LIBPMEMBLK_SO" >&2
	exit 1
fi
probe=$1 libpmem=$2 libpmemblk=$3
# ok, bad, scratch_dir; fail, $out, $err, $tmp
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
scratch_dir ntmem-interpose

# shellcheck disable=SC2086 # CC may be a command with arguments
multiarch=$($CC -print-multiarch 2>/dev/null)
pmdk_dir=/lib/${multiarch:-x86_64-linux-gnu}

# seen WHO LIB KIND FUNCS...: the probe makes LIB create a file of KIND
# (pmem or blk); each of FUNCS must have been called at least once. WHO
# PMDK runs without LD_LIBRARY_PATH, which holds ntmem's build directories.
seen() {
	who=$1 lib=$2 kind=$3
	shift 3
	rm -f "$tmp/$kind"
	unset_path=
	[ "$who" = PMDK ] && unset_path="-u LD_LIBRARY_PATH"
	# shellcheck disable=SC2086 # unset_path: no word, or two
	if ! env $unset_path "$probe" "$lib" "$kind" "$tmp/$kind" \
		>"$out" 2>"$err"; then
		bad "$who $kind: the probe failed"
		sed 's/^/# /' "$out" "$err"
		return
	fi
	for f in "$@"; do
		n=$(awk -v f="$f" '{ for (i = 1; i < NF; i++) if ($i == f) print $(i + 1) }' \
			"$out")
		if [ "${n:-0}" -gt 0 ]; then
			ok "$who $kind: the program's $f saw $n call(s)"
		else
			bad "$who $kind: the program's $f saw no call ($(cat "$out"))"
		fi
	done
}

seen ntmem "$libpmem" pmem ftruncate posix_fallocate
seen ntmem "$libpmemblk" blk posix_fallocate

pmdk_pmem=${PMDK_LIBPMEM:-$pmdk_dir/libpmem.so.1}
pmdk_blk=${PMDK_LIBPMEMBLK:-$pmdk_dir/libpmemblk.so.1}
if [ -f "$pmdk_pmem" ]; then
	seen PMDK "$pmdk_pmem" pmem ftruncate posix_fallocate
else
	echo "skip - PMDK: $pmdk_pmem is not installed"
fi
if [ -f "$pmdk_blk" ]; then
	seen PMDK "$pmdk_blk" blk posix_fallocate
else
	echo "skip - PMDK: $pmdk_blk is not installed"
fi
exit $fail
