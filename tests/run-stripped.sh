#!/bin/sh
# Run the stripped unwind test, its .debug_frame in a separate debug file
# found one way or the other:
#   build-id   under DEBUG_DIR/.build-id/xx/rest.debug (DS_DEBUG_DIR)
#   debuglink  beside a copy of the binary, under the name its
#              .gnu_debuglink records, with no debug directory given
# usage: run-stripped.sh build-id|debuglink STRIPPED DEBUG_DIR LIBPERFREADER
set -eu
mode=$1
stripped=$2
dir=$3
# The copy runs from elsewhere: its $ORIGIN-relative RUNPATH no longer
# leads to the library.
LD_LIBRARY_PATH=$(dirname "$4")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
export CK_DEFAULT_TIMEOUT=60
if [ "$mode" = build-id ]; then
	DS_DEBUG_DIR=$dir exec "$stripped"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
debug=$(find "$dir/.build-id" -name '*.debug' | head -n 1)
name=$(readelf --string-dump=.gnu_debuglink "$stripped" | awk '/\]/ { print $3; exit }')
cp "$stripped" "$tmp/test-unwind-stripped"
cp "$debug" "$tmp/$name"
unset DS_DEBUG_DIR
"$tmp/test-unwind-stripped"
