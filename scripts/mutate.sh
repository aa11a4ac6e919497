#!/bin/sh
# SPDX-License-Identifier: MIT
#
# mutate.sh - the mutation proof of DESIGN.md's durability model: every
# write-back and every fence on a durability path is deleted, one at a
# time, and the recorder tests (meson suite "record") must fail each time.
# A test that compares bytes cannot see a missing write-back; a mutant
# that survives means a path no recorder test checks, or a write-back or
# fence the recorder never hears about.
#
#   scripts/mutate.sh --list       the mutation sites, then the count
#                                  (with --short: those of the short form)
#   scripts/mutate.sh              every mutant (make mutate)
#   scripts/mutate.sh --short      the fixed subset of make check (below)
#
# Options:
#   --dir DIR       keep the scratch tree and its build in DIR (DIR/src,
#                   DIR/build) and reuse them next time: only the files
#                   that changed are copied and rebuilt. Without it, a
#                   fresh temporary directory is made and removed.
#   --suite NAME    a meson suite that must fail for a mutant to be
#                   killed; may be repeated (default: record)
#   --timeout SECS  per mutant; default five times the unmutated run
#                   plus a minute. A mutant that times out is killed.
#   --site FILE:LINE  only the site(s) on that line (repeatable)
#   -v              print every mutant's outcome, not only survivors
#
# How a mutant is made: the scratch tree is a copy of the work tree's
# files (never the work tree itself: the engineers' edits stay untouched,
# and a run that is interrupted leaves nothing behind there). A build
# directory is configured once for it; each mutant replaces one call with
# `(void)0` (a statement) or `0` (an expression: `ret = ntm_ns_persist(...)`
# becomes `ret = 0`, claiming success without the work), then `meson test`
# rebuilds only the objects that changed and runs the suite; then the file
# is restored. Outcomes:
#   killed     the suite failed or timed out
#   survived   the suite passed
#   unbuilt    nothing the suite runs was rebuilt: the site is not compiled
#              into any recorder test (counted as a survivor: no test can
#              see it)
#   error      the mutant did not compile (a bug in this script's edit;
#              counted as a survivor, so it cannot hide)
#
# Exit: 0 every mutant killed, 1 a mutant survived, 2 the setup failed
# (unmutated tests fail, no recorder tests, bad options).
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

# --- the sites ----------------------------------------------------------------

# Where durability paths live: the library, its headers, the drop-in, and
# the examples whose commit protocols the crash images prove.
scan_roots="src include compat examples"

# Not durability paths, so never scanned or skipped below:
#   tests/, tests/fuzz/  the checks themselves (they call ntm_persist() to
#                        set a state up, not to claim it)
#   tools/               the CLI: its benchmarks time write-backs and
#                        fences; `ntmem blk` goes through blk.c, scanned
#   bench/               plots
# Skipped by skip_file():
#   src/record/  the recorder's wing (the model, the crash engine, the
#       checker of ntmem check): it models the cache; deleting a line
#       there tests the checker, not a path that makes data durable
#   examples/descriptors.c  its fence orders stores before an in-process
#       flag (the README's example of publishing); it claims no durability
#   the other architecture's files: not compiled on this host, so a
#       mutant there could not change what the tests run
skip_file() {
	case "$1" in
	src/record/*) return 0 ;;
	examples/descriptors.c) return 0 ;;
	esac
	# Only this machine's architecture is built (and recorded): another
	# one's sites cannot be mutated here.
	case "$(uname -m)" in
	x86_64 | amd64)
		case "$1" in src/portable/* | include/ntmem/arch/generic.h | \
			src/aarch64/* | include/ntmem/arch/aarch64.h) return 0 ;; esac ;;
	aarch64 | arm64)
		case "$1" in src/portable/* | include/ntmem/arch/generic.h | \
			src/x86_64/* | include/ntmem/arch/x86_64.h) return 0 ;; esac ;;
	*)
		case "$1" in src/x86_64/* | include/ntmem/arch/x86_64.h | \
			src/aarch64/* | include/ntmem/arch/aarch64.h) return 0 ;; esac ;;
	esac
	return 1
}

# The pattern list. A site is a call (in a function body, outside comments
# and strings) of:
#   - a function that writes back or fences (ntmem's and the drop-in's),
#     or that runs a whole durability step (ntm_ns_persist, ...):
calls="ntm_flush_lines ntm_flush ntm_drain ntm_persist ntm_arch_drain"
calls="$calls ntm_ns_persist ntm_blk_flush persist_range"
calls="$calls pmem_flush pmem_drain pmem_persist drain_unless"
calls="$calls pmem_deep_flush pmem_deep_drain pmem_deep_persist"
#     (libpmem2's PAGE granularity persists with page_persist(), its
#     msync(), in persist.c: a copy that skips it leaves the pages to the
#     kernel's write-back);
calls="$calls page_persist"
calls="$calls __atomic_thread_fence __sync_synchronize"
#   - msync(), which makes a page-cache-backed namespace durable (record_ns
#     intercepts it and checks the range it was given);
calls="$calls msync"
calls_re=$(printf '%s' "$calls" | tr ' ' '|')
#   - a primitive named after its instruction (clwb_line(), _mm_sfence(),
#     __builtin_ia32_clflushopt(), ...): the write-back loops' bodies;
insn="clwb|clflushopt|clflush|sfence|mfence|cvap|cvac|cvadp"
#   - a write-back through a function pointer named flush (d->flush(...)),
#     or a persist through one named persist_fn (a libpmem2 map's:
#     map->persist_fn(...), the async copies' persist step, the deep flush);
#   - an asm statement whose text holds one of those instructions (or the
#     Arm ones: dc cvap/cvac, dsb) - unless the function it sits in also
#     has an NTM_REC(): then it is a recorded primitive (ntmem/hook.h), the
#     instruction and its record are deleted together only by deleting a
#     call of the primitive, and those calls are the sites. An instruction
#     in a function without NTM_REC() is a site of its own: the recorder
#     never hears of it, so its mutant survives and says so.
asm_insn="clwb|clflushopt|clflush|sfence|mfence|dc[ \\t]+cva[cdp]+|dsb"

# scan.awk: one program for listing and mutating, so both agree on what a
# site is. A site is numbered per line (nth) in case two share one.
# shellcheck disable=SC2016 # awk's own $0 and $1, not the shell's
scan_awk='
# Comments and the insides of string and character literals become
# spaces (same length), so nothing in them matches or counts as a paren.
function mask(s,    out, i, n, c, q) {
	out = ""; n = length(s); i = 1
	while (i <= n) {
		c = substr(s, i, 1)
		if (incomment) {
			if (c == "*" && substr(s, i + 1, 1) == "/") {
				out = out "  "; i += 2; incomment = 0
			} else {
				out = out " "; i++
			}
			continue
		}
		if (c == "/" && substr(s, i + 1, 1) == "*") {
			out = out "  "; i += 2; incomment = 1; continue
		}
		if (c == "/" && substr(s, i + 1, 1) == "/") {
			while (i <= n) { out = out " "; i++ }
			break
		}
		if (c == "\"" || c == "\047") {
			q = c; out = out c; i++
			while (i <= n) {
				c = substr(s, i, 1)
				if (c == "\\") { out = out "  "; i += 2; continue }
				if (c == q) break
				out = out " "; i++
			}
			if (i <= n) { out = out q; i++ }
			continue
		}
		out = out c; i++
	}
	return out
}
function squeeze(s) {
	gsub(/[ \t]+/, " ", s); sub(/^ /, "", s); sub(/ $/, "", s)
	return s
}
{
	raw[NR] = $0
	m[NR] = mask($0)
	# The top-level block (function) each line belongs to, and whether
	# that block records (has an NTM_REC call).
	if (depth == 0 && m[NR] ~ /\{/)
		block++
	blk[NR] = block
	if (m[NR] ~ /NTM_REC[ \t]*\(/)
		recorded[block] = 1
	t = m[NR]
	depth += gsub(/\{/, "", t)
	t = m[NR]
	depth -= gsub(/\}/, "", t)
	if (depth < 0)
		depth = 0
}
# Balance the paren at line l, column c; sets EL, EC to the closing one.
function close_paren(l, c,    d, k, s, ch) {
	d = 0
	for (; l <= NR; l++) {
		s = m[l]
		for (k = c; k <= length(s); k++) {
			ch = substr(s, k, 1)
			if (ch == "(") d++
			else if (ch == ")" && --d == 0) { EL = l; EC = k; return 1 }
		}
		c = 1
	}
	return 0
}
function extent(l, c, el, ec,    s, k) {
	if (l == el)
		return substr(raw[l], c, ec - c + 1)
	s = substr(raw[l], c)
	for (k = l + 1; k < el; k++)
		s = s " " raw[k]
	return s " " substr(raw[el], 1, ec)
}
END {
	site_re = "\\((" calls ")\\)[ \t]*\\(|(" calls ")[ \t]*\\(|" \
		"[A-Za-z0-9_]*(" insn ")[A-Za-z0-9_]*[ \t]*\\(|" \
		"([A-Za-z_][A-Za-z0-9_]*(->|\\.))+(flush|persist_fn)[ \t]*\\(|" \
		"(__asm__|asm)[ \t]*(volatile|__volatile__)?[ \t]*\\("
	applied = 0
	for (l = 1; l <= NR; l++) {
		# Calls are in function bodies, which are indented; column 0
		# holds definitions and declarations. Directives are no sites.
		if (raw[l] !~ /^[ \t]/ || raw[l] ~ /^[ \t]*#/)
			continue
		pos = 1; nth = 0
		while (match(substr(m[l], pos), site_re)) {
			start = pos + RSTART - 1
			open = start + RLENGTH - 1
			pos = open + 1
			if (start > 1 && substr(m[l], start - 1, 1) ~ /[A-Za-z0-9_]/)
				continue
			if (!close_paren(l, open))
				continue
			code = extent(l, start, EL, EC)
			if (substr(m[l], start) ~ /^(__asm__|asm)[ \t(]/) {
				if (code !~ "\"[ \t]*(" asm_insn ")([ \t;%\\\\]|\")")
					continue
				if (recorded[blk[l]]) {
					if (mode == "list")
						printf "%s\t%d\t0\tprimitive\t%s\n", FILENAME, l, squeeze(code)
					continue
				}
			}
			nth++
			if (mode == "list") {
				printf "%s\t%d\t%d\tsite\t%s\n", FILENAME, l, nth, squeeze(code)
				continue
			}
			if (l != line || nth != want)
				continue
			pre = substr(raw[l], 1, start - 1)
			post = substr(raw[EL], EC + 1)
			stmt = post ~ /^[ \t]*;/ && \
				(pre ~ /^[ \t]*$/ || pre ~ /(\)|else|;|\{|\}|:)[ \t]*$/)
			raw[l] = pre (stmt ? "(void)0" : "0") post
			for (k = l + 1; k <= EL; k++)
				raw[k] = ""
			applied = 1
			break
		}
	}
	if (mode == "list")
		exit 0
	for (l = 1; l <= NR; l++)
		print raw[l]
	exit applied ? 0 : 3
}'

# scan_files DIR: the files of the durability paths under DIR, one a line.
# In a git checkout the tracked (and new, unignored) files; otherwise every
# C file. Sorted, so the site numbers and the short form are stable.
source_files() {
	# git only at the top of a work tree: the scratch copy may sit inside
	# one (make check's build-mutate/), where ls-files lists nothing.
	if [ -e "$1/.git" ]; then
		# shellcheck disable=SC2086 # the roots are meant to split
		git -C "$1" ls-files --cached --others --exclude-standard -- $scan_roots
	else
		# shellcheck disable=SC2086 # the roots are meant to split
		(cd "$1" && find $scan_roots -type f)
	fi | sort -u
}

scan_files() {
	source_files "$1" | while read -r f; do
		case "$f" in *.c | *.h | *.S) ;; *) continue ;; esac
		[ -f "$1/$f" ] || continue
		skip_file "$f" && continue
		echo "$f"
	done
}

# list_sites DIR: "file<TAB>line<TAB>nth<TAB>kind<TAB>code" for each
# site (kind "site") and each recorded primitive (kind "primitive").
list_sites() {
	scan_files "$1" | while read -r f; do
		(cd "$1" && awk -v mode=list -v calls="$calls_re" -v insn="$insn" \
			-v asm_insn="$asm_insn" "$scan_awk" "$f")
	done
}

# mutant DIR FILE LINE NTH: print FILE with that site deleted.
mutant() {
	(cd "$1" && awk -v mode=mutate -v line="$3" -v want="$4" \
		-v calls="$calls_re" -v insn="$insn" -v asm_insn="$asm_insn" \
		"$scan_awk" "$2")
}

# --- the short form -----------------------------------------------------------

# make check runs a fixed subset: the first site (in line order) of each
# file, so every file on a durability path has one of its deletions checked
# on every run, and make check grows by well under a minute on two cores
# (measured: 25-35 s for 10 of 41 sites, with a cold build directory too).
# `make mutate` runs all of them.
short_subset() {
	awk -F '\t' '!seen[$1]++'
}

# --- options ------------------------------------------------------------------

usage() {
	sed -n '/^#   scripts/,/^# How/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

list=0 short=0 verbose=0 dir="" timeout="" suites="" only=""
while [ $# -gt 0 ]; do
	case "$1" in
	--list) list=1 ;;
	--short) short=1 ;;
	--dir) [ $# -ge 2 ] || usage; dir=$2; shift ;;
	--suite) [ $# -ge 2 ] || usage; suites="$suites $2"; shift ;;
	--timeout) [ $# -ge 2 ] || usage; timeout=$2; shift ;;
	--site) [ $# -ge 2 ] || usage; only="$only $2"; shift ;;
	-v) verbose=1 ;;
	*) usage ;;
	esac
	shift
done
suites=${suites# }
[ -n "$suites" ] || suites=record

if [ "$list" -eq 1 ]; then
	if [ "$short" -eq 1 ]; then
		list_sites "$root" | awk -F '\t' '$4 == "site"' | short_subset
	else
		list_sites "$root"
	fi >"${TMPDIR:-/tmp}/mutate-list.$$"
	awk -F '\t' '
		$4 == "site" { printf "%3d  %s:%s  %s\n", ++n, $1, $2, $5 }
		$4 == "primitive" { p[++np] = sprintf("     %s:%s  %s", $1, $2, $5) }
		END {
			printf "%d sites\n", n
			if (np) {
				print "recorded primitives (instruction and record " \
				      "deleted through the calls above):"
				for (i = 1; i <= np; i++) print p[i]
			}
		}' "${TMPDIR:-/tmp}/mutate-list.$$"
	rm -f "${TMPDIR:-/tmp}/mutate-list.$$"
	exit 0
fi

# --- the scratch tree ---------------------------------------------------------

for s in $suites; do suite_args="${suite_args:-} --suite $s"; done
made_dir=0
if [ -z "$dir" ]; then
	dir=$(mktemp -d "${TMPDIR:-/tmp}/ntmem-mutate.XXXXXX")
	made_dir=1
fi
mkdir -p "$dir/src"
dir=$(cd "$dir" && pwd)
src=$dir/src bld=$dir/build
# One run at a time in a kept directory: two would mutate each other's
# files. The lock goes with the descriptor when the script exits.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$dir/lock"
	if ! flock -n 9; then
		echo "mutate: $dir is in use by another run; waiting" >&2
		flock 9
	fi
fi
# The file a mutant is in, while it is mutated: put back on any exit.
current=""
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$current" ]; then
		cp "$dir/pristine" "$src/$current"
	fi
	if [ "$made_dir" -eq 1 ]; then
		rm -rf "$dir"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Every file a build could read: in a git checkout the tracked ones (as
# they are in the work tree, edits included) and new unignored ones;
# otherwise everything but build directories. Never the scratch directory
# itself, wherever it is.
all_files() {
	case "$dir/" in "$root"/*) inside=${dir#"$root"/} ;; *) inside="" ;; esac
	if git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$root" ls-files --cached --others --exclude-standard
	else
		(cd "$root" && find . -path ./.git -prune -o -path './build*' -prune \
			-o -type f -print | sed 's|^\./||')
	fi | while read -r f; do
		case "$f" in "$inside"/* | "$inside") [ -n "$inside" ] && continue ;; esac
		[ -f "$root/$f" ] && echo "$f"
	done | sort -u
}

# Copy only what differs, so a kept build directory rebuilds only that;
# remove what is gone. A file left mutated by a killed run differs too.
sync_tree() {
	all_files >"$dir/files"
	while read -r f; do
		if ! cmp -s "$root/$f" "$src/$f"; then
			mkdir -p "$src/$(dirname "$f")"
			cp "$root/$f" "$src/$f"
		fi
	done <"$dir/files"
	(cd "$src" && find . -type f | sed 's|^\./||' | sort) |
		comm -23 - "$dir/files" | while read -r f; do rm -f "$src/$f"; done
}

# run_suite LOG TIMEOUT [meson test options]: the suites, with a time
# limit (each test also has its own meson timeout). Sets rc: 0 passed,
# 125 did not build, 124 or 137 timed out, other: tests failed.
run_suite() {
	log=$1 limit=$2
	shift 2
	set +e
	# shellcheck disable=SC2086 # suite_args is a list of options
	timeout -k 10 "$limit" meson test -C "$bld" $suite_args \
		--print-errorlogs "$@" >"$log" 2>&1
	rc=$?
	set -e
}

# nothing_built LOG: each of meson test's builds of the tests' targets
# in LOG had no work (the "no work to do" before each is the check of
# build.ninja itself).
nothing_built() {
	awk '/^ninja: Entering directory/ { e = 1; builds++; next }
		e && /^ninja: no work to do/ { idle++ }
		{ e = 0 }
		END { exit !(builds && idle == builds) }' "$1"
}

now() { date +%s; }
t0=$(now)

sync_tree
if [ ! -f "$bld/build.ninja" ]; then
	# No -Dwerror: a deleted call can leave a parameter unused, and a
	# warning must not pass for a killed mutant.
	if ! meson setup "$bld" "$src" -Dwerror=false >"$dir/setup.log" 2>&1; then
		cat "$dir/setup.log" >&2
		echo "mutate: meson setup failed" >&2
		exit 2
	fi
fi

# shellcheck disable=SC2086
if ! meson test -C "$bld" $suite_args --list >"$dir/tests.txt" 2>&1 ||
	! grep -q . "$dir/tests.txt"; then
	cat "$dir/tests.txt" >&2
	echo "mutate: no tests in suite(s) $suites: nothing could kill a mutant" >&2
	exit 2
fi

# The unmutated tree must pass, or every mutant would look killed.
b0=$(now)
run_suite "$dir/baseline.log" "${timeout:-3600}"
base=$(($(now) - b0))
if [ "$rc" -ne 0 ]; then
	cat "$dir/baseline.log" >&2
	echo "mutate: the unmutated tree fails suite(s) $suites (exit $rc)" >&2
	exit 2
fi
[ -n "$timeout" ] || timeout=$((5 * base + 60))

# The suite's tests by their unmutated time: the quick ones (under
# SLOW_SECS) run first for each mutant, the slow ones only if no quick
# one failed. meson starts the tests of highest priority first, the long
# crash-image runs, and with 2 cores every other test waited for them: a
# mutant the recorder test of its own file kills took 8-13 s, 2-4 s now.
SLOW_SECS=3
awk -v slow="$SLOW_SECS" '
	{
		if (!match($0, /"name": "[^"]*"/))
			next
		name = substr($0, RSTART + 9, RLENGTH - 10)
		sub(/.* \/ /, "", name)
		if (!match($0, /"duration": [0-9.e+-]+/))
			next
		secs = substr($0, RSTART + 12, RLENGTH - 12) + 0
		print (secs < slow ? "quick" : "slow"), name
	}' "$bld/meson-logs/testlog.json" >"$dir/test-times"
quick_tests=$(awk '$1 == "quick" { print $2 }' "$dir/test-times")
slow_tests=$(awk '$1 == "slow" { print $2 }' "$dir/test-times")
if [ -z "$quick_tests$slow_tests" ]; then
	echo "mutate: no test times in $bld/meson-logs/testlog.json" >&2
	exit 2
fi

# run_mutant LOG: the quick tests, then, if they passed, the slow ones;
# both outputs in LOG, rc as run_suite's.
run_mutant() {
	: >"$1.slow"
	rc=0
	if [ -n "$quick_tests" ]; then
		# shellcheck disable=SC2086 # lists of test names
		run_suite "$1" "$timeout" --maxfail 1 $quick_tests
	else
		: >"$1"
	fi
	if [ "$rc" -eq 0 ] && [ -n "$slow_tests" ]; then
		# shellcheck disable=SC2086
		run_suite "$1.slow" "$timeout" --maxfail 1 $slow_tests
	fi
	cat "$1.slow" >>"$1"
}

# --- the mutants --------------------------------------------------------------

list_sites "$src" | awk -F '\t' '$4 == "site"' >"$dir/sites"
if [ "$short" -eq 1 ]; then
	short_subset <"$dir/sites" >"$dir/run"
else
	cp "$dir/sites" "$dir/run"
fi
if [ -n "$only" ]; then
	for s in $only; do
		awk -F '\t' -v s="$s" '$1 ":" $2 == s' "$dir/run"
	done >"$dir/run.only"
	mv "$dir/run.only" "$dir/run"
fi
total=$(wc -l <"$dir/run")
[ "$total" -gt 0 ] || { echo "mutate: no sites selected" >&2; exit 2; }

echo "mutate: $total mutants of $(wc -l <"$dir/sites") sites; suite(s) $suites" \
	"(unmutated: ${base}s, limit ${timeout}s each)"
killed=0 n=0
: >"$dir/survivors"
# Read from descriptor 3: the tests must not eat the list on stdin.
while IFS="$(printf '\t')" read -r file line nth _kind code <&3; do
	n=$((n + 1))
	cp "$src/$file" "$dir/pristine"
	current=$file
	if ! mutant "$dir/src" "$file" "$line" "$nth" \
		>"$dir/mutant" || cmp -s "$dir/mutant" "$dir/pristine"; then
		echo "mutate: could not delete $file:$line ($code)" >&2
		exit 2
	fi
	cp "$dir/mutant" "$src/$file"
	m0=$(now)
	run_mutant "$dir/mutant.log"
	secs=$(($(now) - m0))
	# Put the file back with a new time stamp, so ninja rebuilds it.
	cp "$dir/pristine" "$src/$file"
	current=""

	if [ "$rc" -eq 0 ] && nothing_built "$dir/mutant.log"; then
		outcome=unbuilt
	elif [ "$rc" -eq 0 ]; then
		outcome=survived
	elif [ "$rc" -eq 125 ]; then
		outcome=error
	elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		outcome="killed (timed out)"
	else
		# " 3/9 ntmem:record / record_copy  FAIL  0.2s  exit status 1"
		by=$(awk '$3 == "/" && $5 ~ /^(FAIL|TIMEOUT|UNEXPECTEDPASS)$/ {
			print $4; exit }' "$dir/mutant.log")
		outcome="killed${by:+ by $by}"
	fi
	case "$outcome" in
	killed*)
		killed=$((killed + 1))
		[ "$verbose" -eq 0 ] ||
			printf '[%d/%d] %s  %s:%s  %s (%ss)\n' "$n" "$total" \
				"$outcome" "$file" "$line" "$code" "$secs"
		;;
	*)
		printf '[%d/%d] %s  %s:%s  %s (%ss)\n' "$n" "$total" \
			"$outcome" "$file" "$line" "$code" "$secs"
		printf '%s\t%s:%s\t%s\n' "$outcome" "$file" "$line" "$code" \
			>>"$dir/survivors"
		if [ "$outcome" = error ]; then
			sed -n '/FAILED:/,$p' "$dir/mutant.log" | head -n 20
		fi
		;;
	esac
done 3<"$dir/run"

echo "mutants: $killed killed / $total ($(($(now) - t0))s)"
if [ "$killed" -ne "$total" ]; then
	echo "surviving mutants (the deleted code; no recorder test noticed):"
	awk -F '\t' '{ printf "  %-9s %s  %s\n", $1, $2, $3 }' "$dir/survivors"
	exit 1
fi
exit 0
