#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_test_summary.sh SUMMARY - scripts/test-summary.sh, the closing
# report of `make check`, on made-up meson test logs: it must print the
# counts of every build directory, the failed suites and tests, and the
# failed make targets, and exit non-zero on any of them; all passed is
# exit 0.
set -u
summary=$1
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
scratch_dir test-summary "${TMPDIR:-/tmp}"

# log DIR RESULT NAME...: a testlog.json with one line per test.
log() {
	dir=$tmp/$1 result=$2
	shift 2
	mkdir -p "$dir/meson-logs"
	for name; do
		printf '{"name": "%s", "stdout": "\\"result\\": \\"FAIL\\" in output", "result": "%s", "returncode": 0}\n' \
			"$name" "$result"
	done >>"$dir/meson-logs/testlog.json"
}

log good OK "ntmem:copy / copy_variants" "ntmem:abi / abi"
log good SKIP "ntmem:check / check_fio"
expect 0 "all passed: exit 0" sh "$summary" "$tmp/good"
grep -q "good: 2 passed, 0 failed, 1 skipped" "$out" &&
	ok "counts of a passing build" || bad "counts of a passing build"
grep -q "^total: 2 passed, 0 failed, 1 skipped$" "$out" &&
	ok "total of a passing run" || bad "total of a passing run"

log bad OK "ntmem:copy / copy_variants"
log bad FAIL "ntmem:record / record_blk"
log bad TIMEOUT "ntmem:threads+btt / btt_threads"
expect 1 "a failed and a timed-out test: exit 1" sh "$summary" "$tmp/good" "$tmp/bad"
grep -q "bad: 1 passed, 2 failed, 0 skipped; failed suites:" "$out" &&
	ok "counts and failed suites of a failing build" ||
	bad "counts and failed suites of a failing build"
for want in "  FAIL ntmem:record / record_blk" \
	"  TIMEOUT ntmem:threads+btt / btt_threads" " record (1)" " btt (1)" \
	"total: 3 passed, 2 failed, 1 skipped -- make check FAILED"; do
	grep -qF -- "$want" "$out" && ok "names: $want" || bad "names: $want"
done

expect 1 "a failed target without a test failure: exit 1" \
	sh "$summary" --failed-targets " check-mutate check-aarch64" "$tmp/good"
grep -q "^failed make targets: check-mutate check-aarch64$" "$out" &&
	ok "the failed targets are named" || bad "the failed targets are named"

expect 0 "a build directory without a log is left out" \
	sh "$summary" "$tmp/good" "$tmp/none"
exit "$fail"
