#!/bin/sh
# A file too large for a one-shot run to index whole (libc's debug file:
# its 5.8 MB of .debug_info cost ~300 ms to index, libdw's first lookups
# 12-56) is named through libdw, and its index is built at the end of a
# run long enough that the build costs at most a tenth of it
# (symcache.c's pr__sym_index_fill_late()): by a run of six seconds.  A
# run of one second builds a partial index instead, of the units it named
# addresses in (symindex.c); the next run maps it, names what it covers
# from it and the rest through libdw, and grows it by those units at its
# end.  A capture named with the partial index and with libdw alone gives
# the same bytes.  (A smaller file over the bound, ld.so's 660 KB, may
# well be built whole at the end of the one-second run.)  Needs
# perf_event_open and libc's debug file (libc6-dbg, installed by
# .ci/debian-packages-build).
# usage: test-index-late.sh DWARFSAMPLE DEMO
# shellcheck disable=SC2317 # the helpers run through check
set -u
ds=$(realpath "$1")
demo=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

libc=$(ldd "$demo" | awk '$1 ~ /^libc\.so/ { print $3 }')
libc=$(realpath "$libc")
id=$(readelf -n "$libc" | awk '/Build ID:/ { print $3 }')
debug=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
if [ ! -r "$debug" ]; then
	echo "SKIP: libc's debug file $debug is missing: apt-get install libc6-dbg"
	exit 77
fi

run() { # cache seconds output
	XDG_CACHE_HOME="$tmp/$1" "$ds" -vv -d "$2" -o "$tmp/$3.folded" -- "$demo" 30 \
		2>"$tmp/$3.err"
}

# Of libc, only the debug-level lines about its DWARF and its index.
said() { # what err
	grep -q "$(basename "$libc"): $1" "$tmp/$2.err"
}

rc=0
run short 1 short || rc=$?
skip_if_refused "$rc" "$tmp/short.err"
check "a one-second run names libc through libdw" said "its DWARF opened" short ||
	cat "$tmp/short.err"
check "... builds no whole index of it at the end" sh -c \
	"! grep -q '$(basename "$libc"): its address index built at the end' '$tmp/short.err'"
check "... but a partial one, of the units it named addresses in, saying so" \
	said "its partial address index ([0-9]* units) built at the end, for the next run ([0-9]* ms estimated, a tenth of the run is [0-9]* ms)" short ||
	grep "built at the end" "$tmp/short.err"
check "... stored by libc's build-id" test -s "$tmp/short/dwarfsample/index/$id-s1.dsix"

run short 1 again
check "the next one-second run maps it" \
	said "its address index mapped from .*/$id-s1.dsix" again || cat "$tmp/again.err"
check "... and names libc's frames" grep -q "__libc_start_call_main" "$tmp/again.folded"

# One capture named two ways: libdw alone; the partial index the
# one-second runs left (what it covers; libdw the rest).  (A report this
# short cannot afford to grow it: test-symindex checks that.)
XDG_CACHE_HOME="$tmp/none" "$ds" record -F 999 -o "$tmp/cap.data" -- "$demo" 1 \
	2>"$tmp/record.err" || cat "$tmp/record.err"
for way in libdw partial; do
	case $way in
	libdw) opt=--no-index-cache ;;
	*) opt= ;;
	esac
	# shellcheck disable=SC2086 # no option, or one
	XDG_CACHE_HOME="$tmp/short" "$ds" report -i "$tmp/cap.data" -vv $opt \
		-F comm,tid,time,ip,sym,dso,srcline >"$tmp/$way.txt" 2>"$tmp/$way.err"
done
check "a capture named with libc's partial index mapped" \
	said "its address index mapped from .*/$id-s1.dsix" partial
check "... names as libdw alone does, lines and all" cmp -s "$tmp/libdw.txt" "$tmp/partial.txt"
check "... and names libc's frames" grep -q "libc.so.6" "$tmp/partial.txt"

# libc's debug file kept inflated in the cache, cut short (its section
# headers gone, its build-id note still there): made again, not read as
# DWARF.
copy=$tmp/short/dwarfsample/debug/$id.debug
check "libc's debug file (compressed) is kept inflated in the cache" test -s "$copy"
if [ -s "$copy" ]; then
	truncate -s 1000000 "$copy"
	XDG_CACHE_HOME="$tmp/short" "$ds" report -i "$tmp/cap.data" -vv --no-index-cache \
		-F comm,tid,time,ip,sym,dso,srcline >"$tmp/cut.txt" 2>"$tmp/cut.err"
	check "a debug file's inflated copy cut short is made again" \
		grep -q "$id.debug: not of this file, or cut short: made again" "$tmp/cut.err"
	check "... and names as before" cmp -s "$tmp/libdw.txt" "$tmp/cut.txt"
fi

run long 6 long
check "a six-second run names libc through libdw" said "its DWARF opened" long
check "... and stores its index at the end, by its build-id" \
	test -s "$tmp/long/dwarfsample/index/$id-s1.dsix"
check "... saying so, with the estimate it went by" \
	said "its address index built at the end, for the next run ([0-9]* ms estimated, a tenth of the run is [0-9]* ms)" long ||
	grep "built at the end" "$tmp/long.err"

run long 1 next
check "the next run maps libc's index" \
	said "its address index mapped from .*/$id-s1.dsix" next || cat "$tmp/next.err"
check "... without opening libc's DWARF" sh -c \
	"! grep -q '$(basename "$libc"): its DWARF opened' '$tmp/next.err'"
check "... and names libc's frames from it" grep -q "__libc_start_call_main" "$tmp/next.folded"

exit $fail
