#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_cli_parse.sh NTMEM - every subcommand parses its numbers and options
# with one strict parser: a table of bad inputs, one row each, that must
# all be usage errors (exit 2) naming the option and the value as typed.
# Each row is a value strtoul/strtod or getopt used to take (a sign, octal,
# hex, an exponent, a fraction, spaces, an abbreviated or foreign option),
# so a regression would run a different benchmark than the one asked for.
# Every row also carries tiny options, so a regressed row runs a small
# benchmark and fails rather than a 100 GiB one.
set -u
ntmem=$1
# ok, bad, expect, err_names; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
tmp=$(mktemp -d /tmp/ntmem-cli-parse-XXXXXX) || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT
ns=$tmp/ns

expect 0 "blk create (for the blk rows)" "$ntmem" blk create "$ns" --size 16m

# tiny CMD: the harmless options a row of CMD runs with (the row's own
# option comes last and wins).
tiny() {
	case $1 in
	"bench copy") echo "--sizes 64 --align 0 --total 64k --runs 1 --no-huge --no-pmdk" ;;
	"bench memmap") echo "--size 16m --runs 1 --no-pmdk --dir $tmp --layout 64 --strategy fixed" ;;
	"bench blk") echo "--size 16m --ops 10 --runs 1 --no-pmdk --dir $tmp" ;;
	"blk create") echo "$tmp/new --size 16m" ;;
	"blk inject-error" | "blk clear-error") echo "$ns --sector 1" ;;
	"blk badblocks") echo "$ns" ;;
	*) echo "" ;;
	esac
}

# subcommand | option | value ("-": none) | exit status | stderr fragment
while IFS='|' read -r cmd opt val status text; do
	case $cmd in '' | '#'*) continue ;; esac
	# shellcheck disable=SC2046,SC2086 # word splitting is the point
	if [ "$val" = - ]; then
		expect "$status" "$cmd $opt" "$ntmem" $cmd $(tiny "$cmd") "$opt"
	else
		expect "$status" "$cmd $opt '$val'" "$ntmem" $cmd $(tiny "$cmd") \
			"$opt" "$val"
	fi
	err_names "$text" "$cmd $opt '$val': says '$text'"
done <<ROWS
bench copy|--cpu|-1|2|invalid --cpu '-1'
bench copy|--cpu|1k|2|invalid --cpu '1k'
bench copy|--cpu|1024|2|invalid --cpu '1024': expected a decimal number from 0 to 1023
bench copy|--runs|010|2|invalid --runs '010'
bench copy|--runs|5x|2|invalid --runs '5x'
bench copy|--total|1.5m|2|invalid --total '1.5m'
bench copy|--total|1e3k|2|invalid --total '1e3k'
bench copy|--total|+4k|2|invalid --total '+4k'
bench copy|--total| 4k|2|invalid --total ' 4k'
bench copy|--total|4k |2|invalid --total '4k '
bench copy|--total|0x1000|2|invalid --total '0x1000'
bench copy|--total|4KiB|2|invalid --total '4KiB'
bench copy|--total|-4k|2|invalid --total '-4k'
bench copy|--total||2|invalid --total ''
bench copy|--total|0|2|invalid --total '0'
bench copy|--total|99999999999999999999999t|2|invalid --total '99999999999999999999999t'
bench copy|--total|17000000t|2|invalid --total '17000000t'
bench copy|--sizes|64,,4k|2|invalid --sizes '64,,4k'
bench copy|--sizes|64,|2|invalid --sizes '64,'
bench copy|--sizes|0|2|invalid --sizes '0'
bench copy|--align|0,-1|2|invalid --align '0,-1'
bench copy|--align|4096|2|invalid --align '4096'
bench copy|--json=yes|-|2|invalid --json 'yes'
bench copy|--siz|64|2|invalid option '--siz'
bench copy|--size|64|2|invalid option '--size'
bench copy|--total|-|2|invalid --total '(none)'
bench memmap|--threads|02|2|invalid --threads '02'
bench memmap|--threads|65|2|invalid --threads '65'
bench memmap|--runs|-1|2|invalid --runs '-1'
bench memmap|--size|16.0m|2|invalid --size '16.0m'
bench memmap|--size|0x1000000|2|invalid --size '0x1000000'
bench memmap|--align|2.0m|2|invalid --align '2.0m': expected 4k, 2m or 1g
bench memmap|--align|8k|2|invalid --align '8k'
bench memmap|--layout|64.0|2|invalid --layout '64.0'
bench memmap|--layout|72|2|invalid --layout '72'
bench memmap|--map|MEM|2|invalid --map 'MEM': expected mem or dev
bench memmap|--sector|5|2|invalid option '--sector'
bench blk|--ops|-1|2|invalid --ops '-1'
bench blk|--ops|0x10|2|invalid --ops '0x10'
bench blk|--ops|010|2|invalid --ops '010'
bench blk|--ops|1e3|2|invalid --ops '1e3'
bench blk|--bs|512.0|2|invalid --bs '512.0'
bench blk|--bs|1000|2|invalid --bs '1000'
bench blk|--bs|128m|2|invalid --bs '128m'
bench blk|--layout|64|2|invalid option '--layout'
blk inject-error|--sector|-1|2|invalid --sector '-1'
blk inject-error|--sector|010|2|invalid --sector '010'
blk inject-error|--sector|0x10|2|invalid --sector '0x10'
blk inject-error|--sector|18446744073709551616|2|invalid --sector '18446744073709551616'
blk inject-error|--count|-1|2|invalid --count '-1'
blk inject-error|--count|1k|2|invalid --count '1k'
blk inject-error|--json|-|2|invalid option '--json'
blk clear-error|--size|16m|2|invalid option '--size'
blk create|--sector|5|2|invalid option '--sector'
blk create|--size|16.5m|2|invalid --size '16.5m'
blk create|--size|16m+4|2|invalid --size '16m+4'
blk badblocks|--sector|5|2|invalid option '--sector'
info|--json=1|-|2|invalid --json '1'
info|--csv|-|2|invalid option '--csv'
ROWS

if [ -z "$(find "$tmp" -mindepth 1 ! -name 'ns')" ]; then
	ok "rejected options create nothing"; else
	bad "rejected options left files"; find "$tmp" -mindepth 1 | sed 's/^/# /'; fi
expect 0 "badblocks, still empty" "$ntmem" blk badblocks "$ns"
if [ -s "$out" ]; then bad "a rejected row changed the bad-sector list"; else
	ok "no rejected row changed the bad-sector list"; fi

exit "$fail"
