# shellcheck shell=sh disable=SC2154 # build, src, root: kernel-stage.sh's
# SPDX-License-Identifier: MIT
#
# kernel-stage-full.sh - what the guest of make check-kernel-full needs
# beyond the main one's root, sourced by scripts/kernel-stage.sh when
# NTMEM_KERNEL_STAGE_FULL=1 (its $build, $src, $root, copy_elf and die):
#
#   /stage-full.sh      tests/kernel/stage-full.sh
#   /full-tests.sh      one "full_test GROUP NAME TIMEOUT VAR=VALUE... --
#                       CMD..." line per test of make check the full stage
#                       runs, taken from meson's own list (meson
#                       introspect --tests), so each runs with the
#                       arguments and environment meson gives it; paths
#                       into BUILD become /ntmem/..., into the sources
#                       /ntmem-src/...; meson runs a test in BUILD, the
#                       stage in /ntmem
#   /ntmem/...          the programs and files those commands name
#   /ntmem-src/tests/   the shell tests (*/check_*.sh, lib/cli_lib.sh)
#   /usr/bin/python3    Debian's python3 with the part of its library the
#                       CLI suites' JSON checks import (json, math, os,
#                       signal, sys), not the whole 50 MiB of it
#
# Only the full boot's root has them: the main one stays small.

# The tests, by meson's names. GROUP "once": the crash-image and recorder
# tests, whose images are in memory (their file namespaces go in /dev/shm
# and /tmp, and on DAX /tmp the disk kinds skip), and the test programs
# that work in memory and /dev/shm: run once, with /tmp on ext4 -o dax.
# GROUP "each": the CLI suites, ntmem check's corpora (libpmem's and
# libpmemobj's) and the test programs that make their files in a scratch
# directory (/tmp or $NTMEM_TEST_SCRATCH): run on each DAX file system. The record suite's other runs (record_copy
# and record_invalidate under each ISA and write-back ceiling, record_pmem
# under each PMEM_* variable) check the CPU's copy paths, which no kernel
# changes: make check runs them, the full stage does not.
# NTMEM_KERNEL_FULL_TESTS, a list of names, keeps only those (to try one
# test's change in the guest).
FULL_ONCE="crash crash_applog crash_torn_sector btt_crash_two_lanes
btt_crash_one_lane btt_crash_lazy record_blk
record_ns record_memmap record_btt record_domain record_domain_cpu_cache
record_pmemblk_force1 record_pmemblk_force0 record_pmem record_copy
record_invalidate btt blk_btt memmap threads invalidate"
FULL_EACH="cli cli_parse cli_faults cli_memmap cli_blk cli_domain cli_check
ns blk blk_faults badblocks badblocks_sysfs embed mc persist_domain
pmem_compat pmemblk_compat check_corpus check_pmemobj"

cp "$src/tests/kernel/stage-full.sh" "$root/stage-full.sh"
chmod 755 "$root/stage-full.sh"
# The shell tests of every folder of tests/ at their relative paths (they
# source ../lib/cli_lib.sh), with ntmem check's report reader
# (tests/check/report_summary.py).
for dir in "$src"/tests/*/; do
	sub=tests/$(basename "$dir")
	for f in "$dir"*.sh "$dir"*.py; do
		[ -f "$f" ] || continue
		mkdir -p "$root/ntmem-src/$sub"
		cp "$f" "$root/ntmem-src/$sub/"
	done
done

# Each line of the generator's standard output is "elf REL" or "file REL":
# a file of BUILD one of the commands names.
# (The generator is python3's standard input: meson's list is a file.)
intro=$root/meson-tests.json
meson introspect "$build" --tests >"$intro" || die "meson introspect --tests $build failed"
wanted=$(python3 - "$intro" "$build" "$src" "$root/full-tests.sh" \
	"$FULL_ONCE" "$FULL_EACH" "${NTMEM_KERNEL_FULL_TESTS:-}" <<'PY'
import json, os, shlex, sys

intro, build, src, out, once, each, only = sys.argv[1:8]
groups = {name: "once" for name in once.split()}
groups.update({name: "each" for name in each.split()})
if only:
    groups = {name: g for name, g in groups.items() if name in only.split()}
with open(intro) as f:
    tests = {t["name"]: t for t in json.load(f)}
missing = [n for n in groups if n not in tests]
if missing:
    print("not in this build: " + " ".join(missing), file=sys.stderr)

def guest(word, files):
    """WORD of a command or a variable, with the build's and the sources'
    paths made the guest's; a file of the build it names goes in FILES."""
    path = os.path.normpath(word if os.path.isabs(word) else os.path.join(build, word))
    if os.path.isfile(path):
        if path.startswith(build + "/"):
            files.add(os.path.relpath(path, build))
            return word if not os.path.isabs(word) else "/ntmem/" + os.path.relpath(path, build)
        if path.startswith(src + "/"):
            return "/ntmem-src/" + os.path.relpath(path, src)
    return word.replace(build, "/ntmem").replace(src, "/ntmem-src")

files = set()
with open(out, "w") as f:
    f.write("# make check's tests for stage-full.sh (scripts/kernel-stage-full.sh)\n")
    for name, group in groups.items():
        if name not in tests:
            continue
        t = tests[name]
        cmd = list(t["cmd"])
        # meson's sh is the host's; the guest's is busybox.
        if os.path.basename(cmd[0]) == "sh":
            cmd[0] = "sh"
        cmd = [cmd[0] if i == 0 and cmd[0] == "sh" else guest(w, files)
               for i, w in enumerate(cmd)]
        env = ["%s=%s" % (k, guest(v, files)) for k, v in sorted(t["env"].items())]
        f.write(" ".join(["full_test", group, name, str(t["timeout"] or 0)] +
                         [shlex.quote(w) for w in env + ["--"] + cmd]) + "\n")
for rel in sorted(files):
    with open(os.path.join(build, rel), "rb") as g:
        kind = "elf" if g.read(4) == b"\x7fELF" else "file"
    print(kind, rel)
PY
) || die "the full stage's test list could not be made"
rm -f "$intro"

# copy_build KIND REL: the file REL of BUILD at /ntmem/REL, once; for an
# ELF file (KIND elf) also the libraries of BUILD it loads (copy_elf
# copies only the system's), at their relative paths too. A library's
# other names (libpmem.so.1 of libpmem.so.1.0.0) become symlinks to it,
# as in BUILD: a test that checks which file its functions came from
# (dladdr, then realpath or the inode) must find the one it was told.
# (It recurses, so nothing is read from kind or rel after its loop.)
copy_build() {
	kind=$1 rel=$2
	[ -e "$root/ntmem/$rel" ] && [ ! -L "$root/ntmem/$rel" ] && return 0
	rm -f "$root/ntmem/$rel"
	if [ "$kind" = elf ]; then
		copy_elf "$build/$rel" "/ntmem/$rel"
	else
		mkdir -p "$root/ntmem/$(dirname "$rel")"
		cp -L "$build/$rel" "$root/ntmem/$rel"
	fi
	for alias in "$build/$(dirname "$rel")"/*; do
		[ -L "$alias" ] && [ "$(readlink -f "$alias")" = "$build/$rel" ] || continue
		ln -sf "$(basename "$rel")" "$root/ntmem/$(dirname "$rel")/$(basename "$alias")"
	done
	[ "$kind" = elf ] || return 0
	for lib in $(ldd "$build/$rel" | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p'); do
		lib=$(readlink -f "$lib")
		case "$lib" in "$build"/*) copy_build elf "${lib#"$build"/}" ;; esac
	done
}
echo "$wanted" | while read -r kind rel; do
	[ -z "$rel" ] || copy_build "$kind" "$rel"
done

# python3: Debian's interpreter (not whatever python3 comes first on this
# PATH) and the modules it loads, in an empty environment, for the
# imports of the CLI suites; the encodings package whole, as the guest's
# locale may pick another codec. A .pyc beside each .py saves compiling
# it under TCG.
py=/usr/bin/python3
if [ -x "$py" ]; then
	pyreal=$(readlink -f "$py")
	copy_elf "$pyreal" "$pyreal"
	ln -sf "$(basename "$pyreal")" "$root/usr/bin/python3"
	ln -sf /usr/bin/python3 "$root/bin/python3"
	pylib=$(env -i "$py" -c 'import os; print(os.path.dirname(os.__file__))')
	pytag=$(env -i "$py" -c 'import sys; print(sys.implementation.cache_tag)')
	for f in $(env -i "$py" -c 'import json, math, os, signal, sys
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None)
    if f:
        print(f)') $(find "$pylib/encodings" -name '*.py'); do
		case "$f" in "$pylib"/*) ;; *) continue ;; esac
		case "$f" in
		*.so) copy_elf "$f" "$f" ;;
		*.py)
			copy_lib "$f"
			pyc=$(dirname "$f")/__pycache__/$(basename "$f" .py).$pytag.pyc
			[ -f "$pyc" ] && copy_lib "$pyc"
			;;
		esac
	done
else
	echo "kernel-stage: note: $py not found: the CLI suites' JSON checks fail in the guest" >&2
fi
