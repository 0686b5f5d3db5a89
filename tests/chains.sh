# shellcheck shell=sh disable=SC2154 # ds and tmp are the sourcing script's
# Every sample's call chain entries as perf report -D prints them and as
# dwarfsample dump -i does, in dump's words, one sample a line, sorted:
#     callchain 7: kernel: 0xffffffff81001000 user: 0x401136 0x0
# for test-call-graph.sh (live captures) and test-dump-chains.sh (a file
# of odd chains).  Source it after lib.sh and make_tmp; $ds is the
# dwarfsample under test.

# perf_chains FILE: perf report -D's entries ("..... 6: 0000000000000000",
# 16 hex digits), its stderr kept in $tmp/perf-D.err.  An entry of 0 is
# 0x0: stripping the leading zeros of its 16 digits left nothing, and CI
# once failed on that ("0x" for perf, "0x0" for dump).  Markers are named
# as dump names them: user, kernel, and any other above PERF_CONTEXT_MAX
# (-4095) as context-0x...: (fixed-width hex compares as strings).
perf_chains() {
	perf report -D -i "$1" 2>"$tmp/perf-D.err" | awk '
		function hex(v) { sub(/^0+/, "", v); return "0x" (v == "" ? "0" : v) }
		/PERF_RECORD_SAMPLE/ { if (c != "") print c; c = ""; on = 0; next }
		/^\.\.\. (FP )?chain: nr:/ { on = 1; c = "callchain " substr($NF, 4) ":"; next }
		on && /^\.\.\.\.\. +[0-9]+: / {
			v = $3
			if (v == "fffffffffffffe00") c = c " user:"
			else if (v == "ffffffffffffff80") c = c " kernel:"
			else if (v >= "fffffffffffff001") c = c " context-" hex(v) ":"
			else c = c " " hex(v)
			next }
		{ on = 0 }
		END { if (c != "") print c }' | sort
}

# dump_chains FILE: the same from dwarfsample dump -i, its output kept in
# $tmp/dump.out and its stderr in $tmp/dump.err; returns dump's exit
# status (a dump cut short must not pass for a short sample line).
dump_chains() {
	"$ds" dump -i "$1" >"$tmp/dump.out" 2>"$tmp/dump.err"
	dc_rc=$?
	sed -n 's/.* SAMPLE .*\(callchain [0-9]*:.*\)$/\1/p' "$tmp/dump.out" | sort
	return $dc_rc
}

# chains_agree LABEL FILE: check that dump -i exits 0 and says nothing on
# stderr (a sanitizer's report included), and that it shows every
# sample's entries as perf report -D does; on failure, why.
chains_agree() {
	perf_chains "$2" >"$tmp/perf.chains"
	dump_chains "$2" >"$tmp/our.chains"
	ca_rc=$?
	check "$1: dump -i exits 0, nothing on stderr (exit $ca_rc)" \
		sh -c '[ "$1" -eq 0 ] && ! [ -s "$2" ]' sh $ca_rc "$tmp/dump.err" || {
		head -40 "$tmp/dump.err"
		tail -3 "$tmp/dump.out"
	}
	check "$1: dump -i shows every sample's chain entries as perf report -D does ($(wc -l <"$tmp/our.chains"))" \
		sh -c '[ -s "$1" ] && cmp -s "$1" "$2"' sh "$tmp/perf.chains" "$tmp/our.chains" || {
		echo "# < perf report -D, > dump -i:"
		diff "$tmp/perf.chains" "$tmp/our.chains" | head
		head -5 "$tmp/perf-D.err"
	}
}
