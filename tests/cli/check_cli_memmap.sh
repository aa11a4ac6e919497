#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_cli_memmap.sh NTMEM - `ntmem bench memmap` as a user meets it: help,
# errors that name the bad option, and runs whose output parses and holds
# the rows the options asked for. The namespaces are small sparse files in
# a fresh directory under /tmp (not /dev/shm): this checks the command, not
# the speed. Every invalid-input run also carries a tiny --size, so a check
# that regressed runs a small benchmark and fails, instead of a 100 GiB one.
set -u
ntmem=$1
# ok, bad, expect, err_names, json_ok; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
tmp=$(mktemp -d /tmp/ntmem-cli-memmap-XXXXXX) || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT
small="--size 64m --runs 1 --no-pmdk --dir $tmp"

expect 0 "bench memmap --help" "$ntmem" bench memmap --help
if grep -q "usage: ntmem bench memmap" "$out" && grep -q -- "--strategy" "$out"
then ok "--help prints the usage"; else bad "--help prints the usage"; fi
if [ -s "$err" ]; then bad "--help writes to stderr"; else
	ok "--help writes nothing to stderr"; fi
expect 0 "ntmem --help" "$ntmem" --help
if grep -q "bench memmap" "$out"; then ok "--help lists bench memmap"; else
	bad "--help lists bench memmap"; fi

# bad_input TEXT DESCRIPTION ARG...: exit 2, stderr contains TEXT.
bad_input() {
	text=$1 what=$2
	shift 2
	# shellcheck disable=SC2086 # $small is a list of options
	expect 2 "$what" "$ntmem" bench memmap $small "$@"
	err_names "$text" "$what: names the option"
}
bad_input "invalid --layout '72'" "--layout 72" --layout 72
bad_input "invalid --layout '64,72'" "--layout 64,72" --layout 64,72
bad_input "invalid --strategy 'bogus'" "--strategy bogus" --strategy bogus
bad_input "invalid --strategy 'call'" "--strategy call (no copy to call)" \
	--strategy call
bad_input "invalid --align '8k'" "--align 8k" --align 8k
bad_input "invalid --map 'xyz'" "--map xyz" --map xyz
bad_input "invalid --threads '0'" "--threads 0" --threads 0
bad_input "invalid --threads '65'" "--threads 65" --threads 65
bad_input "invalid --runs '0'" "--runs 0" --runs 0
bad_input "invalid --size '0'" "--size 0" --size 0
bad_input "invalid --size" "--size 3m with --align 2m" --size 3m --align 2m
bad_input "invalid --csv" "--json --csv" --json --csv
bad_input "invalid argument 'extra'" "a stray argument" extra
err_names "Invalid argument" "errors carry EINVAL's message"
# left_in_tmp: what a run left in $tmp, one "# path" line each.
left_in_tmp() { find "$tmp" -mindepth 1 | sed 's/^/# /'; }
if [ -z "$(left_in_tmp)" ]; then ok "bad input creates no namespace"; else
	bad "bad input left files in $tmp"; left_in_tmp; fi

# The default setups, every layout, every strategy but pmdk.
expect 0 "bench memmap --json (256m)" "$ntmem" bench memmap --size 256m \
	--runs 1 --no-pmdk --dir "$tmp" --json
json_ok "bench memmap --json parses"
if python3 - "$out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
total = 256 << 20 >> 12
setups = {"fsdax map=dev align=4k": 4096, "devdax map=dev align=2m": 2 << 20}
strategies = {"nt-fill", "field", "memcpy", "nt", "fixed"}
groups = {}
for r in rows:
    groups.setdefault((r["setup"], r["layout"]), []).append(r)
want = {(s, l) for s in setups for l in (64, 80, 96)}
assert set(groups) == want, sorted(set(groups) ^ want)
for (setup, layout), rs in groups.items():
    got = [r["strategy"] for r in rs]
    assert sorted(got) == sorted(strategies), (setup, layout, got)
    # map=dev: every page's descriptor at the start, rounded to the align
    align = setups[setup]
    reserve = (total * layout + align - 1) // align * align
    pages = total - reserve // 4096
    for r in rs:
        assert r["pages"] == pages > 0, (setup, layout, r["strategy"],
                                         r["pages"], pages)
        assert r["threads"] == 1, r
PY
then ok "bench memmap rows: both setups, every layout and strategy, pages"
else bad "bench memmap rows"; fi
if [ -z "$(left_in_tmp)" ]; then ok "the emulated namespace is removed"; else
	bad "files left in $tmp"; left_in_tmp; fi

# One setup of the user's choosing, two threads.
expect 0 "--align 2m --map mem --layout 64 --strategy fixed --threads 2" \
	"$ntmem" bench memmap --size 64m --runs 1 --no-pmdk --dir "$tmp" \
	--align 2m --map mem --layout 64 --strategy fixed --threads 2 --json
json_ok "one setup --json parses"
if python3 - "$out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
got = sorted((r["setup"], r["layout"], r["strategy"], r["threads"], r["pages"])
             for r in rows)
want = sorted(("devdax map=mem align=2m", 64, s, 2, 16384)
              for s in ("nt-fill", "fixed"))
assert got == want, got
PY
then ok "one setup rows: map=mem describes every page, 2 threads"; else
	bad "one setup rows"; fi

# CSV and the table.
expect 0 "--csv (tiny)" "$ntmem" bench memmap --size 16m --runs 1 --no-pmdk \
	--dir "$tmp" --align 4k --map mem --layout 96 --strategy field --csv
if grep -q '^setup,layout,strategy,threads,pages,' "$out" &&
	grep -q '^fsdax map=mem align=4k,96,field,1,4096,' "$out"; then
	ok "--csv header and field row"; else bad "--csv"; fi
expect 0 "table (tiny)" "$ntmem" bench memmap --size 16m --runs 1 --no-pmdk \
	--dir "$tmp" --layout 80 --strategy nt
if grep -q "initialised 4016 pages .*fsdax map=dev align=4k, 80 B, nt" "$out" &&
	grep -q "initialised 3584 pages .*devdax map=dev align=2m, 80 B, nt" "$out"
then ok "table has the kernel-style lines"; else bad "table kernel lines"; fi
# The headline: the fixed strategy's worst row and whether the run was
# steady; only when the fixed strategy ran.
if grep -q "^fixed strategy, worst row" "$out"; then
	bad "no fixed-strategy verdict without the fixed strategy"; else
	ok "no fixed-strategy verdict without the fixed strategy"; fi
expect 0 "table with fixed (tiny)" "$ntmem" bench memmap --size 16m --runs 1 \
	--no-pmdk --dir "$tmp" --layout 64,80 --strategy fixed
if grep -Eq '^fixed strategy, worst row against the limit: [0-9.]+x \((fsdax map=dev align=4k|devdax map=dev align=2m), (64|80)-byte descriptors\); limit [0-9.]+-[0-9.]+ GB/s over the groups( \(steady\)|; the machine.s write speed moved during the run: rerun before trusting the verdicts)$' "$out"
then ok "the fixed strategy's verdict line"; else
	bad "the fixed strategy's verdict line"; sed 's/^/# /' "$out"; fi

# A real device or file instead of the emulated namespace.
# expect_fail DESCRIPTION CMD...: a plain failure (not 0, not a signal).
expect_fail() {
	what=$1
	shift
	"$@" >"$out" 2>"$err"
	got=$?
	if [ "$got" -ne 0 ] && [ "$got" -lt 126 ]; then ok "$what"; else
		bad "$what: exit $got, expected a failure"; sed 's/^/# /' "$err"; fi
}
missing=$tmp/no-such-device
# shellcheck disable=SC2086
expect_fail "--device at a missing path" "$ntmem" bench memmap $small \
	--device "$missing"
err_names "$missing" "--device error names the path"
# shellcheck disable=SC2086
expect_fail "--device at a directory" "$ntmem" bench memmap $small \
	--device "$tmp"
err_names "$tmp" "--device directory error names the path"
if truncate -s 64m "$tmp/ns"; then
	expect 0 "--device at a 64m file" "$ntmem" bench memmap --runs 1 \
		--no-pmdk --device "$tmp/ns" --layout 64 --strategy fixed --json
	if python3 - "$out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
got = sorted((r["setup"], r["strategy"], r["pages"]) for r in rows)
want = [("fsdax map=dev align=4k", s, 16384 - 256) for s in ("fixed", "nt-fill")]
assert got == want, got
PY
	then ok "--device rows: the file's own geometry"; else
		bad "--device rows"; fi
	# The device, not --align, says what the run is: a file stands for
	# fsdax (4 KiB struct pages), never devdax.
	expect 0 "--device at a file with --align 2m" "$ntmem" bench memmap \
		--runs 1 --no-pmdk --device "$tmp/ns" --align 2m --layout 64 \
		--strategy fixed
	if grep -q "fsdax map=dev align=4k, 64 B, fixed" "$out" &&
		! grep -q "devdax" "$out"
	then ok "--device at a file is labelled fsdax whatever --align says"
	else bad "--device at a file labelled: $(grep -o '[a-z]*dax map=[a-z]* align=[0-9a-z]*' "$out" | head -1)"; fi
	if [ -f "$tmp/ns" ]; then ok "--device leaves the file"; else
		bad "--device removed the file"; fi
fi

exit "$fail"
