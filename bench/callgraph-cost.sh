#!/bin/bash
# What each --call-graph mode costs, against perf 6.1 and perf 7.3 measured
# in the same run (BENCHMARKS.md, "Call-graph modes: ring bytes and CPU").
#
#   capture  for each mode, `dwarfsample dump -q` attached with -p for
#            SECONDS at RATE Hz per CPU -- the capture alone: records
#            copied out of the rings and counted, nothing unwound -- gives
#            its ring bytes per sample (dump's summary) and its CPU; perf
#            record --call-graph fp and dwarf,8192, perf 6.1 and perf 7.3,
#            on the same process the same way give theirs (the mean size of
#            the sample records in their file).  Workloads: bench-live-churn
#            built with frame pointers (-O2 -fno-omit-frame-pointer
#            -mno-omit-leaf-frame-pointer, as Fedora and Ubuntu build) and
#            without (-O2 -fomit-frame-pointer), two threads each.
#   live     end to end, the profiling command as a user runs it:
#            `dwarfsample --call-graph MODE -F RATE -p PID -d SECONDS -o
#            out.svg` (capture, unwinding, naming, the flame graph
#            written), against perf 7.3 `record --call-graph dwarf` (its
#            default copy: 8192 bytes) and `record --call-graph fp`, each
#            followed by `perf script` of its file with perf's defaults
#            (its text to a file), the CPU of both added.  Every row is
#            also given as a ratio to perf's dwarf record + script.
#            Workloads, all built with frame pointers: churn (two
#            threads), and tests/agree-workload.c's `deep` (400 levels,
#            past the kernel's 127-entry chains) and `callers` (70 levels,
#            some 20 KiB of stack, past an 8 KiB copy), one thread each.
#
# CPU is the recorder's, its whole process tree (getrusage of the
# children, user and system: perf script's helpers too), finer than
# time(1)'s 10 ms.  Samples are each tool's own count: dwarfsample's
# summary, and the sample records in perf's file.  What perf recorded is
# printed from its file's first event (call chain, user stack size,
# frequency), and how well perf script named the frames from its text.
#
# usage: callgraph-cost.sh capture|live BUILD-DIR [RATE [SECONDS]]
#   BUILD-DIR  a build of this tree (its tools/ and bench/)
#   RATE       samples per second per CPU (default 999)
#   SECONDS    attached per row (default 10)
#   $PERF7     perf 7.3 (default /var/cache/dwarfsample/debian13/run-perf,
#              Debian 13's perf run on this machine's files)
set -u
usage() { sed -n '2,40p' "$0" >&2; exit 2; }
[ $# -ge 2 ] || usage
part=$1
build=$(realpath "$2")
rate=${3:-999}
secs=${4:-10}
perf6=perf
perf7=${PERF7:-/var/cache/dwarfsample/debian13/run-perf}
ds=$build/tools/dwarfsample
tmp=$(mktemp -d /tmp/callgraph-cost.XXXXXX)
wpid=
trap 'kill $wpid 2>/dev/null; rm -rf "$tmp"' EXIT
# Names from the files on this machine only, for both tools alike.
unset DEBUGINFOD_URLS

. "$(dirname "$0")/perf-lib.sh"

# start KIND: a workload in the background, its pid in wpid; it runs
# longer than the rows it is measured by.
start() {
	long=$((secs * 10 + 60))
	case $1 in
	churn-fp) set -- "$build/bench/bench-live-churn-fp" -d $long -t 2 ;;
	churn) set -- "$build/bench/bench-live-churn" -d $long -t 2 ;;
	deep-fp | callers-fp) set -- "$build/bench/bench-agree-workload-fp" "${1%-fp}" $long ;;
	esac
	"$@" >/dev/null 2>&1 &
	wpid=$!
	sleep 1
}

stop() {
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	wpid=
}

# perf_record PERF MODE: perf record attached as ours is, into
# $tmp/perf.data; its CPU into $tmp/rec.
perf_record() {
	timed "$tmp/rec" "$1" record -q -F "$rate" -e cpu-clock --call-graph "$2" \
		-p "$wpid" -o "$tmp/perf.data" -- sleep "$secs" >/dev/null 2>"$tmp/err"
}

per_k() { # cpu_ms samples
	awk -v c="$1" -v n="$2" 'BEGIN { printf "%.2f", n ? c * 1000 / n : 0 }'
}

capture_ours() { # workload mode
	timed "$tmp/rec" "$ds" dump -q -F "$rate" -d "$secs" \
		--call-graph "$2" -p "$wpid" >"$tmp/out" 2>"$tmp/err"
	set -- "$1" "$2" "$(sed -n 's/^#   total: \([0-9]*\) samples, \([0-9]*\) lost.*/\1 \2/p' "$tmp/out")"
	# shellcheck disable=SC2086 # samples and lost, two words
	set -- "$1" "$2" ${3:-0 0} \
		"$(sed -n 's/^#   ring: [0-9]* bytes of samples, \([0-9]*\) bytes per sample$/\1/p' "$tmp/out")"
	echo "| $1 | dwarfsample $2 | $3 | $4 | ${5:-0} | $(per_k "$(cpu_of "$tmp/rec")" "$3") | |"
}

capture_perf() { # workload perf-name perf mode
	perf_record "$3" "$4"
	read -r n lost bytes what <<<"$(perfdata "$tmp/perf.data")"
	echo "| $1 | $2 record $4 | $n | $lost | $bytes | $(per_k "$(cpu_of "$tmp/rec")" "$n") | $what |"
	rm -f "$tmp/perf.data"
}

# script_check: "FRAMES_PER_SAMPLE UNKNOWN% INLINED" from perf script's text.
script_check() {
	awk '/^[^ \t]/ { n++ } /^\t/ { f++; if (/\[unknown\]/) u++; if (/\(inlined\)/) i++ }
	END { printf "%.1f %.1f %d\n", n ? f / n : 0, f ? 100 * u / f : 0, i }' "$tmp/script.txt"
}

live_ours() { # workload mode
	timed "$tmp/rec" "$ds" --call-graph "$2" -F "$rate" -p "$wpid" -d "$secs" \
		-o "$tmp/out.svg" >/dev/null 2>"$tmp/err"
	read -r n lost <<<"$(sed -n 's/^dwarfsample: \([0-9]*\) samples in [0-9.]* s, \([0-9]*\) lost.*/\1 \2/p' \
		"$tmp/err")"
	ends=$(sed -n 's/^dwarfsample: stacks ended: //p' "$tmp/err")
	# Only when not every frame came from the copy.
	src=$(sed -n 's/^dwarfsample: user frames by source: /; user frames: /p' "$tmp/err")
	ms=$(per_k "$(cpu_of "$tmp/rec")" "${n:-0}")
	echo "| $1 | dwarfsample $2 | ${n:-0} | ${lost:-?} | $ms | $(awk -v a="$ms" -v b="$base" \
		'BEGIN { printf "%.3f×", b ? a / b : 0 }') | stacks ended: $ends$src |"
}

live_perf() { # workload mode: perf 7.3 record + script
	perf_record "$perf7" "$2"
	read -r n lost _ what <<<"$(perfdata "$tmp/perf.data")"
	timed "$tmp/script" "$perf7" script -i "$tmp/perf.data" >"$tmp/script.txt" 2>/dev/null
	read -r frames unknown inlined <<<"$(script_check)"
	rec=$(per_k "$(cpu_of "$tmp/rec")" "$n")
	scr=$(per_k "$(cpu_of "$tmp/script")" "$n")
	ms=$(awk -v a="$rec" -v b="$scr" 'BEGIN { printf "%.2f", a + b }')
	[ "$2" = dwarf ] && base=$ms
	echo "| $1 | perf 7.3 record $2 + script | $n | $lost | $rec + $scr = $ms |" \
		"$(awk -v a="$ms" -v b="$base" 'BEGIN { printf "%.3f×", b ? a / b : 0 }') |" \
		"$what; script: $frames frames a sample, $unknown % [unknown], $inlined inlined |"
	rm -f "$tmp/perf.data" "$tmp/script.txt"
}

echo "# $(date -u '+%F %H:%M') UTC, $part, $rate Hz per CPU, $secs s per row, $(nproc) CPUs," \
	"kernel.perf_event_max_stack $(cat /proc/sys/kernel/perf_event_max_stack)," \
	"this script's tree $(git -C "$(dirname "$0")" describe --always --dirty 2>/dev/null) (the build's may differ)," \
	"$($perf6 --version | sed 's/ version//'), $($perf7 --version | sed 's/ version//')"
case $part in
capture)
	echo "| workload | recorder, \`--call-graph\` | samples | lost | ring bytes / sample | CPU ms / 1000 samples | perf's file: each sample |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | --- |"
	for w in churn-fp churn; do
		start $w
		for mode in fp auto dwarf,8192; do
			capture_ours "$w" "$mode"
		done
		for mode in fp dwarf,8192; do
			capture_perf "$w" "perf 6.1" "$perf6" "$mode"
			capture_perf "$w" "perf 7.3" "$perf7" "$mode"
		done
		stop
	done
	;;
live)
	echo "| workload | profiler, \`--call-graph\` | samples | lost | CPU ms / 1000 samples | × perf 7.3 dwarf record + script | what was recorded and named |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | --- |"
	for w in churn-fp deep-fp callers-fp; do
		start $w
		# perf's dwarf first: the ratios' base.
		for mode in dwarf fp; do
			live_perf "$w" "$mode"
		done
		for mode in dwarf,8192 auto fp; do
			live_ours "$w" "$mode"
		done
		stop
	done
	;;
*) usage ;;
esac
