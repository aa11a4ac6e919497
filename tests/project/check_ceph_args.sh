#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_ceph_args.sh CHECK_CEPH - scripts/check-ceph.sh (make check-ceph)
# refuses bad arguments before it starts anything: exit 2 and a message
# naming the argument, no directory left in /var/tmp; --help prints its
# description. (The cluster itself runs in make check's Ceph part.)
set -u
script=$1
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
scratch_dir ceph-args "${TMPDIR:-/tmp}"
out=$tmp/out err=$tmp/err fail=0
before=$(ls -d /var/tmp/ntmem-ceph.* 2>/dev/null | wc -l)

expect 0 "--help" sh "$script" --help
grep -q "rados bench write, seq and rand" "$out" &&
	ok "--help describes the checks" || bad "--help describes the checks"

for args in "--osds 1|--osds must be between 2 and 8, not 1" \
	"--osds 9|--osds must be between 2 and 8, not 9" \
	"--seconds 0|--seconds must be between 1 and 60, not 0" \
	"--seconds ten|--seconds must be a whole number, not 'ten'" \
	"--rounds -1|--rounds must be a whole number, not '-1'" \
	"--rounds|--rounds needs a value" \
	"--bogus|unknown argument '--bogus'"; do
	# shellcheck disable=SC2086 # the arguments split into words
	expect 2 "${args%%|*}: exit 2" sh "$script" ${args%%|*}
	err_names "${args#*|}" "${args%%|*}: the message names the argument"
done

after=$(ls -d /var/tmp/ntmem-ceph.* 2>/dev/null | wc -l)
[ "$after" -le "$before" ] && ok "nothing made in /var/tmp" ||
	bad "nothing made in /var/tmp: $before directories before, $after after"
exit "$fail"
