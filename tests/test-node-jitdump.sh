#!/bin/sh
# Node with --perf-prof: V8 writes a jitdump (./jit-PID.dump), read
# directly, with no perf inject pass, on node-workload.js (three JS
# functions, each calling the next, then exit):
#  - profiled live (`dwarfsample -- node --perf-prof ...`): the three
#    functions named from the jitdump, unwound through down to node's
#    _start, and nearly every JIT frame named (node writes the jitdump out
#    only as it exits: those frames are named at the end of the run, and
#    the summary does not count them unnamed);
#  - perf record on the same kind of run, then perf inject --jit and perf
#    script (the oracle): every workload function perf names is named by
#    dwarfsample too, and the share of JIT frames named is as high;
#  - dwarfsample report -i on perf's own capture, not injected: the same
#    functions named from the jitdump beside it.
# usage: test-node-jitdump.sh DWARFSAMPLE NODE-WORKLOAD.JS
set -u
ds=$(realpath "$1")
wl=$(realpath "$2")
# shellcheck shell=sh source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_perf
node=${DS_NODE:-/usr/bin/node}
if ! [ -x "$node" ]; then
	echo "SKIP: no node at $node (Debian: apt-get install nodejs)"
	exit 77
fi
make_tmp
flags="--perf-prof --interpreted-frames-native-stack"
ms=3000

# stats FOLDED: samples; samples with a frame of the workload; of those,
# the ones whose stack goes down to _start; JIT frames named (V8's kinds
# of code: "JS:*f file:line:col", "Builtin:...", ...) and JIT frames
# unnamed ([perf-PID.map]), weighed by counts; the workload's functions
# named, in order.
stats() {
	awk '{
		n = $NF
		stack = substr($0, 1, length($0) - length($NF) - 1)
		k = split(stack, f, ";")
		samples += n
		wl = 0
		for (i = 2; i <= k; i++) {
			if (f[i] ~ /^(JS|Builtin|BytecodeHandler|Stub|RegExp|Handler|LazyCompile|Function|Script|Eval):/)
				named += n
			else if (f[i] ~ /^\[perf-[0-9]+\.map\]$/)
				unnamed += n
			if (f[i] ~ /node-workload\.js/) {
				wl = 1
				if (match(f[i], /js(Leaf|Depth|Outer)/))
					seen[substr(f[i], RSTART, RLENGTH)] = 1
			}
		}
		if (wl) {
			wls += n
			if (f[2] == "_start")
				complete += n
		}
	} END {
		printf "%d %d %d %d %d %s%s%s\n", samples, wls, complete, named, unnamed,
			seen["jsOuter"] ? "jsOuter," : "", seen["jsDepth"] ? "jsDepth," : "",
			seen["jsLeaf"] ? "jsLeaf," : ""
	}' "$1"
}

# percent PART WHOLE: PART in hundredths of WHOLE, 0 when WHOLE is.
percent() {
	[ "$2" -gt 0 ] && echo $(($1 * 100 / $2)) || echo 0
}

# Live.
mkdir "$tmp/live"
# shellcheck disable=SC2086 # flags are words
(cd "$tmp/live" && timeout 120 "$ds" -F 499 -f folded -o live.folded -- \
	"$node" $flags "$wl" $ms >live.out 2>live.err)
rc=$?
skip_if_refused $rc "$tmp/live/live.err"
check "dwarfsample profiles node --perf-prof" test $rc -eq 0 -a -s "$tmp/live/live.folded" ||
	cat "$tmp/live/live.err"
dump=$(find "$tmp/live" -name 'jit-*.dump' | head -n 1)
check "node wrote its jitdump" test -s "$dump"
pid=${dump##*/jit-}
pid=${pid%.dump}
check "and no perf map: every name is the jitdump's" test ! -e "/tmp/perf-$pid.map"
# shellcheck disable=SC2046 # its numbers are words
set -- $(stats "$tmp/live/live.folded")
echo "# live: $1 samples, $2 in the workload ($3 down to _start); JIT frames" \
	"$4 named, $5 not; functions $6"
live_funcs=$6
check "the three workload functions are named from the jitdump" \
	test "$live_funcs" = "jsOuter,jsDepth,jsLeaf," ||
	grep -m 5 "node-workload" "$tmp/live/live.folded"
check "most samples are in the workload (>= 50 %)" test "$(percent "$2" "$1")" -ge 50
check "stacks in JS are unwound through it to _start (>= 95 %)" \
	test "$(percent "$3" "$2")" -ge 95
live_named=$(percent "$4" $(($4 + $5)))
check "JIT frames are named (>= 95 %, $live_named % here)" test "$live_named" -ge 95
# shellcheck disable=SC2016 # the inner script's own argument
check "the summary counts no JIT frame unnamed (named at the end of the run)" \
	sh -c '! grep -q "no symbols *//anon" "$1"' - "$tmp/live/live.err" || cat "$tmp/live/live.err"

# perf on the same kind of run, with perf inject --jit (its jitted-PID-N.so
# files go beside the jitdump, in $tmp; its build-id cache under $tmp).
mkdir "$tmp/perf"
# shellcheck disable=SC2086
(cd "$tmp/perf" && HOME=$tmp timeout 120 perf record -q -k mono -F 499 -g \
	-o perf.data -- "$node" $flags "$wl" $ms >perf.out 2>perf.err)
check "perf records node --perf-prof" test -s "$tmp/perf/perf.data" || cat "$tmp/perf/perf.err"
(cd "$tmp/perf" && HOME=$tmp perf inject --jit -i perf.data -o injected.data 2>inject.err)
check "perf inject --jit makes its ELF files" test -s "$tmp/perf/injected.data" ||
	cat "$tmp/perf/inject.err"
# perf script's stacks as folded lines: the oracle, counted as above.
HOME=$tmp perf script -i "$tmp/perf/injected.data" -F comm,ip,sym,dso 2>/dev/null | awk '
	/^[^ \t]/ { if (stack != "") out[stack]++; stack = ""; next }
	/^[ \t]+[0-9a-f]+ / {
		sub(/^[ \t]+[0-9a-f]+ /, "")
		dso = $0; sub(/.* \(/, "", dso); sub(/\)$/, "", dso)
		sym = $0; sub(/ \([^(]*\)$/, "", sym); sub(/\+0x[0-9a-f]+$/, "", sym)
		if (sym == "[unknown]" && (dso ~ /perf-[0-9]+\.map$/ || dso == "[unknown]"))
			sym = "[perf-0.map]"
		stack = stack == "" ? sym : sym ";" stack
	}
	END { if (stack != "") out[stack]++; for (s in out) print "node;" s, out[s] }' \
	>"$tmp/perf/perf.folded"
# shellcheck disable=SC2046 # its numbers are words
set -- $(stats "$tmp/perf/perf.folded")
echo "# perf inject + perf script: $1 samples, $2 in the workload; JIT frames" \
	"$4 named, $5 not; functions $6"
perf_named=$(percent "$4" $(($4 + $5)))
check "perf names the workload's functions (the oracle works)" test -n "$6"
# shellcheck disable=SC2016 # the inner script's own variables
check "every workload function perf names, dwarfsample names ($6 in $live_funcs)" \
	sh -c 'for f in $(echo "$1" | tr , " "); do
		case ",$2" in *",$f,"*) ;; *) exit 1 ;; esac; done' - "$6" "$live_funcs"
check "dwarfsample names as large a share of JIT frames as perf ($live_named >= $perf_named - 2 %)" \
	test "$live_named" -ge $((perf_named - 2))

# perf's own capture, not injected: named from the jitdump beside it.
"$ds" report -i "$tmp/perf/perf.data" -f folded -o "$tmp/perf/report.folded" \
	2>"$tmp/perf/report.err"
check "report -i reads perf's capture" test -s "$tmp/perf/report.folded" ||
	cat "$tmp/perf/report.err"
# shellcheck disable=SC2046 # its numbers are words
set -- $(stats "$tmp/perf/report.folded")
echo "# report -i perf.data: $1 samples, $2 in the workload; JIT frames $4 named," \
	"$5 not; functions $6"
check "report -i names the three workload functions without perf inject" \
	test "$6" = "jsOuter,jsDepth,jsLeaf,"
check "report -i names the JIT frames (>= 95 %)" test "$(percent "$4" $(($4 + $5)))" -ge 95
exit $fail
