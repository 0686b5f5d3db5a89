#!/bin/sh
# What a first session runs into (issue 31): the command's exit status
# passed on by the profiling command and record, as a shell gives it; an
# empty profile that says why and what to use; and a profiler killed
# outright (SIGKILL) that takes its command along, whose half-written
# file the next run to that output removes, leaving a live run's alone.
# usage: test-first-hour.sh DWARFSAMPLE
set -u
ds=$(realpath "$1")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
cpid='' dpid=''
trap 'rc=$?; kill -KILL $cpid $dpid 2>/dev/null; leave_tmp $rc' EXIT

# The command's exit status is ours.
"$ds" -o "$tmp/e3.folded" -- sh -c 'exit 3' 2>"$tmp/err"
rc=$?
skip_if_refused $rc "$tmp/err"
check "a command that exits 3: dwarfsample exits 3 ($rc)" test $rc -eq 3
check "and says so" grep -q "^dwarfsample: the command (sh, PID [0-9]*) exited with status 3" "$tmp/err"
check "and still writes the profile" test -f "$tmp/e3.folded"
"$ds" record -o "$tmp/e3.data" -- sh -c 'exit 3' 2>"$tmp/err"
rc=$?
check "record: exits 3 too ($rc)" test $rc -eq 3
"$ds" -o "$tmp/e0.folded" -- sh -c 'exit 0' 2>"$tmp/err"
rc=$?
check "a command that exits 0: 0 ($rc)" test $rc -eq 0

# One killed by a signal: 128 + its number, as a shell has it.
"$ds" -o "$tmp/term.folded" -- sh -c 'kill -TERM $$' 2>"$tmp/err"
rc=$?
check "a command killed by SIGTERM: 143 ($rc)" test $rc -eq 143
check "and the signal is named" grep -q "was killed by signal 15 (Terminated)" "$tmp/err"
"$ds" record -o "$tmp/kill.data" -- sh -c 'kill -KILL $$' 2>"$tmp/err"
rc=$?
check "record: a command killed by SIGKILL: 137 ($rc)" test $rc -eq 137

# One that cannot run: as a shell says it.
"$ds" -o "$tmp/none.folded" -- "$tmp/no-such-command" 2>"$tmp/err"
rc=$?
check "a command not found: 127 ($rc)" test $rc -eq 127
check "and no profile" test ! -e "$tmp/none.folded"

# A second asleep: no CPU time to sample, said with what would show it.
"$ds" -o "$tmp/sleep.svg" -- sleep 1 2>"$tmp/err"
rc=$?
check "sleep 1: exits 0, as perf does ($rc)" test $rc -eq 0
check "sleep 1: 0 samples" grep -q "^dwarfsample: 0 samples in" "$tmp/err"
check "sleep 1: says it waited off the CPU, and to use --off-cpu or --wall" \
	grep -q "^dwarfsample: no samples: sleep used .* ms of CPU in .* s, less than one sample period .*: it spent the run off the CPU, waiting .*; --off-cpu shows where it waited, --wall both" "$tmp/err" ||
	cat "$tmp/err"
"$ds" -o "$tmp/true.svg" -- true 2>"$tmp/err"
check "true: exited before the first sample, and says so" \
	grep -q "^dwarfsample: no samples: true exited .* s into the run, before the first sample" "$tmp/err" ||
	cat "$tmp/err"

# SIGKILL of dwarfsample mid-run.
staged() { # output name: its staging files in $tmp
	find "$tmp" -maxdepth 1 -name ".$1.dwarfsample-[0-9]*.??????" | grep -c .
}
gone() { # pid: exited, reaped or not
	! [ -d "/proc/$1" ] || grep -q '^State:.*[ZX]' "/proc/$1/status" 2>/dev/null
}
"$ds" -o "$tmp/k.svg" -- sh -c 'echo $$ >"$1"; exec sleep 60' sh "$tmp/cpid" 2>"$tmp/err" &
dpid=$!
wait_for test -s "$tmp/cpid"
cpid=$(cat "$tmp/cpid")
wait_for runs "$cpid" sleep
check "while it runs, the output's staging file is there" test "$(staged k.svg)" -eq 1
kill -KILL $dpid
wait $dpid 2>/dev/null
dpid=
# The kernel signals the command as dwarfsample's thread exits: wait for
# that, bounded well short of the command's 60 s.
n=0
while ! gone "$cpid" && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
check "SIGKILL of dwarfsample: its command (PID $cpid) dies with it" gone "$cpid"
gone "$cpid" || kill -KILL "$cpid"
cpid=
check "the killed run left its staging file" test "$(staged k.svg)" -eq 1
check "and no profile" test ! -e "$tmp/k.svg"
"$ds" -o "$tmp/k.svg" -- true 2>"$tmp/err"
check "the next run to that output removes it" test "$(staged k.svg)" -eq 0
check "and writes the output" test -s "$tmp/k.svg"

# A live run's staging file is left alone by another run to its output.
"$ds" -o "$tmp/live.svg" -- sh -c 'echo $$ >"$1"; exec sleep 60' sh "$tmp/cpid2" 2>"$tmp/err" &
dpid=$!
wait_for test -s "$tmp/cpid2"
wait_for runs "$(cat "$tmp/cpid2")" sleep
"$ds" -o "$tmp/live.svg" -- true 2>"$tmp/err2"
check "a second run to a live run's output leaves its staging file" \
	test "$(staged live.svg)" -eq 1
kill -INT $dpid
wait $dpid
rc=$?
dpid=
check "and the live run, stopped by Ctrl-C, exits 0 ($rc)" test $rc -eq 0
check "and writes its output" grep -q "<svg" "$tmp/live.svg"
check "no staging file is left" test "$(staged live.svg)" -eq 0
exit $fail
