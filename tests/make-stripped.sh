#!/bin/sh
# Split IN into a stripped OUT (with a .gnu_debuglink) and its debug
# information, stored in DEBUG_DIR/.build-id/xx/rest.debug as debuginfo
# stores lay it out.  --all strips the symbol table too and compresses the
# debug file's sections, as distributions ship them.  --bad-own-frame
# leaves OUT a .zdebug_frame of its own that does not inflate (a "ZLIB"
# header over bytes that are no zlib stream): the unwinder must go on to
# the debug file.
# usage: make-stripped.sh IN OUT DEBUG_DIR [--all|--bad-own-frame]
set -eu
in=$1
out=$2
dir=$3
all=${4:-}
id=$(readelf -n "$in" | awk '/Build ID/ { print $3 }')
[ -n "$id" ] || { echo "make-stripped.sh: $in has no build-id" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir/.build-id/$(echo "$id" | cut -c1-2)"
debug="$dir/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug"
if [ "$all" = --all ]; then
	objcopy --only-keep-debug --compress-debug-sections=zlib "$in" "$debug"
	objcopy --strip-all --add-gnu-debuglink="$debug" "$in" "$out"
	if readelf -S "$out" | grep -q '\.symtab'; then
		echo "make-stripped.sh: $out still has .symtab" >&2
		exit 1
	fi
else
	objcopy --only-keep-debug "$in" "$debug"
	objcopy --strip-debug --add-gnu-debuglink="$debug" "$in" "$out"
fi
# The stripped binary must have lost its DWARF, or the test proves nothing.
if readelf -S "$out" | grep -qE '\.debug_(frame|info)'; then
	echo "make-stripped.sh: $out still has DWARF" >&2
	exit 1
fi
if [ "$all" = --bad-own-frame ]; then
	bad="$dir/bad-zdebug-frame"
	{ printf 'ZLIB\0\0\0\0\0\0\020\0'; head -c 64 /dev/zero; } >"$bad"
	objcopy --add-section .zdebug_frame="$bad" \
		--set-section-flags .zdebug_frame=readonly,debug "$out" "$out.tmp"
	mv "$out.tmp" "$out"
	rm -f "$bad"
	readelf -S "$out" | grep -q '\.zdebug_frame' || {
		echo "make-stripped.sh: $out has no .zdebug_frame" >&2
		exit 1
	}
fi
