#!/bin/sh
# A bounded fuzzing run for CI: the seeds plus whatever the fuzzer finds in
# SECONDS, in a scratch corpus.  A crash, leak or timeout fails the test
# and leaves the reproducer (crash-*) in the build directory.
# usage: smoke.sh FUZZER SEED_DIR SECONDS
set -eu
fuzzer=$1
seeds=$2
seconds=$3
# Undefined behaviour is a failure too, not a message.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-max_len=1048576 -print_final_stats=1 "$corpus" "$seeds"
