#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Check a perf-script listing of a toolchain-matrix workload (one of
work.c, work.cc, work.rs, work.go: main -> recurse DEPTH frames deep ->
spin, whose loop calls an inlined helper and a shared library's function)
against an independent symbolizer, llvm-symbolizer --inlining.

usage: tc-check.py LISTING --depth D --recurse REGEX --spin REGEX --bottom REGEX
                   --outermost REGEX [--label TEXT]
       tc-check.py LISTING --inlined NO-INLINE-LISTING [--label TEXT]

The samples looked at are those "in the bottom loop": the samples whose
innermost frame llvm-symbolizer names as one of the --bottom functions
(a regular expression: spin, the helper inlined in it, the library's
function).  The vDSO's
clock and the start-up are not; there is nothing to check in them.  Over
those samples:
  (a) complete: at least 99 % reach the toolchain's outermost frame (the
      last frame is --outermost: _start, or runtime.goexit for a goroutine);
      the three are regular expressions over normalised names);
  (b) depth: every one has exactly D frames in --recurse, the innermost
      called from --spin (spin: found even when the library's function
      sampled has no frame of its own, as Go's leaves);
  (c) names: at least 99.9 % of their frames (a machine frame with the
      functions inlined at it) have the same chain of function names, and
      where the listing has them (report's srcline field) the same source
      line for each (file base name and line), as llvm-symbolizer gives for
      the same address (the file offset the listing prints, turned into the
      file's link-time address with its program headers), and so do
      99.9 % of the innermost frames: the 41 recursive frames of every
      sample would hide a name wrong in every leaf, where the helper and
      the standard library's templates are inlined.

With --inlined, any program's listing (test-agree.sh's gcc, whose cc1
is too large for perf script's own inline lookups: minutes), and only
the functions inlined at each frame: over every frame where the listing
or llvm-symbolizer has functions inlined, at least 99.9 % must have the
same chain of them, innermost first (normalised as below), and there
must be at least 10 such frames.  The function they are inlined into is
left to a comparison of NO-INLINE-LISTING with perf script --no-inline,
which names it by its ELF symbol; NO-INLINE-LISTING (report --no-inline
of the same samples) also tells the frames apart and gives each its file
(read_split()).

Written in Python rather than C like agree-compare.c: it runs a
subprocess per file, reads ELF program headers and JSON, and rewrites
demangled names, which is short here; Python is there wherever meson is.

Names are compared after the same normalisation on both sides
(normalise()), which removes only what says nothing about which function
a frame is:
  - parameter lists and the cv/ref qualifiers after them: llvm-symbolizer
    prints a C++ function's linkage name demangled in full, perf-style
    names of inlined frames carry none (overloads do not occur in the
    workloads);
  - a template function's return type, which the demangler prints first;
  - "> >" spelt ">>", and a lambda's closure type as LLVM spells it
    ('lambda'(int), 'lambda0'(int) for libiberty's {lambda(int)#1},
    {lambda(int)#2}): demanglers differ there;
  - in a legacy-mangled Rust name, which LLVM 14 demangles as C++: the
    hash ("::h0123456789abcdef"), which rustc-demangle's alternate form
    (what Rust tools print) drops, and the escapes ($LT$, $u7b$, "..")
    that it decodes;
  - the suffix of a function LLVM cloned (".llvm.1234", which
    llvm-symbolizer prints " (.llvm.1234)");
  - an ELF symbol's version ("__libc_start_main@@GLIBC_2.34"), which the
    agent's pprof keeps, as perf report does, where the function is
    named by its symbol, and llvm-symbolizer, naming it from DWARF, has
    not.
Everything else -- namespaces, classes, template arguments, lambdas,
crate and module paths -- must be identical: an inlined frame named
without its scope is a disagreement.  llvm-symbolizer names an inlined
function by its DW_AT_linkage_name, qualified (std::__unguarded_partition<...>,
core::ops::function::FnOnce::call_once), which is what dwarfsample prints
where perf and addr2line print the bare DW_AT_name; so no exception is
needed for our qualified names.  llvm-symbolizer rather than eu-addr2line:
it demangles Rust's v0 names and writes JSON.
"""
import argparse
import functools
import json
import os
import re
import struct
import subprocess
import sys

FRAME = re.compile(r'^\s*([0-9a-f]+) (.*) \((.*)\)$')
SYMOFF = re.compile(r'\+0x[0-9a-f]+$')
RUST_HASH = re.compile(r'::h[0-9a-f]{16}$')
RUST_ESCAPE = re.compile(r'\$(SP|BP|RF|LT|GT|LP|RP|C|u[0-9a-f]{2,6})\$')
RUST_ESCAPES = {'SP': '@', 'BP': '*', 'RF': '&', 'LT': '<', 'GT': '>', 'LP': '(',
                'RP': ')', 'C': ','}
SYMBOL_VERSION = re.compile(r'@@?[A-Za-z0-9_.]+$')
LLVM_CLONE = re.compile(r'( \(\.|\.| \[clone \.)llvm\.[0-9]+[)\]]?$')
LAMBDA = re.compile(r'\{lambda\(([^{}]*)\)#([0-9]+)\}')
QUALIFIERS = (' const', ' volatile', ' &&', ' &')
OPEN = '(<{['
CLOSE = ')>}]'


def listing_lines(path):
    """Samples as lists of frame lines, leaf first; a line is (file offset,
    name, dso or "inlined", [source lines]), the source lines
    (basename:line) when the listing has them."""
    samples = []
    lines = None
    with open(path, encoding='utf-8', errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            if not line:
                lines = None
                continue
            if line.startswith('  ') and lines:
                lines[-1][3].append(srcline(*line.strip().rsplit(':', 1)))
                continue
            if not line.startswith('\t'):
                lines = []
                samples.append(lines)
                continue
            m = FRAME.match(line)
            if not m or lines is None:
                sys.exit(f'{path}: not a frame line: {line!r}')
            lines.append((int(m.group(1), 16), SYMOFF.sub('', m.group(2)), m.group(3), []))
    return samples


def read_listing(path):
    """Samples as lists of machine frames, leaf first; a frame is
    (file offset, dso, [names, innermost first], [source lines]), the
    source lines (basename:line, one per name) when the listing has them."""
    samples = []
    for lines in listing_lines(path):
        frames = []
        for off, name, dso, src in lines:
            if frames and frames[-1][1] is None and frames[-1][0] == off:
                frames[-1][2].append(name)
            else:
                frames.append([off, None, [name], []])
            frames[-1][3].extend(src)
            if dso != 'inlined':
                frames[-1][1] = dso
        samples.append(frames)
    return samples


def read_split(path, frames_path):
    """read_listing(path)'s samples, each machine frame told apart and
    given its file by frames_path, a --no-inline listing of the same
    samples.  perf's layout alone cannot tell apart consecutive frames at
    one address whose lines all say "(inlined)" (a recursion through a
    function whose DWARF name is not its ELF symbol, as glibc's
    msort_with_tmp): the lines at an address are shared evenly by the
    frames there, which have the same functions."""
    samples, listing, machine = [], listing_lines(path), listing_lines(frames_path)
    if len(listing) != len(machine):
        sys.exit(f'{path} and {frames_path} list {len(listing)} and {len(machine)} samples')
    for lines, frames in zip(listing, machine):
        out, i, k = [], 0, 0
        while k < len(frames):
            off, same = frames[k][0], 1
            while k + same < len(frames) and frames[k + same][0] == off:
                same += 1
            j = i
            while j < len(lines) and lines[j][0] == off:
                j += 1
            if (j - i) % same:
                # Uneven: all to the first frame, which then differs.
                shares = [lines[i:j]] + [[]] * (same - 1)
            else:
                w = (j - i) // same
                shares = [lines[i + n * w:i + (n + 1) * w] for n in range(same)]
            for n, at in enumerate(shares):
                out.append([off, frames[k + n][2], [name for _, name, _, _ in at],
                            [s for _, _, _, src in at for s in src]])
            i, k = j, k + same
        samples.append(out)
    return samples


def srcline(file, line):
    """A source line as both sides are compared: the file's base name (the
    directories are spelt differently: comp_dir joined or not) and the
    line, or "??:0" where there is none."""
    file = os.path.basename(file) if file and file != '??' else '??'
    return f'{file}:{line}' if file != '??' and int(line) else '??:0'


def load_segments(path):
    """The PT_LOAD headers of a 64-bit little-endian ELF file, as
    (file offset, link-time address, size in the file, flags)."""
    with open(path, 'rb') as f:
        ehdr = f.read(64)
        if ehdr[:6] != b'\x7fELF\x02\x01':
            return []
        phoff, = struct.unpack_from('<Q', ehdr, 32)
        phentsize, phnum = struct.unpack_from('<HH', ehdr, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
    segs = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz = \
            struct.unpack_from('<IIQQQQ', table, i * phentsize)
        if p_type == 1:
            segs.append((p_offset, p_vaddr, p_filesz, p_flags))
    return segs


def link_address(segs, off):
    for p_offset, p_vaddr, p_filesz, _ in segs:
        if p_offset <= off < p_offset + p_filesz:
            return p_vaddr + off - p_offset
    return None


def in_code(segs, off):
    return any(p_offset <= off < p_offset + p_filesz and p_flags & 1
               for p_offset, _, p_filesz, p_flags in segs)


def llvm_symbolizer(kind, queries):
    """llvm-symbolizer's frames, innermost first, for each (file, link-time
    address) of queries, with function names of this --functions kind:
    one process for every file."""
    if not queries:
        return []
    out = subprocess.run(['llvm-symbolizer', '--inlining', '--output-style=JSON',
                          '--functions=' + kind],
                         input=''.join(f'"{f}" {a:#x}\n' for f, a in queries),
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line)['Symbol'] for line in out.splitlines()]


def symbolize(wanted, segs, short):
    """{(file, offset): [(function, file, line), innermost first, then the
    outermost's DWARF name]} from llvm-symbolizer, for each offset of
    wanted[file] that lies in a segment of the file.  The DWARF names
    (see same_names()) are asked for only at the offsets in short."""
    queries = []
    for dso, offsets in wanted.items():
        for off in sorted(offsets):
            addr = link_address(segs[dso], off)
            if addr is not None:
                queries.append((dso, off, addr))
    result = {}
    for (dso, off, _), syms in zip(queries, llvm_symbolizer(
            'linkage', [(dso, addr) for dso, _, addr in queries])):
        frames = [(s['FunctionName'], s['FileName'], s['Line']) for s in syms]
        result[dso, off] = frames + [frames[-1][0]]
    queries = [q for q in queries if q[1] in short]
    for (dso, off, _), syms in zip(queries, llvm_symbolizer(
            'short', [(dso, addr) for dso, _, addr in queries])):
        result[dso, off][-1] = syms[-1]['FunctionName']
    return result


@functools.lru_cache(maxsize=None)
def symbol_addresses(dso):
    """{name: {addresses}} of the functions in dso's symbol tables (nm)."""
    table = {}
    for flag in ([], ['-D']):
        out = subprocess.run(['nm', '--defined-only'] + flag + [dso], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in 'TtWwiI':
                table.setdefault(normalise(parts[2]), set()).add(int(parts[0], 16))
    return table


def aliases(dso, a, b):
    """Whether a and b are ELF symbols of dso at one address: two names of
    one function (__libc_start_main and __libc_start_main_impl), of
    which llvm-symbolizer picks one and perf the other."""
    if not dso or not dso.startswith('/'):
        return False
    table = symbol_addresses(dso)
    return bool(table.get(a, set()) & table.get(b, set()))


def same_names(ours, lines, theirs, dso=None):
    """Whether our names of a frame (innermost first) are llvm-symbolizer's.
    The outermost may be the ELF symbol, as llvm-symbolizer names it, or
    the DWARF function: perf's layout prints the DWARF name, marked
    "(inlined)", where the two differ, as for an alias
    (__libc_start_main_impl at __libc_start_main); or, in a file without
    DWARF there, another symbol at the same address (aliases()).  Where
    the listing has source lines, they must be llvm-symbolizer's too."""
    if not theirs or len(ours) != len(theirs) - 1:
        return False
    if lines and lines != [srcline(file, line) for _, file, line in theirs[:-1]]:
        return False
    ours = [normalise(n) for n in ours]
    want = [normalise(fn) for fn, _, _ in theirs[:-1]]
    return ours[:-1] == want[:-1] and (ours[-1] in (want[-1], normalise(theirs[-1])) or
                                       aliases(dso, ours[-1], want[-1]))


def inlined_names(names):
    """The functions inlined at a frame (innermost first, the function
    they are inlined into left out), normalised."""
    return [normalise(n) for n in names[:-1]]


def check_inlined(samples, label):
    """--inlined: print the figures and the checks; whether all hold."""
    theirs = oracle(samples)
    seen = same = 0
    examples = []
    for frame in (frame for frames in samples for frame in frames):
        off, dso, ours, _ = frame
        t = theirs(frame)
        want = None if t is None else inlined_names([fn for fn, _, _ in t[:-1]])
        if len(ours) < 2 and not want:
            continue
        seen += 1
        if inlined_names(ours) == want:
            same += 1
        elif len(examples) < 5:
            examples.append(f'{off:#x} in {dso}: ours {ours}, llvm-symbolizer {t}')
    print(f'# {label}: {len(samples)} samples, {seen} frames with functions inlined, by the '
          f'listing or llvm-symbolizer: {same} the same '
          f'({100.0 * same / seen if seen else 0.0:.3f}%)')
    for e in examples:
        print(f'#   differs: {e}')
    ok = True
    for what, good in (
            (f'at least 10 frames with functions inlined ({seen})', seen >= 10),
            ('at least 99.9% of them with the functions llvm-symbolizer finds inlined there',
             seen > 0 and same * 1000 >= seen * 999)):
        print(f'{"ok" if good else "not ok"} - {label}: {what}')
        ok = ok and good
    return ok


def closing_group(name, end):
    """The index of the bracket opening the group that ends at name[end]."""
    depth = 0
    for i in range(end, -1, -1):
        if name[i] in CLOSE:
            depth += 1
        elif name[i] in OPEN:
            depth -= 1
            if not depth:
                return i
    return -1


def lambda_llvm(m):
    """libiberty's {lambda(ARGS)#N} as LLVM's demangler spells it."""
    n = int(m.group(2))
    return f"'lambda{n - 2 if n > 1 else ''}'({m.group(1)})"


def rust_unescape(m):
    code = m.group(1)
    return RUST_ESCAPES[code] if code in RUST_ESCAPES else chr(int(code[1:], 16))


@functools.lru_cache(maxsize=None)
def normalise(name):
    name = LLVM_CLONE.sub('', name)
    name = SYMBOL_VERSION.sub('', name)
    if RUST_ESCAPE.search(name):
        name = re.sub(r'(^|::)_\$', r'\1$', name)
        name = RUST_ESCAPE.sub(rust_unescape, name).replace('..', '::')
    name = RUST_HASH.sub('', name)
    name = LAMBDA.sub(lambda_llvm, name)
    name = name.replace('> >', '>>').replace('> >', '>>')
    stripped = True
    while stripped:
        stripped = False
        for q in QUALIFIERS:
            if name.endswith(q) and name.endswith(')' + q):
                name = name[:-len(q)]
                stripped = True
    if name.endswith(')'):
        start = closing_group(name, len(name) - 1)
        if start > 0 and not name[:start].endswith('operator'):
            name = name[:start]
    # The return type: whatever precedes the last space outside brackets.
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        c = name[i]
        if c in CLOSE:
            depth += 1
        elif c in OPEN:
            depth -= 1
        elif c == ' ' and not depth and not name[:i].endswith('operator'):
            return name[i + 1:]
    return name


def oracle(samples):
    """A function giving llvm-symbolizer's frames for a frame of samples
    (see symbolize()), or None where it has none."""
    isfile = functools.lru_cache(maxsize=None)(os.path.isfile)
    wanted = {}
    for frames in samples:
        for off, dso, _, _ in frames:
            if dso and dso.startswith('/') and isfile(dso):
                wanted.setdefault(dso, set()).add(off)
    segs = {dso: load_segments(dso) for dso in wanted}
    # perf's layout labels a frame's last line "(inlined)" instead of with
    # its file when the function DWARF names there is not the ELF symbol
    # (__libc_start_main_impl at __libc_start_main): such a frame is
    # looked up in each file whose code holds its offset, and belongs to
    # the one that names it as we do, if any.
    short = set()
    for frames in samples:
        for off, dso, _, _ in frames:
            if dso is None:
                short.add(off)
                for d in wanted:
                    if in_code(segs[d], off):
                        wanted[d].add(off)
    names = symbolize(wanted, segs, short)

    def theirs(frame):
        off, dso, ours, lines = frame
        if dso is not None:
            return names.get((dso, off))
        found = [names[d, off] for d in wanted
                 if (d, off) in names and in_code(segs[d], off)]
        for t in found:
            if same_names(ours, lines, t):
                return t
        return found[0] if found else None
    return theirs


class Figures:
    """The counts behind (a), (b) and (c)."""

    def __init__(self, args):
        self.args = args
        self.bottom = re.compile(args.bottom)
        self.outermost = re.compile(args.outermost)
        self.recurse = re.compile(args.recurse)
        self.spin = re.compile(args.spin)
        self.looked = self.complete = self.right_depth = 0
        self.frames_seen = self.frames_same = self.leaves_same = 0
        self.depths = {}
        self.examples = []

    def add(self, frames, theirs):
        """Count a sample, if it is in the bottom loop."""
        found = [theirs(frame) for frame in frames]
        if not found or not found[0] or not self.bottom.fullmatch(normalise(found[0][0][0])):
            return
        self.looked += 1
        # The function of each frame, as llvm-symbolizer names it.
        funcs = [normalise(t[-2][0]) if t else '' for t in found]
        if self.outermost.fullmatch(funcs[-1]):
            self.complete += 1
        depth = sum(1 for f in funcs if self.recurse.fullmatch(f))
        self.depths[depth] = self.depths.get(depth, 0) + 1
        first = next((i for i, f in enumerate(funcs) if self.recurse.fullmatch(f)), 0)
        if depth == self.args.depth and first and self.spin.fullmatch(funcs[first - 1]):
            self.right_depth += 1
        for i, ((off, dso, ours, lines), t) in enumerate(zip(frames, found)):
            self.frames_seen += 1
            if same_names(ours, lines, t, dso):
                self.frames_same += 1
                self.leaves_same += not i
            elif len(self.examples) < 5:
                self.examples.append(f'{off:#x} in {dso}: ours {ours} {lines}, '
                                     f'llvm-symbolizer {t}')

    def report(self, nr_samples):
        """Print the figures and the checks; whether all hold."""
        a, label = self.args, self.args.label
        n = self.looked

        def pct(k, d):
            return f'{100.0 * k / d if d else 0.0:.2f}% ({k}/{d})'

        print(f'# {label}: {nr_samples} samples, {n} in the bottom loop; '
              f'recursion depths seen {dict(sorted(self.depths.items()))}')
        print(f'# {label}: (a) complete to {a.outermost} {pct(self.complete, n)}; '
              f'(b) depth {a.depth} below spin {pct(self.right_depth, n)}; '
              f'(c) frames named as llvm-symbolizer does '
              f'{pct(self.frames_same, self.frames_seen)}, the innermost '
              f'{pct(self.leaves_same, n)}')
        for e in self.examples:
            print(f'#   differs: {e}')
        ok = True
        for what, good in (
                ('at least 100 samples in the bottom loop', n >= 100),
                ('(a) at least 99% complete', self.complete * 100 >= n * 99),
                (f'(b) depth {a.depth} below spin in every sample', self.right_depth == n),
                ('(c) at least 99.9% of frames named alike',
                 self.frames_same * 1000 >= self.frames_seen * 999),
                ('(c) at least 99.9% of the innermost frames named alike',
                 self.leaves_same * 1000 >= n * 999)):
            good = good and n > 0
            print(f'{"ok" if good else "not ok"} - {label}: {what}')
            ok = ok and good
        return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('listing')
    ap.add_argument('--inlined', metavar='NO-INLINE-LISTING')
    ap.add_argument('--depth', type=int)
    ap.add_argument('--recurse')
    ap.add_argument('--spin')
    ap.add_argument('--bottom')
    ap.add_argument('--outermost')
    ap.add_argument('--label', default='')
    args = ap.parse_args()

    if args.inlined:
        return 0 if check_inlined(read_split(args.listing, args.inlined), args.label) else 1
    if None in (args.depth, args.recurse, args.spin, args.bottom, args.outermost):
        ap.error('without --inlined: --depth, --recurse, --spin, --bottom and --outermost')
    samples = read_listing(args.listing)
    theirs = oracle(samples)
    figures = Figures(args)
    for frames in samples:
        figures.add(frames, theirs)
    return 0 if figures.report(len(samples)) else 1


if __name__ == '__main__':
    sys.exit(main())
