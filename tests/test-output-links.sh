#!/bin/sh
# -o onto a symbolic link, for every verb that writes a file: the file
# the link names is written (a relative link's target taken from the
# link's directory, as open() does), the link stays a link, and nothing
# is left beside the link; a dangling link makes the file it names, as
# cp does; links that loop are refused, and left alone.  report's
# profile and --quality on the offline fixture (no sampling); with
# WORKLOAD, record's perf.data and the .old it keeps too (samples: the
# live suite).
# usage: test-output-links.sh DWARFSAMPLE FIXTURES [WORKLOAD]
# shellcheck disable=SC2317 # the helpers run through check
set -u
ds=$(realpath "$1")
fx=$(realpath "$2")/demo-static
workload=${3:+$(realpath "$3")}
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
mkdir "$tmp/links" "$tmp/data"
cd "$tmp" || exit 1

# is_link LINK TARGET: LINK is still a symbolic link to TARGET.
is_link() {
	test -L "$1" && test "$(readlink "$1")" = "$2"
}
# loop_left A B: links/A and links/B still point at each other.
loop_left() {
	is_link "links/$1" "$2" && is_link "links/$2" "$1"
}
# only DIR N: DIR holds N entries (no temporary file left).
only() {
	test "$(find "$1" -mindepth 1 | wc -l)" -eq "$2"
}
# clean L D: links/ holds L entries and data/ D.
clean() {
	only links "$1" && only data "$2"
}
report() {
	"$ds" report -i "$fx/perf.data" --debug-dir "$fx" "$@"
}

if [ -z "$workload" ]; then
	# --- report: a relative link into another directory ---
	ln -s ../data/rel.folded links/rel.folded
	report -o links/rel.folded 2>err
	check "report -o onto a relative link exits 0" test $? -eq 0 || cat err
	check "the link stays a link" is_link links/rel.folded ../data/rel.folded
	check "the file it names has the profile" \
		grep -q '^dwarfsample-dem;.*;sieve_primes.constprop.0 [0-9]*$' data/rel.folded
	check "nothing is left beside the link or the file" clean 1 1

	# --- an absolute link, its file there before: replaced, atomically ---
	echo "an earlier profile" >data/abs.svg
	ln -s "$tmp/data/abs.svg" links/abs.svg
	report -o links/abs.svg 2>err
	check "report -o onto an absolute link exits 0" test $? -eq 0 || cat err
	check "the link stays a link" is_link links/abs.svg "$tmp/data/abs.svg"
	check "the file it names has the new profile" grep -q '<svg' data/abs.svg
	check "nothing is left beside the link or the file" clean 2 2

	# --- report --quality writes through too ---
	ln -s ../data/q.txt links/q.txt
	report --quality -o links/q.txt 2>err
	check "report --quality -o onto a link exits 0" test $? -eq 0 || cat err
	check "the link stays a link" is_link links/q.txt ../data/q.txt
	check "the file it names has the report" grep -q '^unwind quality of ' data/q.txt

	# --- a dangling link: the file it names is made ---
	ln -s ../data/new.folded links/dangling.folded
	report -o links/dangling.folded 2>err
	check "report -o onto a dangling link exits 0" test $? -eq 0 || cat err
	check "the link stays a link" is_link links/dangling.folded ../data/new.folded
	check "the file it named is made, with the profile" grep -q 'sieve_primes' data/new.folded

	# --- links that loop ---
	ln -s b.folded links/a.folded
	ln -s a.folded links/b.folded
	report -o links/a.folded 2>err
	rc=$?
	check "report -o onto links that loop fails" test "$rc" -eq 1
	check "and says so, with what to do" grep -q "cannot write links/a.folded: its symbolic links loop .*choose another output path (-o)" err ||
		cat err
	check "the links are left as they were" loop_left a.folded b.folded
	exit $fail
fi

# --- record: the perf.data the link names, and its .old beside it ---
ln -s ../data/perf.data links/perf.data
"$ds" record -o links/perf.data -- "$workload" spin 0.2 >/dev/null 2>err
rc=$?
skip_if_refused "$rc" err
check "record -o onto a relative link exits 0" test "$rc" -eq 0 || cat err
check "the link stays a link" is_link links/perf.data ../data/perf.data
check "the file it names is the recording" sh -c "'$ds' dump -q -i data/perf.data >/dev/null 2>&1"
"$ds" record -o links/perf.data -- "$workload" spin 0.2 >/dev/null 2>err
check "a second record -o onto it exits 0" test $? -eq 0 || cat err
check "the link stays a link" is_link links/perf.data ../data/perf.data
check "the previous recording is kept beside the file, as data/perf.data.old" \
	sh -c "'$ds' dump -q -i data/perf.data.old >/dev/null 2>&1"
check "nothing is left beside the link" only links 1
ln -s "$tmp/data/new.data" links/dangling.data
"$ds" record -o links/dangling.data -- "$workload" spin 0.2 >/dev/null 2>err
check "record -o onto a dangling link exits 0" test $? -eq 0 || cat err
check "the link stays a link" is_link links/dangling.data "$tmp/data/new.data"
check "the file it named is made, the recording" sh -c "'$ds' dump -q -i data/new.data >/dev/null 2>&1"
ln -s b.data links/a.data
ln -s a.data links/b.data
"$ds" record -o links/a.data -- "$workload" spin 0.2 >/dev/null 2>err
check "record -o onto links that loop fails" test $? -eq 1
check "and says so, with what to do" grep -q "cannot write links/a.data: its symbolic links loop .*choose another output path (-o)" err ||
	cat err
check "the links are left as they were" loop_left a.data b.data
exit $fail
