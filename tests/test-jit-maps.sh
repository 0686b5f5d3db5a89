#!/bin/sh
# JIT code named by its perf map, though the process is gone before the
# workers reach its samples: Debian's node with --perf-basic-prof, its work
# ending right before it exits, profiled as a new user would, 8 runs of
# 8; the same in a private mount namespace with a /tmp of its own (the map
# is only in there), and in a pid namespace too; `record` carrying the
# map, so that `report` names the frames once it is deleted, with perf's
# own names of the same capture as the oracle, and a jitdump file carried
# whole; and node without the flag, whose JIT code nothing names, told how
# to start it.
# usage: test-jit-maps.sh DWARFSAMPLE JIT-WORKLOAD.js
set -u
ds=$(realpath "$1")
js=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
node=/usr/bin/node
if ! [ -x $node ]; then
	echo "SKIP: no $node (Debian: apt-get install nodejs)"
	exit 77
fi
make_tmp
# V8 writes a log per isolate (isolate-*-v8.log) where it runs.
cd "$tmp" || exit 1
# The workload's rounds: about 0.3 s of one CPU, whatever the machine does.
rounds=600

# A profile's JIT frames (perf-script output: a frame's module in
# parentheses, perf's name for a JIT's code), and those nothing names.
jit_frames() { # file
	grep -c ' (/tmp/perf-[0-9]*\.map)$' "$1"
}
unnamed_jit() { # file
	grep -c ' \[unknown\] (/tmp/perf-[0-9]*\.map)$' "$1"
}
# At least 20 JIT frames, 99 % of them named.
named_99() { # file
	nj_all=$(jit_frames "$1")
	nj_un=$(unnamed_jit "$1")
	echo "# $1: $nj_all JIT frames, $nj_un unnamed"
	[ "$nj_all" -ge 20 ] && [ $((nj_un * 100)) -le "$nj_all" ]
}

# profile FORMAT OUT NODE-FLAGS...: node profiled as a command, its pid
# in $pid, the map it wrote removed after.
profile() {
	pf_fmt=$1 pf_out=$2
	shift 2
	"$ds" -F 999 -f "$pf_fmt" -o "$pf_out" -- sh -c 'echo $$ >"$0"; exec "$@"' "$tmp/pid" \
		$node "$@" "$js" $rounds 2>"$tmp/err"
	pf_rc=$?
	pid=$(cat "$tmp/pid")
	rm -f "/tmp/perf-$pid.map"
	return $pf_rc
}

# Live, 8 runs: each must name 99 % of its JIT frames (the race this
# guards named none in 5 runs of 5; 20 runs passed when it was fixed,
# 8 keep CI's time).  The sanitizer build (DS_SANITIZE) runs 4: the
# plain build's are the count, its own are for memory errors, at twice
# the time a run.
runs=8
[ "${DS_SANITIZE:-none}" = none ] || runs=4
good=0
for _ in $(seq $runs); do
	profile perf-script "$tmp/run.txt" --perf-basic-prof
	rc=$?
	skip_if_refused $rc "$tmp/err"
	if [ $rc -eq 0 ] && named_99 "$tmp/run.txt"; then
		good=$((good + 1))
	else
		cp "$tmp/run.txt" "$tmp/bad-run.txt"
		cat "$tmp/err"
	fi
done
check "node --perf-basic-prof, live: 99 % of JIT frames named in $runs of $runs runs ($good)" \
	test $good -eq $runs
check "as the JS functions' names" grep -q ' JS:\*jitMiddle .* (/tmp/perf-[0-9]*\.map)$' \
	"$tmp/run.txt"
profile folded "$tmp/run.folded" --perf-basic-prof
check "the folded profile has them in its stacks" \
	grep -q ';JS:\*jitMiddle [^;]*jit-workload\.js:' "$tmp/run.folded"

# A container's /tmp: the map is only in the process's mount namespace.
# The workload goes into that /tmp (the source tree may be under the
# host's, which the container's hides).
in_tmp='js=$(cat "$1") && mount -t tmpfs tmpfs /tmp &&
	printf "%s\n" "$js" >/tmp/jit-workload.js && exec "$0" --perf-basic-prof /tmp/jit-workload.js "$2"'
"$ds" -F 999 -f perf-script -o "$tmp/ns.txt" -- unshare -m --propagation private sh -c \
	"$in_tmp" $node "$js" $rounds 2>"$tmp/err"
check "in a mount namespace with a /tmp of its own: profiled" test $? -eq 0 || cat "$tmp/err"
check "its JIT frames named, 99 %" named_99 "$tmp/ns.txt"
nspid=$(sed -n 's|.* (/tmp/perf-\([0-9]*\)\.map)$|\1|p' "$tmp/ns.txt" | head -1)
check "from a map the host's /tmp does not have (pid ${nspid:-none})" \
	test -n "$nspid" -a ! -e "/tmp/perf-$nspid.map"

# And in a pid namespace of its own: node is pid 1 there, its map
# /tmp/perf-1.map, found by its pid in that namespace (NSpid).
"$ds" -F 999 -f perf-script -o "$tmp/pidns.txt" -- unshare -mpf --mount-proc --propagation private \
	sh -c "$in_tmp" $node "$js" $rounds 2>"$tmp/err"
check "in a pid namespace too: profiled" test $? -eq 0 || cat "$tmp/err"
check "its JIT frames named by its map there, 99 %" named_99 "$tmp/pidns.txt"

# record carries the map: report names the frames once it is deleted.
"$ds" record -F 999 -o "$tmp/rec.data" -- sh -c 'echo $$ >"$0"; exec "$1" --perf-basic-prof "$2" "$3"' \
	"$tmp/pid" $node "$js" $rounds 2>"$tmp/err"
check "record node --perf-basic-prof" test $? -eq 0 || cat "$tmp/err"
pid=$(cat "$tmp/pid")
check "its map was written (pid $pid)" test -s "/tmp/perf-$pid.map"
# The oracle: perf script's names of the leaf frames, from the map itself.
# (--no-inline: a map's code has no inlined functions, and without it
# perf 6.1 asks addr2line, a process per library, for the inline chain of
# every native frame: minutes of a loaded machine, for frames not compared.)
if perf --version >/dev/null 2>&1; then
	perf script -F ip,sym --no-inline -i "$tmp/rec.data" >"$tmp/perf.txt" 2>"$tmp/perf.err"
	check "perf script reads the capture (its own feature section skipped)" test $? -eq 0 ||
		cat "$tmp/perf.err"
fi
rm -f "/tmp/perf-$pid.map"
"$ds" report -i "$tmp/rec.data" -f perf-script -o "$tmp/rep.txt" 2>"$tmp/err"
check "report -i after the map is deleted" test $? -eq 0 || cat "$tmp/err"
check "names its JIT frames, 99 %" named_99 "$tmp/rep.txt"
if [ -s "${tmp}/perf.txt" ]; then
	# Each sample's first frame, where it is JIT code perf named: the
	# same names, in the same samples' order.
	# perf's blocks are the frames alone; ours start with a header line.
	awk 'BEGIN { first = 1 } NF == 0 { first = 1; next }
	     first { first = 0; if ($2 ~ /^JS:/) print $2 }' "$tmp/perf.txt" >"$tmp/perf.leaves"
	awk '/^[^ \t]/ { first = 1; next }
	     first { first = 0; if ($2 ~ /^JS:/ && $0 ~ /perf-[0-9]*\.map\)$/) print $2 }' \
		"$tmp/rep.txt" >"$tmp/rep.leaves"
	n=$(wc -l <"$tmp/perf.leaves")
	check "the leaf JIT names agree with perf script's ($n samples, 20 at least)" \
		sh -c '[ "$0" -ge 20 ] && cmp -s "$1" "$2"' "$n" "$tmp/perf.leaves" "$tmp/rep.leaves" ||
		diff "$tmp/perf.leaves" "$tmp/rep.leaves" | head -5
fi

# --perf-prof: the jitdump file is carried whole, as bytes (its reader
# is another part's).
"$ds" record -F 999 -o "$tmp/dump.data" -- sh -c 'echo $$ >"$0"; exec "$1" --perf-prof "$2" "$3"' \
	"$tmp/pid" $node "$js" $rounds 2>"$tmp/err"
check "record node --perf-prof" test $? -eq 0 || cat "$tmp/err"
pid=$(cat "$tmp/pid")
# V8 writes it in its working directory, and maps it from there.
check "its jitdump file was written (pid $pid)" test -s "$tmp/jit-$pid.dump"
check "and is carried whole in the capture" /usr/bin/python3 -c '
import sys
sys.exit(open(sys.argv[2], "rb").read() not in open(sys.argv[1], "rb").read())' \
	"$tmp/dump.data" "$tmp/jit-$pid.dump"
rm -f "/tmp/perf-$pid.map"

# Without the flag: no map, and the summary says how to have one.
profile folded "$tmp/noflag.folded"
check "node without --perf-basic-prof: its JIT code said to have no map, for its pid" \
	grep -q "JIT code, no perf map or jitdump for pid $pid: start the runtime with node --perf-basic-prof" \
	"$tmp/err" || cat "$tmp/err"
check "and not the advice for a file (-g, --debug-dir)" sh -c "! grep -q 'with -g' '$tmp/err'"
exit $fail
