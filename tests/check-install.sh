#!/bin/sh
# `meson install` delivers a usable library: into a scratch DESTDIR, then a
# program built only from the installed header and pkg-config file links
# against the installed shared library and runs.
# usage: check-install.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

DESTDIR="$tmp/root" meson install -C "$build" --no-rebuild --quiet >/dev/null
pc=$(find "$tmp/root" -name perfreader.pc)
[ -n "$pc" ] || { echo "FAIL: no perfreader.pc installed"; exit 1; }
find "$tmp/root" -name perfreader.h | grep -q . || { echo "FAIL: no header installed"; exit 1; }
# What the README's install section says meson install puts in place.
for f in bin/dwarfsample bin/dwarfsample-demo share/man/man1/dwarfsample.1 \
	lib/systemd/system/dwarfsample-agent.service; do
	find "$tmp/root" -path "*/$f" | grep -q . || { echo "FAIL: no $f installed"; exit 1; }
done
grep -q '^ExecStart=/.*/bin/dwarfsample agent ' "$(find "$tmp/root" -name dwarfsample-agent.service)" ||
	{ echo "FAIL: the installed unit does not start the installed dwarfsample"; exit 1; }

cat >"$tmp/use.c" <<'C'
#include <perfreader.h>
#include <stdio.h>
int main(void)
{
	int cpus[8];
	int n = pr_cpu_list_parse("0-2,5", cpus, 8);
	printf("%d %d\n", n, cpus[3]);
	return n == 4 && cpus[3] == 5 ? 0 : 1;
}
C
# The sysroot makes pkg-config point -I and -L into the scratch DESTDIR.
export PKG_CONFIG_PATH="${pc%/*}" PKG_CONFIG_SYSROOT_DIR="$tmp/root"
flags=$(pkg-config --cflags --libs perfreader)
# pkgconf prefixes variables with the sysroot too.
libdir=$(pkg-config --variable=libdir perfreader)
# A sanitizer build installs an instrumented library; its users need the
# same runtime first in line.
if readelf -d "$libdir/libperfreader.so" | grep -q 'libasan'; then
	flags="$flags -fsanitize=address,undefined"
fi
# shellcheck disable=SC2086 # flags are words
cc -o "$tmp/use" "$tmp/use.c" $flags
LD_LIBRARY_PATH=$libdir "$tmp/use" >/dev/null || { echo "FAIL: the installed library does not work"; exit 1; }
echo "PASS: the command, the demo, the man page and the agent's unit are installed; the installed header, pkg-config file and shared library build and run a program"
