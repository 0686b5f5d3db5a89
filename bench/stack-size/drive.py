#!/usr/bin/env python3
"""The default --stack-size, measured (BENCHMARKS.md): run the live
profiler (-p PID, attached before the workload execs, so wait4 gives the
profiler's own CPU) for each workload x stack size; print one TSV line
per run.

usage: BUILD=build drive.py WORKLOAD,... SIZE,... [FREQ] [EXTRA-ARGS]
Run from the source tree.  WORK (default /tmp/ds-stack-size) must hold
big.c (tests/gen-big-c.sh 600 > big.c) and churn (g++ -O2 churn.cpp)."""
import os, re, subprocess, sys
HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.abspath(os.environ.get("BUILD", "build"))
WORK = os.environ.get("WORK", "/tmp/ds-stack-size")
DS = BUILD + "/tools/dwarfsample"
W = {
 "gcc":     f"cd {WORK} && exec gcc -O2 -c big.c -o big.o",
 "recurse": f"exec {BUILD}/tests/agree-workload recurse 5",
 "demo":    f"exec {BUILD}/tools/dwarfsample-demo 5 2",
 "python":  f"exec python3 {HERE}/cpu.py 5",
 "node":    f"exec node {HERE}/cpu.js 5",
 "c++":     f"exec {WORK}/churn 5",
}
def run(w, n, freq=999, extra=()):
    wl = subprocess.Popen(["sh", "-c", "sleep 0.4; " + W[w]],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.makedirs(WORK + "/out", exist_ok=True)
    out = f"{WORK}/out/{w}-{n}.folded"
    prof = subprocess.Popen([DS, "-F", str(freq), "--stack-size", str(n), *extra,
                             "-o", out, "-p", str(wl.pid)],
                            stderr=subprocess.PIPE, text=True)
    err = prof.stderr.read()
    _, st, ru = os.wait4(prof.pid, 0)
    wl.wait()
    m = re.search(r"(\d+) samples in ([\d.]+) s, (\d+) lost", err)
    ends = dict((k.strip(), float(v)) for k, v in
                re.findall(r"([a-z ]+?) ([\d.]+)%", err.split("stacks ended:")[1].split("\n")[0]))
    cpu = ru.ru_utime + ru.ru_stime
    return dict(w=w, n=n, samples=int(m[1]), secs=float(m[2]), lost=int(m[3]),
                outer=ends.get("outermost", 0.0), trunc=ends.get("truncated", 0.0),
                ends=ends, cpu=cpu, cpu_ms_per_ks=1e6 * cpu / max(1, int(m[1])) / 1000)
if __name__ == "__main__":
    ws = sys.argv[1].split(",")
    ns = [int(x) for x in sys.argv[2].split(",")]
    freq = int(sys.argv[3]) if len(sys.argv) > 3 else 999
    extra = sys.argv[4].split() if len(sys.argv) > 4 else []
    for w in ws:
        for n in ns:
            r = run(w, n, freq, extra)
            print("\t".join(str(r[k]) for k in ("w","n","samples","secs","lost","outer","trunc","cpu","cpu_ms_per_ks")),
                  r["ends"], flush=True)
