#!/bin/sh
# Joining stacks cut by the copy, against the ground truth: workloads
# recorded with 64 KiB copies are replayed with every copy cut to 4, 8
# and 16 KiB, joining on, and each joined stack is compared with the
# unwinding of the same sample's full copy (tests/join-truth.c).  A join
# needs the sample's user call chain to confirm it (unwind/join.c); these
# captures have none, so none may join -- where joining by address (and
# the bytes of the frame) did, and was wrong:
#   callers  one computation reached from three callers, its frames the
#            same bytes whoever called: 62 % of those joins were wrong
#   paths    every descent a new random path through two functions per
#            level, same frames at the same places
#   climb    a recursion 45 levels deep that works at every level: its
#            joins were right, and go too (no evidence they are)
#   recurse  the same recursion over and over
# The joins a chain confirms are tests/test-unwind.c's.
# Then the marks: a capture cut by the copy itself (--stack-size 8192),
# reported as folded with --annotate, as pprof, and the summary's share;
# --no-join leaves the stacks cut as well.
# usage: test-join.sh DWARFSAMPLE AGREE-WORKLOAD JOIN-TRUTH
set -u
ds=$(realpath "$1")
workload=$(realpath "$2")
truth=$(realpath "$3")
# shellcheck shell=sh source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

for w in climb paths recurse callers; do
	"$ds" record -F 999 --stack-size 65528 -o "$tmp/$w.data" -- "$workload" $w 2 \
		>/dev/null 2>"$tmp/$w.err"
	rc=$?
	skip_if_refused $rc "$tmp/$w.err"
	check "$w: recorded with 64 KiB copies" test $rc -eq 0 || cat "$tmp/$w.err"
done
for run in "climb 4096" "climb 8192" "paths 4096" "paths 8192" "recurse 8192" \
	"recurse 16384" "callers 8192" "callers 16384"; do
	# shellcheck disable=SC2086 # two words
	set -- $run
	"$truth" "$tmp/$1.data" "$2" "$1" 999 0 0 >"$tmp/out"
	check "$1, cut to $2: no joined stack contradicts the truth" test $? -eq 0
	check "$1, cut to $2: without a call chain, nothing joined" \
		grep -q '; joined 0 (' "$tmp/out"
	cat "$tmp/out"
done
# Where joining by address would have joined: climb's outer frames live
# across samples, callers' are the same code through other callers.
for w in climb callers; do
	"$truth" "$tmp/$w.data" 8192 "$w" >"$tmp/out"
	check "$w, cut to 8192: the stacks left cut for want of a chain are counted" \
		grep -Eq 'unconfirmed [1-9]' "$tmp/out"
done

# --- the marks, on copies cut by the kernel ---
"$ds" record -F 999 --stack-size 8192 -o "$tmp/cut.data" -- "$workload" climb 2 \
	>/dev/null 2>"$tmp/err"
check "record --stack-size 8192 of climb exits 0" test $? -eq 0 || cat "$tmp/err"
"$ds" report --annotate -f folded -i "$tmp/cut.data" -o "$tmp/joined.folded" 2>"$tmp/report.err"
check "report --annotate exits 0" test $? -eq 0 || cat "$tmp/report.err"
check "no call chain recorded: the summary claims no joining" \
	sh -c "! grep -q 'completed by joining' '$tmp/report.err'"
check "and no frame is marked joined" sh -c "! grep -qF '_[joined]' '$tmp/joined.folded'"
check "the cut stacks root at [truncated], under the process" \
	grep -q '^agree-workload;\[truncated\];climb;climb' "$tmp/joined.folded"
# (A sample at the entry point itself, the process's first page fault,
# is _start alone. A sample while ld.so runs the libraries' initializers,
# before the program's _start, roots at ld.so's entry: the code after its
# call to _dl_start is labelled _dl_start_user, which calls _dl_init; a
# clean-clone run under the sanitizers took one in libc's _init_first.)
roots='^agree-workload;(_start|_dl_start_user)[; ]'
check "and only they: every other stack roots at _start, or ld.so's _dl_start_user" \
	sh -c "! grep -v '^agree-workload;\[truncated\];' '$tmp/joined.folded' | grep -Evq '$roots'" ||
	grep -v '^agree-workload;\[truncated\];' "$tmp/joined.folded" | grep -Ev "$roots" | head -5
"$ds" report --no-join --annotate -f folded -i "$tmp/cut.data" -o "$tmp/cut.folded" \
	2>"$tmp/nojoin.err"
check "report --no-join exits 0" test $? -eq 0 || cat "$tmp/nojoin.err"
check "--no-join: no frame joined" sh -c "! grep -qF '_[joined]' '$tmp/cut.folded'"
check "--no-join: the summary has truncated stacks" grep -Eq "truncated [1-9]" "$tmp/nojoin.err"
check "--no-join: and no joining" sh -c "! grep -q 'completed by joining' '$tmp/nojoin.err'"
if command -v go >/dev/null 2>&1; then
	"$ds" report -f pprof -i "$tmp/cut.data" -o "$tmp/cut.pb.gz" 2>"$tmp/err"
	check "report -f pprof exits 0" test $? -eq 0 || cat "$tmp/err"
	go tool pprof -raw "$tmp/cut.pb.gz" >"$tmp/raw" 2>&1
	check "go tool pprof: cut samples carry stack_end:[truncated]" \
		grep -q 'stack_end:\[truncated\]' "$tmp/raw"
	check "go tool pprof: and none stack_end:[joined]" \
		sh -c "! grep -q 'stack_end:\[joined\]' '$tmp/raw'"
else
	echo "# go is not installed: the pprof labels are not read back"
fi
exit $fail
