#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_cli_blk.sh NTMEM - `ntmem blk` and `ntmem bench blk` as a user meets
# them: help, an emulated namespace created as a sparse file, bad sectors
# injected, listed (text and JSON) and cleared, errors that name the bad
# option (exit 2) or the failing path (exit 1), a BTT created and checked
# (clean, corrupted, not a BTT), and tiny benchmarks whose JSON holds every
# pattern x implementation row, with --btt its BTT and libpmemblk rows. Everything lives in a
# fresh directory under /tmp, but the benchmark's namespace in one under
# /dev/shm when there is one (see below); every bench run that should be
# rejected also carries a tiny --size, so a check that regressed runs a
# small benchmark and fails, instead of an 8 GiB one.
set -u
ntmem=$1
# ok, bad, expect, err_names, json_ok; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
tmp=$(mktemp -d /tmp/ntmem-cli-blk-XXXXXX) || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT
ns=$tmp/ns

# The namespace of most checks below is emulated: its kind, its
# PATH.badblocks list. On a DAX file system a file is the real thing,
# fsdax (ntm_ns_open(3)), whose bad sectors are its device's: when /tmp
# is DAX (make check-kernel-full's guest), that namespace goes in a
# directory of its own under /dev/shm, and the rest stays in /tmp.
nsdir=$tmp
"$ntmem" blk create "$tmp/kind" --size 4m >"$out" 2>"$err"
if grep -q "fsdax" "$out" &&
	nsdir=$(mktemp -d /dev/shm/ntmem-cli-blk-ns-XXXXXX 2>/dev/null); then
	ok "/tmp is DAX: create there prints fsdax; the emulated namespace is in $nsdir"
	ns=$nsdir/ns
	trap 'rm -f "$out" "$err"; rm -rf "$tmp" "$nsdir"' EXIT
fi
rm -f "$tmp/kind"

# out_is TEXT DESCRIPTION: stdout of the last command is exactly TEXT.
out_is() {
	if [ "$(cat "$out")" = "$1" ]; then ok "$2"; else
		bad "$2: stdout is '$(cat "$out")', expected '$1'"; fi
}

# --- help ----------------------------------------------------------------

expect 0 "blk --help" "$ntmem" blk --help
if grep -q "usage: ntmem blk create" "$out" && grep -q "inject-error" "$out"
then ok "blk --help prints the usage"; else bad "blk --help prints the usage"; fi
if [ -s "$err" ]; then bad "blk --help writes to stderr"; else
	ok "blk --help writes nothing to stderr"; fi
expect 0 "ntmem --help" "$ntmem" --help
if grep -q "blk" "$out"; then ok "--help lists blk"; else bad "--help lists blk"; fi

# --- create --------------------------------------------------------------

expect 0 "blk create --size 16m" "$ntmem" blk create "$ns" --size 16m
if grep -q "emulated" "$out"; then ok "create prints the kind"; else
	bad "create prints the kind: '$(cat "$out")'"; fi
if [ "$(stat -c %s "$ns" 2>/dev/null)" = 16777216 ]; then
	ok "the file is 16 MiB long"; else bad "the file is not 16 MiB long"; fi
# Sparse: (almost) nothing allocated. stat's %b counts %B-byte blocks.
used=$(( $(stat -c '%b * %B' "$ns") ))
if [ "$used" -lt 1048576 ]; then ok "the file is sparse ($used bytes used)"
else bad "the file is not sparse: $used bytes used"; fi
if [ -e "$ns.badblocks" ]; then bad "create wrote a bad-sector list"; else
	ok "no bad-sector list yet"; fi

expect 1 "create on an existing path" "$ntmem" blk create "$ns" --size 16m
err_names "$ns" "create error names the path"
out_is "" "create on an existing path prints no result"
if [ "$(stat -c %s "$ns")" = 16777216 ]; then ok "the existing file is kept"
else bad "the existing file changed"; fi

# An existing device is what create lays out on (a devdax device exists by
# nature): it is opened, not created, so a character device that is not
# dax is refused as such (not "File exists"), --size may be left out, and
# the device node stays whatever fails.
if [ -c /dev/null ]; then
	expect 1 "create --btt on a character device that is not dax" \
		"$ntmem" blk create /dev/null --size 16m --btt
	err_names "not a dax device" "create on a device opens it, not creates it"
	out_is "" "create on a non-dax device prints no result"
	expect 1 "create on a device without --size" "$ntmem" blk create /dev/null
	err_names "not a dax device" "create on a device needs no --size"
	if [ -c /dev/null ]; then ok "a failed create keeps the device node"
	else bad "a failed create removed the device node"; fi
fi

# --- BTT: create --btt, check --------------------------------------------

bt=$tmp/btt
expect 0 "create --btt" "$ntmem" blk create "$bt" --size 16m --btt
if grep -q "BTT of [0-9]* 512-byte sectors" "$out"; then
	ok "create --btt prints the BTT's sectors"; else
	bad "create --btt output: '$(cat "$out")'"; fi
expect 0 "check a fresh BTT" "$ntmem" blk check "$bt"
if grep -q "consistent" "$out"; then ok "check says consistent"; else
	bad "check output: '$(cat "$out")'"; fi
# The version: 1.1 unless asked (PMDK's, and the kernel's at namespace
# offset 4096), 2.0 with --btt-version 2.0 (the kernel's on v1.2 labels).
if grep -q "sectors, version 1.1$" "$out"; then
	ok "check says version 1.1 for a default BTT"; else
	bad "check output lacks version 1.1: '$(cat "$out")'"; fi
expect 0 "check --json" "$ntmem" blk check "$bt" --json
json_ok "check --json parses"
if python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["consistent"] is True and doc["version"] == "1.1", doc
assert doc["sector_size"] == 512 and doc["sectors"] > 0, doc
PY
then ok "check --json: consistent, version 1.1, sectors"; else
	bad "check --json: '$(cat "$out")'"; fi
expect 0 "create --btt --btt-version 2.0" "$ntmem" blk create "$tmp/btt2" \
	--size 16m --btt --btt-version 2.0
if grep -q "(version 2.0)" "$out"; then ok "create says version 2.0"; else
	bad "create --btt-version 2.0 output: '$(cat "$out")'"; fi
# Offset 52 of the info block: major 2, minor 0, little-endian.
if [ "$(od -An -tx1 -j52 -N4 "$tmp/btt2" | tr -d ' ')" = 02000000 ]; then
	ok "a 2.0 info block on media"; else
	bad "version bytes: $(od -An -tx1 -j52 -N4 "$tmp/btt2")"; fi
expect 0 "check a 2.0 BTT --json" "$ntmem" blk check "$tmp/btt2" --json
if python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["consistent"] is True and doc["version"] == "2.0", doc
PY
then ok "check --json says version 2.0"; else
	bad "check --json of 2.0: '$(cat "$out")'"; fi
expect 0 "check a 2.0 BTT" "$ntmem" blk check "$tmp/btt2"
if grep -q "sectors, version 2.0$" "$out"; then ok "check says version 2.0"; else
	bad "check output of 2.0: '$(cat "$out")'"; fi
expect 0 "create --btt --btt-version 1.1" "$ntmem" blk create "$tmp/btt11" \
	--size 16m --btt --btt-version 1.1
if [ "$(od -An -tx1 -j52 -N4 "$tmp/btt11" | tr -d ' ')" = 01000100 ]; then
	ok "a 1.1 info block on media"; else
	bad "version bytes: $(od -An -tx1 -j52 -N4 "$tmp/btt11")"; fi
expect 2 "create --btt-version 3.0" "$ntmem" blk create "$tmp/bad3" \
	--size 16m --btt --btt-version 3.0
err_names "invalid --btt-version '3.0'" "--btt-version 3.0 is named"
expect 2 "create --btt-version without --btt" "$ntmem" blk create "$tmp/bad4" \
	--size 16m --btt-version 2.0
err_names "--btt-version" "--btt-version without --btt is named"
if [ -e "$tmp/bad3" ] || [ -e "$tmp/bad4" ]; then
	bad "a rejected --btt-version made a file"; else
	ok "rejected --btt-version makes nothing"; fi
rm -f "$tmp/btt2" "$tmp/btt11"
expect 0 "create --btt --sector-size 4096" "$ntmem" blk create "$tmp/btt4k" \
	--size 16m --btt --sector-size 4096
if grep -q "4096-byte sectors" "$out"; then ok "4096-byte BTT sectors"; else
	bad "create --sector-size 4096 output: '$(cat "$out")'"; fi
expect 0 "check a 4096-byte BTT" "$ntmem" blk check "$tmp/btt4k"
# A BTT that does not fit: only the failure is printed (no line saying
# what was created), and the file is gone.
expect 1 "create --btt too small for a BTT" "$ntmem" blk create "$tmp/small" \
	--size 4k --btt
err_names "blk create: btt: 4096 bytes hold no arena" "too small: the BTT's failure is named"
out_is "" "too small: nothing on stdout"
if [ -e "$tmp/small" ]; then bad "too small: the file was left"; else
	ok "too small: no file left"; fi
# A line that cannot be written fails the create, and what it made goes
# with it: a retry must not find "File exists" (it found the whole device).
if [ -w /dev/full ]; then
	for btt in --btt ""; do
		# shellcheck disable=SC2086 # an empty $btt is no argument
		"$ntmem" blk create "$tmp/full" --size 16m $btt >/dev/full 2>"$err"
		st=$?
		[ "$st" -eq 1 ] && grep -q "cannot write standard output" "$err" &&
			ok "create $btt to a full device fails, naming standard output" ||
			bad "create $btt to a full device: exit $st, $(head -n 1 "$err")"
		if [ -e "$tmp/full" ]; then bad "create $btt to a full device left the file"
		else ok "create $btt to a full device leaves no file"; fi
		rm -f "$tmp/full"
	done
fi
expect 2 "create --sector-size 1024" "$ntmem" blk create "$tmp/bad1" \
	--size 16m --btt --sector-size 1024
err_names "invalid --sector-size '1024'" "--sector-size 1024 is named"
expect 2 "create --sector-size without --btt" "$ntmem" blk create "$tmp/bad2" \
	--size 16m --sector-size 4096
err_names "--sector-size" "--sector-size without --btt is named"
expect 2 "check with an option of create" "$ntmem" blk check "$bt" --btt
expect 2 "check without PATH" "$ntmem" blk check
expect 1 "check of a namespace without a BTT" "$ntmem" blk check "$ns"
err_names "inconsistent" "no BTT: inconsistent"
expect 1 "check of a missing path" "$ntmem" blk check "$tmp/missing"
err_names "$tmp/missing" "check: the missing path is named"
out_is "" "check of a missing path prints no result"
if [ -e "$tmp/bad1" ] || [ -e "$tmp/bad2" ] || [ -e "$tmp/missing" ]; then
	bad "a rejected create or check made a file"; else
	ok "rejected creates and checks make nothing"; fi
# Junk over the primary info block (the first 4 KiB of the only arena):
# the backup still opens the BTT, the check names the damage, and the
# file is left exactly as it was.
cp "$bt" "$tmp/btt-bad"
printf 'not a btt info block, junk junk junk junk junk junk junk junk' |
	dd of="$tmp/btt-bad" bs=1 seek=16 conv=notrunc 2>/dev/null
cp "$tmp/btt-bad" "$tmp/btt-bad.orig"
expect 1 "check a corrupted BTT" "$ntmem" blk check "$tmp/btt-bad"
err_names "inconsistent: ." "the corruption is named"
out_is "" "check of a corrupted BTT prints no 'consistent' line"
if cmp -s "$tmp/btt-bad" "$tmp/btt-bad.orig"; then
	ok "check changed nothing"; else bad "check wrote to the file"; fi
rm -f "$bt" "$tmp/btt4k" "$tmp/btt-bad" "$tmp/btt-bad.orig"

# --- bad sectors ---------------------------------------------------------

expect 0 "inject-error --sector 8 --count 2" "$ntmem" blk inject-error "$ns" \
	--sector 8 --count 2
if [ -f "$ns.badblocks" ]; then ok "PATH.badblocks exists"; else
	bad "PATH.badblocks missing"; fi
expect 0 "badblocks" "$ntmem" blk badblocks "$ns"
out_is "8 2" "badblocks prints '8 2'"
expect 0 "badblocks --json" "$ntmem" blk badblocks "$ns" --json
json_ok "badblocks --json parses"
if python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["badblocks"] == [{"sector": 8, "count": 2}], doc
assert doc.get("sector_size", 512) == 512, doc
PY
then ok "badblocks --json has the 8+2 entry"; else bad "badblocks --json entry"; fi

expect 0 "clear-error --sector 8" "$ntmem" blk clear-error "$ns" --sector 8
expect 0 "badblocks after clear-error" "$ntmem" blk badblocks "$ns"
out_is "9 1" "clearing sector 8 leaves '9 1'"

# A second range merges with its neighbour and lists in order.
expect 0 "inject-error --sector 100 --count 4" "$ntmem" blk inject-error \
	"$ns" --sector 100 --count 4
expect 0 "inject-error --sector 10" "$ntmem" blk inject-error "$ns" --sector 10
expect 0 "badblocks, two ranges" "$ntmem" blk badblocks "$ns"
out_is "9 2
100 4" "adjacent sectors merge, ranges sorted"

# The last sector is in range, the one after it is not.
last=$((16 * 1048576 / 512 - 1))
expect 0 "inject-error at the last sector" "$ntmem" blk inject-error "$ns" \
	--sector "$last"
expect 1 "inject-error past the end" "$ntmem" blk inject-error "$ns" \
	--sector $((last + 1))
if [ -s "$err" ]; then ok "past the end: a message"; else
	bad "past the end: no message"; fi
err_names "$((last + 1))" "past the end: names the sector"
out_is "" "inject-error past the end prints nothing"
expect 1 "inject-error running past the end" "$ntmem" blk inject-error "$ns" \
	--sector "$last" --count 2
expect 0 "clear-error of everything" "$ntmem" blk clear-error "$ns" \
	--sector 0 --count $((last + 1))
expect 0 "badblocks, empty" "$ntmem" blk badblocks "$ns"
out_is "" "nothing listed after clearing everything"
expect 0 "badblocks --json, empty" "$ntmem" blk badblocks "$ns" --json
if python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["badblocks"] == []' \
	"$out" 2>/dev/null; then ok "--json, empty: []"; else bad "--json, empty"; fi

# Twenty processes inject at once, each its own (non-touching) sector:
# every update of the list is atomic against the others, so all twenty
# are listed (12-18 were, when each read, changed and renamed the list
# with no lock). Then ten clear theirs while ten more inject.
# bg SUB SECTOR: `ntmem blk SUB` of one sector, in the background.
bg() {
	"$ntmem" blk "$1" "$ns" --sector "$2" >/dev/null 2>>"$tmp/inject.err" &
	pids="$pids $!"
}
# all_exit_0 DESC: every bg command since the last call exited 0.
all_exit_0() {
	rc=0
	for p in $pids; do wait "$p" || rc=1; done
	pids=""
	if [ "$rc" -eq 0 ]; then ok "$1: all exit 0"; else
		bad "$1: one failed"; sed 's/^/# /' "$tmp/inject.err"; fi
}
pids=""
for i in $(seq 0 19); do bg inject-error $((1000 + 4 * i)); done
all_exit_0 "20 concurrent inject-error"
expect 0 "badblocks after 20 concurrent injects" "$ntmem" blk badblocks "$ns"
if [ "$(wc -l <"$out")" -eq 20 ]; then ok "20 concurrent injects: 20 listed"
else bad "20 concurrent injects: $(wc -l <"$out") listed"; sed 's/^/# /' "$out"; fi
for i in $(seq 0 9); do
	bg clear-error $((1000 + 4 * i))
	bg inject-error $((2000 + 4 * i))
done
all_exit_0 "10 clears racing 10 injects"
expect 0 "badblocks after the race" "$ntmem" blk badblocks "$ns"
want=$(for i in $(seq 10 19); do echo "$((1000 + 4 * i)) 1"; done
	for i in $(seq 0 9); do echo "$((2000 + 4 * i)) 1"; done)
out_is "$want" "10 clears racing 10 injects: exactly the other 20 listed"
expect 0 "clear-error of everything again" "$ntmem" blk clear-error "$ns" \
	--sector 0 --count $((last + 1))
rm -f "$tmp/inject.err"

# --- usage errors: exit 2, the option named ------------------------------

expect 2 "inject-error without --sector" "$ntmem" blk inject-error "$ns"
err_names "--sector" "missing --sector is named"
expect 2 "clear-error without --sector" "$ntmem" blk clear-error "$ns"
err_names "--sector" "clear-error: missing --sector is named"
expect 2 "--sector junk" "$ntmem" blk inject-error "$ns" --sector junk
err_names "invalid --sector 'junk'" "--sector junk is named"
expect 2 "--sector 8x" "$ntmem" blk inject-error "$ns" --sector 8x
err_names "--sector" "--sector 8x is named"
expect 2 "--count 0" "$ntmem" blk inject-error "$ns" --sector 8 --count 0
err_names "invalid --count '0'" "--count 0 is named"
expect 2 "missing PATH" "$ntmem" blk inject-error --sector 8
err_names "PATH" "missing PATH is named"
expect 2 "badblocks without PATH" "$ntmem" blk badblocks
err_names "PATH" "badblocks: missing PATH is named"
expect 2 "an extra argument" "$ntmem" blk inject-error "$ns" extra --sector 8
err_names "'extra'" "the extra argument is named"
expect 2 "create without --size" "$ntmem" blk create "$tmp/nosize"
err_names "--size" "create: missing --size is named"
expect 2 "create --size junk" "$ntmem" blk create "$tmp/junk" --size junk
err_names "--size" "create: --size junk is named"
expect 2 "unknown subcommand" "$ntmem" blk frobnicate "$ns"
err_names "frobnicate" "the unknown subcommand is named"
expect 2 "no subcommand" "$ntmem" blk
expect 2 "unknown option" "$ntmem" blk badblocks "$ns" --bogus
expect 0 "badblocks, still empty" "$ntmem" blk badblocks "$ns"
out_is "" "usage errors changed no list"

expect 1 "badblocks of a missing path" "$ntmem" blk badblocks "$tmp/missing"
err_names "$tmp/missing" "the missing path is named"
out_is "" "badblocks of a missing path prints no list"
expect 1 "badblocks --json of a missing path" "$ntmem" blk badblocks \
	"$tmp/missing" --json
out_is "" "badblocks --json of a missing path prints no (partial) JSON"
if [ -e "$tmp/missing" ] || [ -e "$tmp/missing.badblocks" ]; then
	bad "a missing path was created"; else ok "a missing path stays missing"; fi
if [ -e "$tmp/nosize" ] || [ -e "$tmp/junk" ]; then
	bad "a rejected create made a file"; else ok "rejected creates make nothing"; fi

# --- bench blk -----------------------------------------------------------

# A corrupt bad-sector list: the library's message (file and line) reaches
# the user, and nothing is changed.
printf '8 2\nnot a range\n' >"$ns.badblocks"
expect 1 "badblocks with a corrupt list" "$ntmem" blk badblocks "$ns"
err_names "$ns.badblocks.*line 2" "the corrupt list is named with its line"
out_is "" "a corrupt list prints no entries"
expect 1 "badblocks --json with a corrupt list" "$ntmem" blk badblocks "$ns" --json
out_is "" "a corrupt list prints no (partial) JSON"
expect 1 "inject-error with a corrupt list" "$ntmem" blk inject-error "$ns" \
	--sector 1
err_names "line 2" "inject-error: the corrupt line is named"
if [ "$(cat "$ns.badblocks")" = "8 2
not a range" ]; then ok "the corrupt list is left as it was"; else
	bad "the corrupt list was changed"; fi

# All 4 patterns x the 3 ntm implementations, kiops > 0, no pmdk rows.
# FUA writes to a file on a disk file system are made durable there (one
# msync each, milliseconds): the run uses a tmpfs, as by default, when
# there is one.
rm -f "$ns" "$ns.badblocks"
shm=$(mktemp -d /dev/shm/ntmem-cli-blk-XXXXXX 2>/dev/null) || shm=$tmp
trap 'rm -f "$out" "$err"; rm -rf "$tmp" "$nsdir"; [ "$shm" = "$tmp" ] || rm -rf "$shm"' EXIT
expect 0 "bench blk --json (64m, 2000 ops)" "$ntmem" bench blk --size 64m \
	--ops 2000 --runs 1 --no-pmdk --dir "$shm" --json
json_ok "bench blk --json parses"
if python3 - "$out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
patterns = {"seq-read", "rand-read", "seq-write-fua", "rand-write-fua"}
impls = {"direct", "hardened-mem", "hardened-dev"}
got = sorted((r["pattern"], r["impl"]) for r in rows)
want = sorted((p, i) for p in patterns for i in impls)
assert got == want, got
for r in rows:
    assert r["kiops"] > 0, r
    assert r["bs"] == 4096, r
PY
then ok "bench blk rows: 4 patterns x direct, hardened-mem, hardened-dev"
else bad "bench blk rows"; fi
if [ -z "$(find "$tmp" "$shm" -mindepth 1)" ]; then
	ok "bench blk removes its namespace"; else
	bad "bench blk left files"; find "$tmp" "$shm" -mindepth 1 | sed 's/^/# /'; fi

# --btt: the BTT and libpmemblk rows, the ratio lines, nothing left behind.
expect 0 "bench blk --btt --json (64m, 2000 ops)" "$ntmem" bench blk --btt \
	--size 64m --ops 2000 --runs 1 --dir "$shm" --json
json_ok "bench blk --btt --json parses"
if python3 - "$out" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
rows, meta = doc["rows"], doc["meta"]
got = {(r["pattern"], r["impl"]) for r in rows}
patterns = {"seq-read", "rand-read", "seq-write-fua", "rand-write-fua"}
for p in patterns:
    assert (p, "btt") in got and (p, "direct") in got, (p, got)
for two in ("btt-2t", "direct-2t"):
    assert ("rand-write-fua", two) in got, got
    assert [r for r in rows if r["impl"] == two][0]["threads"] == 2
    assert sum(r["impl"] == two for r in rows) == 1, got
pmemblk = not meta["pmemblk"].startswith("libpmemblk.so.1 not found")
assert pmemblk == all((p, "pmemblk") in got for p in patterns), meta
for r in rows:
    assert r["kiops"] > 0, r
for k in ("btt_p50_write_x_direct", "btt_2t_write_x_1t",
          "direct_2t_write_x_1t", "btt_floor_map_locked_ns",
          "btt_floor_map_load_ns", "btt_floor_read_x_direct") + (
        ("btt_rand_write_x_pmemblk", "btt_rand_read_x_pmemblk") if pmemblk else ()):
    assert float(meta[k]) > 0 and math.isfinite(float(meta[k])), (k, meta)
PY
then ok "bench blk --btt: btt, btt-2t, direct-2t, pmemblk rows and the ratios"
else bad "bench blk --btt rows"; fi
if [ -z "$(find "$tmp" "$shm" -mindepth 1)" ]; then
	ok "bench blk --btt removes its namespaces and pool"; else
	bad "bench blk --btt left files"; find "$tmp" "$shm" -mindepth 1 | sed 's/^/# /'; fi

# bench_bad TEXT DESCRIPTION ARG...: exit 2, stderr contains TEXT.
bench_bad() {
	text=$1 what=$2
	shift 2
	expect 2 "bench blk $what" "$ntmem" bench blk --size 64m --ops 10 \
		--runs 1 --no-pmdk --dir "$tmp" "$@"
	err_names "$text" "bench blk $what: names the option"
}
bench_bad "invalid --bs '100'" "--bs 100" --bs 100
bench_bad "invalid --ops '0'" "--ops 0" --ops 0
bench_bad "invalid --runs '0'" "--runs 0" --runs 0
bench_bad "invalid --size '5000'" "--size 5000" --size 5000
bench_bad "invalid --bs '1024'" "--btt --bs 1k" --btt --bs 1k
bench_bad "invalid --device" "--btt --device" --btt --device /dev/null
if [ -z "$(find "$tmp" -mindepth 1)" ]; then
	ok "bad bench options create no namespace"; else
	bad "bad bench options left files in $tmp"; fi

exit "$fail"
