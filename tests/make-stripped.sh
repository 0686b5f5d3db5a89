#!/bin/sh
# Split IN into a stripped OUT (with a .gnu_debuglink) and its debug
# information, stored in DEBUG_DIR/.build-id/xx/rest.debug as debuginfo
# stores lay it out.
# usage: make-stripped.sh IN OUT DEBUG_DIR
set -eu
in=$1
out=$2
dir=$3
id=$(readelf -n "$in" | awk '/Build ID/ { print $3 }')
[ -n "$id" ] || { echo "make-stripped.sh: $in has no build-id" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/.build-id/$(echo "$id" | cut -c1-2)"
debug="$dir/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
objcopy --only-keep-debug "$in" "$debug"
objcopy --strip-debug --add-gnu-debuglink="$debug" "$in" "$out"
# The stripped binary must have lost .debug_frame, or the test proves nothing.
if readelf -S "$out" | grep -q '\.debug_frame'; then
	echo "make-stripped.sh: $out still has .debug_frame" >&2
	exit 1
fi
