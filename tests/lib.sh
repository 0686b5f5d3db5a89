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

# skip_if_refused RC ERRFILE: skip (77) when a dwarfsample command that
# exited RC said in ERRFILE that the kernel refuses perf_event_open.
skip_if_refused() {
	if [ "$1" -ne 0 ] && grep -q "perf_event_paranoid" "$2"; then
		echo "SKIP: the kernel refuses perf_event_open:"
		cat "$2"
		exit 77
	fi
}

# A scratch directory in $tmp, removed on exit.
make_tmp() {
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
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
