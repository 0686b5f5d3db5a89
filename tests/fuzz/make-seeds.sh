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

# The unwinder's ELF seeds: a few small functions with the shapes of CFI
# the parsers see (push/pop rows, remembered states, a frame pointer),
# linked without libc so the files stay small: with .eh_frame_hdr, with
# .eh_frame alone, and with only .debug_frame.
out=$src/tests/fuzz/seeds-unwind-elf
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/f.c" <<'C'
int g(int *a, int n);
__attribute__((noinline)) int h(int x) { return x * 3 + 1; }
__attribute__((noinline)) int g(int *a, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] > 3 ? h(a[i]) : a[i];
	return s;
}
__attribute__((noinline)) int f(int n)
{
	int v[64];
	for (int i = 0; i < 64; i++)
		v[i] = i ^ n;
	if (n > 100)
		return f(n / 2) + g(v, 64);
	return g(v, n & 63);
}
void _start(void) { f(1000); for (;;) ; }
C

link() { # cc arguments...
	cc -O2 -fomit-frame-pointer -nostdlib -static -fno-pie -no-pie -Wl,--build-id "$@"
}
link -Wl,--eh-frame-hdr "$tmp/f.c" -o "$out/eh-frame-hdr.elf"
link -Wl,--no-eh-frame-hdr "$tmp/f.c" -o "$out/eh-frame.elf"
link -fno-asynchronous-unwind-tables -fno-unwind-tables -g "$tmp/f.c" \
	-o "$tmp/debug.elf"
objcopy -R .comment -R .debug_info -R .debug_abbrev -R .debug_line \
	-R .debug_str -R .debug_line_str -R .debug_aranges -R .debug_rnglists \
	-R .debug_loclists "$tmp/debug.elf" "$out/debug-frame.elf"
ls -l "$out"
