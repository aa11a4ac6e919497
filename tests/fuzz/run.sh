#!/bin/sh
# SPDX-License-Identifier: MIT
#
# run.sh HARNESS SEEDS WORKDIR - run one libFuzzer harness: every input in
# the checked-in SEEDS directory first, then new inputs for FUZZ_SECONDS
# (default 5). Inputs it finds are kept in WORKDIR/corpus/NAME (so a later
# run starts from them) and a crash is saved in WORKDIR/artifacts/NAME/,
# with the command that reproduces it printed at the end.
set -eu
harness=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seeds=$2 work=$3
name=$(basename "$harness")
secs=${FUZZ_SECONDS:-5}
corpus=$work/corpus/$name
artifacts=$work/artifacts/$name
mkdir -p "$corpus" "$artifacts"

# libFuzzer exits 77 on a crash by default, which meson reads as "skipped":
# every failure is exit status 1 here. UBSan aborts on its first finding
# instead of printing and going on. ASan stays off SIGBUS so ntm_copy_mc()
# (under the block device's reads) keeps the handler it installs.
UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
ASAN_OPTIONS=handle_sigbus=0:allow_user_segv_handler=1
export UBSAN_OPTIONS ASAN_OPTIONS
# The first directory receives new inputs: never the checked-in seeds.
if "$harness" -max_total_time="$secs" -timeout=20 -error_exitcode=1 \
	-timeout_exitcode=1 -print_final_stats=1 \
	-artifact_prefix="$artifacts/" "$corpus" "$seeds"; then
	exit 0
fi
echo "run.sh: $name failed; rerun the input it saved with:" >&2
for crash in "$artifacts"/*; do
	[ -f "$crash" ] && echo "  $harness $crash" >&2
done
echo "(each harness prints what it expected before libFuzzer's report)" >&2
exit 1
