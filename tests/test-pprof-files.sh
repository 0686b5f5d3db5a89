#!/bin/bash
# pprof files as go tool pprof reads them (pprof-files.c writes them):
# off-CPU and wall-clock profiles, every sample type, the default one, the
# waits' pseudo-frames and their label; a profile of two events and a
# counter, a sample type each, the first event the default, and each
# type's total the sum of its periods or of the counter's growths.
# Skips (77) without Go, as check-pprof.sh does.
# usage: test-pprof-files.sh PPROF-FILES CHECK-PPROF
set -u
writer=$1
check_pprof=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

check "the writer writes the files" "$writer" "$tmp"
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

DS_PPROF_TYPES="page-faults:u/count[dflt] task-clock/nanoseconds minor-faults/count" \
	"$check_pprof" "$tmp/events.pb.gz"
check "events: go tool pprof reads every type" test $? -eq 0
check "events: 8 page faults (periods 1 + 2 + 5)" test "$(total events.pb.gz page-faults:u)" = 8
check "events: 6ms of task clock (1 + 2 + 3 ms)" test "$(total events.pb.gz task-clock)" = 6ms
check "events: 25 minor faults, the counter's last read" \
	test "$(total events.pb.gz minor-faults)" = 25
check "events: the default is the first event" test "$(total events.pb.gz '')" = 8
exit "$fail"
