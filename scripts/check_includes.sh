#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_includes.sh STAMP DIR - the tool's sources include by name only:
# a file of DIR ("parse.h"), a public header (<ntmem/introspect.h>) or one
# a meson dependency puts on the include path ("dropin_note.h"). A quoted
# name with a directory ("../src/env.h", "src/env.h") or any name that
# climbs ("..") would reach a private header of the library past the
# include path meson gives the tool, which holds no directory of src/.
# Run by the build before the tool is compiled (tools/meson.build): a
# match fails the build. STAMP is written when there is none.
set -u
stamp=$1 dir=$2

found=$(find "$dir" -maxdepth 1 \( -name '*.c' -o -name '*.h' \) -exec \
	grep -nHE '^[[:space:]]*#[[:space:]]*include[[:space:]]*("[^"]*/|<[^>]*\.\.)' {} +)
if [ -n "$found" ]; then
	echo "$found" | sed 's/^/error: /' >&2
	echo "error: tools/ includes by name only; the library's inside goes" \
		"through <ntmem/introspect.h>, other headers through a meson" \
		"dependency (tools/meson.build)" >&2
	exit 1
fi
echo "/* check_includes.sh: no tool source reaches past its include path. */" \
	>"$stamp"
