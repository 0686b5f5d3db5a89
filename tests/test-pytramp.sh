#!/bin/sh
# Stacks through CPython-style perf trampolines on any machine (no CPython
# needed): pytramp-workload built with each template (see its top: 3.13's
# with copies every 16 bytes, 3.12's without endbr64 laid end to end, one
# that keeps a frame pointer), profiled live.  At least 95 % of the
# samples must be the whole chain, every level's copy named from the
# perf map and standing between two eval frames, complete to _start:
#     _start ... main;eval;py::level1:workload.py;eval;...;
#     py::level8:workload.py;eval;spin
# and once through libunwind alone (--no-rule-cache), the same.  A template
# the unwinder does not know (pytramp-workload-unknown) is not stepped
# through: at least 95 % of its stacks end at the innermost copy, and none
# goes past it.
# usage: test-pytramp.sh DWARFSAMPLE WORKLOAD...
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
ds=$1
shift
make_tmp

want="main;eval"
for level in 1 2 3 4 5 6 7 8; do
	want="$want;py::level$level:workload.py;eval"
done
want="$want;spin"

# share FOLDED: per mille of the samples whose stack starts at _start and
# ends with $want.
share() {
	awk -v want="$want" '
	{
		count = $NF
		stack = substr($0, 1, length($0) - length(count) - 1)
		all += count
		n = split(stack, f, ";")
		if (f[2] == "_start" && substr(stack, length(stack) - length(want) + 1) == want &&
		    substr(stack, length(stack) - length(want), 1) == ";")
			good += count
	}
	END { print all ? int(good * 1000 / all) : 0 }' "$1"
}

for wl in "$@"; do
	name=$(basename "$wl")
	for cache in "" --no-rule-cache; do
		out=$tmp/$name$cache
		rc=0
		# About 3 s: 1 ms of work a round.
		timeout 120 "$ds" -F 199 $cache -f folded -o "$out.folded" -- "$wl" 3000 \
			>"$out.pid" 2>"$out.log" || rc=$?
		skip_if_refused $rc "$out.log"
		rm -f "/tmp/perf-$(cat "$out.pid").map"
		check "$name$cache: profiled (exit 0)" [ $rc -eq 0 ] || cat "$out.log"
		if [ "$name" = pytramp-workload-unknown ]; then
			got=$(awk '$0 ~ /^[^;]*;py::level8:workload.py;eval;spin [0-9]+$/ { good += $NF }
				{ all += $NF } END { print all ? int(good * 1000 / all) : 0 }' "$out.folded")
			echo "# $name: $got per mille of the samples end at the innermost copy"
			check "$name: >= 95 % of the stacks end at the innermost copy of an unknown template" \
				[ "$got" -ge 950 ] || sort -t' ' -k2 -nr "$out.folded" | head -5
			# A sample taken in a copy itself has it as its last
			# frame; a stack that went past one has two.
			check "$name: no stack goes past a copy of it" \
				[ "$(grep -c 'py::level[1-8]:.*py::level[1-8]:' "$out.folded")" -eq 0 ] ||
				grep 'py::level[1-8]:.*py::level[1-8]:' "$out.folded" | head -3
			break
		fi
		got=$(share "$out.folded")
		echo "# $name$cache: $got per mille of the samples are the whole chain"
		check "$name$cache: >= 95 % of the samples go through every trampoline to _start" \
			[ "$got" -ge 950 ] || sort -t' ' -k2 -nr "$out.folded" | head -5
		# One run through libunwind is enough.
		[ "$name" = pytramp-workload-sub16 ] || break
	done
done

exit $fail
