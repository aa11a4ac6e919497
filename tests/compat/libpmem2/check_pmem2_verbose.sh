#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_pmem2_verbose.sh PROBE - NTMEM_VERBOSE means for the libpmem2
# drop-in what it means for the library and the other drop-ins
# (tests/compat/check_verbose.sh): 1, yes, true, on in any case print its
# one "ntmem libpmem2 ..." line, proof that the drop-in was loaded; 0, no,
# false, off, empty print nothing; any other word prints nothing but the
# library's one warning line naming it. PROBE is pmem2_verbose_probe.c,
# linked with the drop-in.
set -u
# shellcheck source-path=SCRIPTDIR source=../../lib/cli_lib.sh
. "$(dirname "$0")/../../lib/cli_lib.sh"

probe=$1

# lines TEXT: how many lines of the last stderr contain TEXT.
lines() { grep -c -- "$1" "$err"; }

for v in 1 yes YES true True on ON; do
	expect 0 "NTMEM_VERBOSE='$v'" env NTMEM_VERBOSE="$v" "$probe"
	err_names "ntmem libpmem2 [^ ]*: PMDK libpmem2 1.0 drop-in, copies" \
		"the drop-in's line with '$v'"
	if [ "$(lines "ntmem libpmem2 ")" -eq 1 ]; then
		ok "one drop-in line with '$v'"
	else bad "not one drop-in line with '$v'"; sed 's/^/# /' "$err"; fi
	if grep -q ignored "$err"; then
		bad "a warning with '$v'"; sed 's/^/# /' "$err"
	else ok "no warning with '$v'"; fi
done

for v in 0 no NO false off OFF ""; do
	expect 0 "NTMEM_VERBOSE='$v'" env NTMEM_VERBOSE="$v" "$probe"
	if [ -s "$err" ]; then
		bad "prints with '$v'"; sed 's/^/# /' "$err"
	else ok "silent with '$v'"; fi
done

for v in 2 y enable verbose; do
	expect 0 "NTMEM_VERBOSE='$v'" env NTMEM_VERBOSE="$v" "$probe"
	err_names "NTMEM_VERBOSE=$v ignored" "warns about '$v'"
	if [ "$(grep -c . "$err")" -eq 1 ]; then
		ok "one line for '$v'"
	else bad "more than one line for '$v'"; sed 's/^/# /' "$err"; fi
done

exit $fail
