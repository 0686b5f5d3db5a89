#!/bin/sh
# A container's files never reach the host, never hang the profiler.  A
# program runs in a private mount namespace (a container's, as far as the
# profiler can tell) with a tmpfs over its library directory, and maps
# five libraries from there, each stripped of its DWARF and with a
# .gnu_debuglink that is hostile:
#   - dotdot: "../../…/HOST/secret", climbing out to a file on the host;
#   - abs: "/HOST/secret2", an absolute path;
#   - fifo: "fifo.debug", a FIFO beside it that no one writes (and one
#     at the same path on the host);
#   - zero: "zero.debug", /dev/zero bind-mounted beside it;
#   - differ: a library the host has too, at the same path, with another
#     build-id and another function.
# dwarfsample -p under strace (open, openat, openat2):
#   - names every library's function from the container's files, and the
#     profile carries the container's build-id, never the host's file's;
#   - never opens the host's secrets, and opens nothing under the library
#     directory but inside the process's root (openat2 RESOLVE_IN_ROOT or
#     /proc/PID/...), each non-blocking;
#   - looks for the FIFO's and the device's debug files (so the test does
#     test them), and answers SIGTERM within 2 s once it has.
# usage: test-hostile-files.sh DWARFSAMPLE
set -u
ds=$(realpath "$1")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
need_mount_ns
if ! strace -f -qq -e trace=openat true 2>/dev/null; then
	echo "SKIP: strace cannot trace here (Debian: apt-get install strace; ptrace allowed)"
	exit 77
fi
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/cache"
mkdir -p "$HOME" "$XDG_CACHE_HOME" "$tmp/lib" "$tmp/ns" "$tmp/host"
echo HOST-SECRET >"$tmp/host/secret"
echo HOST-SECRET >"$tmp/host/secret2"

cat >"$tmp/lib.c" <<'EOF'
volatile unsigned long sink;
__attribute__((noinline)) void NAME(void)
{
	for (unsigned long i = 0; i < 2000000; i++)
		sink += i * i;
}
EOF
cat >"$tmp/prog.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
/* usage: prog READY-FILE (LIB FUNCTION)...: calls each in turn, forever */
int main(int argc, char **argv)
{
	void (*fn[8])(void);
	int n = 0;
	FILE *f;

	for (int i = 2; i + 1 < argc && n < 8; i += 2) {
		void *h = dlopen(argv[i], RTLD_NOW);

		if (!h || !(fn[n++] = (void (*)(void))dlsym(h, argv[i + 1]))) {
			fprintf(stderr, "prog: %s\n", dlerror());
			return 1;
		}
	}
	if (!(f = fopen(argv[1], "w")) || fclose(f))
		return 1;
	for (;;)
		for (int i = 0; i < n; i++)
			fn[i]();
}
EOF
cc -O1 -o "$tmp/prog" "$tmp/prog.c" -ldl || exit 1
# lib NAME FUNCTION DEBUGLINK: $tmp/ns/libNAME.so, its DWARF stripped and
# .gnu_debuglink naming DEBUGLINK as given (objcopy would keep only a
# base name): the name, NUL, padding to 4, a CRC.
lib() {
	cc -O1 -g -shared -fPIC -Wl,--build-id -DNAME="$2" -o "$tmp/ns/lib$1.so" "$tmp/lib.c" &&
		strip --strip-debug "$tmp/ns/lib$1.so" &&
		{ printf '%s\000' "$3"; head -c $((3 - ${#3} % 4)) /dev/zero; printf '\001\002\003\004'; } \
			>"$tmp/link" &&
		objcopy --add-section .gnu_debuglink="$tmp/link" "$tmp/ns/lib$1.so"
}
lib dotdot in_dotdot "../../../../../../../../../../../..$tmp/host/secret" &&
	lib abs in_abs "$tmp/host/secret2" &&
	lib fifo in_fifo fifo.debug &&
	lib zero in_zero zero.debug &&
	lib differ in_container differ.debug || exit 1
# The host's own libdiffer.so, at the path the container maps its own.
cc -O1 -shared -fPIC -Wl,--build-id -DNAME=host_only -o "$tmp/lib/libdiffer.so" "$tmp/lib.c" ||
	exit 1
# And a FIFO where the host has that directory: a blocking open of it, or
# of the container's, would wait for a writer forever.
mkfifo "$tmp/lib/fifo.debug" || exit 1
buildid() { readelf -n "$1" | awk '/Build ID/ { print $3 }'; }
id_container=$(buildid "$tmp/ns/libdiffer.so")
id_host=$(buildid "$tmp/lib/libdiffer.so")
check "the two libdiffer.so differ in build-id" test -n "$id_container" -a "$id_container" != "$id_host"

unshare -m --propagation private sh -c '
	mount -t tmpfs none "$1/lib" && cp "$1"/ns/*.so "$1/lib/" &&
	mkfifo "$1/lib/fifo.debug" && touch "$1/lib/zero.debug" &&
	mount --bind /dev/zero "$1/lib/zero.debug" &&
	exec "$1/prog" "$1/ready" "$1/lib/libdotdot.so" in_dotdot "$1/lib/libabs.so" in_abs \
		"$1/lib/libfifo.so" in_fifo "$1/lib/libzero.so" in_zero \
		"$1/lib/libdiffer.so" in_container' sh "$tmp" 2>"$tmp/prog.err" &
pid=$!
trap 'ht_rc=$?; kill "$pid" 2>/dev/null; leave_tmp $ht_rc' EXIT
for _ in $(seq 100); do
	[ -e "$tmp/ready" ] && break
	sleep 0.1
done
check "the program runs in its own mount namespace" \
	sh -c "[ -e '$tmp/ready' ] && [ \$(readlink /proc/$pid/ns/mnt) != \$(readlink /proc/self/ns/mnt) ]" ||
	{ cat "$tmp/prog.err"; kill "$pid"; exit 1; }
check "where the host's libdiffer.so is not the program's" \
	sh -c "cmp -s '$tmp/lib/libdiffer.so' /proc/$pid/root$tmp/lib/libdiffer.so; test \$? = 1"

# LeakSanitizer cannot run under ptrace: the traced runs go without it.
nolsan="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
ASAN_OPTIONS=$nolsan strace -f -qq -e trace=open,openat,openat2 -o "$tmp/strace" \
	timeout -k 5 60 "$ds" -p "$pid" -d 3 -F 499 -o "$tmp/out.folded" 2>"$tmp/err"
rc=$?
skip_if_refused $rc "$tmp/err"
check "dwarfsample -p exits 0" test $rc -eq 0 || cat "$tmp/err"
for f in in_dotdot in_abs in_fifo in_zero in_container; do
	check "$f is named, from the container's library" grep -Eq ";$f( |;)" "$tmp/out.folded" ||
		cat "$tmp/out.folded"
done
check "the host's function at that path is not" sh -c "! grep -q host_only '$tmp/out.folded'"
timeout -k 5 60 "$ds" -p "$pid" -d 2 -F 499 -o "$tmp/out.pb.gz" 2>"$tmp/err"
check "the pprof profile carries the container's build-id of libdiffer.so" \
	sh -c "gzip -dc '$tmp/out.pb.gz' | grep -aq '$id_container'"
check "and never the host's" sh -c "! gzip -dc '$tmp/out.pb.gz' | grep -aq '$id_host'"

check "the host's secrets are never opened (.. and absolute debuglinks)" \
	sh -c "! grep -q 'host/secret' '$tmp/strace'"
# Every open of a name under the library directory: inside the process's
# root, never the host's directory at that path.
grep -F "\"$tmp/lib/" "$tmp/strace" >"$tmp/lib-opens"
check "nothing under the library directory is opened but inside the process's root" \
	sh -c "! grep -v 'RESOLVE_IN_ROOT' '$tmp/lib-opens' | grep -q ." || cat "$tmp/lib-opens"
check "the FIFO debug file is looked for there, non-blocking" \
	grep -q "fifo.debug\".*O_NONBLOCK.*RESOLVE_IN_ROOT" "$tmp/lib-opens" || cat "$tmp/lib-opens"
check "the device's debug file too" \
	grep -q "zero.debug\".*O_NONBLOCK.*RESOLVE_IN_ROOT" "$tmp/lib-opens"
check "no open at all waits (every one returned)" sh -c "! grep -q 'resumed> ) = ?' '$tmp/strace'"

# SIGTERM once the FIFO has been looked for: answered within 2 s.
: >"$tmp/strace2"
ASAN_OPTIONS=$nolsan strace -f -qq -e trace=openat2 -o "$tmp/strace2" \
	timeout -k 5 60 "$ds" -p "$pid" -F 499 -o "$tmp/term.folded" 2>"$tmp/err" &
spid=$!
for _ in $(seq 100); do
	grep -q 'fifo.debug' "$tmp/strace2" && break
	sleep 0.1
done
check "the FIFO was looked for before SIGTERM" grep -q 'fifo.debug' "$tmp/strace2"
dpid=$(pgrep -f -x "$ds -p $pid -F 499 -o $tmp/term.folded")
t0=$(date +%s%N)
kill -TERM "$dpid"
for _ in $(seq 50); do
	kill -0 "$dpid" 2>/dev/null || break
	sleep 0.1
done
t1=$(date +%s%N)
check "SIGTERM is answered within 2 s ($(((t1 - t0) / 1000000)) ms)" \
	sh -c "! kill -0 $dpid 2>/dev/null && [ $(((t1 - t0) / 1000000)) -le 2000 ]"
wait "$spid"
check "and the profile is written" grep -Eq ";in_fifo( |;)" "$tmp/term.folded"

# The container's libdiffer.so removed from its root (the host's is still
# at that path): the agent names it from the mapping itself, never from
# the host's file; its health line says how many files containers' roots
# did not give.
rm "/proc/$pid/root$tmp/lib/libdiffer.so"
timeout -k 5 60 "$ds" agent -p "$pid" -d 3 --interval 1s --health-interval 1s -F 499 \
	--out-dir "$tmp/agent-out" 2>"$tmp/agent.err"
check "the agent exits 0" test $? -eq 0 || cat "$tmp/agent.err"
check "its health line counts the files of containers not in their roots" \
	grep -Eq 'evicted, [0-9]+ renewed, [0-9]+ of containers not in their roots' "$tmp/agent.err" ||
	grep health "$tmp/agent.err"
check "the container's deleted library is named from its mapping" \
	sh -c "gzip -dc '$tmp'/agent-out/*.pb.gz | grep -aq in_container"
check "and no window names the host's function at that path" \
	sh -c "! gzip -dc '$tmp'/agent-out/*.pb.gz | grep -aq host_only"
kill "$pid"
wait "$pid" 2>/dev/null
exit $fail
