#!/bin/sh
# The toolchain matrix: one small program (work.c, work.cc, work.rs,
# go/work.go: main -> recurse 41 frames deep -> spin, whose loop calls an
# inlined helper and a shared library's function) built one of the ways
# programs are shipped, sampled live (`dwarfsample -- CMD`) and through
# `dwarfsample record` + `report`, and by `dwarfsample agent -p` (its
# pprof windows read back by go tool pprof), each listing checked by
# tc-check.py:
# stacks complete to the outermost frame, the exact recursion depth, names
# (and, from report, source lines) as llvm-symbolizer gives them.
#   gcc-ld, gcc-lld, clang-lld, clang-ld   C, -O2 -g -fomit-frame-pointer,
#                                          by each compiler and linker
#   gcc-fp, clang-fp     C, -O2 -g -fno-omit-frame-pointer
#                        -mno-omit-leaf-frame-pointer (GNU ld), as
#                        distributions that keep frame pointers build
#   gcc-gz-debug-frame   no .eh_frame of our own: the only CFI is a
#                        zlib-compressed .debug_frame
#   static-pie           gcc -static-pie (the library linked in: a
#                        static-pie has no shared libraries)
#   rust-legacy-ld, rust-legacy-lld, rust-v0-ld, rust-v0-lld
#                        Debian's rustc, each symbol mangling by each linker
#   go                   Debian's go, a module without dependencies
#   cxx                  g++, namespaces, a class template, std::sort with
#                        a lambda
# A missing compiler, linker or llvm-symbolizer is a failure: the packages
# are in .ci/debian-packages.  Only the kernel's refusal skips.
# usage: test-toolchains.sh BUILD DWARFSAMPLE SOURCE-DIR
set -u
build=$1
ds=$2
src=$3
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"
make_tmp

# Debian's compilers, whatever else is first on the PATH (rustup's rustc
# in a developer's ~/.cargo/bin, say): the matrix is of what Debian ships.
rustc=/usr/bin/rustc
go=/usr/bin/go
# CPU seconds each run spends in its bottom loop (about 1000 samples).
seconds=0.6
cflags="-O2 -g -fomit-frame-pointer"
depth=41

# build_c CC LINK-FLAGS [CFLAGS...]: work.c and libtc.so by CC.
build_c() {
	cc=$1
	ldflags=$2
	shift 2
	# shellcheck disable=SC2086 # flag lists, in words
	$cc $cflags "$@" -fPIC -shared $ldflags -o "$tmp/libtc.so" "$src/tclib.c" &&
		$cc $cflags "$@" -I"$src" $ldflags -o "$tmp/work" "$src/work.c" \
			-L"$tmp" -ltc -Wl,-rpath,"$tmp"
}

# build_rust RUSTC-FLAGS...: work.rs by rustc, libtc.so by gcc.
build_rust() {
	# shellcheck disable=SC2086 # flag list, in words
	gcc $cflags -fPIC -shared -o "$tmp/libtc.so" "$src/tclib.c" &&
		"$rustc" -C opt-level=2 -g -C force-frame-pointers=no "$@" \
			-L "$tmp" -l dylib=tc -C link-arg=-Wl,-rpath,"$tmp" \
			-o "$tmp/work" "$src/work.rs"
}

# Offline: a module without dependencies, caches in the scratch directory.
build_go() {
	(cd "$src/go" && GOCACHE="$tmp/gocache" GOPATH="$tmp/gopath" GOPROXY=off \
		GOFLAGS=-buildvcs=false GO111MODULE=on "$go" build -o "$tmp/work" .)
}

# What tc_check needs of each language, as regular expressions over
# function names: the recursive function, the bottom loop's, the functions
# of the bottom loop (the innermost, when a sample is there), and the
# outermost frame of a complete stack.
recurse=recurse
spin=spin
bottom='spin|mix|tc_lib_step'
outermost=_start
case $build in
gcc-ld) build_c gcc "" ;;
gcc-lld) build_c gcc -fuse-ld=lld ;;
clang-lld) build_c clang -fuse-ld=lld ;;
clang-ld) build_c clang -fuse-ld=bfd ;;
gcc-fp | clang-fp)
	# As distributions that keep frame pointers build (Fedora, Ubuntu
	# 24.04): every epilogue ends in pop %rbp, past which GCC's and
	# clang's CFI still have rbp saved below the stack pointer.
	cflags="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer"
	build_c "${build%-fp}" "" ;;
gcc-gz-debug-frame)
	# (The .eh_frame left is the C library's start files'.)
	build_c gcc "" -gz=zlib -fno-asynchronous-unwind-tables -fno-unwind-tables &&
		readelf -SW "$tmp/work" | grep -q ' \.debug_frame .* C ' ;;
static-pie)
	# shellcheck disable=SC2086 # flag list, in words
	gcc $cflags -static-pie -I"$src" -o "$tmp/work" "$src/work.c" "$src/tclib.c" ;;
rust-legacy-ld | rust-legacy-lld | rust-v0-ld | rust-v0-lld)
	# Legacy is this rustc's default (naming it needs -Z unstable-options).
	mangling=
	case $build in rust-v0-*) mangling=-Csymbol-mangling-version=v0 ;; esac
	linker=
	case $build in *-lld) linker=-Clink-arg=-fuse-ld=lld ;; esac
	recurse=work::recurse
	spin=work::spin
	bottom='work::spin|work::helpers::mix|tc_lib_step'
	# shellcheck disable=SC2086 # empty or one flag
	build_rust $mangling $linker ;;
go)
	recurse=main.recurse
	spin=main.spin
	bottom='main.spin|main.mix|work/tclib.Step'
	# goexit is assembly, its ELF symbol the ABI0 wrapper's.
	outermost='runtime.goexit(.abi0)?'
	build_go ;;
cxx)
	recurse='tc::recurse<unsigned long>'
	spin='tc::Spinner<unsigned long>::run'
	bottom='std::.*|tc::Spinner<unsigned long>::.*|tc::detail::mix|tc_lib_step'
	# shellcheck disable=SC2086 # flag list, in words
	gcc $cflags -fPIC -shared -o "$tmp/libtc.so" "$src/tclib.c" &&
		g++ $cflags -I"$src" -o "$tmp/work" "$src/work.cc" \
			-L"$tmp" -ltc -Wl,-rpath,"$tmp" ;;
*)
	echo "unknown build $build"
	exit 2 ;;
esac
status=$?
check "$build: the workload builds" test "$status" -eq 0
[ "$status" -eq 0 ] || exit 1

# tc_check NAME: the checks on listing NAME.txt.
tc_check() {
	python3 "$src/tc-check.py" "$tmp/$1.txt" --depth "$depth" --recurse "$recurse" \
		--spin "$spin" --bottom "$bottom" --outermost "$outermost" --label "$build $1"
}

if ! "$ds" -F 2000 -f perf-script -o "$tmp/live.txt" -- "$tmp/work" "$seconds" \
	2>"$tmp/live.err"; then
	cat "$tmp/live.err"
	if grep -qiE "permission|not supported|perf_event_paranoid" "$tmp/live.err"; then
		echo "SKIP: the kernel refuses perf_event_open (see above)"
		exit 77
	fi
	echo "not ok - $build: dwarfsample -- work"
	exit 1
fi
cat "$tmp/live.err"
tc_check live || fail=1

check "$build: dwarfsample record" \
	"$ds" record -F 2000 -o "$tmp/rec.data" -- "$tmp/work" "$seconds"
# With source lines, which tc-check.py compares too.
check "$build: dwarfsample report" \
	"$ds" report -F comm,tid,time,ip,sym,symoff,dso,srcline \
	-i "$tmp/rec.data" -o "$tmp/report.txt"
tc_check report || fail=1

# The agent on the same program: its windows, written as pprof, decoded
# by go tool pprof (not this project's reader) and checked the same way.
# The program waits stopped until the agent samples it.
stopped() {
	[ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" = T ]
}
# shellcheck disable=SC2016 # expanded by the inner shell
sh -c 'kill -STOP $$; exec "$0" "$1"' "$tmp/work" "$seconds" &
target=$!
wait_for stopped $target
"$ds" agent -p $target -F 2000 --interval 1s --out-dir "$tmp/agent" \
	--spool-dir "$tmp/spool" --health-interval 0 2>"$tmp/agent.err" &
agent=$!
wait_for grep -q "sampling the processes given" "$tmp/agent.err"
kill -CONT $target
wait $agent
status=$?
wait $target
check "$build: dwarfsample agent -p exits 0 with its target" test "$status" -eq 0 ||
	cat "$tmp/agent.err"
go tool pprof -raw "$tmp"/agent/*.pb.gz >"$tmp/agent.raw" 2>"$tmp/pprof.err" &&
	python3 "$src/pprof-listing.py" "$tmp/agent.raw" >"$tmp/agent.txt"
check "$build: go tool pprof reads the agent's windows" test $? -eq 0 ||
	cat "$tmp/pprof.err" "$tmp/agent.err"
tc_check agent || fail=1
exit $fail
