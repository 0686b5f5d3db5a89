#!/bin/bash
# What sampling a high-rate software event costs (BENCHMARKS.md, "Sampling
# page faults"): tests/stat-workload.c faulting RATE fresh pages a second
# for SECONDS, sampled every PERIOD faults with 8 KiB user stacks, by
#   none   nothing: the workload alone (the baseline)
#   perf   perf record -e page-faults -c PERIOD --call-graph dwarf, then
#          perf script (perf 6.1 here): the file, then the stacks named
#   ds     dwarfsample -e page-faults -c PERIOD --stack-size 8192: the
#          same samples unwound and named live, written as a profile
# For each, RUNS runs, interleaved; per run the CPU time (user + system)
# of everything it ran, the workload's own included, less the baseline's
# median: the profiler's cost (the kernel's stack copies land in the
# workload's time, so they count too).  Then the medians and the ratio
# ds / perf in this run.
# usage: events-pagefaults.sh STAT-WORKLOAD DWARFSAMPLE [RATE [SECONDS [PERIOD [RUNS]]]]
set -u
wl=$1
ds=$2
rate=${3:-100000}
secs=${4:-5}
period=${5:-100}
runs=${6:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cpu() { # command...: its CPU seconds (children included)
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; echo "FAILED: $*" >&2; }
	awk '{ printf "%.3f\n", $1 + $2 }' "$tmp/time"
}

none() { cpu "$wl" fault-rate "$rate" "$secs"; }
perf_run() {
	a=$(cpu perf record -q -e page-faults -c "$period" --call-graph dwarf,8192 -m 512 \
		-o "$tmp/perf.data" -- "$wl" fault-rate "$rate" "$secs")
	b=$(cpu perf script -i "$tmp/perf.data")
	samples=$(perf script -i "$tmp/perf.data" -F event 2>/dev/null | wc -l)
	echo "$a + $b" | bc -l | awk -v s="$samples" '{ printf "%.3f %d\n", $1, s }'
	rm -f "$tmp/perf.data"
}
ds_run() {
	t=$(cpu "$ds" -e page-faults -c "$period" --stack-size 8192 --ring-pages 512 \
		-f folded -o "$tmp/ds.folded" -- "$wl" fault-rate "$rate" "$secs")
	samples=$(sed -n 's/.* \([0-9]*\) samples in .*/\1/p' "$tmp/err" | head -1)
	echo "$t ${samples:-?}"
}

for i in $(seq "$runs"); do
	echo "none $(none)"
	echo "perf $(perf_run)"
	echo "ds   $(ds_run)"
done | tee "$tmp/all"

awk -v runs="$runs" -v rate="$rate" -v secs="$secs" -v period="$period" '
	function median(a, n,   i, j, t) {
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ n[$1]++; v[$1, n[$1]] = $2; if (NF > 2) s[$1] = $3 }
	END {
		for (k in n) { for (i = 1; i <= n[k]; i++) x[i] = v[k, i]; m[k] = median(x, n[k]) }
		p = m["perf"] - m["none"]; d = m["ds"] - m["none"]
		printf "\n%d faults/s for %d s, a sample every %d faults (%d samples/s), median of %d runs\n",
			rate, secs, period, rate / period, runs
		printf "workload alone        %7.3f s CPU\n", m["none"]
		printf "perf record + script  %7.3f s CPU beyond it (%s samples)\n", p, s["perf"]
		printf "dwarfsample           %7.3f s CPU beyond it (%s samples)\n", d, s["ds"]
		if (p > 0)
			printf "ratio dwarfsample / perf 6.1: %.2fx\n", d / p
	}' "$tmp/all"
