#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_report_def.sh NTMEM CHECK_REPORT_DEF MANPAGE - the report contract
# (<ntmem/check_report.def>) against its two other statements: the reader
# of `ntmem check` and ntmem-check(1). CHECK_REPORT_DEF (check_report_def.c,
# the .def expanded as a parser of one's own would) prints every record
# the contract allows, and each record type without each key it requires;
# a stand-in program (no checking library: a fake library directory of
# empty files, which glibc declines to preload) writes them to the report.
# Checked: `ntmem check` takes every allowed record as one (no malformed
# note; errors and perf_notes count each bug and perf record) and none of
# the others; every name of the contract (record types, keys, kinds,
# whens, hows) is in the man page's REPORT RECORDS. Exit 0 pass, 1 fail.
set -u
ntmem=$1 def=$2 man=$3
# ok, bad, expect; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ntmem-report-def-XXXXXX") || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT
mkdir "$tmp/lib"
: >"$tmp/lib/libntmem-watch.so.0"
: >"$tmp/lib/libntmem-watch-preload.so"
NTMEM_CHECK_LIBDIR=$tmp/lib
export NTMEM_CHECK_LIBDIR

# run_lines FILE OPTIONS...: ntmem check of a program that writes FILE's
# lines as its records; the report in $tmp/report.
run_lines() {
	f=$1
	shift
	"$ntmem" check --report "$tmp/report" "$@" -- \
		sh -c 'cat "$1" >>"$NTMEM_CHECK_REPORT"' sh "$f" >"$out" 2>"$err"
}

# --- every record the contract allows is read as one ----------------------

if "$def" records >"$tmp/records"; then ok "the contract's records"; else
	bad "the contract's records: $def records failed"; fi
bugs=$(grep -c '^{"type":"bug"' "$tmp/records")
perfs=$(grep -c '^{"type":"perf"' "$tmp/records")
run_lines "$tmp/records" --json
if grep -q "malformed" "$tmp/report"; then
	bad "a record of the contract is read as one"
	grep -o '"report line [^"]*' "$tmp/report" | sed 's/^/# /'
else
	ok "every record of the contract ($(wc -l <"$tmp/records") lines) is read as one"
fi
if grep -q "^{\"errors\": $bugs, \"perf_notes\": $perfs," "$tmp/report"; then
	ok "$bugs bug and $perfs perf records counted"; else
	bad "$bugs bug and $perfs perf records counted"; sed -n 1p "$tmp/report" | cut -c1-200 | sed "s/^/# /"; fi

# --- none without a key its type requires ---------------------------------

if "$def" missing >"$tmp/missing"; then ok "records without a key"; else
	bad "records without a key: $def missing failed"; fi
lines=$(wc -l <"$tmp/missing")
run_lines "$tmp/missing"
got=$(grep -c "^ntmem check: note: report line [0-9]* malformed at byte [0-9]* (expected an* [a-z]* record's \"" "$tmp/report")
if [ "$got" -eq "$lines" ]; then
	ok "each of $lines records without a required key is malformed"; else
	bad "$got of $lines records without a required key are malformed"
	sed 's/^/# /' "$tmp/report"; fi

# --- the man page names every name ----------------------------------------

sed -n '/^\.SH REPORT RECORDS/,/^\.SH [^R]/p' "$man" | sed 's/\\-/-/g' >"$tmp/section"
if [ -s "$tmp/section" ]; then ok "$man has REPORT RECORDS"; else
	bad "$man has REPORT RECORDS"; fi
"$def" names >"$tmp/names" || bad "$def names failed"
missing_names=
while read -r list name; do
	grep -qwF -- "$name" "$tmp/section" || missing_names="$missing_names $list:$name"
done <"$tmp/names"
if [ -z "$missing_names" ]; then
	ok "REPORT RECORDS names all $(wc -l <"$tmp/names") names of the contract"; else
	bad "REPORT RECORDS lacks$missing_names"; fi
exit "$fail"
