#!/bin/sh
# perf-script text is in time order across threads, as perf script's is:
# no sample's time is below the one before it, with and without off-CPU
# time (an off-CPU sample is printed when its wait ends, and stamped
# then), live and through record + report, and no sample is left out for
# it: the live text has as many samples as the summary counts, the
# report as many of each event as perf script prints from the same file.
# usage: test-script-order.sh DWARFSAMPLE AGREE-WORKLOAD OFFCPU-WORKLOAD
set -u
ds=$(realpath "$1")
cpuwl=$(realpath "$2")
offwl=$(realpath "$3")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_perf
make_tmp

# steps FILE: "SAMPLES BACK": how many sample headers perf-script text
# has, and how many of them have a time below the previous header's.
steps() {
	awk '/^[^\t]/ && NF {
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/) {
				t = substr($i, 1, length($i) - 1)
				if (n++ && t + 0 < prev + 0)
					back++
				prev = t
				break
			}
	} END { printf "%d %d\n", n, back }' "$1"
}

# events FILE EVENT: how many headers of EVENT perf-script text has.
events() {
	awk -v ev="$2:" '/^[^\t]/ && NF { for (i = 1; i <= NF; i++) if ($i == ev) n++ }
		END { print n + 0 }' "$1"
}

# at_least N M: N >= M, and M2 <= N2 for each further pair.
at_least() {
	while [ $# -ge 2 ]; do
		[ "$1" -ge "$2" ] || return 1
		shift 2
	done
}

# in_order WHAT FILE MIN: FILE has at least MIN samples, none stepping back.
in_order() {
	set -- "$1" "$2" "$3" $(steps "$2")
	check "$1: time order ($4 samples, $5 step back)" at_least "$4" "$3" 0 "$5" ||
		head -40 "$2"
}

# The summary's "N samples in", of a run's stderr.
summary_samples() {
	sed -n 's/^dwarfsample: \([0-9]*\) samples in .*/\1/p' "$1"
}

# --- live, CPU samples of four threads ---
"$ds" -F 499 -f perf-script -o "$tmp/cpu.txt" -- "$cpuwl" threads 1 2>"$tmp/cpu.err"
in_order "live, CPU, four threads" "$tmp/cpu.txt" 200
check "live, CPU: as many samples as the summary counts" \
	[ "$(events "$tmp/cpu.txt" cpu-clock)" = "$(summary_samples "$tmp/cpu.err")" ] ||
	cat "$tmp/cpu.err"

# --- live, --wall: threads blocked, preempted and running at once ---
# Every sample printed: the CPU ones and one per wait, which the summary
# counts among its samples.
"$ds" --wall -F 499 -f perf-script -o "$tmp/wall.txt" -- "$offwl" mix 2 2>"$tmp/wall.err"
in_order "live, --wall" "$tmp/wall.txt" 300
waits=$(events "$tmp/wall.txt" offcpu-time)
check "live, --wall: waits and CPU samples both printed ($waits waits)" \
	at_least "$waits" 50 "$(events "$tmp/wall.txt" cpu-clock)" 100
check "live, --wall: as many samples as the summary counts" \
	[ $(($(events "$tmp/wall.txt" cpu-clock) + waits)) = "$(summary_samples "$tmp/wall.err")" ] ||
	cat "$tmp/wall.err"

# --- record + report, against perf script on the same files ---
# perf prints the switch-out samples as its context-switches event and
# each of ours is one wait: as many of each.
for mode in cpu wall off; do
	case $mode in
	cpu) "$ds" record -F 499 -o "$tmp/$mode.data" -- "$cpuwl" threads 1 2>/dev/null ;;
	wall) "$ds" record --wall -F 499 -o "$tmp/$mode.data" -- "$offwl" mix 2 2>/dev/null ;;
	off) "$ds" record --off-cpu -o "$tmp/$mode.data" -- "$offwl" mix 2 2>/dev/null ;;
	esac
	"$ds" report -i "$tmp/$mode.data" -o "$tmp/$mode.ours" 2>/dev/null
	perf script -i "$tmp/$mode.data" -F comm,tid,time,period,event >"$tmp/$mode.perf" \
		2>/dev/null
	in_order "report, $mode" "$tmp/$mode.ours" 100
	in_order "perf script, $mode (the oracle)" "$tmp/$mode.perf" 100
	check "report, $mode: as many CPU samples as perf script" \
		[ "$(events "$tmp/$mode.ours" cpu-clock)" = "$(events "$tmp/$mode.perf" cpu-clock)" ]
	check "report, $mode: a wait per switch-out sample perf script prints" \
		[ "$(events "$tmp/$mode.ours" offcpu-time)" = \
			"$(events "$tmp/$mode.perf" context-switches)" ]
done
exit $fail
