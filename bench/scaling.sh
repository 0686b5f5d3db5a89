#!/bin/sh
# How the live pipeline scales with workers: a large capture replayed
# through it (`report --jobs N`: the live command's pipeline and workers,
# fed from the file as fast as they take records) with 1, 2, ... workers,
# and the samples per second and CPU per sample of each, against the
# same replay without the pipeline (one thread, no copies); with the CPU
# of the pipeline's reading thread and of its workers (report -v), which
# bound what more workers can gain.
#
# usage: bench/scaling.sh [-r RUNS] [-j MAXJOBS] [-f FORMAT] BUILD-DIR [FILE]
#   BUILD-DIR  a build of this tree (its tools/dwarfsample and bench/)
#   FILE       the capture; without it one is recorded: the C++ churn
#              workload (bench/live-churn.cc) in 4 threads at 999 Hz for
#              20 s of its CPU, 8 KiB stacks
#   -r RUNS    runs per worker count, the fastest kept (default 3)
#   -j MAX     worker counts 1..MAX (default: the online CPUs, at least 2)
#   -f FORMAT  what the workers write (default folded)
#
# On a larger host: give -j up to its CPUs and a capture of a workload with
# at least as many busy threads as workers (samples go to workers by
# thread), recorded with -a or on a many-threaded server; the speed-up of
# N workers is the samples/s of N over that of 1.
set -eu
runs=3 maxj=$(nproc) fmt=folded
[ "$maxj" -lt 2 ] && maxj=2
while getopts r:j:f: o; do
	case $o in
	r) runs=$OPTARG ;;
	j) maxj=$OPTARG ;;
	f) fmt=$OPTARG ;;
	*) sed -n '2,22p' "$0" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { sed -n '2,22p' "$0" >&2; exit 2; }
build=$(realpath "$1")
ds=$build/tools/dwarfsample
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $# -ge 2 ]; then
	file=$2
else
	file=$tmp/churn.data
	echo "# recording $file: bench-live-churn, 4 threads, 999 Hz, 8 KiB stacks" >&2
	"$ds" record -F 999 --stack-size 8192 -o "$file" -- \
		"$build/bench/bench-live-churn" -d 20 -t 4 >/dev/null
fi
# Read once, so that every run finds it in the page cache.
cat "$file" >/dev/null

# One run: "wall cpu rss samples reader workers busiest" (the last three,
# the CPU seconds -v reports for the pipeline's reading thread and its
# workers; "- - -" without the pipeline).
one() { # jobs (0: no pipeline)
	if [ "$1" -gt 0 ]; then set -- --jobs "$1" -v; else set --; fi
	cat "$file" >/dev/null
	/usr/bin/time -f "%e %U %S %M" -o "$tmp/time" \
		"$ds" report "$@" -f "$fmt" -i "$file" -o /dev/null 2>"$tmp/err"
	n=$(sed -n 's/^dwarfsample: \([0-9]*\) samples.*/\1/p' "$tmp/err")
	pcpu=$(sed -n 's/^dwarfsample: CPU: reading thread \([0-9.]*\) s, [0-9]* workers* \([0-9.]*\) s.*/\1 \2/p' \
		"$tmp/err")
	busiest=$(sed -n 's/.*(busiest \([0-9.]*\) s)$/\1/p' "$tmp/err")
	[ -n "$pcpu" ] && busiest=${busiest:-$(echo "$pcpu" | cut -d' ' -f2)}
	awk -v n="$n" -v p="${pcpu:-- -}" -v b="${busiest:--}" \
		'{ printf "%s %.3f %d %d %s %s\n", $1, $2 + $3, $4, n, p, b }' "$tmp/time"
}

# The fastest of the runs, by wall time.
best() { # jobs
	i=0
	while [ $i -lt "$runs" ]; do
		one "$1"
		i=$((i + 1))
	done | sort -n | head -1
}

echo "capture: $file ($(du -m "$file" | cut -f1) MB); format $fmt; fastest of $runs"
echo "| workers | samples | wall s | samples/s | speed-up | cpu s | us cpu / sample | reading thread cpu s | workers cpu s (busiest) | peak RSS MB |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
base=
for j in 0 $(seq 1 "$maxj"); do
	set -- $(best "$j")
	wall=$1 cpu=$2 rss=$3 n=$4 reader=$5 workers=$6 busiest=$7
	rate=$(awk -v n="$n" -v w="$wall" 'BEGIN { printf "%.0f", (w > 0 ? n / w : 0) }')
	[ "$j" -eq 1 ] && base=$rate
	up=$(awk -v r="$rate" -v b="${base:-0}" 'BEGIN { if (b > 0) printf "%.2fx", r / b; else printf "-" }')
	name=$j
	[ "$j" -eq 0 ] && name="none (one thread, no pipeline)" && up="-"
	[ "$j" -gt 1 ] && workers="$workers ($busiest)"
	printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$name" "$n" "$wall" "$rate" "$up" \
		"$cpu" "$(awk -v c="$cpu" -v n="$n" 'BEGIN { printf "%.2f", n ? c * 1e6 / n : 0 }')" \
		"$reader" "$workers" "$(awk -v r="$rss" 'BEGIN { printf "%.1f", r / 1024 }')"
done
# The bound the reading thread sets: N workers on C cores take at least
# max(reading thread, busiest worker, all the CPU / C) of wall time.
echo "# wall time is at least max(reading thread, busiest worker, total CPU / $(nproc) cores):"
echo "# a reading thread near the workers' CPU leaves more workers nothing to gain"
