#!/bin/sh
# SPDX-License-Identifier: MIT
#
# build-deb.sh [OUTDIR] - build the Debian packages (debian/) from a copy
# of the source tree in OUTDIR/src (default build-deb/src), so that
# dpkg-buildpackage, which writes its .deb files into the parent of the
# tree it builds, leaves them in OUTDIR and never beside the repository.
#
# In a git checkout the copy is the working tree's files that git knows or
# would add (tracked, plus untracked ones not ignored), so it builds what
# `make` builds and never a build directory; elsewhere it is the tree
# without its build directories.
set -eu
cd "$(dirname "$0")/.."
out=${1:-build-deb}

rm -rf "$out/src"
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mkdir -p "$out/src"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Files deleted in the working tree but still in the index are skipped.
	# shellcheck disable=SC2016 # expanded by the inner shell
	git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		xargs -0 cp --parents -P -t "$out/src"
else
	tar -cf - --exclude='./build' --exclude='./build-*' \
		--exclude='./bench/out' --exclude='./.git' . | tar -xf - -C "$out/src"
fi

# Tests are not run here (debian/rules builds without them: make check
# runs them); the build uses every core.
cd "$out/src"
DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" dpkg-buildpackage -b -us -uc
ls -1 ../*.deb
