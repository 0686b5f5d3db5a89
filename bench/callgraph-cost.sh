#!/bin/bash
# What each --call-graph mode costs at capture (BENCHMARKS.md, "Call-graph
# modes: ring bytes and capture cost"): for each mode, `dwarfsample dump
# -q` attached with -p for SECONDS at RATE Hz per CPU -- the capture
# alone, records copied out of the rings and counted, nothing unwound --
# gives the ring bytes per sample (its summary) and its CPU per 1000
# samples; perf record --call-graph fp and dwarf,8192 on the same process
# the same way give perf's (its records' sizes from perf report -D, its
# CPU from getrusage).  Workloads: bench-live-churn built with frame
# pointers (-O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer, as
# Fedora and Ubuntu build) and without (-O2 -fomit-frame-pointer), two
# threads each.  The unwinding that follows is not measured here.
# usage: callgraph-cost.sh DWARFSAMPLE CHURN_FP CHURN [RATE [SECONDS]]
set -u
ds=$1
churn_fp=$2
churn=$3
rate=${4:-999}
secs=${5:-10}
tmp=$(mktemp -d /dev/shm/callgraph-cost.XXXXXX)
wpid=
trap 'kill $wpid 2>/dev/null; rm -rf "$tmp"' EXIT

# timed FILE command...: run the command; its CPU milliseconds (user and
# system, its children included; getrusage, finer than time(1)'s 10 ms)
# into FILE.
timed() {
	out=$1
	shift
	python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.3f\n" % ((r.ru_utime + r.ru_stime) * 1000))' "$out" "$@"
}

row() { # workload mode samples bytes_per_sample cpu_ms
	awk -v w="$1" -v m="$2" -v n="$3" -v b="$4" -v c="$5" 'BEGIN {
		printf "| %s | %s | %d | %d | %.3f |\n", w, m, n, b, n ? c * 1000 / n : 0 }'
}

ours() { # workload-name mode
	timed "$tmp/time" "$ds" dump -q -F "$rate" -d "$secs" \
		--call-graph "$2" -p "$wpid" >"$tmp/out" 2>"$tmp/err"
	n=$(sed -n 's/^#   total: \([0-9]*\) samples.*/\1/p' "$tmp/out")
	b=$(sed -n 's/^#   ring: [0-9]* bytes of samples, \([0-9]*\) bytes per sample$/\1/p' "$tmp/out")
	row "$1" "dwarfsample $2" "${n:-0}" "${b:-0}" "$(cat "$tmp/time")"
}

perf_rec() { # workload-name mode
	timed "$tmp/time" perf record -q -F "$rate" -e cpu-clock \
		--call-graph "$2" -p "$wpid" -o "$tmp/perf.data" -- sleep "$secs" \
		>/dev/null 2>"$tmp/err"
	perf report -D -i "$tmp/perf.data" 2>/dev/null |
		sed -n 's/.* \[\(0x[0-9a-f]*\)\]: PERF_RECORD_SAMPLE.*/\1/p' >"$tmp/sizes"
	n=$(wc -l <"$tmp/sizes")
	b=$(python3 -c 'import sys
v = [int(l, 16) for l in open(sys.argv[1])]
print(round(sum(v) / len(v)) if v else 0)' "$tmp/sizes")
	row "$1" "perf record $2" "$n" "$b" "$(cat "$tmp/time")"
}

echo "# $(date -u +%F), $rate Hz per CPU, $secs s per row, $(nproc) CPUs," \
     "kernel.perf_event_max_stack $(cat /proc/sys/kernel/perf_event_max_stack)"
echo "| workload | recorder, --call-graph | samples | ring bytes / sample | CPU ms / 1000 samples |"
echo "| --- | --- | ---: | ---: | ---: |"
for w in fp nofp; do
	bin=$churn_fp
	[ $w = nofp ] && bin=$churn
	"$bin" -d $((secs * 9 + 30)) -t 2 >/dev/null 2>&1 &
	wpid=$!
	sleep 1
	for mode in fp auto,1024 auto,2048 auto,4096 auto,8192 dwarf,8192; do
		ours "churn ($w)" "$mode"
	done
	for mode in fp dwarf,8192; do
		perf_rec "churn ($w)" "$mode"
	done
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	wpid=
done
