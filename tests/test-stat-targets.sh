#!/bin/bash
# `dwarfsample stat`'s target forms as perf users type them, against perf
# stat (perf 6.1) on the same kind of target: a command run beside -a or
# -p and counted for as long as it runs, -a --per-thread, the events
# printed as -e spelt them, "<not supported>" for what the machine cannot
# count, and an unknown event's message.
#
# Counts of the whole machine depend on what else runs, so they are held
# to bounds that hold at any load: cpu-clock counts every CPU's whole
# time, and a workload's own page faults and context switches are a floor.
# Counts of one process's work are compared with perf's on the very same
# work: stat-workload -g waits for a byte, both counters start, then the
# byte is sent; the commands beside them wait for the workload's end (EOF
# on its standard output).
# usage: test-stat-targets.sh DWARFSAMPLE STAT_WORKLOAD
set -u
ds=$1
workload=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_perf
tmp=$(mktemp -d)
trap 'exec 3>&- 4<&- 2>/dev/null; [ -n "$wpid" ] && kill $wpid 2>/dev/null; rm -rf "$tmp"' EXIT
wpid=

"$ds" stat -a -e page-faults -- true 2>"$tmp/err"
rc=$?
skip_if_refused $rc "$tmp/err"

# ---- helpers ----

# The table's value of EVENT (msec for the clocks), or its "<not ...>".
table_value() { # file, event
	awk -v ev="$2" '
		$0 ~ /<not (counted|supported)>/ && $NF == ev { print $1 " " $2; exit }
		$2 == ev || ($2 == "msec" && $3 == ev) { gsub(/,/, "", $1); print $1; exit }' "$1"
}

# The seconds of the table's "seconds time elapsed".
elapsed() { # file
	awk '/seconds time elapsed/ { print $1 }' "$1"
}

# Is A within [LO, HI] (decimals)?
# shellcheck disable=SC2317 # run through check
between() { # a, lo, hi
	awk -v a="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(a != "" && a + 0 >= lo && a + 0 <= hi) }'
}

# Per thread, the count of EVENT in a CSV file (-x,), intervals summed:
# "comm-tid count" lines.
thread_sums() { # file, event
	awk -F, -v ev="$2" '
		/^#/ || NF < 5 { next }
		{ t = ($1 ~ /^ *[0-9]+\.[0-9]+$/) }
		$(4 + t) == ev { s[$(1 + t)] += $(2 + t) }
		END { for (k in s) print k, s[k] }' "$1" | sort
}

# stat-workload -g MODE N, held: its go is fd 3, its standard output fd 4
# (EOF there when it has exited).
start_held() { # mode, n
	rm -f "$tmp/go" "$tmp/out"
	mkfifo "$tmp/go" "$tmp/out"
	"$workload" -g "$1" "$2" <"$tmp/go" >"$tmp/out" &
	wpid=$!
	exec 3>"$tmp/go" 4<"$tmp/out"
	read -r _ <&4
}

# Is process PID asleep (blocked)?
# shellcheck disable=SC2317 # run through wait_for
sleeping() { # pid
	test "$(sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f1)" = S
}

# Send the go, and wait for the workload.
go() {
	printf x >&3
	exec 3>&- 4<&-
	wait $wpid
	wpid=
}

# The command beside the counters: until the workload has exited.
until_exit=(sh -c 'cat <&4 >/dev/null')

ncpus=$(getconf _NPROCESSORS_ONLN)

# ---- -a -- CMD: the whole machine for the command's duration ----
perf stat -a -- sleep 1 2>"$tmp/perf-a"
prc=$?
"$ds" stat -a -- sleep 1 2>"$tmp/a"
rc=$?
check "-a -- sleep 1: exit 0 (perf: $prc)" test "$rc$prc" = 00
for f in a perf-a; do
	check "$f: the header says system wide" \
		grep -q "^ Performance counter stats for 'system wide':$" "$tmp/$f"
	e=$(elapsed "$tmp/$f")
	clock=$(table_value "$tmp/$f" cpu-clock)
	check "$f: elapsed ${e}s, the command's 1 s" between "$e" 1.0 10
	cpus=$(awk -v c="$clock" -v e="$e" 'BEGIN { if (e > 0) printf "%.3f", c / 1000 / e }')
	check "$f: cpu-clock $clock msec is every CPU's time: $cpus CPUs of $ncpus" \
		between "$cpus" "$(awk -v n="$ncpus" 'BEGIN { print 0.75 * n }')" \
		"$(awk -v n="$ncpus" 'BEGIN { print 1.25 * n }')"
	check "$f: the context switches of the machine in 1 s are not 0" \
		between "$(table_value "$tmp/$f" context-switches)" 1 1e12
done
# task-clock too counts every CPU's time system-wide, as perf's.
perf stat -a -e task-clock -- sleep 0.5 2>"$tmp/perf-a-task"
"$ds" stat -a -e task-clock -- sleep 0.5 2>"$tmp/a-task"
for f in a-task perf-a-task; do
	e=$(elapsed "$tmp/$f")
	clock=$(table_value "$tmp/$f" task-clock)
	cpus=$(awk -v c="$clock" -v e="$e" 'BEGIN { if (e > 0) printf "%.3f", c / 1000 / e }')
	check "$f: -a -e task-clock -- sleep 0.5: $clock msec in ${e}s, $cpus CPUs of $ncpus" \
		between "$cpus" "$(awk -v n="$ncpus" 'BEGIN { print 0.75 * n }')" \
		"$(awk -v n="$ncpus" 'BEGIN { print 1.25 * n }')"
done
check "-a -- CMD: no user and sys times (as perf, they are the command's)" \
	test "$(grep -c -e 'seconds user' -e 'time elapsed' "$tmp/a" "$tmp/perf-a")" = \
		"$(printf '%s\n' "$tmp/a:1" "$tmp/perf-a:1")"

# The command runs while the machine counts, from before its exec.
perf stat -a -x, -e page-faults -o "$tmp/perf-a-pages" -- "$workload" pages 20000
"$ds" stat -a -x, -e page-faults -o "$tmp/a-pages" -- "$workload" pages 20000
ours=$(awk -F, '$3 == "page-faults" { print $1 }' "$tmp/a-pages")
theirs=$(awk -F, '$3 == "page-faults" { print $1 }' "$tmp/perf-a-pages")
check "-a -- CMD counts the command's 20000 page faults ($ours; perf $theirs)" \
	test "${ours:-0}" -ge 20000 -a "${theirs:-0}" -ge 20000

# (perf 6.1's own status with -p or -a and a command that exits at once
# is sometimes 0, sometimes the command's: not an oracle.)
"$ds" stat -a -e context-switches -- sh -c 'exit 3' 2>/dev/null
check "-a -- CMD: the command's exit status is ours (3)" test $? -eq 3
"$ds" stat -a -e context-switches -- "$tmp/no-such-command" 2>"$tmp/err"
check "-a -- a command that does not exist: 127, said" \
	test $? -eq 127 -a -n "$(grep no-such-command "$tmp/err")"

# ---- -p PID -- CMD: the process for the command's duration ----
start_held pages 20000
# Blocked on its go from here on (it has nothing else to wait for).
wait_for sleeping $wpid
perf stat -e page-faults -p $wpid -- sleep 0.3 2>"$tmp/perf-p-idle"
prc=$?
"$ds" stat -e page-faults -p $wpid -- sleep 0.3 2>"$tmp/p-idle"
rc=$?
check "-p PID -- sleep 0.3: exit 0 (perf: $prc)" test "$rc$prc" = 00
check "-p PID -- sleep: ends with the command, the process still runs" kill -0 $wpid
e=$(elapsed "$tmp/p-idle")
check "-p PID -- sleep 0.3: elapsed ${e}s" between "$e" 0.3 5
ours=$(table_value "$tmp/p-idle" page-faults)
theirs=$(table_value "$tmp/perf-p-idle" page-faults)
check "a process waiting all the while counts nothing ('$ours'; perf '$theirs')" \
	test "$ours" = "$theirs" -a "$ours" = "<not counted>"
for f in p-idle perf-p-idle; do
	check "$f: the header names the process" \
		grep -q "^ Performance counter stats for process id '$wpid':$" "$tmp/$f"
done
check "-p PID -- CMD: no user and sys times (as perf)" \
	test "$(grep -c -e 'seconds user' -e 'time elapsed' "$tmp/p-idle")" -eq 1

"$ds" stat -p $wpid -e page-faults -- sh -c 'exit 3' 2>/dev/null
check "-p PID -- CMD: the command's exit status is ours (3)" test $? -eq 3

# Its work, while the command waits for its end: the same count as perf's.
perf stat -I 100 -x, -e page-faults -p $wpid -o "$tmp/perf-p" -- "${until_exit[@]}" &
ppid=$!
"$ds" stat -v -x, -e page-faults -p $wpid -o "$tmp/p" -- "${until_exit[@]}" 2>"$tmp/p.err" &
p1=$!
wait_for has_line "$tmp/perf-p" page-faults $ppid
wait_for has_line "$tmp/p.err" counting $p1
go
wait $p1
rc=$?
wait $ppid
check "-p PID -- CMD: exit 0 when the command ends" test $rc -eq 0
ours=$(awk -F, '$3 == "page-faults" { print $1 }' "$tmp/p")
theirs=$(awk -F, '$4 == "page-faults" { s += $2 } END { print s + 0 }' "$tmp/perf-p")
check "-p PID -- CMD: the process's $ours page faults, perf $theirs: within 2 %" \
	within2 "$ours" "$theirs"
check "-p PID -- CMD: at least the workload's 20000" test "${ours:-0}" -ge 20000

# ---- -a --per-thread: a line per thread of the machine ----
start_held pipe 2000
tids=$(ls "/proc/$wpid/task" | sort -n | tr '\n' ' ')
# perf 6.1 gives up ("failed to parse CPUs map") when a process exits
# while it lists the machine's threads: it is started again until it
# counts (ours skips such a thread).
for _ in $(seq 50); do
	perf stat -a --per-thread -I 100 -x, -e context-switches -o "$tmp/perf-t" \
		-- "${until_exit[@]}" 2>"$tmp/perf-t.err" &
	ppid=$!
	wait_for has_line "$tmp/perf-t" context-switches $ppid
	grep -q context-switches "$tmp/perf-t" && break
	wait $ppid
done
"$ds" stat -v -a --per-thread -x, -e context-switches -o "$tmp/t" -- "${until_exit[@]}" \
	2>"$tmp/t.err" &
p1=$!
wait_for has_line "$tmp/t.err" counting $p1
go
wait $p1
rc=$?
wait $ppid
check "-a --per-thread -- CMD: exit 0" test $rc -eq 0
thread_sums "$tmp/t" context-switches >"$tmp/t.sums"
thread_sums "$tmp/perf-t" context-switches >"$tmp/perf-t.sums"
check "-a --per-thread: many threads of the machine ($(wc -l <"$tmp/t.sums"))" \
	test "$(wc -l <"$tmp/t.sums")" -ge 3
for tid in $tids; do
	n=$(awk -v t="stat-workload-$tid" '$1 == t { print $2 }' "$tmp/t.sums")
	p=$(awk -v t="stat-workload-$tid" '$1 == t { print $2 }' "$tmp/perf-t.sums")
	check "-a --per-thread: thread $tid: $n context switches, perf $p: within 2 %" within2 "$n" "$p"
	check "-a --per-thread: thread $tid: at least the 2000 round trips" test "${n:-0}" -ge 2000
done
check "-a --per-thread: no line of a thread that counted nothing (as perf)" \
	awk -F, '$4 == "context-switches" && $2 == 0 { exit 1 }' "$tmp/t"
awk -F, '$4 == "context-switches" { print $2 }' "$tmp/t" >"$tmp/t.order"
check "-a --per-thread: by decreasing count (as perf)" \
	test "$(wc -l <"$tmp/t.order")" -ge 3 -a -z "$(sort -n -r -c "$tmp/t.order" 2>&1)"

"$ds" stat -a --per-thread -e context-switches -d 0.3 2>"$tmp/t-table"
check "-a --per-thread -d: exit 0" test $? -eq 0
check "-a --per-thread: the table's lines are comm-tid, count, event" \
	grep -q -E '^ *[^ ].*-[0-9]+ +[0-9]+ +context-switches' "$tmp/t-table"
"$ds" stat -a -C 0 --per-thread -e cs -- true 2>"$tmp/err"
check "-a -C with --per-thread is refused (2), saying to leave out -C" \
	test $? -eq 2 -a -n "$(grep -- '-C' "$tmp/err")"

# ---- events printed as -e spelt them ----
list='cs,faults,cpu-clock:u,{migrations,minor-faults}:u,context-switches'
perf stat -x, -e "$list" -o "$tmp/perf-names" -- true
"$ds" stat -x, -e "$list" -o "$tmp/names" -- true
ours=$(awk -F, 'NF >= 7 { printf "%s ", $3 }' "$tmp/names")
theirs=$(awk -F, 'NF >= 7 { printf "%s ", $3 }' "$tmp/perf-names")
check "events as spelt ($ours), as perf ($theirs)" test "$ours" = "$theirs"
check "and as spelt: cs, faults, cpu-clock:u, a group member without its group's :u" \
	test "$ours" = "cs faults cpu-clock:u migrations minor-faults context-switches "
"$ds" stat -e cs -- true 2>"$tmp/names-table"
check "the table says cs too" grep -q -E '^ +[0-9]+ +cs ' "$tmp/names-table"

# ---- what the machine cannot count: <not supported>, exit 0 ----
perf stat -e cycles -- true 2>"$tmp/perf-cycles"
if grep -q "<not supported>.*cycles" "$tmp/perf-cycles"; then
	"$ds" stat -e cycles -- true 2>"$tmp/cycles"
	check "no PMU: -e cycles exits 0, as perf stat" test $? -eq 0
	check "and prints perf's '<not supported> cycles' line" \
		test "$(grep 'cycles' "$tmp/cycles")" = "$(grep 'cycles' "$tmp/perf-cycles")"
	"$ds" stat -e cycles,page-faults -- sh -c 'exit 3' 2>"$tmp/cycles3"
	check "no PMU: the command's status stays ours (3)" test $? -eq 3
	check "with the other events counted" \
		between "$(table_value "$tmp/cycles3" page-faults)" 1 1e12
	check "and cycles <not supported>" \
		test "$(table_value "$tmp/cycles3" cycles)" = "<not supported>"
	"$ds" stat -x, -e cycles -- true 2>"$tmp/cycles.csv"
	perf stat -x, -e cycles -- true 2>"$tmp/perf-cycles.csv"
	check "CSV: perf's line ($(cat "$tmp/cycles.csv"))" \
		test "$(grep cycles "$tmp/cycles.csv")" = "$(grep cycles "$tmp/perf-cycles.csv")"
else
	echo "ok - # SKIP this machine has a PMU: cycles are counted"
fi

# ---- an event that does not exist: an error, as perf's ----
list='task-clock,cs,nosuch'
perf stat -e "$list" -- true 2>"$tmp/perf-bad"
"$ds" stat -e "$list" -- touch "$tmp/ran" 2>"$tmp/bad"
check "an unknown event is a usage error (2)" test $? -eq 2
check "and nothing ran" test ! -e "$tmp/ran"
# The list, and a pointer under the event at fault, as perf's.
# shellcheck disable=SC2317 # run through check
pointer_under() { # file, word
	awk -v w="$2" 'NR == 1 { at = index($0, w) }
		NR == 2 { ok = at && index($0, "\\___") == at } END { exit !ok }' "$1"
}
check "perf's: 'event syntax error', the pointer under nosuch" pointer_under "$tmp/perf-bad" nosuch
check "ours says 'event syntax error: '$list''" \
	grep -q "event syntax error: '$list'" "$tmp/bad"
check "with the pointer under nosuch" pointer_under "$tmp/bad" nosuch
check "saying it is unknown and where events are listed" \
	grep -q "unknown event 'nosuch'.*perf list" "$tmp/bad"
"$ds" stat -e 'cs,{faults,cpu-clok}:u' -- true 2>"$tmp/bad2"
check "in a group: the pointer under cpu-clok, and what it may mean" \
	pointer_under "$tmp/bad2" cpu-clok
check "(did you mean cpu-clock?)" grep -q "did you mean 'cpu-clock'" "$tmp/bad2"

exit $fail
