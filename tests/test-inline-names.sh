#!/bin/sh
# Names of C++ and Rust frames -- each function, the functions inlined
# into it, their source lines -- against an independent symbolizer,
# llvm-symbolizer --inlining, on every frame of a capture (names-compare.c
# says how the two are compared, and why not against perf script):
#   cxx-gcc      names-cxx.cc by g++ -O2 -g: namespaces, a class template's
#                member, std::sort with a lambda
#   cxx-clang    the same by clang++ (its out-of-line template instances
#                sit in their namespace in DWARF; no .debug_aranges)
#   cxx-gcc-split, cxx-clang-split
#                those with -gsplit-dwarf: the functions in .dwo files,
#                the program holding only skeleton units
#   rust-legacy  names-rust.rs by rustc -C opt-level=2 -g (Debian's, whose
#                default mangling is the legacy one: _ZN...17h<hash>E)
#   rust-v0      the same with -C symbol-mangling-version=v0 (_RNv...)
# Recorded with dwarfsample record, named with report; at least 99.9% of
# the program's frames must agree in names and lines.  perf script's
# agreement on the same capture is printed for the record: perf names an
# inlined function by its bare DW_AT_name ("__unguarded_partition<...>")
# and labels the innermost inlined frame with the outer symbol where
# binutils' addr2line does, so it is no oracle for these names.
# usage: test-inline-names.sh MODE DWARFSAMPLE NAMES-COMPARE AGREE-COMPARE SRCDIR
# shellcheck disable=SC2317 # the helpers run through check
set -u
mode=$1 ds=$2 compare=$3 agree=$4 src=$5
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

need() { # program, Debian package
	command -v "$1" >/dev/null 2>&1 || {
		echo "SKIP: $1 is not installed (Debian: apt-get install $2)"
		exit 77
	}
}
need llvm-symbolizer llvm
need c++filt binutils
make_tmp
prog=$tmp/$mode

# Position-independent, but linked to start at 0x400000: the symbolizer
# must read it at its link-time addresses all the same.
image_base_pie() {
	readelf -h "$prog" | grep -q 'Type: *DYN' &&
		readelf -lW "$prog" | awk '$1 == "LOAD" { print $3; exit }' | grep -qx '0x0*400000'
}
case $mode in
cxx-gcc)
	need g++ g++
	g++ -O2 -g -o "$prog" "$src/names-cxx.cc"
	args=90 ;;
cxx-clang)
	need clang++ clang
	clang++ -O2 -g -o "$prog" "$src/names-cxx.cc"
	args=90 ;;
cxx-gcc-split | cxx-clang-split)
	cxx=g++
	[ "$mode" = cxx-clang-split ] && cxx=clang++
	need $cxx "$cxx (g++ or clang)"
	# In $tmp: clang writes the .dwo in the current directory.
	(cd "$tmp" && $cxx -O2 -g -gsplit-dwarf -o "$prog" "$src/names-cxx.cc")
	args=90 ;;
cxx-image-base)
	# GNU ld 2.40 makes a PIE with -Ttext-segment=0x400000 an ET_EXEC;
	# lld keeps it ET_DYN, with its first segment at its image base.
	need clang++ clang
	need ld.lld lld
	clang++ -O2 -g -fPIE -pie -fuse-ld=lld -Wl,--image-base=0x400000 -o "$prog" \
		"$src/names-cxx.cc"
	check "$mode: an ET_DYN whose first segment is at 0x400000" image_base_pie
	args=90 ;;
go-pie)
	# Go's linker puts a PIE's first segment at 0x400000, as for an
	# executable; its DWARF has inlined functions.
	go=/usr/bin/go
	[ -x $go ] || { echo "SKIP: $go is not installed (Debian: apt-get install golang-go)"; exit 77; }
	mkdir "$tmp/go" && cp "$src/go-recurse/main.go" "$src/go-recurse/go.mod" "$tmp/go/"
	(cd "$tmp/go" && HOME="$tmp" GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" \
		GOFLAGS=-mod=mod GOPROXY=off $go build -buildmode=pie -o "$prog" .)
	check "$mode: an ET_DYN whose first segment is at 0x400000" image_base_pie
	# Its goroutine has six addresses of its own: the leaf's loop (two),
	# rec's two return addresses, the closure's and runtime.goexit's.
	# Everything else is the runtime starting, a handful of samples that a
	# fast machine may not take at all.
	min_addrs=5
	args= ;;
rust-legacy | rust-v0)
	# Debian's rustc, not a rustup one on the PATH.
	rustc=/usr/bin/rustc
	[ -x $rustc ] || { echo "SKIP: $rustc is not installed (Debian: apt-get install rustc)"; exit 77; }
	# Legacy is the default; rustc 1.63 takes "v0" but not "legacy".
	mangling=
	[ "$mode" = rust-v0 ] && mangling="-C symbol-mangling-version=v0"
	# shellcheck disable=SC2086 # $mangling is options, in words
	$rustc -C opt-level=2 -g $mangling -o "$prog" "$src/names-rust.rs"
	args=2000000 ;;
*)
	echo "usage: test-inline-names.sh cxx-gcc|cxx-clang|cxx-gcc-split|cxx-clang-split|cxx-image-base|rust-legacy|rust-v0|go-pie ..." >&2
	exit 2 ;;
esac
check "$mode: built" test -x "$prog" || exit 1
: "${min_addrs:=20}"

"$ds" record -F 999 --stack-size 32768 -o "$tmp/data" -- "$prog" $args \
	>/dev/null 2>"$tmp/record.err"
rc=$?
skip_if_refused $rc "$tmp/record.err"
check "$mode: recorded" test $rc -eq 0 || cat "$tmp/record.err"

"$ds" report -F comm,tid,time,ip,dso --no-inline -i "$tmp/data" -o "$tmp/frames" &&
	"$ds" report -F comm,tid,time,ip,sym,dso,srcline -i "$tmp/data" -o "$tmp/names"
check "$mode: report exits 0" test $? -eq 0
# Without srcline, naming reads no line tables (pr_symbolizer_opts
# no_lines): the same frames and names, only the source lines gone.
"$ds" report -F comm,tid,time,ip,sym,dso -i "$tmp/data" -o "$tmp/names-only" 2>/dev/null
grep -v '^  ' "$tmp/names" >"$tmp/names-no-src"
check "$mode: without srcline (names read without lines), the same frames and names" \
	cmp -s "$tmp/names-no-src" "$tmp/names-only"
"$compare" addrs "$tmp/frames" "$prog" "$prog" >"$tmp/addrs"
check "$mode: the program's frames were sampled ($(wc -l <"$tmp/addrs") addresses)" \
	test "$(wc -l <"$tmp/addrs")" -ge "$min_addrs"
llvm-symbolizer --obj="$prog" --inlining --print-address --functions=linkage --no-demangle \
	<"$tmp/addrs" | c++filt -p -i >"$tmp/llvm"
llvm-symbolizer --obj="$prog" --inlining --print-address --functions=short \
	<"$tmp/addrs" >"$tmp/llvm-short"
check "$mode: names and lines as llvm-symbolizer's on 99.9% of frames" \
	"$compare" compare "$tmp/frames" "$tmp/names" "$prog" "$prog" "$tmp/llvm" \
	"$tmp/llvm-short" 999 "$mode"

# The last line of a frame is the function the address is in: never,
# at an address in the program, one marked inlined (named unlike its
# symbol).
no_outer_inlined() {
	awk -v prog="($prog)" '
		function done() { if (mine[at] && last ~ / \(inlined\)$/) print last; last = "" }
		NR == FNR { if ($NF == prog) mine[$1] = 1; next }
		/^\t/ { if (last != "" && $1 != at) done(); at = $1; last = $0; next }
		/^$/ { if (last != "") done() }' "$tmp/frames" "$tmp/names" >"$tmp/outer"
	! test -s "$tmp/outer"
}

none_mangled() {
	! grep -Eq ' _(R|ZN)[0-9A-Za-z_]+ ' "$tmp/names"
}

# What the layout shows, from DWARF's scopes: inlined functions named with
# their namespaces, and for Rust, names demangled whatever the scheme.
case $mode in
cxx-*)
	check "$mode: std::__unguarded_partition inlined, named with its namespace" \
		grep -q ' std::__unguarded_partition<.*(inlined)$' "$tmp/names"
	check "$mode: std::__introsort_loop named as itself, in the program" \
		grep -q " std::__introsort_loop<.* ($prog)\$" "$tmp/names"
	check "$mode: a function of an anonymous namespace inlined, with its scopes" \
		grep -q ' names::(anonymous namespace)::next_value (inlined)$' "$tmp/names"
	check "$mode: no frame of the program ends in a function marked inlined" \
		no_outer_inlined ;;
go-*)
	check "$mode: the recursion named as Go names it" \
		grep -q " main.rec ($prog)\$" "$tmp/names"
	check "$mode: runtime.goexit named by its symbol, as llvm-symbolizer names it" \
		grep -q " runtime.goexit.abi0 ($prog)\$" "$tmp/names"
	check "$mode: no frame of the program ends in a function marked inlined" \
		no_outer_inlined ;;
rust-*)
	check "$mode: the inlined helper named with its modules" \
		grep -q ' names_rust::work::inner::mix (inlined)$' "$tmp/names"
	check "$mode: the recursion named with its module, no hash" \
		grep -q " names_rust::work::recurse ($prog)\$" "$tmp/names"
	check "$mode: no name left mangled" none_mangled ;;
esac

# For the record only, so in the plain build only (lib.sh, oracle_begin,
# says why perf is asked there).
if [ "${DS_SANITIZE:-none}" = none ] && perf --version >/dev/null 2>&1; then
	"$ds" report -i "$tmp/data" -o "$tmp/ours" 2>/dev/null
	perf script -i "$tmp/data" >"$tmp/perf" 2>/dev/null &&
		"$agree" --frames "$tmp/ours" "$tmp/perf" 0 "$mode (against perf script, not required)"
fi
exit $fail
