#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_corpus.sh NTMEM BINDIR - each corpus program (BINDIR/<name>) runs
# under `ntmem check --json` and has exactly its one bug reported: kind,
# "when", file offset and length of the changed bytes, the file it maps
# (<name>.pmem), and frames that reach the program. Its twin
# (BINDIR/<name>_fixed, the same source built with -DFIXED) has none. The
# programs exit 0, and `ntmem check` passes that status through. Each bug
# twice: reported at the unmap or exit that finds it, and, with
# NTMEM_CHECK_EAGER=1, at the persistence point that first passed it.
#
# The checking library comes from NTMEM_CHECK_LIBDIR (set by meson).
# Exit 0 pass, 1 fail, 77 skip (no python3 to read the JSON).
set -u
if [ $# -ne 2 ]; then
	echo "usage: $0 NTMEM BINDIR" >&2
	exit 1
fi
ntmem=$1 bindir=$2
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
here=$(dirname "$0")
# ok, bad, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$here/../lib/cli_lib.sh"
# The programs' files: tmpfs, as emulated pmem usually is.
scratch_dir ntmem-check
sum=$tmp/summary

# A sanitized build (checking_asan, cli_lib.sh).
if checking_asan; then
	echo "# the checking library is built with ASan: ASAN_OPTIONS=$ASAN_OPTIONS"
fi

# Each program: NAME KINDS WHEN EAGER_WHEN OFFSET LENGTH POINT, its one
# expected bug record. KINDS: the kinds accepted (comma-separated). WHEN:
# a line that a persistence point passed while not durable is reported
# when it is unmapped or at exit, naming that point; with
# NTMEM_CHECK_EAGER=1 it is reported at the point itself (EAGER_WHEN).
# 4120 = 4096 + 24; 8216 = 8192 + 24; 12328 = 12288 + 40.
corpus="
missing_flush not-written-back unmap point 4120 8 pmem_drain
missing_flush_dep not-written-back unmap point 4120 8 pmem_drain
missing_flush_dlopen not-written-back unmap point 4120 8 pmem_drain
missing_drain not-fenced unmap unmap 4120 8 pmem_unmap
neighbour_flush not-written-back unmap point 4120 8 pmem_persist
hot_neighbour not-written-back unmap point 4120 8 pmem_persist
flush_before_store not-written-back,stored-after-write-back unmap point 4120 8 pmem_drain
nt_nodrain not-fenced exit exit 8216 4096 exit
plain_memcpy not-written-back unmap point 12328 100 pmem_drain
store_at_exit never-written-back exit exit 4120 8 exit
ntm_ns_store never-written-back unmap unmap 4120 8 ntm_ns_close
own_map_msync not-written-back unmap point 4120 8 pmem_persist
two_files never-written-back unmap unmap 7256 8 pmem_unmap
"
# Programs that persist by what pmem_is_pmem() says, also run on a disk
# file without PMEM_IS_PMEM_FORCE: their file is behind a page cache,
# judged by the kernel's rule (an msync() covering a store's page makes
# it durable), the bug found at unmap whatever NTMEM_CHECK_EAGER says.
# NAME KIND WHEN OFFSET LENGTH POINT.
sync_corpus="
own_map_msync not-synced unmap 4120 8 munmap
missing_flush not-synced unmap 4120 8 pmem_unmap
two_files not-synced unmap 7256 8 pmem_unmap
"
# The libpmem2 drop-in's, when it is built (pmem2_store_after_persist.c).
if [ -x "$bindir/pmem2_store_after_persist" ]; then
	corpus="$corpus
pmem2_store_after_persist never-written-back unmap unmap 4120 8 pmem2_map_delete
pmem2_page_store_after_persist not-synced unmap unmap 4120 8 pmem2_map_delete
"
fi

# run PROGRAM [sync]: `ntmem check` on it in a fresh directory; the JSON
# goes to a file of its own (the program's output stays in $out/$err),
# then the summary to $sum. Sets $got (the exit status) and $json_ok.
# The libpmem2 programs' granularity (pmem2_corpus.h): pmem2_page_* PAGE
# (msync), the others CACHE_LINE, as PMEM_IS_PMEM_FORCE=1 makes libpmem's
# file pmem; with "sync", PMEM_IS_PMEM_FORCE is not set.
run() {
	rm -rf "${tmp:?}/${1:?}"
	mkdir "$tmp/$1" || exit 1
	case $1 in
	pmem2_page_*) gran=PAGE ;;
	*) gran=CACHE_LINE ;;
	esac
	force=PMEM_IS_PMEM_FORCE=1
	[ "${2:-}" = sync ] && force=
	# shellcheck disable=SC2086 # $force: one word or none
	env $force PMEM2_FORCE_GRANULARITY=$gran \
		"$ntmem" check --json --report "$tmp/$1.json" \
		-- "$bindir/$1" "$tmp/$1" >"$out" 2>"$err"
	got=$?
	if python3 "$here/report_summary.py" "$tmp/$1.json" "$1" \
		>"$sum" 2>>"$err"; then json_ok=1; else json_ok=0; fi
}

# status WHAT: exit 0 passed through, and a report that parses.
status() {
	if [ "$got" -eq 0 ] && [ "$json_ok" = 1 ] &&
		grep -q '^status 0 ' "$sum"; then
		ok "$1: exit 0, passed through"
	else
		bad "$1: ntmem check exit $got, expected 0 (and a JSON report)"
		sed 's/^/# /' "$err" "$sum" 2>/dev/null
	fi
}

# check_bug WHAT NAME KINDS WHEN OFFSET LENGTH POINT: the last run reported
# exactly this one bug, and its frames reach the program.
check_bug() {
	what=$1 name=$2 kinds=$3 when=$4 off=$5 len=$6 point=$7
	want="$when $off $len $name.pmem $point"
	bugs=$(grep '^bug ' "$sum" 2>/dev/null)
	n=$(printf '%s' "$bugs" | grep -c '^bug ')
	if [ "$n" -ne 1 ] || ! grep -q '^status 0 errors 1 ' "$sum"; then
		bad "$what: $n bug records (errors: $(awk '/^status/ { print $4 }' "$sum")), expected 1: $kinds $want"
		sed 's/^/# /' "$sum"
	fi
	[ "$n" -ge 1 ] || return
	# the first record without "bug" and the frame fields
	rec=$(printf '%s\n' "$bugs" | head -1 | sed 's/^bug //; s/ at=.*//')
	match=0
	for kind in $(echo "$kinds" | tr , ' '); do
		[ "$rec" = "$kind $want" ] && match=1
	done
	if [ "$match" = 1 ]; then ok "$what: $rec"
	else bad "$what: got '$rec', expected '$kinds $want'"; fi
	# A report at exit names no frame of the persistence point (exit
	# handlers run below main's caller); the page's first store always
	# has one.
	case $when in
	exit) frames_want="first_store=yes" ;;
	*) frames_want="at=yes first_store=yes" ;;
	esac
	frames=$(printf '%s\n' "$bugs" | head -1 | sed 's/.* at=/at=/')
	ok_frames=1
	for w in $frames_want; do
		case " $frames " in *" $w "*) ;; *) ok_frames=0 ;; esac
	done
	if [ "$ok_frames" = 1 ]; then
		ok "$what: frames reach the program ($frames)"
	else
		bad "$what: frames do not reach the program ($frames)"
		python3 -m json.tool "$tmp/$name.json" | sed 's/^/# /'
	fi
}

# fixed_clean NAME [HOW]: the last run, NAME's twin's, reported no bug.
fixed_clean() {
	status "${1}_fixed${2:-}"
	if grep -q '^status 0 errors 0 bugs 0$' "$sum"; then
		ok "${1}_fixed${2:-}: no bug record"
	else
		bad "${1}_fixed${2:-}: bug records, expected none"
		sed 's/^/# /' "$sum"
	fi
}

# The table splits into lines (the list is expanded once, with IFS a
# newline), each line into words.
oldifs=$IFS
IFS='
'
for line in $corpus; do
	IFS=$oldifs
	# shellcheck disable=SC2086 # split the line into its fields
	set -- $line
	name=$1 kinds=$2 when=$3 eager_when=$4 off=$5 len=$6 point=$7

	unset NTMEM_CHECK_EAGER
	run "$name"
	status "$name"
	check_bug "$name" "$name" "$kinds" "$when" "$off" "$len" "$point"

	NTMEM_CHECK_EAGER=1
	export NTMEM_CHECK_EAGER
	run "$name"
	status "$name (eager)"
	check_bug "$name (eager)" "$name" "$kinds" "$eager_when" "$off" "$len" \
		"$point"
	unset NTMEM_CHECK_EAGER

	run "${name}_fixed"
	fixed_clean "$name"
done

# --- frames a user can act on ---------------------------------------------
# With elfutils' libdw in the tool, each frame reads "function file:line"
# (from the program's DWARF line table; a store in an inlined function as
# "store8 corpus.h:N, inlined in main missing_flush.c:15"), in the text
# report and in the JSON's added "<key>_src" arrays; every key the library
# wrote stays.
if ldd "$ntmem" 2>/dev/null | grep -q 'libdw\.so'; then
	src=$(cd "$here" && pwd)/missing_flush.c
	line=$(grep -n 'store8(p);' "$src" | cut -d: -f1)
	rm -rf "${tmp:?}/missing_flush" && mkdir "$tmp/missing_flush"
	PMEM_IS_PMEM_FORCE=1 "$ntmem" check -- "$bindir/missing_flush" \
		"$tmp/missing_flush" >"$out" 2>"$err"
	inl="(store8 [^ ]*/corpus\.h:[0-9]+, inlined in )?"
	if grep -qE "^    first store: ${inl}main $src:$line \(" "$err"; then
		ok "missing_flush: the first store in main at $src:$line"
	else
		bad "missing_flush: no frame \"first store: main $src:$line\""
		sed 's/^/# /' "$err"
	fi
	run missing_flush
	if grep -qE "\"first_store_src\":\[\"${inl}main $src:$line\"" "$tmp/missing_flush.json" &&
		grep -qF '"first_store":["main+' "$tmp/missing_flush.json" &&
		grep -qE '"backtrace_src":\["([^"]*, inlined in )?main [^"]*missing_flush.c:[0-9]' \
			"$tmp/missing_flush.json"; then
		ok "missing_flush: --json adds first_store_src and backtrace_src, keeps first_store"
	else
		bad "missing_flush: --json lacks the symbolized frames"
		sed 's/^/# /' "$tmp/missing_flush.json"
	fi
else
	echo "ok # SKIP the tool is built without libdw: frames stay module+offset"
fi

# --- behind a page cache ------------------------------------------------
# On a disk file system; where there is none to write to (a kernel
# guest's bare root) these runs skip.
if ! disk=$(mktemp -d "${NTMEM_DISK_TMPDIR:-/var/tmp}/ntmem-check-XXXXXX" 2>/dev/null); then
	echo "ok # SKIP behind a page cache: no disk directory to write to"
	exit $fail
fi
trap 'rm -f "$out" "$err"; rm -rf "$tmp" "$disk"' EXIT
unset PMEM_IS_PMEM_FORCE
tmp_force=$tmp
tmp=$disk
IFS='
'
for line in $sync_corpus; do
	IFS=$oldifs
	# shellcheck disable=SC2086 # split the line into its fields
	set -- $line
	name=$1 kind=$2 when=$3 off=$4 len=$5 point=$6
	for eager in 0 1; do
		if [ "$eager" = 1 ]; then
			NTMEM_CHECK_EAGER=1
			export NTMEM_CHECK_EAGER
			how=" (page cache, eager)"
		else
			unset NTMEM_CHECK_EAGER
			how=" (page cache)"
		fi
		run "$name" sync
		status "$name$how"
		check_bug "$name$how" "$name" "$kind" "$when" "$off" "$len" "$point"
	done
	unset NTMEM_CHECK_EAGER
	run "${name}_fixed" sync
	fixed_clean "$name" " (page cache)"
done
tmp=$tmp_force

exit $fail
