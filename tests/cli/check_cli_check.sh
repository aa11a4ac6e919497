#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_cli_check.sh NTMEM - `ntmem check` as a user meets it, without the
# checking library: usage errors (exit 2, the argument named), a library
# directory that lacks the library (exit 2, named), a program that cannot
# be executed (127), --help. Then runs under a fake library directory made
# here (empty files named like the library: glibc warns that it cannot
# preload them and runs the program anyway) of small shell programs that
# stand in for the library: they append hand-written JSON records to
# $NTMEM_CHECK_REPORT and exit with a given status. Checked: the program's
# environment, the text report (each bug's frames under it, the summary
# line, performance notes only with --perf), --json (parsed by python3
# when there is one), --report FILE, exit statuses passed on (0, 3, 128+N
# for a signal), --error-exitcode, 4 for a run not checked in full (no
# start record, notes of kind unchecked or unwatched), signals forwarded
# to the program, and malformed lines shown as notes, never a crash.
# Files live in a fresh directory under /tmp.
set -u
ntmem=$1
# Absolute: one run starts from another directory.
case $ntmem in /*) ;; *) ntmem=$(pwd)/$ntmem ;; esac
# ok, bad, expect, err_names, json_ok; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
tmp=$(mktemp -d /tmp/ntmem-cli-check-XXXXXX) || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp"' EXIT
# Every run's report file is made in $TMPDIR: checked to be gone after.
mkdir "$tmp/tmpdir"
TMPDIR=$tmp/tmpdir
export TMPDIR
unset NTMEM_CHECK_LIBDIR
have_python=false
command -v python3 >/dev/null 2>&1 && have_python=true

# report_of: stderr of the last command without glibc's preload warnings.
# -a: a malformed line's bytes may be any, and the report shows them.
report_of() { grep -av "^ERROR: ld\.so: object " "$err"; }

# same TEXT_FILE DESCRIPTION: the report (report_of) is exactly the file.
same() {
	report_of >"$tmp/got"
	if cmp -s "$1" "$tmp/got"; then ok "$2"; else
		bad "$2"; diff "$1" "$tmp/got" | sed 's/^/# /'; fi
}

# has TEXT DESCRIPTION / lacks TEXT DESCRIPTION: a line of the report.
has() {
	if report_of | grep -aqF -- "$1"; then ok "$2"; else
		bad "$2: no '$1'"; report_of | sed 's/^/# /'; fi
}
lacks() {
	if report_of | grep -aqF -- "$1"; then
		bad "$2: '$1'"; report_of | sed 's/^/# /'; else ok "$2"; fi
}

tmpdir_empty() {
	if [ -z "$(ls -A "$TMPDIR")" ]; then ok "$1: the report file is removed"
	else bad "$1: left in TMPDIR: $(ls -A "$TMPDIR")"; fi
}

# --- help and usage errors -----------------------------------------------

expect 0 "check --help" "$ntmem" check --help
if grep -q "usage: ntmem check" "$out" && grep -q -- "--error-exitcode" "$out"
then ok "check --help prints the usage"; else bad "check --help prints the usage"; fi
if [ -s "$err" ]; then bad "check --help writes to stderr"; else
	ok "check --help writes nothing to stderr"; fi
expect 0 "ntmem --help" "$ntmem" --help
if grep -q "^  check " "$out" && grep -q "^  bench check " "$out"; then
	ok "--help lists check and bench check"; else
	bad "--help lists check and bench check"; fi
expect 0 "bench check --help" "$ntmem" bench check --help
if grep -q "fio" "$out" && grep -q "slowdown" "$out"; then
	ok "bench check --help says what it measures"; else
	bad "bench check --help says what it measures"; fi
if grep -q "pmemobj-tx" "$out" && grep -q -- "--workload" "$out"; then
	ok "bench check --help names the libpmemobj workloads"; else
	bad "bench check --help names the libpmemobj workloads"; fi

expect 2 "check without a program" "$ntmem" check
err_names "invalid PROGRAM '(none)'" "no program: named"
expect 2 "check -- without a program" "$ntmem" check --json --
err_names "invalid PROGRAM" "'--' and no program: named"
for v in 0 256 -1 1x abc 01; do
	expect 2 "--error-exitcode $v" "$ntmem" check --error-exitcode "$v" -- true
	err_names "invalid --error-exitcode '$v'" "--error-exitcode $v: named"
done
expect 2 "--error-exitcode without a value" "$ntmem" check --error-exitcode
err_names "invalid --error-exitcode '(none)'" "--error-exitcode alone: named"
expect 2 "an unknown option" "$ntmem" check --bogus -- true
err_names "invalid option '--bogus'" "--bogus: named"
expect 2 "--json=1" "$ntmem" check --json=1 -- true
err_names "invalid --json '1'" "--json=1: named"

# --- the library's directory ----------------------------------------------

expect 2 "NTMEM_CHECK_LIBDIR=/nonexistent" \
	env NTMEM_CHECK_LIBDIR=/nonexistent "$ntmem" check -- true
err_names "/nonexistent" "the missing directory is named"
err_names "NTMEM_CHECK_LIBDIR" "the variable is named"
mkdir "$tmp/half"
: >"$tmp/half/libntmem-watch.so.0"
expect 2 "a directory without the preload library" \
	env NTMEM_CHECK_LIBDIR="$tmp/half" "$ntmem" check -- true
err_names "$tmp/half" "the incomplete directory is named"
err_names "libntmem-watch-preload.so" "the missing file is named"
# Unset or empty, from a build tree: the build's own src/record/check.
tree=$(cd "$(dirname "$ntmem")/.." && pwd)
if [ -f "$tree/build.ninja" ] && [ -f "$tree/src/record/check/libntmem-watch.so.0" ]; then
	# (A sanitized build's shim would make the ASan runtime refuse to
	# start behind it: told not to check, it runs.)
	# (true loads no checking library: found, but nothing checked, 4.)
	expect 4 "NTMEM_CHECK_LIBDIR empty, ntmem of a build tree: its src/record/check" \
		env NTMEM_CHECK_LIBDIR= ASAN_OPTIONS=verify_asan_link_order=0 \
		"$ntmem" check -- true
fi
# Otherwise the compiled-in directory, named as --help names it.
installed=$("$ntmem" check --help | tr -d '\n' | sed -n 's/.*else in \(.*\)\.$/\1/p')
if [ -z "$installed" ]; then
	bad "check --help names the installed directory"
elif [ -f "$tree/build.ninja" ]; then
	echo "# skip - an ntmem in a build tree does not look there"
elif [ -f "$installed/libntmem-watch.so.0" ]; then
	echo "# skip - a checking library is installed in $installed"
else
	expect 2 "NTMEM_CHECK_LIBDIR empty: the installed directory" \
		env NTMEM_CHECK_LIBDIR= "$ntmem" check -- true
	err_names "$installed" "empty NTMEM_CHECK_LIBDIR: $installed is named"
fi

# A fake directory: the files exist (empty), so the check passes; glibc
# cannot preload an empty file, says so and runs the program anyway.
lib=$tmp/lib
mkdir "$lib"
: >"$lib/libntmem-watch.so.0"
: >"$lib/libntmem-watch-preload.so"
NTMEM_CHECK_LIBDIR=$lib
export NTMEM_CHECK_LIBDIR

expect 127 "a program that does not exist" "$ntmem" check -- "$tmp/missing"
err_names "cannot run '$tmp/missing'" "the missing program is named"
lacks "errors," "no summary for a program that never ran"
printf 'echo hi\n' >"$tmp/noexec"
chmod 644 "$tmp/noexec"
expect 127 "a program that is not executable" "$ntmem" check -- "$tmp/noexec"
err_names "cannot run '$tmp/noexec'" "the unexecutable program is named"
expect 127 "a program not in PATH" "$ntmem" check -- ntmem-no-such-program
err_names "ntmem-no-such-program" "the name looked up in PATH is named"
tmpdir_empty "a program that could not run"
expect 2 "--report in a missing directory" "$ntmem" check \
	--report "$tmp/no/such/file" -- touch "$tmp/ran"
err_names "invalid --report '$tmp/no/such/file'" "--report: named"
if [ -e "$tmp/ran" ]; then bad "--report unwritable: the program ran"
else ok "--report unwritable: said before the program runs"; fi

# --- the stand-in program -------------------------------------------------

# prog RECORDS STATUS [ARGS...]: what the library would do, by hand. It
# notes its environment and arguments, checks the report file is empty,
# private and appendable, appends RECORDS (PID replaced by its own pid,
# the pid ntmem check started) and exits with STATUS; STATUS "TERM" or
# "KILL" kills it with that signal instead.
cat >"$tmp/prog" <<'EOF'
#!/bin/sh
records=$1 status=$2
shift 2
dir=$(dirname "$0")
{
	echo "LD_PRELOAD=${LD_PRELOAD-unset}"
	echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH-unset}"
	echo "NTMEM_CHECK_WATCH=${NTMEM_CHECK_WATCH-unset}"
	echo "NTMEM_CHECK_REPORT=${NTMEM_CHECK_REPORT-unset}"
	echo "OTHER=${NTMEM_TEST_OTHER-unset}"
	echo "mode=$(stat -c %a "$NTMEM_CHECK_REPORT")"
	echo "size=$(stat -c %s "$NTMEM_CHECK_REPORT")"
	echo "args=$*"
} >"$dir/env"
sed "s/PID/$$/g" "$records" >>"$NTMEM_CHECK_REPORT" || exit 99
case $status in TERM | KILL) kill -"$status" $$; sleep 5 ;; esac
exit "$status"
EOF
chmod 755 "$tmp/prog"

# env_is LINE DESCRIPTION: the program's environment had LINE.
env_is() {
	if grep -qxF -- "$1" "$tmp/env"; then ok "$2"; else
		bad "$2: not '$1'"; sed 's/^/# /' "$tmp/env"; fi
}

# Two bugs, a performance note, a note: what a run with findings writes.
cat >"$tmp/bugs" <<'EOF'
{"type":"bug","kind":"not-written-back","when":"unmap","file":"/dev/shm/pool","offset":4096,"length":64,"address":"0x7f0000001000","point":"pmem_drain","backtrace":["pmem_drain+0x12 (/usr/lib/libpmem.so.1)","main+0x4c (/usr/bin/prog)"],"first_store":["main+0x33 (/usr/bin/prog)"],"pid":PID}
{"type":"perf","kind":"unchanged-write-back","count":10,"site":["pmem_flush+0x9 (/usr/lib/libpmem.so.1)","main+0x70 (/usr/bin/prog)"],"pid":PID}
{"type":"note","message":"checking of /dev/shm/other stopped","pid":PID}
{"type":"bug","kind":"never-written-back","when":"exit","file":null,"offset":0,"length":8,"address":"0x7f0000002000","point":"exit","backtrace":[],"first_store":["store+0x4 (/usr/bin/prog)","main+0x80 (/usr/bin/prog)"],"pid":PID}
EOF
# No findings: the library's start record alone (a checked run).
printf '%s\n' '{"type":"start","pid":PID}' >"$tmp/none"

# --- the program's environment --------------------------------------------

expect 0 "a run with no findings" env LD_PRELOAD= NTMEM_TEST_OTHER=kept \
	LD_LIBRARY_PATH= "$ntmem" check -- "$tmp/prog" "$tmp/none" 0 a "b c"
# glibc's loader warns only when the stand-in's interpreter is dynamically
# linked: a static /bin/sh (busybox's, in make check-kernel-full's guest)
# has no loader to say it.
if LD_PRELOAD=$lib/libntmem-watch-preload.so /bin/sh -c : 2>&1 |
	grep -q "cannot be preloaded"; then
	err_names "cannot be preloaded" "glibc warns about the empty preload file"
else
	ok "glibc warns about the empty preload file: skipped, /bin/sh is static"
fi
env_is "LD_PRELOAD=$lib/libntmem-watch-preload.so" "LD_PRELOAD: the interposers"
env_is "LD_LIBRARY_PATH=$lib" "LD_LIBRARY_PATH: the library's directory"
env_is "NTMEM_CHECK_WATCH=1" "NTMEM_CHECK_WATCH=1"
env_is "OTHER=kept" "the rest of the environment is kept"
env_is "mode=600" "the report file is private (0600)"
env_is "size=0" "the report file starts empty"
env_is "args=a b c" "the program's arguments are passed"
report=$(sed -n 's/^NTMEM_CHECK_REPORT=//p' "$tmp/env")
case $report in
"$TMPDIR"/*) ok "the report file is made in TMPDIR" ;;
*) bad "the report file $report is not in TMPDIR ($TMPDIR)" ;;
esac
if [ -e "$report" ]; then bad "$report is left"; else ok "the report file is removed"; fi
pid=$(report_of | sed -n 's/^ntmem check: 0 errors, 0 performance notes (pid \([0-9]*\))$/\1/p')
if [ -n "$pid" ] && [ "$(report_of | wc -l)" -eq 2 ] &&
	[ "$(report_of | head -n 1)" = "ntmem check: pid $pid exited 0" ]; then
	ok "no findings: how it ended and the summary line alone"; else
	bad "no findings: not the end and the summary line alone"; report_of | sed 's/^/# /'; fi

expect 0 "earlier LD_PRELOAD and LD_LIBRARY_PATH" \
	env LD_PRELOAD=/nonexistent/x.so LD_LIBRARY_PATH=/opt/a:/opt/b \
	"$ntmem" check -- "$tmp/prog" "$tmp/none" 0
env_is "LD_PRELOAD=$lib/libntmem-watch-preload.so:/nonexistent/x.so" \
	"LD_PRELOAD: the interposers first, the earlier one after"
env_is "LD_LIBRARY_PATH=$lib:/opt/a:/opt/b" \
	"LD_LIBRARY_PATH: the library's directory first"

# A relative NTMEM_CHECK_LIBDIR: absolute for the program, which may
# change directory.
(cd "$tmp" && NTMEM_CHECK_LIBDIR=lib "$ntmem" check -- ./prog none 0) \
	>"$out" 2>"$err"
env_is "LD_PRELOAD=$lib/libntmem-watch-preload.so" "a relative directory is made absolute"

expect 0 "options after PROGRAM are the program's" \
	"$ntmem" check "$tmp/prog" "$tmp/none" 0 --json --help
env_is "args=--json --help" "the program got --json --help"
has "0 errors, 0 performance notes" "without --, options after PROGRAM: not JSON"

# --- the text report ------------------------------------------------------

expect 3 "a run with findings, exit status 3" \
	"$ntmem" check -- "$tmp/prog" "$tmp/bugs" 3
pid=$(report_of | sed -n 's/^ntmem check: 2 errors, 1 performance note (pid \([0-9]*\))$/\1/p')
if [ -n "$pid" ]; then ok "the summary: 2 errors, 1 performance note"; else
	bad "the summary line"; report_of | sed 's/^/# /'; fi
cat >"$tmp/want" <<EOF
ntmem check: stored, not written back at pmem_drain, still not durable at unmap: /dev/shm/pool offset 4096 length 64
    at: pmem_drain+0x12 (/usr/lib/libpmem.so.1)
    at: main+0x4c (/usr/bin/prog)
    first store: main+0x33 (/usr/bin/prog)
ntmem check: note: checking of /dev/shm/other stopped
ntmem check: never written back before exit: anonymous memory at 0x7f0000002000 offset 0 length 8
    first store: store+0x4 (/usr/bin/prog)
    first store: main+0x80 (/usr/bin/prog)
ntmem check: pid $pid exited 3
ntmem check: 2 errors, 1 performance note (pid $pid)
EOF
same "$tmp/want" "each bug with its frames under it; no performance note without --perf"
tmpdir_empty "a run with findings"

expect 0 "--perf" "$ntmem" check --perf -- "$tmp/prog" "$tmp/bugs" 0
has "ntmem check: performance: 10 write-backs of lines that had not changed" \
	"--perf prints the performance note"
if report_of | grep -a -A2 "ntmem check: performance:" |
	grep -qxF "    at: main+0x70 (/usr/bin/prog)"; then
	ok "--perf: the note's call site under it"; else bad "--perf: the call site"; fi

# The other two kinds, and records of a second process.
cat >"$tmp/kinds" <<'EOF'
{"type":"bug","kind":"stored-after-write-back","when":"point","file":"/dev/shm/a","offset":128,"length":1,"address":"0x7f0000003080","point":"ntm_drain","backtrace":["main+0x1 (p)"],"first_store":["main+0x2 (p)"],"pid":PID}
{"type":"bug","kind":"not-fenced","when":"unmap","file":"/dev/shm/a","offset":0,"length":64,"address":"0x7f0000003000","point":"pmem_unmap","backtrace":["main+0x3 (p)"],"first_store":["main+0x4 (p)"],"pid":1}
EOF
expect 0 "every bug kind, two processes" "$ntmem" check -- "$tmp/prog" "$tmp/kinds" 0
has "ntmem check: stored again after its write-back at ntm_drain: /dev/shm/a offset 128 length 1 (pid " \
	"stored-after-write-back in words"
has "ntmem check: written back, not fenced before pmem_unmap: /dev/shm/a offset 0 length 64 (pid 1)" \
	"not-fenced in words, with the other process's pid"
if report_of | grep -aqE '^ntmem check: 2 errors, 0 performance notes \(pid [0-9]+, 1\)$'; then
	ok "the summary names both pids"; else bad "the summary names both pids"; fi

# --- --json and --report --------------------------------------------------

expect 3 "--json" "$ntmem" check --json -- "$tmp/prog" "$tmp/bugs" 3
report_of >"$out"
if $have_python; then
	json_ok "--json parses"
	if python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert sorted(doc) == ["checked", "ended", "errors", "exit_status", "judged",
                       "not_checked", "perf_notes", "reports"], doc
assert doc["checked"] == "all" and doc["not_checked"] is None, doc
assert doc["errors"] == 2 and doc["perf_notes"] == 1, doc
assert doc["exit_status"] == 3, doc
assert doc["ended"] == "exited 3" and doc["judged"] is False, doc
r = doc["reports"]
assert [x["type"] for x in r] == ["bug", "perf", "note", "bug"], r
assert r[0]["kind"] == "not-written-back" and r[0]["offset"] == 4096, r[0]
assert r[0]["backtrace"][1] == "main+0x4c (/usr/bin/prog)", r[0]
assert r[3]["file"] is None, r[3]
PY
	then ok "--json: counts, status and every record"; else bad "--json content"; fi
else
	if grep -q '"errors": 2, "perf_notes": 1, "exit_status": 3' "$out"; then
		ok "--json: counts and status (no python3 to parse it)"; else
		bad "--json: counts and status"; sed 's/^/# /' "$out"; fi
fi
lacks "ntmem check: " "--json: no text report"

expect 0 "--report FILE" "$ntmem" check --report "$tmp/report.txt" -- \
	"$tmp/prog" "$tmp/bugs" 0
lacks "ntmem check:" "--report: nothing on stderr"
if grep -q "^ntmem check: 2 errors, 1 performance note (pid [0-9]*)$" \
	"$tmp/report.txt" && grep -qxF "    first store: main+0x33 (/usr/bin/prog)" \
	"$tmp/report.txt"; then
	ok "--report: the text report is in FILE"; else
	bad "--report: FILE"; sed 's/^/# /' "$tmp/report.txt"; fi
expect 0 "--json --report FILE" "$ntmem" check --json --report "$tmp/r.json" \
	-- "$tmp/prog" "$tmp/none" 0
cp "$tmp/r.json" "$out"
if $have_python; then json_ok "--json --report: FILE parses"; fi
if grep -q '"errors": 0, "perf_notes": 0, "exit_status": 0, "ended": "exited 0", "judged": false, "reports": \[$' \
	"$tmp/r.json" && grep -q '^  {"type":"start","pid":[0-9]*}$' "$tmp/r.json" &&
	grep -q '^], "checked": "all", "not_checked": null}$' "$tmp/r.json"; then
	ok "--json, no findings: the start record alone, checked"; else
	bad "--json, no findings"; sed 's/^/# /' "$tmp/r.json"; fi

# --- exit statuses ----------------------------------------------------------

expect 0 "exit 0 passed on" "$ntmem" check -- "$tmp/prog" "$tmp/none" 0
expect 3 "exit 3 passed on" "$ntmem" check -- "$tmp/prog" "$tmp/none" 3
expect 143 "death by SIGTERM: 128+15" "$ntmem" check -- "$tmp/prog" "$tmp/bugs" TERM
has "2 errors, 1 performance note" "death by a signal: the report is still read"
expect 9 "--error-exitcode 9 with bugs" "$ntmem" check --error-exitcode 9 -- \
	"$tmp/prog" "$tmp/bugs" 0
expect 3 "--error-exitcode 9 without bugs: the program's status" \
	"$ntmem" check --error-exitcode 9 -- "$tmp/prog" "$tmp/none" 3
expect 143 "--error-exitcode 9, killed by a signal: 128+15" \
	"$ntmem" check --error-exitcode 9 -- "$tmp/prog" "$tmp/bugs" TERM
grep -v '"type":"bug"' "$tmp/bugs" >"$tmp/perf-only"
expect 0 "--error-exitcode 9, only notes: 0" \
	"$ntmem" check --error-exitcode 9 -- "$tmp/prog" "$tmp/perf-only" 0
# (A shell loads no checking library: a run not checked exits 4.)
expect 4 "--eager: NTMEM_CHECK_EAGER=1 for the program" "$ntmem" check --eager -- \
	sh -c 'test "$NTMEM_CHECK_EAGER" = 1'
expect 1 "without --eager: no NTMEM_CHECK_EAGER" env -u NTMEM_CHECK_EAGER \
	"$ntmem" check -- sh -c 'test -n "${NTMEM_CHECK_EAGER-}" && exit 0; exit 1'
expect 4 "a shell as PROGRAM: not checked" "$ntmem" check -- sh -c 'exit 0'
expect 5 "a shell's exit 5" "$ntmem" check -- sh -c 'exit 5'

# --- how the program ended ------------------------------------------------

# The library's end record (one per process) and the wait status: how the
# run ended, and whether its end was judged. A second process's end
# record names neither it nor its pid in the summary.
cat >"$tmp/end-_exit" <<'EOF'
{"type":"end","how":"_exit","status":7,"judged":1,"pid":PID}
{"type":"end","how":"_exit","status":0,"judged":1,"pid":1}
EOF
expect 7 "an end record: _exit(7)" "$ntmem" check -- "$tmp/prog" "$tmp/end-_exit" 7
pid=$(report_of | sed -n 's/^ntmem check: 0 errors, 0 performance notes (pid \([0-9]*\))$/\1/p')
if [ -n "$pid" ]; then ok "_exit: the summary names PROGRAM's pid alone"; else
	bad "_exit: the summary"; report_of | sed 's/^/# /'; fi
has "ntmem check: pid $pid exited 7 via _exit" "_exit: how it ended"
lacks "malformed" "an end record is a record of the contract"
expect 7 "an end record: _exit(7), --json" "$ntmem" check --json -- \
	"$tmp/prog" "$tmp/end-_exit" 7
has '"exit_status": 7, "ended": "exited 7 via _exit", "judged": true,' \
	"--json: ended and judged"
printf '%s\n' '{"type":"end","how":"signal","signal":"SIGTERM","judged":1,"pid":PID}' \
	>"$tmp/end-term"
expect 143 "an end record: SIGTERM" "$ntmem" check -- "$tmp/prog" "$tmp/end-term" TERM
has "killed by SIGTERM" "SIGTERM judged: how it ended"
lacks "not judged" "SIGTERM judged: not said to be unjudged"
printf '%s\n' '{"type":"end","how":"signal","signal":"SIGTERM","judged":0,"pid":PID}' \
	>"$tmp/end-term0"
expect 143 "an end record: SIGTERM, unjudged" "$ntmem" check -- "$tmp/prog" \
	"$tmp/end-term0" TERM
has "killed by SIGTERM, not judged: the signal came while the checker held its lock" \
	"SIGTERM unjudged: said"
expect 137 "SIGKILL: no end record" "$ntmem" check -- "$tmp/prog" "$tmp/none" KILL
has "killed by SIGKILL, not judged: what it left is not known" \
	"SIGKILL: killed, not judged"
expect 137 "SIGKILL, --json" "$ntmem" check --json -- "$tmp/prog" "$tmp/none" KILL
has '"exit_status": 137, "ended": "killed by SIGKILL, not judged: what it left is not known", "judged": false,' \
	"--json: SIGKILL unjudged"
printf '%s\n' '{"type":"start","pid":PID}' \
	'{"type":"end","how":"vanished","judged":1,"pid":PID}' >"$tmp/end-bad"
expect 0 "an end record of an unknown how" "$ntmem" check -- "$tmp/prog" \
	"$tmp/end-bad" 0
has "malformed at byte" "an unknown how: a malformed line"

# A note that watching stopped: its words, and its keys kept for --json.
printf '%s\n' '{"type":"start","pid":PID}' '{"type":"note","kind":"unwatched","message":"/dev/shm/pool offset 0 length 8192: no longer watched: mremap() of a mapping only partly watched","file":"/dev/shm/pool","offset":0,"length":8192,"pid":PID}' \
	>"$tmp/unwatched"
# Checked in part: exit 4, and the summary says so.
expect 4 "an unwatched note" "$ntmem" check -- "$tmp/prog" "$tmp/unwatched" 0
has "ntmem check: note: /dev/shm/pool offset 0 length 8192: no longer watched: mremap() of a mapping only partly watched" \
	"unwatched: the note in words"
has "ntmem check: checked in part, 1 part of mappings not watched: 0 errors, 0 performance notes (pid " \
	"unwatched: checked in part, said"
expect 3 "an unwatched note, exit 3: the program's status" "$ntmem" check -- \
	"$tmp/prog" "$tmp/unwatched" 3
expect 4 "an unwatched note, --json" "$ntmem" check --json -- "$tmp/prog" \
	"$tmp/unwatched" 0
has '"kind":"unwatched",' "--json: the unwatched note's kind"
has '"length":8192,' "--json: the unwatched note's length"
has '"checked": "part", "not_checked": "1 part of mappings not watched"}' \
	"--json: checked in part, and why"

# A checking library that could not watch ("kind":"unchecked"), and no
# start record: nothing checked, exit 4, never "0 errors".
printf '%s\n' '{"type":"note","kind":"unchecked","message":"cannot find libc'"'"'s sigaction: not in it: nothing is watched","pid":PID}' \
	>"$tmp/unchecked"
expect 4 "an unchecked note" "$ntmem" check -- "$tmp/prog" "$tmp/unchecked" 0
has "ntmem check: note: cannot find libc's sigaction: not in it: nothing is watched" \
	"unchecked: the note in words"
has "ntmem check: not checked: the checking library could not watch anything (see the note) (pid " \
	"unchecked: not checked, said"
lacks "errors," "unchecked: no error count"
expect 4 "an unchecked note, --json" "$ntmem" check --json -- "$tmp/prog" \
	"$tmp/unchecked" 0
has '"checked": "none", "not_checked": "the checking library could not watch anything (see the note)"}' \
	"--json: checked none, and why"
# One process watched, another could not: checked in part.
printf '%s\n' '{"type":"start","pid":1}' >>"$tmp/unchecked"
expect 4 "a start record and an unchecked note" "$ntmem" check -- "$tmp/prog" \
	"$tmp/unchecked" 0
has "ntmem check: checked in part, 1 process not watched: 0 errors" \
	"a process not watched: checked in part, said"
# No record at all: no process loaded the checking library.
: >"$tmp/empty"
expect 4 "no record at all" "$ntmem" check -- "$tmp/prog" "$tmp/empty" 0
has "ntmem check: not checked: no process loaded the checking library (pid " \
	"no record: not checked, said"
expect 4 "no record at all, --error-exitcode 9" "$ntmem" check \
	--error-exitcode 9 -- "$tmp/prog" "$tmp/empty" 0

# --- signals forwarded ------------------------------------------------------

# The program traps SIGTERM and exits 7: ntmem check's status is 7 only
# when it passed the signal on (dying of it itself would be 143).
cat >"$tmp/waiter" <<'EOF'
#!/bin/sh
dir=$(dirname "$0")
trap 'echo "$1" >"$dir/got"; exit 7' TERM HUP
echo started >"$dir/started"
i=0
while [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
exit 1
EOF
chmod 755 "$tmp/waiter"
for sig in TERM HUP; do
	rm -f "$tmp/started" "$tmp/got"
	"$ntmem" check -- "$tmp/waiter" "$sig" >"$out" 2>"$err" &
	bg=$!
	i=0
	while [ ! -e "$tmp/started" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -"$sig" "$bg"
	wait "$bg"
	got=$?
	if [ "$got" -eq 7 ] && [ "$(cat "$tmp/got" 2>/dev/null)" = "$sig" ]; then
		ok "SIG$sig is passed on to the program"
	else
		bad "SIG$sig: exit $got, expected 7 (the program's trap)"
		report_of | sed 's/^/# /'
	fi
	has "not checked: no process loaded the checking library" \
		"after SIG$sig: the summary"
done
tmpdir_empty "the signalled runs"

# --- malformed lines ---------------------------------------------------------

# One bad line each, then one good bug: each becomes a note naming its
# line, and the good record after them still counts.
{
	printf '%s\n' 'not json'
	printf '%s\n' '{"type":"bug"'
	printf '%s\n' '{"type":"bug","kind":"bogus","when":"point","file":null,"offset":0,"length":1,"address":"0x1","point":"x","backtrace":[],"first_store":[],"pid":PID}'
	printf '%s\n' '{"type":"bug","kind":"not-fenced","when":"exit","file":null,"offset":0,"length":1,"address":"0x1","point":"exit","backtrace":[],"first_store":[],"pid":PID,}'
	printf '%s\n' '{"type":"note","message":"dup","message":"dup","pid":PID}'
	printf '%s\n' '{"type":"note","message":"x","pid":-1}'
	printf '%s\n' '{"type":"note","message":"x","pid":1.5}'
	printf '%s\n' '{"type":"note","message":"x","pid":PID} trailing'
	printf '%s\n' '{"type":"note","message":{"nested":1},"pid":PID}'
	printf '%s\n' '{"type":"note","message":"lone \udc00 surrogate","pid":PID}'
	printf '%s\n' '{"type":"note","message":"bad \q escape","pid":PID}'
	printf '%s\n' '{"type":"note","message":"unterminated,"pid":PID}'
	printf '%s\n' '{"type":"note","pid":PID}'
	printf '%s\n' '{"type":"mystery","message":"x","pid":PID}'
	printf '%s\n' '[1,2]'
	printf '{"type":"note","message":"nul \000 byte","pid":1}\n'
	printf '\001\377\376 binary\n'
	printf '{"type":"note","message":"'
	head -c 300000 /dev/zero | tr '\0' a
	printf '\n'
	printf '%s\n' '{"type":"bug","kind":"not-written-back","when":"point","file":"/dev/shm/ok","offset":64,"length":64,"address":"0x40","point":"pmem_persist","backtrace":[],"first_store":[],"pid":PID}'
	printf '%s\n' '{"type":"note","message":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/","extra":[],"more":null,"pid":PID}'
	printf '\n'
	printf '{"type":"note","message":"no newline at the end","pid":PID}'
} >"$tmp/junk"
nbad=18
expect 0 "malformed lines" "$ntmem" check -- "$tmp/prog" "$tmp/junk" 0
n=$(report_of | grep -ac "^ntmem check: note: report line [0-9]* malformed")
if [ "$n" -eq "$nbad" ]; then ok "each of the $nbad malformed lines is a note"; else
	bad "$n malformed-line notes, expected $nbad"; report_of | cut -c1-200 | sed 's/^/# /'; fi
has "ntmem check: note: report line 1 malformed at byte 1 (expected '{'), ignored: not json" \
	"a malformed line's note names the line, the byte and what was expected"
has "ntmem check: stored, not written back at pmem_persist: /dev/shm/ok offset 64 length 64" \
	"the good record after the malformed ones"
has "ntmem check: note: café 😀 \"q\" \\ /" "escapes decoded (\\u, surrogate pairs)"
has "ntmem check: note: no newline at the end" "a last line without a newline"
has "ntmem check: 1 error, 0 performance notes" "malformed lines: the summary"
expect 0 "malformed lines, --json" "$ntmem" check --json -- "$tmp/prog" "$tmp/junk" 0
report_of >"$out"
if $have_python; then
	json_ok "malformed lines: --json still parses"
	if python3 - "$out" "$nbad" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
notes = [r for r in doc["reports"] if r["type"] == "note"
         and "malformed" in r["message"]]
assert len(notes) == int(sys.argv[2]), len(notes)
assert doc["errors"] == 1, doc["errors"]
assert any(r.get("more", 0) is None for r in doc["reports"]), "unknown keys kept"
PY
	then ok "--json: the notes, the bug, unknown keys kept"; else
		bad "--json of malformed lines"; fi
fi

exit $fail
