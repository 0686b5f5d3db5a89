#!/bin/bash
# Off-CPU and wall-clock pprof files as go tool pprof reads them: every
# sample type, the default one, the waits' pseudo-frames and their label.
# Skips (77) without Go, as check-pprof.sh does.
# usage: test-offcpu-pprof.sh OFFCPU-PPROF CHECK-PPROF
set -u
writer=$1
check_pprof=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

check "the writer writes both files" "$writer" "$tmp"
DS_PPROF_TYPES="samples/count off_cpu/nanoseconds[dflt]" "$check_pprof" \
	"$tmp/off-cpu.pb.gz" "[off-cpu: blocked]" "[off-cpu: preempted]"
rc=$?
[ "$rc" -eq 77 ] && exit 77
check "off-CPU: go tool pprof reads every type and the waits" test "$rc" -eq 0
DS_PPROF_TYPES="samples/count cpu/nanoseconds off_cpu/nanoseconds wall/nanoseconds[dflt]" \
	"$check_pprof" "$tmp/wall.pb.gz" "[off-cpu: blocked]" "[off-cpu: preempted]"
check "wall: go tool pprof reads every type and the waits" test $? -eq 0

# The totals per type (-top's header: "... of 8ms total"), and the label.
total() { # file sample_index
	HOME=$tmp go tool pprof -symbolize=none -top -sample_index="$2" "$tmp/$1" 2>/dev/null |
		sed -n 's/.* of \([^ ]*\) total.*/\1/p'
}
check "off-CPU: 7ms off the CPU" test "$(total off-cpu.pb.gz off_cpu)" = 7ms
check "wall: 2ms on the CPU" test "$(total wall.pb.gz cpu)" = 2ms
check "wall: 7ms off it" test "$(total wall.pb.gz off_cpu)" = 7ms
check "wall: 9ms in all" test "$(total wall.pb.gz wall)" = 9ms
HOME=$tmp go tool pprof -symbolize=none -tags "$tmp/wall.pb.gz" >"$tmp/tags" 2>&1
check "the waits are labelled by kind: 5ms blocked" grep -q ' 5.0ms (.*): blocked$' "$tmp/tags"
check "and 2ms preempted" grep -q ' 2.0ms (.*): preempted$' "$tmp/tags"
exit "$fail"
