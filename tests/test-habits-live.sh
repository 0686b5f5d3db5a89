#!/bin/sh
# The habits of issue 31 that need a profile (test-habits.sh has those
# that parse): the SVG's title names the command line, its pid and the
# date, as py-spy's does, and report's is the program's, not
# "dwarfsample"; perf script's text names a process that exec'd by its
# new name, as perf script does on the same file.
# usage: test-habits-live.sh DWARFSAMPLE DEMO
set -u
ds=$(realpath "$1")
demo=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_perf
make_tmp

# title_of SVG: its title's text, unescaped.
title_of() {
	sed -n 's/.*<text id="title"[^>]*>\([^<]*\)<.*/\1/p' "$1" |
		sed "s/&gt;/>/g; s/&lt;/</g; s/&apos;/'/g; s/&quot;/\"/g; s/&amp;/\\&/g"
}

# The command is a shell that writes its pid and execs the demo (two
# threads busy for 1 s of CPU each): the pid is the demo's, and its
# samples are all after the exec.
cd "$tmp" || exit 1
ln -s "$demo" dwarfsample-demo
cmd='echo $$ >pid; exec ./dwarfsample-demo 1'
day0=$(date +%Y-%m-%d)
"$ds" -o "$tmp/live.svg" -- sh -c "$cmd" >"$tmp/out" 2>"$tmp/err"
rc=$?
skip_if_refused $rc "$tmp/err"
day1=$(date +%Y-%m-%d)
check "profiling exits 0 ($rc)" test $rc -eq 0 || cat "$tmp/err"
pid=$(cat pid)
title=$(title_of "$tmp/live.svg")
echo "# title: $title"
# The shell's words, as given (XML-escaped: ' is &apos; or kept).
check "the title names the command line" \
	test "${title%% (pid *}" = "sh -c $cmd"
check "its pid ($pid)" sh -c "printf '%s' \"\$1\" | grep -q '(pid $pid, '" - "$title"
check "and the date it began ($day0)" \
	sh -c "printf '%s' \"\$1\" | grep -Eq ', ($day0|$day1) [0-9]{2}:[0-9]{2}:[0-9]{2} [A-Z+0-9-]+; 99 Hz\)$'" \
	- "$title"

# A recording of the same: report's SVG is titled after the program.
"$ds" record -o "$tmp/e.data" -- sh -c "$cmd" >"$tmp/out" 2>"$tmp/err"
rc=$?
check "record exits 0 ($rc)" test $rc -eq 0 || cat "$tmp/err"
pid=$(cat pid)
"$ds" report -i "$tmp/e.data" -o "$tmp/report.svg" >"$tmp/out" 2>"$tmp/err"
title=$(title_of "$tmp/report.svg")
echo "# report's title: $title"
check "report's title is the recorded command, with its pid" \
	test "$title" = "sh -c $cmd (pid $pid)"
check "not dwarfsample" test "$title" != dwarfsample

# perf script's text: every sample of the demo named by its new name,
# as perf script names them (a sample of the shell before its exec, of
# the same pid, is named sh by both).
"$ds" report -i "$tmp/e.data" -F comm,pid,ip >"$tmp/stacks" 2>"$tmp/err"
check "report -f perf-script exits 0" test $? -eq 0 || cat "$tmp/err"
grep -v '^	' "$tmp/stacks" >"$tmp/ours"
perf script -i "$tmp/e.data" -F comm,pid 2>/dev/null >"$tmp/perfs"
# "comm pid" per sample, counted per comm.
awk 'NF == 2 { n[$1]++ } END { for (c in n) print c, n[c] }' "$tmp/ours" | sort >"$tmp/ours.n"
awk 'NF == 2 { n[$1]++ } END { for (c in n) print c, n[c] }' "$tmp/perfs" | sort >"$tmp/perf.n"
echo "# ours: $(tr '\n' ' ' <"$tmp/ours.n"); perf's: $(tr '\n' ' ' <"$tmp/perf.n")"
check "samples per comm are perf script's" cmp -s "$tmp/ours.n" "$tmp/perf.n"
demo_n=$(awk '$1 == "dwarfsample-dem" { print $2 }' "$tmp/ours.n")
check "the demo's samples are named dwarfsample-dem (${demo_n:-0})" \
	test "${demo_n:-0}" -ge 100

exit $fail
