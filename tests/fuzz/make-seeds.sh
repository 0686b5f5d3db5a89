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
# A read group: samples carrying the group's counts (PERF_SAMPLE_READ with
# PERF_FORMAT_GROUP), of two events sharing the rings.
perf record -q -e '{page-faults,context-switches}:S' -c 1 --call-graph dwarf,64 \
	-o "$out/perf-read-group.data" -- "$build/tests/workload" spin 0.05 >/dev/null 2>&1
# perf record -z's layout, made from perf's seed: its records cut every
# 5000 bytes (mid-record, as perf's writer may), each piece a zstd frame
# in COMPRESSED records of at most 4000 bytes (a frame spanning several);
# and the same with the second compressed record's zstd magic damaged.
python3 - "$out/perf.data" "$out/perf-z.data" "$out/perf-z-damaged.data" <<'PY'
import struct, subprocess, sys
b = open(sys.argv[1], 'rb').read()
off, size = struct.unpack_from('<QQ', b, 40)
nfeat = sum(bin(w).count('1') for w in struct.unpack_from('<4Q', b, 72))
data = b[off:off + size]
recs = b''
for i in range(0, len(data), 5000):
    z = subprocess.run(['zstd', '-q', '-c', '--no-check'], input=data[i:i + 5000],
                       stdout=subprocess.PIPE, check=True).stdout
    for j in range(0, len(z), 4000):
        recs += struct.pack('<IHH', 81, 0, 8 + len(z[j:j + 4000])) + z[j:j + 4000]
delta = len(recs) - size
table = bytearray(b[off + size:off + size + 16 * nfeat])
for k in range(nfeat):
    o, n = struct.unpack_from('<QQ', table, 16 * k)
    struct.pack_into('<QQ', table, 16 * k, o + delta, n)
head = bytearray(b[:off])
struct.pack_into('<QQ', head, 40, off, len(recs))
out = bytes(head) + recs + bytes(table) + b[off + size + 16 * nfeat:]
open(sys.argv[2], 'wb').write(out)
second = off + struct.unpack_from('<IHH', recs, 0)[2]
bad = bytearray(out)
bad[second + 8] ^= 0x5a
open(sys.argv[3], 'wb').write(bad)
PY
# A tracepoint's samples with their payloads (PERF_SAMPLE_RAW) and the
# formats that decode them (TRACING_DATA).
"$build/tools/dwarfsample" record -e syscalls:sys_enter_write --stack-size 64 \
	-o "$out/dwarfsample-tracepoint.data" -- "$build/tests/stat-workload" write 3 2>/dev/null
ls -l "$out"

# The unwinder's ELF seeds: a few small functions with the shapes of CFI
# the parsers see (push/pop rows, remembered states, a frame pointer),
# linked without libc so the files stay small: with .eh_frame_hdr, with
# .eh_frame alone, and with only .debug_frame (plain and compressed).
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
only_frame() { # objcopy arguments...
	objcopy -R .comment -R .debug_info -R .debug_abbrev -R .debug_line \
		-R .debug_str -R .debug_line_str -R .debug_aranges -R .debug_rnglists \
		-R .debug_loclists "$@"
}
only_frame "$tmp/debug.elf" "$out/debug-frame.elf"
# The same .debug_frame compressed, so the fuzzer reaches the inflating
# path: SHF_COMPRESSED with zlib and zstd, and the older .zdebug_frame.
only_frame --compress-debug-sections=zlib "$tmp/debug.elf" "$out/debug-frame-zlib.elf"
only_frame --compress-debug-sections=zstd "$tmp/debug.elf" "$out/debug-frame-zstd.elf"
only_frame --compress-debug-sections=zlib-gnu "$tmp/debug.elf" "$out/zdebug-frame.elf"
ls -l "$out"

# The symbolizer's seeds: small programs with symbols and DWARF -- C with
# functions inlined into each other, C++ with namespaces and templates --
# and a debug file alone, its sections compressed.
out=$src/tests/fuzz/seeds-symbolize
mkdir -p "$out"
cat >"$tmp/s.c" <<'C'
#include <stdio.h>
static volatile int v;
static inline __attribute__((always_inline)) int in2(int x) { return x * v + 1; }
static inline __attribute__((always_inline)) int in1(int x) { return in2(x) + in2(x + 1); }
__attribute__((noinline)) int outer(int x) { return in1(x) * 3; }
int main(void) { printf("%d\n", outer(v)); return 0; }
C
cat >"$tmp/s.cc" <<'C'
#include <cstdio>
namespace ns {
template <typename T> struct Box {
	T v;
	__attribute__((noinline)) T twice(T x) { return x * 2 + v; }
};
inline int helper(int x) { return Box<int>{ x }.twice(x); }
}
int main() { std::printf("%d\n", ns::helper(3)); return 0; }
C
cc -O2 -g -Wl,--build-id "$tmp/s.c" -o "$out/inline.elf"
c++ -O2 -g -Wl,--build-id "$tmp/s.cc" -o "$out/cxx.elf"
objcopy --only-keep-debug --compress-debug-sections=zlib "$out/inline.elf" "$out/debug-only.elf"
# PLT stubs of every kind (symbols/plt.c): .plt beside IBT's .plt.sec,
# .plt.got, an IFUNC's IRELATIVE stub (test-plt's fixture).
cc -O0 -fno-builtin -fcf-protection=full -Wl,-z,ibtplt -Wl,--build-id -s \
	"$src/tests/plt-calls.c" -o "$out/plt.elf"
ls -l "$out"

# The jitdump reader's seeds: made-up files with every record kind, in
# both byte orders (jitdump-seeds.c, from tests/jitdump-writer.h).
out=$src/tests/fuzz/seeds-jitdump
mkdir -p "$out"
cc -O1 -o "$tmp/jitdump-seeds" "$src/tests/fuzz/jitdump-seeds.c"
"$tmp/jitdump-seeds" "$out"
ls -l "$out"

# The index cache's reader: the index files of test-symindex's small
# builds (C and C++ by gcc and clang, and the assembly's aliases), as
# test-symindex-file writes them: each whole, and partial (of its first
# unit: its cover and units tables).
out=$src/tests/fuzz/seeds-symindex
mkdir -p "$out"
# (Not the one without DWARF: it has no index.)
"$build/tests/test-symindex-file" --seeds "$out" $(ls "$build"/tests/symindex-*.so | grep -v nodwarf)
ls -l "$out"

# The epilogue decoder's seeds: functions sampled in their epilogues, as
# GCC lays them out, packed as fuzz-leafexit.c reads its input.  Each is
# assembled here behind a caller whose return address is on the stack,
# the outermost frame; a line ".cfi OP ARG" is one of the target's CFI
# operations at that point (GCC's .cfi_* directives for the same code),
# "at:" the sampled address.  Behind a caller that keeps rbp as its frame
# pointer, the rbp the leaf popped is needed: its CFI alone ends the
# stack in an error, and libunwind's path steps the leaf by its code too.
out=$src/tests/fuzz/seeds-leafexit
mkdir -p "$out"
python3 - "$out" "$tmp" <<'PY'
import re, struct, subprocess, sys
out, tmp = sys.argv[1], sys.argv[2]
OPS = ['FUNCTION', 'GAP', 'CFA_RSP', 'CFA_RBP', 'RBP_AT', 'RBP_SAME', 'RA_AT']
CODE = 0x555555554000 + 0x1c00   # where the target maps the code
SP = 0x7ffd12345000
CALLER = ['caller:', 'call f', 'ret_to:', 'ret', 'f:', '.cfi FUNCTION 0']
FRAMED = ['caller:', 'push %rbp', '.cfi CFA_RSP 2', '.cfi RBP_AT 2', 'mov %rsp,%rbp',
          '.cfi CFA_RBP 2', 'call f', 'ret_to:', 'pop %rbp', '.cfi CFA_RSP 1', 'ret', 'f:',
          '.cfi FUNCTION 0']

def assemble(caller, lines):
    src, cfi = [], []
    for line in caller + lines:
        m = re.match(r'\.cfi (\w+) (\d+)$', line)
        if m:
            src.append('c%d:' % len(cfi))
            cfi.append((OPS.index(m.group(1)), int(m.group(2))))
        else:
            src.append(line)
    # The file ends with the code: int3 up to the next function's alignment
    # behind it, a word at least, so that the last instruction can be read.
    src += ['.fill 8, 1, 0xcc', '.balign 16, 0xcc']
    open(tmp + '/e.s', 'w').write('\n'.join(src) + '\n')
    subprocess.run(['as', '--64', '-o', tmp + '/e.o', tmp + '/e.s'], check=True)
    subprocess.run(['objcopy', '-O', 'binary', '-j', '.text', tmp + '/e.o', tmp + '/e.bin'],
                   check=True)
    nm = subprocess.run(['nm', tmp + '/e.o'], stdout=subprocess.PIPE, check=True, text=True)
    at = {name: int(addr, 16) for addr, _, name in map(str.split, nm.stdout.splitlines())}
    ops, pos = b'', 0
    for k, (op, arg) in enumerate(cfi):
        ops += bytes([at['c%d' % k] - pos, op, arg])
        pos = at['c%d' % k]
    return open(tmp + '/e.bin', 'rb').read(), ops, at

def seed(name, lines, rbp, stack, caller=CALLER):
    code, ops, at = assemble(caller, lines)
    words = [CODE + at['ret_to'] if w == 'ret_to' else w for w in stack]
    head = struct.pack('<QQBBB', SP, (rbp - SP) % 2**64, at['at'], len(code), len(ops) // 3)
    open('%s/%s' % (out, name), 'wb').write(head + ops + code +
                                            struct.pack('<%dQ' % len(words), *words))

# rbp and rbx saved, and 8 bytes of frame.
entry = ['push %rbp', '.cfi CFA_RSP 2', '.cfi RBP_AT 2', 'push %rbx', '.cfi CFA_RSP 3',
         'sub $8,%rsp', '.cfi CFA_RSP 4']
frame_gone = ['add $8,%rsp', '.cfi CFA_RSP 3']
pops = ['pop %rbx', '.cfi CFA_RSP 2', 'pop %rbp', '.cfi CFA_RSP 1']
body = entry + ['mov %edi,%eax'] + frame_gone
seed('pop-rbx-rbp-ret', body + pops + ['at: ret'], SP + 0x80, ['ret_to', 0])
seed('pop-rbx-rbp-ret-framed', body + pops + ['at: ret'], SP + 8, ['ret_to', 0, 0], FRAMED)
seed('pop-rbx-rbp-ret-at-pop', body + ['at:'] + pops + ['ret'],
     0x1234, [0x5a5a, SP + 0x80, 'ret_to', 0])
# Sampled at the endbr64 -fcf-protection puts after a call that returns
# twice (setjmp's), on the way out.
seed('endbr64-after-call',
     entry + ['call f', 'at: endbr64', 'mov %ebx,%eax'] + frame_gone + pops + ['ret'],
     0x1234, [0, 0x5a5a, SP + 0x80, 'ret_to', 0])
# Tail calls: a jump to the next function's entry, and through a register.
tail = body + pops + ['at: jmp g', 'g:', '.cfi FUNCTION 0', 'mov %edi,%eax', 'ret']
seed('jmp-tail-call', tail, SP + 0x80, ['ret_to', 0])
seed('jmp-tail-call-framed', tail, SP + 8, ['ret_to', 0, 0], FRAMED)
seed('jmp-indirect', body + pops + ['at: jmp *%rax'], SP + 0x80, ['ret_to', 0])
seed('add-pop-r12-ret', ['push %r12', '.cfi CFA_RSP 2', 'sub $0x18,%rsp', '.cfi CFA_RSP 5',
                         'mov %edi,%eax', 'at: add $0x18,%rsp', '.cfi CFA_RSP 2', 'pop %r12',
                         '.cfi CFA_RSP 1', 'ret'],
     0x1234, [1, 2, 3, 0x5a5a, 'ret_to', 0])
# rbp popped, r12 still to pop: the row has rbp below the stack pointer.
r12_last = ['push %r12', '.cfi CFA_RSP 2', 'push %rbp', '.cfi CFA_RSP 3', '.cfi RBP_AT 3',
            'push %rbx', '.cfi CFA_RSP 4', 'mov %edi,%eax', 'pop %rbx', '.cfi CFA_RSP 3',
            'pop %rbp', '.cfi CFA_RSP 2', 'at: pop %r12', '.cfi CFA_RSP 1', 'ret']
seed('pop-rbp-pop-r12-ret', r12_last, SP + 0x80, [0x5a5a, 'ret_to', 0])
seed('pop-rbp-pop-r12-ret-framed', r12_last, SP + 0x10, [0x5a5a, 'ret_to', 0, 0], FRAMED)
leave = ['push %rbp', '.cfi CFA_RSP 2', '.cfi RBP_AT 2', 'mov %rsp,%rbp', '.cfi CFA_RBP 2',
         'sub $0x20,%rsp', 'mov %edi,-4(%rbp)', 'mov -4(%rbp),%eax']
seed('leave-ret', leave + ['at: leave', '.cfi CFA_RSP 1', 'ret'],
     SP + 0x20, [0, 0, 0, 0, SP + 0x80, 'ret_to', 0])
seed('leave-ret-at-ret', leave + ['leave', '.cfi CFA_RSP 1', 'at: ret'],
     SP + 0x80, ['ret_to', 0])
seed('lea-pops-ret', ['push %rbp', '.cfi CFA_RSP 2', '.cfi RBP_AT 2', 'mov %rsp,%rbp',
                      '.cfi CFA_RBP 2', 'push %r12', 'push %rbx', 'sub $0x10,%rsp',
                      'mov %edi,%eax', 'at: lea -0x10(%rbp),%rsp', 'pop %rbx', 'pop %r12',
                      'pop %rbp', '.cfi CFA_RSP 1', 'ret'],
     SP + 0x20, [0, 0, 0x5a5a, 0x5a5b, SP + 0x80, 'ret_to', 0])
# rbp just above the sampled rsp, as no compiled frame has it: the lea
# would put rsp below the copy, where no step may take its return address
# or a register from (the decoder once gave cfa_off 0 here).
seed('lea-below-sp', ['push %rbp', '.cfi CFA_RSP 2', '.cfi RBP_AT 2', 'mov %rsp,%rbp',
                      '.cfi CFA_RBP 2', 'push %r12', 'push %rbx', 'sub $0x10,%rsp',
                      'mov %edi,%eax', 'at: lea -0x10(%rbp),%rsp', 'nop', 'nop', 'nop', 'nop',
                      '.cfi CFA_RSP 1', 'ret'],
     SP + 8, [0x5a5a, 0x5a5b, SP + 0x80, 'ret_to', 0])
# The return value moved after the pops; and rbx written after its pop,
# which is no epilogue.
pop_rbp = ['push %rbp', '.cfi CFA_RSP 2', '.cfi RBP_AT 2', 'mov %edi,%ebx', 'pop %rbp',
           '.cfi CFA_RSP 1']
seed('pop-rbp-mov-ret', pop_rbp + ['at: mov %ebx,%eax', 'ret'], SP + 0x80, ['ret_to', 0])
seed('pop-rbp-mov-rbx-ret', pop_rbp + ['at: mov %eax,%ebx', 'ret'], SP + 0x80, ['ret_to', 0])
seed('pop-rbp-movzbl-vzeroupper-ret', pop_rbp + ['at: movzbl %al,%eax', 'vzeroupper', 'cltq',
                                                 'nopw 0x0(%rax,%rax,1)', 'ret'],
     SP + 0x80, ['ret_to', 0])
PY
ls -l "$out"
