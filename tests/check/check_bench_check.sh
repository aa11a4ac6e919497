#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_bench_check.sh NTMEM - tiny runs of `ntmem bench check`'s
# libpmemobj workloads (ntmem-bench-pmemobj beside NTMEM), plain and under
# the checking library of NTMEM_CHECK_LIBDIR (set by meson): the form of
# the report only, never a timing. --json and --csv have a plain and a
# checked row for pmemobj-tx and pmemobj-alloc, operations per second
# above 0, a slowdown, the checked rows' bug count, and the CPU; the text
# table the same rows. A correct program gets no bug report; one that
# gets one fails the run (exit 1) with the records on stderr. Then what
# the bench says when a program is missing: fio out of PATH under
# --workload fio (exit 1, named) and under the default (a note, its rows
# left out). The pools (16 MiB) go in a fresh directory in /tmp.
# Exit 0 pass, 1 fail, 77 skip (no ntmem-bench-pmemobj, no python3).
set -u
if [ $# -ne 1 ]; then
	echo "usage: $0 NTMEM" >&2
	exit 1
fi
ntmem=$1
here=$(dirname "$0")
if [ ! -x "$(dirname "$ntmem")/ntmem-bench-pmemobj" ]; then
	echo "SKIP: no ntmem-bench-pmemobj (libpmemobj-dev not installed)"
	exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
# ok, bad, expect, err_names, scratch_dir; $out, $err, $tmp; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$here/../lib/cli_lib.sh"
scratch_dir ntmem-check-bench /tmp

# A sanitized build (checking_asan, cli_lib.sh).
checking_asan

tiny="--workload pmemobj --runs 1 --ops 200 --dir $tmp"

# bugs_or_pass WHAT: the last run exited 0, or 1 with its bug records
# shown (the checker reported a bug in a correct program: a failure).
bugs_or_pass() {
	if [ "$got" -eq 0 ]; then
		ok "$1: exit 0, no bug reported"
	elif [ "$got" -eq 1 ] && grep -q "reported bugs in a correct program" "$err"; then
		bad "$1: the checker reported bugs in a correct libpmemobj program"
		grep -F '"type":"bug"' "$err" | head -3 | cut -c1-300 | sed 's/^/# /'
	else
		bad "$1: exit $got"
		sed 's/^/# /' "$err" | tail -20
	fi
}

"$ntmem" bench check $tiny --json >"$out" 2>"$err"
got=$?
bugs_or_pass "bench check --workload pmemobj --json"
if python3 - "$out" "$got" <<'EOF'; then ok "--json: the rows and meta lines of both workloads"; else bad "--json: malformed"; sed 's/^/# /' "$out"; fi
import json, math, sys
d = json.load(open(sys.argv[1]))
failed = sys.argv[2] != "0"
m, rows = d["meta"], d["rows"]
assert m["cpu"], m
assert "ntmem-bench-pmemobj" in m["pmemobj"], m
assert "fio" not in m, m
assert "PMEM_IS_PMEM_FORCE" in m["dir"], m
names = [(r["workload"], r["config"]) for r in rows]
assert names == [("pmemobj-tx", "plain"), ("pmemobj-tx", "checked"),
                 ("pmemobj-alloc", "plain"), ("pmemobj-alloc", "checked")], names
for r in rows:
    assert r["kops"] > 0 and r["min_kops"] <= r["kops"] <= r["max_kops"], r
    assert r["bs"] is None and r["mb_s"] is None, r
    assert r["slowdown"] > 0, r
    if r["config"] == "plain":
        assert r["slowdown"] == 1 and r["bugs"] is None, r
    else:
        assert r["bugs"] == 0 or failed, r
for w in ("tx", "alloc"):
    assert float(m["pmemobj_%s_slowdown" % w]) > 0, m
EOF

"$ntmem" bench check $tiny --workload pmemobj-tx --csv >"$out" 2>"$err"
got=$?
bugs_or_pass "bench check --workload pmemobj-tx --csv"
if grep -q "^workload,config,bs,kops," "$out" &&
	[ "$(grep -c '^pmemobj-tx,' "$out")" -eq 2 ] && ! grep -q '^pmemobj-alloc,' "$out"
then ok "--csv --workload pmemobj-tx: its two rows only"
else bad "--csv --workload pmemobj-tx: not its two rows"; sed 's/^/# /' "$out"; fi

"$ntmem" bench check $tiny --workload pmemobj-alloc >"$out" 2>"$err"
got=$?
bugs_or_pass "bench check --workload pmemobj-alloc (text)"
if grep -q "^  cpu: " "$out" && grep -q "^pmemobj-alloc  *plain " "$out" &&
	grep -q "^pmemobj-alloc  *checked " "$out"; then
	ok "text: the CPU and pmemobj-alloc's two rows"
else bad "text: no CPU line or rows"; sed 's/^/# /' "$out"; fi
if [ -z "$(ls -A "$tmp" | grep ntmem-bench-check)" ]; then
	ok "the runs' directories are removed"
else bad "left in $tmp: $(ls "$tmp")"; fi

# fio out of reach: named when asked for, a note under the default.
expect 1 "bench check --workload fio without fio in PATH" \
	env PATH=/nonexistent "$ntmem" bench check --workload fio --dir "$tmp"
err_names "fio not found in PATH" "a missing fio is named"
env PATH=/nonexistent "$ntmem" bench check --runs 1 --ops 100 --dir "$tmp" \
	--csv >"$out" 2>"$err"
got=$?
bugs_or_pass "bench check (default) without fio in PATH"
if grep -q "note: fio not found in PATH.*its rows are left out" "$err" &&
	! grep -q '^fio-' "$out" && grep -q '^pmemobj-tx,checked,' "$out"; then
	ok "default without fio: a note, the pmemobj rows only"
else
	bad "default without fio: expected a note and the pmemobj rows"
	sed 's/^/# /' "$err" "$out" | head -20
fi
expect 2 "--workload bogus" "$ntmem" bench check --workload bogus
err_names "invalid --workload 'bogus'" "a bad --workload is named"
expect 2 "--ops 0" "$ntmem" bench check --ops 0
err_names "invalid --ops '0'" "--ops 0 is named"

exit $fail
