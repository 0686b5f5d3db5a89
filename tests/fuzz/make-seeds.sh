#!/bin/sh
# Regenerate the fuzzer's seed files: tiny recordings (64-byte stacks, a
# twentieth of a second) by dwarfsample and by perf, so the fuzzer starts
# from both writers' layouts.  As root, from a build of the current tree:
#     tests/fuzz/make-seeds.sh build
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
out=$src/tests/fuzz/seeds-perfdata
mkdir -p "$out"
"$build/tools/dwarfsample" record -F 999 --stack-size 64 -o "$out/dwarfsample.data" -- \
	"$build/tests/workload" spin 0.05 2>/dev/null
perf record -q -F 999 --call-graph dwarf,64 -o "$out/perf.data" -- \
	"$build/tests/workload" spin 0.05 >/dev/null 2>&1
ls -l "$out"
