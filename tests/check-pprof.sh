#!/bin/bash
# A pprof file as go tool pprof reads it: it parses, its sample types are
# dwarfsample's (samples/count, cpu/nanoseconds; or those DS_PPROF_TYPES
# lists, "type/unit ...", the default marked "[dflt]"), each of them
# reads (-top -sample_index), and each expected function is among the
# functions (-top) and on a stack (-traces).
# Names are what the file says: -symbolize=none keeps pprof from naming
# addresses itself from files it finds on this machine.
# Skips (77) without Go (Debian: apt-get install golang-go).
# usage: [DS_PPROF_TYPES="..."] check-pprof.sh FILE.pb.gz FUNCTION...
# shellcheck disable=SC2317 # the helpers run through check
set -eu
if [ $# -lt 1 ]; then
	echo "usage: $0 FILE.pb.gz FUNCTION..." >&2
	exit 2
fi
file=$1
shift
if ! command -v go >/dev/null 2>&1; then
	echo "SKIP: go is not installed, and go tool pprof is the oracle (Debian: apt-get install golang-go)"
	exit 77
fi
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

# pprof keeps state under $HOME; a test must not write to the user's.
export HOME="$tmp"
pprof() { # output file, options...
	out=$1
	shift
	go tool pprof -symbolize=none "$@" "$file" >"$tmp/$out" 2>"$tmp/$out.err"
}
check "go tool pprof -raw reads $file" pprof raw -raw
# -nodefraction=0: a function with few samples is still listed.
check "go tool pprof -top reads $file" pprof top -top -nodefraction=0
check "go tool pprof -traces reads $file" pprof traces -traces
for f in raw top traces; do
	if [ -s "$tmp/$f.err" ]; then
		echo "# go tool pprof -$f said:"
		sed 's/^/#   /' "$tmp/$f.err"
	fi
done

# The line under "Samples:" names the sample types, the default marked
# "[dflt]": "samples/count cpu/nanoseconds[dflt]".
has_type() { # type/unit
	awk -v t="$1" '
		prev == "Samples:" {
			for (i = 1; i <= NF; i++)
				if ($i == t || $i == t "[dflt]")
					found = 1
		}
		{ prev = $0 }
		END { exit !found }' "$tmp/raw"
}
for t in ${DS_PPROF_TYPES:-samples/count cpu/nanoseconds}; do
	check "sample type ${t%\[dflt\]}" has_type "$t"
	check "go tool pprof -top -sample_index=${t%%/*} reads it" \
		pprof "top.${t%%/*}" -top -sample_index="${t%%/*}"
done

# A -top line is five numbers (flat, flat%, sum%, cum, cum%), then the
# name, " (inline)" after a function inlined there.
in_top() { # function
	awk -v n="$1" '
		NF > 5 && $5 ~ /%$/ {
			s = $0
			sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", s)
			sub(/ \(inline\)$/, "", s)
			if (s == n)
				found = 1
		}
		END { exit !found }' "$tmp/top"
}
# A -traces frame is a name alone on its line, or after the stack's value
# on its first line; label lines ("key:  value") and rules are skipped.
in_traces() { # function
	awk -v n="$1" '
		/^ *[^ ]+: / || /^-/ { next }
		{
			s = $0
			sub(/^ +/, "", s)
			if (s ~ /^[0-9][0-9.]*[a-zµ]*   /)
				sub(/^[^ ]+ +/, "", s)
			sub(/ \(inline\)$/, "", s)
			if (s == n)
				found = 1
		}
		END { exit !found }' "$tmp/traces"
}
for name in "$@"; do
	check "$name in -top" in_top "$name"
	check "$name in -traces" in_traces "$name"
done
if [ "$fail" -ne 0 ]; then
	for f in raw top traces; do
		echo "# go tool pprof -$f:"
		sed 's/^/#   /' "$tmp/$f"
	done
fi
exit "$fail"
