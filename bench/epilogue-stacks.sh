#!/bin/sh
# Stacks whose sampled frame is in an epilogue, past its pops, where GCC's
# and clang's CFI still have the registers popped saved below the stack
# pointer (unwind/leafexit.c): how many reach main, by dwarfsample and by
# perf 7.3 and perf 6.1, on the same samples.
#
# bench/epilogue-workload.c is built by gcc and clang, with frame pointers
# (-fno-omit-frame-pointer: every function's CFA is rbp's, so a caller's
# step needs rbp back) and without; each build is recorded once by
# `dwarfsample record` (perf.data, user stack copies) and listed by
# `dwarfsample report`, perf 7.3's and perf 6.1's `perf script`.
#
# usage: bench/epilogue-stacks.sh DWARFSAMPLE [SECONDS]
#   PERF73  perf 7.3 (default: the run-perf of ../shared/tools/debian13-root.sh)
#   PERF61  perf 6.1 (default: perf)
set -eu
ds=$(realpath "$1")
seconds=${2:-5}
perf73=${PERF73:-/var/cache/dwarfsample/debian13/run-perf}
perf61=${PERF61:-perf}
here=$(dirname "$(realpath "$0")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# stacks LISTING: how many stacks a perf-script listing has.
stacks() {
	awk 'BEGIN { RS = "" } END { print NR }' "$1"
}

# reach_main LISTING: the share of them that reach main, in %.
reach_main() {
	awk 'BEGIN { RS = "" } { n++; if ($0 ~ /[ \t]main([ +(\n]|$)/) ok++ }
		END { printf "%.1f", n ? 100 * ok / n : 0 }' "$1"
}

printf '%-10s %-5s %8s %12s %12s %12s\n' compiler fp samples dwarfsample "perf 7.3" "perf 6.1"
for cc in gcc clang; do
	for fp in yes no; do
		flags=-fomit-frame-pointer
		[ "$fp" = yes ] && flags=-fno-omit-frame-pointer
		"$cc" -O2 -g "$flags" -o "$tmp/w" "$here/epilogue-workload.c"
		"$ds" record -F 999 -o "$tmp/w.data" -- "$tmp/w" "$seconds" >/dev/null 2>&1
		"$ds" report --no-join -F comm,tid,time,ip,sym -i "$tmp/w.data" \
			-o "$tmp/ds.txt" 2>/dev/null
		"$perf73" script -F comm,tid,time,ip,sym -i "$tmp/w.data" >"$tmp/p73.txt" 2>/dev/null
		"$perf61" script -F comm,tid,time,ip,sym -i "$tmp/w.data" >"$tmp/p61.txt" 2>/dev/null
		printf '%-10s %-5s %8s %11s%% %11s%% %11s%%\n' "$cc" "$fp" "$(stacks "$tmp/ds.txt")" \
			"$(reach_main "$tmp/ds.txt")" "$(reach_main "$tmp/p73.txt")" \
			"$(reach_main "$tmp/p61.txt")"
	done
done
