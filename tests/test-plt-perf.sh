#!/bin/sh
# PLT stubs in a real capture named as perf 7.3 names them: plt-calls.c,
# run so that it calls through its stubs (abs, free, its IFUNC), built the
# ways given (meson passes GNU ld lazy, GNU ld IBT -z now, and lld lazy:
# .plt, .plt.sec and lld's own .plt), recorded by `dwarfsample record`.
# The one file is read by `dwarfsample report` and by perf 7.3's `perf
# script` (the Debian 13 root's), sample by sample.
#
# A PLT frame is one whose address lies in the build's .plt, .plt.sec,
# .plt.got or .iplt (readelf's section offsets: report's address is the
# file offset), or one perf 7.3 names "...@plt" or ".plt".  Each must be
# listed alike by both: the same sample (tid and time), the same place in
# the stack, and the same text after the address, "callee@plt+0xOFF
# (DSO)".  The address alone is not compared: perf prints the run's
# address, report the file's.
#
# Each build is captured twice.  By time (cpu-clock at 4 kHz for 0.6 s),
# as a user samples it: how many of its samples land in a stub is up to
# where the timer's interrupts land (a stub is one jump), so it is
# printed, not required: most runs had 18 to 143 of 800-2 300 samples,
# one had none of 2 346.  And on the stubs themselves: a uprobe at each
# stub's first instruction (and at the jump after an endbr64), 2 000
# calls through each stub sampled every 20th hit, so that every sample is
# in a stub, whatever the timer does; there at least 10 PLT frames are
# required (100 a stub called), named alike.
# The probes go with the test (group ds_plt_PID), on any exit.
# usage: test-plt-perf.sh DWARFSAMPLE BUILD...
# shellcheck disable=SC2317 # the helpers run through check
set -u
ds=$1
shift
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
d13=${DS_DEBIAN13_ROOT:-/var/cache/dwarfsample/debian13}
if [ ! -x "$d13/run-perf" ]; then
	echo "SKIP: no perf 7.3 at $d13/run-perf: build the Debian 13 root with" \
		"../shared/tools/debian13-root.sh, as .ci/run does"
	exit 77
fi
make_tmp

# frames TEXT BUILD PLT: perf script's TEXT as "sample N TEXT-AFTER-THE-
# ADDRESS" a frame, numbered in the stack (0: innermost), the sample its
# header's tid and time; "plt" after N where the frame's address, read as
# a file offset in BUILD, is in one of the ranges in file PLT.
frames() {
	awk -v build="$2" -v plt="$3" '
		BEGIN { while ((getline r < plt) > 0) { split(r, f, " "); lo[++nr] = f[1]; hi[nr] = f[2] } }
		!/^\t/ { if (NF) { key = $2 " " $4; n = 0 }; next }
		{
			a = $1
			sub(/^\t *[0-9a-f]+ /, "")
			in_plt = 0
			if (index($0, "(" build ")")) {
				v = 0
				for (i = 1; i <= length(a); i++)
					v = v * 16 + index("0123456789abcdef", substr(a, i, 1)) - 1
				for (i = 1; i <= nr; i++)
					if (v >= lo[i] && v < hi[i])
						in_plt = 1
			}
			print key, n++, (in_plt ? "plt" : "-"), $0
		}' "$1"
}

# The kernel's uprobes, through tracefs (mounted here if it is not).
tracefs=
for t in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -e "$t/uprobe_events" ] || mount -t tracefs nodev "$t" 2>/dev/null
	if [ -w "$t/uprobe_events" ]; then
		tracefs=$t
		break
	fi
done
group=ds_plt_$$
probes=
unprobe() {
	for p in $probes; do
		echo "-:$group/$p" >>"$tracefs/uprobe_events"
	done
	probes=
}
trap 'rc=$?; unprobe; leave_tmp $rc' EXIT

# probe BUILD: a uprobe at the first instruction of each stub in BUILD's
# PLT sections (and at the jump after an endbr64); their events, as -e
# takes them, into $tmp/events.  Nonzero when the kernel refused one.
probe() {
	pn=0
	: >"$tmp/events"
	readelf -SW "$1" | sed 's/^ *\[ *[0-9]*\] *//' |
		awk '$1 ~ /^\.(plt|plt\.sec|plt\.got|iplt)$/ { print $1, $3, $4 }' >"$tmp/secs"
	while read -r sec addr off; do
		objdump -d -j "$sec" "$1" |
			awk '/^[0-9a-f]+ <.*>:$/ { first = 1; next }
				/^ +[0-9a-f]+:/ && first {
					a = $1; sub(/:$/, "", a); print a
					first = $0 ~ /endbr64/
				}' >"$tmp/insns"
		while read -r a; do
			pn=$((pn + 1))
			echo "p:$group/p$pn $(realpath "$1"):0x$(printf %x $((0x$a - 0x$addr + 0x$off)))" \
				>>"$tracefs/uprobe_events" 2>"$tmp/probe.err" || return 1
			probes="$probes p$pn"
			printf '%s%s' "$([ $pn -gt 1 ] && echo ,)" "$group:p$pn" >>"$tmp/events"
		done <"$tmp/insns"
	done <"$tmp/secs"
}

# compare NAME DATA BUILD: DATA read by report and by perf 7.3; the PLT
# frames of both listed alike, each named the same.  Their number into $n.
compare() {
	name=$1 data=$2 build=$3
	"$ds" report -i "$data" >"$tmp/$name.ours" 2>"$tmp/$name.err"
	check "$name: report reads it" test $? -eq 0 || cat "$tmp/$name.err"
	"$d13/run-perf" script -i "$data" >"$tmp/$name.perf" 2>/dev/null
	check "$name: perf 7.3 reads it" test -s "$tmp/$name.perf"
	# (The file by its full path, as both print it: meson passes a
	# relative one, which matched no frame, so ours were found by name
	# only.)
	frames "$tmp/$name.ours" "$(realpath "$build")" "$tmp/$(basename "$build").plt" \
		>"$tmp/$name.ours.f"
	frames "$tmp/$name.perf" "$(realpath "$build")" /dev/null >"$tmp/$name.perf.f"
	# The PLT frames: ours by address, perf's by name; each side's, as
	# both list them (sample, place, text), one a line.
	awk '$4 == "plt" { print $1, $2, $3 }' "$tmp/$name.ours.f" >"$tmp/$name.keys"
	awk '$5 ~ /@plt(\+0x[0-9a-f]+)?$|^\.plt(\+0x[0-9a-f]+)?$/ { print $1, $2, $3 }' \
		"$tmp/$name.perf.f" >>"$tmp/$name.keys"
	sort -u "$tmp/$name.keys" >"$tmp/$name.keys.u"
	for side in ours perf; do
		awk 'NR == FNR { want[$0] = 1; next }
			($1 " " $2 " " $3) in want { $4 = ""; print }' \
			"$tmp/$name.keys.u" "$tmp/$name.$side.f" | sort >"$tmp/$name.$side.plt"
	done
	n=$(wc -l <"$tmp/$name.keys.u")
	differ=$(comm -3 "$tmp/$name.ours.plt" "$tmp/$name.perf.plt" | wc -l)
	echo "# $name: $(grep -c '^[^[:space:]]' "$tmp/$name.ours") samples, $n PLT frames:" \
		"$(awk '{ $1 = $2 = $3 = ""; print }' "$tmp/$name.perf.plt" | sort | uniq -c |
			sort -rn | awk '{ printf "%s %s; ", $1, $2 }')"
	check "$name: every one named as perf 7.3 names it ($differ lines differ)" \
		test "$differ" -eq 0 ||
		comm -3 "$tmp/$name.ours.plt" "$tmp/$name.perf.plt" | head -20
}

for build in "$@"; do
	name=$(basename "$build")
	# The PLT sections' file offsets, "start end" a line.
	readelf -SW "$build" | sed 's/^ *\[ *[0-9]*\] *//' |
		awk '$1 ~ /^\.(plt|plt\.sec|plt\.got|iplt)$/ { print $4, $5 }' |
		while read -r off size; do
			echo "$((0x$off)) $((0x$off + 0x$size))"
		done >"$tmp/$name.plt"
	"$ds" record -F 4000 -o "$tmp/$name.data" -- "$build" 0.6 >/dev/null 2>"$tmp/rec.err"
	rc=$?
	skip_if_refused "$rc" "$tmp/rec.err"
	# The workload's status is its own (it returns a sum); the file is what counts.
	check "$name: recorded" test -s "$tmp/$name.data" || { cat "$tmp/rec.err"; continue; }
	compare "$name" "$tmp/$name.data" "$build"

	if [ -z "$tracefs" ]; then
		echo "# $name: no uprobes here (no writable uprobe_events in tracefs)"
		continue
	fi
	probe "$build"
	prc=$?
	check "$name: uprobes at its stubs ($(echo $probes | wc -w))" test $prc -eq 0 ||
		{ cat "$tmp/probe.err"; unprobe; continue; }
	# 2 000 calls through each stub (a uprobe's trap costs ~50 us here).
	"$ds" record -e "$(cat "$tmp/events")" -c 20 -o "$tmp/$name.u.data" -- "$build" 0 2000 \
		>/dev/null 2>"$tmp/rec.err"
	unprobe
	check "$name, on its stubs: recorded" test -s "$tmp/$name.u.data" ||
		{ cat "$tmp/rec.err"; continue; }
	compare "$name-stubs" "$tmp/$name.u.data" "$build"
	check "$name, on its stubs: at least 10 PLT frames ($n)" test "$n" -ge 10
done
if [ -z "$tracefs" ] && [ "$fail" -eq 0 ]; then
	echo "SKIP: the PLT frames on the stubs need uprobes (tracefs's uprobe_events," \
		"CONFIG_UPROBE_EVENTS): the kernel has none writable here"
	exit 77
fi
exit $fail
