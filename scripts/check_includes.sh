#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_includes.sh [--private SUB] STAMP DIR RULE - the sources under DIR
# reach no private header past the include path meson gives them.
#
# Without --private (tools/, compat/): each #include names a header by
# name only ("parse.h": a file of its own directory or of a meson
# dependency's), a public header (<ntmem/hook.h>), or a path below the
# including file's own directory ("include/libpmem.h" beside
# compat/libpmem/map.c). A name that climbs ("..", in quotes or brackets)
# or a path that is not below the file ("src/env.h", "../src/env.h")
# would reach src/'s inside, which no dependency of DIR puts on its path.
#
# With --private SUB (src/ and its wing record/): DIR's own headers are
# named from DIR ("interval/interval.h"), but no file outside DIR/SUB
# names one of SUB's ("record/rec_sink.h") or climbs: the wing's headers
# are its own, and the rest of the library reaches it through the public
# ntmem/hook.h only.
#
# Run by the build before DIR's sources are compiled (tools/, compat/ and
# src/ meson.build): a match fails the build, RULE saying what DIR may
# include instead. STAMP is written when there is none.
set -u
private=
if [ "${1:-}" = --private ]; then
	private=$2
	shift 2
fi
if [ $# -ne 3 ]; then
	echo "usage: $0 [--private SUB] STAMP DIR RULE" >&2
	exit 2
fi
stamp=$1 dir=$2 rule=$3

if [ -n "$private" ]; then
	found=$(find "$dir" -path "$dir/$private" -prune -o \( -name '*.c' -o -name '*.h' \) \
		-exec grep -nHE "^[[:space:]]*#[[:space:]]*include[[:space:]]*([<\"]$private/|[<\"][^>\"]*\.\.)" {} +)
else
	found=$(find "$dir" \( -name '*.c' -o -name '*.h' \) -exec \
		grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*("[^"]*/|[<"][^>"]*\.\.)' {} + |
		while IFS= read -r hit; do
			file=${hit%%:*}
			name=$(printf '%s\n' "$hit" | sed -n 's/.*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p')
			# A path below the file's own directory, not climbing.
			case $name in
			'' | *..*) ;;
			*) [ -f "$(dirname "$file")/$name" ] && continue ;;
			esac
			printf '%s\n' "$hit"
		done)
fi
if [ -n "$found" ]; then
	echo "$found" | sed 's/^/error: /' >&2
	echo "error: $rule" >&2
	exit 1
fi
echo "/* check_includes.sh: no source of $dir reaches past its include path. */" \
	>"$stamp"
