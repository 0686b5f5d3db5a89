#!/bin/sh
# Run a stripped test program, its debug information in a separate debug
# file (make-stripped.sh) found one way or another:
#   build-id    under DEBUG_DIR/.build-id/xx/rest.debug (DS_DEBUG_DIR)
#   last-dir    the same, DEBUG_DIR the last of five debug directories
#               (the first holding another file under the same build-id
#               path, which must be passed over)
#   debuglink   beside a copy of the binary, under the name its
#               .gnu_debuglink records, with no debug directory given
#   debuglink-subdir
#               the same, in a .debug/ directory beside the copy
#   debuginfod  fetched from a debuginfod server run here on loopback,
#               serving DEBUG_DIR (DEBUGINFOD_URLS), nothing local
# usage: run-stripped.sh MODE STRIPPED DEBUG_DIR LIBPERFREADER
set -eu
mode=$1
stripped=$2
dir=$3
# The copy runs from elsewhere: its $ORIGIN-relative RUNPATH no longer
# leads to the library.
LD_LIBRARY_PATH=$(dirname "$4")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
export CK_DEFAULT_TIMEOUT=60 DS_STRIPPED=1
# Only the server started here may answer.
unset DEBUGINFOD_URLS
if [ "$mode" = build-id ]; then
	DS_DEBUG_DIR=$dir exec "$stripped"
fi
unset DS_DEBUG_DIR
tmp=$(mktemp -d)
server=
cleanup() {
	[ -z "$server" ] || kill "$server" 2>/dev/null || :
	rm -rf "$tmp"
}
trap cleanup EXIT
debug=$(find "$dir/.build-id" -name '*.debug' | head -n 1)
if [ "$mode" = last-dir ]; then
	decoy="$tmp/first/${debug#"$dir"/}"
	mkdir -p "$(dirname "$decoy")" "$tmp/2" "$tmp/3" "$tmp/4"
	cp "$4" "$decoy"
	DS_DEBUG_DIR=$tmp/first:$tmp/2:$tmp/3:$tmp/4:$dir "$stripped"
	exit
fi
if [ "$mode" = debuglink ] || [ "$mode" = debuglink-subdir ]; then
	name=$(readelf --string-dump=.gnu_debuglink "$stripped" | awk '/\]/ { print $3; exit }')
	cp "$stripped" "$tmp/$(basename "$stripped")"
	sub=
	[ "$mode" = debuglink ] || { sub=.debug/; mkdir "$tmp/.debug"; }
	cp "$debug" "$tmp/$sub$name"
	"$tmp/$(basename "$stripped")"
	exit
fi

[ "$mode" = debuginfod ] || { echo "run-stripped.sh: unknown mode $mode" >&2; exit 2; }
if ! command -v debuginfod >/dev/null; then
	echo "SKIP: debuginfod is not installed (Debian: apt-get install debuginfod)"
	exit 77
fi
# The server indexes a directory holding only the debug file (its own
# scan skips names starting with a dot, like .build-id).
mkdir "$tmp/served"
cp "$debug" "$tmp/served/"
id=$(readelf -n "$debug" 2>/dev/null | awk '/Build ID/ { print $3 }')
for port in $(shuf -i 20000-60000 -n 8); do
	debuginfod -F -p "$port" -d "$tmp/index.sqlite" -t 0 -g 0 \
		"$tmp/served" >"$tmp/server.log" 2>&1 &
	server=$!
	# Up when it answers for the debug file (it indexes at startup).  A
	# miss is cached by the client: each probe starts from an empty cache.
	for _ in $(seq 100); do
		rm -rf "$tmp/probe"
		if DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/probe \
			debuginfod-find debuginfo "$id" >/dev/null 2>&1; then
			break 2
		fi
		kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	kill "$server" 2>/dev/null || :
	wait "$server" 2>/dev/null || :
	server=
done
if [ -z "$server" ]; then
	echo "run-stripped.sh: the debuginfod server did not come up:" >&2
	cat "$tmp/server.log" >&2
	exit 1
fi
DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/client \
	DEBUGINFOD_TIMEOUT=30 "$stripped"
# The fetch went through the server, into the client's cache.
if ! find "$tmp/client" -name debuginfo | grep -q .; then
	echo "run-stripped.sh: nothing was fetched into $tmp/client" >&2
	exit 1
fi
