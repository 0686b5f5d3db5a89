#!/bin/sh
# Threads as targets, on a plain C program with two named workers:
#   -p TID      a worker's id profiles its process, and says so: stacks
#               named and complete to the thread's start (the MMAP records
#               name the process, as the samples do), llvm-symbolizer
#               naming the same functions at the same addresses
#   -t TID      only that thread's samples; -t A,B both threads', no other
#   record -t   the same through a file
#   bad ids     a thread that does not exist, not a number, the old
#               --tid flag: a message saying what to give, exit 2
# usage: test-tid-target.sh DWARFSAMPLE TID-WORKLOAD
set -u
ds=$(realpath "$1")
workload=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
wpid=
trap 'rc=$?; [ -n "$wpid" ] && kill $wpid 2>/dev/null; leave_tmp $rc' EXIT

# samples FILE: one line per sample of perf-script text, "TID NAMED
# COMPLETE LEAF": whether no frame is [unknown], whether the outermost
# frame is the thread's start (clone3), and the innermost function.
samples() {
	awk '
	function out() {
		if (tid != "")
			print tid, named, last ~ /^(__)?clone3?$/, leaf
		tid = ""
	}
	/^[^\t]/ && NF {
		out()
		for (i = 2; i <= NF; i++)
			if ($i ~ /^\[[0-9]+\]$/)
				tid = $(i - 1)
		named = 1; leaf = ""
		next
	}
	/^\t/ {
		name = $2; sub(/\+0x[0-9a-f]+$/, "", name)
		if (name == "[unknown]")
			named = 0
		if (leaf == "")
			leaf = name
		last = name
	}
	END { out() }' "$1"
}

# tids FILE: the threads FILE's samples are of, sorted, one line.
tids() {
	samples "$1" | awk '{ print $1 }' | sort -un | tr '\n' ' ' | sed 's/ $//'
}

# complete FILE TID: "SAMPLES GOOD" of thread TID, GOOD those named whole
# and complete to the thread's start.
complete() {
	samples "$1" | awk -v t="$2" '$1 == t { n++; if ($2 && $3) good++ }
		END { print n + 0, good + 0 }'
}

# mostly N GOOD MIN: at least MIN samples, and 95 % of them good.
mostly() {
	[ "$1" -ge "$3" ] && [ $(($2 * 100)) -ge $(($1 * 95)) ]
}

"$workload" 60 >"$tmp/ids" &
wpid=$!
wait_for grep -qs '^b ' "$tmp/ids"
a=$(awk '$1 == "a" { print $2 }' "$tmp/ids")
b=$(awk '$1 == "b" { print $2 }' "$tmp/ids")

# Every run below samples the same two workers at once, for its own
# fixed time: each perf event counts its thread's CPU time alone, so
# the runs see what each would alone, on workers the others slow (the
# 50 samples asked for are a twentieth of what 2 s at 499 Hz give a busy
# worker).
"$ds" -p "$a" -d 2 -F 499 -f perf-script -o "$tmp/p.txt" 2>"$tmp/p.err" &
runs="$!"
"$ds" -t "$a" -d 2 -F 499 -f perf-script -o "$tmp/t.txt" 2>"$tmp/t.err" &
runs="$runs $!"
"$ds" --tid "$a,$b" -d 2 -F 499 -f perf-script -o "$tmp/ab.txt" 2>"$tmp/ab.err" &
runs="$runs $!"
"$ds" record -t "$b" -d 2 -F 499 -o "$tmp/b.data" 2>/dev/null &
runs="$runs $!"
"$ds" agent -t "$a" -d 3 --interval 1s --out-dir "$tmp/agent" 2>"$tmp/agent.err" &
runs="$runs $!"
"$ds" stat -t "$a,$b" --per-thread -e task-clock -d 1 2>"$tmp/stat.err" &
runs="$runs $!"
perf stat -t "$a,$b" --per-thread -e task-clock -- sleep 1 2>"$tmp/perfstat.err" &
runs="$runs $!"
"$ds" stat -p "$b" -e task-clock -d 1 2>"$tmp/statp.err" &
runs="$runs $!"
# shellcheck disable=SC2086 # one pid a word (not the workload's)
wait $runs

# --- -p with a worker's id: its process, said ---
check "-p TID: says it profiles the thread's process and how to profile the thread" \
	grep -q "^dwarfsample: PID $a is a thread of process $wpid: profiling the process; -t $a profiles that thread only$" \
	"$tmp/p.err" || cat "$tmp/p.err"
check "-p TID: both workers sampled, as the process's threads" \
	[ "$(tids "$tmp/p.txt")" = "$(printf '%s\n' "$a" "$b" | sort -n | tr '\n' ' ' | sed 's/ $//')" ] ||
	tids "$tmp/p.txt"
set -- $(complete "$tmp/p.txt" "$a")
check "-p TID: the worker's stacks named and complete to clone3 ($2 of $1)" mostly "$1" "$2" 50 ||
	head -30 "$tmp/p.txt"
check "-p TID: the worker's stacks are its own (a_outer)" grep -q "a_outer" "$tmp/p.txt"

# llvm-symbolizer on the addresses perf-script text shows in the
# workload: the same function at each (the outermost of those inlined
# there: the others are lines of their own in ours, "(inlined)").  Not
# at a PLT stub, where a sample lands in some runs (the workers call
# clock_gettime through it): no symbol covers it, and llvm-symbolizer
# gives the last one before it (_init), where ours and perf name the
# stub "clock_gettime@plt" (test-plt-perf.sh checks those names against
# objdump's and perf 7.3's).
awk -v w="($workload)" '/^\t/ && $NF == w { name = $2; sub(/\+0x[0-9a-f]+$/, "", name);
	if (name !~ /@plt$/) print "0x" $1, name }' "$tmp/p.txt" | sort -u >"$tmp/ours"
cut -d' ' -f1 "$tmp/ours" | llvm-symbolizer --obj="$workload" --functions=linkage 2>/dev/null |
	awk 'BEGIN { RS = ""; FS = "\n" } { print $(NF - 1) }' >"$tmp/theirs"
same_names() {
	[ "$(wc -l <"$tmp/ours")" -ge 4 ] && [ "$(cut -d' ' -f2 "$tmp/ours")" = "$(cat "$tmp/theirs")" ]
}
check "-p TID: llvm-symbolizer names the workload's frames as we do ($(wc -l <"$tmp/ours") addresses)" \
	same_names || paste "$tmp/ours" "$tmp/theirs" | head

# --- -t: those threads only ---
check "-t TID: only that thread's samples" [ "$(tids "$tmp/t.txt")" = "$a" ] ||
	{ tids "$tmp/t.txt"; cat "$tmp/t.err"; }
set -- $(complete "$tmp/t.txt" "$a")
check "-t TID: its stacks named and complete to clone3 ($2 of $1)" mostly "$1" "$2" 50
check "-t TID: no message about a process" eval '! grep -q "thread of process" "$tmp/t.err"'

check "--tid A,B: both threads' samples, no other" \
	[ "$(tids "$tmp/ab.txt")" = "$(printf '%s\n' "$a" "$b" | sort -n | tr '\n' ' ' | sed 's/ $//')" ] ||
	{ tids "$tmp/ab.txt"; cat "$tmp/ab.err"; }

"$ds" report -i "$tmp/b.data" -o "$tmp/b.txt" 2>/dev/null
check "record -t TID: the file holds that thread's samples only" [ "$(tids "$tmp/b.txt")" = "$b" ]
set -- $(complete "$tmp/b.txt" "$b")
check "record -t TID: named and complete to clone3 ($2 of $1)" mostly "$1" "$2" 50

# --- the agent: -t too ---
agent_ran() {
	grep -q "sampling the threads given" "$tmp/agent.err" && ls "$tmp/agent"/*.pb.gz >/dev/null
}
check "agent -t TID: samples the thread and writes its windows" agent_ran || cat "$tmp/agent.err"

# --- stat: -t counts those threads alone, -p with a thread's id its process ---
# rows FILE: the comm-tid of each --per-thread row, sorted, one line.
rows() {
	awk '$1 ~ /-[0-9]+$/ && $3 == "msec" { print $1 }' "$1" | sort | tr '\n' ' '
}
same_rows() {
	[ "$(rows "$tmp/stat.err")" = "worker-a-$a worker-b-$b " ] &&
		[ "$(rows "$tmp/perfstat.err")" = "$(rows "$tmp/stat.err")" ]
}
check "stat -t A,B --per-thread: a row per thread named, as perf stat's ($(rows "$tmp/stat.err"))" \
	same_rows || cat "$tmp/stat.err" "$tmp/perfstat.err"
check "stat -t: the header names the threads, as perf's" \
	grep -q "counter stats for thread id '$a,$b':" "$tmp/stat.err"
check "stat -p TID: counts the process, and says so" \
	grep -q "^dwarfsample: PID $b is a thread of process $wpid: counting the process; -t $b counts that thread only$" \
	"$tmp/statp.err"

# --- bad ids: a message saying what to give, exit 2, nothing sampled ---
# bad WHAT PATTERN ARGS...: dwarfsample ARGS exits 2, its message matching.
bad() {
	what=$1 pattern=$2
	shift 2
	"$ds" "$@" >/dev/null 2>"$tmp/bad.err"
	rc=$?
	check "$what: exit 2 ($rc) and a message" said "$rc" "$pattern" || cat "$tmp/bad.err"
}
said() {
	[ "$1" -eq 2 ] && grep -q "$2" "$tmp/bad.err"
}
# The highest thread id the kernel gives is below 2^22.
bad "-t, a thread that does not exist" "no thread with id 2147483000: list a process's threads" \
	-t 2147483000 -d 1 -o "$tmp/x.folded"
bad "-t, not a number" "invalid TID 'abc': expected 1 to" -t abc -d 1 -o "$tmp/x.folded"
bad "--tid as it was (a flag)" "a root per thread in folded and SVG output is --thread-roots" \
	--tid -f folded -o "$tmp/x.folded" -- true
bad "report --tid as it was" "a root per thread is --thread-roots" report --tid -i "$tmp/b.data"
exit $fail
