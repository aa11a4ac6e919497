# SPDX-License-Identifier: MIT
#
# A thin front end to meson; the build itself is described in meson.build.
#
#   make          build into build/
#   make demo     build, then run the main experiment (bench memmap)
#   make check    build and run every test (also under ASan/UBSan)
#   make bench    every benchmark, tables + CSV + plot in bench/out/
#   make install  install into PREFIX (default /usr/local)

BUILD      ?= build
BUILD_SAN  ?= build-san
PREFIX     ?= /usr/local
MESON_ARGS ?=
NTMEM      := $(BUILD)/tools/ntmem

.PHONY: all deps demo check check-default check-sanitize bench install clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

# -Dwerror=true with warning_level=2: every build is -Wall -Wextra -Werror.
# The tests are configured with the build, so their packages come first.
$(BUILD)/build.ninja:
	scripts/install-deps.sh check
	meson setup $(BUILD) --prefix=$(PREFIX) -Dwerror=true $(MESON_ARGS)

$(BUILD_SAN)/build.ninja:
	scripts/install-deps.sh check
	meson setup $(BUILD_SAN) -Dwerror=true -Db_sanitize=address,undefined \
		-Db_lundef=false -Dbuildtype=debug $(MESON_ARGS)

# The seeds' experiment: memmap init of an emulated 100 GiB namespace.
demo: all
	scripts/install-deps.sh bench
	$(NTMEM) info
	$(NTMEM) bench memmap

check: check-default check-sanitize
	@scripts/test-summary.sh $(BUILD) $(BUILD_SAN)

check-default: all
	meson test -C $(BUILD) --print-errorlogs

check-sanitize: $(BUILD_SAN)/build.ninja
	ninja -C $(BUILD_SAN)
	meson test -C $(BUILD_SAN) --print-errorlogs

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

install: all
	meson install -C $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD_SAN)
