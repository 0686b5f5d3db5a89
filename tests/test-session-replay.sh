#!/bin/sh
# Every output of `report` on the demo fixture, byte for byte, against
# what the command wrote before the per-record path became the library's
# session (prsession.h; the files in fixtures/demo-static/expected/ were
# written by 66c16e8, the last commit with the verbs' own copies of the
# path).  Each format, with the options that change what the session
# hands the sinks (names, inlined functions, lines, per-thread roots),
# on one worker and on three (a profile merged from three shares, its
# lines sorted, must be the one worker's).
#
# usage: test-session-replay.sh DWARFSAMPLE FIXTURES [--regenerate]
# --regenerate rewrites expected/ with DWARFSAMPLE's output: only when an
# output is meant to change, saying why in the commit.
set -u
ds=$(realpath "$1")
fixture=$(realpath "$2/demo-static")
expected=$fixture/expected
regenerate=${3:-}
. "$(dirname "$0")/lib.sh"
make_tmp
# Relative paths, so that what the outputs say of them (the quality
# report names its input) is the same in every checkout.
cd "$fixture" || exit 1

# name|report arguments (every run reads the fixture by build-id)
cases='script|
script-lines|-F comm,tid,time,ip,sym,dso,srcline
script-addresses|-F comm,tid,time,ip,dso --no-inline
folded|-f folded
folded-tid|-f folded --thread-roots --annotate
folded-no-inline|-f folded --no-inline
svg|-f svg
speedscope|-f speedscope
pprof|-f pprof
quality|--quality'

echo "$cases" | while IFS='|' read -r name args; do
	# shellcheck disable=SC2086 # the arguments are words
	"$ds" report -i perf.data --debug-dir . $args -o "$tmp/$name" 2>"$tmp/$name.err"
	echo "exit $?" >>"$tmp/$name"
	if [ "$regenerate" = --regenerate ]; then
		mkdir -p "$expected"
		cp "$tmp/$name" "$expected/$name"
		continue
	fi
	check "report $args: exit status and output as before the session" \
		cmp "$expected/$name" "$tmp/$name" || cat "$tmp/$name.err"
	case $name in script*|quality|speedscope|pprof) continue ;; esac
	# A profile from three workers' shares: the same lines.
	# shellcheck disable=SC2086
	"$ds" report --jobs 3 -i perf.data --debug-dir . $args -o "$tmp/$name.3" \
		2>"$tmp/$name.3.err"
	echo "exit $?" >>"$tmp/$name.3"
	sort "$expected/$name" >"$tmp/$name.sorted"
	sort -o "$tmp/$name.3" "$tmp/$name.3"
	check "report --jobs 3 $args: the same profile, merged from three" \
		cmp "$tmp/$name.sorted" "$tmp/$name.3" || cat "$tmp/$name.3.err"
done >"$tmp/results"
cat "$tmp/results"
grep -q '^not ok' "$tmp/results" && exit 1
[ "$regenerate" = --regenerate ] && echo "regenerated $expected"
exit 0
