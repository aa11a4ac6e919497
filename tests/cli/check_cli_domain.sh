#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_cli_domain.sh NTMEM - persistence domains as a user meets them:
# `ntmem info` on a fake sysfs tree (--sysfs: regions saying cpu_cache,
# memory_controller, nothing, no attribute, one unreadable; region2 listed
# before region10), on a tree without an nd bus, in text and JSON, with
# NTMEM_PERSIST_DOMAIN set, unset and misspelt; a tree whose regions,
# buses and providers exist only there, of which every region line is and
# where nothing of /sys appears; `ntmem bench blk --domain`
# (its direct-<domain> rows, bad values) and the dispatched rows of
# `ntmem bench copy` in tiny runs.
set -u
ntmem=$1
# ok, bad, expect, err_names, json_ok, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"
scratch_dir ntmem-cli-domain
sys=$tmp/sys

# region NAME DOMAIN|-|unreadable: an nd region linked from the bus.
region() {
	mkdir -p "$sys/devices/ndbus0/$1" "$sys/bus/nd/devices"
	case $2 in
	-) ;;
	unreadable) mkdir "$sys/devices/ndbus0/$1/persistence_domain" ;;
	*) printf '%s\n' "$2" >"$sys/devices/ndbus0/$1/persistence_domain" ;;
	esac
	ln -s "../../../devices/ndbus0/$1" "$sys/bus/nd/devices/$1"
}
region region10 memory_controller
region region2 ''
region region1 cpu_cache
region region3 -
region region4 unreadable

# --- ntmem info ------------------------------------------------------------

expect 0 "info --sysfs (fake tree)" env NTMEM_PERSIST_DOMAIN= "$ntmem" info \
	--sysfs "$sys"
if grep -q '^persist domain: *memory_controller .*NTMEM_PERSIST_DOMAIN not set' "$out"
then ok "info: memory_controller without the variable"
else bad "info: persist domain line"; sed 's/^/# /' "$out"; fi
if [ "$(sed -n '/^nd regions:/,$p' "$out" | sed 's/^nd regions: *//; s/^ *//')" = \
"region1 cpu_cache
region2 none
region3 none
region4 unreadable (Is a directory)
region10 memory_controller" ]; then ok "info lists each region's domain, in order"
else bad "info region lines"; sed 's/^/# /' "$out"; fi

expect 0 "info --json --sysfs" "$ntmem" info --json --sysfs "$sys"
json_ok "info --json parses"
if python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["persist_domain"] == "memory_controller", doc
assert doc["persist_domain_override"] is None, doc
got = [(r["name"], r.get("persistence_domain", "error" in r and "error"))
       for r in doc["regions"]]
assert got == [("region1", "cpu_cache"), ("region2", "none"),
               ("region3", "none"), ("region4", "error"),
               ("region10", "memory_controller")], got
PY
then ok "info --json regions and domain"; else bad "info --json regions"; fi

# A tree without an nd bus: a directory that exists (a missing one is a
# usage error, check_cli.sh).
mkdir "$tmp/empty"
expect 0 "info, no nd bus" "$ntmem" info --sysfs "$tmp/empty"
grep -q "^nd regions: *none found in $tmp/empty/bus/nd/devices" "$out" &&
	ok "info says no region was found" || bad "info without regions"
expect 0 "info --json, no nd bus" "$ntmem" info --json --sysfs "$tmp/empty"
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["regions"] == []' \
	"$out" && ok "info --json: no regions, []" || bad "info --json no regions"

expect 0 "info, NTMEM_PERSIST_DOMAIN=cpu_cache" env NTMEM_PERSIST_DOMAIN=cpu_cache \
	"$ntmem" info --sysfs "$sys"
if grep -q '^write-back: *none' "$out" && grep -q '^ntm_flush: *none' "$out" &&
	grep -q '^ntm_memcpy_flush: .*no write-back (cpu_cache domain)' "$out" &&
	grep -q '^persist domain: *cpu_cache .*NTMEM_PERSIST_DOMAIN cpu_cache' "$out"
then ok "info: cpu_cache writes nothing back"
else bad "info under cpu_cache"; sed 's/^/# /' "$out"; fi
expect 0 "info --json, NTMEM_PERSIST_DOMAIN=memory_controller" \
	env NTMEM_PERSIST_DOMAIN=memory_controller "$ntmem" info --json --sysfs "$sys"
python3 -c 'import json,sys; d = json.load(open(sys.argv[1]));
assert d["persist_domain_override"] == "memory_controller" and d["flush"] != "none", d' \
	"$out" && ok "info --json shows the override" || bad "info --json override"

expect 0 "info, NTMEM_PERSIST_DOMAIN=eadr" env NTMEM_PERSIST_DOMAIN=eadr \
	"$ntmem" info --sysfs "$sys"
err_names "NTMEM_PERSIST_DOMAIN=eadr ignored" "a misspelt domain is warned about"
grep -q '^environment: *NTMEM_PERSIST_DOMAIN=eadr ignored.*memory_controller|cpu_cache' \
	"$out" && ok "info shows the ignored domain and the values" ||
	bad "info environment line"
grep -q '^persist domain: *memory_controller' "$out" &&
	ok "an ignored domain leaves memory_controller" || bad "ignored domain"

# A virtio-pmem bus beside an NFIT one, as a guest with both sees them: the
# bus is the region's parent, its provider says which driver made it.
vsys=$tmp/vsys
mkdir -p "$vsys/devices/ACPI0012:00/ndbus0/region0" \
	"$vsys/devices/virtio1/ndbus1/region1" "$vsys/bus/nd/devices"
echo ACPI.NFIT >"$vsys/devices/ACPI0012:00/ndbus0/provider"
echo virtio-pmem >"$vsys/devices/virtio1/ndbus1/provider"
# No deep_flush: 6.1 shows it only for regions with DIMMs, and
# virtio-pmem's have none.
ln -s "../../../devices/ACPI0012:00/ndbus0/region0" "$vsys/bus/nd/devices/region0"
ln -s "../../../devices/virtio1/ndbus1/region1" "$vsys/bus/nd/devices/region1"
expect 0 "info --sysfs (virtio-pmem bus)" "$ntmem" info --sysfs "$vsys"
if grep -q '^nd regions: *region0 none$' "$out" &&
	grep -q '^ *region1 none; virtio-pmem bus ndbus1: never cpu-durable, only the host makes stores durable (fsdax: msync/fsync; devdax: no durable path, the region has no deep_flush)$' "$out"
then ok "info names the virtio-pmem bus and why its region is never cpu-durable"
else bad "info virtio-pmem region line"; sed 's/^/# /' "$out"; fi
expect 0 "info --json --sysfs (virtio-pmem bus)" "$ntmem" info --json --sysfs "$vsys"
if python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
got = [(r["name"], r.get("bus"), r.get("provider"), r.get("async"))
       for r in doc["regions"]]
assert got == [("region0", "ndbus0", "ACPI.NFIT", False),
               ("region1", "ndbus1", "virtio-pmem", True)], got
PY
then ok "info --json: each region's bus, provider and async"
else bad "info --json virtio-pmem region"; sed 's/^/# /' "$out"; fi

# --- ntmem info --sysfs DIR: every region from DIR, none from /sys ----------

# Regions, buses and providers that exist only in this tree: each region
# line and JSON region must be one of them, and nothing /sys has (when it
# has an nd bus: a machine with NVDIMMs, a guest with virtio-pmem) may
# appear. The tool and the library read one sysfs root, the one passed.
only=$tmp/only
mkdir -p "$only/devices/ntmtest7/ndbus7/region7" \
	"$only/devices/ntmtest42/ndbus42/region42" "$only/bus/nd/devices"
echo ntmem.TEST.only-in-dir >"$only/devices/ntmtest7/ndbus7/provider"
echo virtio-pmem >"$only/devices/ntmtest42/ndbus42/provider"
echo cpu_cache >"$only/devices/ntmtest7/ndbus7/region7/persistence_domain"
: >"$only/devices/ntmtest42/ndbus42/region42/deep_flush"
ln -s "../../../devices/ntmtest7/ndbus7/region7" "$only/bus/nd/devices/region7"
ln -s "../../../devices/ntmtest42/ndbus42/region42" "$only/bus/nd/devices/region42"
# What /sys would contribute if it leaked: its regions' names and buses.
sys_names=
if [ -d /sys/bus/nd/devices ]; then
	for r in /sys/bus/nd/devices/region*; do
		[ -e "$r" ] || continue
		sys_names="$sys_names ${r##*/} $(basename "$(dirname "$(readlink -f "$r")")")"
	done
fi
echo "# /sys's nd regions and buses:${sys_names:- none}"

expect 0 "info --sysfs DIR (regions only in DIR)" env NTMEM_PERSIST_DOMAIN= \
	"$ntmem" info --sysfs "$only"
# The region lines: "nd regions:" and the lines indented under it.
sed -n '/^nd regions:/,/^[^ ]/p' "$out" | sed '/^nd regions:/!{/^ /!d}' \
	>"$tmp/region_lines"
if [ "$(sed 's/^nd regions: *//; s/^ *//; s/ .*//' "$tmp/region_lines")" = \
"region7
region42" ]; then ok "info --sysfs DIR: the region lines are DIR's regions, in order"
else bad "info --sysfs DIR region names"; sed 's/^/# /' "$out"; fi
if grep -q '^nd regions: *region7 cpu_cache$' "$tmp/region_lines" &&
	grep -q '^ *region42 none; virtio-pmem bus ndbus42: never cpu-durable, .*devdax: the region.s deep_flush)$' \
		"$tmp/region_lines"
then ok "info --sysfs DIR: each region's domain, bus and deep_flush from DIR"
else bad "info --sysfs DIR region lines"; sed 's/^/# /' "$out"; fi
leaked=
for name in $sys_names; do
	case " region7 region42 ndbus7 ndbus42 " in *" $name "*) continue ;; esac
	grep -qw "$name" "$out" && leaked="$leaked $name"
done
if [ -z "$leaked" ] && ! grep -q '/sys/bus/nd' "$out"; then
	ok "info --sysfs DIR: nothing of /sys in the output"
else bad "info --sysfs DIR shows /sys's:$leaked"; sed 's/^/# /' "$out"; fi
grep -q '^persist domain: *memory_controller .*NTMEM_PERSIST_DOMAIN not set' "$out" &&
	ok "info --sysfs DIR: a cpu_cache region leaves ntm_persist's domain alone" ||
	bad "info --sysfs DIR persist domain line"

expect 0 "info --json --sysfs DIR (regions only in DIR)" env NTMEM_PERSIST_DOMAIN= \
	"$ntmem" info --json --sysfs "$only"
json_ok "info --json --sysfs DIR parses"
if python3 - "$out" $sys_names <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
got = [(r["name"], r.get("bus"), r.get("provider"), r.get("async"),
        r.get("persistence_domain")) for r in doc["regions"]]
assert got == [("region7", "ndbus7", "ntmem.TEST.only-in-dir", False, "cpu_cache"),
               ("region42", "ndbus42", "virtio-pmem", True, "none")], got
assert "regions_error" not in doc, doc
text = json.dumps(doc)
for name in sys.argv[2:]:
    if name not in ("region7", "region42", "ndbus7", "ndbus42"):
        assert '"%s"' % name not in text, name
PY
then ok "info --json --sysfs DIR: every region from DIR, none from /sys"
else bad "info --json --sysfs DIR regions"; sed 's/^/# /' "$out"; fi

# --- bench blk --domain ----------------------------------------------------

expect 0 "bench blk --domain cpu_cache (tiny)" "$ntmem" bench blk --size 16m \
	--ops 200 --runs 1 --no-pmdk --dir "$tmp" --domain cpu_cache --json
json_ok "bench blk --domain --json parses"
if python3 - "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = {(r["pattern"], r["impl"]): r for r in doc["rows"]}
for p in ("seq-read", "rand-read", "seq-write-fua", "rand-write-fua"):
    r = rows[(p, "direct-cpu_cache")]
    assert r["kiops"] > 0 and r["x_direct"] > 0, r
    assert (p, "direct") in rows
assert "direct-cpu_cache" in doc["meta"]["persist domain"], doc["meta"]
PY
then ok "bench blk: a direct-cpu_cache row per pattern"
else bad "bench blk --domain rows"; fi
expect 2 "bench blk --domain eadr" "$ntmem" bench blk --size 16m --ops 10 \
	--runs 1 --no-pmdk --dir "$tmp" --domain eadr
err_names "invalid --domain 'eadr'" "bench blk names the bad --domain"
expect 2 "bench blk --domain memory_controller under the override" \
	env NTMEM_PERSIST_DOMAIN=cpu_cache "$ntmem" bench blk --size 16m --ops 10 \
	--runs 1 --no-pmdk --dir "$tmp" --domain memory_controller
err_names "NTMEM_PERSIST_DOMAIN=cpu_cache" "bench blk says why"

# --- bench copy: the dispatched rows ---------------------------------------

for d in "" cpu_cache; do
	expect 0 "bench copy (tiny), NTMEM_PERSIST_DOMAIN=$d" \
		env NTMEM_PERSIST_DOMAIN=$d "$ntmem" bench copy --sizes 64,100 \
		--align 0,1 --total 64k --runs 1 --no-huge --no-pmdk --json
	if python3 - "$out" "${d:-memory_controller}" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
got = {(r["bytes"], r["dst_off"], r["sem"]) for r in doc["rows"]
       if r["impl"] == "dispatched"}
want = {(b, o, s) for b in (64, 100) for o in (0, 1) for s in ("nt", "flush")}
assert got == want, got
assert "persistence domain " + sys.argv[2] in doc["meta"]["variant"], doc["meta"]
PY
	then ok "bench copy: dispatched nt and flush rows (${d:-default})"
	else bad "bench copy dispatched rows (${d:-default})"; fi
done

exit $fail
