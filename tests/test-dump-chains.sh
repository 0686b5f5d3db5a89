#!/bin/sh
# dump -i's call chain entries against perf report -D's, on a file of the
# odd chains a kernel writes (chain-file.c): entries of 0 anywhere, a
# kernel part, a chain at the depth limit, every context marker, the user
# marker alone, and last the sample CI once saw cut ("user: 0x7f26c092b62a
# 0x" beside "0x0": the comparison's reading of perf's 0000000000000000
# left no digit).  The entries written are known, so each side is also
# checked against them; then a copy cut inside that last sample, and a
# dump to a full disk.  Nothing is sampled: no timing.
# usage: test-dump-chains.sh DWARFSAMPLE CHAIN_FILE
set -u
ds=$1
chain_file=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tests/chains.sh
. "$(dirname "$0")/chains.sh"
need_perf
make_tmp

"$chain_file" "$tmp/chains.data"
check "chain-file writes its file" test $? -eq 0
chains_agree "odd chains" "$tmp/chains.data"

# What chain-file.c wrote, each side read alone.
for side in perf our; do
	check "$side: 7 samples with chains" test "$(wc -l <"$tmp/$side.chains")" -eq 7
	check "$side: the last sample's entries are the user marker, 0x7f26c092b62a and 0" \
		grep -qx "callchain 3: user: 0x7f26c092b62a 0x0" "$tmp/$side.chains"
	check "$side: a 0 right after the user marker" \
		grep -qx "callchain 3: user: 0x0 0x401136" "$tmp/$side.chains"
	check "$side: 0s between and after addresses" \
		grep -qx "callchain 6: user: 0x401136 0x0 0x401150 0x0 0x0" "$tmp/$side.chains"
	check "$side: the kernel's part, then the user's, ending in 0" \
		grep -qx "callchain 7: kernel: 0xffffffff81001000 0xffffffff81002000 user: 0x401136 0x401150 0x0" \
		"$tmp/$side.chains"
	check "$side: the chain at the depth limit, whole (128 entries, 8 of them 0)" \
		sh -c 'grep "^callchain 128: user: 0x401010 0x401020 " "$1" | tr " " "\n" | grep -c "^0x0$" | grep -qx 8' \
		sh "$tmp/$side.chains"
	check "$side: hypervisor and guest markers named, and an entry above them" \
		grep -qx "callchain 12: context-0xffffffffffffffe0: 0xffffffff82000000 context-0xfffffffffffff800: context-0xfffffffffffff780: 0xffffffff81003000 context-0xfffffffffffff600: 0x400000 0x0 user: 0x401136 context-0xffffffffffffffff: 0x100000000000" \
		"$tmp/$side.chains"
	check "$side: the user marker alone" grep -qx "callchain 1: user:" "$tmp/$side.chains"
done
check "the sample with 0 last is the file's last record, dump's last line before its summary" \
	sh -c 'grep -v "^#" "$1" | tail -1 | grep -q " SAMPLE .* callchain 3: user: 0x7f26c092b62a 0x0$"' \
	sh "$tmp/dump.out"

# A copy cut 12 bytes before the end of the data section: inside that
# last sample (the round mark after it is 8 bytes).  dump -i reads up to
# the record before, says why it stopped, and exits 3; the samples it
# shows are perf's on the whole file but the last.
# shellcheck disable=SC2046 # the header's data offset and size, two words
set -- $(od -An -tu8 -j40 -N16 "$tmp/chains.data")
head -c $(($1 + $2 - 12)) "$tmp/chains.data" >"$tmp/cut.data"
grep -vx "callchain 3: user: 0x7f26c092b62a 0x0" "$tmp/perf.chains" >"$tmp/perf-cut.chains"
dump_chains "$tmp/cut.data" >"$tmp/our-cut.chains"
check "a copy cut inside the last sample: dump -i exits 3" test $? -eq 3 || cat "$tmp/dump.err"
check "and says the file ends short of its data section" \
	grep -q "cut.data is damaged: .* the file ends 12 bytes short of its data section" "$tmp/dump.err"
check "and shows the other 6 samples' entries as perf report -D does on the whole file" \
	sh -c '[ "$(wc -l <"$1")" -eq 6 ] && cmp -s "$1" "$2"' sh "$tmp/perf-cut.chains" "$tmp/our-cut.chains" ||
	diff "$tmp/perf-cut.chains" "$tmp/our-cut.chains"

# An output that cannot be written (a full disk) is a failure said, never
# a cut dump with status 0; on a damaged file too.
for f in chains cut; do
	"$ds" dump -i "$tmp/$f.data" >/dev/full 2>"$tmp/full.err"
	check "$f.data: dump -i to a full disk exits 1" test $? -eq 1
	check "$f.data: and says the dump is incomplete, and what to do" \
		grep -q "dump could not all be written to standard output (No space left on device), so it is incomplete; redirect it to a file with room" \
		"$tmp/full.err" || cat "$tmp/full.err"
done
exit $fail
