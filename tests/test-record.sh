#!/bin/sh
# `dwarfsample record` end to end: files that read back with `dump -i`,
# attaching to a running process (what it already had is synthesized),
# Ctrl-C and SIGKILL, and the errors reported before sampling starts.
# usage: test-record.sh DWARFSAMPLE WORKLOAD
set -u
ds=$1
workload=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
trap 'rc=$?; kill $wpid 2>/dev/null; leave_tmp $rc' EXIT
wpid=
samples() { # file: the sample total dump -i reports
	"$ds" dump -q -i "$1" 2>/dev/null | sed -n 's/^#   total: \([0-9]*\) samples.*/\1/p'
}
# shellcheck disable=SC2317 # run through wait_for
has_samples() { # file, n: does the file (finished or not) hold n samples?
	[ "$(samples "$1")" -ge "$2" ] 2>/dev/null
}

"$ds" record -o "$tmp/cmd.data" -- "$workload" spin 0.6 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "perf_event_paranoid" "$tmp/err"; then
	echo "SKIP: the kernel refuses perf_event_open:"; cat "$tmp/err"; exit 77
fi
check "recording a command exits 0" test $rc -eq 0
check "and says what it wrote" grep -q "wrote [0-9]* samples in .* to $tmp/cmd.data" "$tmp/err"
"$ds" dump -i "$tmp/cmd.data" >"$tmp/dump" 2>"$tmp/err"
check "the file reads back" test $? -eq 0
check "without warnings" test ! -s "$tmp/err"
check "with the command's exec" grep -q "COMM .* exec workload" "$tmp/dump"
check "its mappings" grep -q "MMAP2 .* r-xp .*workload" "$tmp/dump"
check "its exit" grep -q "EXIT " "$tmp/dump"
n=$(samples "$tmp/cmd.data")
check "and about 60 samples ($n)" test "${n:-0}" -ge 30

# Attach to a running process: what it already had is synthesized.  It
# spins longer than every recording of it below takes.
"$workload" spin 60 &
wpid=$!
wait_for runs $wpid workload
# At 999 Hz, half a second holds samples of it even when it gets only a
# small share of a CPU.
"$ds" record -F 999 -d 0.5 -p $wpid -o "$tmp/pid.data" 2>"$tmp/err"
check "recording -p PID exits 0" test $? -eq 0
"$ds" dump -i "$tmp/pid.data" >"$tmp/dump" 2>&1
check "the process's comm is synthesized at time 0" \
	grep -q "^ *0\.000000000 .*COMM *pid $wpid tid $wpid workload" "$tmp/dump"
check "and its executable mapping" \
	grep -q "^ *0\.000000000 .*MMAP2 *pid $wpid .* r-xp .*workload" "$tmp/dump"
check "and the kernel's text" grep -q "MMAP *pid -1 .*\[kernel.kallsyms\]_text" "$tmp/dump"
check "then its samples" grep -q "SAMPLE *pid $wpid" "$tmp/dump"

# An existing output is kept as .old.
"$ds" record -d 0.2 -p $wpid -o "$tmp/pid.data" 2>"$tmp/err"
check "a second recording keeps the first as .old" test -s "$tmp/pid.data.old"
check "and says so" grep -q "kept the previous .*pid.data as .*pid.data.old" "$tmp/err"

# Ctrl-C finishes the file; sent once the file holds samples.
"$ds" record -p $wpid -o "$tmp/int.data" 2>"$tmp/err" &
rpid=$!
wait_for has_samples "$tmp/int.data" 20
kill -INT $rpid
wait $rpid
check "Ctrl-C ends the recording with status 0" test $? -eq 0
"$ds" dump -q -i "$tmp/int.data" >"$tmp/dump" 2>"$tmp/err"
check "and leaves a finished file" test ! -s "$tmp/err"
n=$(samples "$tmp/int.data")
check "with its samples ($n)" test "${n:-0}" -ge 20

# SIGKILL leaves a file that is still read up to its last complete record
# (of a target sure to outlive the recorder).
kill $wpid 2>/dev/null
"$workload" spin 60 &
wpid=$!
wait_for runs $wpid workload
"$ds" record -p $wpid -o "$tmp/kill.data" 2>/dev/null &
rpid=$!
wait_for has_samples "$tmp/kill.data" 20
kill -KILL $rpid
wait $rpid 2>/dev/null
"$ds" dump -q -i "$tmp/kill.data" >"$tmp/dump" 2>"$tmp/err"
check "a killed recorder's file still reads" test $? -eq 0
check "with a warning that it did not finish" grep -q "did not finish" "$tmp/err"
n=$(samples "$tmp/kill.data")
check "and the samples flushed before the kill ($n)" test "${n:-0}" -ge 20
kill $wpid 2>/dev/null
wait $wpid 2>/dev/null
wpid=

# Errors before sampling starts.
"$ds" record -o /nonexistent/dir/x.data -- true >"$tmp/out" 2>"$tmp/err"
check "an unwritable output fails" test $? -ne 0
check "and says what to do" grep -q "choose another output path" "$tmp/err"
check "naming the flag that sets it" grep -q "output path (-o)" "$tmp/err"
"$ds" record -p 2147483000 -o "$tmp/x.data" >"$tmp/out" 2>"$tmp/err"
check "a missing PID fails with its message" grep -q "no process with PID 2147483000" "$tmp/err"
"$ds" dump -i /nonexistent.data >"$tmp/out" 2>"$tmp/err"
check "dump -i of a missing file fails" grep -q "cannot open /nonexistent.data" "$tmp/err"
printf 'not a perf file at all' >"$tmp/junk.data"
"$ds" dump -i "$tmp/junk.data" >"$tmp/out" 2>"$tmp/err"
check "dump -i of a non-perf file fails naming the offset" \
	grep -q "not a perf.data file .*at byte offset 0" "$tmp/err"
"$ds" dump -i "$tmp/cmd.data" -p 1 >"$tmp/out" 2>"$tmp/err"
check "dump -i with a target is refused" grep -q "give no target" "$tmp/err"
"$ds" record --help >"$tmp/out" 2>&1
check "record --help documents -o" grep -q -- "--output FILE" "$tmp/out"

exit $fail
