#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_inline_nocall.sh - proves that a constant-size copy of a fixed size
# is expanded inline, from the disassembly of inline_nocall.c (see there).
#
# usage: check_inline_nocall.sh INLINE_H ARCHIVE_OR_OBJECT...
#
# The fixed sizes are read from NTM_FIXED_SIZES in INLINE_H and must equal
# the copyN functions the compiler made from the X-macro, so a size added to
# the header without an inline expansion fails here. For each size N and
# each of copyN, flushN, namedN, the function must:
#   - exist;
#   - contain a MOVNTI (the 8-byte path, or the 4-byte store for N = 4) and,
#     for N >= 16, a MOVNTDQ (the 16-byte path);
#   - reference no symbol at all for copyN and namedN (ntm_memcpy_nt()'s
#     contract lets an unaligned destination take an ordinary copy, which
#     the header makes inline: no call to ntm_memcpy_nt, nor to memcpy);
#     for flushN none but ntm_memcpy_flush (the unaligned fallback, which
#     writes the lines back, as a call or a tail jmp, direct or through
#     its GOT entry);
#     and make no other indirect call or jump.
# Their calls go through the door's GOT entry (ntmem/copy.h:
# NTM_CALL_VIA_GOT) when NOCALL_NOPLT=1, and through the PLT in an object
# whose name ends in _plt (built with NTM_CALL_VIA_GOT defined empty).
# copy_var and flush_var (a run-time size) must contain the variable-size
# path's MOVNTDQ and MOVNTI, reference their door's out-of-line function
# (ntm_memcpy_nt, ntm_memcpy_flush) and nothing else, memcpy neither. The control copy_60
# must reference ntm_memcpy_nt and store nothing, which shows the parser
# does see calls.
# Exit 0 pass, 1 fail, 77 skip (no objdump).

set -u
OBJDUMP=${OBJDUMP:-objdump}

if ! command -v "$OBJDUMP" >/dev/null 2>&1; then
	echo "SKIP: $OBJDUMP not found"
	exit 77
fi
if [ $# -lt 2 ]; then
	echo "usage: $0 INLINE_H ARCHIVE_OR_OBJECT..." >&2
	exit 1
fi

header=$1
shift
# Every X(N) in the NTM_FIXED_SIZES* macro definitions (the list may be
# split over helper macros such as NTM_FIXED_SIZES_8).
sizes=$(sed -n '/^#define NTM_FIXED_SIZES/,/[^\\]$/p' "$header" |
	grep -o 'X([0-9]*)' | tr -dc '0-9\n' | sort -n -u)
if [ -z "$sizes" ]; then
	echo "FAIL: no NTM_FIXED_SIZES found in $header"
	exit 1
fi
echo "fixed sizes:" $sizes

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
dis=$tmp/dis
sum=$tmp/sum

# Print one function's disassembly after a failure.
show() {
	sed -n "/^[0-9a-f]* <$1>:\$/,/^\$/p" "$dis"
}

status=0
for obj in "$@"; do
	echo "== $obj"
	if ! "$OBJDUMP" -dr --no-show-raw-insn "$obj" >"$dis" 2>&1; then
		echo "FAIL: $OBJDUMP -dr $obj"
		cat "$dis"
		status=1
		continue
	fi
	# One summary line per function:
	#   name nti ntdq bad-refs-and-insns flush-refs nt-refs memcpy-refs
	#   door-refs-through-the-GOT why
	awk '
	function flush_fn() {
		if (fn != "")
			printf "%s %d %d %d %d %d %d %d %s\n", fn, nti, ntdq,
			       bad, fl, nt, mc, got_refs, (why == "" ? "-" : why)
	}
	/^[0-9a-f]+ <[^>]*>:$/ {
		flush_fn()
		fn = $2; gsub(/[<>:]/, "", fn)
		nti = ntdq = bad = fl = nt = mc = got_refs = 0; why = ""
		pending = ""
		next
	}
	fn == "" { next }
	/^[ \t]+[0-9a-f]+: R_[A-Z0-9_]+/ {
		sym = $NF
		sub(/[-+]0x[0-9a-f]+$/, "", sym)
		sub(/@.*$/, "", sym)
		# An indirect call or jmp is the door function called through
		# its GOT entry (ntmem/copy.h: NTM_CALL_VIA_GOT) only when its
		# relocation is a GOT one naming that function.
		door_got = $(NF - 1) ~ /GOTPCREL/ &&
			   (sym == "ntm_memcpy_flush" || sym == "ntm_memcpy_nt")
		if (pending ~ /^indirect/ && !door_got) {
			bad++; why = why pending ";"
		}
		if (door_got)
			got_refs++
		if (sym == "ntm_memcpy_flush") fl++
		else if (sym == "ntm_memcpy_nt") nt++
		else if (sym == "memcpy") mc++
		else { bad++; why = why "ref:" sym ";" }
		pending = ""
		next
	}
	/^[ \t]*[0-9a-f]+:\t/ {
		if (pending != "") { bad++; why = why pending ";" }
		pending = ""
		split($0, part, "\t")
		insn = part[2]
		split(insn, w, " ")
		m = w[1]
		if (m ~ /^(notrack|bnd|cs|ds|data16|rex.*)$/) m = w[2]
		if (m ~ /^movnti/) nti++
		if (m ~ /^v?movntdq$/) ntdq++
		if (m ~ /^call/ || m ~ /^jmp/) {
			if (insn ~ /\*/) pending = "indirect:" m
			else if (m ~ /^call/) pending = "call-without-reloc"
		}
	}
	END {
		if (pending != "") { bad++; why = why pending ";" }
		flush_fn()
	}' "$dis" >"$sum"

	# row F [WHAT]: F's summary line into $line, or a failure naming it.
	row() {
		line=$(awk -v f="$1" '$1 == f' "$sum")
		[ -n "$line" ] && return 0
		echo "FAIL: ${2-}$1 not found in $obj"
		status=1
		return 1
	}

	# The compiler expanded the X-macro into copyN functions: their sizes
	# must be exactly the ones read from the header.
	built=$(sed -n 's/^copy\([0-9][0-9]*\) .*/\1/p' "$sum" | sort -n -u)
	if [ "$(echo $built)" != "$(echo $sizes)" ]; then
		echo "FAIL: sizes in $obj ($(echo $built)) differ from" \
		     "$header ($(echo $sizes))"
		status=1
	fi
	for n in $sizes; do
		for f in copy$n flush$n named$n; do
			row "$f" || continue
			set -- $line
			# $2 nti $3 ntdq $4 bad $5 flush refs $6 nt refs
			# $7 memcpy refs $8 GOT refs $9 why
			msg=""
			[ "$2" -ge 1 ] || msg="$msg no MOVNTI;"
			if [ "$n" -ge 16 ] && [ "$3" -lt 1 ]; then
				msg="$msg no MOVNTDQ;"
			fi
			[ "$4" -eq 0 ] || msg="$msg $9"
			[ "$7" -eq 0 ] || msg="$msg calls memcpy;"
			# The unaligned fallback keeps the caller's contract:
			# flushN's goes out of line, copyN's is inline.
			case $f in
			flush*) [ "$6" -eq 0 ] || msg="$msg calls ntm_memcpy_nt;" ;;
			*) [ "$5" -eq 0 ] || msg="$msg calls ntm_memcpy_flush;"
			   [ "$6" -eq 0 ] || msg="$msg calls ntm_memcpy_nt;" ;;
			esac
			if [ -n "$msg" ]; then
				echo "FAIL: $f:$msg"
				show "$f"
				status=1
			else
				echo "ok   $f: $2 movnti, $3 movntdq, fallback refs $(($5 + $6))"
			fi
		done
	done
	for f in copy_var flush_var; do
		row "$f" || continue
		set -- $line
		case $f in
		copy*) refs=$6 other=$5 ;;
		*) refs=$5 other=$6 ;;
		esac
		if [ "$2" -ge 1 ] && [ "$3" -ge 1 ] && [ "$4" -eq 0 ] &&
		   [ "$refs" -ge 1 ] && [ "$other" -eq 0 ] && [ "$7" -eq 0 ]; then
			echo "ok   $f: $2 movnti, $3 movntdq, out-of-line refs $refs"
		else
			echo "FAIL: $f: $line (expected the variable-size" \
			     "path's stores and its door's call)"
			show "$f"
			status=1
		fi
	done
	for f in copy_60; do
		row "$f" "control " || continue
		set -- $line
		if [ "$6" -ge 1 ] && [ "$2" -eq 0 ] && [ "$3" -eq 0 ]; then
			echo "ok   control $f calls ntm_memcpy_nt"
		else
			echo "FAIL: control $f: $line (expected a call to" \
			     "ntm_memcpy_nt and no stores: is the parser blind?)"
			show "$f"
			status=1
		fi
	done
	# How the run-time-size calls reach their door: through its GOT
	# entry where the compiler knows noplt (NOCALL_NOPLT=1), through
	# the PLT in the object built with NTM_CALL_VIA_GOT defined empty
	# (its name ends in _plt).
	case ${obj##*/} in
	*_plt.*) want=plt ;;
	*) [ "${NOCALL_NOPLT:-0}" = 1 ] && want=got || want= ;;
	esac
	for f in copy_var flush_var copy_60; do
		[ -n "$want" ] || break
		row "$f" || continue
		set -- $line
		refs=$(($5 + $6))
		case $want in
		got) [ "$8" -eq "$refs" ] ;;
		plt) [ "$8" -eq 0 ] ;;
		esac
		if [ $? -eq 0 ]; then
			echo "ok   $f: $refs door refs, $8 through the GOT ($want)"
		else
			echo "FAIL: $f: $refs door refs, $8 through the GOT" \
			     "(expected the calls through the $want)"
			show "$f"
			status=1
		fi
	done
done
exit $status
