#!/bin/sh
# The address index cache through `report` on the offline fixture
# (tests/fixtures/demo-static, a static binary with DWARF): the first run
# stores the binary's index by build-id, the second maps it (the file is
# not written again, and its mtime says it was used) and names from it
# without opening the binary's DWARF, to the same bytes; a damaged file
# is refused and replaced, and --no-index-cache, --index-cache and
# --index-cache-size do what they say; a directory that cannot be used
# costs one warning and nothing else.  On libdw's path (-Dsymindex=false,
# INDEX "false") as on the index's: a cached index serves both, and
# libdw's fills the cache for a file whose DWARF is as small as this
# one's.  No privileges and no perf needed.
# usage: test-index-cache.sh DWARFSAMPLE FIXTURES INDEX
# shellcheck disable=SC2317 # the helpers run through check
set -u
ds=$1
fx=$2/demo-static
on=$3
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
export XDG_CACHE_HOME="$tmp/cache"
ix=$XDG_CACHE_HOME/dwarfsample/index

lacks() { # pattern, file
	! grep -q "$1" "$2"
}

report() {
	"$ds" report -i "$fx/perf.data" --debug-dir "$fx" "$@"
}

rc=0
"$ds" report -i "$fx/perf.data" --index-cache-size 12X >/dev/null 2>"$tmp/err" || rc=$?
check "a size that is not one is a usage error (2: $rc)" test "$rc" -eq 2
check "... that says what a size looks like" \
	grep -q "invalid --index-cache-size '12X': expected a size in bytes, with K, M or G" \
	"$tmp/err"

if [ "$on" != true ]; then
	report --no-index-cache >"$tmp/out" 2>"$tmp/err"
	check "report reads the fixture ($?)" test -s "$tmp/out"
	check "with names from libdw and no index cache, none is made" test ! -e "$ix"
fi

# The one binary with DWARF, by its build-id.
id=$(basename "$(dirname "$(find "$fx/.build-id" -type f | head -n1)")")
id=$id$(basename "$(find "$fx/.build-id" -type f | head -n1)")
file=$ix/$id-s1.dsix

report -vv >"$tmp/first" 2>"$tmp/err"
check "the first report stores the binary's index by build-id" test -f "$file"
check "... alone" test "$(find "$ix" -type f | wc -l)" -eq 1
check "... built from the binary's DWARF" grep -q ": its DWARF opened" "$tmp/err"
inode=$(stat -c %i "$file")
touch -d 2001-01-01 "$file"
report -vv >"$tmp/second" 2>"$tmp/err"
check "the second names the same" cmp -s "$tmp/first" "$tmp/second"
check "... from the index it maps, not written again" test "$(stat -c %i "$file")" = "$inode"
check "... whose mtime says it was used" test "$(stat -c %Y "$file")" -gt 1000000000
check "... as -vv says" grep -q "its address index mapped from $file" "$tmp/err"
check "... without opening the binary's DWARF" lacks ": its DWARF opened" "$tmp/err"
report --no-index-cache >"$tmp/nocache" 2>"$tmp/err"
check "... to the bytes libdw's own lookups give" cmp -s "$tmp/nocache" "$tmp/second"
report -v >"$tmp/summary-warm" 2>&1 >/dev/null
report -v --no-index-cache >"$tmp/summary-libdw" 2>&1 >/dev/null
check "... counting the file among those with DWARF all the same" \
	cmp -s "$tmp/summary-libdw" "$tmp/summary-warm"
env DS_SYMINDEX=0 "$ds" report -i "$fx/perf.data" --debug-dir "$fx" -vv >"$tmp/libdw" 2>"$tmp/err"
check "DS_SYMINDEX=0 names through libdw alone, the cached index unused" \
	grep -q ": its DWARF opened" "$tmp/err"
check "... (not mapped)" lacks "its address index mapped from" "$tmp/err"
check "... to the same bytes" cmp -s "$tmp/first" "$tmp/libdw"

# Cut short: refused, one note, rebuilt and replaced.
size=$(stat -c %s "$file")
head -c $((size / 2)) "$file" >"$tmp/half" && cp "$tmp/half" "$file"
report -vv >"$tmp/third" 2>"$tmp/err"
check "a damaged index file changes no name" cmp -s "$tmp/first" "$tmp/third"
check "... is said once, at debug level" \
	test "$(grep -c "its cached address index $file is not used (its size is not the one written): built again" "$tmp/err")" -eq 1
check "... and replaced by a whole one" test "$(stat -c %s "$file")" -eq "$size"

# Empty (a write cut short by a full disk or a crash before rename): the
# same, and the note says empty.
: >"$file"
report -vv >"$tmp/empty" 2>"$tmp/err"
check "an empty index file changes no name" cmp -s "$tmp/first" "$tmp/empty"
check "... and the note says it is empty" \
	grep -q "its cached address index $file is not used (empty: a write cut short, or a full disk): built again" "$tmp/err"
check "... and it is replaced by a whole one" test "$(stat -c %s "$file")" -eq "$size"

# Lines: an index kept without them does not serve a run that shows them,
# which builds it again, with them, in its place, and names as libdw does.
report -F ip,sym,srcline -vv >"$tmp/lines-cold" 2>"$tmp/err"
check "an index without lines is not used for srcline" grep -q ": its DWARF opened" "$tmp/err"
report -F ip,sym,srcline -vv >"$tmp/lines-warm" 2>"$tmp/err"
check "... the one built with them is" grep -q "its address index mapped from $file" "$tmp/err"
check "... without the DWARF" lacks ": its DWARF opened" "$tmp/err"
report -F ip,sym,srcline --no-index-cache >"$tmp/lines-libdw" 2>/dev/null
check "... the same lines, cold and warm" cmp -s "$tmp/lines-cold" "$tmp/lines-warm"
check "... as libdw's" cmp -s "$tmp/lines-libdw" "$tmp/lines-warm"
check "... and it still serves a run without lines" sh -c \
	"'$ds' report -i '$fx/perf.data' --debug-dir '$fx' -vv 2>&1 >/dev/null | grep -q 'its address index mapped from'"

# Off: nothing read, nothing written.
rm -rf "$XDG_CACHE_HOME"
report --no-index-cache >"$tmp/out" 2>"$tmp/err"
check "--no-index-cache names the same" cmp -s "$tmp/first" "$tmp/out"
check "... and makes no index cache" test ! -e "$ix"

report --index-cache "$tmp/given" >"$tmp/out" 2>"$tmp/err"
check "--index-cache DIR keeps the index in DIR" test -f "$tmp/given/$id-s1.dsix"
check "... and not in the default one" test ! -e "$ix"
report --index-cache "$tmp/small" --index-cache-size 64 >"$tmp/out" 2>"$tmp/err"
check "an index larger than --index-cache-size is not kept" \
	test -z "$(find "$tmp/small" -type f)"

# A directory that cannot be made: the names, and one warning.
: >"$tmp/plain"
report --index-cache "$tmp/plain/index" >"$tmp/out" 2>"$tmp/err"
check "an index cache that cannot be made changes no name" cmp -s "$tmp/first" "$tmp/out"
check "... and is said once" \
	test "$(grep -c "the address index cache $tmp/plain/index cannot be made" "$tmp/err")" -eq 1
exit "$fail"
