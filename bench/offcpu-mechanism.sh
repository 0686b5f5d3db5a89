#!/bin/bash
# What each way of sampling context switches costs the switch-heavy
# pingpong workload (BENCHMARKS.md, "Off-CPU: choosing the mechanism"):
#   none      the workload alone
#   cs        perf record -e context-switches -c 1 --switch-events
#             --call-graph dwarf,STACK: a sample at every switch out, plus
#             switch records (the mechanism dwarfsample uses)
#   tp        perf record -e sched:sched_switch --call-graph dwarf,STACK:
#             the tracepoint, same registers and stack
#   ds        dwarfsample record --off-cpu --off-cpu-stack-size STACK
# Each is run RUNS times; per run it prints the workload's elapsed time and
# its own user/sys CPU (the kernel writes a switch-out sample in the
# context of the task switching out, so that cost lands in the workload's
# sys time), the profiler's CPU (the whole command's minus the workload's),
# the samples the file holds and the samples lost.
# usage: offcpu-mechanism.sh PINGPONG DWARFSAMPLE [ROUNDS [WORK_US [RUNS [STACK]]]]
set -u
pp=$1
ds=$2
rounds=${3:-100000}
work=${4:-0}
runs=${5:-5}
stack=${6:-8192}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The same ring for every profiler: 2 MiB per CPU (dwarfsample's default
# for 8 KiB stacks; perf's own default for root is 516 KiB + 1 page and
# loses most switch samples here).
pages=512

run() { # name, command...: one measured run
	name=$1
	shift
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err"
	read -r tu ts <"$tmp/time"
	w=$(grep "^rounds" "$tmp/out")
	# rounds N elapsed E s rate R/s switches V+I user U s sys S s
	set -- $w
	elapsed=$4 rate=$7 sw=$9 wu=${11} wsys=${14}
	prof=$(echo "$tu + $ts - $wu - $wsys" | bc -l)
	samples=- lost=-
	if [ -s "$tmp/f.data" ]; then
		"$ds" dump -q -i "$tmp/f.data" >"$tmp/dump" 2>/dev/null
		samples=$(sed -n 's/^#   total: \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$tmp/dump")
		lost=$(sed -n 's/^#   total: \([0-9]*\) samples, \([0-9]*\) lost.*/\2/p' "$tmp/dump")
	fi
	printf '%-4s elapsed %6.3f s rate %6s/s switches %-13s workload user %5.3f sys %5.3f s profiler %6.3f s samples %7s lost %s\n' \
		"$name" "$elapsed" "${rate%/s}" "$sw" "$wu" "$wsys" "$prof" "$samples" "$lost"
	rm -f "$tmp/f.data"
}

for i in $(seq "$runs"); do
	run none "$pp" "$rounds" "$work"
	run cs perf record -q -m $pages -e context-switches -c 1 --switch-events \
		--call-graph "dwarf,$stack" -o "$tmp/f.data" -- "$pp" "$rounds" "$work"
	run tp perf record -q -m $pages -e sched:sched_switch \
		--call-graph "dwarf,$stack" -o "$tmp/f.data" -- "$pp" "$rounds" "$work"
	run ds "$ds" record --off-cpu --off-cpu-stack-size "$stack" --ring-pages $pages \
		-o "$tmp/f.data" -- "$pp" "$rounds" "$work"
done
