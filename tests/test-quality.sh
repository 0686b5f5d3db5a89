#!/bin/sh
# Why a profile is incomplete, where, and what to do (report --quality,
# the live summary, pprof's stack_end label), on programs as shipped:
#   gzip     Debian's, stripped: its frames unnamed, the remedy its debug
#            package (dpkg's owner + -dbgsym) and the build-id path that
#            package installs, checked against readelf's build-id
#   stripped a program of our own stripped: build with -g or keep the
#            debug file
#   climb    stacks deeper than a 4 KiB copy: truncated in the workload,
#            the remedy a larger --stack-size; not joined, having no
#            call chain
#   deep     a recursion 400 frames deep in 6 KiB of stack: complete with
#            the default --max-depth (1024), which the copy would allow;
#            --max-depth 127 ends them, and the summary, --quality and the
#            folded [truncated] root say so
#   ld.so    a program starting, relocated by ld.so, whose entry point
#            (_start) has no CFI: its stacks end there, complete, not
#            "without unwind information"
# usage: test-quality.sh DWARFSAMPLE AGREE-WORKLOAD
set -u
ds=$(realpath "$1")
workload=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
# A build-id cache of its own: one that holds an unstripped copy of a
# binary (an earlier record's) rightly names the stripped one too.
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/cache"
mkdir -p "$HOME" "$XDG_CACHE_HOME"

# --- gzip, as Debian ships it ---
gzip_bin=$(command -v gzip)
head -c 20000000 /dev/zero | tr '\0' 'a' >"$tmp/in"
awk 'BEGIN { srand(7); for (i = 0; i < 400000; i++) print rand(), i * 7919 % 104729 }' \
	>>"$tmp/in"
"$ds" record -F 999 -o "$tmp/gz.data" -- "$gzip_bin" -9 -c "$tmp/in" >/dev/null 2>"$tmp/err"
rc=$?
skip_if_refused $rc "$tmp/err"
check "record gzip exits 0" test $rc -eq 0 || cat "$tmp/err"
"$ds" report --quality -i "$tmp/gz.data" -o "$tmp/gz.quality" 2>"$tmp/err"
check "report --quality exits 0" test $? -eq 0 || cat "$tmp/err"
check "it heads with the samples and how complete" \
	grep -Eq "^unwind quality of .*gz.data: [0-9]+ samples, [0-9.]+% of stacks complete" \
	"$tmp/gz.quality"
real=$(realpath "$gzip_bin")
check "gzip's frames are listed as unnamed" \
	grep -Eq "^ +[0-9]+ +[0-9.]+%  no symbols +$real$" "$tmp/gz.quality"
if dpkg -S "$real" >/dev/null 2>&1 || dpkg -S "${real#/usr}" >/dev/null 2>&1; then
	pkg=$(dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}")
	pkg=${pkg%%:*}
	id=$(readelf -n "$real" | sed -n 's/.*Build ID: //p')
	dir=$(echo "$id" | cut -c1-2)
	rest=$(echo "$id" | cut -c3-)
	check "the remedy is its debug package, as dpkg names the owner ($pkg-dbgsym)" \
		grep -q "apt-get install $pkg-dbgsym" "$tmp/gz.quality"
	check "and the file it installs, by readelf's build-id" \
		grep -q "/usr/lib/debug/.build-id/$dir/$rest.debug" "$tmp/gz.quality"
else
	echo "# $real is not from a dpkg package: the package remedy is not checked"
fi

# --- a program of our own, stripped ---
cp "$workload" "$tmp/stripped-workload"
strip --strip-all "$tmp/stripped-workload"
# Copies that hold the whole stack: complete by unwinding alone, not by
# joining a cut stack with an earlier one, which may not exist.
"$ds" record -F 999 --stack-size 65528 -o "$tmp/s.data" -- "$tmp/stripped-workload" climb 0.5 \
	>/dev/null 2>"$tmp/err"
check "record the stripped program exits 0" test $? -eq 0 || cat "$tmp/err"
"$ds" report --quality -i "$tmp/s.data" >"$tmp/s.quality" 2>"$tmp/err"
check "its frames are listed as unnamed" \
	grep -Eq "no symbols +$tmp/stripped-workload$" "$tmp/s.quality"
check "with how to keep them named" \
	grep -q "no symbols: build it with -g, or keep its debug file and pass --debug-dir" \
	"$tmp/s.quality"
# All but the odd sample whose stack the kernel could not copy whole (a
# page not present when the sample was taken: "truncated" whatever the
# copy's size) -- and none without unwind information.
outermost=$(sed -n 's/^stacks ended: outermost \([0-9.]*\)%.*/\1/p' "$tmp/s.quality")
check "its stacks are complete all the same, .eh_frame stays (${outermost:-?}% outermost)" \
	awk -v o="${outermost:-0}" 'BEGIN { exit !(o >= 99.0) }'
check "and none ended for want of unwind information" \
	sh -c "! grep -q 'no unwind info.*stripped-workload' '$tmp/s.quality'"

# --- a program starting: stacks that end at ld.so's entry point ---
# Binding every symbol now, with the bindings logged, keeps ld.so busy
# for some tens of milliseconds before the program's main.
ldso=$(realpath /lib64/ld-linux-x86-64.so.2)
entry=$(readelf -h "$ldso" | awk '/Entry point address/ { print $NF }')
# One start gives a few samples at 999 Hz, fewer the faster the machine
# (an idle CI run once had 4): ten starts give tens, whatever the speed.
export LD_DEBUG_OUTPUT="$tmp/ld-debug" ds
"$ds" record -F 999 --stack-size 65528 -o "$tmp/l.data" -- sh -c \
	'for i in 1 2 3 4 5 6 7 8 9 10; do
		LD_BIND_NOW=1 LD_DEBUG=bindings "$ds" --version || exit 1
	done' >/dev/null 2>"$tmp/err"
check "record a program's start exits 0" test $? -eq 0 || cat "$tmp/err"
# Each stack from its own copy alone (--no-join): a copy the kernel cut
# short is then listed where it ended, not completed from another stack.
"$ds" report --no-join -F comm,tid,time,ip,sym,dso --no-inline -i "$tmp/l.data" \
	-o "$tmp/l.frames" 2>"$tmp/err"
# The outermost frame of each stack that ends in ld.so, and the stack.
awk -v ldso="($ldso)" '
	function done() { if (last_dso == ldso) print last_ip "|" stack }
	/^\t/ { last_ip = $1; last_dso = $NF; stack = stack " <- " $2; next }
	/^$/ { done(); last_dso = "" }
	{ stack = $0 }
	END { done() }' "$tmp/l.frames" >"$tmp/l.ends"
in_ldso=0 not_entry=0
while IFS='|' read -r ip stack; do
	in_ldso=$((in_ldso + 1))
	off=$((0x$ip - entry))
	[ $off -ge 0 ] && [ $off -lt 64 ] && continue
	not_entry=$((not_entry + 1))
	echo "# ends elsewhere in ld.so: $stack"
done <"$tmp/l.ends"
check "stacks of the start end in ld.so ($in_ldso)" test "$in_ldso" -ge 5
"$ds" report --no-join --quality -i "$tmp/l.data" >"$tmp/l.quality" 2>"$tmp/err"
# Each at the entry point -- but the odd stack the kernel could not copy
# whole ends where its copy did: a page not yet in memory (readlink's
# buffer in _dl_get_origin, a fresh page below the stack pointer, was one
# seen), which --quality lists as "page missing".  Those may end
# elsewhere, and no more.
cut=$(awk -v ldso="$ldso" '
	$3 " " $4 == "page missing" && $NF == ldso { n += $1 }
	END { print n + 0 }' "$tmp/l.quality")
# And a stack whose sampled frame is in an epilogue that the unwinder
# cannot step by its code: GCC's CFI has the registers popped still saved
# below the stack pointer, out of the copy, and _dl_relocate_object, which
# keeps rbp as its frame pointer, needs rbp back (its callees' epilogues,
# _dl_lookup_symbol_x's: 2 stacks in 60 such runs before leafexit.c, none
# in 80 after).  Epilogues it does not decode (a conditional branch past
# the pops) still end so, as an "unwinder error" row: at most one, or 1 %.
err=$(awk -v ldso="$ldso" '
	$3 " " $4 == "unwinder error" && $NF == ldso { n += $1 }
	END { print n + 0 }' "$tmp/l.quality")
check "each at its entry point, $entry, as readelf reads it ($not_entry elsewhere, $cut of them cut short by the kernel's copy, $err by an unwinder error)" \
	test "$not_entry" -le $((cut + err)) -a \( "$err" -le 1 -o $((err * 100)) -le "$in_ldso" \) ||
	cat "$tmp/l.quality"
check "report --quality does not call them cut short for want of unwind information" \
	sh -c "! grep -q 'no unwind info.*ld-linux' '$tmp/l.quality'"

# --- stacks deeper than the copy ---
"$ds" record -F 999 --stack-size 4096 -o "$tmp/c.data" -- "$workload" climb 1 \
	>/dev/null 2>"$tmp/err"
check "record climb with 4 KiB copies exits 0" test $? -eq 0 || cat "$tmp/err"
"$ds" report --quality --no-join -i "$tmp/c.data" >"$tmp/c.quality" 2>"$tmp/err"
check "--no-join: the cut stacks are listed where they ended" \
	grep -Eq "^ +[0-9]+ +[0-9.]+%  truncated +$workload$" "$tmp/c.quality"
check "with the copy's size and a larger --stack-size" \
	grep -q "the 4096-byte stack copy ran out here: a larger --stack-size (up to 65528)" \
	"$tmp/c.quality"
"$ds" report --quality -i "$tmp/c.data" >"$tmp/cj.quality" 2>"$tmp/err"
# No call chain in the capture: nothing confirms a join (unwind/join.c).
check "with joining but no call chain, the head claims none completed by it" \
	grep -Eq "of stacks complete \(0\.0% by joining\)" "$tmp/cj.quality"
if command -v go >/dev/null 2>&1; then
	"$ds" report --no-join -f pprof -i "$tmp/c.data" -o "$tmp/c.pb.gz" 2>"$tmp/err"
	go tool pprof -raw "$tmp/c.pb.gz" >"$tmp/raw" 2>&1
	check "pprof: cut stacks carry stack_end:[truncated]" \
		grep -q 'stack_end:\[truncated\]' "$tmp/raw"
fi
"$ds" --no-join --stack-size 4096 -F 999 -o "$tmp/live.folded" -- "$workload" climb 0.5 \
	>/dev/null 2>"$tmp/live.err"
check "the live summary lists where stacks ended early" \
	grep -q "^dwarfsample: stacks that ended early, by binary and why:" "$tmp/live.err"
check "and why, with the remedy" \
	grep -q "^dwarfsample: .*the 4096-byte stack copy ran out here" "$tmp/live.err"

# --- stacks deeper than the depth limit, not than the copy ---
"$ds" record -F 999 -o "$tmp/d.data" -- "$workload" deep 1 >/dev/null 2>"$tmp/err"
check "record deep exits 0" test $? -eq 0 || cat "$tmp/err"
"$ds" report -f folded -i "$tmp/d.data" -o "$tmp/d.folded" 2>"$tmp/d.err"
# Folded lines are distinct stacks: the samples are their counts.  (The
# frames may be unnamed: the build-id cache holds the stripped copy made
# above.)
check "the default depth limit: deep stacks complete, 400 frames and more" \
	awk -F';' '{ c = $NF; sub(/.* /, "", c); n += c
		     if (NF > 400 && $2 != "[truncated]") whole += c }
		END { exit !(n > 0 && whole >= 0.9 * n) }' "$tmp/d.folded" ||
	cut -c1-100 "$tmp/d.folded"
check "and the summary has no stack ended by the depth limit" \
	sh -c "! grep -q 'depth limit' '$tmp/d.err'"
"$ds" report --max-depth 127 -f folded -i "$tmp/d.data" -o "$tmp/d127.folded" 2>"$tmp/d127.err"
check "--max-depth 127: the summary says the depth limit ended most stacks" \
	grep -Eq "depth limit (9[0-9]|100)\.[0-9]%" "$tmp/d127.err"
check "and their folded stacks root at [truncated], above their 127 frames" \
	awk -F';' '{ c = $NF; sub(/.* /, "", c); n += c
		     if ($2 == "[truncated]" && NF == 129) cut += c }
		END { exit !(n > 0 && cut >= 0.9 * n) }' "$tmp/d127.folded" ||
	cut -c1-100 "$tmp/d127.folded"
"$ds" report --max-depth 127 --quality -i "$tmp/d.data" >"$tmp/d.quality" 2>"$tmp/err"
check "--quality names the depth limit, not the copy, with its remedy" \
	grep -q "deeper than --max-depth 127: raise it (up to 1024)" "$tmp/d.quality"
exit $fail
