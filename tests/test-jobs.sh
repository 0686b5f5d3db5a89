#!/bin/sh
# Parallel workers (--jobs): the same profile as one worker, on the
# checked-in fixture in every format that can be compared (speedscope
# aside: its frame table is numbered by first use), pprof read back by
# go tool pprof; the live command with two workers on the two-thread
# demo; and what --jobs says to a wrong value.  Every capture the other
# shell tests make is checked the same way when they end, in the plain
# build (lib.sh, leave_tmp; a sanitized build replays each once by three
# workers).
# usage: test-jobs.sh DWARFSAMPLE FIXTURES DEMO CORO-WORKLOAD
set -u
ds=$(realpath "$1")
fx=$2/demo-static
demo=$(realpath "$3")
coro=$(realpath "$4")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

# pprof's samples as go tool pprof -traces prints them, one line each,
# sorted: the workers' shares number locations in their own order.
traces() { # profile.pb.gz
	go tool pprof -traces "$1" 2>/dev/null |
		awk '/^-+\+-+$/ { if (s != "") print s; s = ""; next }
		     /^(File|Build ID|Type|Duration|Time):/ { next }
		     { gsub(/^ +/, ""); s = s " | " $0 }
		     END { if (s != "") print s }' | sort
}

# --- the fixture, every format ---
for fmt in folded svg pprof; do
	"$ds" report --debug-dir "$fx" -f $fmt -i "$fx/perf.data" -o "$tmp/one.$fmt" 2>"$tmp/err"
	check "$fmt: one worker exits 0" test $? -eq 0 || cat "$tmp/err"
	for n in 1 2 4; do
		"$ds" report --debug-dir "$fx" --jobs $n -f $fmt -i "$fx/perf.data" \
			-o "$tmp/jobs.$fmt" 2>"$tmp/err"
		check "$fmt: --jobs $n exits 0" test $? -eq 0 || cat "$tmp/err"
		if [ $fmt = pprof ]; then
			command -v go >/dev/null 2>&1 || continue
			traces "$tmp/one.$fmt" >"$tmp/a"
			traces "$tmp/jobs.$fmt" >"$tmp/b"
			check "pprof: --jobs $n has one worker's samples, as go tool pprof reads them ($(wc -l <"$tmp/a") stacks)" \
				sh -c "test -s '$tmp/a' && cmp -s '$tmp/a' '$tmp/b'"
		else
			sort "$tmp/one.$fmt" >"$tmp/a"
			sort "$tmp/jobs.$fmt" >"$tmp/b"
			check "$fmt: --jobs $n writes one worker's profile, line for line after sorting" \
				cmp -s "$tmp/a" "$tmp/b"
		fi
	done
done
# Both of the demo's threads are in the fixture: with two workers each
# has its own, so the check above merged two shares, not one.
"$ds" report --debug-dir "$fx" --thread-roots -f folded -i "$fx/perf.data" -o "$tmp/tid.folded" 2>/dev/null
tids=$(sed 's/;.*//' "$tmp/tid.folded" | sort -u | wc -l)
check "the fixture's samples are of two threads ($tids)" test "$tids" -eq 2
# perf script's text is in time order: one worker writes it, the same.
"$ds" report --debug-dir "$fx" -i "$fx/perf.data" >"$tmp/a" 2>/dev/null
"$ds" report --debug-dir "$fx" --jobs 3 -v -i "$fx/perf.data" >"$tmp/b" 2>"$tmp/err"
check "perf-script text: --jobs 3 prints what one worker prints" cmp -s "$tmp/a" "$tmp/b"
check "and -v says it took one" grep -q "perf script's text is written in time order: one worker" \
	"$tmp/err"
check "and, having no pipeline, says nothing of its CPU" sh -c "! grep -q 'CPU: reading thread' '$tmp/err'"
"$ds" report --debug-dir "$fx" --jobs 2 -v -f folded -i "$fx/perf.data" -o /dev/null 2>"$tmp/err"
check "report --jobs 2 -v: the reading thread's and both workers' CPU" \
	grep -Eq '^dwarfsample: CPU: reading thread [0-9.]+ s, 2 workers [0-9.]+ s \(busiest [0-9.]+ s\)$' "$tmp/err"
# The live command's stack cuts (below) are not the replay's: it says
# nothing of them.
check "report --jobs 2 -v: no stack cut, the replay copies them whole" \
	sh -c "! grep -q 'stacks copied up to' '$tmp/err'"

# The workers share each file's address index (src/symbols/ixshare.c): on
# the index's path, the fixture's one file with DWARF is built once for
# both (the other worker, when it needs it, takes that copy), or with the
# index cache stored once and then mapped once; each time the profile is
# one worker's.
made() { # stderr of -v: "BUILT MAPPED"
	sed -n 's/^dwarfsample: address indexes made once for all workers: \([0-9]*\) built, \([0-9]*\) mapped from the cache; taken as made \([0-9]*\) time.*/\1 \2/p' "$1"
}
DS_SYMINDEX=1 "$ds" report --debug-dir "$fx" -f folded -i "$fx/perf.data" --no-index-cache \
	-o "$tmp/ix.folded" 2>/dev/null
sort "$tmp/ix.folded" >"$tmp/a"
for way in "--no-index-cache:1 0" "--index-cache=$tmp/ixc:1 0" "--index-cache=$tmp/ixc:0 1"; do
	DS_SYMINDEX=1 "$ds" report --debug-dir "$fx" --jobs 2 -v -f folded -i "$fx/perf.data" \
		"${way%%:*}" -o "$tmp/ix.folded" 2>"$tmp/err"
	sort "$tmp/ix.folded" >"$tmp/b"
	check "index's path, ${way%%:*}: --jobs 2 writes one worker's profile" \
		sh -c "test -s '$tmp/a' && cmp -s '$tmp/a' '$tmp/b'"
	check "and made the index once for both workers (built, mapped: $(made "$tmp/err"))" \
		test "$(made "$tmp/err")" = "${way#*:}"
done

cuts() { # stderr of -v
	sed -n "s/^dwarfsample: stacks copied up to where their thread's stacks end: \([0-9]*\) of \([0-9]*\) samples, [0-9.]* MB not copied; \([0-9]*\) cut too short.*/\1 \2 \3/p" "$1"
}

# --- the live command, two workers ---
"$ds" --jobs 2 -v -F 499 -f folded --thread-roots -o "$tmp/live.folded" -- "$demo" 2 3 \
	>/dev/null 2>"$tmp/live.err"
rc=$?
skip_if_refused $rc "$tmp/live.err"
check "live --jobs 2 exits 0" test $rc -eq 0 || cat "$tmp/live.err"
check "it says it unwinds on two workers" grep -q "unwinding on 2 workers" "$tmp/live.err"
said=$(sed -n 's/^dwarfsample: \([0-9]*\) samples in .*/\1/p' "$tmp/live.err")
counted=$(awk '{ n += $NF } END { print n + 0 }' "$tmp/live.folded")
check "the profile counts every sample the summary counts ($counted of $said)" \
	test "${said:-0}" -gt 0 -a "$counted" -eq "${said:-0}"
threads=$(sed 's/;.*//' "$tmp/live.folded" | sort -u | grep -c 'dwarfsample-dem')
check "both threads' stacks, merged from the workers ($threads threads)" test "$threads" -ge 2
check "the demo's recursion is there" grep -q ';walk_tree;walk_tree' "$tmp/live.folded"
# -v says where the CPU went: the capture thread's and the workers' (both
# counted: the busiest one's is less than theirs together).  A thread's
# samples go to worker tid % 2: the demo's three threads are unwound by
# both workers only when their tids are not all of one parity, which
# depends on what else made tasks in between; when they are, the other
# worker reads only the mappings, and its CPU may round to nothing.
cpu=$(sed -n 's/^dwarfsample: CPU: capture thread \([0-9.]*\) s, 2 workers \([0-9.]*\) s (busiest \([0-9.]*\) s)$/\1 \2 \3/p' \
	"$tmp/live.err")
parities=$(sed 's/;.*//; s/.*\///' "$tmp/live.folded" | awk '{ print $1 % 2 }' | sort -u | wc -l)
if [ "$parities" -eq 2 ]; then
	check "-v: the capture thread's and the workers' CPU, both workers' counted ($cpu)" \
		awk -v c="$cpu" 'BEGIN { split(c, v, " "); exit !(v[1] > 0 && v[3] > 0 && v[3] < v[2]) }'
else
	check "-v: the capture thread's and the workers' CPU, one worker unwinding every thread ($cpu)" \
		awk -v c="$cpu" 'BEGIN { split(c, v, " "); exit !(v[1] > 0 && v[3] > 0 && v[3] <= v[2]) }'
fi
# Live, the workers learn where the threads' stacks end within a drain
# or two of their first samples: the rest are cut.
cut=$(cuts "$tmp/live.err")
check "live -v: stacks copied only up to their thread's first frame, none cut too short ($cut)" \
	awk -v c="$cut" 'BEGIN { split(c, v, " "); exit !(v[2] > 0 && v[1] > 0 && v[1] <= v[2] && v[3] == 0) }'

# A thread whose stacks end first inside its own frame (a coroutine on a
# stack carved from main's), then at _start above it: learned from the
# first half, the cut is too short for the second.  How many samples that
# costs depends on when the workers learn what (none when a sample from
# before the coroutine taught the higher end first), and a stack cut too
# short may still be completed by joining; what must hold is that no
# stack the cut left short goes uncounted, and that the rest of the
# second half is whole.
"$ds" -v -F 999 -f folded -o "$tmp/coro.folded" -- "$coro" 1 >/dev/null 2>"$tmp/coro.err"
check "coroutine workload: exits 0" test $? -eq 0 || cat "$tmp/coro.err"
short=$(cuts "$tmp/coro.err" | cut -d' ' -f3)
# Stacks that end neither at the coroutine's first frame (a sample in
# coro itself is one too) nor at _start (a sample inside swapcontext,
# its stack pointer already switched, may end elsewhere by itself: two
# are allowed for).  Not counted either, as no cut made them: a sample
# at _start's first instruction (_start alone), and one taken inside
# exec before the new image ran, at an address of the profiler's own
# image in the forked child, which no record maps (one unnamed frame).
truncated=$(awk '!/^coro-workload;coro[; ]/ && !/;_start;/ &&
	!/^coro-workload;(\[truncated\];)?\[unknown\] [0-9]+$/ && !/^coro-workload;_start [0-9]+$/ {
		n += $NF } END { print n + 0 }' "$tmp/coro.folded")
whole=$(awk '/;_start;.*on_own_stack/ { n += $NF } END { print n + 0 }' "$tmp/coro.folded")
check "coroutine workload: every stack cut too short is counted ($truncated truncated, ${short:-?} counted)" \
	test -n "$short" -a "$truncated" -le "$((${short:-0} + 2))"
check "coroutine workload: most of the second half is whole ($whole whole, $truncated truncated)" \
	test "$whole" -gt "$truncated"
check "coroutine workload: the coroutine's stacks end at it" \
	grep -q '^coro-workload;coro;coro_spin ' "$tmp/coro.folded"

# --- wrong values ---
for bad in 0 65 x; do
	"$ds" report --jobs $bad -i "$fx/perf.data" >/dev/null 2>"$tmp/err"
	rc=$?
	check "--jobs $bad exits 2 saying what it takes" \
		sh -c "test $rc -eq 2 && grep -q 'invalid --jobs' '$tmp/err'"
done
exit $fail
