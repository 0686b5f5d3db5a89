#!/bin/sh
# Joining stacks cut by the copy, against the ground truth: workloads
# recorded with 64 KiB copies are replayed with every copy cut to 4, 8
# and 16 KiB, joining on, and each joined stack is compared with the
# unwinding of the same sample's full copy (tests/join-truth.c):
#   climb    a recursion 45 levels deep that works at every level, so its
#            samples fall at every depth of one activation: joined stacks
#            identical to the truth (>= 99.9 %, none contradicted), and
#            >= 90 % of the cut stacks recovered
#   paths    every descent a new random path through two functions per
#            level, same frames at the same places: what joining by
#            return address and stack address alone gets wrong (it did,
#            on 543 of 556 joins); none contradicted
#   recurse  the same recursion over and over, a new activation between
#            any two samples: none contradicted
# Then the marks: a capture cut by the copy itself (--stack-size 8192),
# reported as folded with --annotate (joined frames "_[joined]"), as
# pprof (stack_end and joined_frames labels, read by go tool pprof), and
# the summary's share; --no-join leaves the stacks cut.
# usage: test-join.sh DWARFSAMPLE AGREE-WORKLOAD JOIN-TRUTH
set -u
ds=$(realpath "$1")
workload=$(realpath "$2")
truth=$(realpath "$3")
# shellcheck shell=sh source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

for w in climb paths recurse; do
	"$ds" record -F 999 --stack-size 65528 -o "$tmp/$w.data" -- "$workload" $w 2 \
		>/dev/null 2>"$tmp/$w.err"
	rc=$?
	skip_if_refused $rc "$tmp/$w.err"
	check "$w: recorded with 64 KiB copies" test $rc -eq 0 || cat "$tmp/$w.err"
done
for n in 4096 8192; do
	"$truth" "$tmp/climb.data" $n climb 999 0 90 >"$tmp/out"
	check "climb, cut to $n: joined stacks are the truth's, >= 90 % recovered" \
		test $? -eq 0
	cat "$tmp/out"
done
# Cuts that leave most of their stacks short (paths: 12 KiB deep).
for run in "paths 4096" "paths 8192" "recurse 8192" "recurse 16384"; do
	# shellcheck disable=SC2086 # two words
	set -- $run
	"$truth" "$tmp/$1.data" "$2" "$1" 999 0 0 >"$tmp/out"
	check "$1, cut to $2: no joined stack contradicts the truth" test $? -eq 0
	cat "$tmp/out"
done

# --- the marks, on copies cut by the kernel ---
"$ds" record -F 999 --stack-size 8192 -o "$tmp/cut.data" -- "$workload" climb 2 \
	>/dev/null 2>"$tmp/err"
check "record --stack-size 8192 of climb exits 0" test $? -eq 0 || cat "$tmp/err"
"$ds" report --annotate -f folded -i "$tmp/cut.data" -o "$tmp/joined.folded" 2>"$tmp/report.err"
check "report --annotate exits 0" test $? -eq 0 || cat "$tmp/report.err"
check "the summary counts the joined stacks" \
	grep -Eq "; [0-9.]+% completed by joining" "$tmp/report.err"
check "joined frames are marked _[joined], the outermost first" \
	grep -Eq '^agree-workload;_start_\[joined\];__libc_start_main[^;]*_\[joined\];' \
	"$tmp/joined.folded"
# Joined frames are the outermost: from the root, once a frame is the
# sample's own, none after it is joined.
check "joined frames are a stack's outermost, never between its own" \
	awk -F';' '{
		sub(/ [0-9]+$/, "")
		own = 0
		for (i = 2; i <= NF; i++)
			if ($i !~ /_\[joined\]$/)
				own = 1
			else if (own)
				bad = 1
	}
	END { exit bad }' "$tmp/joined.folded"
check "joined stacks root at _start: as complete as the truth's" \
	sh -c "! grep -F '_[joined]' '$tmp/joined.folded' | grep -vq '^agree-workload;_start_\[joined\];'"
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
	check "go tool pprof: joined samples carry stack_end:[joined]" \
		grep -q 'stack_end:\[joined\]' "$tmp/raw"
	check "go tool pprof: and joined_frames, a number" \
		grep -Eq 'joined_frames:\[[1-9][0-9]*\]' "$tmp/raw"
else
	echo "# go is not installed: the pprof labels are not read back"
fi
exit $fail
