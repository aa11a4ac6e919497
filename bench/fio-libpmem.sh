#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fio-libpmem.sh - fio's libpmem engine on PMDK's libpmem.so.1 and on
# ntmem's drop-in, side by side in one run. A benchmark, not a test.
#
# usage: bench/fio-libpmem.sh [BUILD_DIR] [--runtime S] [--size SIZE]
#                             [--repeat N] [--json]
#
#   BUILD_DIR    meson build directory holding compat/libpmem/libpmem.so.1
#                (default: build)
#   --runtime S  seconds per fio run (default 5)
#   --size SIZE  file size, in fio's syntax (default 1g)
#   --repeat N   runs per job and library (default 1); the table shows the
#                median, and min-max when N > 1
#   --json       machine-readable results instead of the table
#
# Every job runs once on PMDK's library (whatever the system's loader
# finds, LD_LIBRARY_PATH unset) and once with LD_LIBRARY_PATH=BUILD_DIR/
# compat/libpmem, alternating (PMDK first in odd repeats, ntmem first in
# even ones), on the same file in /dev/shm with PMEM_IS_PMEM_FORCE=1 (tmpfs
# is not pmem, and fio's engine refuses a file that is not). Jobs, 4 KiB
# blocks, one thread, iodepth 1:
#   write/randwrite with --direct=1 --sync=1 (non-temporal copies, drained)
#   write/randwrite with fio's defaults (temporal copies, not drained)
#   read/randread (plain memcpy from the mapping in fio: the mapping's cost)
# Random jobs use --norandommap. The file is filled with data once before
# the first job, so no run reads holes. Other PMEM_* variables in the
# environment apply to both libraries. DRAM-backed, so the ratios say how
# the two libraries' copy paths compare on this CPU, not what pmem does.
set -eu

usage() {
	sed -n 's/^# \{0,1\}//; /^usage:/,/^$/p' "$0" >&2
	exit 2
}

build=build runtime=5 size=1g repeat=1 json=0 build_set=0
while [ $# -gt 0 ]; do
	case $1 in
	--runtime) [ $# -ge 2 ] || usage; runtime=$2; shift 2 ;;
	--size) [ $# -ge 2 ] || usage; size=$2; shift 2 ;;
	--repeat) [ $# -ge 2 ] || usage; repeat=$2; shift 2 ;;
	--json) json=1; shift ;;
	-h | --help) usage ;;
	-*) echo "fio-libpmem: unknown option '$1'" >&2; usage ;;
	*) [ $build_set = 0 ] || usage; build=$1 build_set=1; shift ;;
	esac
done
case $runtime in '' | *[!0-9]* | 0) echo "fio-libpmem: --runtime takes whole seconds > 0, not '$runtime'" >&2; exit 2 ;; esac
case $repeat in '' | *[!0-9]* | 0) echo "fio-libpmem: --repeat takes a count > 0, not '$repeat'" >&2; exit 2 ;; esac

die() { echo "fio-libpmem: $*" >&2; exit 1; }

fio=$(command -v fio) ||
	die "fio not found; install it with: apt-get install fio"
command -v python3 >/dev/null 2>&1 ||
	die "python3 not found; install it with: apt-get install python3"
[ -f "$build/compat/libpmem/libpmem.so.1" ] ||
	die "$build/compat/libpmem/libpmem.so.1 not found; build it first (make, or ninja -C $build)"
libdir=$(cd "$build/compat/libpmem" && pwd)
if ldd "$libdir/libpmem.so.1" 2>/dev/null | grep -q 'lib[at]san\.so'; then
	die "$libdir/libpmem.so.1 is built with a sanitizer: benchmark a plain build"
fi
env -u LD_LIBRARY_PATH "$fio" --enghelp 2>/dev/null | grep -qw libpmem ||
	die "$fio has no libpmem engine (Debian's fio package has it)"

# Which library each side really loads.
pmdk_lib=$(env -u LD_LIBRARY_PATH ldd "$fio" | awk '$1 == "libpmem.so.1" { print $3 }')
ntmem_lib=$(LD_LIBRARY_PATH=$libdir ldd "$fio" | awk '$1 == "libpmem.so.1" { print $3 }')
case $pmdk_lib in
'' | not) die "fio finds no libpmem.so.1 of its own (apt-get install libpmem1)" ;;
esac
[ "$ntmem_lib" = "$libdir/libpmem.so.1" ] ||
	die "with LD_LIBRARY_PATH=$libdir fio loads '$ntmem_lib', not ntmem's"
[ "$pmdk_lib" != "$ntmem_lib" ] ||
	die "without LD_LIBRARY_PATH fio loads ntmem's $pmdk_lib: no PMDK to compare with"

# The file must fit in /dev/shm.
bytes=$(python3 -c '
import re, sys
m = re.fullmatch(r"(\d+)([kmgt]?)i?b?", sys.argv[1].lower())
if not m:
    sys.exit(1)
print(int(m.group(1)) << 10 * " kmgt".index(m.group(2) or " "))' "$size") ||
	die "--size '$size': a number with an optional k, m, g or t suffix"
avail=$(( $(df -Pk /dev/shm | awk 'NR == 2 { print $4 }') * 1024 ))
[ "$bytes" -le "$avail" ] ||
	die "--size $size does not fit in /dev/shm ($avail bytes free)"

tmp=$(mktemp -d) || exit 1
file=$(mktemp /dev/shm/ntmem-fio-libpmem-XXXXXX) || exit 1
trap 'rm -rf "$tmp"; rm -f "$file"' EXIT
trap 'exit 130' INT TERM

# run LIB OUT FIO_OPTIONS...: one fio run on LIB (pmdk or ntmem), JSON to OUT.
run() {
	lib=$1 outf=$2
	shift 2
	if [ "$lib" = ntmem ]; then
		set -- env LD_LIBRARY_PATH="$libdir" "$@"
	else
		set -- env -u LD_LIBRARY_PATH "$@"
	fi
	if ! "$@" --output="$outf" >"$tmp/stdout" 2>"$tmp/stderr"; then
		echo "fio-libpmem: fio failed on $lib: $*" >&2
		cat "$tmp/stdout" "$tmp/stderr" "$outf" >&2 2>/dev/null
		exit 1
	fi
}

common="--ioengine=libpmem --filename=$file --size=$size --thread --numjobs=1"
common="$common --iodepth=1 --group_reporting --output-format=json"

# Fill the file once (PMDK, not timed): no job reads holes.
# shellcheck disable=SC2086 # common is a list of options
run pmdk "$tmp/fill.json" PMEM_IS_PMEM_FORCE=1 "$fio" --name=fill \
	$common --rw=write --bs=1m

# [name] [rw] [options]
jobs="write-nt-drain write --direct=1,--sync=1
randwrite-nt-drain randwrite --direct=1,--sync=1,--norandommap
write-default write -
randwrite-default randwrite --norandommap
read read -
randread randread --norandommap"

[ "$json" = 1 ] || echo "fio --ioengine=libpmem: $size file in /dev/shm, bs 4k," \
	"1 thread, ${runtime} s per run, $repeat run(s) per library" >&2
echo "$jobs" | while read -r name rw opts; do
	[ "$opts" = - ] && opts=
	opts=$(echo "$opts" | tr ',' ' ')
	r=1
	while [ "$r" -le "$repeat" ]; do
		if [ $((r % 2)) = 1 ]; then order="pmdk ntmem"; else order="ntmem pmdk"; fi
		for lib in $order; do
			[ "$json" = 1 ] || printf '  %s on %s (%d/%d)\n' "$name" "$lib" "$r" "$repeat" >&2
			# shellcheck disable=SC2086 # common and opts are lists
			run "$lib" "$tmp/$name.$lib.$r.json" PMEM_IS_PMEM_FORCE=1 \
				"$fio" --name="$name" $common --rw="$rw" --bs=4k \
				--runtime="$runtime" --time_based $opts
		done
		r=$((r + 1))
	done
done

python3 - "$tmp" "$json" "$pmdk_lib" "$ntmem_lib" "$size" "$runtime" "$repeat" "$jobs" <<'EOF'
import json, statistics, sys

tmp, as_json, pmdk_lib, ntmem_lib, size, runtime, repeat, jobs = sys.argv[1:]
repeat = int(repeat)
rows = []
for line in jobs.splitlines():
    name, rw, opts = line.split()
    side = "read" if "read" in rw else "write"
    runs = {}
    for lib in ("pmdk", "ntmem"):
        runs[lib] = []
        for r in range(1, repeat + 1):
            with open(f"{tmp}/{name}.{lib}.{r}.json") as f:
                job = json.load(f)["jobs"][0]
            if job.get("error"):
                sys.exit(f"fio-libpmem: {name} on {lib}: fio error {job['error']}")
            runs[lib].append(job[side]["iops"] / 1000.0)
    p = statistics.median(runs["pmdk"])
    n = statistics.median(runs["ntmem"])
    rows.append({
        "job": name, "rw": rw,
        "options": [] if opts == "-" else opts.split(","),
        "pmdk_kiops": round(p, 1), "ntmem_kiops": round(n, 1),
        "ratio": round(n / p, 3) if p else None,
        "pmdk_runs_kiops": [round(x, 1) for x in runs["pmdk"]],
        "ntmem_runs_kiops": [round(x, 1) for x in runs["ntmem"]],
    })

if as_json == "1":
    json.dump({"engine": "libpmem", "bs": 4096, "size": size,
               "runtime_s": int(runtime), "repeat": repeat,
               "file_system": "/dev/shm (tmpfs, PMEM_IS_PMEM_FORCE=1)",
               "pmdk_lib": pmdk_lib, "ntmem_lib": ntmem_lib, "jobs": rows},
              sys.stdout, indent=2)
    print()
    sys.exit(0)

def cell(med, runs):
    if len(runs) == 1:
        return f"{med:.1f}"
    return f"{med:.1f} ({min(runs):.0f}-{max(runs):.0f})"

print(f"PMDK:  {pmdk_lib}")
print(f"ntmem: {ntmem_lib}")
head = ("job", "PMDK kIOPS", "ntmem kIOPS", "ntmem/PMDK")
body = [(r["job"], cell(r["pmdk_kiops"], r["pmdk_runs_kiops"]),
         cell(r["ntmem_kiops"], r["ntmem_runs_kiops"]),
         f"{r['ratio']:.2f}" if r["ratio"] is not None else "-") for r in rows]
w = [max(len(x[i]) for x in [head] + body) for i in range(4)]
for x in [head] + body:
    print(f"{x[0]:<{w[0]}}  {x[1]:>{w[1]}}  {x[2]:>{w[2]}}  {x[3]:>{w[3]}}")
if repeat > 1:
    print(f"median of {repeat} runs, (min-max)")
EOF
