#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_cli_bench_pmem2.sh NTMEM LIBPMEM2_DROPIN - `ntmem bench copy`'s
# libpmem2 rows: "pmem2" (ntmem's drop-in, found in the build tree) and
# "pmem2-pmdk" (Debian's libpmem2.so.1, when installed) in the table, JSON
# and CSV of a tiny run, with the verdict line; PMDK's row skipped with
# its reason under --no-pmdk and when the drop-in is first on the library
# path; ntmem's skipped with its reason when the drop-in is not found.
# The runs are tiny: this checks the rows are there, never their speed.
set -u
ntmem=$1 dropin=$2
# ok, bad, expect, json_ok, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"

tiny="--sizes 64 --align 0,1 --total 1m --runs 1 --no-huge"
# The tool as a user runs it: meson's LD_LIBRARY_PATH holds this build's
# libraries, the drop-in among them, which would stand in for PMDK's.
ntm() { env -u LD_LIBRARY_PATH "$ntmem" "$@"; }

# Is PMDK's libpmem2 installed (not ntmem's under its name)? The system's
# loader answers, as it does for the tool.
pmdk=$(env -u LD_LIBRARY_PATH ldconfig -p 2>/dev/null |
	awk '$1 == "libpmem2.so.1" { print $NF; exit }')

# rows FILE: the impl of every JSON row, "impl@dst_off" one a line.
rows() {
	python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    print("%s@%d" % (r["impl"], r["dst_off"]))' "$1"
}
# has_row IMPL: the last JSON run has a row of IMPL at both offsets.
has_row() {
	rows "$out" >"$out.rows"
	grep -qx "$1@0" "$out.rows" && grep -qx "$1@1" "$out.rows"
	r=$?
	rm -f "$out.rows"
	return $r
}
meta() {
	python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["meta"][sys.argv[2]])' "$out" "$1"
}

# shellcheck disable=SC2086 # $tiny is a list of options
expect 0 "bench copy --json (tiny)" ntm bench copy $tiny --json
json_ok "bench copy --json parses"
has_row pmem2 && ok "pmem2 rows at every offset" || bad "pmem2 rows at every offset"
case $(meta pmem2) in
*/compat/libpmem2/libpmem2.so.1*) ok "pmem2 is the build tree's drop-in" ;;
*) bad "pmem2 is the build tree's drop-in: $(meta pmem2)" ;;
esac
if [ -n "$pmdk" ]; then
	has_row pmem2-pmdk && ok "pmem2-pmdk rows at every offset" ||
		bad "pmem2-pmdk rows at every offset"
	if python3 - "$out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
p2 = [r for r in rows if r["impl"] == "pmem2"]
pm = [r for r in rows if r["impl"] == "pmem2-pmdk"]
assert p2 and pm
assert all(r["sem"] == "nt+flush" and r["median_ms"] > 0 for r in p2 + pm)
# pmem2's ratio is to pmem2-pmdk, which is the peer and has none
assert all(r["x_peer"] is not None and r["x_peer"] > 0 for r in p2), p2
assert all(r["x_peer"] is None for r in pm), pm
PY
	then ok "pmem2 rows: nt+flush, pmem2 against pmem2-pmdk"; else
		bad "pmem2 rows: nt+flush, pmem2 against pmem2-pmdk"; fi
else
	echo "# PMDK's libpmem2.so.1 not installed: its rows are not checked"
	has_row pmem2-pmdk && bad "no pmem2-pmdk rows without PMDK" ||
		ok "no pmem2-pmdk rows without PMDK"
	meta pmem2-pmdk | grep -q "libpmem2.so.1 not found (apt-get install libpmem2)" &&
		ok "PMDK's libpmem2 missing is said" || bad "PMDK's libpmem2 missing is said"
fi

# The table: the rows and the verdict line.
# shellcheck disable=SC2086
expect 0 "bench copy (tiny table)" ntm bench copy $tiny
grep -Eq '^64 +64 +1 +nt\+flush +pmem2 ' "$out" && ok "table has the pmem2 row" ||
	bad "table has the pmem2 row"
if [ -n "$pmdk" ]; then
	grep -Eq '^libpmem2 memcpy, ntmem over PMDK: worst [0-9.]+x \(size 64 dst\+[01]\), best [0-9.]+x \(size 64 dst\+[01]\)$' "$out" &&
		ok "table has the libpmem2 verdict line" ||
		{ bad "table has the libpmem2 verdict line"; sed 's/^/# /' "$out"; }
fi

# shellcheck disable=SC2086
expect 0 "bench copy --csv (tiny)" ntm bench copy $tiny --csv
grep -q '^64,64,0,nt+flush,pmem2,' "$out" && ok "csv has the pmem2 row" ||
	bad "csv has the pmem2 row"
if [ -n "$pmdk" ]; then
	grep -q '^64,64,1,nt+flush,pmem2-pmdk,' "$out" &&
		ok "csv has the pmem2-pmdk row" || bad "csv has the pmem2-pmdk row"
fi

# An ignored value is warned about once: ntmem's drop-in embeds its own
# ntmem, which is not shown it again.
# shellcheck disable=SC2086
expect 0 "bench copy, an ignored value" env NTMEM_ISA=nope "$ntmem" bench copy $tiny --csv
[ "$(grep -c "NTMEM_ISA=nope ignored" "$err")" = 1 ] && ok "one warning with the drop-in loaded" ||
	{ bad "one warning with the drop-in loaded"; sed 's/^/# /' "$err"; }

# --no-pmdk: no PMDK library at all, ntmem's drop-in still measured.
# shellcheck disable=SC2086
expect 0 "bench copy --no-pmdk" ntm bench copy $tiny --json --no-pmdk
has_row pmem2 && ok "--no-pmdk keeps pmem2" || bad "--no-pmdk keeps pmem2"
has_row pmem2-pmdk && bad "--no-pmdk drops pmem2-pmdk" || ok "--no-pmdk drops pmem2-pmdk"
[ "$(meta pmem2-pmdk)" = "disabled (--no-pmdk)" ] &&
	ok "--no-pmdk is said" || bad "--no-pmdk is said: $(meta pmem2-pmdk)"

# The drop-in first on the library path (ntmem-pmem-system does the same
# system-wide): libpmem2.so.1 is ntmem's, and is refused as PMDK's.
# shellcheck disable=SC2086
expect 0 "bench copy, the drop-in as libpmem2.so.1" \
	env LD_LIBRARY_PATH="$(dirname "$dropin")" "$ntmem" bench copy $tiny --json
has_row pmem2 && ok "pmem2 still measured" || bad "pmem2 still measured"
has_row pmem2-pmdk && bad "the drop-in is not measured as PMDK's" ||
	ok "the drop-in is not measured as PMDK's"
meta pmem2-pmdk | grep -q "libpmem2.so.1.* is ntmem's drop-in, not PMDK's libpmem2.so.1" &&
	ok "the refusal is said" || bad "the refusal is said: $(meta pmem2-pmdk)"

# A copy of the tool outside a build tree, with no drop-in installed: the
# pmem2 rows are skipped, and the places looked in are named.
scratch_dir bench-pmem2 "${TMPDIR:-/tmp}"
mkdir "$tmp/tools"
cp "$ntmem" "$tmp/tools/ntmem"
# Its libntmem.so.0 is where the loader finds the tool's (a build's run
# path is relative to the executable), not beside any drop-in.
libntmem=$(ldd "$ntmem" | awk '$1 == "libntmem.so.0" { print $3 }')
# shellcheck disable=SC2086
expect 0 "bench copy without the drop-in" \
	env LD_LIBRARY_PATH="$(dirname "$libntmem")" "$tmp/tools/ntmem" bench copy $tiny --json
case $(meta pmem2) in
"ntmem's libpmem2.so.1 is in neither $tmp/tools/../compat/libpmem2/libpmem2.so.1 nor "*)
	has_row pmem2 && bad "no pmem2 rows without the drop-in" ||
		ok "no pmem2 rows without the drop-in"
	ok "the missing drop-in is said" ;;
/*)	echo "# an installed drop-in was found ($(meta pmem2)): not checked" ;;
*)	bad "the missing drop-in is said: $(meta pmem2)" ;;
esac

exit $fail
