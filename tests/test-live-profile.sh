#!/bin/sh
# The live command end to end: `dwarfsample [options] TARGET` on the
# bundled demo (-O2 -fomit-frame-pointer, two threads) and on the test
# workload, every format read by what reads it (go tool pprof, xmllint,
# node's JSON parser), targets that fork and exec or exit mid-run,
# signals, the status line, and each error reported before sampling.
# usage: test-live-profile.sh DWARFSAMPLE DEMO WORKLOAD CHECK-PPROF
set -u
ds=$(realpath "$1")
demo=$(realpath "$2")
workload=$(realpath "$3")
check_pprof=$(realpath "$4")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
wpid=
trap 'rc=$?; kill $wpid 2>/dev/null; leave_tmp $rc' EXIT

# compare_items, the smallest function checked for here, is 0.6 % of the
# demo's samples under ASan (1.1 % without): 4000 samples hold about 20
# of it, 600 often none.
"$ds" -F 999 -o "$tmp/demo.folded" -- "$demo" 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc -ne 0 ] && grep -q "perf_event_paranoid" "$tmp/err"; then
	echo "SKIP: the kernel refuses perf_event_open:"; cat "$tmp/err"; exit 77
fi
check "profiling a command exits 0" test $rc -eq 0
check "the summary counts samples and losses" \
	grep -Eq "^dwarfsample: [0-9]+ samples in [0-9.]+ s, [0-9]+ lost \([0-9.]+%\), [0-9]+ distinct stacks" "$tmp/err"
check "says why stacks ended" grep -q "^dwarfsample: stacks ended: outermost" "$tmp/err"
check "and where the profile went, and how to open it" \
	grep -q "wrote $tmp/demo.folded (folded); open it with flamegraph.pl" "$tmp/err"
check "off a terminal, no status line" sh -c "! grep -q \"$(printf '\r')\" '$tmp/err'"
# The demo's call paths, root first, under its process name.
f=$tmp/demo.folded
check "folded lines are 'frames count'" sh -c "! grep -Evq '^dwarfsample-dem;.* [0-9]+$' '$f'"
check "folded: main -> worker -> sieve_primes" grep -Eq ';main;worker;sieve_primes[^;]* [0-9]+$' "$f"
check "folded: worker -> sort_batch -> qsort -> compare_items" \
	grep -Eq ';worker;sort_batch;.*qsort.*;compare_items [0-9]+$' "$f"
check "folded: walk_tree recursing down to leaf_work" \
	grep -Eq ';worker;walk_tree;walk_tree;.*leaf_work [0-9]+$' "$f"
check "folded: the second thread starts in the thread library" \
	grep -Eq ';start_thread;.*worker;' "$f"
n=$(awk '{ s += $NF } END { print s + 0 }' "$f")
check "and the counts add up to the samples ($n)" \
	grep -q "^dwarfsample: $n samples in" "$tmp/err"

# Every format, by extension.
for ext in pb.gz speedscope.json svg perf.txt; do
	"$ds" -F 299 -o "$tmp/demo.$ext" -- "$demo" 1 >/dev/null 2>"$tmp/err.$ext"
	check "-o demo.$ext exits 0" test $? -eq 0
done
# Not compare_items: under 1% of samples land in it (its strcmp is a tail
# call, so it is never a caller), too few in 1 s at 299 Hz to be sure of
# one; the folded profile above, with over six times the samples, does.
check "pprof: go tool pprof reads it and lists the demo's functions" \
	"$check_pprof" "$tmp/demo.pb.gz" main worker sort_batch leaf_work
check "svg: well-formed XML" xmllint --noout "$tmp/demo.svg"
check "svg: with the demo's frames" grep -q "<title>worker (" "$tmp/demo.svg"
check "svg: and its script" grep -q "<script" "$tmp/demo.svg"

# bench/vs-perf.sh's start-up hook: when the first sample with every user
# frame named was named, on CLOCK_MONOTONIC, inside the run.
mono() { /usr/bin/python3 -c 'import time; print(time.clock_gettime_ns(time.CLOCK_MONOTONIC))'; }
t0=$(mono)
DWARFSAMPLE_BENCH_FIRST_NAMED=1 "$ds" -F 299 -o "$tmp/first.folded" -- "$demo" 1 \
	>/dev/null 2>"$tmp/err.first"
t1=$(mono)
first=$(sed -n 's/^dwarfsample: DWARFSAMPLE_BENCH_FIRST_NAMED: first named sample at \([0-9]*\) ns (CLOCK_MONOTONIC), after [0-9]* ns of the process.s CPU$/\1/p' \
	"$tmp/err.first")
check "DWARFSAMPLE_BENCH_FIRST_NAMED: says when the first sample was named" test -n "$first"
check "DWARFSAMPLE_BENCH_FIRST_NAMED: a time within the run ($t0 < ${first:-0} < $t1)" \
	test "${first:-0}" -gt "$t0" -a "${first:-0}" -lt "$t1"
check "without it, no such line" sh -c "! grep -q BENCH_FIRST_NAMED '$tmp/err'"
cat >"$tmp/ss.js" <<'EOF'
const d = JSON.parse(require('fs').readFileSync(process.argv[2], 'utf8'));
const ok = d.$schema === 'https://www.speedscope.app/file-format-schema.json' &&
	d.profiles.length >= 2 && d.shared.frames.every(f => typeof f.name === 'string') &&
	d.profiles.every(p => p.type === 'sampled' && p.unit === 'nanoseconds' &&
		p.samples.length === p.weights.length && p.samples.length > 0 &&
		p.samples.every(s => s.every(i => i >= 0 && i < d.shared.frames.length)) &&
		p.endValue === p.weights.reduce((a, b) => a + b, 0)) &&
	new Set(d.profiles.map(p => p.name)).size === d.profiles.length &&
	d.shared.frames.some(f => f.name === 'sort_batch');
process.exit(ok ? 0 : 1);
EOF
if command -v node >/dev/null; then
	check "speedscope: valid JSON, a sampled profile per thread" \
		node "$tmp/ss.js" "$tmp/demo.speedscope.json"
else
	echo "# node is absent: the speedscope file's structure is not checked"
fi
check "perf-script: perf script's layout" \
	grep -Eq '^dwarfsample-dem +[0-9]+ +\[[0-9]+\] +[0-9.]+: +[0-9]+ cpu-clock: *$' "$tmp/demo.perf.txt"
check "perf-script: named frames" grep -Eq '^	 *[0-9a-f]+ worker\+0x[0-9a-f]+ \(.*dwarfsample-demo\)$' \
	"$tmp/demo.perf.txt"
check "-f overrides the extension" sh -c "'$ds' -F 99 -f folded -o '$tmp/x.svg' -- '$demo' 0.3 >/dev/null 2>&1 && ! grep -q '<svg' '$tmp/x.svg'"

# pprof's mappings are the target's own: for each file, the range and
# file offset /proc/PID/maps gives its executable mapping, and the
# build-id readelf reads from it -- live, and through record and report.
# want_mapping MAPS FILE: that mapping as go tool pprof -raw prints one.
want_mapping() {
	id=$(readelf -n "$2" | awk '/Build ID:/ { print $3 }')
	awk -v f="$2" -v id="$id" '
		function hex(s) { sub(/^0+/, "", s); return "0x" (s == "" ? "0" : s) }
		$6 == f && $2 ~ /x/ {
			split($1, r, "-")
			printf "%s/%s/%s %s %s\n", hex(r[1]), hex(r[2]), hex($3), f, id
			exit
		}' "$1"
}
if command -v go >/dev/null && command -v readelf >/dev/null; then
	"$demo" 8 >/dev/null &
	wpid=$!
	# Until the forked shell is the demo (or the demo died).
	while kill -0 $wpid 2>/dev/null && ! grep -qF "$demo" "/proc/$wpid/maps"; do
		sleep 0.05
	done
	# Each run ends after a second of the demo's CPU time (a couple of
	# hundred samples, every one with libc's frames under the demo's),
	# however busy the machine is.
	for verb in "" record; do
		# shellcheck disable=SC2086 # no verb is no word
		"$ds" $verb -F 499 -p $wpid -o "$tmp/maps.${verb:-pb.gz}" 2>"$tmp/err" &
		dpid=$!
		wait_for has_perf_events $dpid
		wait_cpu $wpid 100
		kill -INT $dpid
		wait $dpid
	done
	mv "$tmp/maps.record" "$tmp/maps.data"
	# Long after the dynamic loader mapped what it maps.
	cp "/proc/$wpid/maps" "$tmp/maps"
	kill $wpid
	wait $wpid 2>/dev/null
	wpid=
	"$ds" report -i "$tmp/maps.data" -o "$tmp/report.pb.gz" 2>"$tmp/err"
	libc=$(awk '$6 ~ /\/libc\.so/ { print $6; exit }' "$tmp/maps")
	for run in live:maps report:report; do
		HOME=$tmp go tool pprof -symbolize=none -raw "$tmp/${run#*:}.pb.gz" \
			>"$tmp/raw" 2>"$tmp/raw.err"
		for file in "$demo" "$libc"; do
			want=$(want_mapping "$tmp/maps" "$file")
			check "pprof (${run%%:*}): ${file##*/} mapped as the process maps it, with its build-id: $want" \
				grep -qF " $want " "$tmp/raw"
		done
	done
else
	echo "# go or readelf is absent: pprof's mappings are not checked"
fi

# A reader of standard output that goes away (a pager quit) stops the
# run with a message, rather than killing it silently.  The demo would
# run for ten minutes: a run the closed pipe does not end outlasts the
# test's timeout.
"$ds" -F 499 -f perf-script -o - -- "$demo" 600 2>"$tmp/err" | head -n 1 >/dev/null
check "a closed pipe ends the run, and says so" \
	grep -q "writing standard output failed: Broken pipe" "$tmp/err"
check "once, and not as an I/O error" \
	test "$(grep -c "Broken pipe\|Input/output error\|processing samples failed" "$tmp/err")" -eq 1

# Threads apart with --thread-roots; marks with --annotate.
"$ds" -F 299 --thread-roots --annotate -k -o "$tmp/tid.folded" -- "$demo" 1 >/dev/null 2>&1
check "--thread-roots: a root per thread" \
	test "$(cut -d';' -f1 "$tmp/tid.folded" | sort -u | grep -c '^dwarfsample-dem-[0-9]*/[0-9]*$')" -ge 2

# A command that forks and execs: its children are profiled under their
# own name.
"$ds" -F 499 -o "$tmp/fork.folded" -- sh -c "'$workload' spin 0.4; '$workload' spin 0.4" \
	>/dev/null 2>"$tmp/err"
check "a forking command is profiled to its end" test $? -eq 0
check "its exec'd children under their name" grep -Eq '^workload;.*;main;spin;spin_inner [0-9]+$' "$tmp/fork.folded"

# Children forked on one CPU and sampled on the other: each sample is
# unwound after the fork that made its process (records are ordered
# across CPUs and drains), so none is of an unknown process.
"$ds" -F 4000 -o "$tmp/forks.folded" -- "$workload" forks 4 >/dev/null 2>"$tmp/err"
check "a command forking on two CPUs is profiled" \
	grep -Eq '^workload;.*;spin;spin_inner [0-9]+$' "$tmp/forks.folded"
check "no sample is met before its process's fork" sh -c "! grep -q '^\[unknown\]' '$tmp/forks.folded'"

# The live command says nothing when sampling starts: a target is made
# to work only once the profiler has opened its events, and for a second
# of its own CPU time, however busy the machine is.

# A target that exits mid-run ends the run (one that did not would
# outlast the test's timeout); the profile is written.
mkfifo "$tmp/cmds"
"$workload" serve <"$tmp/cmds" >/dev/null &
wpid=$!
exec 3>"$tmp/cmds"
wait_for runs $wpid workload
"$ds" -F 499 -p $wpid -o "$tmp/exit.folded" 2>"$tmp/err" &
dpid=$!
wait_for has_perf_events $dpid
# Spin a second, then quit.
printf 'cq' >&3
exec 3>&-
wait $dpid
rc=$?
check "a target that exits ends the run (rc $rc)" test $rc -eq 0
check "and its profile is written" grep -Eq '^workload;.*;spin;spin_inner [0-9]+$' "$tmp/exit.folded"
check "the summary names the target that ended the run" \
	grep -q "^dwarfsample: PID $wpid (workload) ended during the run: it exited or was killed; sampling stopped with the last target" "$tmp/err"
wait $wpid 2>/dev/null

# A launched command killed mid-run: named, with the signal, and the
# profile of what was sampled is written.
rm -f "$tmp/cmdpid"
"$ds" -F 499 -o "$tmp/killed.folded" -- sh -c 'echo $$ >"$1"; exec "$2" spin 60' sh \
	"$tmp/cmdpid" "$workload" 2>"$tmp/err" &
dpid=$!
wait_for test -s "$tmp/cmdpid"
cpid=$(cat "$tmp/cmdpid")
wait_for runs "$cpid" workload
wait_cpu "$cpid" 50
kill -KILL "$cpid"
wait $dpid
rc=$?
check "a command killed mid-run: its status passed on, 128 + 9 (rc $rc)" test $rc -eq 137
check "the summary names it and the signal" \
	grep -q "^dwarfsample: the command (sh, PID $cpid) was killed by signal 9 (Killed) .* into the run" "$tmp/err"
check "and the profile of what was sampled is written" \
	grep -Eq '^workload;.*;spin;spin_inner [0-9]+$' "$tmp/killed.folded"

# Signals stop, flush and write.
for sig in INT TERM; do
	"$workload" spin 60 &
	wpid=$!
	wait_for runs $wpid workload
	"$ds" -F 499 -p $wpid -o "$tmp/sig$sig.folded" 2>"$tmp/err" &
	dpid=$!
	wait_for has_perf_events $dpid
	wait_cpu $wpid 100
	kill -s $sig $dpid
	wait $dpid
	rc=$?
	check "SIG$sig: exits 0 (rc $rc)" test $rc -eq 0
	check "SIG$sig: the profile is written" grep -Eq '^workload;.*;spin;spin_inner [0-9]+$' "$tmp/sig$sig.folded"
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
done
wpid=

# On a terminal, a status line about once a second.
if command -v script >/dev/null; then
	script -qec "'$ds' -F 99 -o '$tmp/tty.folded' -- '$workload' spin 2.5" /dev/null \
		>"$tmp/tty" 2>&1
	check "on a terminal, a status line with samples, losses and complete stacks" \
		grep -Eq '\[ *[0-9.]+ s\] [0-9]+ samples, [0-9]+ lost, [0-9.]+% complete stacks' "$tmp/tty"
fi

# Without -o: the process's name and the time, as an SVG flame graph.
(cd "$tmp" && "$ds" -F 99 -- "$workload" spin 0.3 >/dev/null 2>"$tmp/err")
check "without -o: NAME-DATE-TIME.svg" sh -c "ls '$tmp' | grep -Eq '^workload-[0-9]{8}-[0-9]{6}\.svg$'"

# System-wide on one CPU, with something sure to run there throughout,
# for half a second of its CPU time there once the events are open.
taskset -c 0 "$workload" spin 60 &
wpid=$!
wait_for runs $wpid workload
"$ds" -a -C 0 -o "$tmp/sys.folded" 2>"$tmp/err" &
dpid=$!
wait_for has_perf_events $dpid
wait_cpu $wpid 50
kill -INT $dpid
wait $dpid
check "-a -C 0 works" test $? -eq 0 || cat "$tmp/err"
check "and sees what runs on CPU 0" grep -Eq '^workload;.*;spin;spin_inner [0-9]+$' "$tmp/sys.folded"
kill $wpid 2>/dev/null
wait $wpid 2>/dev/null
wpid=

# Errors: said before sampling, with what to do, and a non-zero exit.
err() { # description, expected message (regex), arguments...
	what=$1
	want=$2
	shift 2
	"$ds" "$@" >"$tmp/eout" 2>"$tmp/eerr"
	rc=$?
	check "$what: exits non-zero" test $rc -ne 0
	check "$what: says '$want'" grep -Eq "$want" "$tmp/eerr"
}
err "a missing pid" "no process with PID 4194999: check the PID" -p 4194999 -o "$tmp/e.svg"
check "and leaves no empty profile behind" test ! -e "$tmp/e.svg"
echo "an earlier profile" >"$tmp/keep.svg"
err "a missing pid, over an earlier profile" "no process with PID 4194999" -p 4194999 -o "$tmp/keep.svg"
check "leaves the earlier profile as it was" grep -q "an earlier profile" "$tmp/keep.svg"
if mknod "$tmp/null" c 1 3 2>/dev/null; then
	err "a missing pid, writing to a device" "no process with PID 4194999" -p 4194999 -o "$tmp/null" -f folded
	check "leaves the device alone" test -c "$tmp/null"
fi
err "a command that cannot run" "sampling could not start" -o "$tmp/nx.folded" -- "$tmp/no-such-command"
check "and writes no profile" test ! -e "$tmp/nx.folded"
err "an unwritable path" "cannot write $tmp/no/such/dir/p.svg: .*choose another output path" \
	-o "$tmp/no/such/dir/p.svg" -- "$workload" spin 5
err "a bad flag" "Try 'dwarfsample --help'" --bogus -p 1
err "an unknown format" "unknown format 'flame': the formats are svg" -f flame -p 1
err "an extension that says nothing" "cannot tell the format from '.*p.data'" -o "$tmp/p.data" -p 1
err "no target" "nothing to sample" -F 99
err "a bad --tag" "invalid --tag 'novalue'" --tag novalue -p 1
err "a --tag every sample has" "'pid' is a label every sample has already" --tag pid=5 -p 1
if command -v setpriv >/dev/null && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 1 ]; then
	chmod 777 "$tmp"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$ds" -p 1 -o "$tmp/np.svg" \
		>"$tmp/eout" 2>"$tmp/eerr"
	check "refused permissions: exits non-zero" test $? -ne 0
	check "refused permissions: says what to do" grep -Eq "perf_event_paranoid|CAP_PERFMON|root" "$tmp/eerr"
fi
exit $fail
