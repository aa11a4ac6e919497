#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_order.sh NTMEM BINDIR - the checker watches a program wherever
# libpmem.so.1 comes in its search order: the program's dependency
# (missing_flush), a dependency's dependency, after libc
# (missing_flush_dep), dlopen()ed from main() (missing_flush_dlopen); each
# with the preload shim first (as `ntmem check` runs it: check_corpus.sh),
# without the shim, and with the shim after another preloaded library
# whose dependency libpmem then is. Each run: the checker started (a start
# record, no "nothing is watched") and missing_flush's one bug is
# reported. Then a libpmemobj program (BINDIR/pmemobj_root_store, when
# built) under `ntmem check`: watched, and the store it left unpersisted
# in its root object reported (libpmemobj's own stores may bring other
# reports: not counted here); its twin's store not reported.
#
# The checking library comes from NTMEM_CHECK_LIBDIR (set by meson).
# Exit 0 pass, 1 fail, 77 skip (no python3 to read the JSON).
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 NTMEM BINDIR" >&2
	exit 1
fi
ntmem=$1 bindir=$2 wdir=${NTMEM_CHECK_LIBDIR:?}
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
here=$(dirname "$0")
# ok, bad, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$here/../lib/cli_lib.sh"
scratch_dir ntmem-check-order
rep=$tmp/report
shim=$wdir/libntmem-watch-preload.so

# watched PRELOAD PROGRAM: PROGRAM on a fresh directory with the checker
# started through its environment (what `ntmem check` sets; LD_PRELOAD as
# given), the records in $rep.
watched() {
	rm -rf "$tmp/d" && mkdir "$tmp/d"
	: >"$rep"
	env PMEM_IS_PMEM_FORCE=1 NTMEM_CHECK_WATCH=1 NTMEM_CHECK_REPORT="$rep" \
		LD_PRELOAD="$1" LD_LIBRARY_PATH="$wdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		GLIBC_TUNABLES=glibc.rtld.optional_static_tls=4096 \
		"$bindir/$2" "$tmp/d" >"$out" 2>"$err"
}

# missing_flush_reported WHAT: the last run exited 0, the checker started
# and watched, and the one record is missing_flush's bug.
missing_flush_reported() {
	if [ "$rc" -ne 0 ]; then
		bad "$1: exit $rc"; sed 's/^/# /' "$err" "$rep"; return
	fi
	if ! grep -q '"type":"start"' "$rep" || grep -q '"kind":"unchecked"' "$rep"
	then
		bad "$1: not watched"; sed 's/^/# /' "$rep"; return
	fi
	n=$(grep -c '"type":"bug"' "$rep")
	if [ "$n" -eq 1 ] && grep '"type":"bug"' "$rep" |
		grep '"kind":"not-written-back"' | grep '"offset":4120,' |
		grep '"length":8,' | grep -q '"point":"pmem_drain"'; then
		ok "$1: watched, the missing flush reported"
	else
		bad "$1: $n bug records, expected missing_flush's"; sed 's/^/# /' "$rep"
	fi
}

for prog in missing_flush missing_flush_dep missing_flush_dlopen; do
	watched "" "$prog"
	rc=$?
	missing_flush_reported "$prog, no preload shim"
	# libpmem a dependency of the first preloaded library, the shim second
	watched "$bindir/libcorpus_dep.so:$shim" "$prog"
	rc=$?
	missing_flush_reported "$prog, libcorpus_dep.so preloaded before the shim"
done

# --- a libpmemobj program -------------------------------------------------

if [ ! -x "$bindir/pmemobj_root_store" ]; then
	echo "# skip - no libpmemobj program (libpmemobj-dev not installed)"
	exit $fail
fi

# covers REPORT OFFSET: a bug record of REPORT's pool covers the 8 bytes at
# OFFSET.
covers() {
	python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
off = int(sys.argv[2])
sys.exit(0 if any(r["type"] == "bug" and r["file"].endswith(".pmem") and
                  r["offset"] <= off and off + 8 <= r["offset"] + r["length"]
                  for r in doc["reports"]) else 1)
PY
}

for twin in "" _fixed; do
	name=pmemobj_root_store$twin
	rm -rf "$tmp/d" && mkdir "$tmp/d"
	PMEM_IS_PMEM_FORCE=1 "$ntmem" check --json --report "$tmp/$name.json" \
		-- "$bindir/$name" "$tmp/d" >"$out" 2>"$err"
	rc=$?
	off=$(sed -n 's/^expect \([0-9]*\) .*/\1/p' "$out")
	if [ "$rc" -ne 0 ] || [ -z "$off" ]; then
		bad "$name: exit $rc, no offset printed"
		sed 's/^/# /' "$out" "$err" "$tmp/$name.json"
		continue
	fi
	if grep -q '"checked": "all"' "$tmp/$name.json" &&
		grep -q '"type":"start"' "$tmp/$name.json" &&
		! grep -q 'nothing is watched' "$tmp/$name.json"; then
		ok "$name: watched, checked"
	else
		bad "$name: not watched"; sed 's/^/# /' "$tmp/$name.json"
	fi
	if [ -z "$twin" ]; then
		if covers "$tmp/$name.json" "$off"; then
			ok "$name: the root object's unpersisted store (offset $off) reported"
		else
			bad "$name: no report at offset $off"
			sed 's/^/# /' "$tmp/$name.json"
		fi
	elif covers "$tmp/$name.json" "$off"; then
		bad "$name: the persisted store (offset $off) reported"
		sed 's/^/# /' "$tmp/$name.json"
	else
		ok "$name: the persisted store (offset $off) not reported"
	fi
done

exit $fail
