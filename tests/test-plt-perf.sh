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
# At least 10 PLT frames in each build: the workload spends 2-9% of its
# samples in its stubs (measured on this 2-core host at load 10-16): a
# capture of 800-1500 samples (0.6 s at 4 kHz under that load) had 17 to
# 141 in seven runs, plain and ASan; 10 keeps a capture that hit no stub,
# or only by chance, from passing.
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
	"$ds" report -i "$tmp/$name.data" >"$tmp/$name.ours" 2>"$tmp/$name.err"
	check "$name: report reads it" test $? -eq 0 || cat "$tmp/$name.err"
	"$d13/run-perf" script -i "$tmp/$name.data" >"$tmp/$name.perf" 2>/dev/null
	check "$name: perf 7.3 reads it" test -s "$tmp/$name.perf"
	frames "$tmp/$name.ours" "$build" "$tmp/$name.plt" >"$tmp/$name.ours.f"
	frames "$tmp/$name.perf" "$build" /dev/null >"$tmp/$name.perf.f"
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
	echo "# $name: $(grep -c 'cpu-clock' "$tmp/$name.ours") samples, $n PLT frames:" \
		"$(awk '{ $1 = $2 = $3 = ""; print }' "$tmp/$name.perf.plt" | sort | uniq -c |
			sort -rn | awk '{ printf "%s %s; ", $1, $2 }')"
	check "$name: at least 10 PLT frames ($n)" test "$n" -ge 10
	check "$name: every one named as perf 7.3 names it ($differ lines differ)" \
		test "$differ" -eq 0 ||
		comm -3 "$tmp/$name.ours.plt" "$tmp/$name.perf.plt" | head -20
done
exit $fail
