#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_mutants.sh NTMEM BINDIR [--all] - the checker's program-mutation
# proof: its silence proven the way the library's durability is (make
# mutate). Each correct program of the corpus (the -DFIXED twins, the
# correct programs without one) marks its persistence calls MUTABLE
# (mutable.h: pmem_persist, pmem_flush, pmem_drain, pmem_msync, an
# ntm_ns_persist, a pmem2 persist function, pmemobj_persist, a
# pmemobj_tx_add_range*, TX_ADD_FIELD); a mutant is the program with one
# of those calls deleted (CORPUS_MUTANT=FILE:LINE, one binary for all).
# On each kind of file:
#
#   tmpfs-pmem  /dev/shm, PMEM_IS_PMEM_FORCE=1 (libpmem2: CACHE_LINE):
#               write-backs and fences make stores durable
#   tmpfs       /dev/shm as it is: a page cache, msync() makes them durable
#   disk-pmem   a disk file system, PMEM_IS_PMEM_FORCE=1 (--all only)
#   disk        a disk file system as it is (--all only)
#   dax         a DAX file system (NTMEM_MUTANTS_DAX_DIR, the kernel
#               guest's ext4 -o dax): MAP_SYNC mappings, pmem as they are
#   devdax      a Device DAX (NTMEM_MUTANTS_DEVDAX, the guest's 4 KiB
#               aligned one), zeroed where a program works before it
#               starts: the libpmem, libpmem2 and namespace programs use
#               its first MiB (two_files two mappings of it, one a MiB),
#               a libpmemobj pool is the whole device; not own_map_msync
#               (a device mapped by the program is not pmem to libpmem,
#               and a device refuses msync())
#
# NTMEM_MUTANTS_KINDS names the kinds to run instead (make check-kernel
# and check-kernel-full: "dax", "devdax"); NTMEM_MUTANTS_SKIP, shell patterns, the programs left
# out.
#
# every original must run under `ntmem check` with no report at all,
# checked in full; every mutant must get a bug report, unless it is
# listed in mutants_equivalent (the deleted call's work is redone by a
# later one: the reason is in the list, and a listed mutant must then get
# no report, so the list cannot go stale) or its site is not reached on
# that kind (the program's branch for the other kind: each run logs the
# sites it reaches). Prints recall per kind; exits 1 below 100%.
# The dax kind runs in make check-kernel (tests/kernel/stage.sh).
#
# The checking library comes from NTMEM_CHECK_LIBDIR (set by meson).
# Exit 0 pass, 1 fail, 77 skip.
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 NTMEM BINDIR [--all]" >&2
	exit 1
fi
ntmem=$1 bindir=$2 all=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
# ok, bad, scratch_dir; $out, $err; fail
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$here/../lib/cli_lib.sh"
scratch_dir ntmem-mutants
disk=$(mktemp -d "${NTMEM_DISK_TMPDIR:-/var/tmp}/ntmem-mutants-XXXXXX") || exit 1
trap 'rm -f "$out" "$err"; rm -rf "$tmp" "$disk"' EXIT

# A sanitized build (checking_asan, cli_lib.sh) runs one kind (the page
# cache's, the newer paths): its memory errors are what the sanitized run
# is for, the recall is the plain build's to prove.
asan=
checking_asan && asan=1

# The originals: libpmem (with corpus.h's persist by pmem_is_pmem()),
# ntmem's own namespace, libpmem2, libpmemobj.
progs="missing_flush_fixed missing_drain_fixed neighbour_flush_fixed
hot_neighbour_fixed flush_before_store_fixed nt_nodrain_fixed plain_memcpy_fixed
store_at_exit_fixed own_map_msync_fixed two_files_fixed ntm_ns_store_fixed
pmem2_store_after_persist_fixed
pmemobj_root_store_fixed pmemobj_store_after_persist_fixed
pmemobj_alloc_ctor_fixed pmemobj_list_fixed pmemobj_threads_fixed
pmemobj_tx_unadded_fixed pmemobj_tx_short_add_fixed pmemobj_tx_neighbour_fixed
pmemobj_tx_add_twice_fixed pmemobj_tx_flush_repeat_fixed
pmemobj_hashmap_fixed pmemobj_tx_hot_fixed pmemobj_big_root"
kinds="tmpfs-pmem tmpfs"
[ "$all" = --all ] && kinds="$kinds disk-pmem disk"
[ -n "$asan" ] && kinds=tmpfs
kinds=${NTMEM_MUTANTS_KINDS:-$kinds}

# kind_env KIND: where the files go ($dir) and the environment ($envs).
kind_env() {
	case $1 in
	tmpfs*) dir=$tmp/files ;;
	disk*) dir=$disk/files ;;
	dax) dir=${NTMEM_MUTANTS_DAX_DIR:?the dax kind needs NTMEM_MUTANTS_DAX_DIR}/files ;;
	devdax) dir=${NTMEM_MUTANTS_DEVDAX:?the devdax kind needs NTMEM_MUTANTS_DEVDAX} ;;
	esac
	case $1 in
	*-pmem) envs="PMEM_IS_PMEM_FORCE=1 PMEM2_FORCE_GRANULARITY=CACHE_LINE" ;;
	*) envs="-u PMEM_IS_PMEM_FORCE -u PMEM2_FORCE_GRANULARITY" ;;
	esac
}

# run PROG [MUTANT]: PROG under `ntmem check` in a fresh directory, its
# reached sites in $tmp/sites (originals only), its bug records counted
# in $bugs, $checked "all" when the run was checked in full.
run() {
	[ -c "$dir" ] || { rm -rf "${dir:?}" && mkdir -p "$dir"; } || exit 1
	: >"$tmp/sites"
	sites=
	[ -n "${2:-}" ] || sites=$tmp/sites
	# shellcheck disable=SC2086 # $envs: words of VAR=VALUE
	env $envs CORPUS_MUTANT="${2:-}" CORPUS_SITES="$sites" \
		"$ntmem" check --json --report "$tmp/report" -- "$bindir/$1" "$dir" \
		>"$out" 2>"$err"
	got=$?
	bugs=$(grep -c '"type":"bug"' "$tmp/report")
	checked=$(sed -n 's/.*"checked": "\([a-z]*\)".*/\1/p' "$tmp/report")
}

# The source line of a site ("file.c:42").
site_text() {
	sed -n "${1##*:}p" "$here/${1%%:*}" | sed 's/^[[:space:]]*//'
}

# equivalent PROG SITE KIND: the reason the list gives, or nothing.
equivalent() {
	text=$(site_text "$2")
	while IFS='|' read -r p file pattern ks reason; do
		case $p in ''|\#*) continue ;; esac
		[ "$p" = "$1" ] && [ "$file" = "${2%%:*}" ] || continue
		case $text in *"$pattern"*) ;; *) continue ;; esac
		case " $ks " in *" $3 "*|" all ") echo "$reason"; return ;; esac
	done <"$here/mutants_equivalent"
}

total_sites=0
for kind in $kinds; do
	kind_env "$kind"
	n=0 reported=0 equiv=0
	for prog in $progs; do
		left_out=
		for pat in ${NTMEM_MUTANTS_SKIP:-}; do
			# shellcheck disable=SC2254 # a pattern on purpose
			case $prog in $pat) left_out=1 ;; esac
		done
		[ -z "$left_out" ] || continue
		if [ ! -x "$bindir/$prog" ]; then
			echo "# $prog not built: left out"
			continue
		fi
		run "$prog"
		if [ "$got" -ne 0 ] || [ "$bugs" -ne 0 ] || [ "$checked" != all ]; then
			bad "$prog ($kind): the original: exit $got, $bugs bug records, checked $checked; expected 0, 0, all"
			sed 's/^/# /' "$err" | head -20
			continue
		fi
		sort -u "$tmp/sites" >"$tmp/reached"
		# Sites are counted on every kind; one no run of this kind
		# reaches is the other kind's branch.
		for site in $(cat "$tmp/reached"); do
			n=$((n + 1))
			reason=$(equivalent "$prog" "$site" "$kind")
			run "$prog" "$site"
			if [ -n "$reason" ]; then
				if [ "$bugs" -eq 0 ]; then
					equiv=$((equiv + 1))
					echo "# equivalent: $prog $site ($(site_text "$site")) on $kind: $reason"
				else
					bad "$prog $site on $kind: listed equivalent ($reason) but reported: update mutants_equivalent"
				fi
			elif [ "$bugs" -ge 1 ]; then
				reported=$((reported + 1))
			else
				bad "$prog: deleting $site ($(site_text "$site")) on $kind is not reported (exit $got)"
				sed 's/^/# /' "$err" | head -10
			fi
		done
	done
	live=$((n - equiv))
	total_sites=$((total_sites + n))
	if [ "$live" -gt 0 ]; then
		echo "# recall $kind: $reported of $live mutants reported ($((reported * 100 / live))%), $equiv equivalent, $n sites reached"
		[ "$reported" -eq "$live" ] && ok "$kind: every mutant reported ($reported), $equiv equivalent"
	else
		bad "$kind: no mutant ran"
	fi
done
echo "# $(echo "$progs" | wc -w) programs${NTMEM_MUTANTS_SKIP:+ but $NTMEM_MUTANTS_SKIP}, $total_sites mutants over the kinds"
exit $fail
