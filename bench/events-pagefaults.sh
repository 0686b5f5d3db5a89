#!/bin/bash
# What sampling a high-rate software event costs (BENCHMARKS.md, "Sampling
# page faults"): tests/stat-workload.c faulting RATE fresh pages a second
# for SECONDS, sampled every PERIOD faults with 8 KiB user stacks, by
#   none   nothing: the workload alone (the baseline)
#   perf   perf record -e page-faults -c PERIOD --call-graph dwarf, then
#          perf script (perf 6.1 here): the file, then the stacks named
#   ds     dwarfsample -e page-faults -c PERIOD --stack-size 8192: the
#          same samples unwound and named live, written as a profile
# For each, RUNS runs, interleaved; per run the workload's own CPU (it
# reports its rusage: the kernel's stack copies, done in its context, are
# in it) and the profiler's: the CPU of everything the run took less the
# workload's.  Then the medians, ms per 1000 samples, and the ratio
# ds / perf in this run.  A run that cannot fault RATE times a second
# faults as fast as it can: the work is RATE x SECONDS faults either way.
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

# run OUT command...: the command's CPU seconds (children included) and
# the workload's own (its last line, "cpu S"), its output to OUT.
run() {
	out=$1
	shift
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$@" >"$out" 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; echo "FAILED: $*" >&2; }
	awk '{ printf "%.3f ", $1 + $2 }' "$tmp/time"
	sed -n 's/^cpu //p' "$out" | tail -1
}

# Per run: the workload's CPU, the profiler's (everything it ran less the
# workload's own), and the samples taken.
none() { set -- $(run "$tmp/w" "$wl" fault-rate "$rate" "$secs"); echo "$2 0 -"; }
perf_run() {
	set -- $(run "$tmp/w" perf record -q -e page-faults -c "$period" --call-graph dwarf,8192 \
		-m 512 -o "$tmp/perf.data" -- "$wl" fault-rate "$rate" "$secs")
	total=$1 work=$2
	set -- $(run /dev/null perf script -i "$tmp/perf.data")
	script=$1
	samples=$(perf script -i "$tmp/perf.data" -F event 2>/dev/null | wc -l)
	awk -v w="$work" -v t="$total" -v s="$script" -v n="$samples" \
		'BEGIN { printf "%.3f %.3f %d\n", w, t - w + s, n }'
	rm -f "$tmp/perf.data"
}
ds_run() {
	set -- $(run "$tmp/w" "$ds" -e page-faults -c "$period" --stack-size 8192 --ring-pages 512 \
		-f folded -o "$tmp/ds.folded" -- "$wl" fault-rate "$rate" "$secs")
	samples=$(sed -n 's/.* \([0-9]*\) samples in .*/\1/p' "$tmp/err" | head -1)
	awk -v w="$2" -v t="$1" -v n="${samples:-0}" 'BEGIN { printf "%.3f %.3f %d\n", w, t - w, n }'
}

for i in $(seq "$runs"); do
	echo "none $(none)"
	echo "perf $(perf_run)"
	echo "ds $(ds_run)"
done | tee "$tmp/all"

awk -v runs="$runs" -v rate="$rate" -v secs="$secs" -v period="$period" '
	function median(a, n,   i, j, t) {
		for (i = 1; i <= n; i++)
			for (j = i + 1; j <= n; j++)
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{ n[$1]++; w[$1, n[$1]] = $2; p[$1, n[$1]] = $3; s[$1] = $4 }
	END {
		for (k in n) {
			for (i = 1; i <= n[k]; i++) { x[i] = w[k, i]; y[i] = p[k, i] }
			mw[k] = median(x, n[k]); mp[k] = median(y, n[k])
		}
		printf "\n%d faults asked for at %d/s, a sample every %d faults, median of %d runs\n",
			rate * secs, rate, period, runs
		printf "%-22s %8s %12s %9s %14s\n", "", "workload", "profiler CPU", "samples",
			"ms / 1000 samples"
		printf "%-22s %7.3fs %12s %9s %14s\n", "alone", mw["none"], "-", "-", "-"
		printf "%-22s %7.3fs %11.3fs %9d %14.1f\n", "perf record + script", mw["perf"],
			mp["perf"], s["perf"], s["perf"] ? mp["perf"] * 1e6 / s["perf"] : 0
		printf "%-22s %7.3fs %11.3fs %9d %14.1f\n", "dwarfsample", mw["ds"], mp["ds"],
			s["ds"], s["ds"] ? mp["ds"] * 1e6 / s["ds"] : 0
		if (mp["perf"] > 0)
			printf "profiler CPU, dwarfsample / perf 6.1: %.3fx\n", mp["ds"] / mp["perf"]
	}' "$tmp/all"
