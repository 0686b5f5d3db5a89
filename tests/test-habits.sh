#!/bin/sh
# The perf and py-spy habits a new user brings (issue 31): each accepted,
# or answered with the right spelling.  Nothing here samples: the options
# are parsed before any event opens (a parse followed by -h, or a target
# that does not exist), and report reads the offline fixture.
# usage: test-habits.sh DWARFSAMPLE FIXTURES
# shellcheck disable=SC2317 # the helpers run through check
set -u
ds=$(realpath "$1")
fx=$(realpath "$2")/demo-static
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

# run ARGS...: $rc, $tmp/out and $tmp/err of one dwarfsample command.
run() {
	"$ds" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
}
says() { grep -qF -- "$1" "$tmp/err"; }

# A bare dwarfsample: a short usage, where to read more, a usage error's
# status (2, as before: a script that ran it by mistake still fails).
run
check "a bare dwarfsample exits 2 ($rc)" test $rc -eq 2
n=$(wc -l <"$tmp/err")
check "and prints a short usage, at most 15 lines ($n)" test "$n" -le 15 -a "$n" -ge 3
check "which names dwarfsample -h" says "dwarfsample -h"
check "and the man page" says "man dwarfsample"
check "and dwarfsample help VERB" says "dwarfsample help VERB"

# help, help VERB: VERB --help.
run help
check "dwarfsample help: the short usage on stdout, exit 0 ($rc)" test $rc -eq 0
check "the same as a bare dwarfsample's" sh -c "\"$ds\" 2>&1 | cmp -s - \"$tmp/out\""
for verb in record report dump stat agent; do
	run help "$verb"
	cp "$tmp/out" "$tmp/help"
	"$ds" "$verb" --help >"$tmp/want" 2>&1
	cp "$tmp/want" "$tmp/want-$verb"
	check "dwarfsample help $verb is dwarfsample $verb --help (exit $rc)" \
		sh -c "[ $rc -eq 0 ] && [ -s \"$tmp/help\" ] && cmp -s \"$tmp/help\" \"$tmp/want\""
done
"$ds" -h >"$tmp/help"
check "dwarfsample -h points to dwarfsample help VERB" grep -q "dwarfsample help record" "$tmp/help"
run help record --help
cp "$tmp/out" "$tmp/help"
check "dwarfsample help record --help is dwarfsample help record (exit $rc)" \
	sh -c "[ $rc -eq 0 ] && cmp -s \"$tmp/help\" \"$tmp/want-record\""
run help record report
check "help of two commands: exit 2 ($rc)" test $rc -eq 2
run help nosuch
check "help of no command: exit 2 ($rc), naming the commands" \
	sh -c "[ $rc -eq 2 ] && grep -q 'the commands are record, report, dump' \"$tmp/err\""

# One duration syntax: bare seconds, or ns, us, ms, s, m, h, d; a bad one
# names the option and what to give.  ARGS then -h: 0 when parsed.
accepts() { # description, args...
	d=$1
	shift
	run "$@" -h
	check "$d (exit $rc)" test $rc -eq 0 || cat "$tmp/err"
}
refuses() { # description, message, args...
	d=$1 m=$2
	shift 2
	run "$@" -h
	check "$d (exit $rc)" sh -c "[ $rc -eq 2 ] && grep -qF -- \"$m\" \"$tmp/err\"" ||
		cat "$tmp/err"
}
for v in 10 10s 0.5 500ms 2m 1h 250us; do
	accepts "-d $v" -d "$v"
	accepts "record -d $v" record -d "$v"
	accepts "stat -d $v" stat -d "$v"
done
refuses "-d 10x is refused with the syntax" \
	"-d: '10x' is not a duration: give seconds (10) or 10s, 500ms, 2m" -d 10x
refuses "-d 0 is refused" "-d: '0' is out of range" -d 0
refuses "-d inf is no duration" "-d: 'inf' is not a duration" -d inf
accepts "--off-cpu-min 1 (seconds)" --wall --off-cpu-min 1
accepts "--off-cpu-min 50us" --wall --off-cpu-min 50us
refuses "--off-cpu-min 5q" "--off-cpu-min: '5q' is not a duration: give seconds (10)" \
	--wall --off-cpu-min 5q
accepts "report --off-cpu-min 2 (seconds)" report --off-cpu-min 2
refuses "report --off-cpu-min 2x" "--off-cpu-min: '2x' is not a duration" \
	report --off-cpu-min 2x
for o in "--interval 30" "--interval 30s" "--interval 1m" "--timeout 5" "--timeout 500ms" \
	"--flush-timeout 10" "--health-interval 60" "--health-interval 0" \
	"--out-dir-age 7d" "--out-dir-age 3600" "-d 90"; do
	# shellcheck disable=SC2086 # option and value
	accepts "agent $o" agent $o
done
refuses "agent --interval 10x" "--interval: '10x' is not a duration: give seconds (10)" \
	agent --interval 10x
refuses "agent --timeout 3q" "--timeout: '3q' is not a duration" agent --timeout 3q
accepts "--debuginfod-timeout 30 (seconds)" --debuginfod-timeout 30
accepts "--debuginfod-timeout 2m" --debuginfod-timeout 2m
refuses "--debuginfod-timeout 1x" "--debuginfod-timeout: '1x' is not a duration" \
	--debuginfod-timeout 1x
# perf stat -I counts milliseconds: a bare number still does.
accepts "stat -I 500 (milliseconds, as perf's)" stat -I 500
accepts "stat -I 1s" stat -I 1s
refuses "stat -I 1x" "-I: '1x' is not a duration: give milliseconds (500)" stat -I 1x
for h in "" record dump stat agent; do
	# shellcheck disable=SC2086 # no verb, or one
	run $h --help
	check "${h:-dwarfsample} --help gives -d as a DURATION" \
		grep -q -- "-d, --duration DURATION" "$tmp/out"
done

# -F max, and a rate above the kernel's limit lowered with a note.  The
# kernel lowers its limit by itself when sampling takes too long (another
# test's, at once): each run is repeated until the limit was the same
# before and after it.
max_rate=/proc/sys/kernel/perf_event_max_sample_rate
accepts "-F max" -F max
for _try in 1 2 3 4 5; do
	limit=$(cat $max_rate)
	run -F "$limit" -h
	[ "$(cat $max_rate)" = "$limit" ] && break
done
check "-F at the limit ($limit) is taken (exit $rc)" test $rc -eq 0
check "and says nothing of it" test ! -s "$tmp/err"
for _try in 1 2 3 4 5; do
	limit=$(cat $max_rate)
	above=$((limit + 1))
	run record -F "$above" -h
	[ "$(cat $max_rate)" = "$limit" ] && break
done
if [ "$above" -le 1000000 ]; then
	check "record -F $above: parsed (exit $rc)" test $rc -eq 0
	check "lowered with a note naming the kernel's limit" \
		says "-F $above is above the kernel's limit of $limit: using $limit" ||
		cat "$tmp/err"
else
	echo "# the kernel's limit is $limit: -F above it is refused by our own bound"
fi
run -F fast -h
check "-F fast is refused (exit $rc)" test $rc -eq 2

# -o: every extension the message lists picks a format; an unknown one
# lists them all.  -p of no process: the format is settled first.
run -o "$tmp/x.weird" -p 2147483647
check "-o x.weird is refused (exit $rc)" test $rc -eq 2
exts=".svg .pb.gz .pb .pprof .folded .collapsed .speedscope.json .json .txt .perf .script"
for e in $exts; do
	check "the message lists $e" says " $e" || cat "$tmp/err"
done
for e in $exts; do
	run -o "$tmp/x$e" -p 2147483647
	check "-o x$e is a format's: only the PID is refused (exit $rc)" \
		sh -c "[ $rc -eq 1 ] && ! grep -q 'cannot tell the format' \"$tmp/err\"" ||
		cat "$tmp/err"
done
"$ds" --help >"$tmp/help"
for e in $exts; do
	check "-h names $e" grep -qF -- "$e" "$tmp/help"
done

# report with no -i reads ./perf.data, as record writes it.
mkdir "$tmp/empty" "$tmp/here"
(cd "$tmp/empty" && "$ds" report >"$tmp/out" 2>"$tmp/err")
rc=$?
check "report without ./perf.data: exit 2 ($rc)" test $rc -eq 2
check "and says how to make one" \
	says "no ./perf.data here: record one with \`dwarfsample record -- CMD\`, or give -i FILE"
cp "$fx/perf.data" "$tmp/here/perf.data"
(cd "$tmp/here" && "$ds" report --debug-dir "$fx" >"$tmp/out" 2>"$tmp/err")
rc=$?
"$ds" report -i "$fx/perf.data" --debug-dir "$fx" >"$tmp/want" 2>/dev/null
check "report in a directory with perf.data reads it (exit $rc)" test $rc -eq 0
check "as -i perf.data does" cmp -s "$tmp/out" "$tmp/want"

# The hints can be pasted: the file's own name, quoted for a shell.
hint() { # -o path: the "open it with" part of report's line
	"$ds" report -i "$fx/perf.data" --debug-dir "$fx" -o "$1" 2>&1 >/dev/null |
		sed -n 's/^dwarfsample: wrote .*; open it with //p'
}
cd "$tmp" || exit 1
h=$(hint "my run's.svg")
check "svg: xdg-open 'my run'\\''s.svg' ($h)" test "$h" = "a web browser (xdg-open 'my run'\\''s.svg')"
h=$(hint "plain.pb.gz")
check "pprof: go tool pprof -http=: plain.pb.gz ($h)" \
	test "$h" = "go tool pprof -http=: plain.pb.gz (or -top, -traces)"
# The pasted command opens the file the hint names.
cmd=$(hint "a b;c.svg" | sed 's/^a web browser (\(.*\))$/\1/; s/^xdg-open/ls/')
check "the quoted name is the file's, as a shell reads it ($cmd)" \
	sh -c "cd \"$tmp\" && $cmd" >/dev/null
cd / || exit 1

# agent -h: no command target (the agent refuses one), one -F with the
# agent's default.
"$ds" agent -h >"$tmp/out" 2>&1
check "agent -h offers no -- CMD" sh -c "! grep -q -- '^  -- CMD' \"$tmp/out\""
n=$(grep -c -- '^  -F, --freq' "$tmp/out")
check "agent -h has one -F ($n)" test "$n" -eq 1
check "with the agent's default, 49" grep -q -- '^  -F, --freq HZ .*(default 49)' "$tmp/out"
run agent -- true
check "agent -- CMD is refused (exit $rc)" test $rc -eq 2

exit $fail
