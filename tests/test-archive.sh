#!/bin/sh
# Captures that outlive their machine.  A program runs from a tmpfs in a
# private mount namespace (as in a container), recorded with --archive
# and -k; when it exits the namespace and its files are gone, and the
# original binary is deleted.  Then:
#   - report with the archive names every frame of the program, each a
#     function of its symbol table (nm of the binary, taken before);
#   - without the archive and the build-id cache, nothing names them:
#     the archive is what does;
#   - perf script names them from the build-id cache record filled
#     (~/.debug's layout), and not without it;
#   - in a fresh mount namespace where no debug directory, cache or build-id
#     cache has anything (another machine), report's output is identical;
#   - a damaged or hostile archive is refused with a message, and report
#     goes on without it.
# usage: test-archive.sh DWARFSAMPLE AGREE-WORKLOAD-SOURCE-BUILT
set -u
ds=$(realpath "$1")
workload=$(realpath "$2")
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"
make_tmp
need_mount_ns
export HOME="$tmp/home" XDG_CACHE_HOME="$tmp/cache"
mkdir -p "$HOME" "$XDG_CACHE_HOME" "$tmp/ns"
cp "$workload" "$tmp/prog"
nm --defined-only "$tmp/prog" | awk '{ print $3 }' | sort -u >"$tmp/nm"
# text_bytes ELF: the non-zero bytes of its .text.
text_bytes() {
	objcopy -O binary --only-section=.text "$1" "$tmp/text.bin" &&
		tr -d '\000' <"$tmp/text.bin" | wc -c
}
text_full=$(text_bytes "$tmp/prog")
size_full=$(stat -c %s "$tmp/prog")

"$ds" record --archive -k -F 499 -o "$tmp/a.data" -- unshare -m --propagation private \
	sh -c 'mount -t tmpfs none "$1" && cp "$2" "$1/prog" && exec "$1/prog" climb 1' \
	sh "$tmp/ns" "$tmp/prog" >/dev/null 2>"$tmp/err"
rc=$?
skip_if_refused $rc "$tmp/err"
check "record --archive of a program in a private mount namespace exits 0" test $rc -eq 0 ||
	cat "$tmp/err"
check "it says it wrote the archive" grep -q "wrote $tmp/a.data.archive.tar.gz" "$tmp/err"
check "the program's file is gone with its namespace" test ! -e "$tmp/ns/prog"
rm -f "$tmp/prog"
check "the archive is a tar with the program's file by build-id, and an index" \
	sh -c "tar tf '$tmp/a.data.archive.tar.gz' | grep -Eq '^\\.build-id/[0-9a-f]{2}/[0-9a-f]+/elf$' &&
	       tar xOf '$tmp/a.data.archive.tar.gz' index | grep -q ' $tmp/ns/prog$'"
check "and the kernel's symbols (-k)" sh -c "tar tf '$tmp/a.data.archive.tar.gz' | grep -qx kallsyms"
id=$(tar xOf "$tmp/a.data.archive.tar.gz" index | awk -v p="$tmp/ns/prog" '$2 == p { print $1 }')
tar xOf "$tmp/a.data.archive.tar.gz" ".build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-)/elf" \
	>"$tmp/archived.elf"
check "the archived program is the same size, an ELF file readelf reads" \
	sh -c "test \$(stat -c %s '$tmp/archived.elf') -eq $size_full &&
	       readelf -S '$tmp/archived.elf' >/dev/null"
text_kept=$(text_bytes "$tmp/archived.elf")
check "with most of its code zeroed ($text_kept of $text_full bytes of .text kept)" \
	test "$text_kept" -lt $((text_full / 2))

# prog_frames FOLDED: the program's frame names, one per line (not the
# [truncated] pseudo-frame a cut stack starts at: no frame of it).
prog_frames() {
	awk -F';' '$1 == "prog" { sub(/ [0-9]+$/, "")
		for (i = 2; i <= NF; i++) if ($i != "[truncated]") print $i }' "$1" |
		sort -u
}
"$ds" report -f folded -i "$tmp/a.data" -o "$tmp/with.folded" 2>"$tmp/err"
check "report with the archive exits 0" test $? -eq 0 || cat "$tmp/err"
prog_frames "$tmp/with.folded" >"$tmp/with.names"
check "it names climb, main and the libc frames below them" \
	sh -c "grep -qx climb '$tmp/with.names' && grep -qx main '$tmp/with.names' &&
	       grep -q '__libc_start' '$tmp/with.names'"
check "no frame of the program is unnamed" sh -c "! grep -q '^\[' '$tmp/with.names'"
# Names from libc and ld.so are not in the program's symbol table: only
# those of the program's own file are checked against nm.
awk -F';' '$1 == "prog" { for (i = 2; i <= NF; i++) if ($i ~ /^(climb|spin|main|sort_some|by_value)$/) print $i }' \
	"$tmp/with.folded" | sort -u >"$tmp/own.names"
check "the program's own frames are functions nm lists" \
	sh -c "test -s '$tmp/own.names' && ! comm -23 '$tmp/own.names' '$tmp/nm' | grep -q ."
"$ds" report --annotate -f folded -i "$tmp/a.data" -o "$tmp/k.folded" 2>/dev/null
check "its kernel frames are named (-k)" \
	grep -Eq ';[A-Za-z_][A-Za-z_0-9.]*_\[k\]( |;)' "$tmp/k.folded"

# Without the archive and the build-id cache nothing names the program.
mv "$tmp/a.data.archive.tar.gz" "$tmp/away.tar"
HOME="$tmp/nohome" XDG_CACHE_HOME="$tmp/nocache" \
	"$ds" report -f folded -i "$tmp/a.data" -o "$tmp/without.folded" 2>/dev/null
check "without archive or cache, climb is not named" \
	sh -c "! grep -q ';climb;' '$tmp/without.folded'"
mv "$tmp/away.tar" "$tmp/a.data.archive.tar.gz"

# perf reads the build-id cache record filled, as its own.
if perf --version >/dev/null 2>&1; then
	perf script -F ip,sym -i "$tmp/a.data" >"$tmp/perf.txt" 2>/dev/null
	check "perf script names the program's frames from the build-id cache" \
		grep -qw climb "$tmp/perf.txt"
	PERF_BUILDID_DIR="$tmp/empty" HOME="$tmp/nohome" \
		perf script -F ip,sym -i "$tmp/a.data" >"$tmp/perf-none.txt" 2>/dev/null
	check "and not without it" sh -c "! grep -qw climb '$tmp/perf-none.txt'"
fi

# Another machine: no debug directory, no build-id cache, no extracted
# archive; the same report.
unshare -m --propagation private sh -c '
	mount -t tmpfs none /usr/lib/debug &&
	mount -t tmpfs none "$HOME" &&
	mount -t tmpfs none "$XDG_CACHE_HOME" &&
	exec "$1" report -f folded -i "$2" -o "$3"' sh "$ds" "$tmp/a.data" \
	"$tmp/fresh.folded" 2>"$tmp/err"
check "report in a fresh namespace exits 0" test $? -eq 0 || cat "$tmp/err"
check "and writes the same profile" cmp -s "$tmp/with.folded" "$tmp/fresh.folded"

# A damaged archive, and one that would write outside its directory.
cp "$tmp/a.data" "$tmp/b.data"
head -c 700 "$tmp/a.data.archive.tar.gz" >"$tmp/b.data.archive.tar.gz"
"$ds" report -f folded -i "$tmp/b.data" -o "$tmp/b.folded" 2>"$tmp/err"
check "a damaged archive: report still exits 0" test $? -eq 0
check "and says it cannot use it" grep -q "b.data.archive.tar.gz cannot be used" "$tmp/err"
cp "$tmp/a.data" "$tmp/c.data"
# GNU tar strips '..' when it writes: Python's tarfile does not.
python3 - "$tmp/c.data.archive.tar.gz" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.USTAR_FORMAT) as t:
    for name in ("index", "../../escape"):
        data = b"owned\n"
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
PY
"$ds" report -f folded -i "$tmp/c.data" -o "$tmp/c.folded" 2>"$tmp/err"
check "an archive with '..' in a name is refused" \
	grep -q "c.data.archive.tar.gz cannot be used" "$tmp/err"
check "and nothing is written outside the cache" \
	sh -c "! find '$tmp' -name escape | grep -q ."
exit $fail
