#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_fio_pmemblk.sh LIBPMEMBLK_SO - Debian's unmodified fio 3.33 runs
# its pmemblk engine on ntmem's libpmemblk.so.1 (found through
# LD_LIBRARY_PATH), and every block it wrote reads back with the right
# checksum.
#
# Proof that ntmem's library, not PMDK's, is the one loaded: ldd of fio
# with the same LD_LIBRARY_PATH resolves libpmemblk.so.1 to LIBPMEMBLK_SO,
# and every run prints the library's own NTMEM_VERBOSE=1 lines ("ntmem
# libpmemblk", and the pool's persist path) on stderr. The jobs:
# sequential and random writes at block sizes 512 and 4096 into a 32 MiB
# pool that fio's engine creates (the "path,bsize,MiB" file name), each
# followed by fio's crc32c verification of every block (randwrite keeps
# its random map: each block is written once), on the msync path a file
# that is not pmem takes; then random writes at 512 on the flush + drain
# path (PMEM_IS_PMEM_FORCE=1). The engine sizes the job as bsize * nblock
# itself: 64700 blocks at 512, 7919 at 4096.
#
# The pools are on tmpfs (/dev/shm; $TMPDIR where that is not writable):
# the library takes the same path there as on a disk file system (the
# file is not pmem: an msync per persist, four per block), but an msync
# costs microseconds instead of a journal commit. On an ext4 disk the same
# jobs took 2 minutes idle and over 12 under load (4 ms a block); on tmpfs
# they are CPU work, under a second a job, and the run takes a few seconds.
#
# A library built with -fsanitize=address cannot be loaded into fio
# (which is not) unless the ASan runtime comes first: then it is preloaded
# and leak detection is off (fio's own exit-time allocations).
# Exit 0 pass, 1 fail, 77 skip (no fio, or a fio without the pmemblk
# engine: it left fio in 3.34).
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 LIBPMEMBLK_SO" >&2
	exit 1
fi
lib=$1
# ok, bad, expect, err_names, require_fio, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
require_fio pmemblk
scratch_dir ntmem-fio-blk

libdir=$(cd "$(dirname "$lib")" && pwd)
if ! [ -f "$libdir/libpmemblk.so.1" ]; then
	echo "not ok - $libdir/libpmemblk.so.1 does not exist"
	exit 1
fi

LD_LIBRARY_PATH=$libdir ldd "$fio" >"$out" 2>"$err"
if grep -q "libpmemblk\.so\.1 => $libdir/libpmemblk\.so\.1 " "$out"; then
	ok "ldd fio: libpmemblk.so.1 => $libdir/libpmemblk.so.1"
else
	bad "ldd fio does not resolve libpmemblk.so.1 to $libdir"
	grep pmem "$out" | sed 's/^/# /'
fi

preload=
asan_opts=${ASAN_OPTIONS:-}
if ldd "$libdir/libpmemblk.so.1" 2>/dev/null | grep -q 'libasan\.so'; then
	preload=$(ldd "$libdir/libpmemblk.so.1" | awk '/libasan\.so/ { print $3 }')
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
	echo "# the library is built with ASan: LD_PRELOAD=$preload"
fi

verify="--verify=crc32c --do_verify=1 --verify_state_save=0"
# [block size, rw, PMEM_IS_PMEM_FORCE (- for unset), the persist path the
# pool's NTMEM_VERBOSE line names]
for job in "512 write - msync" "512 randwrite - msync" \
	"4096 write - msync" "4096 randwrite - msync" \
	"512 randwrite 1 flush + drain"; do
	# shellcheck disable=SC2086 # split the job into its words
	set -- $job
	bs=$1 rw=$2 force=$3
	shift 3
	path=$*
	pool=$tmp/pool-$bs-$rw
	what="fio pmemblk --rw=$rw --bs=$bs ($path)"
	set -- env -u PMEM_IS_PMEM_FORCE
	[ "$force" = - ] || set -- "$@" PMEM_IS_PMEM_FORCE="$force"
	# shellcheck disable=SC2086 # verify is a list of options
	expect 0 "$what" "$@" LD_LIBRARY_PATH="$libdir" \
		LD_PRELOAD="$preload" ASAN_OPTIONS="$asan_opts" \
		NTMEM_VERBOSE=1 "$fio" --name="$rw-$bs" \
		--filename="$pool,$bs,32" --ioengine=pmemblk --thread \
		--numjobs=1 --rw="$rw" --bs="$bs" $verify
	err_names "ntmem libpmemblk" "$what: ntmem's library announced itself"
	err_names "bsize $bs, [0-9]* blocks, $path\$" \
		"$what: the pool persists by $path"
	cat "$out" >>"$err"
	if grep -qiE 'verify.*(fail|mismatch)|bad (magic|header)|err= *[1-9]' "$err"
	then
		bad "$what: fio reports an error"
		grep -iE 'verify|bad |err=' "$err" | head -5 | sed 's/^/# /'
	fi
	# Every block of the pool written once and read back once.
	n=$(sed -n 's/.*issued rwts: total=\([0-9]*\),\([0-9]*\),.*/\1 \2/p' "$out")
	blocks=$(sed -n "s/.*bsize $bs, \([0-9]*\) blocks,.*/\1/p" "$err" | head -1)
	if [ -n "$n" ] && [ "${n% *}" = "${n#* }" ] &&
		[ "${n% *}" = "${blocks:-none}" ]; then
		ok "$what: all ${n% *} blocks written and verified"
	else
		bad "$what: not every block of ${blocks:-?} was written and read back ($n)"
	fi
	rm -f "$pool"
done

exit $fail
