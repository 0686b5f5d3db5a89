#!/bin/sh
# The shared library exports exactly the functions the public headers
# declare PR_API: nothing internal leaks, nothing public is missing.
# usage: check-exports.sh LIBPERFREADER.so HEADER...
set -eu
lib=$1
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Every header in include/ is among them (meson's public_headers, which
# are also the installed ones).
for h in "$(dirname "$1")"/*.h; do
	case " $* " in
	*" $h "*) ;;
	*) echo "FAIL: $h is not in public_headers (src/meson.build)"; exit 1 ;;
	esac
done

nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
	sort >"$tmp/exported"
# Each declaration starts a line with PR_API and names the function
# before the first '('.
grep -h '^PR_API' "$@" | sed 's/(.*//; s/.*[ *]//' | sort >"$tmp/declared"

if ! diff -u "$tmp/declared" "$tmp/exported"; then
	echo "FAIL: exported symbols differ from the PR_API declarations (- declared, + exported)"
	exit 1
fi
n=$(wc -l <"$tmp/exported")
if [ "$n" -lt 20 ]; then
	echo "FAIL: only $n exported functions found; the check is not seeing the library"
	exit 1
fi
echo "PASS: $n exported functions, all declared PR_API in the public headers"
