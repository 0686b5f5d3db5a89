#!/bin/sh
# Where the live command's own CPU goes: dwarfsample (of BUILD-DIR) samples
# the C++ churn workload (bench/live-churn.cc, two threads) at 999 Hz with
# 8 KiB stacks for -d seconds, as bench-live's cpu row does, while the
# dwarfsample of this tree (PROFILER, default BUILD-DIR's) samples it at
# 1999 Hz.  Prints the functions its threads spent the most time in
# (self), and its CPU time per 1000 samples by its own count.
#
# usage: bench/self-profile.sh [-d SECONDS] [-n TOP] [-p PROFILER] [-o FOLDED]
#                              BUILD-DIR
# -o keeps the profile (folded, a root per thread: flamegraph.pl draws it).
set -eu
secs=20 top=12 profiler= keep=
while getopts d:n:p:o: o; do
	case $o in
	d) secs=$OPTARG ;;
	n) top=$OPTARG ;;
	p) profiler=$OPTARG ;;
	o) keep=$OPTARG ;;
	*) sed -n '2,13p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { sed -n '2,13p' "$0" >&2; exit 2; }
build=$(realpath "$1")
ds=$build/tools/dwarfsample
profiler=${profiler:-$ds}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$profiler" -F 1999 -f folded --tid -o "$tmp/self.folded" -- \
	"$ds" -F 999 --stack-size 8192 -d "$secs" -f svg -o /dev/null -- \
	"$build/bench/bench-live-churn" -d $((secs + 2)) -t 2 >/dev/null 2>"$tmp/err"
# The inner command's summary: its samples.
n=$(sed -n 's/^dwarfsample: \([0-9]*\) samples in .*/\1/p' "$tmp/err" | head -1)
# The profiled dwarfsample's threads (the outer one's summary names the
# inner one's pid first among dwarfsample's).
grep '^dwarfsample-[0-9]' "$tmp/self.folded" >"$tmp/ours" || true
[ -n "$keep" ] && cp "$tmp/ours" "$keep"
awk -v top="$top" -v n="${n:-0}" '
	{ c = $NF; $NF = ""; k = split($0, a, ";"); leaf = a[k]; gsub(/ +$/, "", leaf)
	  self[leaf] += c; total += c
	  split(a[1], r, "/"); thr[r[2]] += c }
	END {
		printf "inner samples: %d; profiler samples of it: %d (%.1f ms of CPU at 1999 Hz, %.2f ms per 1000 of its samples)\n",
			n, total, total / 1.999, n ? total / 1.999 / n * 1000 : 0
		for (t in thr) printf "thread %s: %d samples (%.1f%%)\n", t, thr[t], 100 * thr[t] / total
		for (f in self) printf "%d %s\n", self[f], f | "sort -rn | head -" top " > /dev/stderr"
	}' "$tmp/ours" 2>"$tmp/top"
echo "| self samples | share | function |"
echo "| ---: | ---: | --- |"
total=$(awk '{ s += $NF } END { print s + 0 }' "$tmp/ours")
awk -v t="$total" '{ c = $1; $1 = ""; sub(/^ /, ""); printf "| %d | %.1f%% | `%s` |\n", c, 100 * c / t, $0 }' "$tmp/top"
