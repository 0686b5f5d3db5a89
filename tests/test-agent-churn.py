#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The agent under program churn keeps its file cache within --cache-size,
forgets the processes that exit, and names a file it evicted correctly
when a process maps it again.

`dwarfsample agent -a --cache-size 6M` (windows every second, health
every half second) while 40 distinct programs run one after the other,
each 0.3 s of work in its own function (about 30 samples at 99 Hz): copies of one C program built with DWARF, each with a
build-id of its own (tests/buildid-copies.py) and 1 MiB of data, so that
each weighs over 1 MiB to the cache and 40 of them cannot fit in 6.  The
first copy runs again at the end, when 39 files sampled after it have
pushed it out (least recently sampled first).

Asserted on the agent's own accounting (its health lines), not on its
resident size: every trim leaves the cache at or under 6 MiB; files were
evicted; the processes it holds at the end are no more than those alive
then plus a margin well under the 40 that came and went.  And on its
windows (--out-dir): the first copy's function and source file are named
in a window of its first run and in one of its second, after eviction,
and no copy's frames are in a window of another service's.

usage: test-agent-churn.py DWARFSAMPLE
"""
import calendar
import glob
import gzip
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DS = sys.argv[1]
HERE = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp()
FAIL = [0]
COPIES = 40
CACHE_MIB = 6
# Each program's run, in seconds of the wall clock.
RUN_S = "0.3"

SOURCE = r"""
#include <stdlib.h>
#include <time.h>
/* 1 MiB the cache weighs with the file (it is never read). */
const char churn_ballast[1 << 20] = { 1 };
static volatile unsigned long sink;
__attribute__((noinline)) void churn_named_fn(double s)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 2654435761u + 1;
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9 < s);
}
int main(int argc, char **argv)
{
	churn_named_fn(atof(argv[1]));
	return 0;
}
"""


def check(what, ok, detail=""):
    print("%s: %s" % ("ok" if ok else "FAIL", what))
    if not ok:
        FAIL[0] += 1
        if detail:
            print("    " + str(detail).replace("\n", "\n    "))


def alive_processes():
    return sum(1 for d in os.listdir("/proc") if d.isdigit())


def window_strings(path):
    """The string table of a window's pprof, as raw bytes (its names)."""
    return gzip.open(path).read()


def main():
    src = os.path.join(TMP, "churn-wl.c")
    open(src, "w").write(SOURCE)
    prog = os.path.join(TMP, "churn-wl")
    subprocess.run(["cc", "-O1", "-g", "-o", prog, src], check=True)
    subprocess.run([sys.executable, os.path.join(HERE, "buildid-copies.py"), prog, str(COPIES),
                    os.path.join(TMP, "churn-")], check=True)
    out = os.path.join(TMP, "out")
    log = os.path.join(TMP, "agent.log")
    agent = subprocess.Popen([DS, "agent", "-a", "-F", "99", "--interval", "1s", "--out-dir", out,
                              "--spool-dir", os.path.join(TMP, "spool"),
                              "--cache-size", "%dM" % CACHE_MIB, "--health-interval", "500ms"],
                             stdout=subprocess.DEVNULL, stderr=open(log, "w"),
                             env=dict(os.environ, STATE_DIRECTORY=os.path.join(TMP, "state")))
    try:
        # Sampling has started once the first health line is out.
        deadline = time.monotonic() + 15
        while "health:" not in open(log).read() and time.monotonic() < deadline:
            time.sleep(0.2)
        first = second = None
        for i in list(range(COPIES)) + [0]:
            t = time.time()
            subprocess.run([os.path.join(TMP, "churn-%03d" % i), RUN_S], check=True, timeout=30)
            if i == 0:
                if first is None:
                    first = t
                else:
                    second = t
        # Two more windows and health lines after the last run.
        time.sleep(2.5)
        alive = alive_processes()
    finally:
        agent.terminate()
        rc = agent.wait(timeout=30)
    text = open(log).read()
    check("the agent exits 0 on SIGTERM (%d)" % rc, rc == 0, text[-2000:])

    health = re.findall(r"cache (\d+) files, (\d+) MiB, (\d+) evicted, (\d+) renewed.*"
                        r"holding (\d+) processes, (\d+) DSOs", text)
    check("health lines say the cache and what the agent holds (%d)" % len(health),
          len(health) >= 20, text[-2000:])
    if not health:
        return
    mib = [int(h[1]) for h in health]
    check("every trim leaves the cache within --cache-size %dM (at most %d MiB)"
          % (CACHE_MIB, max(mib)), max(mib) <= CACHE_MIB, mib)
    evicted = int(health[-1][2])
    check("files were evicted to stay within it (%d; %d programs of over 1 MiB ran)"
          % (evicted, COPIES), evicted >= COPIES // 2, health[-1])
    procs = int(health[-1][4])
    # The 40 that exited are gone from it; what else started or ended
    # around the last trim is well within the margin.
    check("the processes it holds (%d) are those alive (%d), not the %d that exited"
          % (procs, alive, COPIES), procs <= alive + COPIES // 2, health[-1])

    # The agent names files from their address indexes, kept in its state
    # directory by build-id: one for each copy it sampled (each has a
    # build-id of its own), so an evicted copy is named again without its
    # DWARF walked again.
    ids = set()
    for i in range(COPIES):
        ids.add(subprocess.run(["readelf", "-n", os.path.join(TMP, "churn-%03d" % i)],
                               capture_output=True, text=True).stdout.split("Build ID: ")[1].split()[0])
    index_dir = os.path.join(TMP, "state", "index")
    kept = {f.split("-")[0] for f in os.listdir(index_dir)} if os.path.isdir(index_dir) else set()
    check("the agent kept an address index for the copies it named (%d of %d)"
          % (len(ids & kept), COPIES), len(ids & kept) >= COPIES // 2, sorted(kept)[:5])

    # Windows are named SERVICE-STAMP-SEQ.pb.gz, the service the program's
    # name; the two runs of copy 0 are 40 x RUN_S apart.
    wins = sorted(glob.glob(os.path.join(out, "churn-000-*.pb.gz")))
    check("windows of the first copy's runs were written (%d)" % len(wins), len(wins) >= 2,
          os.listdir(out) if os.path.isdir(out) else "no --out-dir")
    # A sample taken after its process's EXIT record (the task finishing
    # its exit in the kernel) is of that process still: no copy's frames
    # are filed under another service ("unknown").
    stray = [os.path.basename(p) for p in glob.glob(os.path.join(out, "*.pb.gz"))
             if not os.path.basename(p).startswith("churn-")
             and b"/churn-0" in window_strings(p)]
    check("every window with a copy's frames is its copy's (%d elsewhere)" % len(stray),
          not stray, stray[:10])
    stamp = lambda p: calendar.timegm(time.strptime(re.search(r"-(\d{8}T\d{6})Z-", p).group(1),
                                                    "%Y%m%dT%H%M%S"))
    early = [p for p in wins if stamp(p) < first + 5]
    late = [p for p in wins if stamp(p) >= second - 2]
    for what, ps in (("its first run", early), ("its run after eviction", late)):
        named = [p for p in ps if b"churn_named_fn" in window_strings(p) and
                 b"churn-wl.c" in window_strings(p)]
        check("a window of %s names churn_named_fn in churn-wl.c (%d of %d windows)"
              % (what, len(named), len(ps)), named, ps)


try:
    main()
finally:
    shutil.rmtree(TMP, ignore_errors=True)
sys.exit(1 if FAIL[0] else 0)
