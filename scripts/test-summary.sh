#!/bin/sh
# SPDX-License-Identifier: MIT
#
# test-summary.sh BUILD_DIR... - one closing line for every meson test run
# in the given build directories: "N passed, N failed, N skipped".
set -eu
pass=0 fail=0 skip=0
for dir in "$@"; do
	log="$dir/meson-logs/testlog.json"
	[ -f "$log" ] || continue
	p=$(grep -c '"result": "OK"' "$log" || true)
	s=$(grep -c '"result": "SKIP"' "$log" || true)
	t=$(grep -c '"result": ' "$log" || true)
	pass=$((pass + p)) skip=$((skip + s)) fail=$((fail + t - p - s))
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
