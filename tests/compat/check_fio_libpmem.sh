#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_fio_libpmem.sh LIBPMEM_SO - Debian's unmodified fio runs its
# libpmem engine on ntmem's libpmem.so.1 (found through LD_LIBRARY_PATH),
# and every block it wrote reads back with the right checksum.
#
# Proof that ntmem's library, not PMDK's, is the one loaded: ldd of fio
# with the same LD_LIBRARY_PATH resolves libpmem.so.1 to LIBPMEM_SO, and
# every run prints the library's own NTMEM_VERBOSE=1 line ("ntmem libpmem")
# on stderr. The jobs: 4 KiB sequential and random writes of a 64 MiB file
# with --direct=1 --sync=1 (non-temporal copies, drained) and with fio's
# defaults (temporal, not drained), each followed by fio's crc32c
# verification of every block (randwrite keeps its random map, so each block
# is written once and verifiable). Without PMEM_IS_PMEM_FORCE (or with 0)
# the file, on a file system without DAX, is not pmem, and fio's engine
# refuses it, as with PMDK. Files live in a fresh directory under /tmp (not
# /dev/shm).
#
# A library built with -fsanitize=address cannot be loaded into fio
# (which is not) unless the ASan runtime comes first: then it is preloaded
# and leak detection is off (fio's own exit-time allocations).
# Exit 0 pass, 1 fail, 77 skip (no fio, or a fio without the libpmem engine).
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 LIBPMEM_SO" >&2
	exit 1
fi
lib=$1
# ok, bad, expect, err_names, require_fio, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
require_fio libpmem
scratch_dir ntmem-fio /tmp

libdir=$(cd "$(dirname "$lib")" && pwd)
if ! [ -f "$libdir/libpmem.so.1" ]; then
	echo "not ok - $libdir/libpmem.so.1 does not exist"
	exit 1
fi

# --- the library fio loads -----------------------------------------------

LD_LIBRARY_PATH=$libdir ldd "$fio" >"$out" 2>"$err"
if grep -q "libpmem\.so\.1 => $libdir/libpmem\.so\.1 " "$out"; then
	ok "ldd fio: libpmem.so.1 => $libdir/libpmem.so.1"
else
	bad "ldd fio does not resolve libpmem.so.1 to $libdir"
	grep pmem "$out" | sed 's/^/# /'
fi

preload=
asan_opts=${ASAN_OPTIONS:-}
if ldd "$libdir/libpmem.so.1" 2>/dev/null | grep -q 'libasan\.so'; then
	preload=$(ldd "$libdir/libpmem.so.1" | awk '/libasan\.so/ { print $3 }')
	asan_opts="detect_leaks=0${asan_opts:+:$asan_opts}"
	echo "# the library is built with ASan: LD_PRELOAD=$preload"
fi

# run_fio NAME FORCE OPTIONS...: fio on $tmp/NAME with ntmem's library;
# FORCE is PMEM_IS_PMEM_FORCE=VALUE, or "-" to leave the variable unset.
run_fio() {
	name=$1 force=$2
	shift 2
	rm -f "$tmp/$name"
	# shellcheck disable=SC2086 # FORCE "-" must vanish, not be ""
	env -u PMEM_IS_PMEM_FORCE \
		${force#-} LD_LIBRARY_PATH="$libdir" LD_PRELOAD="$preload" \
		ASAN_OPTIONS="$asan_opts" NTMEM_VERBOSE=1 \
		"$fio" --name="$name" --filename="$tmp/$name" \
		--ioengine=libpmem --thread --numjobs=1 --size=64m --bs=4k \
		"$@"
}

# refused WHAT: the last run_fio (exit status $got) failed, and fio says
# why: the file is not persistent memory (pmem_map_file's is_pmem was 0).
refused() {
	cat "$out" >>"$err"
	if [ "$got" -ne 0 ] &&
		grep -q "does not point to persistent memory" "$err"; then
		ok "$1: fio refuses the file (not pmem)"
	else
		bad "$1: exit $got, expected fio to refuse the file"
		sed 's/^/# /' "$err"
	fi
}

# --- writes, verified ----------------------------------------------------

# No verify state file: a failed run would leave it in the working directory.
verify="--verify=crc32c --do_verify=1 --verify_state_save=0"
for job in "write direct=1 sync=1" "randwrite direct=1 sync=1" \
	"write defaults" "randwrite defaults"; do
	# shellcheck disable=SC2086 # split the job into its words
	set -- $job
	rw=$1
	if [ "$2" = defaults ]; then opts=""; else opts="--$2 --$3"; fi
	what="fio --rw=$rw ${opts:-(direct=0 sync=0)}"
	# shellcheck disable=SC2086 # opts and verify are lists of options
	expect 0 "$what" run_fio "$rw-$2" PMEM_IS_PMEM_FORCE=1 --rw="$rw" \
		$opts $verify
	err_names "ntmem libpmem " "$what: ntmem's library announced itself"
	cat "$out" >>"$err"
	if grep -qiE 'verify.*(fail|mismatch)|bad (magic|header)|err= *[1-9]' "$err"
	then
		bad "$what: fio reports an error"
		grep -iE 'verify|bad |err=' "$err" | head -5 | sed 's/^/# /'
	else
		ok "$what: no verify error"
	fi
	# 64 MiB in 4 KiB blocks: 16384 writes, 16384 verifying reads.
	if grep -q 'issued rwts: total=16384,16384,' "$out"; then
		ok "$what: all 16384 blocks written and verified"
	else
		bad "$what: not every block was written and read back"
		grep 'issued rwts' "$out" | sed 's/^/# /'
	fi
	rm -f "$tmp/$rw-$2"
done

# --- not pmem unless forced ----------------------------------------------

if grep -qs "[[:space:]]$(df -P "$tmp" | awk 'NR == 2 { print $6 }')[[:space:]].*dax" \
	/proc/self/mounts; then
	echo "skip - $tmp is on a DAX mount: is_pmem may be 1 there"
else
	run_fio unforced - --rw=write --size=4m >"$out" 2>"$err"
	got=$?
	refused "without PMEM_IS_PMEM_FORCE"
	run_fio forced0 PMEM_IS_PMEM_FORCE=0 --rw=write --size=4m >"$out" 2>"$err"
	got=$?
	refused "with PMEM_IS_PMEM_FORCE=0"
fi

exit $fail
