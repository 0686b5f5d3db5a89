#!/bin/sh
# --call-graph MODE[,SIZE] and -g on every capturing verb: accepted in
# perf's spelling, each refusal exiting 2 before anything is sampled with
# a message that says what to give instead.
# usage: test-call-graph-options.sh DWARFSAMPLE
set -u
ds=$1
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
trap 'leave_tmp $?' EXIT

# refused "what" "message" args...: exit 2, the message on stderr, and
# nothing sampled (no target exists: PID 2147483647 would be refused
# only when the events open, after the options).
refused() {
	desc=$1 msg=$2
	shift 2
	"$ds" record -o "$tmp/never.data" "$@" -p 2147483647 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check "$desc: exit 2 ($rc)" test $rc -eq 2 || cat "$tmp/err"
	check "$desc: says '$msg'" grep -q -- "$msg" "$tmp/err" || cat "$tmp/err"
	check "$desc: writes nothing" test ! -e "$tmp/never.data"
}

refused "lbr" "does not record: use --call-graph fp (code with frame pointers) or dwarf" \
	--call-graph lbr
refused "fp with a size" "fp copies no stack, so it takes no SIZE" --call-graph fp,8192
refused "an unknown mode" "use fp, dwarf\[,SIZE\] or auto\[,SIZE\]" --call-graph frame
refused "a size of 0" "SIZE is the stack bytes copied per sample, 1 to 65528" \
	--call-graph dwarf,0
refused "a size past 65528" "1 to 65528" --call-graph auto,65529
refused "a size that is no number" "1 to 65528" --call-graph dwarf,8k
refused "dwarf,SIZE with --stack-size" "both set the stack copy: give one of them" \
	--call-graph dwarf,8192 --stack-size 16384
refused "fp with --stack-size" "fp copies no stack: leave out --stack-size" \
	--call-graph fp --stack-size 8192
refused "fp with --off-cpu-stack-size" "leave out --off-cpu-stack-size" \
	--call-graph fp --wall --off-cpu-stack-size 8192
refused "a size with --off-cpu" "use --off-cpu-stack-size" --off-cpu --call-graph auto,2048
refused "the mode twice" "given twice" --call-graph fp --call-graph dwarf

# Accepted on every capturing verb: -g and each mode parse (then --help
# ends the run), and each verb's help describes them.
for verb in "" record dump agent; do
	for opt in -g "--call-graph fp" "--call-graph dwarf,4097" "--call-graph auto" \
		"--call-graph auto,2048"; do
		# shellcheck disable=SC2086 # the verb and option split on purpose
		"$ds" $verb $opt --help >"$tmp/out" 2>"$tmp/err"
		check "dwarfsample $verb $opt is accepted" test $? -eq 0 || cat "$tmp/err"
	done
	# shellcheck disable=SC2086
	"$ds" $verb --help >"$tmp/out" 2>&1
	check "dwarfsample $verb --help describes --call-graph" \
		grep -q -- "--call-graph MODE\[,SIZE\]" "$tmp/out"
	check "dwarfsample $verb --help describes -g" grep -q -- "^  -g  " "$tmp/out"
done
# stat counts, records no stacks: -g is not its.
"$ds" stat -g -p 1 >"$tmp/out" 2>"$tmp/err"
check "stat refuses -g (exit 2)" test $? -eq 2
exit $fail
