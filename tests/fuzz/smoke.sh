#!/bin/sh
# A bounded, repeatable fuzzing run for CI: the seeds plus RUNS inputs the
# fuzzer derives from them with a fixed random seed, in a scratch corpus.
# The same tree runs the same inputs every time, so a failure here is the
# change's, never the luck of a run; finding new inputs is a longer run's
# job (tests/fuzz/README.md).  A crash, leak, undefined behaviour or a
# 10 s input fails the test and leaves the reproducer (crash-*) in the
# build directory.
# usage: smoke.sh FUZZER SEED_DIR RUNS
set -eu
fuzzer=$1
seeds=$2
runs=$3
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
# Address randomisation would change the coverage an input reaches (hash
# tables keyed by addresses), and so which inputs are kept and mutated:
# the run is made without it where the kernel allows.
fixed=
if setarch -R true 2>/dev/null; then
	fixed="setarch -R"
fi
$fixed "$fuzzer" -seed=1 -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
	-max_len=1048576 -print_final_stats=1 "$corpus" "$seeds"
