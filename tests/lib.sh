# shellcheck shell=sh disable=SC2034 # fail is read by the sourcing script
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
