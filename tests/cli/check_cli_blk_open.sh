#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_cli_blk_open.sh NTMEM - `ntmem bench blk --open` on a disk file
# system of its own: a small sparse XFS (else ext4) image in a fresh
# directory under /tmp, loop-mounted there. Tiny pools (64m, 128m): the
# form of the table and of --json (every pool x ntmem, pmdk, x_pmdk row,
# the files' allocated and written KiB), the pools removed after, and the
# refusals: a --dir on a tmpfs (exit 2, named), a pool larger than the
# free space (exit 1, the size named, nothing created) and the options
# --open does not take. Never a timing. Needs root and a loop device:
# else it skips (77).
set -u
ntmem=$1
# ok, bad, expect, err_names, json_ok; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"

[ "$(id -u)" = 0 ] || { echo "SKIP: not root (mounts a loop device)"; exit 77; }
mkfs=$(command -v mkfs.xfs || command -v mkfs.ext4) ||
	{ echo "SKIP: neither mkfs.xfs nor mkfs.ext4"; exit 77; }
tmp=$(mktemp -d /tmp/ntmem-cli-blk-open-XXXXXX) || exit 1
mnt=$tmp/mnt shm=$tmp/shm
trap 'rm -f "$out" "$err"; umount "$mnt" "$shm" 2>/dev/null; rm -rf "$tmp"' EXIT
mkdir "$mnt" "$shm"
truncate -s 1g "$tmp/img"
if ! "$mkfs" -q "$tmp/img" >/dev/null 2>&1 && ! "$mkfs" -q -F "$tmp/img" >/dev/null 2>&1; then
	echo "SKIP: $mkfs failed"; exit 77; fi
mount -o loop "$tmp/img" "$mnt" 2>/dev/null ||
	{ echo "SKIP: no loop mount here"; exit 77; }
ok "a $(basename "$mkfs") image loop-mounted"

# Nothing but the pools' own files may appear; lost+found is ext4's.
left() { find "$mnt" -mindepth 1 ! -path "$mnt/lost+found*"; }

expect 0 "bench blk --open --sizes 64m,128m --json" "$ntmem" bench blk \
	--open --sizes 64m,128m --dir "$mnt" --json
json_ok "--open --json parses"
if python3 - "$out" <<'PY'
import json, math, sys
doc = json.load(open(sys.argv[1]))
rows, meta = doc["rows"], doc["meta"]
# PMDK's is there unless the meta line says why not (not found, or
# LD_LIBRARY_PATH putting ntmem's drop-in first).
pmdk = meta["pmdk"].startswith("/")
impls = ["ntmem", "pmdk", "x_pmdk"] if pmdk else ["ntmem"]
got = [(r["pool"], r["impl"]) for r in rows]
assert got == [(p, i) for p in ("64m", "128m") for i in impls], got
times = ("create_ms", "open_ms", "first_write_ms", "close_ms", "reopen_ms",
         "first_read_ms")
for r in rows:
    for k in times:
        assert r[k] is not None and r[k] >= 0 and math.isfinite(r[k]), (k, r)
    if r["impl"] == "x_pmdk":
        continue
    kib = {"64m": 65536, "128m": 131072}[r["pool"]]
    # Both libraries allocate a new pool whole (posix_fallocate)...
    assert r["alloc_create_kib"] >= kib and r["alloc_kib"] >= kib, r
    # ...and write into it its header and descriptor, then at the first
    # write the BTT (its map's zeros spared: the file was new): well
    # under the pool's size, where the file system tells written extents.
    if r["written_kib"] is not None:
        assert 0 < r["written_create_kib"] <= r["written_kib"] < kib / 2, r
PY
then ok "--open rows: each pool x ntmem, pmdk, x_pmdk, figures in range"
else bad "--open rows: '$(cat "$out")'"; fi
if [ -z "$(left)" ]; then ok "--open removes its pools"; else
	bad "--open left files"; left | sed 's/^/# /'; fi

expect 0 "bench blk --open (table, --bs 512, --no-pmdk)" "$ntmem" bench blk \
	--open --sizes 64m --bs 512 --no-pmdk --dir "$mnt"
if grep -q "^pool  *impl  *create_ms  *open_ms  *first_write_ms" "$out" &&
	grep -q "^64m  *ntmem " "$out" && ! grep -q "pmdk  " "$out" &&
	grep -q "block size 512" "$out"; then
	ok "--open table: its header, the ntmem row alone under --no-pmdk"
else bad "--open table: '$(cat "$out")'"; fi

# --- refusals ------------------------------------------------------------

if mount -t tmpfs -o size=1m ntmem-test "$shm" 2>/dev/null; then
	expect 2 "--open on a tmpfs" "$ntmem" bench blk --open --sizes 64m \
		--dir "$shm"
	err_names "invalid --dir '$shm'" "the tmpfs --dir is named"
	err_names "tmpfs" "the refusal says why"
	if [ -z "$(find "$shm" -mindepth 1)" ]; then ok "nothing made on the tmpfs"
	else bad "files made on the tmpfs"; fi
else
	bad "cannot mount a tmpfs to check the refusal"
fi
expect 1 "--open with a pool larger than the free space" "$ntmem" bench blk \
	--open --sizes 64m,600g --dir "$mnt"
err_names "644245094400 bytes" "the largest pool's size is named"
err_names "$mnt" "the --dir is named"
if [ -s "$out" ]; then bad "a table when it does not fit: '$(cat "$out")'"
else ok "no table when it does not fit"; fi
expect 2 "--sizes without --open" "$ntmem" bench blk --sizes 64m --dir "$mnt"
err_names "invalid --sizes" "--sizes without --open is named"
for opt in "--btt" "--size 64m" "--ops 10" "--domain cpu_cache"; do
	# shellcheck disable=SC2086 # the option and its value, split
	expect 2 "--open $opt" "$ntmem" bench blk --open --sizes 64m --dir "$mnt" $opt
	err_names "invalid ${opt%% *}" "--open $opt is named"
done
expect 2 "--open --bs 1k" "$ntmem" bench blk --open --sizes 64m --bs 1k \
	--dir "$mnt"
err_names "invalid --bs '1024'" "--open --bs 1k is named"
expect 2 "--open --sizes 1m" "$ntmem" bench blk --open --sizes 1m --dir "$mnt"
err_names "invalid --sizes" "a pool below 16 MiB is named"
if [ -z "$(left)" ]; then ok "refused runs make no pool"; else
	bad "refused runs left files"; left | sed 's/^/# /'; fi

exit "$fail"
