#!/bin/sh
# The shared library exports exactly the functions the public headers
# declare PR_API: nothing internal leaks, nothing public is missing.  Each
# at a symbol version (src/libperfreader.map), and every function 2.0
# exported still at LIBPERFREADER_2, for the binaries linked against it:
# with its 2.0 signature where a newer one replaced it.
# usage: check-exports.sh LIBPERFREADER.so ABI-2.0-LIST HEADER...
set -eu
lib=$1
abi20=$2
shift 2
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

# NAME@@VERSION for the version a new link gets, NAME@VERSION for one kept
# for older binaries.
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' | sort >"$tmp/versioned"
if ! grep -q '@' "$tmp/versioned"; then
	echo "FAIL: nm shows no symbol versions (binutils 2.35 or later does)"
	exit 1
fi
if grep -v '@' "$tmp/versioned"; then
	echo "FAIL: exported without a symbol version (not in src/libperfreader.map)"
	exit 1
fi
grep '@@' "$tmp/versioned" | sed 's/@.*//' | sort >"$tmp/exported"
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

grep -v '^#' "$abi20" | sort >"$tmp/abi20"
grep -E '@@?LIBPERFREADER_2$' "$tmp/versioned" | sed 's/@.*//' | sort >"$tmp/at20"
if ! diff -u "$tmp/abi20" "$tmp/at20"; then
	echo "FAIL: the functions at LIBPERFREADER_2 differ from what 2.0 exported" \
		"(- 2.0, + now): a released version node never changes"
	exit 1
fi
kept=$(grep -v '@@' "$tmp/versioned" | grep -c '@LIBPERFREADER_2$' || true)
echo "PASS: $n exported functions, all declared PR_API in the public headers;" \
	"the $(wc -l <"$tmp/abi20") of 2.0 at LIBPERFREADER_2 ($kept of them with their 2.0" \
	"signature, beside a newer one)"
