#!/bin/sh
# SPDX-License-Identifier: MIT
#
# check_man.sh CHECK - the manual's checks, run by meson (suite man) with
# the environment man/meson.build sets:
#   MAN_SRCDIR MAN_ROOT MAN_BUILDROOT  man/, the source and build trees
#   MAN_PAGES    the pages man/meson.build installs
#   MAN_LINKS    the link pages it generates from section-3 NAME lines
#   MAN_CC       the C compiler; MAN_NTMEM the built tool ('' without)
#   MAN_MESON    meson, for the install check
#
# CHECK is one of:
#   lint      mandoc -Tlint -Wwarning reports nothing for any page in man/,
#             and no alternating-font macro glues words (glued_words)
#   sections  every page has the sections its section needs, a section-3
#             page an example, and every ntmem page it names exists
#   coverage  every function the libraries export is on the NAME line of
#             exactly one section-3 page; every subcommand of tools/ntmem.c
#             has a section-1 page that ntmem(1) names and whose OPTIONS
#             list every option of its --help; every function a drop-in
#             exports is on its section-7 page
#   examples  each example program of a section-3 or -7 page compiles and
#             links against this build (and runs, when the page marks it
#             example-run)
#   install   meson install --destdir: every page of man/ is installed and
#             every installed page, link pages included, renders
set -u
# shellcheck source-path=SCRIPTDIR source=../lib/cli_lib.sh
. "$(dirname "$0")/../lib/cli_lib.sh"

check=$1
cd "$MAN_SRCDIR" || exit 1

# The pages in man/, whether registered or not.
pages=$(for p in ./*.[1-9]; do [ -f "$p" ] && echo "${p#./}"; done)

# section_titles PAGE: its .SH titles, one a line, quotes removed.
section_titles() {
	sed -n 's/^\.SH[ 	]*//p' "$1" | tr -d '"'
}

# section_text PAGE TITLE: the source lines of one .SH section, with
# \- made a plain hyphen.
section_text() {
	awk -v want="$2" '
		/^\.SH/ { t = $0; sub(/^\.SH[ \t]*/, "", t); gsub(/"/, "", t)
			  on = (t == want); next }
		on' "$1" | sed 's/\\-/-/g'
}

# name_list PAGE: the names on its NAME line, one a line.
name_list() {
	section_text "$1" NAME | tr '\n' ' ' | sed 's/ - .*//; s/ -$//' |
		tr ',' '\n' | sed 's/^[ 	]*//; s/[ 	]*$//' | grep -v '^$'
}

# exported MAPFILE: the global symbols of a version script.
exported() {
	grep -E '^[[:space:]]+[A-Za-z_][A-Za-z0-9_]*;' "$1" |
		tr -d ' \t;' | sort -u
}

# subcommands: "info", "bench-copy", ... from tools/ntmem.c's table.
subcommands() {
	sed -n 's/^[ 	]*{ *\(NULL\|"\([a-z]*\)"\), *"\([a-z-]*\)",.*/\2 \3/p' \
		"$MAN_ROOT/tools/ntmem.c" | sed 's/^ //; s/ /-/'
}

# glued_words PAGE: the lines of PAGE whose alternating-font macro (.BR,
# .RB, .IR, .RI, .BI, .IB) glues words the text means to keep apart. Those
# macros join their arguments without a space, so prose left on the macro
# line (".IR foo . Then more" renders "foo.Thenmore") or a second reference
# (".BR a (3), b (3)") runs together; mandoc's lint calls it valid. Two
# rules, each silent on the glue such a macro is for (".BR name (3),",
# ".RB [ \-\-json ]", ".RI \(dq function +0x off \(dq", ".IR a ", " b"):
# an argument ending in . , ; : ! or ? followed by one that does not begin
# with a space, and two plain words (letters, digits, _) in a row.
# Escapes (\(dq, \*(Lq, \[em], \-, \&) count as neither word nor
# punctuation.
glued_words() {
	awk '
	# The arguments of a macro line into arg[1..n], as roff splits them:
	# at blanks, a "quoted argument" whole with "" for one quote, a
	# backslash escape kept with the character after it.
	function split_args(s,    n, i, c, a) {
		n = 0
		i = 1
		while (i <= length(s)) {
			c = substr(s, i, 1)
			if (c == " " || c == "\t") { i++; continue }
			a = ""
			if (c == "\"") {
				for (i++; i <= length(s); i++) {
					c = substr(s, i, 1)
					if (c != "\"") { a = a c; continue }
					if (substr(s, i + 1, 1) != "\"") { i++; break }
					a = a c
					i++
				}
			} else {
				while (i <= length(s)) {
					c = substr(s, i, 1)
					if (c == " " || c == "\t") break
					if (c == "\\") { a = a substr(s, i, 2); i += 2; continue }
					a = a c
					i++
				}
			}
			arg[++n] = a
		}
		return n
	}
	/^\.(BR|RB|IR|RI|BI|IB)[ \t]/ {
		n = split_args(substr($0, 4))
		for (k = 1; k <= n; k++) {
			gsub(/\\\*?(\([^ ][^ ]|\[[^\]]*\])/, "\001", arg[k])
			gsub(/\\./, "\001", arg[k])
		}
		for (k = 1; k < n; k++) {
			if ((arg[k] ~ /[.,;:!?]$/ && arg[k + 1] ~ /^[^ \t]/) ||
			    (arg[k] ~ /^[A-Za-z0-9_]+$/ &&
			     arg[k + 1] ~ /^[A-Za-z0-9_]+$/)) {
				printf "line %d: %s\n", FNR, $0
				break
			}
		}
	}' "$1"
}

do_lint() {
	for p in $pages; do
		mandoc -Tlint -Wwarning "$p" >"$out" 2>&1
		st=$?
		if [ "$st" -eq 0 ] && ! [ -s "$out" ]; then ok "lint $p"; else
			bad "lint $p (mandoc exit $st)"; sed 's/^/# /' "$out"; fi
		glued_words "$p" >"$out"
		if ! [ -s "$out" ]; then ok "$p: no words glued by a font macro"; else
			bad "$p: a font macro glues words (its arguments are joined without spaces)"
			sed 's/^/# /' "$out"; fi
	done
}

do_sections() {
	# Every page is installed: one that is not listed in man/meson.build
	# is a page nobody can read.
	for p in $pages; do
		case " $MAN_PAGES " in
		*" $p "*) ;;
		*) bad "$p is not listed in man/meson.build" ;;
		esac
	done
	for p in $pages; do
		# .TH names the page as its file does: man(1) and apropos
		# show that title.
		th=$(sed -n 's/^\.TH \([^ ]*\) \([^ ]*\).*/\1 \2/p' "$p" | head -n 1)
		want="$(echo "${p%.*}" | tr '[:lower:]' '[:upper:]') ${p##*.}"
		[ "$th" = "$want" ] || bad "$p: .TH says '$th', not '$want'"
		case $p in
		*.1) need="NAME|SYNOPSIS|DESCRIPTION|OPTIONS|EXIT STATUS|ENVIRONMENT|EXAMPLES|SEE ALSO" ;;
		*.3) need="NAME|SYNOPSIS|DESCRIPTION|RETURN VALUE|ERRORS|ENVIRONMENT|EXAMPLES|SEE ALSO" ;;
		*) need="NAME|SYNOPSIS|DESCRIPTION|ENVIRONMENT|EXAMPLES|SEE ALSO" ;;
		esac
		missing=$(echo "$need" | tr '|' '\n' | while read -r s; do
			section_titles "$p" | grep -qxF "$s" || printf '%s; ' "$s"
		done)
		if [ -z "$missing" ]; then ok "$p has its sections"; else
			bad "$p lacks: $missing"; fi
		case $p in
		*.3)
			if grep -q '^\.\\" example-begin' "$p"; then
				ok "$p has an example program"; else
				bad "$p has no example between example-begin and example-end"; fi
			syn=$(section_text "$p" SYNOPSIS)
			if echo "$syn" | grep -q '#include' &&
			   echo "$syn" | grep -q 'pkg-config'; then
				ok "$p synopsis: #include and pkg-config"; else
				bad "$p synopsis lacks #include or the pkg-config line"; fi
			;;
		esac
	done
	# Every "name (N)" reference to an ntmem page resolves to a page or a
	# link page.
	known=$(for p in $pages; do echo "$p"; done
		for l in $MAN_LINKS; do echo "$l.3"; done)
	for p in $pages; do
		sed 's/\\-/-/g; s/\\f[BIRP]//g' "$p" |
			grep -oE '(^|[^a-z0-9_.-])(ntm_[a-z0-9_]+|ntmem(-[a-z0-9]+)*) \([1-9]\)' |
			sed 's/^[^a-z]*//; s/ (\(.\))/.\1/' | sort -u >"$err"
		unresolved=$(while read -r ref; do
			echo "$known" | grep -qxF "$ref" || printf '%s ' "$ref"
		done <"$err")
		if [ -z "$unresolved" ]; then ok "$p: its references resolve"; else
			bad "$p names pages that do not exist: $unresolved"; fi
	done
}

do_coverage() {
	# Section 3: each exported symbol on exactly one NAME line.
	for p in $pages; do
		case $p in *.3) name_list "$p" | sed "s|\$| $p|" ;; esac
	done >"$out.names"
	for sym in $(cat "$MAN_ROOT/src/libntmem.map" \
			 "$MAN_ROOT/src/record/libntmem-check.map" >"$out.map";
		     exported "$out.map"); do
		where=$(awk -v s="$sym" '$1 == s { printf "%s ", $2 }' "$out.names")
		case $where in
		"") bad "$sym: on no section-3 NAME line" ;;
		*" "*" "*) bad "$sym: on the NAME lines of $where" ;;
		*) ok "$sym: $where" ;;
		esac
	done
	rm -f "$out.names" "$out.map"

	# Section 1: each subcommand a page, named by ntmem(1), listing the
	# options its --help shows (usage lines and the option table).
	for sub in $(subcommands); do
		page=ntmem-$sub.1
		if ! [ -f "$page" ]; then bad "ntmem $sub: no $page"; continue; fi
		ok "ntmem $sub: $page"
		if sed 's/\\-/-/g; s/\\f[BIRP]//g' ntmem.1 | grep -q "ntmem-$sub (1)"; then
			ok "ntmem(1) points at $page"; else
			bad "ntmem(1) does not name ntmem-$sub (1)"; fi
		[ -n "$MAN_NTMEM" ] || continue
		# shellcheck disable=SC2046 # "bench-copy" is two words
		"$MAN_NTMEM" $(echo "$sub" | tr '-' ' ') --help >"$out" 2>&1
		opts=$(grep -E '^usage:|^ +(ntmem|\[|-)' "$out" |
		       grep -oE '(^|[ [,])--?[a-zA-Z][a-zA-Z0-9-]*' |
		       sed 's/^[ [,]//' | sort -u)
		text=$(section_text "$page" OPTIONS | sed 's/\\f[BIRP]//g')
		lacks=$(for o in $opts; do
			echo "$text" | grep -qE -- "(^|[^a-zA-Z0-9-])$o([^a-zA-Z0-9-]|\$)" ||
				printf '%s ' "$o"
		done)
		if [ -z "$lacks" ]; then
			ok "$page: OPTIONS has the $(echo "$opts" | wc -w) options of ntmem $sub --help"
		else
			bad "$page: OPTIONS lacks $lacks(ntmem $sub --help has them)"
		fi
	done

	# Section 7: the drop-ins' functions are on their pages.
	for d in libpmem libpmemblk libpmem2; do
		page=ntmem-$d.7
		lacks=$(for sym in $(exported "$MAN_ROOT/compat/$d/$d.map"); do
			grep -qw "$sym" "$page" || printf '%s ' "$sym"
		done)
		if [ -z "$lacks" ]; then ok "$page names every function $d.map exports"
		else bad "$page does not name $lacks"; fi
	done
}

# undo_escapes: man source of an example back to C.
undo_escapes() {
	sed -e '/^[.'"'"']/d' -e 's/\\e/\x01/g' -e 's/\\-/-/g' -e 's/\\&//g' \
	    -e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g' -e 's/\\(ti/~/g' \
	    -e 's/\\(ha/^/g' -e 's/\\(rs/\x01/g' -e 's/\x01/\\/g'
}

do_examples() {
	scratch_dir man-examples "${TMPDIR:-/tmp}"
	n=0
	for p in $pages; do
		case $p in *.3 | *.7) ;; *) continue ;; esac
		# One program per example-begin / example-end pair.
		awk -v dir="$tmp" -v stem="${p%.*}" '
			/^\.\\" example-begin/ { k++; on = 1; next }
			/^\.\\" example-end/ { on = 0; next }
			on { print > (dir "/" stem ".ex" k ".man") }' "$p"
		run=0
		grep -q '^\.\\" example-run' "$p" && run=1
		for src in "$tmp/${p%.*}".ex*.man; do
			[ -f "$src" ] || continue
			n=$((n + 1))
			prog=${src%.man}
			undo_escapes <"$src" >"$prog.c"
			# The recorder's functions live in libntmem-check
			# (built in src/record/, the recorder's wing), and
			# code using them is compiled with NTM_RECORD; the
			# drop-ins' programs build against their own headers
			# and libraries, as they would against PMDK's.
			inc="$MAN_ROOT/include" libdir="$MAN_BUILDROOT/src"
			lib="-lntmem" rec=""
			if grep -qE 'ntmem/(check|crash|hook)\.h' "$prog.c"; then
				libdir="$MAN_BUILDROOT/src/record"
				lib="-lntmem-check" rec="-DNTM_RECORD=1"; fi
			for d in libpmemblk libpmem2 libpmem; do
				grep -q "<$d\.h>" "$prog.c" || continue
				inc="$MAN_ROOT/compat/$d/include"
				libdir="$MAN_BUILDROOT/compat/$d"
				lib="-l:$d.so.1"
				break
			done
			# shellcheck disable=SC2086 # MAN_CC may be several words
			if $MAN_CC -std=gnu11 -Wall -Wextra -Werror $rec \
				-I"$inc" -I"$MAN_BUILDROOT/include" \
				-o "$prog" "$prog.c" -L"$libdir" $lib \
				-Wl,-rpath,"$libdir" -pthread >"$out" 2>&1; then
				ok "$p: ${prog##*/}.c compiles and links"
			else
				bad "$p: ${prog##*/}.c does not compile"
				sed 's/^/# /' "$out"; continue
			fi
			[ "$run" = 1 ] || continue
			if (cd "$tmp" && timeout 120 "$prog") >"$out" 2>&1; then
				ok "$p: ${prog##*/} runs"; else
				bad "$p: ${prog##*/} exits $?"; sed 's/^/# /' "$out"; fi
		done
	done
	echo "# $n example programs"
}

do_install() {
	scratch_dir man-install "${TMPDIR:-/tmp}"
	if ! "$MAN_MESON" install -C "$MAN_BUILDROOT" --no-rebuild --tags man \
		--destdir "$tmp" >"$out" 2>&1; then
		bad "meson install --tags man"; sed 's/^/# /' "$out"; return; fi
	mandir=$(find "$tmp" -type d -path '*/man/man1' | head -n 1)
	mandir=${mandir%/man1}
	if [ -z "$mandir" ]; then bad "no man1 directory installed"; return; fi
	for p in $pages; do
		[ -f "$mandir/man${p##*.}/$p" ] || bad "$p is not installed"
	done
	cd "$mandir" || return
	for f in man*/*; do
		# A link page is rendered through its .so, which mandoc reads
		# relative to the manual's root as man(1) does (its lint calls
		# every .so fragile: the link pages are .so on purpose, so
		# dh_installman can make them symlinks).
		if head -n 1 "$f" | grep -q '^\.so '; then
			target=$(sed -n '1s/^\.so //p' "$f")
			name=${f##*/}
			if [ -f "$target" ] &&
			   mandoc -Tascii "$f" 2>"$out" | col -bx |
				grep -qw -- "${name%.*}"; then
				ok "installed link $f renders $target"; else
				bad "installed link $f: $target missing or lacks ${name%.*}"
				sed 's/^/# /' "$out"; fi
		elif mandoc -Tlint -Wwarning "$f" >"$out" 2>&1 && ! [ -s "$out" ]; then
			ok "installed $f"
		else
			bad "installed $f does not lint clean"; sed 's/^/# /' "$out"
		fi
	done
	for l in $MAN_LINKS; do
		[ -f "man3/$l.3" ] || bad "link page $l.3 is not installed"
	done
}

case $check in
lint) do_lint ;;
sections) do_sections ;;
coverage) do_coverage ;;
examples) do_examples ;;
install) do_install ;;
*) echo "usage: check_man.sh lint|sections|coverage|examples|install" >&2; exit 2 ;;
esac
exit "$fail"
