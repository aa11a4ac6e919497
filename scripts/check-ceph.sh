#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check-ceph.sh [--build DIR] [--work DIR] [--seconds N] [--rounds N]
#               [--osds N] [--help] - make check-ceph: a Ceph cluster on
# ntmem's libpmem, beside the same cluster on PMDK's.
#
# Debian's ceph-osd (16.2) keeps BlueStore's block device in persistent
# memory through libpmem.so.1 (its PMEMDevice: pmem_map_file,
# pmem_memcpy_persist, pmem_unmap). This script starts a one-host cluster
# on the loopback address: one monitor (cephx on), one manager (it reports
# the placement groups' states) and N OSDs (default 2), each with its
# BlueStore block on a 4 GiB sparse file of its own, mapped as persistent
# memory (PMEM_IS_PMEM_FORCE=1: a disk file has no DAX) through the
# libpmem.so.1 of the build in DIR (default build). Then, in order:
#
#   data     objects of 4 KiB to 4 MiB (odd sizes among them) put into a
#            pool of N replicas, each read back and compared byte for byte
#   bench    rados bench write, seq and rand, N seconds each (--seconds,
#            default 10), 64 KiB operations, 16 in flight, on ntmem's
#            libpmem and on PMDK's (Debian's libpmem1): the same OSDs
#            restarted on each library in turn, which /proc/PID/maps of
#            every OSD must show; --rounds times (default 1), after one
#            unmeasured write phase, the table giving each library's
#            median and the ratio
#   fault    three clients put objects of 4 KiB to 4 MiB without pause;
#            one OSD is killed with SIGKILL among them, left down while
#            the others go on degraded, and restarted; once every
#            placement group is active and clean, each OSD is stopped and
#            checked with ceph-bluestore-tool fsck --deep, its object list
#            must hold every acknowledged object (each OSD holds a
#            replica of each), and every acknowledged object is read back
#            from the restarted cluster and compared byte for byte
#
# Each check is a TAP line on stdout and an entry of
# WORK/meson-logs/testlog.json (default WORK: DIR/ceph), so
# scripts/test-summary.sh counts them with the rest of make check. The
# cluster's files are under a directory of its own in /var/tmp (the
# daemons' sockets need a short path; /dev/shm is memory, and the block
# files and objects are several hundred MiB); every daemon and client the
# script started is stopped by its process id and the directory removed,
# whatever happens (a daemon's log is printed first when a check failed).
#
# Exit status 0 when every check passed, 1 when one failed, 77 when it
# cannot run here (no Ceph: scripts/install-deps.sh ceph installs it).
set -u

build=build work='' seconds=10 rounds=1 osds=2
usage="usage: $0 [--build DIR] [--work DIR] [--seconds N] [--rounds N] [--osds N] [--help]"
while [ $# -gt 0 ]; do
	case "$1" in
	--build | --work | --seconds | --rounds | --osds)
		[ $# -ge 2 ] || { echo "check-ceph: $1 needs a value" >&2; echo "$usage" >&2; exit 2; }
		case "$1" in
		--build) build=$2 ;; --work) work=$2 ;; --seconds) seconds=$2 ;;
		--rounds) rounds=$2 ;; --osds) osds=$2 ;;
		esac
		shift 2
		;;
	--help | -h) sed -n '4,/^set -u$/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "check-ceph: unknown argument '$1'" >&2; echo "$usage" >&2; exit 2 ;;
	esac
done
# number NAME VALUE MIN MAX: VALUE an integer in [MIN, MAX], or exit 2.
number() {
	case "$2" in '' | *[!0-9]*) echo "check-ceph: --$1 must be a whole number, not '$2'" >&2; exit 2 ;; esac
	if [ "$2" -lt "$3" ] || [ "$2" -gt "$4" ]; then
		echo "check-ceph: --$1 must be between $3 and $4, not $2" >&2
		exit 2
	fi
}
# Two OSDs at least: a pool of one replica proves no replication; eight at
# most: each is a daemon of about 1 GiB and its own 4 GiB file.
number osds "$osds" 2 8
number seconds "$seconds" 1 60
number rounds "$rounds" 1 9
work=${work:-$build/ceph}

skip() { echo "check-ceph: skipped: $*"; exit 77; }
for cmd in ceph-mon ceph-mgr ceph-osd ceph rados ceph-authtool monmaptool \
	ceph-bluestore-tool ceph-objectstore-tool; do
	command -v "$cmd" >/dev/null 2>&1 ||
		skip "needs $cmd (scripts/install-deps.sh ceph installs Debian's Ceph)"
done
[ -f "$build/compat/libpmem/libpmem.so.1" ] ||
	{ echo "check-ceph: $build/compat/libpmem/libpmem.so.1 is not built (make)" >&2; exit 1; }
# The two libraries, each by the file a process maps (/proc/PID/maps
# names the file a link points to).
ntm_so=$(readlink -f "$build/compat/libpmem/libpmem.so.1")
pmdk_so=$(dpkg-query -L libpmem1 2>/dev/null | grep '/libpmem\.so\.1$' | head -n 1)
[ -n "$pmdk_so" ] || skip "needs PMDK's libpmem (Debian's libpmem1)"
pmdk_so=$(readlink -f "$pmdk_so")
ntm_dir=${ntm_so%/*}

mkdir -p "$work/meson-logs" || exit 1
testlog=$work/meson-logs/testlog.json
: >"$testlog"
checks=0 failures=0
# tap RESULT DESCRIPTION [DETAIL]: one check, RESULT OK or FAIL.
tap() {
	checks=$((checks + 1))
	if [ "$1" = OK ]; then
		echo "ok $checks - $2"
	else
		echo "not ok $checks - $2${3:+: $3}"
		failures=$((failures + 1))
	fi
	printf '{"name": "ceph:cluster / %s", "result": "%s", "stdout": "%s"}\n' \
		"$(json_escape "$2")" "$1" "$(json_escape "${3:-}")" >>"$testlog"
}
json_escape() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr '\n\t' '  '; }

# The cluster's directory: on the disk, with a short path (a daemon's
# admin socket path must fit a sockaddr_un).
dir=$(mktemp -d /var/tmp/ntmem-ceph.XXXXXX) || exit 1
conf=$dir/ceph.conf
mkdir -p "$dir/run" "$dir/log" "$dir/mon" "$dir/mgr" "$dir/src" "$dir/back"
: >"$dir/pids"

# Everything started is stopped by its id: the daemons (their pid files,
# noted in $dir/pids as each starts) and the background clients.
cleanup() {
	status=$?
	trap - EXIT INT TERM
	[ -f "$dir/stop" ] || : >"$dir/stop" 2>/dev/null
	pids=$(cat "$dir/pids" 2>/dev/null)
	for p in $pids; do kill "$p" 2>/dev/null; done
	n=0
	while [ $n -lt 30 ]; do
		alive=
		for p in $pids; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
		[ -z "$alive" ] && break
		sleep 1
		n=$((n + 1))
	done
	for p in $alive; do kill -KILL "$p" 2>/dev/null; done
	if [ "$failures" -ne 0 ] && [ -d "$dir/log" ]; then
		for log in "$dir"/log/*.log; do
			[ -f "$log" ] || continue
			echo "check-ceph: the last lines of ${log##*/}:"
			tail -n 15 "$log" | sed 's/^/  | /'
		done
	fi
	rm -rf "$dir"
	exit "$status"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# bail DESCRIPTION DETAIL: a check failed that the rest cannot go on
# without.
bail() {
	tap FAIL "$1" "$2"
	echo "Bail out! $1"
	echo "check-ceph: $checks checks, $failures failed"
	exit 1
}

# A free port on 127.0.0.1 for the monitor: the first from 3300 (Ceph's
# own) that no socket listens on (/proc/net/tcp, state 0A).
# (Debian's awk is mawk: no strtonum, the port's hex digits are read here.)
port=$(awk 'function hex(s,   n, i) {
		for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789ABCDEF", substr(s, i, 1)) - 1
		return n
	}
	NR > 1 && $4 == "0A" { split($2, a, ":"); used[hex(a[2])] = 1 }
	END { for (p = 3300; p < 3400; p++) if (!(p in used)) { print p; exit } }' \
	/proc/net/tcp 2>/dev/null)
[ -n "$port" ] || port=3300

fsid=$(cat /proc/sys/kernel/random/uuid)
# Every path of the cluster is in $dir: without run_dir, log_file,
# mon_cluster_log_file, crash_dir and the daemons' data and keyrings, Ceph
# uses /var/run/ceph, /var/log/ceph and /var/lib/ceph.
# osd_pool_default_size: one replica on each OSD; min_size 1 lets writes
# go on while one is down (the fault). osd_crush_chooseleaf_type 0: the
# replicas go to distinct OSDs, not hosts (there is one host).
# mon_osd_min_down_reporters 1: one OSD's report that a peer is gone is
# enough (the default 2 cannot be met by two OSDs on one host, and the
# killed OSD would stay "up" for 15 minutes).
# pg_autoscale_mode off: the pools keep the placement groups they are
# made with, so none splits or merges under the checks.
# bluestore_block_size 4 GiB: a sparse file, of which the bench's objects
# take at most 2 GiB (below).
# bluestore_block_path is outside the OSD's data directory: BlueStore
# links osd$id/block to it, and a block file there fails with ELOOP.
# No bdev_type: Ceph picks its PMEMDevice itself, as for a user, when
# pmem_map_file(..., PMEM_FILE_EXCL, ...) maps the file and is_pmem is 1.
cat >"$conf" <<EOF || exit 1
[global]
fsid = $fsid
mon_host = v2:127.0.0.1:$port
public_network = 127.0.0.0/8
ms_bind_ipv4 = true
ms_bind_ipv6 = false
auth_cluster_required = cephx
auth_service_required = cephx
auth_client_required = cephx
auth_allow_insecure_global_id_reclaim = false
keyring = $dir/admin.keyring
run_dir = $dir/run
admin_socket = $dir/run/\$name.asok
pid_file = $dir/run/\$name.pid
log_file = $dir/log/\$name.log
mon_cluster_log_file = $dir/log/cluster.log
crash_dir = $dir/crash
osd_pool_default_size = $osds
osd_pool_default_min_size = 1
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 0
mon_osd_min_down_reporters = 1
mon_allow_pool_delete = true
[mon]
mon_data = $dir/mon
keyring = $dir/mon/keyring
[mgr]
mgr_data = $dir/mgr
keyring = $dir/mgr/keyring
[osd]
osd_data = $dir/osd\$id
keyring = $dir/osd\$id/keyring
osd_objectstore = bluestore
bluestore_block_path = $dir/osd\$id.pmem
bluestore_block_size = 4294967296
bluestore_block_create = true
osd_memory_target = 939524096
EOF

# Commands against the cluster, each with a bound: a monitor that does not
# answer is a failure, not a hang.
ceph_() { timeout 120 ceph -c "$conf" --connect-timeout 60 "$@"; }
rados_() { timeout 300 rados -c "$conf" "$@"; }

# wait_until SECONDS COMMAND...: until COMMAND succeeds, tried each
# second; fails when SECONDS have passed without.
wait_until() {
	end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 1
	done
}
# daemon_pid NAME: the pid a daemon wrote to its pid file, waiting for it
# (ceph-mon, ceph-mgr and ceph-osd go to the background and write it).
daemon_pid() { wait_until 60 test -s "$dir/run/$1.pid" && cat "$dir/run/$1.pid"; }

# Start the monitor and the manager.
ceph-authtool --create-keyring "$dir/mon.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null &&
	ceph-authtool --create-keyring "$dir/admin.keyring" --gen-key -n client.admin \
		--cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' >/dev/null &&
	ceph-authtool "$dir/mon.keyring" --import-keyring "$dir/admin.keyring" >/dev/null &&
	monmaptool --create --addv a "[v2:127.0.0.1:$port]" --fsid "$fsid" "$dir/monmap" >/dev/null &&
	ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/mon.keyring" \
		>"$dir/log/mon-mkfs.out" 2>&1 ||
	bail "monitor created" "$(tail -n 3 "$dir/log/mon-mkfs.out" 2>/dev/null)"
ceph-mon -c "$conf" -i a >"$dir/log/mon.out" 2>&1 && pid=$(daemon_pid mon.a) ||
	bail "monitor started on 127.0.0.1:$port" "$(tail -n 3 "$dir/log/mon.out")"
echo "$pid" >>"$dir/pids"
ceph_ status >/dev/null 2>&1 || bail "monitor answers on 127.0.0.1:$port (cephx)" "ceph status failed"
tap OK "monitor answers on 127.0.0.1:$port (cephx)"
ceph_ auth get-or-create mgr.x mon 'allow profile mgr' osd 'allow *' mds 'allow *' \
	-o "$dir/mgr/keyring" >/dev/null 2>&1 &&
	ceph-mgr -c "$conf" -i x >"$dir/log/mgr.out" 2>&1 && pid=$(daemon_pid mgr.x) ||
	bail "manager started" "$(tail -n 3 "$dir/log/mgr.out" 2>/dev/null)"
echo "$pid" >>"$dir/pids"

# osd_run LIBRARY COMMAND...: COMMAND (ceph-osd or a tool of BlueStore's)
# on LIBRARY's libpmem, ntmem or pmdk: ceph-osd links libpmem.so.1, and LD_LIBRARY_PATH puts ntmem's
# first. PMEM_IS_PMEM_FORCE=1 for both: each honours it.
osd_run() {
	lib=$1
	shift
	if [ "$lib" = ntmem ]; then
		env PMEM_IS_PMEM_FORCE=1 LD_LIBRARY_PATH="$ntm_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"
	else
		env PMEM_IS_PMEM_FORCE=1 "$@"
	fi
}
# osd_start ID LIBRARY: OSD ID started on LIBRARY, its pid noted.
osd_start() {
	rm -f "$dir/run/osd.$1.pid"
	osd_run "$2" ceph-osd -c "$conf" -i "$1" >>"$dir/log/osd$1.out" 2>&1 || return 1
	pid=$(daemon_pid "osd.$1") || return 1
	echo "$pid" >>"$dir/pids"
	eval "osd_pid_$1=$pid"
}
# osd_stop ID: SIGTERM, then wait (at most 2 minutes) for it to be gone.
gone() { ! kill -0 "$1" 2>/dev/null; }
osd_stop() {
	eval "p=\$osd_pid_$1"
	kill "$p" 2>/dev/null || return 0
	wait_until 120 gone "$p"
}
osd_ids() { i=0; while [ $i -lt "$osds" ]; do echo $i; i=$((i + 1)); done; }

# osd_maps_library ID LIBRARY: OSD ID's process maps LIBRARY's libpmem and
# not the other's.
osd_maps_library() {
	eval "p=\$osd_pid_$1"
	want=$ntm_so other=$pmdk_so
	[ "$2" = pmdk ] && { want=$pmdk_so; other=$ntm_so; }
	grep -qF " $want" "/proc/$p/maps" && ! grep -qF " $other" "/proc/$p/maps"
}

# osds_up: the number of OSDs up in the monitor's map.
osds_up() { ceph_ osd dump 2>/dev/null | grep -c '^osd\.[0-9]* up '; }

# wait_up COUNT SECONDS: until COUNT OSDs are up.
osds_are_up() { [ "$(osds_up)" -eq "$1" ]; }
wait_up() { wait_until "$2" osds_are_up "$1"; }

# pgs_clean: every placement group is active+clean in a report made after
# the last OSD came up (its reported epoch at least the newest OSD's
# up_from: the manager keeps older reports until new ones come), and the
# manager knows every placement group of every pool; the counts are left
# in $got, $want, $bad and $since for a message.
pgs_clean() {
	dump=$(ceph_ osd dump 2>/dev/null)
	since=$(echo "$dump" | awk '/^osd\.[0-9]+ up / {
		for (i = 1; i < NF; i++) if ($i == "up_from" && $(i + 1) > m) m = $(i + 1) }
		END { print m + 0 }')
	want=$(echo "$dump" | awk '/^pool / { for (i = 1; i < NF; i++) if ($i == "pg_num") n += $(i + 1) }
		END { print n + 0 }')
	ls=$(ceph_ pg ls --format json 2>/dev/null | tr ',{}' '\n\n\n')
	got=$(echo "$ls" | grep -c '^"state":')
	bad=$(echo "$ls" | awk -v since="$since" -F: '
		$1 == "\"state\"" && $2 != "\"active+clean\"" { n++ }
		$1 == "\"reported_epoch\"" && $2 + 0 < since { n++ }
		END { print n + 0 }')
	[ "$got" -eq "$want" ] && [ "$want" -gt 0 ] && [ "$bad" -eq 0 ]
}
# wait_clean SECONDS: until pgs_clean, or a message with its counts.
wait_clean() {
	wait_until "$1" pgs_clean && return 0
	echo "check-ceph: after $1 s: $got of $want placement groups reported, $bad not active+clean since epoch $since:" >&2
	ceph_ pg stat >&2 2>&1
	return 1
}

# Create and start the OSDs on ntmem's libpmem.
for id in $(osd_ids); do
	uuid=$(cat /proc/sys/kernel/random/uuid)
	got=$(ceph_ osd new "$uuid" 2>"$dir/log/osd-new.err") && [ "$got" = "$id" ] ||
		bail "osd.$id created" "ceph osd new gave '$got': $(cat "$dir/log/osd-new.err")"
	mkdir -p "$dir/osd$id"
	ceph_ auth get-or-create "osd.$id" mon 'allow profile osd' mgr 'allow profile osd' \
		osd 'allow *' -o "$dir/osd$id/keyring" >/dev/null 2>&1 ||
		bail "osd.$id created" "its key could not be made"
	osd_run ntmem ceph-osd -c "$conf" -i "$id" --mkfs --osd-uuid "$uuid" \
		>"$dir/log/osd$id-mkfs.out" 2>&1 ||
		bail "osd.$id's BlueStore made on ntmem's libpmem (ceph-osd --mkfs)" \
			"$(tail -n 3 "$dir/log/osd$id-mkfs.out")"
	osd_start "$id" ntmem || bail "osd.$id started on ntmem's libpmem" "$(tail -n 3 "$dir/log/osd$id.out")"
done
wait_up "$osds" 180 || bail "$osds OSDs up" "$(osds_up) up after 180 s"
tap OK "$osds OSDs up, each BlueStore made on ntmem's libpmem"
for id in $(osd_ids); do
	if osd_maps_library "$id" ntmem; then
		tap OK "osd.$id maps ntmem's libpmem ($ntm_so), not PMDK's"
	else
		tap FAIL "osd.$id maps ntmem's libpmem ($ntm_so), not PMDK's" \
			"$(grep libpmem "/proc/$(eval "echo \$osd_pid_$id")/maps" | head -n 2)"
	fi
	# BlueStore's PMEMDevice names itself bdev-PMEM in the OSD's log; its
	# ordinary block device (KernelDevice) would be bdev(...).
	if grep -q 'bdev-PMEM(' "$dir/log/osd.$id.log"; then
		tap OK "osd.$id's BlueStore chose its PMEMDevice for $dir/osd$id.pmem"
	else
		tap FAIL "osd.$id's BlueStore chose its PMEMDevice" "no bdev-PMEM line in its log"
	fi
done

ceph_ osd pool create check 16 16 replicated >/dev/null 2>&1 &&
	ceph_ osd pool application enable check rados >/dev/null 2>&1 &&
	ceph_ osd pool create bench 16 16 replicated >/dev/null 2>&1 &&
	ceph_ osd pool application enable bench rados >/dev/null 2>&1 ||
	bail "pools created" "ceph osd pool create failed"
wait_clean 300 || bail "every placement group active+clean" "see above"
size=$(ceph_ osd pool get check size 2>/dev/null | awk '{ print $2 }')
if [ "$size" = "$osds" ]; then
	tap OK "pool 'check' keeps $osds replicas, every placement group active+clean"
else
	tap FAIL "pool 'check' keeps $osds replicas" "size is '$size'"
fi

# --- data: objects of 4 KiB to 4 MiB, put, read back, compared ---------
# put_object NAME SIZE: SIZE random bytes put as NAME (kept in $dir/src).
put_object() {
	head -c "$2" /dev/urandom >"$dir/src/$1" &&
		rados_ -p check put "$1" "$dir/src/$1" 2>>"$dir/log/rados.err"
}
# same_object NAME: NAME read back equals what was put, byte for byte.
same_object() {
	rm -f "$dir/back/$1"
	rados_ -p check get "$1" "$dir/back/$1" 2>>"$dir/log/rados.err" &&
		cmp -s "$dir/src/$1" "$dir/back/$1"
}
data_sizes="4096 4097 65536 131071 1048576 3145739 4194304"
bad= put=0
for s in $data_sizes; do
	for copy in a b; do
		if put_object "d$s$copy" "$s"; then
			put=$((put + 1))
			echo "d$s$copy" >>"$dir/data-objects"
		else
			bad="$bad d$s$copy"
		fi
	done
done
[ -z "$bad" ] && tap OK "$put objects of 4 KiB to 4 MiB put" || tap FAIL "objects of 4 KiB to 4 MiB put" "failed:$bad"
bad=
while read -r name; do same_object "$name" || bad="$bad $name"; done <"$dir/data-objects"
[ -z "$bad" ] && tap OK "every object read back equal to what was put" ||
	tap FAIL "every object read back equal to what was put" "differ or unreadable:$bad"
# Each object's placement names every OSD: a replica on each.
bad=
while read -r name; do
	acting=$(ceph_ osd map check "$name" 2>/dev/null | sed -n 's/.*acting (\[\([0-9,]*\)\].*/\1/p')
	[ "$(echo "$acting" | tr ',' '\n' | sort -u | grep -c .)" -eq "$osds" ] || bad="$bad $name:[$acting]"
done <"$dir/data-objects"
[ -z "$bad" ] && tap OK "every object's acting set has all $osds OSDs" ||
	tap FAIL "every object's acting set has all $osds OSDs" "$bad"

# --- bench: rados bench on each library, side by side --------------------
# restart_on LIBRARY: every OSD stopped and started on LIBRARY, each
# shown by its maps to have it, the cluster active+clean again.
restart_on() {
	for id in $(osd_ids); do osd_stop "$id" || return 1; done
	for id in $(osd_ids); do osd_start "$id" "$1" || return 1; done
	wait_up "$osds" 180 || return 1
	for id in $(osd_ids); do osd_maps_library "$id" "$1" || return 1; done
	wait_clean 300
}
# owner LIBRARY: "ntmem's" or "PMDK's", for the checks' names.
owner() { if [ "$1" = ntmem ]; then echo "ntmem's"; else echo "PMDK's"; fi; }
# bench_phase LIBRARY ROUND PHASE: one rados bench phase; its IOPS and
# mean latency (ms) appended to $dir/bench as "LIBRARY PHASE IOPS MS".
bench_phase() {
	# At most 32768 objects of 64 KiB, 2 GiB on each OSD: a faster
	# machine's write phase ends early rather than fill the OSDs (a full
	# OSD blocks every write).
	case "$3" in write) extra="-b 65536 --max-objects 32768 --no-cleanup" ;; *) extra= ;; esac
	# shellcheck disable=SC2086 # the options split into words
	rados_ -p bench bench "$seconds" "$3" -t 16 $extra >"$dir/log/bench-$1-$2-$3.out" 2>&1 ||
		return 1
	awk -v lib="$1" -v phase="$3" '
		/^Average IOPS:/ { iops = $3 }
		/^Average Latency\(s\):/ { ms = $3 * 1000 }
		END { if (iops == "") exit 1; printf "%s %s %s %.2f\n", lib, phase, iops, ms }
	' "$dir/log/bench-$1-$2-$3.out" >>"$dir/bench"
}
: >"$dir/bench"
# A write phase first, not measured, its objects then removed: the first
# writes into the block files fault their pages in and make the file
# system allocate them; without it the library measured first paid that
# (its write phase 10-25% slower in every 3 and 10 s run tried).
rados_ -p bench bench "$seconds" write -t 16 -b 65536 --max-objects 32768 --no-cleanup \
	>"$dir/log/bench-warm.out" 2>&1 && rados_ -p bench cleanup >/dev/null 2>&1 ||
	tap FAIL "rados bench's unmeasured write phase" "$(tail -n 3 "$dir/log/bench-warm.out")"
r=1
while [ $r -le "$rounds" ]; do
	# Odd rounds ntmem's first, even rounds PMDK's; each starts on OSDs
	# just restarted on its library.
	order="ntmem pmdk"
	[ $((r % 2)) -eq 0 ] && order="pmdk ntmem"
	for lib in $order; do
		restart_on "$lib" || bail "every OSD restarted on $(owner "$lib") libpmem, maps it, active+clean" \
			"see the OSDs' logs"
		ok=1
		for phase in write seq rand; do bench_phase "$lib" "$r" "$phase" || ok=0; done
		rados_ -p bench cleanup >/dev/null 2>&1 || ok=0
		[ $ok -eq 1 ] && tap OK "round $r: rados bench write, seq, rand on $(owner "$lib") libpmem ($seconds s each)" ||
			tap FAIL "round $r: rados bench on $(owner "$lib") libpmem" "$(tail -n 3 "$dir"/log/bench-"$lib"-"$r"-*.out)"
	done
	r=$((r + 1))
done
cpu=$(awk -F': ' '/^model name/ && !m { m = $2 } /^cpu family/ && !f { f = $2 }
	/^model[[:space:]]*:/ && !n { n = $2 } END { printf "%s (family %s, model %s)", m, f, n }' /proc/cpuinfo)
echo "# rados bench: 64 KiB operations, 16 in flight, $seconds s a phase, a pool of $osds replicas on $osds OSDs (BlueStore's PMEMDevice)"
echo "# on $cpu, $(nproc) CPUs; the median of $rounds round(s) per library (ntmem's first in odd rounds, PMDK's in even), each on OSDs just restarted on it, after an unmeasured write phase"
awk '
	{ k = $1 " " $2; n[k]++; iops[k, n[k]] = $3; ms[k, n[k]] = $4 }
	function median(a, k,   m, i, j, v, t) {
		m = n[k]
		for (i = 1; i <= m; i++) v[i] = a[k, i]
		for (i = 2; i <= m; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
		return (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
	}
	END {
		printf "# %-6s %12s %9s %12s %9s %11s\n", "phase", "ntmem ops/s", "ntmem ms", "PMDK ops/s", "PMDK ms", "ntmem/PMDK"
		split("write seq rand", ph, " ")
		for (p = 1; p <= 3; p++) {
			a = "ntmem " ph[p]; b = "pmdk " ph[p]
			if (!n[a] || !n[b]) continue
			x = median(iops, a); y = median(iops, b)
			printf "# %-6s %12.0f %9.2f %12.0f %9.2f %10.2fx\n", ph[p], x, median(ms, a), y, median(ms, b), y ? x / y : 0
		}
	}' "$dir/bench"
for lib in ntmem pmdk; do
	awk -v lib="$lib" -v name="$(owner "$lib")" '$1 == lib { v[$2] = v[$2] " " $3 }
		END { printf "# %s ops/s by round: write%s, seq%s, rand%s\n", name, v["write"], v["seq"], v["rand"] }' "$dir/bench"
done

# --- fault: an OSD killed among writes ----------------------------------
restart_on ntmem || bail "every OSD restarted on ntmem's libpmem, maps it, active+clean" "see the OSDs' logs"
# writer W: puts objects fW-1, fW-2, ... of five sizes in turn until
# $dir/stop exists; an object is acknowledged when rados put returned 0
# (the write is then on every replica that was up, as Ceph promises).
fault_sizes="4096 65536 1048576 4194304 12289"
writer() {
	i=0
	while [ ! -e "$dir/stop" ]; do
		i=$((i + 1))
		s=$(echo "$fault_sizes" | awk -v i="$i" '{ print $((i - 1) % NF + 1) }')
		if put_object "f$1-$i" "$s"; then
			echo "f$1-$i" >>"$dir/acked"
		else
			echo "f$1-$i" >>"$dir/unacked"
		fi
	done
}
# acked: the number of objects acknowledged so far.
acked() { n=$(grep -c . "$dir/acked" 2>/dev/null); echo "${n:-0}"; }
# wait_acked COUNT SECONDS: until COUNT objects are acknowledged.
acked_at_least() { [ "$(acked)" -ge "$1" ]; }
wait_acked() { wait_until "$2" acked_at_least "$1"; }
victim=$((osds - 1))
: >"$dir/acked"
for w in 1 2 3; do
	writer "$w" &
	echo $! >>"$dir/pids"
	eval "writer_$w=$!"
done
wait_acked 8 120 || bail "clients writing" "$(acked) objects acknowledged in 120 s"
eval "p=\$osd_pid_$victim"
before=$(acked)
kill -KILL "$p"
if wait_up $((osds - 1)) 120; then
	tap OK "osd.$victim killed (SIGKILL) with $before objects acknowledged and writes in flight; the monitor marked it down"
else
	tap FAIL "osd.$victim killed (SIGKILL); the monitor marked it down" "still $(osds_up) up after 120 s"
fi
n0=$(acked)
wait_acked $((n0 + 6)) 180 &&
	tap OK "writes go on while osd.$victim is down ($(($(acked) - n0)) acknowledged, degraded)" ||
	tap FAIL "writes go on while osd.$victim is down" "$(($(acked) - n0)) acknowledged in 180 s"
osd_start "$victim" ntmem && wait_up "$osds" 180 ||
	bail "osd.$victim restarted" "$(tail -n 3 "$dir/log/osd$victim.out")"
n1=$(acked)
wait_acked $((n1 + 6)) 180 || true
: >"$dir/stop"
for w in 1 2 3; do eval "wait \$writer_$w"; done
unacked=$(grep -c . "$dir/unacked" 2>/dev/null)
if wait_clean 600; then
	tap OK "osd.$victim restarted and recovered: every placement group active+clean (the clients had $(acked) objects acknowledged, ${unacked:-0} refused)"
else
	tap FAIL "osd.$victim restarted and recovered: every placement group active+clean" "see above"
fi

# Each OSD stopped and checked offline: BlueStore's deep fsck (every
# object's data read and its checksum verified), then its object list.
pool=$(ceph_ osd pool ls detail 2>/dev/null | sed -n "s/^pool \([0-9]*\) 'check'.*/\1/p")
cat "$dir/data-objects" "$dir/acked" | sort -u >"$dir/expected"
for id in $(osd_ids); do osd_stop "$id" || bail "osd.$id stopped" "still running after 120 s"; done
for id in $(osd_ids); do
	if osd_run ntmem ceph-bluestore-tool fsck --deep true --path "$dir/osd$id" \
		>"$dir/log/fsck$id.out" 2>&1 && grep -q 'fsck success' "$dir/log/fsck$id.out"; then
		tap OK "osd.$id: ceph-bluestore-tool fsck --deep clean"
	else
		tap FAIL "osd.$id: ceph-bluestore-tool fsck --deep clean" "$(tail -n 5 "$dir/log/fsck$id.out")"
	fi
	# A line a object: ["PGID",{"oid":"NAME",...,"pool":N,...}]
	osd_run ntmem ceph-objectstore-tool --no-mon-config --data-path "$dir/osd$id" --op list \
		>"$dir/log/list$id.out" 2>"$dir/log/list$id.err"
	sed -n "s/.*\"oid\":\"\([^\"]*\)\".*\"pool\":$pool,.*/\1/p" "$dir/log/list$id.out" |
		sort -u >"$dir/held$id"
	missing=$(comm -23 "$dir/expected" "$dir/held$id" | wc -l)
	if [ -s "$dir/held$id" ] && [ "$missing" -eq 0 ]; then
		tap OK "osd.$id holds a replica of each of the $(grep -c . "$dir/expected") objects acknowledged (data and fault)"
	else
		tap FAIL "osd.$id holds a replica of each object acknowledged" \
			"$missing missing: $(comm -23 "$dir/expected" "$dir/held$id" | head -n 5 | tr '\n' ' ')$(tail -n 2 "$dir/log/list$id.err")"
	fi
done
for id in $(osd_ids); do osd_start "$id" ntmem || bail "osd.$id started again" "$(tail -n 3 "$dir/log/osd$id.out")"; done
wait_up "$osds" 180 && wait_clean 300 || bail "the cluster active+clean again" "see above"
bad=
while read -r name; do same_object "$name" || bad="$bad $name"; done <"$dir/expected"
if [ -z "$bad" ]; then
	tap OK "every acknowledged object ($(grep -c . "$dir/expected")) read back equal to what was put"
else
	tap FAIL "every acknowledged object read back equal to what was put" "lost or changed:$bad"
fi

echo "1..$checks"
echo "$((checks - failures)) passed, $failures failed"
[ "$failures" -eq 0 ]
