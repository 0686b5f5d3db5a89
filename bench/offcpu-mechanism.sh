#!/bin/bash
# What each way of sampling context switches costs a switch-heavy
# workload (BENCHMARKS.md, "Off-CPU: choosing the mechanism"): the
# off-CPU tests' ping-pong, two threads bouncing a byte over two pipes
# (tests/offcpu-workload.c, pingpong mode), under
#   none      nothing: the workload alone
#   cs        perf record -e context-switches -c 1 --switch-events
#             --call-graph dwarf,STACK: a sample at every switch out, plus
#             switch records (the mechanism dwarfsample uses)
#   tp        perf record -e sched:sched_switch --call-graph dwarf,STACK:
#             the tracepoint, same registers and stack
#   ds        dwarfsample record --off-cpu --off-cpu-stack-size STACK
# Each is run RUNS times; per run it prints the round trips a second, the
# workload's switches and CPU time (the kernel writes a switch-out sample
# in the context of the task switching out, so that cost lands in the
# workload's own CPU time), the profiler's CPU (the whole command's minus
# the workload's), and the samples the file holds and the samples lost.
# usage: offcpu-mechanism.sh OFFCPU-WORKLOAD DWARFSAMPLE [SECONDS [RATE [RUNS [STACK]]]]
#   RATE: round trips a second the workload is paced to (0: flat out)
set -u
wl=$1
ds=$2
secs=${3:-3}
rate=${4:-10000}
runs=${5:-5}
stack=${6:-8192}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The same ring for every profiler: 2 MiB per CPU (perf's own default for
# root is 516 KiB + 1 page and loses most switch samples here).
pages=512

run() { # name, command...: one measured run
	name=$1
	shift
	rm -f "$tmp/truth"
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$@" "$wl" -o "$tmp/truth" pingpong \
		"$secs" "$rate" >/dev/null 2>"$tmp/err"
	read -r tu ts <"$tmp/time"
	# The truth file: a line per thread, ping's and pong's.
	set -- $(awk '{
			for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			if (v["role"] == "ping") { n = v["n_block"]; el = (v["t1"] - v["t0"]) / 1e9 }
			run += v["run"]; csw += v["csw"]
		} END { printf "%.3f %.0f %d %.3f\n", el, el ? n / el : 0, csw, run / 1e9 }' \
		"$tmp/truth")
	elapsed=$1 rt=$2 sw=$3 wcpu=$4
	prof=$(echo "$tu + $ts - $wcpu" | bc -l)
	samples=- lost=-
	if [ -s "$tmp/f.data" ]; then
		"$ds" dump -q -i "$tmp/f.data" >"$tmp/dump" 2>/dev/null
		samples=$(sed -n 's/^#   total: \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$tmp/dump")
		lost=$(sed -n 's/^#   total: \([0-9]*\) samples, \([0-9]*\) lost.*/\2/p' "$tmp/dump")
	fi
	printf '%-4s elapsed %6.3f s round trips %6s/s switches %7s workload CPU %5.3f s profiler %6.3f s samples %7s lost %s\n' \
		"$name" "$elapsed" "$rt" "$sw" "$wcpu" "$prof" "$samples" "$lost"
	rm -f "$tmp/f.data"
}

for i in $(seq "$runs"); do
	run none
	run cs perf record -q -m $pages -e context-switches -c 1 --switch-events \
		--call-graph "dwarf,$stack" -o "$tmp/f.data" --
	run tp perf record -q -m $pages -e sched:sched_switch \
		--call-graph "dwarf,$stack" -o "$tmp/f.data" --
	run ds "$ds" record --off-cpu --off-cpu-stack-size "$stack" --ring-pages $pages \
		-o "$tmp/f.data" --
done
