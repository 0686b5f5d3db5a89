#!/bin/bash
# The agent's systemd unit: systemd-analyze verifies it, rates its exposure
# OK or better, leaves /proc/kallsyms readable (kernel names) while keeping
# what ProtectKernelTunables= protects, and its system-call filter holds
# every call the agent makes (traced with strace while it samples the
# whole system, writes windows and is stopped by SIGTERM) — a call the
# filter left out would fail with EPERM in production only.
# A sanitizer build makes calls of its own (and LeakSanitizer cannot run
# under ptrace): there the trace is left to the plain build.
# usage: check-unit.sh DWARFSAMPLE UNIT-TEMPLATE [SANITIZE]
set -eu
ds=$(realpath "$1")
unit_in=$2
sanitize=${3:-none}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for tool in systemd-analyze strace; do
	if ! command -v $tool >/dev/null; then
		echo "FAIL: $tool is not installed (.ci/debian-packages lists it)"
		exit 1
	fi
done
unit=$tmp/dwarfsample-agent.service
sed "s#@bindir@#$(dirname "$ds")#" "$unit_in" >"$unit"

if ! systemd-analyze verify --man=no "$unit" >"$tmp/verify" 2>&1 || [ -s "$tmp/verify" ]; then
	echo "FAIL: systemd-analyze verify:"
	cat "$tmp/verify"
	exit 1
fi
echo "PASS: systemd-analyze verify accepts the unit"

# Kernel names come from /proc/kallsyms (CAP_SYSLOG for its addresses):
# ProtectKernelTunables=yes makes it inaccessible (systemd.exec(5)), and so
# does an InaccessiblePaths= naming it.  What ProtectKernelTunables=yes
# would protect must be protected by hand: its read-only paths, and
# /proc/kcore out of reach.
setting() { sed -n "s/^$1=//p" "$unit" | tr ' ' '\n' | sed 's/^-//'; }
if [ "$(setting ProtectKernelTunables)" = yes ] || setting InaccessiblePaths | grep -qx /proc/kallsyms; then
	echo "FAIL: the unit hides /proc/kallsyms (ProtectKernelTunables=yes or InaccessiblePaths=):" \
		"kernel frames would go unnamed"
	exit 1
fi
for p in /proc/sys /sys /proc/sysrq-trigger /proc/latency_stats /proc/acpi /proc/timer_stats \
	/proc/fs /proc/irq; do
	if ! setting ReadOnlyPaths | grep -qx "$p"; then
		echo "FAIL: $p is not in ReadOnlyPaths= (ProtectKernelTunables=yes would make it read-only)"
		exit 1
	fi
done
if ! setting InaccessiblePaths | grep -qx /proc/kcore; then
	echo "FAIL: /proc/kcore is not in InaccessiblePaths="
	exit 1
fi
echo "PASS: /proc/kallsyms is readable under the unit; kernel tunables read-only, /proc/kcore hidden"

systemd-analyze security --offline=true --no-pager "$unit" >"$tmp/security" 2>&1 || true
level=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p' "$tmp/security")
if [ -z "$level" ] || ! awk -v l="$level" 'BEGIN { exit !(l <= 4.0) }'; then
	echo "FAIL: exposure level '${level:-?}' above 4.0 (systemd's OK is up to 4.9):"
	grep '✗' "$tmp/security" || cat "$tmp/security"
	exit 1
fi
echo "PASS: exposure level $level (OK)"

if [ "$sanitize" != none ]; then
	echo "PASS (partly): a $sanitize build; the system-call trace runs in the plain build"
	exit 0
fi

# The calls the filter allows: its groups expanded, and the unit's extras.
filter=$(sed -n 's/^SystemCallFilter=//p' "$unit")
expand() {
	systemd-analyze syscall-filter --no-pager "$1" | tail -n +2 | sed 's/^ *//' |
		grep -v -e '^#' -e '^$' | while read -r s; do
		case $s in
		@*) expand "$s" ;;
		*) echo "$s" ;;
		esac
	done
}
for f in $filter; do
	case $f in
	@*) expand "$f" ;;
	*) echo "$f" ;;
	esac
done | sort -u >"$tmp/allowed"
if [ "$(wc -l <"$tmp/allowed")" -lt 100 ]; then
	echo "FAIL: the filter expanded to only $(wc -l <"$tmp/allowed") calls; the check is not seeing it"
	exit 1
fi

# The agent as the unit runs it, for a few windows, then SIGTERM.
STATE_DIRECTORY=$tmp/state strace -f -qq -o "$tmp/trace" \
	"$ds" agent -a -F 99 --interval 1s --log-level debug --health-interval 1s \
	>"$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 600); do
	ls "$tmp"/state/profiles/*.pb.gz >/dev/null 2>&1 && break
	kill -0 $pid 2>/dev/null || break
	sleep 0.1
done
sleep 2
# The agent is strace's child: it gets the signal, as systemd would send it.
child=$(cat /proc/$pid/task/*/children 2>/dev/null || true)
if [ -z "$child" ]; then
	echo "FAIL: the traced agent is gone before it was stopped:"
	cat "$tmp/log"
	exit 1
fi
kill -TERM $child
rc=0
wait $pid || rc=$?
if [ "$rc" -ne 0 ] || ! ls "$tmp"/state/profiles/*.pb.gz >/dev/null 2>&1; then
	echo "FAIL: the traced agent exited $rc or wrote no window:"
	cat "$tmp/log"
	exit 1
fi
# "PID  name(args" and "PID  <... name resumed>" lines.
sed -n 's/^[0-9]* *\(<\.\.\. \)\?\([a-z_0-9]*\)[( ].*/\2/p' "$tmp/trace" | sort -u >"$tmp/used"
if [ "$(wc -l <"$tmp/used")" -lt 20 ]; then
	echo "FAIL: only $(wc -l <"$tmp/used") distinct calls traced; the check is not seeing them"
	exit 1
fi
missing=$(comm -23 "$tmp/used" "$tmp/allowed")
if [ -n "$missing" ]; then
	echo "FAIL: the agent calls what the unit's SystemCallFilter does not allow:" $missing
	exit 1
fi
echo "PASS: the $(wc -l <"$tmp/used") system calls the agent made are all in the unit's filter"
