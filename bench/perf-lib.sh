# Helpers the shell benchmarks share (callgraph-cost.sh, vs-perf.sh):
# sourced, not run.  Needs $tmp (a scratch directory).

# CPython for the helpers below: Debian's, not a shim that may be first
# on PATH.
py=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}

# timed FILE command...: run the command; its CPU milliseconds (user and
# system, its children included) into FILE, and its wall milliseconds
# after them on the same line.  The command's own exit status is kept.
# Children it leaves behind count too: perf 7.3's script exits without
# waiting for the addr2line it started, whose CPU a plain wait would not
# see, so this is their subreaper and waits for every one.
timed() {
	out=$1
	shift
	"$py" -c 'import ctypes, os, resource, subprocess, sys, time
PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
t = time.monotonic()
rc = subprocess.run(sys.argv[2:]).returncode
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
w = time.monotonic() - t
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[1], "w").write("%.3f %.3f\n" % ((r.ru_utime + r.ru_stime) * 1000, w * 1000))
sys.exit(rc)' "$out" "$@"
}

# cpu_of FILE: the CPU milliseconds timed() wrote.
cpu_of() {
	read -r c _ <"$1"
	echo "$c"
}

# perfdata FILE: "SAMPLES LOST BYTES_PER_SAMPLE WHAT" from a perf.data
# file's header and records (perf_file_header, perf_event_attr at its ABI
# offsets; PERF_RECORD_SAMPLE 9, LOST 2, LOST_SAMPLES 13), WHAT being what
# its first event asked of each sample.
perfdata() {
	"$py" -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
attrs, _, data, size = struct.unpack_from("<4Q", d, 24)
freq, stype = struct.unpack_from("<2Q", d, attrs + 16)
flags, = struct.unpack_from("<Q", d, attrs + 40)
stack, = struct.unpack_from("<I", d, attrs + 88)
n = nbytes = lost = 0
p, end = data, data + size
while p + 8 <= end:
    t, _, sz = struct.unpack_from("<IHH", d, p)
    if not sz:
        break
    if t == 9:
        n, nbytes = n + 1, nbytes + sz
    elif t == 2:
        lost += struct.unpack_from("<Q", d, p + 16)[0]
    elif t == 13:
        lost += struct.unpack_from("<Q", d, p + 8)[0]
    p += sz
what = ["chain" if stype & (1 << 5) else "no chain"]
if stype & (1 << 13):
    what.append("stack %d" % stack)
what.append("%d Hz" % freq if flags & (1 << 10) else "period %d" % freq)
print(n, lost, round(nbytes / n) if n else 0, ", ".join(what))' "$1"
}
