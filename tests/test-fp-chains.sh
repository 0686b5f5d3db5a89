#!/bin/sh
# Samples without a stack copy (perf record -g, --call-graph fp): their user
# stack is the kernel's frame-pointer chain, checked against perf script on
# the same file, sample by sample, frame by frame, for a workload built as
# distributions now build (-O2 -fno-omit-frame-pointer
# -mno-omit-leaf-frame-pointer) by gcc and by clang:
#  - addresses 100 % equal: the sampled one as it is, each caller as perf
#    prints it, the return address, less one (dwarfsample attributes a
#    caller to its call instruction, as it does unwound ones);
#  - names 100 % equal, inlined functions aside (perf 6.1 shows none for a
#    chain's frames): the inline chains are checked against llvm-symbolizer;
#    and a caller whose return address is a function's first byte (a call
#    that does not return; ld.so's call of _dl_start, followed by the
#    label _dl_start_user), which perf names by that function and ours by
#    the call's;
#  - a recursion deeper than the kernel's limit ends at it ("chain limit");
#  - a file whose one event has chains and another copies (perf's
#    per-event call-graph terms): both kinds of sample unwound;
#  - --quality counts them as chains, never as kernel threads.
# usage: test-fp-chains.sh DWARFSAMPLE SOURCE-DIR
set -u
ds=$1
src=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
need_perf
make_tmp
if ! command -v llvm-symbolizer >/dev/null || ! command -v clang >/dev/null; then
	echo "SKIP: clang and llvm-symbolizer are needed"
	exit 77
fi

# compare OURS PERFS: listings of -F tid,time,ip,sym,dso (perf's with symoff); prints
# "samples frames addr_equal name_equal first_differences".
compare() {
	awk '
	# The hex number one less than h, as a string: awk numbers are
	# doubles, and mawk prints none above 2^32 with %x.  0 stays 0 (a
	# chain entry of 0 is shown as it is).
	function dec(h,  i, d) {
		for (i = length(h); i > 0; i--) {
			d = index("0123456789abcdef", substr(h, i, 1)) - 1
			if (d > 0)
				break
			h = substr(h, 1, i - 1) "f" substr(h, i + 1)
		}
		if (i == 0)
			return "0"
		h = substr(h, 1, i - 1) substr("0123456789abcdef", d, 1) substr(h, i + 1)
		sub(/^0+/, "", h)
		return h == "" ? "0" : h
	}
	FNR == 1 { file++ }
	# Ours marks a stack cut short (the depth limit) with a last
	# [truncated] line, which perf has not.
	file == 1 && /^\t/ && $2 == "[truncated]" { next }
	/^[^\t]/ { n[file]++; k = 0; hdr[file, n[file]] = $0; next }
	# A kernel frame is one perf found in the kernel: an entry of the
	# chain'"'"'s user part can look like a kernel address (perf shows it
	# [unknown]), and is a user frame all the same.
	/^\t/ { k++; nf[file, n[file]] = k; addr[file, n[file], k] = $1;
		kernel[file, n[file], k] = $NF == "([kernel.kallsyms])"
		nm = $2; off = ""
		# perf'"'"'s: sym+0xOFF (symoff), ours: sym.
		if (file == 2 && (i = index(nm, "+0x"))) { off = substr(nm, i + 3); nm = substr(nm, 1, i - 1) }
		name[file, n[file], k] = nm; at_start[file, n[file], k] = off == "0" }
	END {
		if (n[1] != n[2]) { print "samples differ: " n[1] " " n[2]; exit 1 }
		for (s = 1; s <= n[1]; s++) {
			if (hdr[1, s] != hdr[2, s]) { print "header " s ": " hdr[1, s] " / " hdr[2, s]; exit 1 }
			if (nf[1, s] != nf[2, s]) bad_len++
			user = 0
			for (k = 1; k <= nf[2, s]; k++) {
				frames++
				a = addr[1, s, k]; b = addr[2, s, k]
				kern = kernel[2, s, k]
				# Callers: ours is the return address less one.
				want = b
				if (!kern && user++ > 0)
					want = dec(b)
				if (a == want) aeq++
				else if (diffs++ < 3) print "# sample " s " frame " k ": " a " / perf " b > "/dev/stderr"
				# A caller whose return address starts a function (a
				# call that does not return, ld.so'"'"'s _start before
				# _dl_start_user): perf names the address, ours the call
				# instruction, as for every caller.
				# perf 6.1 names a PLT slot of libc whose symbol is
				# versioned or ld.so'"'"'s "@plt" (perf 7.3 and ours:
				# "memcpy@@GLIBC_2.14@plt", "__tunable_get_val@plt").
				if (name[1, s, k] == name[2, s, k] || (!kern && user > 1 && at_start[2, s, k]) ||
				    (name[2, s, k] == "@plt" && name[1, s, k] ~ /.@plt$/)) neq++
				else if (ndiffs++ < 3) print "# sample " s " frame " k ": " name[1, s, k] " / perf " name[2, s, k] > "/dev/stderr"
			}
		}
		print n[1], frames, aeq + 0, neq + 0, bad_len + 0
	}' "$1" "$2"
}

# compare_cases NAME RIGHT WRONG SED DESC WRONG-DESC: compare itself on
# made-up listings $tmp/NAME.ours and $tmp/NAME.perf, which must give
# RIGHT, and on ours changed by SED, which must give WRONG.
compare_cases() {
	check "$5" test "$(compare "$tmp/$1.ours" "$tmp/$1.perf" 2>&1)" = "$2"
	sed "$4" "$tmp/$1.ours" >"$tmp/$1.wrong"
	check "$6" test "$(compare "$tmp/$1.wrong" "$tmp/$1.perf" 2>/dev/null)" = "$3"
}

# compare itself, on listings as perf and ours print a sample at exec (CI
# saw one): the user part of its chain starts with an address that looks
# like the kernel's (perf: [unknown]), then a caller in no mapping above
# 2^32; one sample, 4 frames, all equal.
printf '%s\n' ' 7 1.000001: ' \
	'	ffffffff81001000 clear_user ([kernel.kallsyms])' \
	'	ffffffff81002000 [unknown] ([unknown])' \
	'	    7f810dd428a7 [unknown] ([unknown])' \
	'	           1ab77 _start (/lib64/ld.so)' >"$tmp/exec.ours"
printf '%s\n' ' 7 1.000001: ' \
	'	ffffffff81001000 clear_user+0x0 ([kernel.kallsyms])' \
	'	ffffffff81002000 [unknown] ([unknown])' \
	'	    7f810dd428a8 [unknown] ([unknown])' \
	'	           1ab78 _start+0x0 (/lib64/ld.so)' >"$tmp/exec.perf"
compare_cases exec "1 4 4 4 0" "1 4 3 4 0" 's/7f810dd428a7/7f810dd428a8/' \
	"the comparison takes a user entry that looks like the kernel's as the first user frame" \
	"and finds a caller not taken at its call"

# And a libc PLT slot perf 6.1 leaves unnamed ("@plt"): ours, as perf
# 7.3's, names its symbol; any other name differs.
printf '%s\n' ' 7 1.000002: ' \
	'	           262c0 __tunable_get_val@plt (/usr/lib/libc.so.6)' \
	'	           27304 __libc_start_main (/usr/lib/libc.so.6)' >"$tmp/plt.ours"
printf '%s\n' ' 7 1.000002: ' \
	'	           262c0 @plt+0x0 (/usr/lib/libc.so.6)' \
	'	           27305 __libc_start_main+0x85 (/usr/lib/libc.so.6)' >"$tmp/plt.perf"
compare_cases plt "1 2 2 2 0" "1 2 2 1 0" 's/__tunable_get_val@plt/__tunable_get_val/' \
	"the comparison takes perf 6.1's unnamed libc PLT slot for ours" \
	"and no name but a PLT slot's"

# check_file NAME FILE: dwarfsample report against perf script on FILE.
check_file() {
	perf script -i "$2" -F tid,time,ip,sym,symoff,dso --no-inline 2>/dev/null >"$tmp/$1.perf"
	"$ds" report -i "$2" -F tid,time,ip,sym,dso --no-inline 2>"$tmp/$1.err" >"$tmp/$1.ours"
	set -- "$1" $(compare "$tmp/$1.ours" "$tmp/$1.perf")
	echo "# $1: $2 samples, $3 frames, addresses equal $4, names equal $5"
	check "$1: perf script lists samples ($2)" test "${2:-0}" -ge 100
	check "$1: every sample as many frames as perf's" test "${6:-1}" -eq 0
	check "$1: addresses 100 % equal ($4 of $3)" test "${4:-x}" = "$3"
	check "$1: names 100 % equal ($5 of $3)" test "${5:-x}" = "$3"
}

for cc in gcc clang; do
	build_fp_workload $cc "$src"
	check "$cc builds the workload" test -x "$tmp/fpwl-$cc" || continue
	wl=$tmp/fpwl-$cc

	perf record -q -g -F 999 -o "$tmp/g.data" -- "$wl" recurse 40 0.4 >/dev/null 2>&1
	check_file "$cc -g, recursion 40 deep" "$tmp/g.data"
	perf record -q --call-graph fp -F 999 -o "$tmp/fp.data" -- "$wl" lib 0.4 >/dev/null 2>&1
	check_file "$cc --call-graph fp, through an omit-FP library" "$tmp/fp.data"

	# Every sampled address in work(): its inline chain (mix() inlined
	# into it, where it is) as llvm-symbolizer names the address.
	"$ds" report -i "$tmp/g.data" -F ip,sym 2>/dev/null | awk '
		!/^\t/ { if (c ~ / work$/) print c; c = ""; a = ""; next }
		a == "" { a = $1; c = a }
		$1 == a && c == a || $1 == a && c !~ / work$/ { c = c " " $2 }
		END { if (c ~ / work$/) print c }' | sort -u >"$tmp/inl"
	# One llvm-symbolizer for them all (one per address took seconds of a
	# loaded machine): a block per address, in their order, of two lines
	# a frame (its name, then file:line:column) and an empty line.
	awk '{ print "0x" $1 }' "$tmp/inl" |
		llvm-symbolizer --obj="$wl" --inlining --functions=short |
		awk 'NR == FNR { addr[++n] = $1; next }
		     !NF { print addr[++i] names; names = ""; k = 0; next }
		     k++ % 2 == 0 { names = names " " $1 }' "$tmp/inl" - >"$tmp/llvm"
	n=$(wc -l <"$tmp/inl")
	check "$cc: the inline chains of the $n sampled addresses in work() are llvm-symbolizer's" \
		sh -c "test $n -ge 1 && cmp -s '$tmp/llvm' '$tmp/inl'" ||
		diff "$tmp/inl" "$tmp/llvm" | head -5
	check "$cc: mix() inlined in some" grep -q " mix work$" "$tmp/inl"

	# Deeper than the kernel walks: the chain ends at its limit, and
	# --quality says so.
	perf record -q -g -F 999 -o "$tmp/deep.data" -- "$wl" recurse 300 0.3 >/dev/null 2>&1
	check_file "$cc -g, recursion 300 deep" "$tmp/deep.data"
	"$ds" report -i "$tmp/deep.data" --quality >"$tmp/q" 2>&1
	check "$cc: --quality: the kernel's depth limit ended the deep chains" \
		grep -q "chain limit .*fpwl-$cc" "$tmp/q" || cat "$tmp/q"
	check "$cc: and says how to raise it" grep -q "kernel.perf_event_max_stack" "$tmp/q"
	check "$cc: the chains the limit cut are marked [truncated]" \
		grep -q "[[:space:]]\[truncated\]" "$tmp/$cc -g, recursion 300 deep.ours"
done

# One event with chains, another with copies, in one file.
perf record -q -F 499 -e cpu-clock/call-graph=fp/ \
	-e task-clock/call-graph=dwarf,stack-size=16384/ -o "$tmp/mixed.data" -- \
	"$tmp/fpwl-clang" recurse 30 0.4 >/dev/null 2>&1
"$ds" report -i "$tmp/mixed.data" -F event,ip,sym --no-inline 2>"$tmp/err" >"$tmp/mixed"
# The samples in the workload's recursion, each of which main called: the
# others (ld.so's start, the exit) have no main to reach.
counts=$(awk 'function done() { if (ev != "" && rec) { n[ev]++; m[ev] += main } }
	/^[^\t]/ { done(); ev = $1 ~ /call-graph=fp/ ? "fp" : "dwarf"; rec = main = 0 }
	/^\t/ && $2 == "recurse" { rec = 1 }
	/^\t/ && $2 == "main" { main = 1 }
	END { done(); print n["fp"] + 0, m["fp"] + 0, n["dwarf"] + 0, m["dwarf"] + 0 }' "$tmp/mixed")
set -- $counts
echo "# mixed file: $1 chain samples in recurse ($2 reach main), $3 copy samples ($4 reach main)"
check "mixed file: chain samples reach main (99 %: $2 of $1)" \
	test "$1" -ge 50 -a $(($2 * 100)) -ge $(($1 * 99))
check "mixed file: copy samples reach main (99 %: $4 of $3)" \
	test "$3" -ge 50 -a $(($4 * 100)) -ge $(($3 * 99))
"$ds" report -i "$tmp/mixed.data" --quality >"$tmp/q" 2>&1
check "mixed file: --quality counts the chains as chains" grep -q "fp chain end" "$tmp/q"
check "mixed file: and no sample as a kernel thread's" sh -c "! grep -q 'no user registers' '$tmp/q'"

exit $fail
