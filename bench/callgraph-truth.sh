#!/bin/sh
# --call-graph fp and auto against the ground truth (BENCHMARKS.md,
# "fp and auto against the truth"): tests/test-callgraph-truth.sh builds
# tests/fp-workload.c with gcc and clang, all with frame pointers and with
# an omit-frame-pointer library, records each once with
# `dwarfsample record --call-graph auto,65528`, and replays every sample
# as fp, as auto and as DWARF over the full copy (tests/callgraph-truth).
# Prints its figures: one line per build and mode, then the checks.
#
# usage: bench/callgraph-truth.sh BUILD-DIR [SECONDS]
set -eu
build=$(realpath "${1:?usage: callgraph-truth.sh BUILD-DIR [SECONDS]}")
here=$(dirname "$(realpath "$0")")
sh "$here/../tests/test-callgraph-truth.sh" "$build/tools/dwarfsample" \
	"$build/tests/callgraph-truth" "$here/../tests" "${2:-10}" | grep -v '^#   '
