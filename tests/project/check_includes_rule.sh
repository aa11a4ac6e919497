#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_includes_rule.sh SCRIPT SRCDIR - the include rules the build holds
# tools/, compat/ and src/ to (scripts/check_includes.sh): the tree as it
# is passes; made-up sources that climb ("../src/env.h", <../x.h>) or name
# a path not below them ("src/env.h", "watch/watch.h") fail it, each line
# named; one below its own directory ("include/libpmem.h") passes; in
# src/, a file outside record/ naming record/'s header fails.
# Exit 0 pass, 1 fail.
set -u
script=$1 src=$2
here=$(cd "$(dirname "$0")" && pwd)
# ok, bad, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$here/../lib/cli_lib.sh"
scratch_dir ntmem-includes
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT

for d in tools compat; do
	if sh "$script" "$tmp/stamp" "$src/$d" "rule" >"$out" 2>"$err" &&
		[ -s "$tmp/stamp" ]; then
		ok "$d/ as it is keeps the rule"
	else
		bad "$d/ breaks the include rule: $(head -3 "$err")"
	fi
	rm -f "$tmp/stamp"
done

mkdir -p "$tmp/lib/include"
: >"$tmp/lib/include/libx.h"
printf '#include "include/libx.h"\n#include "own.h"\n#include <ntmem/hook.h>\n' \
	>"$tmp/lib/good.c"
if sh "$script" "$tmp/stamp" "$tmp" "rule" >"$out" 2>"$err"; then
	ok "a path below the file's own directory and plain names pass"
else
	bad "a good source is refused: $(head -3 "$err")"
fi
for line in '#include "../src/env.h"' '#include "src/env.h"' \
	'# include "watch/watch.h"' '#include <../x.h>'; do
	printf '%s\n' "$line" >"$tmp/lib/bad.c"
	rm -f "$tmp/stamp"
	if sh "$script" "$tmp/stamp" "$tmp" "what to do instead" >"$out" 2>"$err"; then
		bad "'$line' passes the rule"
	elif grep -qF "bad.c:1:$line" "$err" && grep -q 'what to do instead' "$err" &&
		[ ! -e "$tmp/stamp" ]; then
		ok "'$line' fails the build, the file, line and rule named"
	else
		bad "'$line': refused without naming it: $(cat "$err")"
	fi
done
# src/ and its wing: only record/ names record/'s headers.
if sh "$script" --private record "$tmp/stamp" "$src/src" "rule" >"$out" 2>"$err"; then
	ok "src/ as it is keeps record/'s headers to record/"
else
	bad "src/ reaches into record/: $(head -3 "$err")"
fi
rm -rf "$tmp/lib" "$tmp/stamp"
mkdir -p "$tmp/src/record"
printf '#include "record/own.h"\n#include "interval/interval.h"\n' >"$tmp/src/record/in.c"
printf '#include "interval/interval.h"\n' >"$tmp/src/ns.c"
if sh "$script" --private record "$tmp/stamp" "$tmp/src" "rule" >"$out" 2>"$err"; then
	ok "the wing names its own headers, the library its own"
else
	bad "a good src/ is refused: $(head -3 "$err")"
fi
printf '#include "record/watch/watch.h"\n' >"$tmp/src/ns.c"
if sh "$script" --private record "$tmp/stamp" "$tmp/src" "keep out" >"$out" 2>"$err"; then
	bad "a file outside record/ includes record/watch/watch.h and passes"
elif grep -qF 'ns.c:1:#include "record/watch/watch.h"' "$err" && grep -q 'keep out' "$err"; then
	ok "a file outside record/ naming its header fails the build, named"
else
	bad "record/'s header refused without naming it: $(cat "$err")"
fi
exit $fail
