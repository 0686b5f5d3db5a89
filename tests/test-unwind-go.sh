#!/bin/sh
# Go's stacks unwound by the CFI its linker writes (.debug_frame, and
# compressed), not by frame pointers, which skip the caller of every
# frameless leaf: a goroutine recursing exactly 41 deep through a function
# that is not inlined (go-recurse/) shows exactly 41 frames of it under
# runtime.goexit in every sample taken in the recursion's leaf.  Every
# stack through the program's own code starts at runtime.goexit or
# runtime.rt0_go, where Go's runtime starts stacks.
# usage: test-unwind-go.sh DWARFSAMPLE SOURCE-DIR
# Skips (77) without Debian's Go, or when the kernel refuses to sample.
set -u
ds=$1
src=$2
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp

go=$(command -v go) || {
	echo "SKIP: Go is not installed (Debian: apt-get install golang-go)"
	exit 77
}
cp "$src"/main.go "$src"/go.mod "$tmp"/
# Offline, and nothing written outside the scratch directory.
(cd "$tmp" && HOME="$tmp" GOCACHE="$tmp/cache" GOPATH="$tmp/gopath" GOFLAGS=-mod=mod \
	GOPROXY=off "$go" build -o prog .) || {
	echo "not ok - go build"
	exit 1
}
check ".debug_frame is compressed, as Go's linker writes it" \
	sh -c "readelf -SW '$tmp/prog' | grep -q '\.debug_frame.* C '"

"$ds" -F 999 -f folded -o "$tmp/out.folded" -- "$tmp/prog" >/dev/null 2>"$tmp/err"
rc=$?
skip_if_refused $rc "$tmp/err"
check "profiled" test $rc -eq 0 || cat "$tmp/err"

# leaf samples, those with the wrong depth, those of ours under another root
awk '{
	n = $NF; sub(/ [0-9]+$/, ""); k = split($0, f, ";"); rec = 0; ours = 0; leaf = 0
	for (i = 2; i <= k; i++) {
		rec += f[i] == "main.rec"; leaf += f[i] == "main.spin"; ours += f[i] ~ /^main\./
	}
	if (leaf) { leaves += n; if (rec != 41 || f[2] != "runtime.goexit.abi0") bad += n }
	if (ours && f[2] != "runtime.goexit.abi0" && f[2] != "runtime.rt0_go.abi0") stray += n
} END { printf "%d %d %d\n", leaves, bad, stray }' "$tmp/out.folded" >"$tmp/counts"
read -r leaves bad stray <"$tmp/counts"
check "samples in the leaf ($leaves)" test "$leaves" -ge 20
check "every one 41 deep under runtime.goexit ($bad are not)" test "$bad" -eq 0
check "the program's stacks start where Go starts them ($stray do not)" test "$stray" -eq 0
[ $fail -eq 0 ] || grep "main\." "$tmp/out.folded" | cut -c1-300 | head -5
exit $fail
