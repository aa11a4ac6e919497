#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_exports.sh - the shared library exports exactly the symbols of its
# version script, each under the version node that lists it, as the
# default version (sym@@NODE), and nothing else: no internal ntm_ symbol
# and no stray symbol of any other name leaks into the dynamic table.
#
# usage: check_exports.sh LIBNTMEM_SO LIBNTMEM_MAP
# Exit 0 pass, 1 fail, 77 skip (no objdump).

set -u
OBJDUMP=${OBJDUMP:-objdump}

if ! command -v "$OBJDUMP" >/dev/null 2>&1; then
	echo "SKIP: $OBJDUMP not found"
	exit 77
fi
if [ $# -ne 2 ]; then
	echo "usage: $0 LIBNTMEM_SO LIBNTMEM_MAP" >&2
	exit 1
fi
lib=$1
map=$2

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The map's global symbols as "NODE SYMBOL" lines: strip comments, split
# into tokens, walk "NODE { global: a; b; local: *; } [PARENT];".
tr '\n' ' ' <"$map" |
	sed -e 's:/\*\([^*]\|\*[^/]\)*\*/: :g' \
	    -e 's/[{};:]/ & /g' |
	tr -s ' \t' '\n\n' |
	awk '
	BEGIN { st = "node" }
	$0 == "" { next }
	st == "node"   { node = $0; st = "open"; next }
	st == "open"   { if ($0 != "{") { print "syntax" > "/dev/stderr"; exit 1 }
			 st = "body"; scope = "global"; next }
	st == "body" && $0 == "}" { st = "parent"; next }
	st == "body" && ($0 == "global" || $0 == "local") { want = $0; next }
	st == "body" && $0 == ":" { scope = want; next }
	st == "body" && $0 == ";" { next }
	st == "body"   { if (scope == "global") print node, $0; next }
	st == "parent" { if ($0 == ";") st = "node"; next }
	' | sort >"$tmp/map" || { echo "FAIL: cannot parse $map"; exit 1; }

if [ ! -s "$tmp/map" ]; then
	echo "FAIL: no global symbols parsed from $map"
	exit 1
fi
nodes=$(awk '{ print $1 }' "$tmp/map" | sort -u)

# Defined dynamic symbols as "VERSION SYMBOL": the last two fields of
# objdump -T, skipping undefined imports and each version node's own
# definition symbol (NTM_0.1 NTM_0.1 in the *ABS* section).
if ! "$OBJDUMP" -T "$lib" >"$tmp/dyn" 2>&1; then
	echo "FAIL: $OBJDUMP -T $lib"
	cat "$tmp/dyn"
	exit 1
fi
awk '
	/^[0-9a-f]+ / && $0 !~ /\*UND\*/ {
		ver = $(NF - 1); sym = $NF
		if (ver == sym && $0 ~ /\*ABS\*/) next
		print ver, sym
	}' "$tmp/dyn" | sort >"$tmp/exp"

status=0
for node in $nodes; do
	if ! grep -q "[[:space:]]$node[[:space:]]*$node\$" "$tmp/dyn"; then
		echo "FAIL: version node $node is not defined in $lib"
		status=1
	fi
done
# In the map, not exported (or under another version)
comm -23 "$tmp/map" "$tmp/exp" | while read -r node sym; do
	echo "FAIL: $sym@@$node is in the map but not exported as such"
done
# Exported, not in the map (or under another or a hidden version)
comm -13 "$tmp/map" "$tmp/exp" | while read -r ver sym; do
	echo "FAIL: $sym (version $ver) is exported but not in the map"
done
if [ -n "$(comm -3 "$tmp/map" "$tmp/exp")" ]; then
	status=1
fi

echo "$(wc -l <"$tmp/map") symbols in the map, $(wc -l <"$tmp/exp")" \
     "defined in the dynamic symbol table, nodes:" $nodes
exit $status
