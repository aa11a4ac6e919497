#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_cli.sh NTMEM [LIBPMEM_DROPIN] - the ntmem command as a user meets it: help, errors
# that name the bad argument, and output that parses (JSON, CSV, table).
# The benchmark runs are tiny: this checks the command, not the speed.
set -u
ntmem=$1
# ok, bad, expect, err_names, json_ok; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"

expect 0 "--help" "$ntmem" --help
grep -q "bench copy" "$out" && ok "--help lists bench copy" || bad "--help lists bench copy"
expect 0 "--version" "$ntmem" --version
expect 2 "no command is a usage error" "$ntmem"
expect 2 "unknown command" "$ntmem" frobnicate
err_names "unknown command 'frobnicate'" "unknown command is named"

# With ntmem's libpmem drop-in first on the library path (as the
# ntmem-pmem-system package puts it), the PMDK peer is refused, not
# measured: ntmem against itself is no comparison.
if [ -n "${2:-}" ]; then
	expect 0 "bench copy, the drop-in as libpmem.so.1" \
		env LD_LIBRARY_PATH="$(dirname "$2")" "$ntmem" bench copy \
		--sizes 64 --total 64k --runs 1 --no-huge
	grep -q "pmdk: .*libpmem.so.1 is ntmem's drop-in, not PMDK's" "$out" &&
		ok "the drop-in is not taken for PMDK" ||
		bad "the drop-in is not taken for PMDK"
fi

# Output that cannot be written is a failure naming standard output,
# never a report the user did not get with status 0 (/dev/full: ENOSPC).
if [ -w /dev/full ]; then
	for args in "info" "info --json" "--version" "blk --help" "bench copy --help"; do
		# shellcheck disable=SC2086 # the words are the arguments
		"$ntmem" $args >/dev/full 2>"$err"
		st=$?
		[ "$st" -eq 1 ] && grep -q "cannot write standard output" "$err" &&
			ok "$args to a full device fails, naming standard output" ||
			bad "$args to a full device: exit $st, $(head -n 1 "$err")"
	done
fi

expect 0 "info" "$ntmem" info
grep -q "ntm_memcpy_nt:" "$out" && ok "info names the variant per primitive" || bad "info variant line"
expect 0 "info --json" "$ntmem" info --json
json_ok "info --json parses"
expect 2 "info rejects a stray argument" "$ntmem" info extra
err_names "invalid argument 'extra'" "info names the stray argument"

# info --sysfs DIR: a DIR that is missing, not a directory or unreadable
# is a usage error naming it, not a machine without nd regions; nothing is
# printed on stdout (no half a report, no JSON). An empty directory is a
# tree without an nd bus (check_cli_domain.sh).
scratch_dir ntmem-cli-info "${TMPDIR:-/tmp}"
chmod 755 "$tmp"
: >"$tmp/file"
mkdir "$tmp/unreadable" && chmod 000 "$tmp/unreadable"
# Root reads any directory: the unreadable case runs as nobody then.
as_reader=""
if [ "$(id -u)" = 0 ]; then
	as_reader="setpriv --reuid=nobody --regid=$(id -g nobody 2>/dev/null) --clear-groups"
	$as_reader true 2>/dev/null || as_reader=none
	# nobody must reach the tool and its libraries (a build tree in a
	# directory only root may enter, such as one mktemp -d made, is not)
	if [ "$as_reader" != none ] &&
		! $as_reader "$ntmem" --version >/dev/null 2>&1; then
		echo "# skip info --sysfs, unreadable: nobody cannot run $ntmem from here"
		as_reader=none
	fi
fi
for c in "missing:$tmp/missing:No such file or directory" \
	"a plain file:$tmp/file:Not a directory" \
	"unreadable:$tmp/unreadable:Permission denied"; do
	case_name=${c%%:*} rest=${c#*:}
	dir=${rest%%:*} why=${rest#*:}
	runner=""
	if [ "$case_name" = unreadable ]; then
		if [ "$as_reader" = none ]; then
			echo "# skip info --sysfs, unreadable: root, and no unprivileged user to run it"
			continue
		fi
		runner=$as_reader
	fi
	for json in "" --json; do
		label="info${json:+ $json} --sysfs, $case_name"
		# shellcheck disable=SC2086 # runner and json are words or nothing
		expect 2 "$label" $runner "$ntmem" info $json --sysfs "$dir"
		err_names "ntmem info: invalid --sysfs '$dir': expected a readable directory ($why)" \
			"$label: the path and why are named"
		if [ -s "$out" ]; then bad "$label: stdout not empty"
		else ok "$label: nothing on stdout"; fi
	done
done
chmod 700 "$tmp/unreadable"

# An unknown NTMEM_ISA / NTMEM_FLUSH: one warning from the library even
# without NTMEM_VERBOSE, and info shows what was ignored.
# count_in FILE TEXT: lines of FILE that contain TEXT.
count_in() { grep -c -- "$2" "$1"; }
expect 0 "info, NTMEM_ISA=bogus" env NTMEM_ISA=bogus NTMEM_VERBOSE= "$ntmem" info
n=$(count_in "$err" "NTMEM_ISA=bogus ignored (unknown value; one of generic|sse2|avx2|avx512)")
if [ "$n" = 1 ]; then ok "NTMEM_ISA=bogus: one warning"; else
	bad "NTMEM_ISA=bogus: $n warnings"; sed 's/^/# /' "$err"; fi
if grep -q "^environment: *NTMEM_ISA=bogus ignored" "$out"; then
	ok "info shows the ignored NTMEM_ISA"; else bad "info shows the ignored NTMEM_ISA"; fi
expect 0 "info --json, NTMEM_FLUSH=clwb2" env NTMEM_FLUSH=clwb2 "$ntmem" info --json
n=$(count_in "$err" "NTMEM_FLUSH=clwb2 ignored")
if [ "$n" = 1 ]; then ok "NTMEM_FLUSH=clwb2: one warning"; else
	bad "NTMEM_FLUSH=clwb2: $n warnings"; fi
json_ok "info --json with an ignored value parses"
if python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert len(doc["env_ignored"]) == 1, doc["env_ignored"]
assert doc["env_ignored"][0].startswith("NTMEM_FLUSH=clwb2 ignored"), doc
PY
then ok "info --json lists the ignored NTMEM_FLUSH"; else bad "info --json env_ignored"; fi
# Many calls into the library, two ignored values: each warned about once.
expect 0 "bench copy, both ignored" env NTMEM_ISA='a"b' NTMEM_FLUSH=x "$ntmem" \
	bench copy --sizes 64,4k --align 0,1 --total 64k --runs 2 --no-huge --no-pmdk --json
if [ "$(count_in "$err" "ignored")" = 2 ] &&
	[ "$(count_in "$err" "NTMEM_ISA=a\"b ignored")" = 1 ]; then
	ok "two ignored values: one warning each"; else
	bad "two ignored values: not one warning each"; sed 's/^/# /' "$err"; fi
expect 0 "info --json, a quote in the value" env NTMEM_ISA='a"b\' "$ntmem" info --json
json_ok "info --json escapes the ignored value"
expect 0 "info, known values" env NTMEM_ISA=sse2 NTMEM_FLUSH=clflush "$ntmem" info
if [ -s "$err" ] || grep -q "^environment:" "$out"; then
	bad "known values: a warning"; else ok "known values: no warning"; fi

expect 0 "bench copy --help" "$ntmem" bench copy --help
expect 2 "bench copy --sizes junk" "$ntmem" bench copy --sizes 64,junk
err_names "invalid --sizes '64,junk'" "--sizes error names the option and value"
err_names "Invalid argument" "--sizes error carries EINVAL's message"
expect 2 "bench copy --sizes 0" "$ntmem" bench copy --sizes 0
expect 2 "bench copy --total 0" "$ntmem" bench copy --total 0
err_names "invalid --total" "--total error names the option"
expect 2 "bench copy --runs 0" "$ntmem" bench copy --runs 0
expect 2 "bench copy --runs 5x" "$ntmem" bench copy --runs 5x
err_names "invalid --runs '5x'" "--runs error names trailing junk"
expect 2 "bench copy --cpu -1" "$ntmem" bench copy --cpu -1
expect 2 "bench copy --align 5000" "$ntmem" bench copy --align 5000
expect 2 "bench copy --variant nope" "$ntmem" bench copy --variant nope
err_names "invalid --variant 'nope'" "--variant error names the value"
expect 2 "bench copy --json --csv" "$ntmem" bench copy --json --csv

tiny="--sizes 64,100 --align 0,3 --total 1m --runs 1 --no-huge"
# shellcheck disable=SC2086 # $tiny is a list of options
expect 0 "bench copy --json (tiny)" "$ntmem" bench copy $tiny --json
json_ok "bench copy --json parses"
if python3 - "$out" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
impls = {(r["bytes"], r["dst_off"], r["impl"]) for r in rows}
need = [(64, 0, "nt-fill"), (64, 0, "inline"), (64, 3, "glibc"),
        (100, 0, "glibc+flush"), (100, 3, "generic"), (64, 0, "variable"),
        (100, 3, "variable"), (100, 3, "dispatched")]
missing = [n for n in need if n not in impls]
assert not missing, missing
assert not any(r["impl"] == "inline" and r["bytes"] == 100 for r in rows)
# a run-time size has a row of each semantics
assert {r["sem"] for r in rows if r["impl"] == "variable"} == {"nt", "flush"}
assert all(r["median_ms"] > 0 and r["x_limit"] > 0 for r in rows)
PY
then ok "bench copy rows: limit, inline only for fixed sizes, peers"; else
	bad "bench copy rows"; fi

# The table ends with both verdicts, the limit's spread and the cost of a
# run-time size.
# shellcheck disable=SC2086
expect 0 "bench copy (tiny table)" "$ntmem" bench copy $tiny --no-pmdk
if grep -q '^worst default path against the best peer: [0-9.]*x (size .*)$' "$out" &&
	grep -q '^worst out-of-line call (FFI, dlsym, function pointer) against the best peer: [0-9.]*x (size .* dispatched)$' "$out" &&
	grep -q '^  size 64 dst+0: variable [0-9.]*x inline.*; out of line [0-9.]*x inline$' "$out" &&
	grep -Eq '^streaming limit over the sizes and offsets: [0-9.]+-[0-9.]+ GB/s( \(steady\)|; the machine.s write speed moved during the run: rerun before trusting the verdicts)$' "$out"; then
	ok "bench copy verdict lines"; else bad "bench copy verdict lines"; fi

# shellcheck disable=SC2086
expect 0 "bench copy --csv (tiny)" "$ntmem" bench copy $tiny --csv --const-only
if grep -q '^size,bytes,dst_off,sem,impl,median_ms' "$out" &&
	grep -q '^64,64,0,nt,inline,' "$out"; then
	ok "bench copy --csv header and inline row"; else bad "bench copy --csv"; fi

# --calibrate: a tiny run (six sizes, offsets 0 and 1) prints its table,
# a crossover per offset and the two lines to set; --json carries the same
# figures. Tiny runs measure nothing: only the form is checked.
cal="--calibrate --quick --total 256k --runs 1 --no-huge"
# shellcheck disable=SC2086 # $cal is a list of options
expect 0 "bench copy --calibrate (tiny)" "$ntmem" bench copy $cal
if grep -qx 'NTMEM_NT_THRESHOLD=[0-9][0-9]*' "$out" &&
	grep -qx 'PMEM_MOVNT_THRESHOLD=[0-9][0-9]*' "$out" &&
	grep -q '^dst+1 (not 8-byte aligned): ' "$out"; then
	ok "bench copy --calibrate prints the lines to set"; else
	bad "bench copy --calibrate lines"; sed 's/^/# /' "$out"; fi
# shellcheck disable=SC2086
expect 0 "bench copy --calibrate --json (tiny)" "$ntmem" bench copy $cal --json
json_ok "bench copy --calibrate --json parses"
if python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows, meta = doc["rows"], doc["meta"]
sizes = [64, 256, 1024, 4096, 65536, 1 << 20]
assert [(r["bytes"], r["dst_off"]) for r in rows] == \
    [(s, a) for s in sizes for a in (0, 1)], rows
for r in rows:
    assert r["cached_ms"] > 0 and r["nt_ms"] > 0 and r["default_ms"] > 0, r
    # the ratio is printed rounded: a near tie can read 1.0 either way
    if r["faster"] == "nt":
        assert r["nt_x_cached"] <= 1, r
    else:
        assert r["nt_x_cached"] >= 1, r
# the thresholds: where nt won from at the unaligned and the aligned offset
for key, off in (("NTMEM_NT_THRESHOLD", 1), ("PMEM_MOVNT_THRESHOLD", 0)):
    t = int(meta[key])
    won = [r["bytes"] for r in rows if r["dst_off"] == off]
    after = [r for r in rows if r["dst_off"] == off and r["bytes"] >= t]
    assert t in won or t == won[-1] + 1, (key, t)
    assert all(r["faster"] == "nt" for r in after), (key, t, after)
    assert meta["crossover_dst_%d" % off], meta
PY
then ok "bench copy --calibrate --json: rows and thresholds agree"; else
	bad "bench copy --calibrate --json rows"; fi
expect 2 "bench copy --calibrate --variant" "$ntmem" bench copy --calibrate --variant avx2
err_names "invalid --variant 'with --calibrate'" "--calibrate names the option it does not take"
# shellcheck disable=SC2086
expect 1 "bench copy --calibrate, generic variant" env NTMEM_ISA=generic \
	"$ntmem" bench copy $cal
err_names "no non-temporal" "--calibrate says why it cannot compare"

# NTMEM_NT_THRESHOLD that is not a size: one warning, and info shows it.
expect 0 "info, NTMEM_NT_THRESHOLD=12q" env NTMEM_NT_THRESHOLD=12q "$ntmem" info
n=$(count_in "$err" "NTMEM_NT_THRESHOLD=12q ignored")
if [ "$n" = 1 ]; then ok "NTMEM_NT_THRESHOLD=12q: one warning"; else
	bad "NTMEM_NT_THRESHOLD=12q: $n warnings"; sed 's/^/# /' "$err"; fi
if grep -q "^environment: *NTMEM_NT_THRESHOLD=12q ignored" "$out"; then
	ok "info shows the ignored NTMEM_NT_THRESHOLD"; else
	bad "info shows the ignored NTMEM_NT_THRESHOLD"; fi
expect 0 "info, NTMEM_NT_THRESHOLD=4k" env NTMEM_NT_THRESHOLD=4k "$ntmem" info
if [ -s "$err" ]; then bad "NTMEM_NT_THRESHOLD=4k: a warning"; else
	ok "NTMEM_NT_THRESHOLD=4k: no warning"; fi

# The copy policy line: the values in force and the facts the default
# keys on. NTMEM_ISA=sse2 is on every x86-64 CPU (1024 there; the generic
# variant elsewhere, 256); NTMEM_NT_THRESHOLD=4k shows as set, with the
# default beside it.
if grep -q "below 4096 bytes" "$out" &&
   grep -q "(NTMEM_NT_THRESHOLD; the default is [0-9]*: cpu vendor" "$out"
then ok "info shows NTMEM_NT_THRESHOLD=4k in the copy policy"; else
	bad "info copy policy with NTMEM_NT_THRESHOLD=4k"; sed 's/^/# /' "$out"; fi
case $(uname -m) in x86_64) short=1024 ;; *) short=256 ;; esac
expect 0 "info --json, NTMEM_ISA=sse2" env NTMEM_ISA=sse2 NTMEM_NT_THRESHOLD= \
	"$ntmem" info --json
json_ok "info --json with the copy policy parses"
if grep -q "\"copy_policy\": {\"nt_short_unaligned\": $short, \"nt_threshold\": \([0-9]*\), \"nt_threshold_default\": \\1, \"cpu_vendor\": \"[a-z]*\", \"cpu_family\": [0-9]*, \"glibc_rep_movsb_threshold\": [0-9]*}" "$out"
then ok "info --json copy_policy: the variant's short size, the default"; else
	bad "info --json copy_policy"; grep copy_policy "$out" | sed 's/^/# /'; fi

exit $fail
