#!/bin/bash
# What the agent costs on a busy host (BENCHMARKS.md, "Agent cost"): both
# CPUs kept busy by the demo workload (two threads, -O2 without frame
# pointers), and `dwarfsample agent -a` at each rate for SECONDS with
# 15 s windows written to a directory.  Per rate: the agent's CPU time as
# a share of one core (from /proc/PID/stat just before SIGTERM), its peak
# and last RSS, its samples and complete stacks (its last health line),
# and the bytes of a window (the files it wrote, per window).
# usage: agent-cost.sh DWARFSAMPLE DEMO [SECONDS [RATES...]]
set -u
ds=$1
demo=$2
secs=${3:-60}
shift 3 2>/dev/null || shift $#
rates=${*:-19 49 99}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; kill $work 2>/dev/null' EXIT
hz=$(getconf CLK_TCK)

printf '%-6s %10s %10s %10s %9s %9s %12s\n' Hz "CPU %core" "peak RSS" "last RSS" samples complete "B/window"
for rate in $rates; do
	"$demo" $((secs + 30)) 2 >/dev/null &
	work=$!
	out=$tmp/out-$rate
	"$ds" agent -a -F "$rate" --interval 15s --out-dir "$out" --spool-dir "$tmp/spool" \
		--health-interval 600s 2>"$tmp/log-$rate" &
	pid=$!
	sleep "$secs"
	ticks=$(sed 's/.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }')
	hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$pid/status")
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
	kill -TERM $pid
	wait $pid
	kill $work 2>/dev/null
	wait $work 2>/dev/null
	line=$(grep 'health:' "$tmp/log-$rate" | tail -1)
	samples=$(echo "$line" | sed -n 's/.*health: \([0-9]*\) samples.*/\1/p')
	complete=$(echo "$line" | sed -n 's/.* \([0-9.]*%\) complete.*/\1/p')
	files=$(ls "$out" | wc -l)
	bytes=$(du -cb "$out"/*.pb.gz | tail -1 | cut -f1)
	windows=$(ls "$out" | sed 's/.*-\([0-9]*\)\.pb\.gz/\1/' | sort -u | wc -l)
	printf '%-6s %9.2f%% %8d MB %8d MB %9s %9s %12d\n' "$rate" \
		"$(echo "$ticks $hz $secs" | awk '{ print 100 * $1 / $2 / $3 }')" \
		$((hwm / 1024)) $((rss / 1024)) "$samples" "$complete" $((bytes / (windows ? windows : 1)))
	echo "       ($files files in $windows windows)"
done
