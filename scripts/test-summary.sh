#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test-summary.sh [--failed-targets "T..."] BUILD_DIR... - the closing
# report of `make check`, printed whether or not everything passed: for
# each build directory with a meson test log of this run, its counts, the
# suites with failures and the names of the failed tests; then the make
# targets that failed (a target can fail before or without meson tests:
# a build error, the mutation proof); then the totals. Exits non-zero on
# any failed test or target.
#
# A test passed when meson says OK or EXPECTEDFAIL, was skipped on SKIP,
# and failed on anything else (FAIL, TIMEOUT, ERROR, UNEXPECTEDPASS).
set -eu
failed_targets=""
if [ "${1:-}" = "--failed-targets" ]; then
	failed_targets=$2
	shift 2
fi

pass=0 fail=0 skip=0
for dir in "$@"; do
	log="$dir/meson-logs/testlog.json"
	[ -f "$log" ] || continue
	# One JSON object a line, "name" first; a "result" inside a test's
	# output is escaped (\"result\") and does not match.
	report=$(sed -n 's/^{"name": "\([^"]*\)".*"result": "\([A-Z]*\)".*/\2 \1/p' "$log" |
		awk -v dir="$dir" '
		$1 == "OK" || $1 == "EXPECTEDFAIL" { p++; next }
		$1 == "SKIP" { s++; next }
		{
			f++
			name = substr($0, length($1) + 2)
			failed[f] = $1 " " name
			# "project:suite+suite2 / test": count per suite
			split(name, part, " / ")
			sub(/^[^:]*:/, "", part[1])
			n = split(part[1], suites, "+")
			for (i = 1; i <= n; i++)
				per[suites[i]]++
		}
		END {
			line = sprintf("%s: %d passed, %d failed, %d skipped",
				       dir, p, f, s)
			if (f) {
				line = line "; failed suites:"
				for (su in per)
					line = line " " su " (" per[su] ")"
			}
			print line
			for (i = 1; i <= f; i++)
				print "  " failed[i]
			print p + 0, f + 0, s + 0
		}')
	# The last line holds the numbers, the lines before it the report.
	echo "$report" | sed '$d'
	counts=$(echo "$report" | tail -n 1)
	pass=$((pass + ${counts%% *}))
	counts=${counts#* }
	fail=$((fail + ${counts%% *})) skip=$((skip + ${counts#* }))
done

status=0
if [ -n "$(echo "$failed_targets" | tr -d ' ')" ]; then
	echo "failed make targets:$failed_targets"
	status=1
fi
[ "$fail" -eq 0 ] || status=1
echo "total: $pass passed, $fail failed, $skip skipped$([ "$status" -eq 0 ] && echo "" || echo " -- make check FAILED")"
exit $status
