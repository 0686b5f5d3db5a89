#!/bin/sh
# Off-CPU and wall-clock profiles against independent oracles: the
# workload's own measurements (tests/offcpu-workload.c: CLOCK_MONOTONIC,
# its CPU time, and the kernel's run-queue wait from
# /proc/self/task/TID/schedstat, per thread) and perf 6.1's
# sched:sched_switch samples of the same switches.
#   sleep    --wall: 70 +- 5 % of the sleeper's time on its sleeping stack,
#            named through libc; its total within 2 % of its wall time
#   mutex, pipe, poll
#            --off-cpu: the blocking call's stack complete to the thread
#            start; the blocked total within 2 % of the time asleep
#   preempt  --off-cpu: the preempted total within 2 % of the run-queue wait
#   agree    perf record -e sched:sched_switch --call-graph dwarf and
#            dwarfsample record --off-cpu on the same process at once: the
#            samples paired by thread and time, >= 99.9 % of user stacks
#            equal or longer in dwarfsample (recorded in the plain build;
#            a sanitized one reports the two captures it kept: lib.sh,
#            oracle_begin)
#   fork, exec, exit
#            a wait across fork, a thread killed by exec, threads killed
#            while blocked: each wait counted once and to its end only
#   record   record --off-cpu + report: one capture gives the same totals
#            in folded, pprof and perf-script; live and recorded profiles
#            of the same workload have the same stacks
# usage: test-offcpu-oracles.sh DWARFSAMPLE OFFCPU-WORKLOAD OFFCPU-PAIR AGREE-COMPARE
set -u
ds=$(realpath "$1")
workload=$(realpath "$2")
pair=$(realpath "$3")
compare=$(realpath "$4")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
oracle_begin offcpu-oracles "$workload"
[ "$asking" = 0 ] || need_perf
wpid=
trap 'rc=$?; kill $wpid 2>/dev/null; leave_tmp $rc' EXIT
comm=offcpu-workload

# truth FILE ROLE KEY [NTH]: a field of the NTH line (default 1) the
# workload wrote for a thread of that role, or a derived value:
#   wall       t1 - t0
#   blocked    wall - run - rq + rq_block: the time asleep, plus the
#              run-queue wait between being woken and running again,
#              which the profiler counts in a blocked wait and
#              schedstat in the run-queue wait (see below)
#   preempted  rq - rq_block: the run-queue wait outside blocking calls
#   off        wall - run
truth() {
	awk -v role="$2" -v key="$3" -v nth="${4:-1}" '
		{
			delete v
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				v[kv[1]] = kv[2]
			}
			if (v["role"] != role || ++seen != nth)
				next
			wall = v["t1"] - v["t0"]
			if (key == "wall") print wall
			else if (key == "blocked") print wall - v["run"] - v["rq"] + v["rq_block"]
			else if (key == "preempted") print v["rq"] - v["rq_block"]
			else if (key == "off") print wall - v["run"]
			else print v[key]
			found = 1
			exit
		}
		END { if (!found) print "none" }' "$1"
}

# folded FILE TID KIND [REGEX]: the sum of the values of a --thread-roots folded
# profile's lines of thread TID whose stack ends in "[off-cpu: KIND]"
# (KIND "any": every line; "off": either kind) and matches REGEX.
folded() {
	awk -v tid="$2" -v kind="$3" -v re="${4:-}" '
		{
			s = $0
			sub(/ [0-9]+$/, "", s)
			root = s
			sub(/;.*/, "", root)
			sub(/.*\//, "", root)
			if (root != tid)
				next
			if (kind == "off" && s !~ /;\[off-cpu: (blocked|preempted)\]$/)
				next
			if (kind != "any" && kind != "off" && s !~ ("\\[off-cpu: " kind "\\]$"))
				next
			if (re != "" && s !~ re)
				next
			sum += $NF
		}
		END { printf "%.0f\n", sum }' "$1"
}

# script FILE TID: the sum of the periods (ns) of a perf-script listing's
# "offcpu-time" samples of thread TID.
script() {
	awk -v tid="$2" '
		/^[^\t]/ {
			for (i = 2; i <= NF; i++)
				if ($i ~ /^[0-9]+\.[0-9]+:$/ && $(i - 1) == tid && $(i + 2) == "offcpu-time:")
					sum += $(i + 1)
		}
		END { printf "%.0f\n", sum }' "$1"
}

# waits RAW TID FUNCTION: from go tool pprof -raw's listing, the number
# of blocked waits (samples/count, wait:[blocked]) of thread TID with
# FUNCTION on their stack, inlined or not.
waits() {
	awk -v tid="$2" -v fn="$3" '
		/^Samples:/ { sec = "samples"; next }
		/^Locations/ { sec = "locations"; next }
		/^Mappings/ { sec = "" }
		sec == "samples" && /^ +[0-9]+ +[0-9]+: / {
			n++
			count[n] = $1
			locs[n] = $0
			sub(/^[^:]*: */, "", locs[n])
			next
		}
		sec == "samples" && /wait:\[/ {
			w = $0
			sub(/.*wait:\[/, "", w)
			sub(/\].*/, "", w)
			kind[n] = w
		}
		sec == "samples" && /tid:\[/ {
			t = $0
			sub(/.*tid:\[/, "", t)
			sub(/\].*/, "", t)
			tids[n] = t
		}
		sec == "locations" && /^ +[0-9]+: / {
			id = $1
			sub(/:$/, "", id)
			if ($4 == fn)
				has[id] = 1
			next
		}
		sec == "locations" && $1 == fn { has[id] = 1 }
		END {
			for (i = 1; i <= n; i++) {
				if (tids[i] != tid || kind[i] != "blocked")
					continue
				k = split(locs[i], l, " ")
				for (j = 1; j <= k; j++)
					if (has[l[j]]) {
						sum += count[i]
						break
					}
			}
			print sum + 0
		}' "$1"
}

# within PERCENT MEASURED EXPECTED
# shellcheck disable=SC2317 # called through check
within() {
	awk -v p="$1" -v m="$2" -v e="$3" \
		'BEGIN { d = m - e; if (d < 0) d = -d; exit !(e > 0 && d <= p / 100 * e) }'
}

# between MEASURED LOW HIGH: within 2 % of [LOW, HIGH].
# shellcheck disable=SC2317 # called through check
between() {
	awk -v m="$1" -v lo="$2" -v hi="$3" \
		'BEGIN { exit !(lo > 0 && m >= 0.98 * lo && m <= 1.02 * hi) }'
}

ms() { awk -v n="$1" 'BEGIN { printf "%.1f ms", n / 1e6 }'; }

# near NAME PERCENT MEASURED EXPECTED: check, saying both values.
near() {
	check "$1: $(ms "$3") within $2 % of $(ms "$4")" within "$2" "$3" "$4"
}

# The sleep case and the three blocked cases below run at once: each
# profiles its own command, and each oracle is the thread's own schedstat
# and clock readings, which hold however the four share the CPUs (their
# threads mostly sleep; the sleeper steers its naps to its share).
blocked_pids=
for mode in mutex pipe poll; do
	{
		"$ds" --off-cpu --thread-roots -f folded -o "$tmp/$mode.folded" -- \
			"$workload" -o "$tmp/$mode.truth" "$mode" 3 >/dev/null 2>"$tmp/$mode.err"
		echo $? >"$tmp/$mode.rc"
	} &
	blocked_pids="$blocked_pids $!"
done

# --- sleep, --wall ---
"$ds" --wall -F 999 --thread-roots -f folded -o "$tmp/sleep.folded" -- \
	"$workload" -o "$tmp/sleep.truth" sleep 3 >/dev/null 2>"$tmp/err"
rc=$?
skip_if_refused $rc "$tmp/err"
check "--wall on a command exits 0" test $rc -eq 0 || cat "$tmp/err"
t=$tmp/sleep.truth
tid=$(truth "$t" sleeper tid)
total=$(folded "$tmp/sleep.folded" "$tid" any)
near "--wall: the sleeper's total is its wall time" 2 "$total" "$(truth "$t" sleeper wall)"
asleep=$(folded "$tmp/sleep.folded" "$tid" blocked ';sleeper_thread;nap;[^;]*nanosleep')
share=$(awk -v a="$asleep" -v t="$total" 'BEGIN { printf "%.1f", t ? 100 * a / t : 0 }')
check "--wall: 70 +- 5 % of the sleeper's time asleep in nap ($share %)" \
	awk -v s="$share" 'BEGIN { exit !(s >= 65 && s <= 75) }'
check "--wall: the sleeping stack runs from the thread start through libc" \
	grep -Eq "^$comm-[0-9]+/$tid;[^;]*clone[^;]*;start_thread;sleeper_thread;nap;[^;]*nanosleep[^;]*(;[^;]+)*;\[off-cpu: blocked\] [0-9]+$" \
	"$tmp/sleep.folded"
check "--wall: and its computing is there too" \
	grep -Eq "^$comm-[0-9]+/$tid;[^;]*clone[^;]*;start_thread;sleeper_thread;compute_until(;[^;]+)* [0-9]+$" \
	"$tmp/sleep.folded"

# --- blocked: mutex, pipe, poll, --off-cpu ---
# The oracle for a blocked total is the time the thread was neither
# running nor waiting on a run queue, wall - run - rq (schedstat), plus
# what it waited on a run queue between being woken and running: the
# profiler's blocked wait lasts from the switch out to the next switch in,
# while schedstat puts that last stretch in the run-queue wait.  The
# workload measures it deterministically (schedstat read on the CPU just
# before and just after each blocking call) as rq_block, so the 2 %
# holds however long wake-ups take on a loaded machine; the plain
# wall - run - rq is shown beside it.  Likewise the preempted total is
# the run-queue wait outside blocking calls, rq - rq_block.
# shellcheck disable=SC2086 # one pid a word (the three runs started above)
wait $blocked_pids
for case in "mutex mutex-waiter mutex_waiter_thread;wait_on_mutex;[^;]*pthread_mutex_lock" \
	"pipe pipe-reader pipe_reader_thread;read_pipe;[^;]*read" \
	"poll poller poller_thread;wait_in_poll;[^;]*poll"; do
	# shellcheck disable=SC2086 # three words
	set -- $case
	mode=$1
	role=$2
	stack=$3
	t=$tmp/$mode.truth
	f=$tmp/$mode.folded
	check "$mode: --off-cpu on a command exits 0" test "$(cat "$tmp/$mode.rc")" -eq 0 ||
		cat "$tmp/$mode.err"
	tid=$(truth "$t" "$role" tid)
	blocked=$(folded "$f" "$tid" blocked)
	echo "# $mode: wall - run - rq = $(ms "$(truth "$t" "$role" blocked | \
		awk -v b="$(truth "$t" "$role" rq_block)" '{ print $1 - b }')")," \
		"rq_block = $(ms "$(truth "$t" "$role" rq_block)")"
	near "$mode: $role's blocked total is its time asleep (schedstat)" 2 \
		"$blocked" "$(truth "$t" "$role" blocked)"
	near "$mode: $role's off-CPU total is wall - run" 2 \
		"$(folded "$f" "$tid" off)" "$(truth "$t" "$role" off)"
	check "$mode: the blocking call's stack runs from the thread start" \
		grep -Eq "^$comm-[0-9]+/$tid;[^;]*clone[^;]*;start_thread;${stack}[^;]*(;[^;]+)*;\[off-cpu: blocked\] [0-9]+$" "$f"
	on_stack=$(folded "$f" "$tid" blocked ";start_thread;$stack")
	near "$mode: nearly all of it on that stack" 2 "$on_stack" "$blocked"
	check "$mode: the main thread's wait in pthread_join runs from _start" \
		grep -Eq "^$comm-([0-9]+)/\\1;_start;__libc_start_main[^;]*;(__libc_start_call_main;)?main;run_threads;[^;]*join[^;]*(;[^;]+)*;\[off-cpu: blocked\] [0-9]+$" "$f"
done

# --- preempted ---
t=$tmp/preempt.truth
f=$tmp/preempt.folded
"$ds" --off-cpu --thread-roots -f folded -o "$f" -- "$workload" -o "$t" preempt 3 \
	>/dev/null 2>"$tmp/err"
check "preempt: --off-cpu on a command exits 0" test $? -eq 0 || cat "$tmp/err"
for n in 1 2; do
	role=preempt-$(echo a b | cut -d' ' -f$n)
	tid=$(truth "$t" "$role" tid)
	near "preempt: $role's preempted total is its run-queue wait (schedstat)" 2 \
		"$(folded "$f" "$tid" preempted)" "$(truth "$t" "$role" preempted)"
	check "preempt: $role's preempted stack runs from the thread start" \
		grep -Eq "^$comm-[0-9]+/$tid;[^;]*clone[^;]*;start_thread;preempt_thread;burn;compute_until(;[^;]+)*;\[off-cpu: preempted\] [0-9]+$" "$f"
done

# --- agreement with perf on the same switches ---
# offcpu-pair tells the two marks listed as "0 ([unknown])" apart by
# place: a wait begun before the start has it first (ours alone, left
# out), a stack the copy cut last ("[truncated]", a switch perf sampled
# too: clean-clone run 35 failed on such a sample, a new thread
# preempted before its first instruction, left out as begun before).
printf '%s\n' 'w 100 10.000100:      offcpu-time: ' '	               0 ([unknown])' \
	'	           cf503 (/lib/libc.so.6)' '' 'w 101 10.000200:      offcpu-time: ' \
	'	          1098d9 (/lib/libc.so.6)' '	               0 ([unknown])' '' \
	'w 101 10.000400:      offcpu-time: ' '	          1098d9 (/lib/libc.so.6)' \
	'	            2e8f (/w)' >"$tmp/pair.ours"
printf '%s\n' 'w 101 10.000150: sched:sched_switch: ' '	          1098d9 (/lib/libc.so.6)' '' \
	'w 101 10.000350: sched:sched_switch: ' '	          1098d9 (/lib/libc.so.6)' \
	'	            2e8f (/w)' >"$tmp/pair.perf"
"$pair" "$tmp/pair.ours" "$tmp/pair.perf" "$tmp/pair.o" "$tmp/pair.p" 999 marks >"$tmp/pair.out"
check "agree: offcpu-pair leaves out the wait begun before the start, and pairs the cut stack" \
	test $? -eq 0 ||
	cat "$tmp/pair.out"
check "agree: and says it left out one" grep -q '^# marks: 1 of ours left out' "$tmp/pair.out"

# shellcheck disable=SC2317 # called through wait_for
rec_enabled() { grep -q "the events are enabled" "$tmp/rec.err" || ! kill -0 "$rpid" 2>/dev/null; }
# record_both: perf and dwarfsample record the same switches, into
# $answers/mix.perf.data and mix.data, and perf script lists perf's as
# $answers/mix.perf.
record_both() {
	# Both attach to a workload that waits for them (-g), with the same stack
	# copy (8 KiB, perf's default), and the same clock.
	mkfifo "$tmp/go"
	"$workload" -g -o "$tmp/mix.truth" mix 3 <"$tmp/go" >/dev/null &
	wpid=$!
	exec 3>"$tmp/go"
	wait_for runs $wpid $comm
	# Rings of 16 MiB per CPU hold every sample of the run (about 1000
	# switches of 8 KiB stacks) without a drain: however late either
	# profiler's reader runs on a loaded machine, neither loses a switch.
	# Both open their events disabled and enable them later, so the
	# workload starts only once each has said it samples: perf acks an
	# "enable" on its control fifo, dwarfsample -vv logs it.
	mkfifo "$tmp/perf.ctl" "$tmp/perf.ack"
	perf record -q -k CLOCK_MONOTONIC -e sched:sched_switch --call-graph dwarf,8192 -m 4096 \
		-D -1 --control "fifo:$tmp/perf.ctl,$tmp/perf.ack" \
		-p $wpid -o "$answers/mix.perf.data" >/dev/null 2>"$tmp/perf.err" &
	ppid=$!
	"$ds" record -vv --off-cpu --off-cpu-stack-size 8192 --ring-pages 4096 -p $wpid \
		-o "$answers/mix.data" 2>"$tmp/rec.err" &
	rpid=$!
	echo enable >"$tmp/perf.ctl"
	ack=$(head -c 3 <"$tmp/perf.ack")
	check "agree: perf acks the enable on its control fifo" test "$ack" = ack
	wait_for rec_enabled
	printf g >&3
	exec 3>&-
	wait $wpid
	wpid=
	wait $rpid
	check "agree: record --off-cpu -p exits 0 when its target does" test $? -eq 0 ||
		cat "$tmp/rec.err"
	wait $ppid
	check "agree: perf record -e sched:sched_switch exits 0" test $? -eq 0 || cat "$tmp/perf.err"
	perf script -F comm,tid,time,event,ip,dso --no-inline -i "$answers/mix.perf.data" \
		>"$answers/mix.perf" 2>/dev/null
}
[ "$asking" = 0 ] || record_both
"$ds" report -F comm,tid,time,event,ip,dso --no-inline -i "$answers/mix.data" \
	-o "$tmp/mix.ours" 2>"$tmp/err"
check "agree: report reads the off-CPU capture" test $? -eq 0
# The tracepoint fires in __schedule before the context-switches event in
# the same switch, and a thread's next switch cannot come before it has
# run again: each sample of ours is paired with perf's of the same switch
# by that order alone, however far apart a loaded or descheduled virtual
# CPU puts the two (offcpu-pair.c).  While neither side misses a switch
# (the rings see to it), all must pair.  The workload's main thread waits
# on the fifo when record attaches: that wait, begun before either
# profiler sampled, is ours alone ("blocked since before the start", from
# the snapshot at attach; counted only when the thread did not run
# between the snapshot and the enable, which the scheduler decides), and
# offcpu-pair leaves it out.
check "agree: the two captures' samples pair up by thread and time" \
	"$pair" "$tmp/mix.ours" "$answers/mix.perf" "$tmp/mix.ours.paired" "$tmp/mix.perf.paired" \
	999 agree
n=$(grep -c '^[0-9]' "$tmp/mix.perf.paired")
check "agree: enough pairs to compare ($n)" test "$n" -ge 500
check "agree: >= 99.9 % of user stacks equal or longer in dwarfsample" \
	"$compare" --or-longer "$tmp/mix.ours.paired" "$tmp/mix.perf.paired" 999 agree

# --- fork, exec, exit: through record and report ---
# record_run MODE: record --off-cpu the workload in MODE, then report it
# as a --thread-roots folded profile, as perf-script text and as pprof (read back
# by go tool pprof -raw when Go is there).
record_run() {
	rm -f "$tmp/$1.truth"
	"$ds" record --off-cpu -o "$tmp/$1.data" -- "$workload" -o "$tmp/$1.truth" "$1" \
		>/dev/null 2>"$tmp/err"
	check "$1: record --off-cpu exits 0" test $? -eq 0 || cat "$tmp/err"
	"$ds" report -v --thread-roots -f folded -i "$tmp/$1.data" -o "$tmp/$1.folded" \
		2>"$tmp/$1.report.err"
	"$ds" report -F comm,tid,time,period,event,ip,sym,dso -i "$tmp/$1.data" \
		-o "$tmp/$1.txt" 2>/dev/null
	"$ds" report -f pprof -i "$tmp/$1.data" -o "$tmp/$1.pb.gz" 2>/dev/null
	if [ -n "$go" ]; then
		HOME=$tmp go tool pprof -symbolize=none -raw "$tmp/$1.pb.gz" >"$tmp/$1.raw" \
			2>/dev/null
	fi
}

# one_wait MODE TID FUNCTION N: the thread waited N times blocked in
# FUNCTION, each wait one sample: counted once.
one_wait() {
	if [ -n "$go" ]; then
		check "$1: tid $2: $4 blocked wait(s) in $3, one sample each" \
			test "$(waits "$tmp/$1.raw" "$2" "$3")" -eq "$4"
	fi
}

# once MODE ROLE NTH FUNCTION: the thread's blocked total in FUNCTION is
# its truth, and each of its waits there is one sample.
once() {
	t=$tmp/$1.truth
	tid=$(truth "$t" "$2" tid "$3")
	# A miss shows what the report said of the file (late records, the
	# waits it saw), for whoever looks into it.
	near "$1: $2 $3 (tid $tid) blocked in $4" 2 \
		"$(folded "$tmp/$1.folded" "$tid" blocked ";$4;")" "$(truth "$t" "$2" blocked "$3")" ||
		{ cat "$tmp/$1.report.err" "$t"; grep "/$tid;" "$tmp/$1.folded"; }
	one_wait "$1" "$tid" "$4" "$(truth "$t" "$2" n_block "$3")"
}

go=
if command -v go >/dev/null; then
	go=go
else
	echo "# go is absent: waits are not counted, pprof is not compared"
fi
record_run fork
once fork fork-blocker 1 blocked_in_read
for n in 1 2 3 4; do
	once fork fork-child $n child_wait
done

# killed MODE TID BLOCKED DEAD_BY T0 WHERE: a thread killed while blocked
# in a wait that started by T0, last seen blocked with BLOCKED ns of it,
# dead by DEAD_BY: its wait ends there, once.
killed() {
	high=$(($4 - $5))
	check "$1: tid $2, killed while blocked: its wait ends $6: $(ms "$7") in [$(ms "$3"), $(ms "$high")]" \
		between "$7" "$3" "$high"
}

record_run exec
# The blocker dies in the exec, still off the CPU, by the time the new
# image runs (execve kills the other threads and waits for them first).
t=$tmp/exec.truth
tid=$(truth "$t" exec-blocker tid)
killed exec "$tid" "$(truth "$t" exec-blocker blocked)" "$(truth "$t" exec-after t0)" \
	"$(truth "$t" exec-blocker t0)" "with the exec" \
	"$(folded "$tmp/exec.folded" "$tid" blocked ";blocked_in_read;")"
one_wait exec "$tid" blocked_in_read 1
once exec exec-before 1 wait_before_exec
once exec exec-after 1 wait_after_exec

# Killed while blocked, in a process that lives on 500 ms: a wait that ran
# to the end of the run instead of to the kill would be 500 ms too long.
record_run exit
t=$tmp/exit.truth
for n in 1 2; do
	tid=$(truth "$t" exit-victim tid $n)
	killed exit "$tid" "$(truth "$t" exit-victim blocked $n)" \
		"$(truth "$t" exit-victim dead_by $n)" "$(truth "$t" exit-victim t0 $n)" \
		"at the kill" "$(folded "$tmp/exit.folded" "$tid" blocked ";wait_until_killed;")"
	one_wait exit "$tid" wait_until_killed 1
done

# --- one capture, every format; live and recorded alike ---
# The pipe workload's threads, from one recording: the same total per
# thread in folded, perf-script and pprof.
record_run pipe
# pprof_tid TID: the off_cpu/nanoseconds total of a thread's samples in
# go tool pprof -raw's listing.
pprof_tid() {
	awk -v tid="$1" '
		prev == "Samples:" {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^off_cpu\/nanoseconds/)
					col = i
		}
		{ prev = $0 }
		/^Locations/ { done = 1 }
		done { next }
		/^ +[0-9]+ +[0-9]/ && col {
			sub(/:.*/, "")
			v = $col
			next
		}
		/tid:\[/ {
			t = $0
			sub(/.*tid:\[/, "", t)
			sub(/\].*/, "", t)
			if (t == tid)
				sum += v
		}
		END { printf "%.0f\n", sum }' "$tmp/pipe.raw"
}
if [ -n "$go" ]; then
	check "pprof: the sample types say what each value is" \
		grep -Eq "^samples/count .*off_cpu/nanoseconds" "$tmp/pipe.raw"
	check "pprof: the wait kind is a label" grep -q "wait:\[blocked\]" "$tmp/pipe.raw"
fi
for role in pipe-reader pipe-writer; do
	tid=$(truth "$tmp/pipe.truth" $role tid)
	f=$(folded "$tmp/pipe.folded" "$tid" off)
	check "record: $role's folded and perf-script totals are equal ($f ns)" \
		test "$f" -gt 0 -a "$f" = "$(script "$tmp/pipe.txt" "$tid")"
	if [ -n "$go" ]; then
		check "record: $role's folded and pprof totals are equal" \
			test "$f" = "$(pprof_tid "$tid")"
	fi
done
# Live and recorded runs of the same workload, without --thread-roots: the stacks
# that hold at least 5 % of the off-CPU time are the same.
"$ds" --off-cpu -f folded -o "$tmp/live.folded" -- "$workload" pipe 2 >/dev/null 2>&1
"$ds" report -f folded -i "$tmp/pipe.data" -o "$tmp/rec.folded" 2>/dev/null
# main_stacks FILE: those stacks, sorted.
main_stacks() {
	awk '{ v[NR] = $NF; s = $0; sub(/ [0-9]+$/, "", s); k[NR] = s; t += $NF }
		END { for (i = 1; i <= NR; i++) if (v[i] >= t / 20) print k[i] }' "$1" | sort
}
main_stacks "$tmp/live.folded" >"$tmp/live.main"
main_stacks "$tmp/rec.folded" >"$tmp/rec.main"
check "live and recorded: the same main stacks ($(wc -l <"$tmp/live.main"))" \
	cmp "$tmp/live.main" "$tmp/rec.main"
check "live and recorded: the pipe reader's among them" \
	grep -q ";pipe_reader_thread;read_pipe;" "$tmp/live.main"

oracle_save
if [ "$fail" -ne 0 ]; then
	for f in "$tmp"/*.truth; do
		echo "# $f:"
		sed 's/^/#   /' "$f"
	done
fi
exit "$fail"
