#!/bin/sh
# Threads already off the CPU when --off-cpu or --wall attaches (-p): their
# wait has no switch out to see, yet it is what "why is it stuck" asks.
#   deadlock  two threads locked in opposite orders: both blocking stacks,
#             complete, under '[off-cpu: blocked since before the start]',
#             for the whole run each; live, --wall, and record + report
#             (perf script, the oracle, unwinds the same samples in the
#             file); the process still deadlocked after
#   sleep     Debian's coreutils sleep: its clock_nanosleep stack, and it
#             still sleeps its whole time
#   server    Python's http.server idle in poll(): its stack, and it still
#             answers
#   node      node's http server idle in epoll_pwait: its stack, and its
#             loop not even woken (a ptrace stop would end that call
#             with EINTR: its SP and PC come from /proc instead)
#   many      201 threads of a Python process asleep: all of them, each for
#             the whole run
#   stopped   a process stopped by SIGSTOP: its stack, and stopped still
#   traced    a process strace traces: refused in one line, the run goes on
# gdb's 'thread apply all bt' on the same processes is the oracle of the
# stacks: the same frames, named alike where both name them.
# usage: test-attach-blocked.sh DWARFSAMPLE DEADLOCK-PAIR
# shellcheck disable=SC2317 # the helpers run through check and wait_for
set -u
ds=$(realpath "$1")
deadlock=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
for tool in gdb strace /usr/bin/python3.11; do
	if ! command -v "$tool" >/dev/null; then
		echo "SKIP: $tool is not installed (.ci/debian-packages lists it)"
		exit 77
	fi
done
make_tmp
pids=
# shellcheck disable=SC2086 # the pids are words
trap 'rc=$?; [ -z "$pids" ] || kill -9 $pids 2>/dev/null; leave_tmp $rc' EXIT

label='[off-cpu: blocked since before the start]'

# gdb's stacks of process PID, one line per thread: the frames leaf first,
# joined by ';', as norm() names them.
gdb_stacks() {
	timeout 60 gdb -p "$1" -batch -ex 'set backtrace past-main on' \
		-ex 'thread apply all bt' 2>/dev/null |
		awk '/^Thread / { if (s != "") print s; s = "" }
		     /^#[0-9]/ { sub(/^#[0-9]+ +/, ""); sub(/^0x[0-9a-f]+ in /, "");
				 sub(/[ (].*/, ""); s = s (s == "" ? "" : ";") $0 }
		     END { if (s != "") print s }'
}

# The waits under way at the start in folded profile FILE, as gdb_stacks
# prints stacks: the process's root and the pseudo-frame left out.
before_start_stacks() {
	grep -F "$label" "$1" | sed 's/ [0-9]*$//' |
		awk -F';' '{ s = ""; for (i = NF - 1; i >= 2; i--) s = s (s == "" ? "" : ";") $i
			     print s }'
}

# same_stacks GDB OURS: every thread of gdb's has a stack of ours with as
# many frames, named alike wherever both name one (gdb's '??' and our
# '[file]' name none; symbol versions and glibc's internal aliases
# (__GI_, _impl) are the same function).
same_stacks() {
	awk -F';' '
	function norm(n) {
		sub(/@.*/, "", n); sub(/\(.*/, "", n); sub(/_impl$/, "", n); sub(/^_+/, "", n)
		sub(/^GI_+/, "", n)
		return (n == "??" || n ~ /^\[.*\]$/) ? "?" : n
	}
	NR == FNR { gdb[NR] = $0; ng = NR; next }
	{ ours[FNR] = $0; no = FNR }
	END {
		if (!ng) { print "gdb gave no stacks"; exit 1 }
		for (g = 1; g <= ng; g++) {
			na = split(gdb[g], a, ";"); found = 0
			for (o = 1; o <= no && !found; o++) {
				if (split(ours[o], b, ";") != na)
					continue
				same = 1
				for (i = 1; i <= na; i++)
					if (norm(a[i]) != "?" && norm(b[i]) != "?" && norm(a[i]) != norm(b[i]))
						same = 0
				found = same
			}
			if (!found) { print "no stack of ours is gdb'"'"'s " gdb[g]; exit 1 }
		}
	}' "$1" "$2"
}

# sum FILE: the total of a folded profile's before-start waits (ns).
sum() {
	grep -F "$label" "$1" | awk '{ s += $NF } END { printf "%.0f\n", s }'
}

# The run's length from its summary ("N samples in S s").
secs() {
	sed -n 's/.* samples in \([0-9.]*\) s.*/\1/p' "$1"
}

# --- a deadlock ---
"$deadlock" >"$tmp/dl.out" &
dl=$!
pids="$pids $dl"
# Both threads in their futex wait (system call 202) for good.
in_futex() {
	[ "$(cat /proc/"$dl"/task/*/syscall 2>/dev/null | grep -c '^202 ')" -eq 2 ]
}
wait_for in_futex
gdb_stacks "$dl" >"$tmp/dl.gdb"
"$ds" --off-cpu -p "$dl" -d 2 -f folded -o "$tmp/dl.folded" 2>"$tmp/dl.err"
rc=$?
skip_if_refused "$rc" "$tmp/dl.err"
check "deadlock: --off-cpu -p exits 0" test "$rc" -eq 0 || cat "$tmp/dl.err"
check "deadlock: the main thread waits in pthread_mutex_lock, its stack complete to _start" \
	grep -q "^deadlock-pair;_start;.*;main;take_in_order;pthread_mutex_lock[^;]*;.*lll_lock_wait;[^;]*;\\[off-cpu: blocked since before the start\\] [0-9]*$" \
	"$tmp/dl.folded" || cat "$tmp/dl.folded"
check "deadlock: the other thread waits there too, its stack complete to clone3" \
	grep -q "^deadlock-pair;clone3;start_thread;worker;take_in_order;pthread_mutex_lock[^;]*;.*lll_lock_wait;[^;]*;\\[off-cpu: blocked since before the start\\] [0-9]*$" \
	"$tmp/dl.folded"
check "deadlock: nothing else is in the profile (both waits began before it)" \
	test "$(wc -l <"$tmp/dl.folded")" -eq 2
s=$(secs "$tmp/dl.err")
total=$(sum "$tmp/dl.folded")
check "deadlock: each thread waited the whole run: $total ns in all, for $s s" \
	awk -v t="$total" -v s="$s" 'BEGIN { exit !(s >= 1.9 && t >= 2 * 1.9e9 && t <= 2 * (s + 0.2) * 1e9) }'
check "deadlock: the summary counts them apart" \
	grep -q "^dwarfsample: of which 2 under way already when sampling started" "$tmp/dl.err" ||
	cat "$tmp/dl.err"
before_start_stacks "$tmp/dl.folded" >"$tmp/dl.ours"
check "deadlock: gdb sees the same stacks" same_stacks "$tmp/dl.gdb" "$tmp/dl.ours"

"$ds" --wall -p "$dl" -d 1 -f folded -o "$tmp/dlw.folded" 2>"$tmp/dlw.err"
check "deadlock: --wall shows both waits too" \
	test "$(grep -c "take_in_order;.*\\[off-cpu: blocked since before the start\\] " "$tmp/dlw.folded")" -eq 2 ||
	cat "$tmp/dlw.err"

"$ds" record --off-cpu -p "$dl" -d 1 -o "$tmp/dl.data" 2>"$tmp/rec.err"
check "deadlock: record exits 0" test $? -eq 0 || cat "$tmp/rec.err"
"$ds" report -i "$tmp/dl.data" -f folded -o "$tmp/rep.folded" 2>"$tmp/rep.err"
check "deadlock: report shows both waits from the recording" \
	test "$(grep -c "take_in_order;.*\\[off-cpu: blocked since before the start\\] " "$tmp/rep.folded")" -eq 2 ||
	cat "$tmp/rep.err"
"$ds" report -i "$tmp/dl.data" -f perf-script -o "$tmp/rep.txt" 2>"$tmp/rep.err"
check "deadlock: report's perf-script text tops each of the two waits with the pseudo-frame" \
	test "$(grep -c "^	 *0 \[off-cpu: blocked since before the start\] (\[unknown\])\$" "$tmp/rep.txt")" -eq 2 ||
	cat "$tmp/rep.txt" "$tmp/rep.err"
if perf --version >/dev/null 2>&1; then
	perf script -i "$tmp/dl.data" -F tid,ip,sym >"$tmp/perf.txt" 2>"$tmp/perf.err"
	check "deadlock: perf script unwinds the recorded samples to main and worker" \
		sh -c "grep -q ' main\$' '$tmp/perf.txt' && grep -q ' worker\$' '$tmp/perf.txt' &&
		       test \$(grep -c ' take_in_order\$' '$tmp/perf.txt') -eq 2" ||
		cat "$tmp/perf.txt" "$tmp/perf.err"
fi
check "deadlock: still deadlocked afterwards" in_futex

# --- sleep, Debian's ---
start=$(date +%s.%N)
(sleep 4; echo $? >"$tmp/sleep.rc"; date +%s.%N >"$tmp/sleep.end") &
sub=$!
sleeping() {
	sl=$(pgrep -P "$sub" -x sleep) && grep -q '^230 ' "/proc/$sl/syscall" 2>/dev/null
}
wait_for sleeping
gdb_stacks "$sl" >"$tmp/sl.gdb"
"$ds" --off-cpu -p "$sl" -d 1 -f folded -o "$tmp/sl.folded" 2>"$tmp/sl.err"
check "sleep: its wait in clock_nanosleep is there, its stack complete" \
	grep -q "^sleep;.*;__libc_start_call_main;.*;__nanosleep;clock_nanosleep[^;]*;\\[off-cpu: blocked since before the start\\] [0-9]*$" \
	"$tmp/sl.folded" || cat "$tmp/sl.folded" "$tmp/sl.err"
check "sleep: its stack ends at the outermost frame" \
	grep -q "stacks ended: outermost 100.0%" "$tmp/sl.err"
before_start_stacks "$tmp/sl.folded" >"$tmp/sl.ours"
check "sleep: gdb sees the same stack" same_stacks "$tmp/sl.gdb" "$tmp/sl.ours"
wait "$sub"
check "sleep: it slept its whole 4 s and exited 0" \
	awk -v a="$start" -v b="$(cat "$tmp/sleep.end")" -v rc="$(cat "$tmp/sleep.rc")" \
	'BEGIN { exit !(rc == 0 && b - a >= 4) }'

# --- an idle server: Python's http.server, polling for an hour ---
/usr/bin/python3.11 -c '
import http.server as h, sys
s = h.HTTPServer(("127.0.0.1", 0), h.SimpleHTTPRequestHandler)
print(s.server_port, flush=True)
s.serve_forever(poll_interval=3600)' >"$tmp/port" 2>/dev/null &
srv=$!
pids="$pids $srv"
polling() {
	[ -s "$tmp/port" ] && grep -q '^7 ' "/proc/$srv/syscall" 2>/dev/null
}
wait_for polling
gdb_stacks "$srv" >"$tmp/srv.gdb"
"$ds" --off-cpu -p "$srv" -d 1 -f folded -o "$tmp/srv.folded" 2>"$tmp/srv.err"
check "server: its wait in poll is there, its stack complete to _start" \
	grep -q "^python3.11;_start;.*;Py_RunMain;.*;__poll;\\[off-cpu: blocked since before the start\\] [0-9]*$" \
	"$tmp/srv.folded" || cat "$tmp/srv.folded" "$tmp/srv.err"
before_start_stacks "$tmp/srv.folded" >"$tmp/srv.ours"
check "server: gdb sees the same stack" same_stacks "$tmp/srv.gdb" "$tmp/srv.ours"
check "server: it still answers" /usr/bin/python3.11 -c "
import urllib.request
urllib.request.urlopen('http://127.0.0.1:$(cat "$tmp/port")/', timeout=20).read()"

# --- an idle node server: its loop in epoll_pwait, which a ptrace stop
# would end with EINTR, is not stopped at all ---
# (Without a timer: its check of idle connections, every 30 s by
# default, would wake it.)
(exec /usr/bin/node -e '
require("http").createServer({ connectionsCheckingInterval: 2147483647 },
	(q, r) => r.end("x")).listen(0, "127.0.0.1",
	function () { console.log(this.address().port); });' >"$tmp/nport" 2>/dev/null) &
nd=$!
pids="$pids $nd"
in_epoll() {
	[ -s "$tmp/nport" ] && grep -q '^281 ' "/proc/$nd/syscall" 2>/dev/null
}
wait_for in_epoll
switches() {
	grep ctxt_switches "/proc/$nd/status"
}
before=$(switches)
# (uv__io_poll keeps 12 KiB of events on its stack.)
"$ds" --off-cpu --off-cpu-stack-size 32768 -p "$nd" -d 1 -f folded -o "$tmp/nd.folded" \
	2>"$tmp/nd.err"
check "node: its loop's wait in epoll_pwait is there, its stack complete to _start" \
	grep -q "^node;_start;.*;node::Start;.*;uv_run;uv__io_poll;epoll_pwait;\\[off-cpu: blocked since before the start\\] [0-9]*$" \
	"$tmp/nd.folded" || cat "$tmp/nd.folded" "$tmp/nd.err"
check "node: its main thread was not even woken" test "$(switches)" = "$before"
# gdb's stack is taken before the request below: answering it, node
# compiles its handler lazily, and a gdb attached just after could catch
# it there rather than back in epoll_pwait.
timeout 60 gdb -p "$nd" -batch -ex 'set backtrace past-main on' -ex 'bt' 2>/dev/null |
	awk '/^#[0-9]/ { sub(/^#[0-9]+ +/, ""); sub(/^0x[0-9a-f]+ in /, ""); sub(/[ (].*/, "")
			 s = s (s == "" ? "" : ";") $0 } END { print s }' >"$tmp/nd.gdb"
check "node: it still answers" /usr/bin/python3.11 -c "
import urllib.request
urllib.request.urlopen('http://127.0.0.1:$(cat "$tmp/nport")/', timeout=20).read()"
grep '^node;_start;' "$tmp/nd.folded" >"$tmp/nd.main"
before_start_stacks "$tmp/nd.main" >"$tmp/nd.ours"
check "node: gdb sees the same stack" same_stacks "$tmp/nd.gdb" "$tmp/nd.ours"

# --- many threads, stopped one at a time, none of the run's time taken ---
/usr/bin/python3.11 -c '
import threading, time
for _ in range(200):
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
print("started", flush=True)
time.sleep(3600)' >"$tmp/many.out" &
many=$!
pids="$pids $many"
all_asleep() {
	[ -s "$tmp/many.out" ] &&
		[ "$(cat /proc/"$many"/task/*/stat 2>/dev/null | sed 's/.*) //' | grep -c '^S')" -eq 201 ]
}
wait_for all_asleep
"$ds" --off-cpu -p "$many" -d 1 -f folded -o "$tmp/many.folded" 2>"$tmp/many.err"
check "many: the 201 sleeping threads' waits are all there" \
	grep -q "^dwarfsample: of which 201 under way already when sampling started" "$tmp/many.err" ||
	cat "$tmp/many.err"
s=$(secs "$tmp/many.err")
total=$(sum "$tmp/many.folded")
check "many: each for the whole run, which stopping them did not shorten: $total ns in all, for $s s" \
	awk -v t="$total" -v s="$s" 'BEGIN { exit !(s >= 0.95 && t >= 201 * 0.95e9 && t <= 201 * (s + 0.2) * 1e9) }'
check "many: all still asleep afterwards" all_asleep

# --- a stopped process ---
sleep 60 &
st=$!
pids="$pids $st"
wait_for sh -c "grep -q '^230 ' /proc/$st/syscall"
kill -STOP "$st"
wait_for sh -c "grep -q '^State:.T' /proc/$st/status"
"$ds" --off-cpu -p "$st" -d 1 -f folded -o "$tmp/st.folded" 2>"$tmp/st.err"
check "stopped: its wait is there" \
	grep -q "clock_nanosleep[^;]*;\\[off-cpu: blocked since before the start\\] [0-9]*$" \
	"$tmp/st.folded" || cat "$tmp/st.err"
check "stopped: it is stopped still" grep -q '^State:.T' "/proc/$st/status"
kill -CONT "$st"

# --- a traced process: ptrace refuses, in one line, and the run goes on ---
sleep 60 &
tr=$!
pids="$pids $tr"
wait_for sh -c "grep -q '^230 ' /proc/$tr/syscall"
timeout 60 strace -p "$tr" -o /dev/null 2>/dev/null &
strace=$!
pids="$pids $strace"
wait_for sh -c "! grep -q '^TracerPid:.0\$' /proc/$tr/status"
"$ds" --off-cpu -p "$tr" -d 1 -f folded -o "$tmp/tr.folded" 2>"$tmp/tr.err"
check "traced: the run exits 0" test $? -eq 0 || cat "$tmp/tr.err"
check "traced: one line says why its waits before the start are left out" \
	test "$(grep -c "^dwarfsample: warning: pid $tr is traced already, by pid [0-9]* (a debugger?): the threads already off the CPU are left out\$" "$tmp/tr.err")" -eq 1 ||
	cat "$tmp/tr.err"
# (strace's own attach restarted the sleep: restart_syscall, 219.)
check "traced: and it is still traced, and asleep" \
	sh -c "! grep -q '^TracerPid:.0\$' /proc/$tr/status && grep -Eq '^(230|219) ' /proc/$tr/syscall"

exit $fail
