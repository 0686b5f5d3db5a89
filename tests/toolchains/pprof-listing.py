#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turn `go tool pprof -raw` output into the perf-script listing that
tc-check.py reads, so that the agent's windows are checked against
llvm-symbolizer as the live command's listing is.

usage: pprof-listing.py RAW > LISTING

pprof decodes the profile, not this project: the samples (each repeated
as many times as its samples/count value), their locations leaf first,
and each location's lines innermost first, as pprof's Location.line is
ordered.  A function is named by its system name, which -raw prints in
parentheses where go tool pprof shortened the name for display (C++
template arguments).  A frame's file offset is its address less its mapping's start
plus the mapping's file offset; every line of a location but the last is
an inlined function, printed as perf prints one ("(inlined)"), and each
gets its source line, as `report -F ...,srcline` prints them.
"""
import re
import sys

SAMPLE = re.compile(r'^\s+(\d+)\s+\d+: ([\d ]+)$')
LOCATION = re.compile(r'^\s+(\d+): 0x([0-9a-f]+) M=(\d+) (.*) (\S*):(\d+) s=\d+(?:\((.*)\))?$')
BARE = re.compile(r'^\s+(\d+): 0x([0-9a-f]+)(?: M=(\d+))?\s*$')
INLINED = re.compile(r'^\s+(.*) (\S*):(\d+) s=\d+(?:\((.*)\))?$')
MAPPING = re.compile(r'^(\d+): 0x([0-9a-f]+)/0x([0-9a-f]+)/0x([0-9a-f]+) (\S+)')


def main():
    section = None
    samples, locations, mappings = [], {}, {}
    last = None
    with open(sys.argv[1], encoding='utf-8') as f:
        for line in f:
            line = line.rstrip('\n')
            if line in ('Samples:', 'Locations', 'Mappings'):
                section = line
                continue
            if section == 'Samples:':
                m = SAMPLE.match(line)
                if m:
                    samples.append((int(m.group(1)), [int(x) for x in m.group(2).split()]))
            elif section == 'Locations':
                m = LOCATION.match(line)
                if m:
                    last = [int(m.group(2), 16), int(m.group(3)),
                            [(m.group(7) or m.group(4), m.group(5), m.group(6))]]
                    locations[int(m.group(1))] = last
                    continue
                m = BARE.match(line)
                if m:
                    # An address nothing names, in no mapping or in one.
                    last = None
                    locations[int(m.group(1))] = [int(m.group(2), 16), int(m.group(3) or 0),
                                                  [('[unknown]', '', '0')]]
                    continue
                m = INLINED.match(line)
                if m and last:
                    last[2].append((m.group(4) or m.group(1), m.group(2), m.group(3)))
            elif section == 'Mappings':
                m = MAPPING.match(line)
                if m:
                    mappings[int(m.group(1))] = (int(m.group(2), 16), int(m.group(4), 16),
                                                 m.group(5))
    if not samples or not locations:
        sys.exit(f'{sys.argv[1]}: no samples or no locations: not pprof -raw output')
    out = []
    for count, ids in samples:
        text = ['work 1 [000] 0.0: 1 cpu-clock:']
        for i in ids:
            addr, mapping, lines = locations[i]
            start, offset, path = mappings.get(mapping, (0, 0, '[unknown]'))
            if path == '[unknown]':
                start = offset = 0
            off = addr - start + offset
            for k, (name, file, lineno) in enumerate(lines):
                dso = path if k == len(lines) - 1 else 'inlined'
                text.append(f'\t{off:x} {name} ({dso})')
                text.append(f'  {file or "??"}:{lineno}')
        out.append('\n'.join(text) + '\n\n')
        out[-1] *= count
    sys.stdout.write(''.join(out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
