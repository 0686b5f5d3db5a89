# shellcheck shell=sh disable=SC2034 # fail and tmp are read by the sourcing script
# Shared by the shell tests: TAP-style checks.  Source it, then call
#     check "what must hold" command args...
# and end with `exit $fail`.  A check that fails returns 1, so that
# `check ... || cat "$log"` shows what went wrong.
fail=0
check() { # description, command...
	desc=$1
	shift
	if "$@"; then
		echo "ok - $desc"
	else
		echo "not ok - $desc"
		fail=1
		return 1
	fi
}

# Skip (77) unless Linux perf, the oracle, is installed.
need_perf() {
	if ! perf --version >/dev/null 2>&1; then
		echo "SKIP: Linux perf is not installed (Debian: apt-get install linux-perf)"
		exit 77
	fi
}

# Skip (77) unless the Debian 13 root (CPython 3.13, perf 7.3) is built:
# .ci/run builds it with ../shared/tools/debian13-root.sh and names it in
# DS_DEBIAN13_ROOT; else its default place is used if it is ready.  Sets
# $d13 to the root.
need_debian13() {
	d13=${DS_DEBIAN13_ROOT:-/var/cache/dwarfsample/debian13}
	if [ ! -f "$d13/.ready" ]; then
		echo "SKIP: no Debian 13 root at $d13 (CPython 3.13, perf 7.3): build it with" \
			"../shared/tools/debian13-root.sh, as .ci/run does"
		exit 77
	fi
}

# Skip (77) unless a private mount namespace can be had (unshare -m).
need_mount_ns() {
	if ! unshare -m true 2>/dev/null; then
		echo "SKIP: unshare -m is refused here: no private mount namespace to run in"
		exit 77
	fi
}

# skip_if_refused RC ERRFILE: skip (77) when a dwarfsample command that
# exited RC said in ERRFILE that the kernel refuses perf_event_open.
skip_if_refused() {
	if [ "$1" -ne 0 ] && grep -q "perf_event_paranoid" "$2"; then
		echo "SKIP: the kernel refuses perf_event_open:"
		cat "$2"
		exit 77
	fi
}

# Perf as an oracle, asked once.  Where a test compares dwarfsample with
# perf on captures perf makes, perf is most of its time (recording, and
# perf script's lookups).  The plain build (DS_SANITIZE none, or unset)
# asks perf and, when the test passes, keeps the captures and perf's
# answers in $DS_PERF_ORACLES_OUT/TEST (oracle_save); a sanitized build
# run with DS_PERF_ORACLES set to that directory's parent (.ci/run does,
# the plain build's suite first) checks its own dwarfsample against those
# captures and answers, and runs no perf.  Without them, or with answers
# made of other builds of the workloads than the ones there now (a
# sanitized build run alone; a plain build rebuilt since), it asks perf
# itself, as the plain build does, and says so: no check is skipped.
#
# oracle_begin TEST FILE...: the FILEs are the builds' files the captures
# are made of (their checksums tell whether saved answers are of them).
# Sets $answers, the directory of the captures and perf's answers, and
# $asking: 1 when the test makes them there, 0 when they are the plain
# build's.  Call it after make_tmp, and need_perf only when asking.
oracle_begin() {
	ob_saved=${DS_PERF_ORACLES:+$DS_PERF_ORACLES/$1}
	oracle_out=
	asking=1
	answers=$tmp/answers
	if [ "${DS_SANITIZE:-none}" = none ]; then
		oracle_out=${DS_PERF_ORACLES_OUT:+$DS_PERF_ORACLES_OUT/$1}
		echo "# perf is asked here, in the plain build${oracle_out:+ (its answers are kept in $oracle_out)}"
		# Only a passing run's answers are kept, and only the last run's.
		[ -z "$oracle_out" ] || rm -rf "$oracle_out"
	elif [ -z "$ob_saved" ]; then
		echo "# perf is asked here: DS_PERF_ORACLES does not say where the plain build's answers are"
	elif ! [ -s "$ob_saved/files.cksum" ] ||
		! oracle_cksum "$ob_saved/files.list" | cmp -s - "$ob_saved/files.cksum"; then
		echo "# perf is asked here: $ob_saved holds no answers, or answers made of other builds of the workloads"
	else
		asking=0
		answers=$ob_saved
		echo "# perf's answers are the plain build's, in $answers"
	fi
	shift
	if [ "$asking" = 1 ]; then
		mkdir -p "$answers"
		for ob_f in "$@"; do
			realpath "$ob_f"
		done >"$answers/files.list"
	fi
}

# The checksums of the files listed in FILE, one a line.
oracle_cksum() {
	while IFS= read -r oc_f; do
		cksum "$oc_f" 2>/dev/null || echo "missing $oc_f"
	done <"$1"
}

# oracle_save: in the plain build, when the test passed, keep $answers
# for the sanitized builds (whole, or not at all).
oracle_save() {
	[ "$asking" = 1 ] && [ -n "$oracle_out" ] && [ "$fail" -eq 0 ] || return 0
	oracle_cksum "$answers/files.list" >"$answers/files.cksum"
	rm -rf "$oracle_out" "$oracle_out.new"
	mkdir -p "$(dirname "$oracle_out")" &&
		cp -r "$answers" "$oracle_out.new" && mv "$oracle_out.new" "$oracle_out"
}

# A scratch directory in $tmp, removed on exit (leave_tmp).  Call it
# after setting $ds, the dwarfsample under test.
make_tmp() {
	tmp=$(mktemp -d)
	jobs_ds=$(realpath "${ds:-/nonexistent}" 2>/dev/null)
	trap leave_tmp EXIT
}

# build_fp_workload CC SOURCE-DIR: tests/fp-workload.c built by CC as
# distributions build (-O2 -fno-omit-frame-pointer
# -mno-omit-leaf-frame-pointer), with fp-leaf.c's leaf without its frame
# pointer and fp-workload-lib.c as a library without frame pointers, into
# $tmp/fpwl-CC; nonzero when it could not be built.
build_fp_workload() {
	bfw_flags="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
	# shellcheck disable=SC2086 # the flags are words
	"$1" -O2 -g -fomit-frame-pointer -fPIC -shared -o "$tmp/libfpwl.so" \
		"$2/fp-workload-lib.c" &&
	"$1" $bfw_flags -momit-leaf-frame-pointer -c -o "$tmp/leaf.o" "$2/fp-leaf.c" &&
	"$1" $bfw_flags -o "$tmp/fpwl-$1" "$2/fp-workload.c" "$tmp/leaf.o" \
		-L"$tmp" -lfpwl "-Wl,-rpath,$tmp"
}

# The profile of capture FILE in FORMAT (with FLAGS) as report writes it
# with `--jobs N` (0: without), its lines sorted, and report's exit
# status last, into OUT: the workers' shares merge in their own order.
jobs_profile() { # out, file, n, format, flags...
	jp_out=$1 jp_file=$2 jp_n=$3 jp_fmt=$4
	shift 4
	set -- "$@" -f "$jp_fmt" -i "$jp_file" -o "$jp_out.raw"
	[ "$jp_n" -gt 0 ] && set -- --jobs "$jp_n" "$@"
	"$jobs_ds" report "$@" 2>/dev/null
	jp_rc=$?
	{
		sort "$jp_out.raw" 2>/dev/null
		echo "exit $jp_rc"
	} >"$jp_out"
	rm -f "$jp_out.raw"
}

# The captures the test made: perf.data files, ours or perf's, under $tmp.
# Every file's first bytes are read by one process: a test's $tmp can
# hold thousands of files (Go's build cache, perf inject's jitted-*.so
# and perf's build-id cache of them), and a head per file took minutes
# of a loaded machine's time, longer than the test itself.
jobs_captures() {
	find "$tmp" -type f -size -200M -print0 2>/dev/null | python3 -c '
import sys
for f in sys.stdin.buffer.read().split(b"\0"):
    try:
        with open(f, "rb") as h:
            if h.read(8) == b"PERFILE2":
                sys.stdout.buffer.write(f + b"\n")
    except OSError:
        pass'
}

# Every capture the test made, replayed by 2 and 3 workers (samples
# shared out by thread, the profiles merged), must give, after sorting,
# the very profile one worker gives: folded per thread with annotations,
# and the flame graph.  The plain build checks it (leave_tmp).  A
# capture's six replays run at once: they read files and sample nothing,
# and one worker's replay alone leaves a CPU idle.
jobs_agree_all() {
	ja_n=0 ja_bad=0
	for ja_f in $(jobs_captures); do
		ja_n=$((ja_n + 1))
		ja_pids=
		for ja_fmt in folded svg; do
			ja_flags=
			[ $ja_fmt = folded ] && ja_flags="--thread-roots --annotate"
			for ja_w in 0 2 3; do
				# shellcheck disable=SC2086 # flags are words
				jobs_profile "$tmp/.jobs-$ja_fmt-$ja_w" "$ja_f" $ja_w $ja_fmt $ja_flags &
				ja_pids="$ja_pids $!"
			done
		done
		# (These six only: the test may have left processes of its own.)
		# shellcheck disable=SC2086 # one pid a word
		wait $ja_pids
		for ja_fmt in folded svg; do
			for ja_w in 2 3; do
				if ! cmp -s "$tmp/.jobs-$ja_fmt-0" "$tmp/.jobs-$ja_fmt-$ja_w"; then
					echo "not ok - $ja_f: report --jobs $ja_w -f $ja_fmt differs from one worker's"
					diff "$tmp/.jobs-$ja_fmt-0" "$tmp/.jobs-$ja_fmt-$ja_w" | head -5
					ja_bad=1
				fi
			done
		done
		rm -f "$tmp"/.jobs-*
	done
	[ $ja_n -gt 0 ] && [ $ja_bad -eq 0 ] &&
		echo "ok - the $ja_n captures made here: 2 and 3 workers give one worker's profile"
	return $ja_bad
}

# A sanitized build replays each capture once, by 3 workers: what it adds
# to the plain build's check is the sanitizers' eye on the workers and the
# merge, on every kind of capture (the plain build compared the profiles).
# The replay must write its profile (exit 0, or 3 for a damaged file that
# a test made on purpose) and the sanitizers must say nothing.  Three
# captures at a time: a replay under the sanitizers leaves much of the
# two CPUs idle (they read files and sample nothing).
jobs_clean_all() {
	jc_n=0 jc_bad=0 jc_pids=
	for jc_f in $(jobs_captures); do
		jc_n=$((jc_n + 1))
		echo "$jc_f" >"$tmp/.jobs-file-$jc_n"
		{
			"$jobs_ds" report --jobs 3 --thread-roots --annotate -f folded -i "$jc_f" \
				-o /dev/null 2>"$tmp/.jobs-err-$jc_n"
			echo $? >"$tmp/.jobs-rc-$jc_n"
		} &
		jc_pids="$jc_pids $!"
		if [ $((jc_n % 3)) -eq 0 ]; then
			# shellcheck disable=SC2086 # one pid a word
			wait $jc_pids
			jc_pids=
		fi
	done
	# shellcheck disable=SC2086 # one pid a word (the test's own are not waited for)
	[ -z "$jc_pids" ] || wait $jc_pids
	jc_i=0
	while [ $jc_i -lt $jc_n ]; do
		jc_i=$((jc_i + 1))
		jc_rc=$(cat "$tmp/.jobs-rc-$jc_i")
		if [ "$jc_rc" -ne 0 ] && [ "$jc_rc" -ne 3 ] ||
			grep -q "Sanitizer\|runtime error:" "$tmp/.jobs-err-$jc_i"; then
			echo "not ok - $(cat "$tmp/.jobs-file-$jc_i"): report --jobs 3 failed under the" \
				"sanitizers (exit $jc_rc)"
			tail -20 "$tmp/.jobs-err-$jc_i"
			jc_bad=1
		fi
	done
	rm -f "$tmp"/.jobs-*
	[ $jc_n -gt 0 ] && [ $jc_bad -eq 0 ] &&
		echo "ok - the $jc_n captures made here: 3 workers replay them cleanly under the sanitizers"
	return $jc_bad
}

# On exit: the captures' check, then $tmp goes; the exit status is the
# test's (RC, else $?), or 1 when the check failed.  A script with its
# own EXIT trap calls it last, with the status it saved first.
leave_tmp() {
	lt_rc=${1:-$?}
	if [ -n "${tmp:-}" ] && [ -d "$tmp" ] && [ -x "${jobs_ds:-}" ] && [ "$lt_rc" -ne 77 ]; then
		if [ "${DS_SANITIZE:-none}" = none ]; then
			jobs_agree_all || lt_rc=1
		else
			jobs_clean_all || lt_rc=1
		fi
	fi
	rm -rf "$tmp"
	exit $lt_rc
}

# Run a command every 0.1 s until it succeeds: for a state the test needs
# however long a loaded machine takes to get there (the test's timeout
# bounds the wait).
wait_for() {
	while ! "$@"; do
		sleep 0.1
	done
}

# Has process PID exec'd NAME?
runs() { # pid, name
	[ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

# The CPU time process PID has used, in clock ticks (0 once it is gone).
cpu_ticks() {
	sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 } END { if (!NR) print 0 }'
}

# Wait until process PID has run TICKS more clock ticks of CPU time: as
# many samples' worth of it, however busy the machine is.
# Returns 1 if it exits first.
wait_cpu() { # pid, ticks
	end=$(($(cpu_ticks "$1") + $2))
	while [ "$(cpu_ticks "$1")" -lt "$end" ]; do
		[ -d "/proc/$1" ] || return 1
		sleep 0.1
	done
}

# Has process PID opened a perf event?
has_perf_events() {
	for fd in "/proc/$1/fd/"*; do
		case $(readlink "$fd" 2>/dev/null) in
		*perf_event*) return 0 ;;
		esac
	done
	return 1
}

# within2 A B: do two counts agree within 2 % (of the larger)?
within2() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		m = a > b ? a : b; d = a > b ? a - b : b - a
		exit !(a != "" && b != "" && d <= 0.02 * m) }'
}

# Has FILE a line matching PATTERN yet, or has process PID, which would
# write it, exited (so that a failure is reported, not waited on forever)?
has_line() { # file, pattern, pid
	grep -q -- "$2" "$1" 2>/dev/null || ! kill -0 "$3" 2>/dev/null
}
