#!/bin/sh
# Sparse events (page faults, context switches, tracepoints) are sampled
# at every hit unless -F or -c says otherwise: the kernel's frequency
# mode sets each period from the rate just before, which a burst after a
# pause makes wrong.  The summary says which was used.
#   default      -e page-faults on `pages N` (tests/stat-workload.c): a
#                sample per fault, as many as perf stat counts for the
#                same command (the oracle), and "sampled at every event"
#   -F 99        the summary says the counts are estimates
#   lost, -c     a ring too small for the samples: the advice is to
#                raise -c, never to lower -F (there is no -F)
# usage: test-sparse-events.sh DWARFSAMPLE STAT-WORKLOAD
set -u
ds=$(realpath "$1")
wl=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

# samples ERRFILE: the summary's sample count.
samples() {
	sed -n 's/^dwarfsample: \([0-9]*\) samples in .*/\1/p' "$1"
}
within() { # value lo hi
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'
}

n=2000
# Rings that hold every sample without a drain (some 2 100 samples of
# 4 KiB stacks, 9 MB in a 16 MB ring): none lost however late the
# consumer runs.
"$ds" -e page-faults --stack-size 4096 --ring-pages 4096 -f folded -o "$tmp/pf.folded" -- \
	"$wl" pages $n >/dev/null 2>"$tmp/pf.err"
rc=$?
skip_if_refused "$rc" "$tmp/pf.err"
check "-e page-faults without -F or -c exits 0" test "$rc" -eq 0 || cat "$tmp/pf.err"
got=$(samples "$tmp/pf.err")
check "nothing lost" grep -q " 0 lost" "$tmp/pf.err" || cat "$tmp/pf.err"
if perf --version >/dev/null 2>&1; then
	want=$(perf stat -x, -e page-faults -- "$wl" pages $n 2>&1 >/dev/null |
		awk -F, '$3 ~ /page-faults/ { print $1 }')
	# Both count the command's own faults, from its exec: the same
	# but for the few the tools' own preparations move (a margin of a
	# fifth, far from the frequency mode's handful of samples).
	check "a sample per fault: $got samples, perf stat counts ${want:-?}" \
		within "${got:-0}" $((${want:-0} * 4 / 5)) $((${want:-0} * 6 / 5))
fi
check "at least the $n faults of touch_pages ($got samples)" test "${got:-0}" -ge $n
check "the summary says the period: every event, -c 1" \
	grep -q "page-faults sampled at every event (-c 1" "$tmp/pf.err" || cat "$tmp/pf.err"

# -F on a sparse event: allowed, and said to be estimates.
"$ds" -e page-faults -F 99 --stack-size 4096 -f folded -o "$tmp/pf99.folded" -- \
	"$wl" pages $n >/dev/null 2>"$tmp/pf99.err"
check "-e page-faults -F 99 exits 0" test $? -eq 0 || cat "$tmp/pf99.err"
check "-F 99 on page-faults: the summary says counts are estimates" \
	grep -q "page-faults sampled at -F 99 Hz: .*counts are estimates" "$tmp/pf99.err" ||
	cat "$tmp/pf99.err"
check "... and not that every event was sampled" \
	sh -c "! grep -q 'sampled at every event' '$tmp/pf99.err'"

# A ring holding one sample (8 KiB stacks in 4 pages) and a fault per
# sample for 100 000 faults: samples are lost whatever the scheduling.
"$ds" -e page-faults -c 1 --stack-size 8192 --ring-pages 4 -f folded -o "$tmp/lost.folded" -- \
	"$wl" pages 100000 >/dev/null 2>"$tmp/lost.err"
check "-c 1 with a one-sample ring exits 0" test $? -eq 0 || cat "$tmp/lost.err"
check "samples were lost" grep -q "samples in .*, [1-9][0-9]* lost" "$tmp/lost.err" ||
	cat "$tmp/lost.err"
check "the advice raises -c" grep -q "to lose fewer samples, raise -c" "$tmp/lost.err" ||
	cat "$tmp/lost.err"
check "the advice does not say -F" sh -c "! grep 'lose fewer' '$tmp/lost.err' | grep -q -- '-F'" ||
	cat "$tmp/lost.err"
"$ds" record -e page-faults -c 1 --stack-size 8192 --ring-pages 4 -o "$tmp/lost.data" -- \
	"$wl" pages 100000 >/dev/null 2>"$tmp/rlost.err"
check "record: samples lost, and the advice raises -c, not -F" \
	sh -c "grep -q 'samples lost: to lose fewer, raise -c' '$tmp/rlost.err' &&
	       ! grep 'lose fewer' '$tmp/rlost.err' | grep -q -- '-F'" || cat "$tmp/rlost.err"
exit $fail
