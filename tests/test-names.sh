#!/bin/sh
# Names for frames outside compiled files, end to end (record, then
# report):
#   node    JavaScript run by Node with --perf-basic-prof, named from the
#           /tmp/perf-PID.map it writes, callers under callees (skips only
#           when node is absent)
#   kernel  kernel call chains (record -k) named from /proc/kallsyms, line
#           for line as perf script names them in the same file
# usage: test-names.sh node|kernel DWARFSAMPLE AGREE-COMPARE
# shellcheck disable=SC2317 # the helpers run through check
set -u
mode=$1
ds=$2
compare=$3
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

# record NAME ARGS...: dwarfsample record -o $tmp/NAME.data ARGS...
record() {
	name=$1
	shift
	"$ds" record -F 499 -o "$tmp/$name.data" "$@" >/dev/null 2>"$tmp/$name.err"
	rc=$?
	skip_if_refused $rc "$tmp/$name.err"
	check "$name: recorded" test $rc -eq 0 || cat "$tmp/$name.err"
}

if [ "$mode" = node ]; then
	node=$(command -v node || command -v nodejs) || {
		echo "SKIP: node is not installed (Debian: apt-get install nodejs)"
		exit 77
	}
	cat >"$tmp/hot.js" <<'EOF'
function dsHotLoop(n) {
	let s = 0;
	for (let i = 0; i < n; i++)
		s += Math.sqrt(i) * (i & 7);
	return s;
}
function dsDriver(ms) {
	const end = Date.now() + ms;
	let t = 0;
	while (Date.now() < end)
		t += dsHotLoop(200000);
	return t;
}
console.log(dsDriver(1500) > 0 ? "done" : "?");
EOF
	# Interpreted functions get their own copy of the interpreter's entry,
	# named in the map too, so callers still running bytecode are named.
	record node -- "$node" --perf-basic-prof --interpreted-frames-native-stack \
		"$tmp/hot.js"
	"$ds" report -i "$tmp/node.data" -o "$tmp/node.txt" 2>"$tmp/report.err"
	check "node: report exits 0" test $? -eq 0
	pid=$(sed -n 's/^node *\([0-9]*\) .*/\1/p' "$tmp/node.txt" | head -n 1)
	check "node: the process wrote its perf map" test -s "/tmp/perf-$pid.map"
	samples=$(grep -c '^node' "$tmp/node.txt")
	hot=$(grep -c "	 *[0-9a-f]* [^ ]*dsHotLoop .*+0x[0-9a-f]* (/tmp/perf-$pid.map)\$" \
		"$tmp/node.txt")
	check "node: dsHotLoop is named in JIT code, from the map ($hot of $samples samples)" \
		test "$hot" -ge $((samples / 4))
	# Under the JIT frame (reached by its frame pointer): its caller.
	caller_under() {
		grep -A1 "dsHotLoop .*(/tmp/perf-$pid.map)" "$tmp/node.txt" |
			grep -q "dsDriver .*(/tmp/perf-$pid.map)"
	}
	check "node: and its caller dsDriver under it" caller_under
	rm -f "/tmp/perf-$pid.map"
	exit $fail
fi

[ "$mode" = kernel ] || { echo "usage: test-names.sh node|kernel ..." >&2; exit 2; }
need_perf
# dd between /dev/zero and /dev/null spends its time in read and write.
record kernel -k -- dd if=/dev/zero of=/dev/null bs=1M count=20000
"$ds" report -i "$tmp/kernel.data" -o "$tmp/kernel.txt" 2>/dev/null
check "kernel: report exits 0" test $? -eq 0
frames=$(grep -c '(\[kernel.kallsyms\])$' "$tmp/kernel.txt")
named=$(grep '(\[kernel.kallsyms\])$' "$tmp/kernel.txt" | grep -vc '\[unknown\]')
check "kernel: the call chains have kernel frames ($frames)" test "$frames" -ge 100
check "kernel: named, all but 1% ($named of $frames)" test $((named * 100)) -ge $((frames * 99))
check "kernel: the system calls' own functions are among them" \
	grep -Eq " (ksys|vfs)_(read|write)\+0x[0-9a-f]+ \(\[kernel.kallsyms\]\)$" "$tmp/kernel.txt"
perf script -i "$tmp/kernel.data" >"$tmp/kernel.perf" 2>/dev/null
check "kernel: every frame named as perf script names it" \
	"$compare" --frames "$tmp/kernel.txt" "$tmp/kernel.perf" 999 kernel
exit $fail
