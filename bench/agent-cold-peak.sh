#!/bin/bash
# The agent's peak memory on a host it has not seen: what building the
# address index of every file it meets for the first time costs
# (BENCHMARKS.md, "Where the peak comes from").  Two agents, A and B (two
# builds), start together, each `agent -a -F 99` with an index cache of its
# own, empty, beside the same load for SECONDS: python3 runs (a libpython
# with DWARF, when PYTHON is one) and gcc compiling this tree's sources.
# Their VmHWM, RssAnon and RssFile at the end, and the CPU time each used
# (user and system), per round.  Run as root.
# usage: agent-cold-peak.sh DWARFSAMPLE-A DWARFSAMPLE-B [ROUNDS [SECONDS]]
set -u
a=$1
b=$2
rounds=${3:-3}
secs=${4:-20}
py=${PYTHON:-python3}
src=$(cd "$(dirname "$0")/.." && pwd)
for ((r = 1; r <= rounds; r++)); do
	tmp=$(mktemp -d)
	pids=()
	for v in a b; do
		ds=$a
		[ $v = b ] && ds=$b
		"$ds" agent -a -F 99 --interval 15s --out-dir "$tmp/out-$v" --spool-dir "$tmp/spool-$v" \
			--index-cache "$tmp/ix-$v" --health-interval 0 2>"$tmp/log-$v" &
		pids+=($!)
	done
	sleep 1
	(for i in 1 2 3 4 5 6; do "$py" -c 'sum(range(10**7))'; done) &
	load1=$!
	(for f in "$src"/src/*/*.c; do
		gcc -O2 -g -I"$src/include" -I"$src/src" -c "$f" -o "$tmp/o.o" 2>/dev/null
	done) &
	load2=$!
	sleep "$secs"
	for i in 0 1; do
		v=A
		[ $i = 1 ] && v=B
		echo "round $r $v: $(grep -E 'VmHWM|RssAnon|RssFile' "/proc/${pids[$i]}/status" | tr -s ' \t\n' ' ')CPU $(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f s", ($14 + $15) / hz}' "/proc/${pids[$i]}/stat")"
	done
	kill $load1 $load2 2>/dev/null
	pkill -P $load2 2>/dev/null
	wait $load1 $load2 2>/dev/null
	kill -TERM "${pids[@]}"
	wait "${pids[@]}"
	rm -rf "$tmp"
done
