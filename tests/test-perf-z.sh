#!/bin/sh
# perf record -z files (records compressed with zstd), by perf 6.1 and by
# perf 7.3 (Debian 13 root, when built): dwarfsample reads every sample of
# them, as perf script does on the same file, in every verb and format.
# (Neither perf's inject decompresses them: its copy keeps the compressed
# records, so it is no oracle here.)
# usage: test-perf-z.sh DWARFSAMPLE WORKLOAD
# shellcheck disable=SC2317 # the helpers run through check
set -u
ds=$1
workload=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_perf
make_tmp

# headers FILE: a perf-script text's samples, "comm tid time" each
# (frame lines start with a tab).
headers() {
	grep -v '^	' "$1" | awk 'NF { print $1, $2, $3 }'
}

# writes Z FORMAT: report writes FORMAT from Z, without a word of damage.
writes() {
	"$ds" report -i "$1" -f "$2" -o "$tmp/out" 2>"$tmp/err" && test -s "$tmp/out" &&
		! grep -qi "compress\|damaged" "$tmp/err"
}

# one NAME PERF...: a capture by that perf, and the checks.
one() {
	name=$1
	shift
	z=$tmp/$name-z.data
	if ! "$@" record -z -q -F 999 --call-graph dwarf,4096 -o "$z" -- \
		"$workload" spin 0.5 >"$tmp/rec.log" 2>&1; then
		if grep -q "perf_event_paranoid" "$tmp/rec.log"; then
			echo "SKIP: the kernel refuses perf_event_open:"
			cat "$tmp/rec.log"
			exit 77
		fi
		check "$name records with -z" false
		cat "$tmp/rec.log"
		return
	fi
	"$@" report -i "$z" --header-only >"$tmp/head" 2>/dev/null
	check "$name's file is compressed with zstd ($(grep -m1 '^# compressed' "$tmp/head"))" \
		grep -q '^# compressed : Zstd' "$tmp/head"
	# The oracle: perf script on the same file.
	"$@" script -i "$z" -F comm,tid,time >"$tmp/perf.txt" 2>/dev/null
	headers "$tmp/perf.txt" >"$tmp/perf.h"
	"$ds" report -i "$z" -F comm,tid,time,ip,sym >"$tmp/ds.txt" 2>"$tmp/ds.err"
	check "report reads $name's -z file" test $? -eq 0
	check "without a word of damage or compression" \
		sh -c "! grep -qi 'compress\|damaged\|inject' '$tmp/ds.err'"
	headers "$tmp/ds.txt" >"$tmp/ds.h"
	n=$(wc -l <"$tmp/perf.h")
	check "its $(wc -l <"$tmp/ds.h") samples are perf script's $n (comm, tid, time)" \
		cmp -s "$tmp/ds.h" "$tmp/perf.h"
	check "and that is about 500 ($n)" test "$n" -ge 200
	d=$("$ds" dump -q -i "$z" 2>/dev/null | sed -n 's/^#   total: \([0-9]*\) samples.*/\1/p')
	check "dump counts them too ($d)" test "${d:-0}" -eq "$n"
	# Every sample in the profile formats too: folded's weights add up to
	# the samples, or to their periods (in ns, as cpu-clock counts them)
	# as perf script prints them.
	p=$("$@" script -i "$z" -F period 2>/dev/null | awk 'NF { p += $1 } END { print p + 0 }')
	w=$("$ds" report -i "$z" -f folded 2>/dev/null | awk '{ w += $NF } END { print w + 0 }')
	check "folded weighs them all ($w: $n samples, $p ns)" \
		test "$w" -eq "$n" -o "$w" -eq "$p"
	for f in speedscope pprof svg; do
		check "report -f $f reads $name's -z file" writes "$z" "$f"
	done
}

one perf-6.1 perf
d13=${DS_DEBIAN13_ROOT:-/var/cache/dwarfsample/debian13}
if [ -f "$d13/.ready" ] && [ -x "$d13/run-perf" ]; then
	one perf-7.3 "$d13/run-perf"
else
	echo "# no Debian 13 root at $d13: perf 7.3's -z files not tried"
fi
exit $fail
