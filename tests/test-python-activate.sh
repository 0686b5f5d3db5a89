#!/bin/sh
# --python (prpython.h): CPython 3.13 from the Debian 13 root, run in a
# chroot inside a mount namespace of its own (its files reached only
# through /proc/PID/root), already running a recursive pure-Python
# workload (python-activate.py), has its perf trampoline turned on from
# outside (by the profiling command, and by record): the summary says so, its Python functions are named (py::)
# in the profile, and it runs on to the end of its work, every result
# right.  A target blocked in time.sleep sleeps its whole time; one
# blocked reading stdin reads the line written later, and its trampoline
# comes on only once it runs Python code again, as the message says; one
# sent a stream of signals meanwhile handles them and runs on; one
# traced already (strace) is left alone, said so.
# CPython 3.11 (Debian 12's) gets the message on its version, naming no
# package; a process without CPython is left alone, said so; -- CMD runs
# with PYTHONPERFSUPPORT=1; the agent refuses --python.
# usage: test-python-activate.sh DWARFSAMPLE SOURCE-DIR
# Skips (77) without root, the Debian 13 root, a mount namespace, or when
# the kernel refuses to sample.
set -u
ds=$1
src=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: needs root (chroot into the Debian 13 root, ptrace)"
	exit 77
fi
need_debian13
need_mount_ns
make_tmp
work=$(mktemp -d "$d13/tmp/pyact.XXXXXX")
cp "$src/python-activate.py" "$work/work.py"
in=${work#"$d13"}      # the same directory, as the chroot sees it
pids=""
cleanup() {
	rc=$?
	touch "$work/stop"
	for p in $pids; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		rm -f "$d13/tmp/perf-$p.map"
	done
	rm -rf "$work"
	leave_tmp $rc
}
trap cleanup EXIT

# py313 NAME MODE [ARG]: python3.13 in the root, in the background,
# stdout to $tmp/NAME.out, stdin from $tmp/NAME.in; its pid in $pid.
py313() {
	name=$1
	shift
	[ -p "$tmp/$name.in" ] || : >"$tmp/$name.in"
	unshare -m sh -c 'mount -t proc proc "$1/proc" && shift && exec chroot "$@"' sh \
		"$d13" "$d13" python3.13 "$in/work.py" "$@" \
		<"$tmp/$name.in" >"$tmp/$name.out" 2>&1 &
	pid=$!
	pids="$pids $pid"
	wait_for grep -q ready "$tmp/$name.out"
}

# finish PID NAME: the workload told to stop, and its end.
finish() {
	touch "$work/stop"
	wait "$1"
	echo $? >"$tmp/$2.rc"
	rm -f "$work/stop"
}

# map_has PID: the perf map the process wrote names its functions.
map_has() {
	grep -q ' py::fib:' "$d13/tmp/perf-$1.map" && grep -q ' py::outer:' "$d13/tmp/perf-$1.map"
}

# --- A running workload, activated and sampled.
py313 busy busy "$in/stop"
"$ds" --python -p "$pid" -d 2 -f folded -o "$tmp/busy.folded" >/dev/null 2>"$tmp/busy.err"
rc=$?
skip_if_refused $rc "$tmp/busy.err"
check "--python -p: profiled" test $rc -eq 0 || cat "$tmp/busy.err"
check "the activation is reported, with the version found and how to undo it" \
	grep -q "python: pid $pid (CPython 3\.13\.[0-9]*, .*python3\.13.*): perf trampoline turned on.*/tmp/perf-$pid\.map opened .*sys\.deactivate_stack_trampoline()" \
	"$tmp/busy.err" || cat "$tmp/busy.err"
check "the summary says the trampoline stays on" \
	grep -q "python: pid $pid's perf trampoline was turned on by --python and stays on" \
	"$tmp/busy.err"
check "the process has its perf map open (the trampoline is on)" \
	sh -c "ls -l /proc/$pid/fd | grep -q 'perf-$pid\.map'"
# Complete stacks through the trampolines are the -X perf tests'; here
# the names: py::fib, the workload's, from the map the activation opened.
check "Python functions named in the profile (py::fib:$in/work.py)" \
	grep -q "py::fib:$in/work\.py" "$tmp/busy.folded" || head -c 2000 "$tmp/busy.folded"
# And in place: the loop calls outer() afresh every 0.3 ms or so, each
# call after the activation through a trampoline, so the stacks in its
# recursion (py::fib) have py::outer over it, complete to _start.  The
# loop's own line (<module>, begun before the activation: no trampoline)
# and its os.path.exists() are not counted.
in_place=$(awk -v f="py::fib:$in/work.py" -v o="py::outer:$in/work.py" '
	!index($0, ";" f) { next }
	{ n = $NF; total += n }
	index($0, ";" o ";") && index($0, ";" f) > index($0, ";" o ";") && $0 ~ /^[^;]*;_start;/ { good += n }
	END { print good + 0, total + 0 }' "$tmp/busy.folded")
set -- $in_place
check "the activated process's stacks in py::fib have py::outer over it, complete to _start (95 %: $1 of $2)" \
	test "$2" -ge 50 -a $(($1 * 100)) -ge $(($2 * 95)) ||
	awk -v f="py::fib:$in/work.py" -v o="py::outer:$in/work.py" '
		index($0, ";" f) && !(index($0, ";" o ";") && index($0, ";" f) > index($0, ";" o ";") &&
		$0 ~ /^[^;]*;_start;/)' "$tmp/busy.folded" | head -5
"$ds" --python -p "$pid" -d 0.3 -f folded -o "$tmp/busy2.folded" >/dev/null 2>"$tmp/busy2.err"
check "a second --python finds it on already and does nothing" \
	grep -q "python: pid $pid (.*): its perf trampoline is on already (/tmp/perf-$pid\.map open): nothing done" \
	"$tmp/busy2.err" || cat "$tmp/busy2.err"
finish "$pid" busy
check "the activated workload ran to its end, every result right" \
	grep -q "^done [1-9][0-9]* runs, 0 wrong$" "$tmp/busy.out" || cat "$tmp/busy.out"
check "... exiting 0" test "$(cat "$tmp/busy.rc")" -eq 0

# --- record takes it too.
py313 record busy "$in/stop"
"$ds" record --python -p "$pid" -d 0.3 -o "$tmp/record.data" >/dev/null 2>"$tmp/record.err"
check "record --python -p: turned on" \
	grep -q "python: pid $pid (CPython 3\.13.*): perf trampoline turned on" "$tmp/record.err" ||
	cat "$tmp/record.err"
check "... and its summary says it stays on" \
	grep -q "python: pid $pid's perf trampoline was turned on by --python and stays on" \
	"$tmp/record.err"
finish "$pid" record
check "... the process ran to its end, every result right" \
	grep -q "^done [1-9][0-9]* runs, 0 wrong$" "$tmp/record.out" || cat "$tmp/record.out"

# --- Signals arriving all along: held while the thread runs injected
# code, handled after; the process runs on, every result right.
py313 signals signals "$in/stop"
(i=0; while [ $i -lt 3000 ] && kill -USR1 "$pid" 2>/dev/null; do i=$((i + 1)); done) &
storm=$!
"$ds" --python -p "$pid" -d 0.3 -f folded -o "$tmp/signals.folded" >/dev/null \
	2>"$tmp/signals.err"
check "--python amid a stream of SIGUSR1: turned on" \
	grep -q "python: pid $pid (CPython 3\.13.*): perf trampoline turned on" "$tmp/signals.err" ||
	cat "$tmp/signals.err"
wait "$storm"
finish "$pid" signals
check "... the process handled them and ran to its end, every result right" \
	awk '/^done [1-9][0-9]* runs, 0 wrong$/ { d = 1 } /^handled [1-9]/ { h = 1 }
		/Error|Traceback/ { bad = 1 } END { exit !(d && h && !bad) }' "$tmp/signals.out" ||
	cat "$tmp/signals.out"
check "... exiting 0" test "$(cat "$tmp/signals.rc")" -eq 0

# --- Blocked in time.sleep when activated: it sleeps its whole time.
py313 sleep sleep "$in/stop" 5
"$ds" --python -p "$pid" -d 0.3 -f folded -o "$tmp/sleep.folded" >/dev/null 2>"$tmp/sleep.err"
check "--python on a sleeping process: the request is reported" \
	grep -q "python: pid $pid (CPython 3\.13.*): perf trampoline \(asked for\|turned on\)" \
	"$tmp/sleep.err" || cat "$tmp/sleep.err"
wait_for grep -q "^slept" "$tmp/sleep.out"
check "time.sleep(5) slept its whole time, no error" \
	awk '/^slept/ { ok = $2 >= 5.0 } /Error|Traceback/ { bad = 1 } END { exit !(ok && !bad) }' \
	"$tmp/sleep.out" || cat "$tmp/sleep.out"
wait_for map_has "$pid"
check "its trampoline came on once it ran Python code again" map_has "$pid"
finish "$pid" sleep
check "then it ran to its end, every result right" \
	grep -q "^done [1-9][0-9]* runs, 0 wrong$" "$tmp/sleep.out" || cat "$tmp/sleep.out"

# --- Blocked reading stdin (a FIFO nothing writes to yet).
mkfifo "$tmp/read.in"
exec 7<>"$tmp/read.in"
py313 read read "$in/stop"
"$ds" --python -p "$pid" -d 0.3 -f folded -o "$tmp/read.folded" >/dev/null 2>"$tmp/read.err"
check "--python on a process blocked in read: asked for, not on yet, and why" \
	grep -q "python: pid $pid (CPython 3\.13.*): perf trampoline asked for, not on after 2\.0 s: its main thread has not run the request yet" \
	"$tmp/read.err" || cat "$tmp/read.err"
check "... the summary says it had not come on by the end of the run" \
	grep -q "python: pid $pid's perf trampoline had not come on by the end of the run" \
	"$tmp/read.err"
echo "the line" >&7
wait_for grep -q "^read '" "$tmp/read.out"
check "the read returned the line written after the activation" \
	grep -q "^read 'the line\\\\n'$" "$tmp/read.out" || cat "$tmp/read.out"
wait_for map_has "$pid"
check "its trampoline came on once it ran Python code again" map_has "$pid"
finish "$pid" read
exec 7>&-
check "then it ran to its end, every result right" \
	grep -q "^done [1-9][0-9]* runs, 0 wrong$" "$tmp/read.out" || cat "$tmp/read.out"

# --- Traced already (strace): said, and left alone.
if command -v strace >/dev/null; then
	py313 traced busy "$in/stop"
	strace -p "$pid" -o /dev/null 2>/dev/null &
	tracer=$!
	wait_for sh -c "grep -q '^TracerPid:[[:space:]]*[1-9]' /proc/$pid/status"
	"$ds" --python -p "$pid" -d 0.3 -f folded -o "$tmp/traced.folded" >/dev/null \
		2>"$tmp/traced.err"
	check "--python on a process traced already: says by whom, and what to do" \
		grep -q "pid $pid is traced already, by pid [0-9]* (a debugger?): detach it first" \
		"$tmp/traced.err" || cat "$tmp/traced.err"
	check "... and that it was not turned on, the process running on" \
		grep -q "python: the perf trampoline of pid $pid was not turned on; it runs on as it was" \
		"$tmp/traced.err"
	kill "$tracer"
	wait "$tracer"
	finish "$pid" traced
	check "... to its end, every result right" \
		grep -q "^done [1-9][0-9]* runs, 0 wrong$" "$tmp/traced.out" || cat "$tmp/traced.out"
fi

# --- CPython 3.11: the version found, what works, no package named.
/usr/bin/python3.11 "$src/python-activate.py" busy "$tmp/stop311" >"$tmp/py311.out" 2>&1 &
pid=$!
pids="$pids $pid"
wait_for grep -q ready "$tmp/py311.out"
"$ds" --python -p "$pid" -d 1 -f folded -o "$tmp/py311.folded" >/dev/null 2>"$tmp/py311.err"
check "--python on CPython 3.11: profiled all the same" test $? -eq 0
check "... the version found and what works instead" \
	grep -q "python: pid $pid runs CPython 3\.11\.[0-9]*, /usr/bin/python3\.11, which has no perf trampoline .*Python 3\.12 or later names them: start it with -X perf (or PYTHONPERFSUPPORT=1 in its environment), or give --python on a running one" \
	"$tmp/py311.err" || cat "$tmp/py311.err"
check "... the summary's advice on its unnamed frames says the same, not a package" \
	grep -q "CPython 3\.11\.[0-9]*: its Python functions run inside _PyEval_EvalFrameDefault, which no symbols name by function .*or by --python -p PID in a running one" \
	"$tmp/py311.err" || cat "$tmp/py311.err"
check "... and no debug package advised for it" \
	sh -c "! grep -q 'apt-get install python3' '$tmp/py311.err'" || cat "$tmp/py311.err"
touch "$tmp/stop311"
wait "$pid"
check "... left running to its end" grep -q "^done [1-9][0-9]* runs, 0 wrong$" "$tmp/py311.out"

# --- No CPython at all.
sleep 30 &
pid=$!
pids="$pids $pid"
"$ds" --python -p "$pid" -d 0.3 -f folded -o "$tmp/none.folded" >/dev/null 2>"$tmp/none.err"
check "--python on a process without CPython: said, and sampled all the same" \
	grep -q "python: pid $pid runs no CPython (no libpython3.X and no executable with CPython's symbols in its mappings); --python does nothing to it" \
	"$tmp/none.err" || cat "$tmp/none.err"
check "... left running" kill -0 "$pid"

# --- -- CMD: the environment variable.
"$ds" --python -d 5 -f folded -o "$tmp/cmd.folded" -- \
	sh -c 'echo "PYTHONPERFSUPPORT=$PYTHONPERFSUPPORT" >"$1"' sh "$tmp/cmd.env" \
	>/dev/null 2>"$tmp/cmd.err"
check "--python -- CMD: the command sees PYTHONPERFSUPPORT=1" \
	grep -qx "PYTHONPERFSUPPORT=1" "$tmp/cmd.env" || cat "$tmp/cmd.err"
check "... and the summary says so" \
	grep -q "python: the command ran with PYTHONPERFSUPPORT=1 (--python)" "$tmp/cmd.err"

# --- The agent refuses it.
"$ds" agent --python -d 1 >/dev/null 2>"$tmp/agent.err"
check "the agent refuses --python, saying what to do instead" \
	grep -q "python is for one run: start the services the agent profiles with PYTHONPERFSUPPORT=1" \
	"$tmp/agent.err" || cat "$tmp/agent.err"
exit $fail
