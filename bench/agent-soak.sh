#!/bin/bash
# Does the agent's memory stay flat over a long run with programs coming
# and going (BENCHMARKS.md, "Agent soak")?  `dwarfsample agent -a` at RATE
# Hz for MINUTES on a host kept busy by program churn: about two new
# processes a second, each a short-lived program that exits while it is
# sampled, of several kinds, most of them a file the agent has not seen:
#
#   - COPIES copies each of a C program built with DWARF (-g), the same
#     built without (stripped), a C++ one with -g, and of the demo, that
#     differ only in their build-id (each a file of its own to the
#     agent's caches, as the binaries of a deploy or of many containers);
#   - a Rust and a Go program when the toolchains are there (copied the
#     same way);
#   - python3.11 scripts, half of them with -X perf (a perf map each);
#   - sh, perl and gzip.
#
# The agent's RSS and its own health line (cache files and MiB, files evicted
# and renewed, processes and DSOs it holds) are read every STEP_S (10) seconds into
# CSV (a file named by $CSV, else a temporary one).  After WARMUP_S (300 s)
# the RSS slope is fitted by least squares and printed in MiB per hour
# with its 95 % confidence interval (the samples are autocorrelated, so
# the interval is a lower bound on the uncertainty), and the peak RSS
# (VmHWM).  Output goes to a directory (--out-dir): no network.
# usage: agent-soak.sh DWARFSAMPLE DEMO [MINUTES [RATE [CACHE [COPIES]]]]
# CACHE "default" runs the agent without --cache-size.
set -u
ds=$1
demo=$2
minutes=${3:-10}
rate=${4:-99}
cache=${5:-default}
copies=${6:-64}
warmup=${WARMUP_S:-300}
step=${STEP_S:-10}
py=/usr/bin/python3.11
[ -x $py ] || py=python3
tmp=$(mktemp -d)
csv=${CSV:-$tmp/soak.csv}
churn=
agent=
trap 'kill $churn $agent 2>/dev/null; rm -rf "$tmp"' EXIT

mkdir "$tmp/src" "$tmp/bin"
cat >"$tmp/src/w.c" <<'EOF'
#include <stdlib.h>
#include <time.h>
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long leaf(unsigned long x) { return x * 2654435761u + 1; }
__attribute__((noinline)) static void mid(int n) { for (int i = 0; i < n; i++) sink = leaf(sink); }
int main(int argc, char **argv)
{
	double s = argc > 1 ? atof(argv[1]) : 0.2;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		mid(100000);
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < s);
	return 0;
}
EOF
cat >"$tmp/src/w.cc" <<'EOF'
#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
namespace soak {
template <typename K> struct Counter {
	std::map<K, long> m;
	__attribute__((noinline)) void add(const K &k) { m[k]++; }
};
}
int main(int argc, char **argv)
{
	double s = argc > 1 ? std::atof(argv[1]) : 0.2;
	auto t0 = std::chrono::steady_clock::now();
	soak::Counter<std::string> c;
	for (long i = 0; std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < s; i++)
		c.add(std::to_string(i % 5000));
	return c.m.size() == 0;
}
EOF
cat >"$tmp/src/w.rs" <<'EOF'
use std::time::{Duration, Instant};
#[inline(never)]
fn spin(x: u64) -> u64 { x.wrapping_mul(6364136223846793005).wrapping_add(1) }
fn main() {
    let s: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0.2);
    let t0 = Instant::now();
    let mut x = 1u64;
    while t0.elapsed() < Duration::from_secs_f64(s) { for _ in 0..10000 { x = spin(x); } }
    std::process::exit((x == 7) as i32);
}
EOF
cat >"$tmp/src/w.go" <<'EOF'
package main

import (
	"os"
	"strconv"
	"time"
)

//go:noinline
func spin(x uint64) uint64 { return x*6364136223846793005 + 1 }

func main() {
	s := 0.2
	if len(os.Args) > 1 {
		s, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	t0 := time.Now()
	x := uint64(1)
	for time.Since(t0).Seconds() < s {
		for i := 0; i < 10000; i++ {
			x = spin(x)
		}
	}
	if x == 7 {
		os.Exit(1)
	}
}
EOF
cat >"$tmp/src/w.py" <<'EOF'
import sys, time
def work(n):
    return sum(i * i for i in range(n))
t0 = time.monotonic()
while time.monotonic() - t0 < float(sys.argv[1]):
    work(20000)
EOF

kinds=
cc -O2 -g -o "$tmp/bin/cdw" "$tmp/src/w.c" && kinds="$kinds cdw"
cc -O2 -s -o "$tmp/bin/cstrip" "$tmp/src/w.c" && kinds="$kinds cstrip"
c++ -O2 -g -o "$tmp/bin/cxx" "$tmp/src/w.cc" && kinds="$kinds cxx"
cp "$demo" "$tmp/bin/demo" && kinds="$kinds demo"
if command -v rustc >/dev/null; then
	rustc -O -g -C link-arg=-Wl,--build-id -o "$tmp/bin/rust" "$tmp/src/w.rs" 2>/dev/null &&
		kinds="$kinds rust"
fi
if command -v go >/dev/null; then
	(cd "$tmp/src" && GOFLAGS= GOCACHE="$tmp/gocache" go build -ldflags=-B=0x5eed0000000000000000000000000000000000 \
		-o "$tmp/bin/go" w.go 2>/dev/null) && kinds="$kinds go"
fi

# The copies (tests/buildid-copies.py).
for k in $kinds; do
	$py "$(dirname "$0")/../tests/buildid-copies.py" "$tmp/bin/$k" "$copies" "$tmp/bin/$k-" &&
		rm "$tmp/bin/$k" || exit 1
done
set -- $kinds
nkinds=$#

(
	i=0
	while :; do
		k=$(( (i / 2) % nkinds + 1 ))
		c=$(printf %03d $(( (i / (2 * nkinds)) % copies )))
		# Two at a time, so that each exits while the other is sampled.
		"$tmp/bin/${!k}-$c" 0.3 >/dev/null 2>&1 &
		case $((i % 6)) in
		1) $py "$tmp/src/w.py" 0.3 ;;
		3) $py -X perf "$tmp/src/w.py" 0.3 ;;
		5) case $((i % 4)) in
			1) sh -c 'for f in /usr/lib/*; do :; done' ;;
			*) perl -e '$s = 0; $s += $_ for 1 .. 300000' ;;
			esac
			gzip -c "$demo" >/dev/null ;;
		*) sleep 0.2 ;;
		esac
		wait
		i=$((i + 1))
		echo $i >"$tmp/churned"
	done
) &
churn=$!

args=()
[ "$cache" = default ] || args=(--cache-size "$cache")
"$ds" agent -a -F "$rate" --interval 15s --out-dir "$tmp/out" --out-dir-size 64M \
	--spool-dir "$tmp/spool" "${args[@]}" --health-interval "${step}s" 2>"$tmp/log" &
agent=$!
echo "agent -a -F $rate --cache-size $cache, $minutes min; churn: python3.11, sh, perl, gzip and $copies copies of each of:$kinds"
echo "t_s,rss_kib,rss_anon_kib,rss_file_kib,cache_files,cache_mib,evicted,renewed,procs,dsos" >"$csv"
printf '%6s %10s %10s %10s %s\n' "t (s)" "RSS (KiB)" "anon" "file" "the agent's last health line: cache files, MiB, evicted, renewed, processes, DSOs"
for ((t = 0; t <= minutes * 60; t += step)); do
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$agent/status" 2>/dev/null)
	anon=$(awk '/RssAnon/ { print $2 }' "/proc/$agent/status" 2>/dev/null)
	file=$(awk '/RssFile/ { print $2 }' "/proc/$agent/status" 2>/dev/null)
	[ -n "$rss" ] || { echo "the agent exited:"; cat "$tmp/log"; exit 1; }
	h=$(grep 'health:' "$tmp/log" | tail -1 | sed -n \
		's/.*cache \([0-9]*\) files, \([0-9]*\) MiB, \([0-9]*\) evicted, \([0-9]*\) renewed.*/\1,\2,\3,\4/p')
	p=$(grep 'health:' "$tmp/log" | tail -1 | sed -n \
		's/.*holding \([0-9]*\) processes, \([0-9]*\) DSOs.*/\1,\2/p')
	echo "$t,$rss,$anon,$file,${h:-,,,},${p:-,}" >>"$csv"
	printf '%6d %10d %10d %10d %s\n' "$t" "$rss" "$anon" "$file" "${h:-} ${p:-}"
	sleep "$step"
done
hwm=$(awk '/VmHWM/ { print $2 }' "/proc/$agent/status")
kill -TERM $agent
wait $agent
kill $churn 2>/dev/null
wait $churn 2>/dev/null
churn=
agent=
# Slope b of RSS on time after the warm-up, its standard error from the
# residuals, and b +- 1.96 se (n is large: the normal quantile).
awk -F, -v w="$warmup" -v hwm="$hwm" '
	NR > 1 && $1 >= w { n++; x[n] = $1; y[n] = $2; sx += $1; sy += $2
		  if (!min || $2 < min) min = $2; if ($2 > max) max = $2 }
	END {
		if (n < 3) { print "too short a run for a slope after " w " s"; exit 1 }
		mx = sx / n; my = sy / n
		for (i = 1; i <= n; i++) { sxx += (x[i] - mx) ^ 2; sxy += (x[i] - mx) * (y[i] - my) }
		b = sxy / sxx; a = my - b * mx
		for (i = 1; i <= n; i++) sse += (y[i] - a - b * x[i]) ^ 2
		se = sqrt(sse / (n - 2) / sxx)
		k = 3600 / 1024
		printf "after %d s: RSS %.1f..%.1f MiB, peak %.1f MiB; slope %+.2f MiB/hour, 95%% CI [%+.2f, %+.2f] (%d points)\n",
			w, min / 1024, max / 1024, hwm / 1024, b * k, (b - 1.96 * se) * k,
			(b + 1.96 * se) * k, n
	}' "$csv"
grep 'health:' "$tmp/log" | tail -1 | sed 's/.*health: /last health: /'
grep -i 'warn' "$tmp/log" | sort | uniq -c | sort -rn | head -3
echo "programs churned: $(cat "$tmp/churned") rounds (two or three processes each, and their children)"
[ -z "${CSV:-}" ] || echo "CSV: $csv"
