#!/bin/sh
# dwarfsample's unwinding against perf's, on identical samples: captures
# made by `perf record --call-graph dwarf`, unwound by `perf script` and by
# `dwarfsample report`, compared frame by frame (agree-compare.c):
#   (a) deep recursion through a qsort comparator, -O2 -fomit-frame-pointer
#   (b) the same in four threads
#   (c) a library dlopen'd and dlclose'd over and over while sampled
#   (d) gcc compiling a large generated file (its cc1: a big C++ binary;
#       see the note there on address-space randomization)
# Each must agree on at least 99.9% of samples, and where not, dwarfsample's
# stack must be the longer one.  (a) is captured twice: with stacks that fit
# the copy, and with perf's default 8 KiB copy, which cuts most of them
# (there perf never reads a copy's last word, so some of its stacks are
# a frame shorter; only "no disagreement" is required).  Every capture is
# also unwound with --no-rule-cache: libunwind alone must give the same
# listing as the compiled rules.  The unwinding is compared with perf's
# as it is, --no-join: joining stacks cut by the copy is checked against
# full copies of the same samples in test-join.sh.
# Then the names: perf script's default listing (symbol+offset and DSO on
# each frame, inlined functions as extra lines) against report's, which
# must have the same line for at least 99.9% of the frames both list.
# For (d) perf script's inlined functions cost minutes (it asks addr2line
# of cc1, a large binary), so its names are checked in two halves: the
# --no-inline listings line for line as above (the functions' symbols),
# and the functions inlined at each frame against llvm-symbolizer's
# (toolchains/tc-check.py --inlined); the rule for the last line of an
# inlined chain (the DWARF name, marked "(inlined)", where it is not the
# symbol's) is checked on (a)-(c), against perf.
# Perf is asked in the plain build only: a sanitized build checks its
# dwarfsample against the captures and answers the plain build kept
# (lib.sh, oracle_begin), or asks perf itself when there are none.
# usage: test-agree.sh DWARFSAMPLE AGREE-WORKLOAD AGREE-LIB AGREE-COMPARE GEN-BIG-C
set -u
ds=$1
workload=$2
lib=$3
compare=$4
gen=$5
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
oracle_begin agree "$workload" "$lib"
[ "$asking" = 0 ] || need_perf

# agree-compare on listings made up for it: a sample where perf listed
# no user frame (the kernel copied none of the stack; ours has the leaf
# from the registers) counts with the equal ones; perf's last caller in
# [heap] is left out as one in no mapping is; another longer stack does
# not count (clean-clone run 39 failed on the first two, each once).
printf '%s\n' 'w 1 1.000001: ' '	ffffffff81000130 ([kernel.kallsyms])' \
	'	7fe5872f2ad7 ([unknown])' '' 'w 1 1.000002: ' '	611fe (/lib/libgmp.so)' '' \
	'w 1 1.000003: ' '	16e3 (/w)' '	177c (/w)' >"$tmp/cmp.ours"
printf '%s\n' 'w 1 1.000001: ' '	ffffffff81000130 ([kernel.kallsyms])' '' \
	'w 1 1.000002: ' '	611fe (/lib/libgmp.so)' '	2a56a7f ([heap])' '' \
	'w 1 1.000003: ' '	16e3 (/w)' '	177c (/w)' >"$tmp/cmp.perf"
check "agree-compare: perf without user frames, or with a caller in [heap], agrees" \
	"$compare" "$tmp/cmp.ours" "$tmp/cmp.perf" 1000 made-up
printf '%s\n' '' 'w 1 1.000004: ' '	16e3 (/w)' '	177c (/w)' >>"$tmp/cmp.ours"
printf '%s\n' '' 'w 1 1.000004: ' '	16e3 (/w)' >>"$tmp/cmp.perf"
check "agree-compare: a stack longer in ours, with perf's user frames, is not equal" \
	sh -c "'$compare' '$tmp/cmp.ours' '$tmp/cmp.perf' 1000 made-up >/dev/null; test \$? -eq 1"

# capture NAME STACK-SIZE COMMAND...  (perf record runs under $wrap):
# perf's capture, and its listings: NAME.perf (the stacks), NAME.perf-names
# (the names; --no-inline where the inlined functions are llvm-symbolizer's
# to check, as $no_inline says).  Only when asking perf: else true.
wrap=
no_inline=
capture() {
	name=$1
	stack=$2
	shift 2
	[ "$asking" = 1 ] || return 0
	# shellcheck disable=SC2086 # $wrap is a command prefix, in words
	if ! $wrap perf record -q -e cpu-clock -F 999 --call-graph "dwarf,$stack" \
		-o "$answers/$name.data" -- "$@" >/dev/null 2>"$tmp/$name.err"; then
		cat "$tmp/$name.err"
		if grep -qiE "permission|not supported|perf_event_paranoid" "$tmp/$name.err"; then
			echo "SKIP: the kernel refuses perf record (see above)"
			exit 77
		fi
		echo "not ok - perf record $name"
		fail=1
		return 1
	fi
	perf script -i "$answers/$name.data" -F comm,tid,time,ip,dso --no-inline \
		>"$answers/$name.perf" 2>/dev/null
	# shellcheck disable=SC2086 # one flag or none
	perf script -i "$answers/$name.data" $no_inline >"$answers/$name.perf-names" 2>/dev/null
}

# same_without_rule_cache NAME: report's listing of NAME.data through
# libunwind alone is the one made through compiled rules (NAME.ours).
# shellcheck disable=SC2317 # called through check
same_without_rule_cache() {
	"$ds" report -F comm,tid,time,ip,dso --no-inline --no-rule-cache --no-join \
		-i "$answers/$1.data" -o "$tmp/$1.slow" &&
		cmp "$tmp/$1.slow" "$tmp/$1.ours"
}

# agree NAME MIN-EQUAL-PERMILLE: dwarfsample against perf's listings of
# capture NAME; the names against perf script --no-inline and
# llvm-symbolizer where $no_inline says so.
agree() {
	name=$1
	data=$answers/$1.data
	n=$(grep -c '^[^	]' "$answers/$name.perf")
	check "$name: perf script lists enough samples to compare ($n)" test "$n" -ge 500
	check "$name: dwarfsample report reads perf's capture" \
		"$ds" report -F comm,tid,time,ip,dso --no-inline --no-join -i "$data" \
		-o "$tmp/$name.ours"
	check "$name: libunwind alone gives the same stacks as the compiled rules" \
		same_without_rule_cache "$name"
	check "$name: agrees with perf script on at least $2 per mille of samples" \
		"$compare" "$tmp/$name.ours" "$answers/$name.perf" "$2" "$name"
	"$ds" report --no-join -i "$data" -o "$tmp/$name.names" 2>/dev/null
	if [ -z "$no_inline" ]; then
		check "$name: names 99.9% of frames as perf script does, inlined frames too" \
			"$compare" --frames "$tmp/$name.names" "$answers/$name.perf-names" 999 "$name"
		return
	fi
	"$ds" report --no-join --no-inline -i "$data" -o "$tmp/$name.names-no-inline" 2>/dev/null
	check "$name: names 99.9% of frames as perf script --no-inline does" \
		"$compare" --frames "$tmp/$name.names-no-inline" "$answers/$name.perf-names" 999 \
		"$name"
	# Its checks print themselves.
	python3 "$(dirname "$0")/toolchains/tc-check.py" "$tmp/$name.names" \
		--inlined "$tmp/$name.names-no-inline" --label "$name" || fail=1
}

capture recurse 32768 "$workload" recurse 2 && agree recurse 999
capture recurse-8k 8192 "$workload" recurse 2 && agree recurse-8k 0
capture threads 32768 "$workload" threads 2 && agree threads 999
capture dlopen 8192 "$workload" dlopen 2 "$lib" && agree dlopen 999

# With address-space randomization off, from perf record down: perf 6.1
# keeps a process's maps across exec and bases a library's unwind table on
# its lowest mapping in the thread, so when the gcc driver's libc (or
# ld.so) lay below cc1's -- half the runs -- perf's own stacks through
# them go wrong.
[ "$asking" = 0 ] || "$gen" 600 >"$tmp/big.c"
wrap="setarch $(uname -m) -R"
no_inline=--no-inline
capture gcc 8192 gcc -O2 -c "$tmp/big.c" -o "$tmp/big.o" && agree gcc 999
check "gcc: the capture holds cc1's samples" \
	grep -q '/cc1)$' "$answers/gcc.perf"

oracle_save
exit $fail
