#!/bin/bash
# Issue 32's goals as ratios against perf 7.3 and perf 6.1, measured in
# one run (BENCHMARKS.md, "Against perf 7.3 and 6.1 (issue 32)").  Every
# comparison is interleaved -- one repetition of each command in turn,
# REPS times -- so load on this shared machine hits both sides; each row
# is the median of its repetitions with their range, each ratio the
# median of the per-repetition ratios (peer / ours, or ours / peer for
# costs) with its range.  CPU is user + system of the command and its
# children (getrusage); wall is printed too.  Every command line run is
# printed first.
#
#   offline  the cc1 capture (CC1-FILE, or recorded here: gcc -O2 -c of
#            tests/gen-big-c.sh's file of FUNCS functions under `setarch
#            -R perf record -e cpu-clock -F 1999 --call-graph dwarf`,
#            perf 6.1, its default 8 KiB copies): perf script and our
#            `report` printing the same fields, to /dev/null --
#              names:     -F comm,tid,time,ip,sym,dso, inline frames
#                         (perf --inline, ours by default)
#              addresses: -F comm,tid,time,ip,dso --no-inline
#            ours twice per repetition, each repetition with its own
#            empty cache directory (XDG_CACHE_HOME): "cold", then "warm"
#            (the same directory again).  perf 6.1's names take minutes
#            (addr2line per address): one run, at the end, unless -s.
#            Beforehand, outside the timing, each tool's output is
#            written once and its samples and frames counted.
#   live     the profiling command as a user runs it against perf 7.3's
#            record + script on the same running workload (the C++ churn
#            of bench/live-churn.cc, two threads, no frame pointers), at
#            99 and 999 Hz, each for SECONDS, the same copy size on both
#            sides (--call-graph dwarf,8192): `dwarfsample -p PID -d
#            SECONDS -o out.txt` (perf script's text: the same output),
#            and `-o out.svg` (the flame graph, our default) beside it,
#            against `perf record -e cpu-clock -F RATE --call-graph
#            dwarf,8192 -p PID -o FILE -- sleep SECONDS` then `perf script
#            -i FILE >out.txt` (its defaults: names, inline frames).
#            Costs are CPU ms per 1000 samples, each tool's own count.
#   startup  launch to the first named sample, the cache warm: the
#            profiler attached (-p) to the churn workload already
#            running, at 999 Hz, with DWARFSAMPLE_BENCH_FIRST_NAMED set
#            (tools/cli/firstnamed.c: the profiler notes CLOCK_MONOTONIC
#            when the first sample whose every user frame has a name has
#            been named, after the output took it) minus CLOCK_MONOTONIC
#            taken here just before launching it.  It includes opening
#            the events and reading the target's maps, and at most one
#            sample period (1 ms) of waiting for the first sample; the
#            profiler's own CPU by then is printed beside it.  Four
#            rows: "warm", the cache as one default one-second run leaves
#            it (the debug files inflated, the address indexes of files
#            with a small .debug_info); "after-10s", as one default run
#            of ten seconds leaves it (which indexes at its end the larger
#            files it named, libc's debug file among them); "indexed", every file's address index
#            cached too (warmed by one run with DS_SYMINDEX=1, as a
#            -Dsymindex=true build or any run on the index's path leaves
#            it); "cold", a fresh cache directory each time.
#   all      the three.
#
# usage: vs-perf.sh [-q] [-s] [-r REPS] [-d SECONDS] [-n FUNCS]
#                   offline|live|startup|all BUILD-DIR [CC1-FILE]
#   -q  quick: checks the script runs and yields numbers, not figures
#       (a small capture, 1 repetition, 1 s live at 999 Hz; about 20 s)
#   -s  skip perf 6.1's names (minutes)
#   -r  repetitions (default 5 offline and startup, 3 live)
#   -d  seconds per live row (default 10)
#   -n  functions in the generated file for the cc1 capture (default 1500:
#       about 27 000 samples, 145 MB)
#   $PERF7  perf 7.3 (default /var/cache/dwarfsample/debian13/run-perf,
#           Debian 13's perf run on this machine's files); $PERF6 perf 6.1
#           (default perf)
#   $PIN_CPU  the CPU every offline run is pinned to (default the last):
#           both tools on the same one.  On this VM one CPU runs the same
#           work 1.5x slower than the other, for perf and for ours alike,
#           so unpinned runs gave ratios off by that much either way.
# Run it under the live tests' lock (flock /tmp/ds-live.lock ...): it
# samples the machine.
set -u
usage() { sed -n '2,/^set -u$/{/^#/p}' "$0" >&2; exit 2; }
quick= slow=1 reps= secs=10 funcs=1500
while getopts qsr:d:n: o; do
	case $o in
	q) quick=1 ;;
	s) slow= ;;
	r) reps=$OPTARG ;;
	d) secs=$OPTARG ;;
	n) funcs=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || usage
part=$1
build=$(realpath "$2")
cc1=${3:-}
[ -n "$cc1" ] && cc1=$(realpath "$cc1")
if [ -n "$quick" ]; then
	reps=${reps:-1} secs=1 funcs=60 slow=
fi
perf6=${PERF6:-perf}
perf7=${PERF7:-/var/cache/dwarfsample/debian13/run-perf}
ds=$build/tools/dwarfsample
here=$(dirname "$(realpath "$0")")
tmp=$(mktemp -d /tmp/vs-perf.XXXXXX)
wpid=
trap 'kill $wpid 2>/dev/null; rm -rf "$tmp"' EXIT
# Names from the files on this machine only, for every tool alike.
unset DEBUGINFOD_URLS
. "$here/perf-lib.sh"

die() {
	echo "vs-perf: $*" >&2
	exit 1
}

# The table of measurements: "ROW REP CPU_MS WALL_MS [SAMPLES]" lines.
results=$tmp/results
: >"$results"

# measure ROW REP command...: run it, timed, its output to /dev/null; a
# failure ends the benchmark (a figure of a failed run is no figure).
pin=(taskset -c "${PIN_CPU:-$(($(nproc) - 1))}")
measure() {
	row=$1 rep=$2
	shift 2
	timed "$tmp/t" "${pin[@]}" "$@" >/dev/null 2>"$tmp/err" ||
		die "$row failed: $* ($(tail -1 "$tmp/err"))"
	echo "$row $rep $(cat "$tmp/t")" >>"$results"
}

# show LABEL COMMAND...: print a command line once, as it is run.
shown=$tmp/shown
: >"$shown"
show() {
	label=$1
	shift
	grep -qxF "$label" "$shown" && return
	echo "$label" >>"$shown"
	echo "#   $label: $*"
}

# summary ROW...: "| row | CPU median (range) | wall median (range) |".
summary() {
	"$py" - "$results" "$@" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows.setdefault(f[0], []).append([float(x) for x in f[2:]])
def fmt(v, unit):
    if len(v) == 1:
        return "%.3f %s" % (v[0], unit)
    return "%.3f %s (%.3f–%.3f)" % (statistics.median(v), unit, min(v), max(v))
for r in sys.argv[2:]:
    v = rows.get(r, [])
    if not v:
        continue
    print("| %s | %d | %s | %s |" % (r, len(v), fmt([x[0] / 1000 for x in v], "s"),
                                     fmt([x[1] / 1000 for x in v], "s")))
EOF
}

# ratio LABEL NUM DEN [GOAL_MIN|-] [GOAL_MAX|-] [PER_K]: the median and
# range of NUM/DEN over the repetitions both ran, by CPU and by wall
# time, and whether the goal holds at the CPU median; with PER_K, CPU per
# 1000 of each side's own samples (the fifth field), and no wall ratio
# (the runs last the same time).
ratio() {
	"$py" - "$results" "$@" <<'EOF'
import statistics, sys
res, label, num, den = sys.argv[1:5]
lo = sys.argv[5] if len(sys.argv) > 5 else "-"
hi = sys.argv[6] if len(sys.argv) > 6 else "-"
per_k = len(sys.argv) > 7
rows = {}
for line in open(res):
    f = line.split()
    rows.setdefault(f[0], {})[f[1]] = [float(x) for x in f[2:]]
a, b = rows.get(num, {}), rows.get(den, {})
reps = [k for k in a if k in b and (not per_k or (a[k][2] and b[k][2]))]
if not reps:
    print("| %s | no figure | | | |" % label)
    sys.exit()
def cost(v, i):
    return v[i] * 1000 / v[2] if per_k else v[i]
def col(i):
    r = [cost(a[k], i) / cost(b[k], i) for k in reps]
    rng = " (%.3f–%.3f)" % (min(r), max(r)) if len(r) > 1 else ""
    return statistics.median(r), "%.3f×%s" % (statistics.median(r), rng)
m, cpu = col(0)
wall = "" if per_k else col(1)[1]
goal = ""
if lo != "-":
    goal = "≥ %s×: %s" % (lo, "met" if m >= float(lo) else "NOT met")
if hi != "-":
    goal = "≤ %s×: %s" % (hi, "met" if m <= float(hi) else "NOT met")
print("| %s | %d | **%s** | %s | %s |" % (label, len(reps), cpu, wall, goal))
EOF
}

# count FILE: "SAMPLES FRAMES" of perf script's text (a sample's first
# line starts in column 0, its frames with a tab).
count() {
	awk '/^[^ \t]/ { n++ } /^\t/ { f++ } END { printf "%d %d\n", n, f }' "$1"
}

record_cc1() {
	echo "# recording the cc1 capture ($funcs functions)..." >&2
	sh "$here/../tests/gen-big-c.sh" "$funcs" >"$tmp/big.c" || die "gen-big-c.sh failed"
	# Randomization off: see tests/test-agree.sh on perf and exec.
	setarch "$(uname -m)" -R "$perf6" record -q -e cpu-clock -F 1999 --call-graph dwarf \
		-o "$tmp/cc1.data" -- gcc -O2 -c "$tmp/big.c" -o "$tmp/big.o" >/dev/null 2>&1 ||
		die "perf record of gcc failed (root or perf_event_paranoid <= 1 is needed)"
	cc1=$tmp/cc1.data
}

offline() {
	[ -n "$cc1" ] || record_cc1
	set -- $(perfdata "$cc1")
	echo "## offline: $cc1, $(($(stat -c %s "$cc1") / 1000000)) MB, $1 samples (${*:4})"
	names="comm,tid,time,ip,sym,dso"
	addrs="comm,tid,time,ip,dso"
	p7n=("$perf7" script -F "$names" --inline -i "$cc1")
	p7a=("$perf7" script -F "$addrs" --no-inline -i "$cc1")
	p6n=("$perf6" script -F "$names" --inline -i "$cc1")
	p6a=("$perf6" script -F "$addrs" --no-inline -i "$cc1")
	dsn=("$ds" report -F "$names" -i "$cc1" -o /dev/null)
	dsa=("$ds" report -F "$addrs" --no-inline -i "$cc1" -o /dev/null)
	show "perf 7.3, names" "${p7n[@]}"
	show "perf 7.3, addresses" "${p7a[@]}"
	show "perf 6.1, names" "${p6n[@]}"
	show "perf 6.1, addresses" "${p6a[@]}"
	show "ours, names" "XDG_CACHE_HOME=DIR ${dsn[*]}"
	show "ours, addresses" "XDG_CACHE_HOME=DIR ${dsa[*]}"
	# The same output?  Written once, outside the timing.
	"${p7n[@]}" >"$tmp/p7n.txt" 2>/dev/null
	"${p7a[@]}" >"$tmp/p7a.txt" 2>/dev/null
	"${p6a[@]}" >"$tmp/p6a.txt" 2>/dev/null
	XDG_CACHE_HOME=$tmp/xdg-check "${dsn[@]::${#dsn[@]}-1}" "$tmp/dsn.txt" 2>/dev/null
	XDG_CACHE_HOME=$tmp/xdg-check "${dsa[@]::${#dsa[@]}-1}" "$tmp/dsa.txt" 2>/dev/null
	echo "#   samples and frames printed: names, perf 7.3 $(count "$tmp/p7n.txt"), ours" \
		"$(count "$tmp/dsn.txt"); addresses, perf 7.3 $(count "$tmp/p7a.txt"), perf 6.1" \
		"$(count "$tmp/p6a.txt"), ours $(count "$tmp/dsa.txt")"
	rm -f "$tmp"/*.txt
	for rep in $(seq "$reps"); do
		echo "#   repetition $rep of $reps" >&2
		measure p7-names "$rep" "${p7n[@]}"
		mkdir -p "$tmp/xdg-n$rep"
		XDG_CACHE_HOME=$tmp/xdg-n$rep measure ours-names-cold "$rep" "${dsn[@]}"
		XDG_CACHE_HOME=$tmp/xdg-n$rep measure ours-names-warm "$rep" "${dsn[@]}"
		measure p7-addrs "$rep" "${p7a[@]}"
		measure p6-addrs "$rep" "${p6a[@]}"
		mkdir -p "$tmp/xdg-a$rep"
		XDG_CACHE_HOME=$tmp/xdg-a$rep measure ours-addrs-cold "$rep" "${dsa[@]}"
		XDG_CACHE_HOME=$tmp/xdg-a$rep measure ours-addrs-warm "$rep" "${dsa[@]}"
	done
	[ -n "$slow" ] && measure p6-names 1 "${p6n[@]}"
	echo "| row | runs | CPU | wall |"
	echo "| --- | ---: | ---: | ---: |"
	summary p7-names p6-names ours-names-cold ours-names-warm p7-addrs p6-addrs \
		ours-addrs-cold ours-addrs-warm
	echo
	echo "| ratio | runs | CPU, median (range) | wall, median (range) | goal, by CPU |"
	echo "| --- | ---: | ---: | ---: | --- |"
	ratio "names: perf 7.3 / ours warm" p7-names ours-names-warm 20
	ratio "names: perf 7.3 / ours cold" p7-names ours-names-cold
	ratio "names: perf 6.1 / ours warm" p6-names ours-names-warm
	ratio "addresses: perf 7.3 / ours warm" p7-addrs ours-addrs-warm 15
	ratio "addresses: perf 7.3 / ours cold" p7-addrs ours-addrs-cold
	ratio "addresses: perf 6.1 / ours warm" p6-addrs ours-addrs-warm
	ratio "names: ours cold / ours warm" ours-names-cold ours-names-warm 1.5
	ratio "addresses: ours cold / ours warm" ours-addrs-cold ours-addrs-warm
}

start_churn() {
	"$build/bench/bench-live-churn" -d "$1" -t 2 >/dev/null 2>&1 &
	wpid=$!
	sleep 1
	kill -0 "$wpid" 2>/dev/null || die "the churn workload did not start"
}

stop_churn() {
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	wpid=
}

# live_ours ROW REP FILE: the profiling command for $secs, at $rate; its
# samples by its summary.
live_ours() {
	row=$1 rep=$2
	timed "$tmp/t" "$ds" --call-graph dwarf,8192 -F "$rate" -p "$wpid" -d "$secs" \
		-o "$tmp/$3" >/dev/null 2>"$tmp/err" || die "$row failed ($(tail -1 "$tmp/err"))"
	n=$(sed -n 's/^dwarfsample: \([0-9]*\) samples in .*/\1/p' "$tmp/err")
	echo "$row $rep $(cat "$tmp/t") ${n:-0}" >>"$results"
	rm -f "$tmp/$3"
}

live_perf() {
	row=$1 rep=$2
	timed "$tmp/rec" "$perf7" record -q -e cpu-clock -F "$rate" --call-graph dwarf,8192 \
		-p "$wpid" -o "$tmp/perf.data" -- sleep "$secs" >/dev/null 2>"$tmp/err" ||
		die "perf 7.3 record failed ($(tail -1 "$tmp/err"))"
	timed "$tmp/scr" "$perf7" script -i "$tmp/perf.data" >"$tmp/out.txt" 2>/dev/null ||
		die "perf 7.3 script failed"
	set -- $(perfdata "$tmp/perf.data")
	read -r rc rw <"$tmp/rec"
	read -r sc sw <"$tmp/scr"
	echo "$row-record $rep $rc $rw $1" >>"$results"
	echo "$row-script $rep $sc $sw $1" >>"$results"
	echo "$row $rep $(awk -v a="$rc" -v b="$sc" -v c="$rw" -v d="$sw" \
		'BEGIN { printf "%.3f %.3f", a + b, c + d }') $1" >>"$results"
	echo "#   perf's file: $1 samples, $2 lost, ${*:4}; script: $(count "$tmp/out.txt")" \
		"samples and frames" >&2
	rm -f "$tmp/perf.data" "$tmp/out.txt"
}

# per_k_summary ROW...: CPU ms per 1000 samples, median and range.
per_k_summary() {
	"$py" - "$results" "$@" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 4:
        rows.setdefault(f[0], []).append((float(f[2]), int(f[4])))
for r in sys.argv[2:]:
    v = rows.get(r, [])
    if not v:
        continue
    k = [c * 1000 / n for c, n in v if n]
    s = "%.2f (%.2f–%.2f)" % (statistics.median(k), min(k), max(k)) if len(k) > 1 else \
        "%.2f" % k[0] if k else "no samples"
    print("| %s | %d | %s | %s |" % (r, len(v), " ".join(str(n) for _, n in v), s))
EOF
}

live() {
	local rates="99 999"
	[ -n "$quick" ] && rates=999
	show "perf 7.3 record" "$perf7 record -q -e cpu-clock -F RATE --call-graph dwarf,8192 -p PID -o FILE -- sleep $secs"
	show "perf 7.3 script" "$perf7 script -i FILE >out.txt"
	show "ours, text" "$ds --call-graph dwarf,8192 -F RATE -p PID -d $secs -o out.txt"
	show "ours, svg" "$ds --call-graph dwarf,8192 -F RATE -p PID -d $secs -o out.svg"
	echo "#   workload: $build/bench/bench-live-churn -t 2 (C++, -O2 -fomit-frame-pointer), stack copy 8192 bytes both sides"
	for rate in $rates; do
		start_churn $(((secs * 3 + 15) * reps + 30))
		# Its first seconds (allocation, start-up) sampled by none.
		for rep in $(seq "$reps"); do
			echo "#   $rate Hz, repetition $rep of $reps" >&2
			live_perf "p7-$rate" "$rep"
			live_ours "ours-text-$rate" "$rep" out.txt
			live_ours "ours-svg-$rate" "$rep" out.svg
		done
		stop_churn
	done
	echo "| row | runs | samples | CPU ms per 1000 samples |"
	echo "| --- | ---: | ---: | ---: |"
	for rate in $rates; do
		per_k_summary "p7-$rate-record" "p7-$rate-script" "p7-$rate" "ours-text-$rate" "ours-svg-$rate"
	done
	echo
	echo "| ratio of CPU per 1000 samples | runs | median (range) | | goal |"
	echo "| --- | ---: | ---: | --- | --- |"
	for rate in $rates; do
		goal=0.08
		[ "$rate" = 99 ] && goal=0.05
		ratio "$rate Hz: ours (text) / perf 7.3 record + script" "ours-text-$rate" "p7-$rate" - $goal per_k
		ratio "$rate Hz: ours (svg) / perf 7.3 record + script" "ours-svg-$rate" "p7-$rate" - $goal per_k
	done
}

# first_named XDG ROW REP [SECONDS]: one start-up, attached to the churn
# workload, for a run of SECONDS (default 1).
first_named() {
	"$py" - "$1" "$ds" "$wpid" "$tmp/out.svg" "$2" "$3" "${4:-1}" >>"$results" <<'EOF' ||
import os, re, subprocess, sys, time
xdg, ds, pid, out, row, rep, secs = sys.argv[1:]
env = dict(os.environ, XDG_CACHE_HOME=xdg, DWARFSAMPLE_BENCH_FIRST_NAMED="1")
t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
p = subprocess.run([ds, "--call-graph", "dwarf,8192", "-F", "999", "-p", pid, "-d", secs,
                    "-o", out], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                   text=True)
m = re.search(r"first named sample at (\d+) ns .*, after (\d+) ns of the process's CPU",
              p.stderr)
if p.returncode or not m:
    sys.exit("no first named sample: " + p.stderr[-300:])
print(row, rep, "%.3f %.3f" % ((int(m.group(1)) - t0) / 1e6, int(m.group(2)) / 1e6))
EOF
		die "start-up: the profiler failed"
}

startup() {
	show "start-up" "DWARFSAMPLE_BENCH_FIRST_NAMED=1 XDG_CACHE_HOME=DIR $ds --call-graph dwarf,8192 -F 999 -p PID -d 1 -o out.svg"
	start_churn $((reps * 8 + 45))
	mkdir -p "$tmp/xdg-warm" "$tmp/xdg-long" "$tmp/xdg-indexed"
	first_named "$tmp/xdg-warm" warmup 0
	first_named "$tmp/xdg-long" warmup 0 10
	DS_SYMINDEX=1 first_named "$tmp/xdg-indexed" warmup 0
	for rep in $(seq "$reps"); do
		echo "#   start-up, repetition $rep of $reps" >&2
		first_named "$tmp/xdg-warm" startup-warm "$rep"
		first_named "$tmp/xdg-long" startup-after-10s "$rep"
		first_named "$tmp/xdg-indexed" startup-indexed "$rep"
		mkdir -p "$tmp/xdg-s$rep"
		first_named "$tmp/xdg-s$rep" startup-cold "$rep"
	done
	stop_churn
	"$py" - "$results" <<'EOF'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if f[0].startswith("startup-"):
        rows.setdefault(f[0], []).append((float(f[2]), float(f[3])))
def fmt(v):
    return "%.1f (%.1f–%.1f)" % (statistics.median(v), min(v), max(v)) if len(v) > 1 else \
        "%.1f" % v[0]
print("| start-up to the first named sample | runs | wall ms, median (range) |"
      " the profiler's CPU by then, ms | goal, by wall |")
print("| --- | ---: | ---: | ---: | --- |")
for r in ("startup-warm", "startup-after-10s", "startup-indexed", "startup-cold"):
    v = rows.get(r, [])
    if not v:
        continue
    m = statistics.median([w for w, _ in v])
    goal = "≤ 50 ms: " + ("met" if m <= 50 else "NOT met") if r != "startup-cold" else ""
    print("| %s | %d | **%s** | %s | %s |" % (r, len(v), fmt([w for w, _ in v]),
                                              fmt([c for _, c in v]), goal))
EOF
}

echo "# vs-perf.sh $part: $(date -u '+%F %H:%M') UTC, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)," \
	"this tree $(git -C "$here" describe --always --dirty 2>/dev/null), build $build"
echo "#   $($perf6 --version) ($perf6); $($perf7 --version) ($perf7); $("$ds" --version 2>&1 | head -1)"
case $part in
offline) reps=${reps:-5} offline ;;
live) reps=${reps:-3} live ;;
startup) reps=${reps:-5} startup ;;
all)
	r=$reps
	reps=${r:-5} offline
	reps=${r:-3} live
	reps=${r:-5} startup
	;;
*) usage ;;
esac
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
