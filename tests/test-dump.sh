#!/bin/sh
# `dwarfsample dump` end to end: a launched command prints its records and
# the summary; bad flags and missing targets fail with a message.
# usage: test-dump.sh DWARFSAMPLE WORKLOAD
set -u
ds=$1
workload=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
trap leave_tmp EXIT

"$ds" dump -F 199 -- "$workload" spin 0.5 >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q "refuses perf_event_open\|perf_event_paranoid" "$tmp/err" && [ $rc -ne 0 ]; then
	echo "SKIP: the kernel refuses perf_event_open:"; cat "$tmp/err"; exit 77
fi
check "dump of a command exits 0" test $rc -eq 0
check "it prints the exec COMM of the command" grep -q "COMM .* exec workload" "$tmp/out"
check "it prints the MMAP2 of the command's executable" grep -q "MMAP2 .* r-xp .*workload" "$tmp/out"
check "it prints samples with user registers and stacks" \
	grep -q "SAMPLE .* user period .* sp 0x.* regs 17/abi64 stack [0-9]*/8192" "$tmp/out"
check "it prints the EXIT of the command" grep -q "EXIT " "$tmp/out"
check "the summary lists samples per CPU" grep -q "^#   cpu   0: *[0-9]* samples" "$tmp/out"
n=$(grep -c "\] SAMPLE " "$tmp/out")
check "the summary total matches the sample lines ($n)" \
	grep -q "^#   total: $n samples, 0 lost" "$tmp/out"
check "the summary counts records by type" grep -q "^#   records:.* SAMPLE $n" "$tmp/out"

"$ds" dump -q -d 0.3 -a >"$tmp/out" 2>"$tmp/err"
check "system-wide quiet dump prints only the summary" \
	sh -c "! grep -q '\] SAMPLE ' '$tmp/out' && grep -q '^#   total:' '$tmp/out'"

"$ds" dump -p 2147483000 >"$tmp/out" 2>"$tmp/err"
check "a missing PID fails" test $? -ne 0
check "and says so" grep -q "no process with PID 2147483000" "$tmp/err"

# A zombie: a child that exited, of a parent (sleep, after the exec)
# that never reaps it.
sh -c 'sleep 0 & echo $! >"$1"; exec sleep 60' sh "$tmp/zpid" &
parent=$!
zombie() { [ -s "$tmp/zpid" ] && [ "$(cut -d' ' -f3 "/proc/$(cat "$tmp/zpid")/stat" 2>/dev/null)" = Z ]; }
wait_for zombie
zpid=$(cat "$tmp/zpid")
"$ds" -p "$zpid" -d 1 -o "$tmp/z.folded" >"$tmp/out" 2>"$tmp/err"
check "-p of a zombie fails" test $? -eq 1
check "and says it is a zombie, and whose" \
	grep -q "PID $zpid (sleep) is a zombie: it has exited, and its parent (PID $parent) has not reaped it" \
	"$tmp/err"
kill "$parent"
wait "$parent" 2>/dev/null

# A kernel thread (kthreadd, PID 2): no user stack; -k samples it.
"$ds" record -p 2 -d 0.2 -o "$tmp/k.data" >"$tmp/out" 2>"$tmp/err"
check "-p of a kernel thread fails" test $? -eq 1
check "and says it has no user stack, suggesting -k and -a" \
	grep -q "PID 2 (kthreadd) is a kernel thread: it has no user stack to sample; ask for kernel call chains (-k) .* system-wide sampling (-a)" \
	"$tmp/err"
"$ds" record -k -p 2 -d 0.2 -o "$tmp/k.data" >"$tmp/out" 2>"$tmp/err"
check "with -k it is sampled" test $? -eq 0

"$ds" dump --stack-size 100 -- true >"$tmp/out" 2>"$tmp/err"
check "a bad stack size fails" test $? -eq 2
check "and says it must be a multiple of 8" grep -q "multiple of 8" "$tmp/err"

# The library names the settings, the command adds its flags for them.
"$ds" dump --ring-pages 1 --stack-size 65528 -- true >"$tmp/out" 2>"$tmp/err"
check "a ring too small for one sample fails" test $? -ne 0
check "and names the flags that set both" \
	grep -q "more ring pages (--ring-pages) or a smaller stack size (--stack-size)" "$tmp/err"

"$ds" dump -F 0 -- true >"$tmp/out" 2>"$tmp/err"
check "a zero frequency is refused" grep -q "invalid frequency" "$tmp/err"

"$ds" dump >"$tmp/out" 2>"$tmp/err"
check "no target fails with what to give" grep -q "nothing to sample" "$tmp/err"

"$ds" dump -p 1 -a >"$tmp/out" 2>"$tmp/err"
check "two targets fail" grep -q "only one target" "$tmp/err"

"$ds" dump --bogus >"$tmp/out" 2>"$tmp/err"
check "an unknown flag fails with a hint" grep -q "dwarfsample dump --help" "$tmp/err"

"$ds" dump -- /nonexistent/cmd >"$tmp/out" 2>"$tmp/err"
check "a command that does not exist fails" grep -q "cannot run '/nonexistent/cmd'" "$tmp/err"

# The off-CPU options: refused where they mean nothing, with the reason.
refused() { # what the message says, then the options
	want=$1
	shift
	"$ds" dump "$@" -- true >"$tmp/out" 2>"$tmp/err"
	[ $? -eq 2 ] && grep -q -- "$want" "$tmp/err"
}
check "--off-cpu with -F is refused: it takes no CPU samples" \
	refused "-F has no effect with --off-cpu" --off-cpu -F 99
check "--off-cpu with --hw-cycles is refused" \
	refused "--hw-cycles has no effect with --off-cpu" --off-cpu --hw-cycles
check "--off-cpu with --stack-size is refused, naming the flag to use" \
	refused "use --off-cpu-stack-size" --off-cpu --stack-size 4096
check "--off-cpu with --wall is refused" refused "not both" --off-cpu --wall
check "--off-cpu-min without --off-cpu or --wall is refused" \
	refused "use it with --off-cpu or --wall" --off-cpu-min 1ms
check "--off-cpu-stack-size without them is refused" \
	refused "--off-cpu-stack-size applies to off-CPU time" --off-cpu-stack-size 4096
check "--off-cpu-min takes a known unit, or none (seconds)" \
	refused "--off-cpu-min: '5q' is not a duration: give seconds (10) or 10s" \
	--wall --off-cpu-min 5q
check "and no negative duration" refused "--off-cpu-min: '-1ms' is not a duration" \
	--wall --off-cpu-min -1ms
check "--off-cpu-stack-size is checked as --stack-size" \
	refused "multiple of 8" --off-cpu --off-cpu-stack-size 100
check "up to 65528" refused "invalid stack size '65536'" --off-cpu --off-cpu-stack-size 65536
"$ds" dump -q --wall --off-cpu-min 0.5ms --off-cpu-stack-size 4096 -- true >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "perf_event_paranoid" "$tmp/err"; then
	echo "# off-CPU capture refused (kernel.perf_event_paranoid): not checked"
else
	check "valid off-CPU options capture ($(cat "$tmp/err"))" test $rc -eq 0
	"$ds" dump --off-cpu -- sleep 0.01 >"$tmp/out" 2>"$tmp/err"
	check "switch records print which way the task went" \
		sh -c "grep -q 'SWITCH  *pid [0-9]* tid [0-9]* out' '$tmp/out' &&
			grep -q 'SWITCH  *pid [0-9]* tid [0-9]* in$' '$tmp/out'"
fi

"$ds" dump --help >"$tmp/out" 2>&1
check "--help documents every capture flag" \
	sh -c "for f in --pid --all-cpus --cpu --freq --duration --stack-size --ring-pages --hw-cycles --kernel --off-cpu --wall --off-cpu-min --off-cpu-stack-size --quiet; do grep -q -- \"\$f\" '$tmp/out' || exit 1; done"

# SIGINT ends the capture and still prints the summary: sent once samples
# are being printed, whenever that is on a busy machine.  (The command
# would spin for a minute; the interrupted capture terminates it.)
"$ds" dump -- "$workload" spin 60 >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_for grep -q "\] SAMPLE " "$tmp/out"
kill -INT $pid
wait $pid
check "Ctrl-C stops the capture cleanly" test $? -eq 0
check "and the summary is printed" grep -q "^#   total: [1-9][0-9]* samples" "$tmp/out"

exit $fail
