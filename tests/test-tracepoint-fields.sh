#!/bin/sh
# A tracepoint's samples carry its fields (PERF_SAMPLE_RAW), and perf
# script's text prints them as perf script does: `dd bs=4096 count=5`
# writes 4096 bytes to fd 1 five times, so syscalls:sys_enter_write has
# five samples reading "fd: 0x00000001, buf: 0x..., count: 0x00001000".
#   record + report    our text, from our file (its TRACING_DATA formats)
#   perf 6.1, 7.3      perf script on our file prints the same lines
#   live               -f perf-script prints them too (formats from tracefs)
#   damage             a payload's size made wrong is said, not crashed
#                      on; a format whose field lies past the payload
#                      prints "[truncated: ...]"
# usage: test-tracepoint-fields.sh DWARFSAMPLE
set -u
ds=$(realpath "$1")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

tp=syscalls:sys_enter_write
# The sample lines (not frames) of perf script's text from "[cpu] " on:
# the time, the event, the fields.
headers() {
	grep -v '^[[:space:]]' "$1" | grep -v '^$' | sed -n 's/^.*\] //p'
}

"$ds" record -e $tp --stack-size 4096 -o "$tmp/tp.data" -- \
	dd if=/dev/zero bs=4096 count=5 status=none >/dev/null 2>"$tmp/rec.err"
rc=$?
skip_if_refused "$rc" "$tmp/rec.err"
if [ $rc -ne 0 ] && grep -q "tracefs" "$tmp/rec.err"; then
	echo "SKIP: no tracefs here: $(cat "$tmp/rec.err")"
	exit 77
fi
check "record -e $tp exits 0" test "$rc" -eq 0 || cat "$tmp/rec.err"
check "record says the tracepoint is sampled at every hit" \
	grep -q "$tp sampled at every event (-c 1" "$tmp/rec.err"

"$ds" report -i "$tmp/tp.data" -o "$tmp/ours.txt" 2>"$tmp/rep.err"
check "report exits 0" test $? -eq 0 || cat "$tmp/rep.err"
n=$(grep -c "^dd .*: $tp: fd: 0x00000001, buf: 0x[0-9a-f]*, count: 0x00001000\$" "$tmp/ours.txt")
check "our text: dd's five writes, each with fd: 0x00000001 and count: 0x00001000 ($n)" \
	test "$n" -eq 5 || head -20 "$tmp/ours.txt"
headers "$tmp/ours.txt" >"$tmp/ours.h"

# perf on our file: the same samples, the same fields.
if perf --version >/dev/null 2>&1; then
	perf script -i "$tmp/tp.data" >"$tmp/perf61.txt" 2>"$tmp/perf61.err"
	check "perf 6.1 reads our file" test $? -eq 0 || cat "$tmp/perf61.err"
	headers "$tmp/perf61.txt" >"$tmp/perf61.h"
	check "perf 6.1's perf script prints the fields our text prints ($(wc -l <"$tmp/ours.h") samples)" \
		cmp -s "$tmp/ours.h" "$tmp/perf61.h" || diff "$tmp/ours.h" "$tmp/perf61.h" | head
fi
d13=${DS_DEBIAN13_ROOT:-/var/cache/dwarfsample/debian13}
if [ -f "$d13/.ready" ]; then
	"$d13/run-perf" script -i "$tmp/tp.data" >"$tmp/perf73.txt" 2>"$tmp/perf73.err"
	check "perf 7.3 reads our file" test $? -eq 0 || cat "$tmp/perf73.err"
	headers "$tmp/perf73.txt" >"$tmp/perf73.h"
	check "perf 7.3's perf script prints the fields our text prints" \
		cmp -s "$tmp/ours.h" "$tmp/perf73.h" || diff "$tmp/ours.h" "$tmp/perf73.h" | head
else
	echo "# no Debian 13 root at $d13: perf 7.3 is not asked (.ci/run builds it)"
fi

# The live command's text: the formats from tracefs.
"$ds" -e $tp --stack-size 4096 -f perf-script -o "$tmp/live.txt" -- \
	dd if=/dev/zero bs=4096 count=5 status=none >/dev/null 2>"$tmp/live.err"
check "-e $tp -f perf-script exits 0" test $? -eq 0 || cat "$tmp/live.err"
n=$(grep -c "^dd .*: $tp: fd: 0x00000001, buf: 0x[0-9a-f]*, count: 0x00001000\$" "$tmp/live.txt")
check "live text: the five writes with their fields ($n)" test "$n" -eq 5 ||
	head -20 "$tmp/live.txt"

# --- damage ---
# The payloads start with their size (u32) and the tracepoint's id
# (common_type, u16): the first made larger than the record, the second
# smaller than the fields.
/usr/bin/python3 - "$tmp/tp.data" "$tmp/bad-size.data" "$tmp/bad-format.data" <<'EOF'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
# The id from the file's own format of sys_enter_write.
fmt = b.find(b'name: sys_enter_write\nID: ')
tp = int(b[fmt + 26:b.index(b'\n', fmt + 26)])
hits = [o for o in range(len(b) - 6)
        if struct.unpack_from('<H', b, o + 4)[0] == tp
        and 32 <= struct.unpack_from('<I', b, o)[0] <= 64]
assert len(hits) >= 5, hits
bad = bytearray(b)
struct.pack_into('<I', bad, hits[0], 0xffff)
struct.pack_into('<I', bad, hits[1], 12)
open(sys.argv[2], 'wb').write(bad)
# The format's count field moved past the payload's end (same length).
at = b.index(b'size_t count;\toffset:32;', fmt)
b[at:at + 24] = b'size_t count;\toffset:99;'
open(sys.argv[3], 'wb').write(b)
EOF
check "the damaged files were made" test $? -eq 0
"$ds" report -i "$tmp/bad-size.data" -o "$tmp/bad-size.txt" 2>"$tmp/bad-size.err"
rc=$?
check "payload sizes made wrong: report ends without a crash (exit $rc)" test "$rc" -lt 128
check "... says the records are corrupt, where" grep -q "corrupt SAMPLE record at byte offset" \
	"$tmp/bad-size.err" || cat "$tmp/bad-size.err"
n=$(grep -c "count: 0x00001000" "$tmp/bad-size.txt")
check "... and prints the other samples' fields ($n)" test "$n" -ge 3
"$ds" report -i "$tmp/bad-format.data" -o "$tmp/bad-format.txt" 2>"$tmp/bad-format.err"
rc=$?
check "a field past the payload: report exits 0" test "$rc" -eq 0 || cat "$tmp/bad-format.err"
n=$(grep -c "fd: 0x00000001, buf: 0x[0-9a-f]*, count: 0x00000000 \[truncated: 44 of 107 bytes\]" \
	"$tmp/bad-format.txt")
check "... and says the payload is short of it ($n)" test "$n" -eq 5 ||
	grep "$tp" "$tmp/bad-format.txt" | head -3
exit $fail
