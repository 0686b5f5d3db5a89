# shellcheck shell=sh disable=SC2034 # fail and tmp are read by the sourcing script
# Shared by the shell tests: TAP-style checks.  Source it, then call
#     check "what must hold" command args...
# and end with `exit $fail`.
fail=0
check() { # description, command...
	desc=$1
	shift
	if "$@"; then
		echo "ok - $desc"
	else
		echo "not ok - $desc"
		fail=1
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
