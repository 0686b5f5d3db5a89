#!/bin/sh
# What the summary and report --quality say of off-CPU and wall-clock
# captures whose waits' stacks outgrow the copy made at each switch out:
# the workload sleeps 40 calls down (offcpu-workload deep, 256 bytes of
# stack a call), copied 512 bytes at a time.  Each wait's stack ends in
# the workload, truncated, and the advice is a larger
# --off-cpu-stack-size, the option that sets that copy -- never
# --stack-size, which --off-cpu refuses.
# usage: test-offcpu-advice.sh DWARFSAMPLE OFFCPU-WORKLOAD
set -u
ds=$(realpath "$1")
workload=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

# --stack-size named alone, not as part of --off-cpu-stack-size.
alone='(^|[^-a-z])--stack-size'
# The row of the workload's truncated waits, and its remedy below it.
row='^ *[0-9]+ +[0-9.]+%  truncated +'"$workload"'$'
remedy='the 512-byte stack copy at the switch out ran out here: a larger --off-cpu-stack-size (up to 65528)'

# --- the live summary ---
"$ds" --off-cpu --off-cpu-stack-size 512 -f folded -o "$tmp/live.folded" -- \
	"$workload" deep 0.5 >/dev/null 2>"$tmp/live.err"
rc=$?
skip_if_refused "$rc" "$tmp/live.err"
check "--off-cpu with 512-byte copies exits 0" test "$rc" -eq 0 || cat "$tmp/live.err"
check "the summary lists the waits' stacks the copy cut, in the workload" \
	grep -Eq "^dwarfsample: +[0-9]+ +[0-9.]+%  truncated +$workload$" "$tmp/live.err" ||
	cat "$tmp/live.err"
check "with the remedy: a larger --off-cpu-stack-size" \
	grep -q "^dwarfsample: .*$remedy" "$tmp/live.err"
check "the advice never names --stack-size, which --off-cpu refuses" \
	sh -c "! grep -Eq '$alone' '$tmp/live.err'" || cat "$tmp/live.err"

# quality_of MODE: record --MODE with 512-byte copies at the switches
# out, then report --quality on it: the report, the waits' row and its
# remedy.
quality_of() {
	"$ds" record "--$1" --off-cpu-stack-size 512 -o "$tmp/$1.data" -- \
		"$workload" deep 0.5 >/dev/null 2>"$tmp/err"
	check "record --$1 exits 0" test $? -eq 0 || cat "$tmp/err"
	"$ds" report --quality -i "$tmp/$1.data" >"$tmp/$1.quality" 2>"$tmp/err"
	check "report --quality on it exits 0" test $? -eq 0 || cat "$tmp/err"
	check "it prints the report's head" \
		grep -Eq "^unwind quality of $tmp/$1.data: [0-9]+ samples" "$tmp/$1.quality" ||
		cat "$tmp/$1.quality"
	check "and the workload's truncated waits" grep -Eq "$row" "$tmp/$1.quality"
	check "with the remedy: a larger --off-cpu-stack-size" grep -q "$remedy" "$tmp/$1.quality"
}

quality_of off-cpu
check "and no --stack-size" sh -c "! grep -Eq '$alone' '$tmp/off-cpu.quality'"
# --wall: CPU samples beside the waits, each copy its own size.
quality_of wall
exit $fail
