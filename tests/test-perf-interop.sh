#!/bin/sh
# Linux perf as an independent oracle, both ways:
#  - perf's files: `perf record --call-graph dwarf` of a workload, read by
#    dwarfsample, gives the very samples `perf script` lists;
#  - our files: `perf script` DWARF-unwinds a dwarfsample recording of an
#    -O2 -fomit-frame-pointer workload to main for at least 99% of samples.
# usage: test-perf-interop.sh DWARFSAMPLE WORKLOAD
set -u
ds=$1
workload=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_perf
make_tmp

# perf's file, read by us.
perf record -q -F 999 --call-graph dwarf -o "$tmp/perf.data" -- \
	"$workload" spin 0.5 >/dev/null 2>"$tmp/err"
check "perf record ran" test -s "$tmp/perf.data"
perf script -i "$tmp/perf.data" -F tid,time --ns 2>/dev/null |
	awk '{ sub(/:$/, "", $2); print $1, $2 }' | sort >"$tmp/perf-samples"
"$ds" dump -i "$tmp/perf.data" 2>"$tmp/err" |
	awk '/ SAMPLE / { for (i = 1; i <= NF; i++) if ($i == "tid") print $(i + 1), $1 }' |
	sort >"$tmp/our-samples"
n=$(wc -l <"$tmp/perf-samples")
check "perf script lists samples ($n)" test "$n" -ge 100
check "dwarfsample reads the same samples (tid, time) from perf's file" \
	cmp -s "$tmp/perf-samples" "$tmp/our-samples"
check "without complaint" test ! -s "$tmp/err"

# Our file, unwound by perf.
"$ds" record -F 499 -o "$tmp/ours.data" -- "$workload" spin 1 2>/dev/null
perf script -i "$tmp/ours.data" 2>/dev/null >"$tmp/script"
n=$(grep -c "cpu-clock:" "$tmp/script")
# Samples in the workload's own code (its _start aside): those the
# program was running, which must reach main.  A sanitizer's runtime
# starts before main and checks for leaks after it: its samples do not.
counts=$(awk '/cpu-clock:/ { n++ }
	/\/workload\)$/ && !/ _start\+/ { wl[n] = 1 }
	/ main\+0x/ { inmain[n] = 1 }
	END { t = 0; s = 0; for (i = 1; i <= n; i++) if (wl[i]) { t++; s += inmain[i] }
	      print t, s }' "$tmp/script")
total=${counts% *}
to_main=${counts#* }
echo "# perf script: $n samples, $total in the workload's code, $to_main of them unwound to main"
check "perf script sees our samples ($total of $n)" test "$total" -ge 200
check "and unwinds at least 99% of them to main ($to_main of $total)" \
	test $((to_main * 100)) -ge $((total * 99))

# Our file with the off-CPU event beside the CPU one: perf lists both
# events, the switch-out samples and the switch records.  A sleeping
# command blocks at least once.
"$ds" record --wall -o "$tmp/wall.data" -- sleep 0.05 2>"$tmp/err"
if [ $? -ne 0 ] && grep -q "perf_event_paranoid" "$tmp/err"; then
	echo "# off-CPU recording refused (kernel.perf_event_paranoid): not checked"
else
	perf script -i "$tmp/wall.data" -F event,tid,period 2>"$tmp/err" >"$tmp/script"
	n=$(grep -c "context-switches:" "$tmp/script")
	check "perf script lists the switch-out samples of a --wall recording ($n)" \
		test "$n" -ge 1
	perf script -i "$tmp/wall.data" --show-switch-events 2>/dev/null >"$tmp/script"
	check "and its switch records, out and in" \
		sh -c "grep -q 'PERF_RECORD_SWITCH OUT' '$tmp/script' &&
			grep -q 'PERF_RECORD_SWITCH IN' '$tmp/script'"
	perf report -i "$tmp/wall.data" --stdio 2>"$tmp/err" >"$tmp/report"
	check "perf report reads it" grep -q "of event 'context-switches'" "$tmp/report"
	perf report -i "$tmp/wall.data" --header-only 2>/dev/null >"$tmp/report"
	check "and knows its clock" grep -q "clockid frequency" "$tmp/report"
fi

exit $fail
