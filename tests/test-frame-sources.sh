#!/bin/sh
# Where each user frame came from -- the stack copy (dwarf), the kernel's
# frame-pointer chain (fp), an earlier stack (joined) -- on real captures
# of a workload built as distributions build (-O2 -fno-omit-frame-pointer
# -mno-omit-leaf-frame-pointer, by gcc and by clang):
#  - dwarfsample record --call-graph fp, and the profiling command with
#    it: report -f folded --annotate marks every user frame _[fp] (an
#    inlined function mix_[i]_[fp]), and the summary's and --quality's fp
#    count is the frames of the folded output, weighed by their counts;
#  - perf record -g: --quality's fp count is the user frames perf script
#    lists for the same file (the oracle);
#  - --call-graph dwarf: no frame marked _[fp], no fp frame counted, and
#    the summary says nothing of sources (every frame from the copy).
# usage: test-frame-sources.sh DWARFSAMPLE SOURCE-DIR
set -u
ds=$1
src=$2
# shellcheck shell=sh source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

# frames FOLDED: the user frames of a folded profile (--annotate, no
# kernel frames), weighed by each line's count: every entry but the root,
# "[truncated]" and the functions inlined into a frame (_[i], which share
# its frame); then the entries (inlined ones included) not marked _[fp],
# those marked, and whether mix_[i]_[fp] is among them.
frames() {
	awk '{
		n = split($1, f, ";")
		for (i = 2; i <= n; i++) {
			if (f[i] == "[truncated]") continue
			if (f[i] ~ /_\[fp\]$/) marked += $2
			else unmarked += $2
			if (f[i] ~ /^mix_\[i\]_\[fp\]$/) mix = 1
			if (f[i] ~ /_\[i\](_\[fp\])?$/) continue
			frames += $2
		}
	} END { print frames + 0, unmarked + 0, marked + 0, mix + 0 }' "$1"
}

# source COUNT-NAME FILE: the count of a source in a "user frames by
# source:" line of FILE, or "none" without the line or the source.
source_count() {
	sed -n "s/.*user frames by source:.* $1 \([0-9]*\) (.*/\1/p" "$2" | head -n 1 |
		grep . || echo none
}

for cc in gcc clang; do
	if ! command -v $cc >/dev/null; then
		echo "# $cc is not installed"
		continue
	fi
	build_fp_workload $cc "$src"
	check "$cc builds the workload" test -x "$tmp/fpwl-$cc" || continue
	wl=$tmp/fpwl-$cc

	# Recorded: every frame from the chain.
	"$ds" record --call-graph fp -F 999 -o "$tmp/fp.data" -- "$wl" recurse 12 0.4 \
		>/dev/null 2>"$tmp/rec.err"
	rc=$?
	skip_if_refused $rc "$tmp/rec.err"
	check "$cc: record --call-graph fp" test $rc -eq 0 || cat "$tmp/rec.err"
	"$ds" report -i "$tmp/fp.data" -f folded --annotate -o "$tmp/fp.folded" 2>"$tmp/sum"
	# shellcheck disable=SC2046 # four numbers
	set -- $(frames "$tmp/fp.folded")
	fp=$(source_count fp "$tmp/sum")
	echo "# $cc fp: $1 user frames in the folded output, $2 unmarked; summary: fp $fp"
	check "$cc fp: user frames in the profile ($1)" test "$1" -ge 500
	check "$cc fp: every user frame marked _[fp]" test "$2" -eq 0 ||
		grep -v '_\[fp\] [0-9]*$' "$tmp/fp.folded" | head -3
	check "$cc fp: an inlined function reads mix_[i]_[fp]" test "$4" -eq 1
	check "$cc fp: the summary counts them, fp $fp" test "$fp" = "$1" || cat "$tmp/sum"
	check "$cc fp: and none from the copy" test "$(source_count dwarf "$tmp/sum")" = none
	"$ds" report -i "$tmp/fp.data" --quality >"$tmp/q" 2>&1
	check "$cc fp: --quality counts them as fp" \
		grep -q "user frames by source: dwarf 0 (0.0%), fp $1 (100.0%), joined 0 (0.0%)" \
		"$tmp/q" || cat "$tmp/q"

	# The profiling command: its summary, of the same frames it wrote.
	timeout 60 "$ds" --call-graph fp -F 999 -f folded --annotate -o "$tmp/live.folded" \
		-- "$wl" lib 0.4 >/dev/null 2>"$tmp/live.err"
	check "$cc live fp: runs" test $? -eq 0 || cat "$tmp/live.err"
	# shellcheck disable=SC2046
	set -- $(frames "$tmp/live.folded")
	fp=$(source_count fp "$tmp/live.err")
	echo "# $cc live fp: $1 user frames in the folded output, $2 unmarked; summary: fp $fp"
	check "$cc live fp: every user frame marked _[fp] ($1)" test "$1" -ge 100 -a "$2" -eq 0
	check "$cc live fp: the summary counts them, fp $fp" test "$fp" = "$1" ||
		cat "$tmp/live.err"

	# Copies unwound: nothing from the chain, and the summary says nothing.
	"$ds" record --call-graph dwarf -F 999 -o "$tmp/dw.data" -- "$wl" recurse 12 0.4 \
		>/dev/null 2>"$tmp/rec.err"
	check "$cc: record --call-graph dwarf" test $? -eq 0 || cat "$tmp/rec.err"
	"$ds" report -i "$tmp/dw.data" -f folded --annotate -o "$tmp/dw.folded" 2>"$tmp/sum"
	# shellcheck disable=SC2046
	set -- $(frames "$tmp/dw.folded")
	check "$cc dwarf: no frame marked _[fp] ($3 of $1)" test "$1" -ge 500 -a "$3" -eq 0
	check "$cc dwarf: the summary has no sources line" \
		sh -c "! grep -q 'user frames by source' '$tmp/sum'" || cat "$tmp/sum"
	"$ds" report -i "$tmp/dw.data" --quality >"$tmp/q" 2>&1
	check "$cc dwarf: --quality counts every frame dwarf ($1)" \
		grep -q "user frames by source: dwarf $1 (100.0%), fp 0 (0.0%), joined 0 (0.0%)" \
		"$tmp/q" || grep "user frames" "$tmp/q"
done

# perf record -g: the user frames perf script lists are --quality's fp.
if perf --version >/dev/null 2>&1 && [ -x "$tmp/fpwl-gcc" ]; then
	perf record -q -g -F 999 -o "$tmp/g.data" -- "$tmp/fpwl-gcc" recurse 12 0.4 \
		>/dev/null 2>&1
	perf_user=$(perf script -i "$tmp/g.data" -F ip --no-inline 2>/dev/null |
		awk '/^\t/ && !($1 ~ /^ffff/ && length($1) == 16) { n++ } END { print n + 0 }')
	"$ds" report -i "$tmp/g.data" --quality >"$tmp/q" 2>&1
	fp=$(source_count fp "$tmp/q")
	echo "# perf -g: perf script lists $perf_user user frames; --quality: fp $fp"
	check "perf -g: perf script lists user frames ($perf_user)" test "$perf_user" -ge 500
	check "perf -g: --quality's fp is perf script's user frames" test "$fp" = "$perf_user" ||
		cat "$tmp/q"
	check "perf -g: --quality says the stacks are the kernel's frame-pointer chains" \
		grep -q "% of stacks are the kernel's frame-pointer chains" "$tmp/q"
else
	echo "# perf is not installed: the perf -g oracle is left out"
fi

exit $fail
