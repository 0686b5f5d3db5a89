#!/bin/sh
# Joining truncated stacks, against the ground truth (BENCHMARKS.md,
# "Joining truncated stacks"): each workload is recorded once with 64 KiB
# stack copies (`dwarfsample record -F 999 --stack-size 65528`), then
# replayed by tests/join-truth with every sample's copy cut to each SIZE,
# joining on, and compared with the unwinding of the full copies.  One
# line per workload and size, as join-truth prints it.
#
# usage: bench/join-truth.sh BUILD-DIR [WORKLOAD,...] [SIZE,...]
# Workloads: gcc clang recurse climb paths demo python node c++ (default
# all of them; clang and node are skipped when not installed).
set -eu
build=$(realpath "${1:?usage: join-truth.sh BUILD-DIR [WORKLOAD,...] [SIZE,...]}")
workloads=$(echo "${2:-gcc,clang,recurse,climb,paths,demo,python,node,c++}" | tr , ' ')
sizes=$(echo "${3:-4096,8192,16384,32768}" | tr , ' ')
here=$(dirname "$(realpath "$0")")
ds=$build/tools/dwarfsample
work=$(mktemp -d /tmp/join-truth.XXXXXX)
trap 'rm -rf "$work"' EXIT
sh "$here/../tests/gen-big-c.sh" 600 >"$work/big.c"

for w in $workloads; do
	case $w in
	gcc) cmd="gcc -O2 -c $work/big.c -o $work/big.o" ;;
	clang) command -v clang >/dev/null || continue
		cmd="clang -O2 -c $work/big.c -o $work/big.o" ;;
	recurse | climb | paths) cmd="$build/tests/agree-workload $w 5" ;;
	demo) cmd="$build/tools/dwarfsample-demo 5 2" ;;
	python) cmd="python3 $here/stack-size/cpu.py 5" ;;
	node) command -v node >/dev/null || continue
		cmd="node $here/stack-size/cpu.js 5" ;;
	c++) g++ -O2 -o "$work/churn" "$here/stack-size/churn.cpp"
		cmd="$work/churn 5" ;;
	*) echo "join-truth.sh: unknown workload $w" >&2; exit 2 ;;
	esac
	# shellcheck disable=SC2086 # the command, in words
	"$ds" record -F 999 --stack-size 65528 -o "$work/$w.data" -- $cmd \
		>/dev/null 2>"$work/$w.err" || { cat "$work/$w.err"; exit 1; }
	for n in $sizes; do
		"$build/tests/join-truth" "$work/$w.data" "$n" "$w" | grep -v '^#   '
	done
	rm -f "$work/$w.data"
done
