#!/bin/sh
# dwarfsample report on the offline fixture (tests/fixtures/demo-static):
# its perf-script layout, the summary, and what it says to wrong input.
# No privileges and no perf needed.
# usage: test-report.sh DWARFSAMPLE FIXTURES
# shellcheck disable=SC2317 # the helpers run through check
set -u
ds=$1
fx=$2/demo-static
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

"$ds" report -i "$fx/perf.data" --debug-dir "$fx" >"$tmp/out" 2>"$tmp/err"
check "report reads the fixture" test $? -eq 0
n=$(grep -c '^[^	]' "$tmp/out")
check "one header per sample (197: $n)" test "$n" -eq 197
# all_lines KIND REGEX: every header (KIND h) or frame line (KIND f) of
# the output matches REGEX.
all_lines() {
	if [ "$1" = h ]; then
		grep -v '^	' "$tmp/out" | grep -v '^$' >"$tmp/lines"
	else
		grep '^	' "$tmp/out" >"$tmp/lines"
	fi
	! grep -Evq "$2" "$tmp/lines"
}
# perf script's default layout: "comm tid [cpu] time: period event: ",
# then "\t%16x sym+0xoff (dso)" per frame, inlined functions as extra
# lines marked "(inlined)", then a blank line.
check "headers are perf script's" \
	all_lines h '^dwarfsample-dem +[0-9]+ \[00[01]\] +[0-9]+\.[0-9]{6}: +10101010 cpu-clock: $'
check "frame lines are perf script's, addresses right-aligned in 16 columns" \
	all_lines f '^	[ 0-9a-f]{16} [A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+ \((inlined|/tmp/tmp\.cODh8nR1Cw/dwarfsample-demo-static)\)$'
# The first sample's leaf, 0x401a09 in an ET_EXEC mapped from offset
# 0x1000 at 0x401000, is shown as perf shows it: 0x1a09.  It is in the
# clone sieve_primes.constprop.0, whose DWARF name differs from its ELF
# one, and perf marks such a frame "(inlined)".
sed -n 2,4p "$tmp/out" >"$tmp/first"
cat >"$tmp/want" <<'EOT'
	            1a09 sieve_primes+0x39 (inlined)
	            1aaf worker+0x4f (/tmp/tmp.cODh8nR1Cw/dwarfsample-demo-static)
	            1603 main+0xb3 (/tmp/tmp.cODh8nR1Cw/dwarfsample-demo-static)
EOT
check "the first sample's frames are named as perf names them" cmp -s "$tmp/first" "$tmp/want"
check "a blank line closes every sample" test "$(grep -c '^$' "$tmp/out")" -eq 197
check "the summary says every stack reached its outermost frame" \
	grep -q "197 samples, .* stacks ended: outermost 100.0%" "$tmp/err"

"$ds" report -i "$fx/perf.data" --debug-dir "$fx" -F comm,tid,time,ip,sym,srcline \
	>"$tmp/src" 2>/dev/null
# (The directory is the one the fixture was built in, recorded in its DWARF.)
sed -n 's|^  .*/tools/demo\.c:|  tools/demo.c:|; 2,7p' "$tmp/src" >"$tmp/first"
cat >"$tmp/want" <<'EOT'
	            1a09 sieve_primes
  tools/demo.c:87
	            1aaf worker
  tools/demo.c:104
	            1603 main
  tools/demo.c:122
EOT
check "-F ...,srcline: the source lines of the first sample's frames" \
	cmp -s "$tmp/first" "$tmp/want"
"$ds" report -i "$fx/perf.data" --debug-dir "$fx" --no-inline >"$tmp/noinl" 2>/dev/null
check "--no-inline: the ELF symbol, no line marked (inlined)" \
	test "$(sed -n 2p "$tmp/noinl")" = "	            1a09 sieve_primes.constprop.0+0x39 (/tmp/tmp.cODh8nR1Cw/dwarfsample-demo-static)"
check "--no-inline: and one line a frame" test "$(grep -c inlined "$tmp/noinl")" -eq 0

"$ds" report -i "$fx/perf.data" --debug-dir "$fx" -o "$tmp/out2" 2>/dev/null
check "-o writes what standard output gets" cmp -s "$tmp/out" "$tmp/out2"

# The profile formats, from the file: the same stacks, counted.
"$ds" report -i "$fx/perf.data" --debug-dir "$fx" -o "$tmp/r.folded" 2>/dev/null
check "-o FILE.folded: folded stacks" grep -Eq ';main;worker;sieve_primes[^;]* [0-9]+$' "$tmp/r.folded"
check "counting every sample" \
	test "$(awk '{ s += $NF } END { print s }' "$tmp/r.folded")" -eq "$(grep -c cpu-clock "$tmp/out")"
"$ds" report -i "$fx/perf.data" --debug-dir "$fx" -f svg >"$tmp/r.svg" 2>/dev/null
check "-f svg to standard output" grep -q "<title>sieve_primes" "$tmp/r.svg"
# pprof: the binary's mapping as its MMAP2 record gives it (perf script
# --show-mmap-events: [0x401000(0x8d000) @ 0x1000 ...] r-xp), with the
# build-id the file records; and how long the recording ran, from its
# samples (0.991 s; pprof -raw prints 4 characters of it).
if command -v go >/dev/null; then
	"$ds" report -i "$fx/perf.data" --debug-dir "$fx" -o "$tmp/r.pb.gz" 2>/dev/null
	HOME=$tmp go tool pprof -symbolize=none -raw "$tmp/r.pb.gz" >"$tmp/raw" 2>/dev/null
	check "-o FILE.pb.gz: the mapping as recorded, with its build-id" grep -q \
		"^1: 0x401000/0x48e000/0x1000 /tmp/tmp.cODh8nR1Cw/dwarfsample-demo-static 7884ee63be96df68d5424404836d123ed4443db6 " \
		"$tmp/raw"
	check "-o FILE.pb.gz: the duration the samples span" grep -q "^Duration: 991\." "$tmp/raw"
else
	echo "# go is absent: the pprof file is not checked"
fi

"$ds" report -i "$fx/perf.data" --debug-dir "$fx" --max-depth 3 >"$tmp/d3" 2>"$tmp/err"
check "--max-depth 3 keeps three frames a sample, and the [truncated] line for their callers" \
	test "$(grep -c '^	' "$tmp/d3")" -eq $((197 * 4))
check "the [truncated] line ends every sample's frames, as perf script writes a frame" \
	test "$(grep -Ec '^	 +0 \[truncated\] \(\[unknown\]\)$' "$tmp/d3")" -eq 197
check "and says the stacks ended at the depth limit" grep -q "depth limit 100.0%" "$tmp/err"

"$ds" report -i "$fx/perf.data" >"$tmp/nobin" 2>"$tmp/err"
check "without the binary: still exit 0" test $? -eq 0
check "its frames are [unknown], in the file perf would name" \
	test "$(sed -n 2p "$tmp/nobin")" = "	            1a09 [unknown] (/tmp/tmp.cODh8nR1Cw/dwarfsample-demo-static)"
check "the summary counts the missing file" \
	grep -q "1 mapped file was not found (-v names them)" "$tmp/err"
"$ds" report -v -i "$fx/perf.data" >/dev/null 2>"$tmp/err"
check "-v names it, with its build-id and what to do" \
	grep -q "dwarfsample-demo-static (build-id 7884ee63be96df68d5424404836d123ed4443db6): not found.*--debug-dir" "$tmp/err"

# Wrong input: a clear message and a non-zero exit, never a crash.
expect() { # status, message pattern, args...
	want=$1
	pattern=$2
	shift 2
	"$ds" report "$@" >/dev/null 2>"$tmp/err"
	got=$?
	if [ "$got" -eq "$want" ] && grep -q -- "$pattern" "$tmp/err"; then
		return 0
	fi
	echo "# exit $got (wanted $want):"
	sed 's/^/#   /' "$tmp/err"
	return 1
}
# No -i reads ./perf.data (test-habits.sh); where there is none, it says so.
mkdir "$tmp/nodata"
ds_abs=$(realpath "$ds")
check "no -i and no ./perf.data" sh -c 'cd "$1" && "$2" report >/dev/null 2>"$1/err"; \
	[ $? -eq 2 ] && grep -q "no ./perf.data here: record one with" "$1/err"' - "$tmp/nodata" "$ds_abs"
check "an unknown option" expect 2 "Try 'dwarfsample report --help'" --bogus
check "an unknown format" expect 2 "unknown format 'json'" -i "$fx/perf.data" -f json
check "an unknown field" expect 2 "unknown field 'bogus'" -i "$fx/perf.data" -F comm,bogus
check "a depth out of range" expect 2 "expected 1 to 1024" -i "$fx/perf.data" --max-depth 2000
check "a missing file" expect 1 "cannot open $tmp/none" -i "$tmp/none"
printf "this is not a capture, only a few lines of text\n%.0s" 1 2 3 4 5 6 7 8 >"$tmp/text"
check "not a perf.data file" expect 1 "not a perf.data file" -i "$tmp/text"
check "an unwritable output" expect 1 "choose another output path" \
	-i "$fx/perf.data" -o "$tmp/no/such/dir/out"
# Damaged files are salvaged, said so, and exit 3: not a clean run.
head -c 900000 "$fx/perf.data" >"$tmp/cut.data"
check "a truncated copy: read to its last complete record, and said so" \
	expect 3 "reading up to the last complete record" -i "$tmp/cut.data" --debug-dir "$fx"
check "and called damaged, with how much is missing" \
	grep -Eq "is damaged: salvaged [0-9]+ records; the file ends [0-9]+ bytes short" "$tmp/err"
# A record header in the middle of the data section zeroed: its size
# below 8, nothing past it can be trusted.
cp "$fx/perf.data" "$tmp/broken.data"
at=$(python3 - "$tmp/broken.data" <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    buf = f.read()
    off, size = struct.unpack_from("<QQ", buf, 40)
    at = off
    while at < off + size // 2:
        at += struct.unpack_from("<H", buf, at + 6)[0]
    f.seek(at + 6)
    f.write(b"\0\0")
print(at)
PY
)
check "a corrupt record header in the middle: exit 3, and where" \
	expect 3 "nothing could be read from byte $at on" -i "$tmp/broken.data" --debug-dir "$fx" \
	-f folded -o "$tmp/broken.folded"
check "with the library's reason" grep -q "record size below 8 (0), at byte offset $at" "$tmp/err"
check "and how many records were salvaged" grep -Eq "salvaged [1-9][0-9]* records" "$tmp/err"
check "the profile of what was read is written" grep -q ";worker;" "$tmp/broken.folded"
"$ds" dump -q -i "$tmp/broken.data" >/dev/null 2>"$tmp/err"
check "dump of it exits 3 too" test $? -eq 3
check "the clean fixture still exits 0" expect 0 "" -i "$fx/perf.data" --debug-dir "$fx"

exit $fail
