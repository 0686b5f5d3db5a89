#!/bin/sh
# Sampling events other than CPU time (-e), against what the workload
# does by construction (tests/stat-workload.c):
#   page-faults      every fault of `pages N` (touch_pages) is a sample's
#                    worth, its stack complete to main
#   tracepoint       syscalls:sys_enter_write hit once per write of
#                    `write K` (do_writes), every hit sampled
#   two events       page faults and context switches of `pipe K` in one
#                    run, each sample kept with its event: pprof has a
#                    type for each (go tool pprof reads them), record +
#                    report --event shows each, perf 6.1's perf script
#                    names each
#   --read-group     page faults counted per stack of cpu-clock samples
#   refusals         unknown events, unavailable hardware, groups without
#                    --read-group, -c with -F: said before anything runs
# usage: test-events.sh DWARFSAMPLE STAT-WORKLOAD
set -u
ds=$(realpath "$1")
wl=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

# sum FILE REGEX: the total value of a folded profile's lines matching REGEX.
sum() {
	# (The pattern through the environment: awk -v reads escapes in
	# it, which gawk and mawk read differently.)
	re=$2 awk '$0 ~ ENVIRON["re"] { s += $NF } END { printf "%.0f\n", s }' "$1"
}
# within VALUE LO HI
within() {
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'
}

# Every run's samples fit in its rings without a drain (a few thousand
# samples of 4 KiB stacks, plenty for these shallow stacks), so none is
# lost however late the consumer runs: the counts are exact.
fit="--stack-size 4096 --ring-pages 4096"

# --- page faults: where they come from ---
n=2000
# shellcheck disable=SC2086 # $fit is options
"$ds" -e page-faults -c 1 $fit -f folded -o "$tmp/pf.folded" -- "$wl" pages $n \
	>/dev/null 2>"$tmp/pf.err"
rc=$?
skip_if_refused "$rc" "$tmp/pf.err"
check "-e page-faults exits 0" test "$rc" -eq 0 || cat "$tmp/pf.err"
total=$(sum "$tmp/pf.folded" .)
touch=$(sum "$tmp/pf.folded" ";touch_pages ")
complete=$(sum "$tmp/pf.folded" "^stat-workload;.*main;.*touch_pages ")
# Every fresh page faults once in touch_pages; the program's start
# (loader, libc) faults a few hundred times more, elsewhere.
check "nothing lost" grep -q " 0 lost" "$tmp/pf.err" || cat "$tmp/pf.err"
check "page faults in touch_pages: $touch of $n" test "$touch" -eq $n
check "every touch_pages stack is complete to main ($complete of $touch)" test "$complete" -eq "$touch"
check "the rest are the start's, a few hundred ($total in all)" within "$total" "$touch" $((touch + 2000))

# -c 100: each sample stands for 100 faults; the profile counts faults.
n=20000
# shellcheck disable=SC2086
"$ds" -e page-faults -c 100 $fit -f folded -o "$tmp/pf100.folded" -- "$wl" pages $n \
	>/dev/null 2>"$tmp/pf100.err"
touch100=$(sum "$tmp/pf100.folded" ";touch_pages ")
check "-c 100: values are faults, not samples ($touch100)" within "$touch100" $((n - n / 50)) $((n + n / 50))

# --- a tracepoint, every hit sampled with its stack ---
k=500
# shellcheck disable=SC2086
"$ds" -e syscalls:sys_enter_write $fit -f folded -o "$tmp/tp.folded" -- "$wl" write $k \
	>/dev/null 2>"$tmp/tp.err"
rc=$?
check "-e syscalls:sys_enter_write exits 0" test "$rc" -eq 0 || cat "$tmp/tp.err"
writes=$(sum "$tmp/tp.folded" "^stat-workload;.*main;.*do_writes")
check "each of the $k writes is a sample in do_writes, complete to main ($writes)" test "$writes" -eq $k

# --- two events in one run ---
k=300
# shellcheck disable=SC2086
"$ds" -e page-faults,context-switches -c 1 $fit -f pprof -o "$tmp/two.pb.gz" -- "$wl" pipe $k \
	>/dev/null 2>"$tmp/two.err"
check "two events exit 0" test $? -eq 0 || cat "$tmp/two.err"
if command -v go >/dev/null 2>&1; then
	# go tool pprof's own total of each sample type: -raw lists the
	# types after "Samples:", then a line per sample, its values first.
	go tool pprof -raw "$tmp/two.pb.gz" >"$tmp/two.raw" 2>&1
	gtotal() { # type name
		awk -v t="$1" '
			/^Samples:/ { hdr = 1; next }
			hdr == 1 { for (i = 1; i <= NF; i++) { n = $i; sub(/\/.*/, "", n); if (n == t) col = i }
				   hdr = 2; next }
			hdr == 2 && /^Locations/ { hdr = 3 }
			hdr == 2 && $1 ~ /^[0-9]+$/ && col { s += $col }
			END { printf "%.0f\n", s }' "$tmp/two.raw"
	}
	types=$(sed -n '/^Samples:/{n;p;}' "$tmp/two.raw")
	check "pprof has a sample type per event ($types)" \
		sh -c "echo '$types' | grep -q 'page-faults/count' && echo '$types' | grep -q 'context-switches/count'"
	cs=$(gtotal context-switches)
	# Each round trip switches each thread out once.
	check "go tool pprof: context switches >= 2 x $k ($cs)" test "$cs" -ge $((2 * k))
	pf=$(gtotal page-faults)
	check "go tool pprof: page faults counted too ($pf)" test "$pf" -gt 0
else
	echo "# go is not installed: the pprof file is not read back (Debian: golang-go)"
fi

# shellcheck disable=SC2086
"$ds" record -e page-faults,context-switches -c 1 $fit -o "$tmp/two.data" -- "$wl" pipe $k \
	>/dev/null 2>"$tmp/rec.err"
check "record of two events exits 0" test $? -eq 0 || cat "$tmp/rec.err"
"$ds" report -i "$tmp/two.data" -f folded --event context-switches -o "$tmp/cs.folded" \
	2>"$tmp/rep.err"
check "report --event context-switches exits 0" test $? -eq 0 || cat "$tmp/rep.err"
cs=$(sum "$tmp/cs.folded" .)
check "report --event context-switches: >= 2 x $k switches ($cs)" test "$cs" -ge $((2 * k))
"$ds" report -i "$tmp/two.data" -f folded --event page-faults -o "$tmp/pf2.folded" 2>/dev/null
check "report --event page-faults shows other stacks" \
	sh -c "! cmp -s '$tmp/cs.folded' '$tmp/pf2.folded' && test -s '$tmp/pf2.folded'"
"$ds" report -i "$tmp/two.data" -f folded --event nosuch -o /dev/null 2>"$tmp/bad.err"
check "report --event with an event not in the file exits 2, naming those there" \
	sh -c "test $? -eq 2 && grep -q 'context-switches' '$tmp/bad.err'"
if perf --version >/dev/null 2>&1; then
	# The header line of each sample starts with its event's name.
	perf script -i "$tmp/two.data" -F event,ip 2>/dev/null | grep -oE '^ *[a-z-]+:' |
		sort | uniq -c >"$tmp/perf.events"
	check "perf 6.1's perf script names both events" \
		sh -c "grep -q ' context-switches:$' '$tmp/perf.events' && grep -q ' page-faults:$' '$tmp/perf.events'"
	"$ds" report -i "$tmp/two.data" -F event,ip 2>/dev/null | grep -oE '^ *[a-z-]+:' |
		sort | uniq -c >"$tmp/ds.events"
	check "report's perf-script text counts the same samples per event as perf script" \
		cmp -s "$tmp/perf.events" "$tmp/ds.events" || diff "$tmp/perf.events" "$tmp/ds.events"
fi

# --- --read-group: page faults per stack of CPU samples ---
# shellcheck disable=SC2086
"$ds" -e cpu-clock,page-faults --read-group -F 999 $fit -f pprof -o "$tmp/rg.pb.gz" -- \
	"$wl" pages 100000 >/dev/null 2>"$tmp/rg.err"
rc=$?
if [ $rc -ne 0 ] && grep -q "Linux 6.12" "$tmp/rg.err"; then
	echo "# --read-group on a command needs Linux 6.12+ here: $(cat "$tmp/rg.err")"
else
	check "--read-group exits 0" test "$rc" -eq 0 || cat "$tmp/rg.err"
	if command -v go >/dev/null 2>&1; then
		go tool pprof -top -sample_index=page-faults "$tmp/rg.pb.gz" >"$tmp/rg.top" 2>&1
		# The faults of the pages touched fall in touch_pages' samples
		# (their growth since the thread's previous sample), so most
		# of the 100 000 are there.
		flat=$(awk '$NF == "touch_pages" { print $1 }' "$tmp/rg.top")
		check "--read-group: page faults per stack, most in touch_pages ($flat)" \
			within "${flat:-0}" 80000 102000
	fi
fi

# --- refusals, before anything runs ---
refused() { # expected message, options...
	msg=$1
	shift
	"$ds" "$@" -f folded -o "$tmp/never" -- "$wl" pages 10 >/dev/null 2>"$tmp/r.err"
	rc=$?
	check "'$*' exits 2 saying '$msg'" sh -c "test $rc -eq 2 && grep -q -- '$msg' '$tmp/r.err' && ! test -e '$tmp/never'"
	[ $rc -eq 2 ] || cat "$tmp/r.err"
}
refused "page-faults" -e pagefaults
refused "sched:nosuch" -e sched:nosuch
refused "instructions" -e instructions
refused "-c PERIOD" -e page-faults -c 10 -F 99
refused "group" -e "{page-faults,context-switches}"
refused "at least two" -e page-faults --read-group
# cycles without a PMU: cpu-clock instead, said.
"$ds" -e cycles -f folded -o "$tmp/cyc.folded" -- "$wl" pages 1000 >/dev/null 2>"$tmp/cyc.err"
rc=$?
if grep -q "cpu-clock instead" "$tmp/cyc.err"; then
	check "-e cycles without a PMU falls back to cpu-clock and says so" test "$rc" -eq 0
else
	check "-e cycles with a PMU exits 0" test "$rc" -eq 0
fi
exit $fail
