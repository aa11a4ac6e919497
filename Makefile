# SPDX-License-Identifier: MIT
#
# A thin front end to meson; the build itself is described in meson.build.
#
#   make          build into build/ (needs only the build packages; the
#                 tests are built when cmocka is installed)
#   make demo     build, then run the main experiment (bench memmap)
#   make check    build and run every test (also under ASan/UBSan), the
#                 threaded tests under ThreadSanitizer, and each fuzzer for
#                 a few seconds on its seed corpus, and a fixed subset of
#                 the mutation proof, and the aarch64 build's copy, recorder
#                 and crash tests under qemu-user (make check-aarch64),
#                 and the checks on a real kernel's DAX stack under QEMU
#                 (make check-kernel), then the Ceph cluster (make
#                 check-ceph); every part runs, and the summary names
#                 what failed
#   make mutate   the mutation proof: delete each write-back and fence of
#                 the durability paths in turn; the recorder tests must fail;
#                 then the checker's (make mutate-checker): delete each
#                 persistence call of the ntmem check corpus's correct
#                 programs in turn; ntmem check must report it, on tmpfs
#                 and a disk file, as pmem and behind a page cache
#   make fuzz     run each libFuzzer harness for FUZZ_SECONDS (default 60)
#   make bench    every benchmark, tables + CSV + plot in bench/out/
#   make install  install into PREFIX (default /usr/local)
#   make deb      the Debian packages (debian/), in build-deb/
#   make check-deb  make deb, then check the packages unpacked in a
#                 scratch root (pkg-config, the tool, the drop-ins, the
#                 man pages, lintian) and installed with dpkg in a mount
#                 namespace over throwaway overlays; CI runs it after
#                 make check. Nothing is installed on this system.
#   make check-kernel  the real kernel's DAX stack: Debian's kernel
#                 under QEMU with NVDIMMs and virtio-pmem, the checks of
#                 tests/kernel/stage*.sh on their namespaces
#   make check-ceph  a one-host Ceph cluster (a monitor, a manager, two
#                 OSDs) whose BlueStore is in persistent memory through
#                 ntmem's libpmem: replicated objects read back, rados
#                 bench beside PMDK's libpmem, an OSD killed among writes
#                 (scripts/check-ceph.sh); make check runs it after the
#                 kernel stage, beside the other parts
#   make check-kernel-full  check-kernel and one long boot more: make
#                 check's crash-image and recorder tests, CLI suites and
#                 scratch-directory test programs in the guest, their
#                 scratch directory on ext4 -o dax and xfs -o dax (not
#                 part of make check: it takes far longer under QEMU)

BUILD      ?= build
BUILD_SAN  ?= build-san
BUILD_TSAN ?= build-tsan
BUILD_FUZZ ?= build-fuzz
BUILD_MUT  ?= build-mutate
BUILD_A64  ?= build-aarch64
BUILD_DEB  ?= build-deb
BUILD_KERNEL ?= $(BUILD)/kernel
BUILD_CEPH ?= $(BUILD)/ceph
FUZZ_SECONDS ?= 60
PREFIX     ?= /usr/local
MESON_ARGS ?=
NTMEM      := $(BUILD)/tools/ntmem

.PHONY: all deps demo check check-default check-default-build \
	check-default-test check-sanitize check-tsan check-fuzz check-mutate \
	check-aarch64 check-aarch64-run mutate mutate-checker fuzz bench install clean deb \
	check-deb check-kernel check-kernel-deps check-kernel-run \
	check-kernel-guest check-kernel-full check-ceph check-ceph-run

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

# -Dwerror=true with warning_level=2: every build is -Wall -Wextra -Werror.
# A plain build needs only the build packages; its tests are configured
# when cmocka is installed (-Dtests=auto), and the check targets below
# install the test packages and turn them on.
$(BUILD)/build.ninja:
	scripts/install-deps.sh build
	meson setup $(BUILD) --prefix=$(PREFIX) -Dwerror=true $(MESON_ARGS)

# $(call tests_option,DIR,VALUE): DIR configured with -Dtests=VALUE. A
# build dir made by a plain `make` without cmocka has no tests, and one
# made while the option was a boolean has fallen back to auto.
tests_option = meson introspect --buildoptions $(1) | \
	grep -q '"name": "tests", "value": "$(2)"' || \
	meson setup --reconfigure $(1) -Dtests=$(2)

# The sanitizer builds are -O1, as their runtimes' authors advise: at -O0
# ASan's shadow checks of every access doubled the wide copy files'
# compile time (35 s each, four of them) and made the tests 1.4x slower
# (364 s against 258 s of test time on 2 idle cores).
$(BUILD_SAN)/build.ninja:
	scripts/install-deps.sh check
	meson setup $(BUILD_SAN) -Dwerror=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debug -Doptimization=1 \
		-Dtests=enabled $(MESON_ARGS)

# ThreadSanitizer (gcc's libtsan, which gcc's packages pull in): the tests
# of the "threads" suite, whose threads race on purpose, fail on any data
# race even when their results come out right. Only that suite: TSan slows
# everything 5-15x and the other tests do not race threads.
$(BUILD_TSAN)/build.ninja:
	scripts/install-deps.sh check
	meson setup $(BUILD_TSAN) -Dwerror=true -Db_sanitize=thread \
		-Db_lundef=false -Dbuildtype=debug -Doptimization=1 \
		-Dtests=enabled $(MESON_ARGS)

# libFuzzer harnesses (tests/fuzz): libFuzzer ships with clang, not gcc, so
# clang is a dependency of `make check` and `make fuzz`. The library is
# compiled with coverage feedback and ASan/UBSan; tests only, no tools.
$(BUILD_FUZZ)/build.ninja:
	scripts/install-deps.sh fuzz
	CC=clang meson setup $(BUILD_FUZZ) -Dfuzz=true -Dtests=disabled \
		-Dtools=false -Dwerror=true -Db_sanitize=address,undefined \
		-Db_lundef=false $(MESON_ARGS)

# The seeds' experiment: memmap init of an emulated 100 GiB namespace.
demo: all
	scripts/install-deps.sh bench
	$(NTMEM) info
	$(NTMEM) bench memmap

# Every part runs even after one failed: they are independent (each has
# its build directory), so one run shows every failure at once. The
# summary is printed in every case (scripts/test-summary.sh: counts, the
# failed suites and tests of each build directory, the failed targets),
# and check fails when anything did. Logs of an earlier run are removed
# first, so a part that fails before its tests is not counted from them.
#
# The kernel part runs beside the others: its guest is one TCG vCPU, a
# core's work for about 3 minutes that needs only $(BUILD)'s programs, so
# it starts as soon as they are built, before $(BUILD)'s own tests (its
# packages are installed first, in the foreground: apt takes one lock).
# The Ceph part follows it there (check-ceph-run, its packages installed
# then: no other part calls apt once the first has installed theirs),
# with 5-second bench phases: its table is only context while the other
# parts load both cores. Their output is kept in $(BUILD_KERNEL).log and
# $(BUILD_CEPH).log and printed when the others are done.
CHECK_PARTS := check-sanitize check-tsan check-fuzz check-mutate check-aarch64
CHECK_DIRS := $(BUILD) $(BUILD_SAN) $(BUILD_TSAN) $(BUILD_FUZZ) $(BUILD_A64) \
	$(BUILD_KERNEL) $(BUILD_CEPH)
check:
	@rm -f $(addsuffix /meson-logs/testlog.json,$(CHECK_DIRS)) \
		$(BUILD_KERNEL).status $(BUILD_CEPH).status
	@failed=; times=; start=$$(date +%s); t=$$start; \
	lap() { times="$$times $$1=$$(( $$(date +%s) - t ))s"; t=$$(date +%s); }; \
	$(MAKE) --no-print-directory check-default-build || failed="$$failed check-default"; \
	$(MAKE) --no-print-directory check-kernel-deps; \
	lap build+deps; \
	mkdir -p $(BUILD_KERNEL); \
	echo "check-kernel: running beside the other parts, its output in $(BUILD_KERNEL).log"; \
	(k=$$(date +%s); \
	 $(MAKE) --no-print-directory check-kernel-guest >$(BUILD_KERNEL).log 2>&1; \
		echo $$? >$(BUILD_KERNEL).status; \
		echo $$(( $$(date +%s) - k )) >$(BUILD_KERNEL).seconds; \
	 k=$$(date +%s); \
	 $(MAKE) --no-print-directory check-ceph-run CEPH_SECONDS=5 >$(BUILD_CEPH).log 2>&1; \
		echo $$? >$(BUILD_CEPH).status; \
		echo $$(( $$(date +%s) - k )) >$(BUILD_CEPH).seconds) & kernel=$$!; \
	case "$$failed" in *check-default*) ;; *) \
		$(MAKE) --no-print-directory check-default-test || \
			failed="$$failed check-default";; esac; \
	lap check-default; \
	for part in $(CHECK_PARTS); do \
		$(MAKE) --no-print-directory $$part || failed="$$failed $$part"; \
		lap $$part; \
	done; \
	wait $$kernel; \
	echo "--- check-kernel ($(BUILD_KERNEL).log) ---"; cat $(BUILD_KERNEL).log; \
	[ "$$(cat $(BUILD_KERNEL).status 2>/dev/null)" = 0 ] || failed="$$failed check-kernel"; \
	echo "--- check-ceph ($(BUILD_CEPH).log) ---"; cat $(BUILD_CEPH).log; \
	[ "$$(cat $(BUILD_CEPH).status 2>/dev/null)" = 0 ] || failed="$$failed check-ceph"; \
	echo "make check: $$(( $$(date +%s) - start )) s of wall time:" \
		"$${times# }; check-kernel beside them=$$(cat $(BUILD_KERNEL).seconds)s," \
		"then check-ceph=$$(cat $(BUILD_CEPH).seconds)s"; \
	scripts/test-summary.sh --failed-targets "$$failed" $(CHECK_DIRS)

check-default: check-default-build
	@$(MAKE) --no-print-directory check-default-test

check-default-build: $(BUILD)/build.ninja
	scripts/install-deps.sh check
	$(call tests_option,$(BUILD),enabled)
	ninja -C $(BUILD)

check-default-test:
	meson test -C $(BUILD) --print-errorlogs

check-sanitize: $(BUILD_SAN)/build.ninja
	$(call tests_option,$(BUILD_SAN),enabled)
	ninja -C $(BUILD_SAN)
	meson test -C $(BUILD_SAN) --print-errorlogs

# `meson test` builds only what the selected tests use.
check-tsan: $(BUILD_TSAN)/build.ninja
	$(call tests_option,$(BUILD_TSAN),enabled)
	meson test -C $(BUILD_TSAN) --suite threads --print-errorlogs

# Each harness runs its seeds, then fuzzes for 5 seconds (tests/fuzz/run.sh).
# Never a plain `ninja` in $(BUILD_FUZZ): see tests/fuzz/meson.build.
check-fuzz: $(BUILD_FUZZ)/build.ninja
	$(call tests_option,$(BUILD_FUZZ),disabled)
	meson test -C $(BUILD_FUZZ) --suite fuzz --print-errorlogs

# The aarch64 backend, cross-built (cross/aarch64-linux-gnu.ini) and run
# under qemu-user: the differential copy tests, the inline paths, the
# dispatcher, ntm_copy_mc() recovery, and the recorder and crash-image
# tests (the libpmem/libpmemblk drop-ins' recorder tests, suite compat
# too, are left out: their expectations are x86-64's; btt_crash_* runs a
# quarter of its writes, tests/record/meson.build says why). About a
# minute and a half on 2 cores. Skipped without the cross compiler or
# qemu. -Dtools=false and no MESON_ARGS: none of the tool's tests run
# here, and the native builds' options (sanitizers) need arm64 runtimes.
A64_SUITES := --suite copy --suite inline --suite dispatch --suite mc \
	--suite record --no-suite compat
check-aarch64:
	@if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 && \
	    command -v qemu-aarch64-static >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory check-aarch64-run; \
	else \
		echo "check-aarch64: skipped: needs aarch64-linux-gnu-gcc and" \
		     "qemu-aarch64-static (scripts/install-deps.sh check)"; \
	fi

$(BUILD_A64)/build.ninja:
	scripts/install-deps.sh check
	meson setup $(BUILD_A64) --cross-file cross/aarch64-linux-gnu.ini \
		-Dwerror=true -Dtools=false -Dtests=enabled

# `meson test` builds only what the selected tests use.
check-aarch64-run: $(BUILD_A64)/build.ninja
	$(call tests_option,$(BUILD_A64),enabled)
	meson test -C $(BUILD_A64) $(A64_SUITES) --print-errorlogs

# The real kernel's DAX stack (scripts/kernel-check.sh): Debian's cloud
# kernel under QEMU (TCG where KVM cannot boot it). The main boot has a
# label-less NVDIMM, one with labels and a virtio-pmem device; the guest
# makes fsdax (ext4 and xfs -o dax), devdax, sector, raw and virtio-pmem
# namespaces with ndctl and runs tests/kernel/stage.sh with $(BUILD)'s
# tool, library, drop-ins and probes (tests/kernel); two short boots on
# machines whose NFIT names a persistence domain run
# tests/kernel/stage-domain.sh, and one on Debian's generic kernel (the
# cloud kernel has no machine-check support) injects a machine check at a
# devdax page (tests/kernel/stage-mce.sh). About 3 minutes on 2 idle
# cores, 6 with both busy (the main guest's hard timeout is 15 minutes: a hang is
# reported with the console's last lines). Skipped, with a
# message, where QEMU or a kernel cannot be had (exit 77 of the script);
# the checks' results are in $(BUILD_KERNEL)/meson-logs/testlog.json,
# which the summary of make check counts.
check-kernel: check-kernel-deps
	@$(MAKE) --no-print-directory check-kernel-run

check-kernel-deps:
	scripts/install-deps.sh check
	@NTMEM_MCE_KERNEL_DIR=$${NTMEM_MCE_KERNEL_DIR:-$(BUILD_KERNEL)/generic-kernel} \
		scripts/install-deps.sh kernel || \
		echo "check-kernel: the kernel packages could not be installed"

check-kernel-run: $(BUILD)/build.ninja
	$(call tests_option,$(BUILD),enabled)
	ninja -C $(BUILD)
	@$(MAKE) --no-print-directory check-kernel-guest

# The boots alone, on $(BUILD) as it is (make check has built it).
check-kernel-guest:
	@scripts/kernel-check.sh --build $(BUILD) --work $(BUILD_KERNEL); \
		status=$$?; [ $$status -ne 77 ] || status=0; exit $$status

# Ceph on the drop-in (scripts/check-ceph.sh): a monitor, a manager and
# two OSDs on 127.0.0.1, BlueStore on 4 GiB sparse files in /var/tmp
# mapped through ntmem's libpmem (PMEM_IS_PMEM_FORCE=1); objects of 4 KiB
# to 4 MiB read back, rados bench on ntmem's and PMDK's libpmem side by
# side (CEPH_SECONDS a phase, CEPH_ROUNDS rounds), an OSD killed with
# SIGKILL among writes, fsck --deep and every acknowledged object read
# back. About 3 minutes on 2 idle cores (one round of 10 s phases), plus
# a minute and a quarter the first time for the packages. Skipped, with a
# message, where Ceph cannot be installed (exit 77 of the script). Its
# checks are in $(BUILD_CEPH)/meson-logs/testlog.json.
CEPH_SECONDS ?= 10
CEPH_ROUNDS ?= 1
check-ceph: $(BUILD)/build.ninja
	ninja -C $(BUILD)
	@$(MAKE) --no-print-directory check-ceph-run

# The cluster alone, on $(BUILD) as it is (make check has built it).
check-ceph-run:
	@scripts/install-deps.sh ceph || \
		echo "check-ceph: the Ceph packages could not be installed"
	@scripts/check-ceph.sh --build $(BUILD) --work $(BUILD_CEPH) \
		--seconds $(CEPH_SECONDS) --rounds $(CEPH_ROUNDS); \
		status=$$?; [ $$status -ne 77 ] || status=0; exit $$status

# The boots of check-kernel, then the boot full (scripts/kernel-check.sh
# --full, tests/kernel/stage-full.sh): make check's tests as meson runs
# them (its list, their arguments and environment), with /tmp, their
# scratch directory, on a real kernel's DAX file systems, one check per
# test: 67 checks in about 40 minutes under TCG with both cores busy
# (ntmem check's libpmemobj corpus takes 8 of them on each file system).
# Its hard timeout is NTMEM_KERNEL_FULL_TIMEOUT (default 70 minutes,
# about 3 times that); its results join the others' in
# $(BUILD_KERNEL)/meson-logs/testlog.json.
check-kernel-full: check-kernel-deps $(BUILD)/build.ninja
	$(call tests_option,$(BUILD),enabled)
	ninja -C $(BUILD)
	@scripts/kernel-check.sh --full --build $(BUILD) --work $(BUILD_KERNEL); \
		status=$$?; [ $$status -ne 77 ] || status=0; exit $$status

# The mutation proof (scripts/mutate.sh): a copy of the sources and its
# own build in $(BUILD_MUT), kept so the next run rebuilds only what
# changed. check-mutate deletes the first write-back or fence of each file
# (about half a minute); mutate deletes every one. A surviving mutant
# fails both.
check-mutate:
	scripts/install-deps.sh check
	scripts/mutate.sh --short --dir $(BUILD_MUT)

mutate:
	scripts/install-deps.sh check
	scripts/mutate.sh --dir $(BUILD_MUT)
	$(MAKE) --no-print-directory mutate-checker

# The checker's program-mutation proof on every kind of file of the host
# (tests/check/check_mutants.sh --all): each persistence call of the
# corpus's correct programs deleted in turn must be reported by ntmem
# check. make check runs it on tmpfs only.
mutate-checker: $(BUILD)/build.ninja
	scripts/install-deps.sh check
	$(call tests_option,$(BUILD),enabled)
	ninja -C $(BUILD)
	NTMEM_CHECK_LIBDIR=$(BUILD)/src/record/check sh tests/check/check_mutants.sh \
		$(BUILD)/tools/ntmem $(BUILD)/tests/check --all

# Longer runs, one harness per core, no meson timeout. Inputs that reach
# new code are kept in $(BUILD_FUZZ)/tests/fuzz/corpus/ for the next run;
# a crash is saved in $(BUILD_FUZZ)/tests/fuzz/artifacts/ (copy a small
# one into tests/fuzz/corpus/NAME/ once the bug is fixed).
fuzz: $(BUILD_FUZZ)/build.ninja
	$(call tests_option,$(BUILD_FUZZ),disabled)
	FUZZ_SECONDS=$(FUZZ_SECONDS) meson test -C $(BUILD_FUZZ) --suite fuzz \
		--print-errorlogs --timeout-multiplier 0

bench: all
	scripts/install-deps.sh bench
	mkdir -p bench/out
	$(NTMEM) bench copy --csv > bench/out/copy.csv
	$(NTMEM) bench copy --sizes 64,80,96 --total 1600m --align 0 | tee bench/out/copy-descriptors.txt
	$(NTMEM) bench memmap | tee bench/out/memmap.txt
	$(NTMEM) bench memmap --threads 2 --strategy fixed | tee bench/out/memmap-2threads.txt
	$(NTMEM) bench blk | tee bench/out/blk.txt
	gnuplot -e "csv='bench/out/copy.csv'; out='bench/out/copy.png'" bench/plot-copy.gp
	@echo "wrote bench/out/: copy.csv, copy.png, copy-descriptors.txt, memmap.txt, memmap-2threads.txt, blk.txt"

# Crash images over BTT writes at scale (tests/record/test_btt_crash.c): `make
# check` explores about 180k states; CRASH_SCALE=8 multiplies the writes
# and the samples per crash point by 8, about 11M states (a few minutes).
CRASH_SCALE ?= 8
.PHONY: crash
crash: $(BUILD)/build.ninja
	scripts/install-deps.sh check
	$(call tests_option,$(BUILD),enabled)
	ninja -C $(BUILD) tests/record/test_btt_crash
	NTMEM_CRASH_SCALE=$(CRASH_SCALE) $(BUILD)/tests/record/test_btt_crash

install: all
	meson install -C $(BUILD)

# The Debian packages (debian/), built by dpkg-buildpackage from a copy of
# the sources in $(BUILD_DEB)/src; the .deb files land in $(BUILD_DEB).
# No tests run in the package build (make check runs them).
deb:
	scripts/install-deps.sh deb
	scripts/build-deb.sh $(BUILD_DEB)

# The packages unpacked into a scratch root (never onto this system): an
# example built with pkg-config against them and run, the tool, a PMDK
# program on the drop-ins, the man pages, lintian (scripts/check-deb.sh).
check-deb: deb
	scripts/check-deb.sh $(BUILD_DEB)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_TSAN) $(BUILD_FUZZ) $(BUILD_MUT) \
		$(BUILD_A64) $(BUILD_DEB)
