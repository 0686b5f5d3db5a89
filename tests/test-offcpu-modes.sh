#!/bin/sh
# Off-CPU profiling's other ways in, and what it says about itself:
#   -a       a blocked thread of some process, seen system-wide
#   -k       the wait's kernel stack under its pseudo-frame
#   summary  where each process's time went, blocked and preempted
#   report --off-cpu-min
#            short waits left out of a recording's profile and counted
# usage: test-offcpu-modes.sh DWARFSAMPLE OFFCPU-WORKLOAD
set -u
ds=$(realpath "$1")
workload=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
wpid=
trap 'rc=$?; kill $wpid 2>/dev/null; leave_tmp $rc' EXIT

# sum FILE REGEX: the total value of a folded profile's lines matching REGEX.
sum() {
	# (The pattern through the environment: awk -v reads escapes in
	# it, which gawk and mawk read differently.)
	re=$2 awk '$0 ~ ENVIRON["re"] { s += $NF } END { printf "%.0f\n", s }' "$1"
}

# --- -a: a thread blocked in read() on a pipe, among everything else ---
"$workload" -o "$tmp/a.truth" pipe 30 >/dev/null 2>&1 &
wpid=$!
wait_for runs "$wpid" offcpu-workload
# A root per thread (--thread-roots): this reader's waits, not those of another
# copy of the workload that may run beside it (a second suite).
apid=$wpid
"$ds" --off-cpu -a -d 2 -f folded --thread-roots -o "$tmp/a.folded" 2>"$tmp/a.err"
rc=$?
skip_if_refused "$rc" "$tmp/a.err"
check "-a --off-cpu exits 0" test "$rc" -eq 0 || cat "$tmp/a.err"
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
wpid=
secs=$(sed -n 's/.* samples in \([0-9.]*\) s.*/\1/p' "$tmp/a.err")
blocked=$(sum "$tmp/a.folded" "^offcpu-workload-$apid/[0-9]+;.*;pipe_reader_thread;read_pipe;.*\\[off-cpu: blocked\\] ")
# The reader wakes every 200 ms: the wait it was in when sampling began
# had no switch out to see; the rest of the 2 s window is all there,
# however late the run's last drain (which ends the summary's time).
check "-a: the pipe reader's blocked stack is there, for most of the run ($blocked ns in $secs s)" \
	awk -v b="$blocked" -v s="$secs" 'BEGIN { exit !(s > 0 && b >= 1.5e9 && b <= s * 1.02e9) }'
check "-a: other processes' waits are there too" \
	test "$(grep -vc "^offcpu-workload-$apid/" "$tmp/a.folded")" -gt 0
check "-a: the idle task has no waits" test "$(grep -c '^swapper' "$tmp/a.folded")" -eq 0

# --- -k: the kernel's part of a wait, between the call and the pseudo-frame ---
"$ds" --off-cpu -k --annotate -f folded -o "$tmp/k.folded" -- \
	"$workload" -o "$tmp/k.truth" sleep 1 >/dev/null 2>"$tmp/k.err"
check "-k --off-cpu exits 0" test $? -eq 0 || cat "$tmp/k.err"
check "-k: the sleeper's waits go from nap through the kernel's schedule to the pseudo-frame" \
	grep -q ';nap;.*_\[k\];.*schedule[^;]*_\[k\];\[off-cpu: blocked\] [0-9]*$' "$tmp/k.folded"

# --- the summary: on-CPU, off-CPU, blocked and preempted, per process ---
"$ds" --wall -F 999 -f folded -o "$tmp/w.folded" -- \
	"$workload" -o "$tmp/w.truth" mix 1 >/dev/null 2>"$tmp/w.err"
check "--wall exits 0" test $? -eq 0 || cat "$tmp/w.err"
check "summary: the total, on and off the CPU, blocked and preempted" \
	grep -Eq '^dwarfsample: on-CPU [0-9.]+ [mu]?s, off-CPU [0-9.]+ [mu]?s \(blocked [0-9]+%, preempted [0-9]+%\); [0-9]+ waits' \
	"$tmp/w.err"
check "summary: the workload's own line" \
	grep -Eq '^dwarfsample:   offcpu-workload\[[0-9]+\]: on-CPU [0-9.]+ [mu]?s, off-CPU' "$tmp/w.err"
check "summary: some of mix's time was preempted (its two spinners share a CPU)" \
	grep -Eq 'preempted [1-9][0-9]*%' "$tmp/w.err"

# --- report --off-cpu-min: the sleeper's 7 ms naps go, the 1 s join stays ---
"$ds" record --off-cpu -o "$tmp/s.data" -- "$workload" -o "$tmp/s.truth" sleep 1 \
	>/dev/null 2>"$tmp/s.err"
check "record --off-cpu exits 0" test $? -eq 0 || cat "$tmp/s.err"
"$ds" report -i "$tmp/s.data" -o "$tmp/all.txt" 2>/dev/null
"$ds" report -i "$tmp/s.data" --off-cpu-min 20ms -o "$tmp/min.txt" 2>"$tmp/min.err"
check "report --off-cpu-min exits 0" test $? -eq 0 || cat "$tmp/min.err"
# waits FILE [MIN]: how many offcpu-time samples perf-script text has
# (with MIN, how many shorter than MIN ns).
waits() {
	awk -v min="${2:-0}" '/ offcpu-time: *$/ {
		for (i = 1; i < NF; i++)
			if ($(i + 1) == "offcpu-time:")
				n += !min || $i < min
	} END { print n + 0 }' "$1"
}
check "--off-cpu-min 20ms: the naps are there without it" \
	test "$(waits "$tmp/all.txt" 20000000)" -gt 10
check "--off-cpu-min 20ms: no wait shorter than 20 ms is left" \
	test "$(waits "$tmp/min.txt" 20000000)" -eq 0
check "--off-cpu-min 20ms: the main thread's 1 s wait for the sleeper stays" \
	grep -q "clockjoin" "$tmp/min.txt"
check "--off-cpu-min 20ms: the summary counts what it left out" \
	grep -Eq '[1-9][0-9]* shorter than --off-cpu-min left out' "$tmp/min.err"
"$ds" record -o "$tmp/cpu.data" -- "$workload" -o "$tmp/c.truth" sleep 0.2 >/dev/null 2>&1
"$ds" report -i "$tmp/cpu.data" --off-cpu-min 1ms -f folded -o "$tmp/c.folded" 2>"$tmp/c.err"
rc=$?
check "--off-cpu-min on a CPU recording is refused" test "$rc" -eq 2
check "and says why" grep -q "no off-CPU samples" "$tmp/c.err"
exit $fail
