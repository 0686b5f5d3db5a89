#!/bin/sh
# CPython 3.13 (Debian 13's) with its perf trampolines, run as a container
# runs it: chrooted into the Debian 13 root, in a mount namespace of its
# own with its own /proc and /tmp, so that its files and its perf map are
# reached only through /proc/PID/root.
#
#  - Profiled live, started with -X perf, then with PYTHONPERFSUPPORT=1:
#    at least 95 % of its samples show the Python chain in place, the
#    interpreter's frames between every two Python frames and around
#    them, the stack complete to _start:
#        _start ... Py_RunMain ... py::<module>:/mnt/app.py ...
#        py::outer ... py::middle ... py::fib ... py::fib ... (leaf)
#    and run by a thread, complete to clone3:
#        [libc.so.6] (clone3);[libc.so.6] (start_thread) ...
#        py::Thread._bootstrap ... py::Thread.run ... py::outer ...
#  - perf 7.3 records the same workload (--call-graph dwarf); report -i
#    reads that capture: every sample perf script unwinds shows the same
#    frames (symbol and file) in ours, frame for frame, as far as perf's
#    go.  perf 7.3 stops at the first trampoline (the callers of the
#    innermost Python function are not in its stacks): there the truth is
#    the expected chain, which ours must show on >= 95 % of the samples.
#  - --no-rule-cache (every step through libunwind) gives the same
#    stacks as the rule cache.
#
# usage: test-python-perf.sh DWARFSAMPLE TESTS-DIR
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
ds=$1
need_debian13
need_mount_ns
make_tmp

# About 3 s of CPU (fib(22) is ~57 000 calls a round), whatever the
# machine: counted in rounds, not in time.
rounds=${DS_PYPERF_ROUNDS:-1000}
mkdir -p "$tmp/app"
cp "$2/python-perf-app.py" "$tmp/app/app.py"
app=/mnt/app.py

# The command that runs COMMAND in the Debian 13 root as a container:
#     unshare -m sh -c "$in_root" sh ROOT APPDIR TMPDIR COMMAND...
# a private mount namespace with its own /proc, APPDIR as /mnt, and as
# /tmp either TMPDIR (to keep the perf map) or, given "-", a tmpfs that
# goes with the namespace.
# shellcheck disable=SC2016 # expanded by that shell
in_root='
	root=$1 app=$2 tmpdir=$3
	shift 3
	mount -t proc proc "$root/proc" &&
	mount --bind "$app" "$root/mnt" &&
	if [ "$tmpdir" = - ]; then
		mount -t tmpfs tmpfs "$root/tmp"
	else
		mount --bind "$tmpdir" "$root/tmp"
	fi &&
	exec chroot "$root" "$@"'

# chain_share FOLDED ROOTS HEAD: the per-mille of python3.13's samples in
# folded profile FOLDED whose outermost frames are ROOTS (";"-joined),
# whose Python frames are HEAD (space-separated names, all of them) then
# py::outer, then py::middle and py::fib... (each optional from middle
# on), each between two of the interpreter's frames, the leaf the
# interpreter's or what it calls.
chain_share() {
	awk -v app="$app" -v bad="$1.other" -v roots="$2" -v head="$3 py::outer:$app" '
	BEGIN { nr = split(roots, r, ";"); nh = split(head, h, " ") }
	{
		n = split($0, f, ";")
		count = f[n]
		sub(/.* /, "", count)
		sub(/ [0-9]+$/, "", f[n])
		if (f[1] != "python3.13")
			next
		all += count
		ok = n > nr + 1
		for (i = 1; ok && i <= nr; i++)
			ok = f[i + 1] == r[i]
		state = 0; last_py = 0
		for (i = nr + 2; ok && i <= n; i++) {
			if (f[i] !~ /^py::/)
				continue
			# Between two Python frames, the interpreter.
			if (i == last_py + 1) { ok = 0; break }
			last_py = i
			if (state < nh && f[i] == h[state + 1]) state++
			else if (state == nh && f[i] == "py::middle:" app) state++
			else if (state > nh && f[i] == "py::fib:" app) state++
			else ok = 0
		}
		if (ok && state >= nh && last_py < n)
			good += count
		else
			print > bad
	}
	END { printf "%d\n", all ? good * 1000 / all : 0; print all > "/dev/stderr" }' "$1"
}

# The outermost frames of the main thread's stacks, and of a thread's
# (clone3 and start_thread: Debian 13's libc names neither), and the
# Python frames a thread runs outer under.
main_roots="_start;__libc_start_main;[libc.so.6];Py_BytesMain;Py_RunMain"
thread_roots="[libc.so.6];[libc.so.6]"
threading=/usr/lib/python3.13/threading.py
thread_head="py::Thread._bootstrap:$threading py::Thread._bootstrap_inner:$threading"
thread_head="$thread_head py::Thread.run:$threading"

# The trampolines turned on by -X perf, by the environment, and for a
# thread's stacks.
for mode in x-perf env thread; do
	roots=$main_roots head="py::<module>:$app"
	case $mode in
	x-perf) set -- python3.13 -X perf "$app" "$rounds" ;;
	env) set -- env PYTHONPERFSUPPORT=1 python3.13 "$app" "$rounds" ;;
	thread)
		set -- python3.13 -X perf "$app" "$rounds" thread
		roots=$thread_roots head=$thread_head
		;;
	esac
	rc=0
	timeout 120 "$ds" -F 199 -f folded -o "$tmp/$mode.folded" -- \
		unshare -m sh -c "$in_root" sh "$d13" "$tmp/app" - "$@" \
		>"$tmp/$mode.log" 2>&1 || rc=$?
	skip_if_refused $rc "$tmp/$mode.log"
	check "$mode: profiled (exit 0)" [ $rc -eq 0 ] || cat "$tmp/$mode.log"
	share=$(chain_share "$tmp/$mode.folded" "$roots" "$head" 2>"$tmp/$mode.all")
	echo "# $mode: $share per mille of $(cat "$tmp/$mode.all") samples show the chain"
	check "$mode: >= 95 % of the samples show the Python chain in place, complete to the root" \
		[ "$share" -ge 950 ] || { cat "$tmp/$mode.log"; cut -c1-400 "$tmp/$mode.folded.other"; }
done

# perf 7.3 records the same workload, its perf map kept.
mkdir "$tmp/ptmp"
rc=0
# (perf puts its own directory, the root's /usr/bin, first in PATH.)
timeout 120 "$d13/run-perf" record -q -F 199 --call-graph dwarf,32768 -o "$tmp/perf.data" -- \
	/usr/bin/env PATH="$PATH" unshare -m sh -c "$in_root" sh "$d13" "$tmp/app" "$tmp/ptmp" python3.13 -X perf "$app" \
	"$rounds" >"$tmp/record.log" 2>&1 || rc=$?
check "perf 7.3 recorded the workload" [ $rc -eq 0 ] || cat "$tmp/record.log"
set -- "$tmp"/ptmp/perf-*.map
pid=${1##*/perf-}
pid=${pid%.map}
check "CPython wrote one perf map" test $# -eq 1 -a -s "$1" || ls -l "$tmp/ptmp"
# Both read the map of a process that is gone at the host's
# /tmp/perf-PID.map (its pid, one of the host's, is free now); the
# files by build-id from the root, as a machine without them would.
if [ -e "/tmp/perf-$pid.map" ]; then
	check "/tmp/perf-$pid.map is free for the capture's map" false
	exit $fail
fi
cp "$1" "/tmp/perf-$pid.map"
# Every file the workload mapped is linked, by the build-id its MMAP2
# record carries: perf 7.3 records them there (where the kernel gives
# them), and its buildid-list (the header's table, also read) names only
# some of the files, a different set each run. A file left out ended our
# stacks where perf, reading the root through --symfs, went on: ld.so
# under a sample in __libc_early_init, libz or libexpat under one in
# their .fini at exit.
{
	"$d13/run-perf" script -i "$tmp/perf.data" --show-mmap-events -F comm 2>/dev/null |
		sed -n 's/.*PERF_RECORD_MMAP2 .* <\([0-9a-f]*\)>\]: [-rwxps]* \(\/.*\)$/\1 \2/p'
	"$d13/run-perf" buildid-list -i "$tmp/perf.data" 2>/dev/null
} | sort -u | while read -r id path; do
	[ -f "$d13$path" ] || continue
	mkdir -p "$tmp/ids/.build-id/$(echo "$id" | cut -c1-2)"
	ln -sf "$d13$path" "$tmp/ids/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)"
done
fields=comm,tid,time,ip,sym,dso
"$d13/run-perf" script -i "$tmp/perf.data" --symfs "$d13" -F $fields --no-inline \
	>"$tmp/perf.txt" 2>"$tmp/perf.err"
for cache in "" --no-rule-cache; do
	"$ds" report -i "$tmp/perf.data" --debug-dir "$tmp/ids" -F $fields --no-inline $cache \
		-o "$tmp/ours$cache.txt" >"$tmp/report.log" 2>&1
done
"$ds" report -i "$tmp/perf.data" --debug-dir "$tmp/ids" -f folded -o "$tmp/perf.folded" \
	>>"$tmp/report.log" 2>&1
rm -f "/tmp/perf-$pid.map"
check "--no-rule-cache (libunwind through the trampolines) gives the same stacks" \
	cmp -s "$tmp/ours.txt" "$tmp/ours--no-rule-cache.txt"

# agree PERFS OURS: per sample of python3.13 (paired by header; the
# host's programs that start it, read through --symfs by perf, are not
# compared), perf's user frames (symbol and file) are ours, from the
# leaf, frame for frame; prints
# "agreeing samples-perf-unwound py-after-perf's-end".  The exit path
# too: a library's .fini (no CFI) sampled at its first instruction, under
# _dl_fini (which keeps rbp) under __run_exit_handlers, is stepped by the
# frame pointer, as perf steps it: to __run_exit_handlers (_dl_fini, whose
# frame rbp is, skipped by both), exit and _start.
agree() {
	awk -v other="$tmp/disagree.txt" '
	function flush() {
		if (hdr == "") return
		if (src == 1) { perf[hdr] = frames; pn[hdr] = n }
		else ours[hdr] = frames
		hdr = ""
	}
	FNR == 1 { flush(); src++ }
	/^[^ \t]/ { flush(); if ($1 == "python3.13") hdr = $1 " " $2 " " $3; frames = ""; n = 0; next }
	/^[ \t]+[0-9a-f]+ / {
		if ($0 ~ /\[kernel\.kallsyms\]/ || $0 ~ /\[truncated\]/) next
		line = $0
		sub(/^[ \t]+[0-9a-f]+ /, "", line)
		frames = frames line "\n"
		n++
	}
	END {
		flush()
		for (h in perf) {
			if (!pn[h]) continue
			total++
			if (substr(ours[h], 1, length(perf[h])) == perf[h]) {
				good++
				if (substr(ours[h], length(perf[h]) + 1) ~ /^py::/) py++
			} else {
				printf "%s\nperf 7.3:\n%sours:\n%s\n", h, perf[h], ours[h] > other
			}
		}
		printf "%d %d %d\n", good, total, py
	}' "$1" "$2"
}
# shellcheck disable=SC2046 # three numbers
set -- $(agree "$tmp/perf.txt" "$tmp/ours.txt")
echo "# perf 7.3: $1 of $2 samples it unwound are ours as far as its go; in $3 perf stops right before a py:: frame of ours"
check "perf 7.3's frames are ours, from the leaf, in every sample it unwound" \
	test "$2" -gt 0 -a "$1" -eq "$2" || head -60 "$tmp/disagree.txt"
share=$(chain_share "$tmp/perf.folded" "$main_roots" "py::<module>:$app" 2>"$tmp/perf.all")
echo "# perf 7.3's capture: $share per mille of its samples (by period, $(cat "$tmp/perf.all") ns) show the chain"
check "perf 7.3's capture: >= 95 % of the samples show the Python chain, complete to _start" \
	[ "$share" -ge 950 ] || { cat "$tmp/report.log"; cut -c1-400 "$tmp/perf.folded.other"; }

exit $fail
