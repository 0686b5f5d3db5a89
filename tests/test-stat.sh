#!/bin/bash
# `dwarfsample stat` against perf stat (perf 6.1) and against what
# stat-workload is known to do.
#
# The counts are compared on the very same work: stat-workload -g sets
# itself up, says "ready" and waits for a byte; perf stat and several
# dwarfsample stats attach to it (-p), and only once each has said that
# it counts (perf's first -I line, dwarfsample's -v "counting") is the
# byte sent.  What each then counts is the work and its exit, identical
# for all of them: dwarfsample's total must agree with perf's within 2 %
# (and with the workload's N), its -I intervals must sum to its total,
# its CSV, JSON and table must carry the same numbers.  Commands are
# compared run against run (their own startup differs by a few faults).
# usage: test-stat.sh DWARFSAMPLE STAT_WORKLOAD
set -u
ds=$1
workload=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_perf
tmp=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; kill $wpid 2>/dev/null; rm -rf "$tmp"' EXIT
wpid=

# Counting needs perf_event_open on our own children at least.
"$ds" stat -e page-faults -- true 2>"$tmp/err"
rc=$?
skip_if_refused $rc "$tmp/err"

# ---- helpers ----

# The count of EVENT in a CSV file (-x,), totals or intervals summed: the
# first field, or the second when the first is a time (-I).
csv_sum() { # file, event
	awk -F, -v ev="$2" '
		$0 ~ /^#/ || NF < 3 { next }
		{ t = ($1 ~ /^ *[0-9]+\.[0-9]+$/ && NF >= 8) }
		$(3 + t) == ev { s += $(1 + t) }
		END { printf "%d\n", s }' "$1"
}

# Start stat-workload -g MODE N reading its go from a FIFO on fd 3.
start_workload() { # mode, n
	rm -f "$tmp/go" "$tmp/ready"
	mkfifo "$tmp/go"
	"$workload" -g "$1" "$2" <"$tmp/go" >"$tmp/ready" &
	wpid=$!
	exec 3>"$tmp/go"
	wait_for grep -q ready "$tmp/ready"
}

# Let it run, and wait for it.
go() {
	printf x >&3
	exec 3>&-
	wait $wpid
	wpid=
}

# ---- the same work, counted by perf and by dwarfsample's every output ----

# compare EVENT MODE N MIN: count MODE N with perf (-I 100, summed) and
# dwarfsample's totals in CSV, JSON and the table, and its -I intervals.
compare() { # event, mode, n, least expected
	ev=$1
	d="$tmp/$2"
	mkdir -p "$d"
	start_workload "$2" "$3"
	perf stat -I 100 -x, -e "$ev" -p $wpid -o "$d/perf" 2>"$d/perf.err" &
	ppid=$!
	"$ds" stat -v -x, -e "$ev" -p $wpid -o "$d/csv" 2>"$d/csv.err" &
	p1=$!
	"$ds" stat -v -j -e "$ev" -p $wpid -o "$d/json" 2>"$d/json.err" &
	p2=$!
	"$ds" stat -v -e "$ev" -p $wpid -o "$d/table" 2>"$d/table.err" &
	p3=$!
	"$ds" stat -I 100 -x, -e "$ev" -p $wpid -o "$d/intervals" 2>"$d/intervals.err" &
	p4=$!
	wait_for has_line "$d/perf" "$ev" $ppid
	wait_for has_line "$d/csv.err" "counting" $p1
	wait_for has_line "$d/json.err" "counting" $p2
	wait_for has_line "$d/table.err" "counting" $p3
	wait_for has_line "$d/intervals" "$ev" $p4
	go
	wait $p1
	r1=$?
	wait $p2
	r2=$?
	wait $p3
	r3=$?
	wait $p4
	r4=$?
	wait $ppid
	check "$ev: every dwarfsample stat -p ended with its process, status 0" \
		test "$r1$r2$r3$r4" = 0000
	ours=$(csv_sum "$d/csv" "$ev")
	theirs=$(csv_sum "$d/perf" "$ev")
	check "$ev: $ours counted, perf stat $theirs: within 2 %" within2 "$ours" "$theirs"
	check "$ev: at least the $4 the workload causes ($ours)" test "$ours" -ge "$4"
	sum=$(csv_sum "$d/intervals" "$ev")
	check "$ev: the -I intervals sum to the total ($sum, $ours)" test "$sum" = "$ours"
	n=$(grep -c ",$ev," "$d/intervals")
	check "$ev: at least two intervals ($n)" test "$n" -ge 2
	check "$ev: CSV has perf's 7 fields" \
		awk -F, -v ev="$ev" '$3 == ev { n++; if (NF != 7) exit 1 } END { exit n != 1 }' "$d/csv"
	# (-o's first line, "# started on", is perf's too.)
	grep '^{' "$d/json" >"$d/json.lines"
	check "$ev: the JSON lines parse" python3 -m json.tool --json-lines "$d/json.lines" /dev/null
	json=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    o = json.loads(line)
    if o["event"] == sys.argv[2]:
        print(int(float(o["counter-value"])))' "$d/json.lines" "$ev")
	check "$ev: JSON says the same count ($json)" test "$json" = "$ours"
	table=$(awk -v ev="$ev" '$2 == ev { print $1 }' "$d/table")
	check "$ev: the table says the same count ($table)" test "$table" = "$ours"
	check "$ev: the table's header names the process" \
		grep -q "Performance counter stats for process id '[0-9]*':" "$d/table"
}

compare page-faults pages 20000 20000
compare context-switches pipe 5000 10000
if [ "$(nproc)" -ge 2 ]; then
	compare cpu-migrations migrate 2000 2000
else
	echo "ok - # SKIP cpu-migrations: one CPU, nothing to migrate between"
fi

# ---- a group: read together, so the same times ----
d="$tmp/group"
mkdir -p "$d"
start_workload pages 1000
"$ds" stat -v -x, -e '{page-faults,context-switches}' -p $wpid -o "$d/csv" 2>"$d/err" &
p1=$!
wait_for has_line "$d/err" counting $p1
go
wait $p1
check "a group counts both events" test "$(grep -c -e ',page-faults,' -e ',context-switches,' "$d/csv")" -eq 2
check "read together: the same time enabled and running" \
	test "$(awk -F, 'NF == 7 { print $4 }' "$d/csv" | sort -u | wc -l)" -eq 1

# ---- --per-thread: each thread's line, as perf's ----
d="$tmp/threads"
mkdir -p "$d"
start_workload pipe 2000
pid=$wpid
tids=$(ls "/proc/$wpid/task" | sort -n | tr '\n' ' ')
perf stat --per-thread -I 100 -x, -e context-switches -p $wpid -o "$d/perf" 2>/dev/null &
ppid=$!
"$ds" stat -v --per-thread -x, -e context-switches -p $wpid -o "$d/csv" 2>"$d/err" &
p1=$!
"$ds" stat -v --per-thread -e context-switches -p $wpid -o "$d/table" 2>"$d/err2" &
p2=$!
wait_for has_line "$d/perf" context-switches $ppid
wait_for has_line "$d/err" counting $p1
wait_for has_line "$d/err2" counting $p2
go
wait $p1
wait $p2
wait $ppid
ours=$(awk -F, '$4 == "context-switches" { sub(/.*-/, "", $1); print $1 }' "$d/csv" | sort -n | tr '\n' ' ')
check "--per-thread: a line per thread of the process ($ours; /proc: $tids)" test "$ours" = "$tids"
check "named comm-tid" grep -q "^stat-workload-$pid," "$d/csv"
for tid in $tids; do
	n=$(awk -F, -v t="stat-workload-$tid" '$1 == t { print $2 }' "$d/csv")
	p=$(awk -F, -v t="stat-workload-$tid" '$2 == t { s += $3 } END { print s + 0 }' "$d/perf")
	check "thread $tid: $n context switches, perf $p: within 2 %" within2 "$n" "$p"
	check "thread $tid: at least the 2000 round trips" test "$n" -ge 2000
	check "thread $tid: its table line" \
		grep -q "^ *stat-workload-$tid  *$n  *context-switches" "$d/table"
done

# ---- commands: counted from exec to exit, their status passed on ----
perf stat -x, -e page-faults -o "$tmp/perf-cmd" -- "$workload" pages 20000
"$ds" stat -x, -e page-faults -o "$tmp/cmd" -- "$workload" pages 20000
check "a command exits 0 when it does" test $? -eq 0
ours=$(csv_sum "$tmp/cmd" page-faults)
theirs=$(csv_sum "$tmp/perf-cmd" page-faults)
check "a command's page faults ($ours) agree with perf stat's ($theirs) within 2 %" \
	within2 "$ours" "$theirs"

"$ds" stat -- "$workload" pages 100 >"$tmp/out" 2>"$tmp/table"
perf stat -- "$workload" pages 100 2>"$tmp/perf-table" >/dev/null
check "the default set: the software events" \
	test "$(grep -c -E ' (task-clock|context-switches|cpu-migrations|page-faults) ' "$tmp/table")" -eq 4
if grep -q "<not supported>.*cycles" "$tmp/perf-table"; then
	check "no PMU: the default set leaves the hardware events out" \
		test "$(grep -c -E ' (cycles|instructions|branches|branch-misses) ' "$tmp/table")" -eq 0
else
	check "a PMU: the default set counts cycles" grep -q "[0-9]  *cycles" "$tmp/table"
fi
# Perf's layout: the same line widths and the comment column at the same
# place, for each event both print.
for ev in task-clock context-switches page-faults; do
	ours=$(awk -v ev="$ev" '$0 ~ " " ev " " { print length($0) ":" index($0, "#") }' "$tmp/table")
	theirs=$(awk -v ev="$ev" '$0 ~ " " ev " " { print length($0) ":" index($0, "#") }' "$tmp/perf-table")
	check "$ev: perf's line layout (width:comment $ours, perf's $theirs)" test "$ours" = "$theirs"
done
check "the header names the command" \
	grep -q "^ Performance counter stats for '$workload pages 100':$" "$tmp/table"
check "then the elapsed, user and sys seconds" \
	test "$(grep -c -E '^ +[0-9]+\.[0-9]{9} seconds (time elapsed|user|sys)$' "$tmp/table")" -eq 3
check "on standard error, as perf's" test ! -s "$tmp/out"

"$ds" stat -e page-faults -- sh -c 'exit 3' 2>/dev/null
check "the command's exit status is dwarfsample's (3)" test $? -eq 3
"$ds" stat -e page-faults -- "$tmp/no-such-command" 2>"$tmp/err"
check "a command that does not exist: 127" test $? -eq 127
check "and says so" grep -q "no-such-command" "$tmp/err"

# ---- refused before anything runs ----
"$ds" stat -e page-faults,no-such-event -- touch "$tmp/ran" 2>"$tmp/err"
check "an unknown event is a usage error (2)" test $? -eq 2
check "which names it" grep -q "no-such-event" "$tmp/err"
check "and nothing ran" test ! -e "$tmp/ran"
# (An event the machine cannot count prints "<not supported>", as perf's:
# test-stat-targets.sh.)
"$ds" stat -x, -j -- true 2>"$tmp/err"
check "-x and -j together are refused" test $? -eq 2
"$ds" stat --per-thread -- true 2>"$tmp/err"
check "--per-thread without -p is refused" test $? -eq 2
"$ds" stat -F 99 -p 1 2>"$tmp/err"
check "sampling options are not stat's" test $? -eq 2

# ---- Ctrl-C and -d end a -p count, and print it ----
start_workload pages 10
"$ds" stat -v -e page-faults -p $wpid -o "$tmp/int" 2>"$tmp/err" &
p1=$!
wait_for has_line "$tmp/err" counting $p1
kill -INT $p1
wait $p1
check "Ctrl-C ends a -p count with status 0" test $? -eq 0
check "and prints it" grep -q "page-faults" "$tmp/int"
"$ds" stat -e page-faults -p $wpid -d 0.2 -o "$tmp/dur" 2>"$tmp/err"
check "-d ends a -p count with status 0" test $? -eq 0
check "and prints it" grep -q "seconds time elapsed" "$tmp/dur"
go

exit $fail
