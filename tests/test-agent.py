#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""dwarfsample agent against a loopback Pyroscope (tests/receiver.py) that
checks the push API's contract strictly and breaks on request: 500s, a
429 with Retry-After, a connection cut mid-body, answers 4 s and 10 s late
(awaited, or counted unconfirmed: never sent twice), a window answered 500
every time (given up after ten tries, the others delivered), a 400, and
an outage of 32 s or more.  Every window the agent cut arrives once, in order; the
windows tile the run; each body is a pprof that go tool pprof reads, with
the workload's function, the function inlined into it and their lines;
its labels arrive as given, a tag's ',', '}' and '=' too;
the credentials go in headers and never in the log; SIGTERM flushes the
last window.  Then a run whose backend is down spools its windows (within
--spool-size, dropping the oldest), and the next run delivers them first.

The first agent's uploader runs on a clock eight times as fast as real
time (its test hook, DWARFSAMPLE_TEST_UPLOAD_CLOCK_RATE): its backoff
lives through an outage of 32 s in 4 s, and every wait of its own (backoff,
Retry-After) is an eighth as long; the receiver's stall and the request
timeout stay real.  The other runs use the real clock.

Then names and labels a strict backend takes, in four agents at once
against one receiver: a process whose executable is g++ and whose thread
name is not UTF-8, one run from a memfd (named by its parent), -e
page-faults (page_faults), --off-cpu (filed as off_cpu, the waits'
nanoseconds), --wall (filed as process_cpu, off_cpu and wall), and
--group-by host with OTLP too; the receiver refuses what Pyroscope's
validation or protoc would, and nothing may be refused.

Last, the OTLP sink: every window a gzipped ExportProfilesServiceRequest
with the headers of DWARFSAMPLE_OTLP_HEADERS, which protoc decodes with the
specification's messages: the resource's attributes, and the workload's
inlined function as a second line of its location.

usage: test-agent.py DWARFSAMPLE RECEIVER PROTO-DIR
"""
import base64
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import agent_push

DS, RECEIVER, PROTOS = sys.argv[1], sys.argv[2], sys.argv[3]
TMP = tempfile.mkdtemp()
FAIL = [0]
PASSWORD = "s3cret-pw-7731"
# A tag value the name /ingest took would have cut short.
ODD_TAG = "a,b}c=d{e"
# The first agent's clock rate, and its outage in real seconds: 32 s of
# its clock, which its backoff goes through as it would through a real one.
CLOCK_RATE = 8
DOWN_S = 4
WORKLOAD = r"""
#include <stdlib.h>
#include <time.h>
static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	for (int i = 0; i < 64; i++)
		x = (x ^ (x >> 13)) * 0x9e3779b97f4a7c15ul + (unsigned long)i;
	return x;
}
__attribute__((noinline)) unsigned long agent_hot(unsigned long x)
{
	return mix(x) + 1;
}
int main(int argc, char **argv)
{
	time_t end = time(NULL) + atoi(argv[1]);
	volatile unsigned long sink = 0;
	while (time(NULL) < end)
		sink = agent_hot(sink);
	return 0;
}
"""


# The lines of the runs after the first, which go on beside it (main()):
# kept and printed after the first run's, so that each run's lines stay
# together.
OUT = threading.local()


def say(line):
    kept = getattr(OUT, "lines", None)
    if kept is None:
        print(line, flush=True)
    else:
        kept.append(line)


def check(what, ok, detail=""):
    say(("ok - " if ok else "not ok - ") + what)
    if not ok:
        FAIL[0] = 1
        if detail:
            say("  " + str(detail).replace("\n", "\n  "))
    return ok


def wait(cond, what, timeout=120):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.1)
    check("waited for " + what, False)
    return False


def entries(rdir):
    try:
        with open(os.path.join(rdir, "log.jsonl")) as f:
            return [json.loads(l) for l in f]
    except OSError:
        return []


def accepted(rdir):
    return [e for e in entries(rdir) if e["outcome"] == "accepted"]


def control(rdir, c):
    with open(os.path.join(rdir, "control.tmp"), "w") as f:
        json.dump(c, f)
    os.rename(os.path.join(rdir, "control.tmp"), os.path.join(rdir, "control.json"))


def start_receiver(rdir):
    os.makedirs(rdir, exist_ok=True)
    p = subprocess.Popen([sys.executable, RECEIVER, rdir, PROTOS])
    wait(lambda: os.path.exists(os.path.join(rdir, "port")), "the receiver's port", 30)
    with open(os.path.join(rdir, "port")) as f:
        return p, int(f.read())


def agent(args, log, env, wrap=()):
    return subprocess.Popen(list(wrap) + [DS, "agent"] + args, stdout=subprocess.DEVNULL,
                            stderr=open(log, "w"), env=env)


def stopped_line(log):
    """(windows, profiles, lost) of the last line; (refused, dropped) are
    in stopped_counts()."""
    c = stopped_counts(log)
    return (c[0], c[1], c[4]) if c else None


def stopped_counts(log):
    """(windows, profiles, refused, dropped, lost, given up, unconfirmed)."""
    m = re.search(r"stopped: (\d+) windows, (\d+) profiles, (\d+) refused, (\d+) dropped "
                  r"from the spool, (\d+) lost, (\d+) given up, (\d+) unconfirmed",
                  open(log).read())
    return tuple(int(x) for x in m.groups()) if m else None


def after(rdir, n, outcome):
    """The first entry after entry n with this outcome, or None."""
    for e in entries(rdir):
        if e["n"] > n and e["outcome"] == outcome:
            return e
    return None


def after_all(rdir, n, outcome):
    return [e for e in entries(rdir) if e["n"] > n and e["outcome"] == outcome]


def taken(rdir, n, entry):
    """The accepted request after entry n of the same window as `entry`
    (its ID: what the receiver read of it names it)."""
    for e in after_all(rdir, n, "accepted"):
        if entry.get("id") and e.get("id") == entry["id"]:
            return e
    return None


def same_body(rdir, entry):
    """The accepted requests with the body of `entry`: a window delivered
    twice would have two."""
    return [e for e in accepted(rdir) if e.get("digest") == entry.get("digest")]


def after_stalled(rdir, n):
    for e in entries(rdir):
        if e["n"] > n and "stalled" in e:
            return e
    return None


def last_n(rdir):
    es = entries(rdir)
    return es[-1]["n"] if es else 0


def usage_errors():
    """Refused before sampling, exit 2 (systemd's unit does not restart
    it): a URL that is not http(s), credentials in a URL (readable in
    /proc/PID/cmdline), naming where they go instead.  --help gives -F's
    one default, the agent's."""
    spool = os.path.join(TMP, "spool-usage")
    for url, says in (("ftp://127.0.0.1:1", "must start with http:// or https://"),
                      ("http://user:pw-9931@127.0.0.1:1", "DWARFSAMPLE_PYROSCOPE_USER and "
                       "DWARFSAMPLE_PYROSCOPE_PASSWORD, in the environment or "
                       "--credentials-file")):
        r = subprocess.run([DS, "agent", "-d", "1", "--pyroscope", url, "--spool-dir", spool],
                           capture_output=True, text=True, timeout=60)
        check("--pyroscope %s: exit 2, saying %r" % (url.split("@")[-1], says),
              r.returncode == 2 and says in r.stderr and "pw-9931" not in r.stderr,
              (r.returncode, r.stderr))
    r = subprocess.run([DS, "agent", "-d", "1", "--otlp", "https://tok-3@127.0.0.1:1",
                        "--spool-dir", spool], capture_output=True, text=True, timeout=60)
    check("--otlp with credentials in the URL: exit 2, naming DWARFSAMPLE_OTLP_HEADERS",
          r.returncode == 2 and "DWARFSAMPLE_OTLP_HEADERS" in r.stderr
          and "tok-3" not in r.stderr, (r.returncode, r.stderr))
    # A series with a label twice is refused by Pyroscope: a tag may not
    # be one of the agent's own labels, nor given twice.
    for tags, says in ((["service_name=x"], "the agent sets that label itself"),
                       (["__name__=x"], "labels starting with __ are Pyroscope's own"),
                       (["k=1", "k=2"], "--tag k given twice")):
        r = subprocess.run([DS, "agent", "-d", "1", "--pyroscope", "http://127.0.0.1:1",
                            "--spool-dir", spool] + [a for t in tags for a in ("--tag", t)],
                           capture_output=True, text=True, timeout=60)
        check("--tag %s: exit 2, saying %r" % (" --tag ".join(tags), says),
              r.returncode == 2 and says in r.stderr, (r.returncode, r.stderr))
    h = subprocess.run([DS, "agent", "--help"], capture_output=True, text=True).stdout
    freq = re.findall(r"-F, --freq HZ.*\(default (\d+)\)", h)
    check("agent --help gives one default for -F, 49 (%s)" % freq, freq == ["49"]
          and "99" not in h.split("--freq")[1].split("\n")[0], h[:1500])


def main():
    usage_errors()
    src = os.path.join(TMP, "agent-wl.c")
    wl = os.path.join(TMP, "agent-wl")
    with open(src, "w") as f:
        f.write(WORKLOAD)
    subprocess.check_call(["cc", "-O2", "-g", "-fomit-frame-pointer", "-o", wl, src])
    rdir = os.path.join(TMP, "recv")
    recv, port = start_receiver(rdir)
    work = subprocess.Popen([wl, "600"])
    env = dict(os.environ, DWARFSAMPLE_PYROSCOPE_USER="agent-user",
               DWARFSAMPLE_PYROSCOPE_PASSWORD=PASSWORD, DWARFSAMPLE_PYROSCOPE_TENANT="team-a")
    log = os.path.join(TMP, "agent.log")
    spool = os.path.join(TMP, "spool")
    a = agent(["-p", str(work.pid), "--pyroscope", "http://127.0.0.1:%d/" % port,
               "--interval", "1s", "--service", "wl-svc", "--tag", "env=test",
               "--tag", "odd=" + ODD_TAG,
               "--timeout", "2s", "--flush-timeout", "30s", "--spool-dir", spool,
               "--health-interval", "5s", "--log-level", "debug"], log,
              dict(env, DWARFSAMPLE_TEST_UPLOAD_CLOCK_RATE=str(CLOCK_RATE)))
    # The other runs go on beside this one once it samples: each samples
    # a workload of its own (-p) and talks to a receiver of its own, and
    # what they check is counted in windows of the wall clock, as this
    # one's is.  Most of their time and this one's is waiting for windows,
    # stalls and outages.
    rest = threading.Thread(target=other_runs, args=(wl, env))
    try:
        run_faults(rdir, a, log, spool, rest.start)
    finally:
        for p in (a, work, recv):
            if p.poll() is None:
                p.kill()
                p.wait()
        if rest.ident is not None:
            rest.join()
    check_windows(rdir, log, wl)
    if rest.ident is None:
        # This run failed before it sampled: the others after it.
        other_runs(wl, env)
    for line in OTHER_LINES:
        print(line)


OTHER_LINES = []


def other_runs(wl, env):
    OUT.lines = OTHER_LINES
    try:
        full_disk(wl, env)
        restart(wl, env)
        out_dir(wl, env)
        names(env)
        otlp(wl, env)
    except Exception:  # said, not lost with the thread
        check("the runs beside the first ended without an error", False, traceback.format_exc())


def run_faults(rdir, a, log, spool, sampling):
    """sampling() is called once the agent delivers windows."""
    wait(lambda: len(accepted(rdir)) >= 2 or a.poll() is not None, "two windows delivered")
    if a.poll() is not None and "perf_event_paranoid" in open(log).read():
        print("SKIP: the kernel refuses perf_event_open:\n" + open(log).read())
        sys.exit(77)
    if not check("two windows delivered", len(accepted(rdir)) >= 2, open(log).read()[-2000:]):
        return
    sampling()
    check("the test hook on the uploader's clock is said in the log",
          "DWARFSAMPLE_TEST_UPLOAD_CLOCK_RATE=%d: a test hook" % CLOCK_RATE in open(log).read())
    # Each fault hits the request the agent sends after the control file
    # changes; one already on the way may be taken first.
    # Three 500s: each window that got one goes behind the others and is
    # then taken, once.
    n = last_n(rdir)
    control(rdir, {"fail": 3, "status": 500})
    wait(lambda: len(after_all(rdir, n, "failed")) >= 3, "three 500s")
    fails = after_all(rdir, n, "failed")
    check("three 500s, then each window that got one is taken once",
          len(fails) == 3 and wait(lambda: all(len(same_body(rdir, f)) == 1 for f in fails),
                                   "the windows after three 500s"),
          [(f["n"], len(same_body(rdir, f))) for f in fails])
    # A 429 with Retry-After: 3 is honoured: 3 s of the uploader's clock
    # (the backoff after one failure would be 0.5 to 1 s of it).
    n = last_n(rdir)
    control(rdir, {"fail": 1, "status": 429, "retry_after": "3"})
    if wait(lambda: after(rdir, n, "failed") is not None, "a 429"):
        t429 = after(rdir, n, "failed")
        wait(lambda: taken(rdir, n, t429) is not None, "the window after a 429")
        nxt = [e for e in entries(rdir) if e["n"] > t429["n"]][0]
        waited = (nxt["time"] - t429["time"]) * CLOCK_RATE
        check("after a 429 with Retry-After: 3 the next try waits 3 s of the uploader's clock"
              " (%.2f s)" % waited, waited >= 2.9)
    # A connection cut mid-body.
    n = last_n(rdir)
    control(rdir, {"cut": 1})
    check("a window cut mid-body is sent again and taken",
          wait(lambda: after(rdir, n, "cut") is not None, "a cut")
          and wait(lambda: taken(rdir, n, after(rdir, n, "cut")) is not None,
                   "the window after a cut"))
    # A backend that reads a request 4 s late, past the 2 s timeout but
    # within the 8 s its answer is awaited once it is sent whole: taken,
    # and not sent again (Pyroscope would count it twice).
    n = last_n(rdir)
    control(rdir, {"stall": 4})
    ok = wait(lambda: after_stalled(rdir, n) is not None, "a stalled request")
    st = after_stalled(rdir, n)
    ok = ok and wait(lambda: len(after_all(rdir, st["n"], "accepted")) >= 3,
                     "three windows after the stalled one")
    check("a request answered 4 s late (timeout 2 s) is awaited and taken once",
          ok and st["outcome"] == "accepted" and not st["client_gone"]
          and len(same_body(rdir, st)) == 1, st)
    # One read 10 s late: past the 8 s its answer is awaited.  The backend
    # counts it (as Pyroscope would); the agent, which cannot know that,
    # does not send it again but counts it as unconfirmed.
    n = last_n(rdir)
    control(rdir, {"stall": 10})
    ok = wait(lambda: after_stalled(rdir, n) is not None, "a request stalled 10 s")
    st = after_stalled(rdir, n)
    ok = ok and wait(lambda: len(after_all(rdir, st["n"], "accepted")) >= 3,
                     "three windows after the one stalled 10 s")
    check("a request answered 10 s late is taken once by the backend, not sent again, and "
          "counted unconfirmed",
          ok and st["outcome"] == "accepted" and st["client_gone"]
          and len(same_body(rdir, st)) == 1 and "did not confirm it" in open(log).read(),
          (st, open(log).read()[-1500:]))
    # A window the backend answers 500 every time: it goes behind the
    # others (the windows after it are delivered), and is given up after
    # ten tries.
    n = last_n(rdir)
    control(rdir, {"poison": 1})
    wait(lambda: "with a fault 10 times: given up" in open(log).read(),
         "the poisoned window given up")
    bad = [e for e in entries(rdir) if e["n"] > n and e.get("poisoned")]
    between = [e for e in after_all(rdir, n, "accepted") if bad and e["n"] < bad[-1]["n"]]
    check("a window answered 500 ten times is given up (%d tries), the windows after it "
          "delivered meanwhile (%d)" % (len(bad), len(between)),
          len(bad) == 10 and len({e["digest"] for e in bad}) == 1 and len(between) >= 2
          and "answered a window with a fault 10 times: given up" in open(log).read())
    # A 400: logged with the server's words, not tried again.
    n = last_n(rdir)
    control(rdir, {"fail": 1, "status": 400})
    if wait(lambda: after(rdir, n, "failed") is not None, "a 400"):
        bad = after(rdir, n, "failed")
        nxt = lambda: after(rdir, bad["n"], "accepted")
        wait(lambda: nxt() is not None, "a window after a 400")
        check("a 400 is not retried: the next request is the next window",
              nxt().get("from") == bad.get("until") is not None
              and taken(rdir, n, bad) is None, (bad.get("until"), nxt().get("from")))
        check("a 400 is logged with the server's message",
              "refused a window with HTTP 400: injected failure" in open(log).read())
    # Down 32 s of the uploader's clock or more: windows wait in the spool
    # and come in order when it is back.  Of the windows cut while it was
    # down (one a second, four or more), two thirds must wait in the spool
    # while it is still down (counted then: once it is back, the uploader
    # may empty the spool before this test looks, on a busy machine), and
    # five sixths arrive after it.
    n = last_n(rdir)
    down_from = time.time()
    control(rdir, {"down_until": down_from + 3600})
    pdir = os.path.join(spool, "pyroscope")

    def in_spool():
        return len([f for f in os.listdir(pdir) if f.endswith(".req")])
    wait(lambda: time.time() > down_from + DOWN_S and in_spool() >= DOWN_S * 2 // 3,
         "the outage, and windows in the spool", 60)
    spooled = in_spool()
    control(rdir, {})
    check("windows waited in the spool while the backend was down (%d)" % spooled,
          spooled >= DOWN_S * 2 // 3)
    check("every spooled window is delivered once the backend is back",
          wait(lambda: not in_spool(), "the spool to empty", 120))
    late = [e for e in accepted(rdir) if e["n"] > n]
    check("the windows of the outage arrive after it (%d)" % len(late),
          len(late) >= DOWN_S * 5 // 6)
    tries = re.findall(r"Pyroscope: try (\d+) failed", open(log).read())
    say("# the uploader tried %s times while the backend was down" % (tries[-1] if tries else 1))
    # SIGTERM flushes the window being filled.  The 400 above was a window
    # refused: the exit status says so, and the last line counts it.
    before = len(accepted(rdir))
    a.send_signal(signal.SIGTERM)
    rc = a.wait(60)
    c = stopped_counts(log)
    # (A request in flight when the outage began may be unconfirmed too.)
    unconfirmed = open(log).read().count("did not confirm it")
    check("SIGTERM after a window was refused and one given up: exit status 1, '1 refused', "
          "'1 given up' and %d unconfirmed in the last line" % unconfirmed,
          rc == 1 and c and c[2] == 1 and c[5] == 1 and c[6] == unconfirmed >= 1,
          (rc, c, open(log).read()[-2000:]))
    check("SIGTERM flushed the last window", len(accepted(rdir)) > before)
    # Each window that waited for the backend is counted once as spooled
    # (not once per outage): at least those that arrived after the outage.
    sp = re.findall(r"health: .* (\d+) spooled", open(log).read())
    check("the health line's 'spooled' counts windows: %s >= %d" % (sp[-1:], len(late)),
          sp and int(sp[-1]) >= len(late), sp)


def check_windows(rdir, log, wl):
    st = stopped_line(log)
    check("the agent says how many windows it cut", st is not None, open(log).read()[-2000:])
    if not st:
        return
    windows, profiles, lost = st
    es = entries(rdir)
    got = [e for e in es if e["outcome"] == "accepted"]
    refused = [e for e in es if e["outcome"] == "failed" and e.get("status") == 400]
    # The poisoned window, given up: once.
    given = list({e["digest"]: e for e in es if e.get("poisoned")}.values())
    froms = [e["from"] for e in got]
    check("every window arrived once: %d taken + %d refused + %d given up = %d profiles, 0 lost"
          % (len(got), len(refused), len(given), profiles),
          len(got) + len(refused) + len(given) == profiles and lost == 0
          and len(set(froms)) == len(froms))
    # A window answered 500 goes behind the others; the rest keep their
    # order (a stalled one is logged when the receiver reads it, late).
    faulted = {e["digest"] for e in es if e["outcome"] == "failed" and e.get("status") == 500}
    kept = [e["from"] for e in got
            if e["digest"] not in faulted and "stalled" not in e]
    check("windows arrived in order, but those answered 500 (%d) or read late" % len(faulted),
          kept == sorted(kept) and len(kept) < len(froms),
          [(a, b) for a, b in zip(kept, kept[1:]) if a > b])
    allw = sorted((e["from"], e["until"])
                  for e in got + refused + given)
    gaps = [(a, b) for a, b in zip(allw, allw[1:]) if a[1] != b[0]]
    check("the windows tile the run: each one's until is the next one's from", not gaps, gaps[:5])
    check("1 s windows", all(u - f == 1 for f, u in allw[1:-1]), allw[:5])
    host = socket.gethostname()
    agent_push.check_cpu_windows(check, got, {"service_name": "wl-svc", "env": "test",
                                              "host_name": host, "odd": ODD_TAG})
    h = got[0]["headers"]
    check("the push is a connect call: Content-Type application/proto",
          h.get("content-type") == "application/proto", h)
    want = "Basic " + base64.b64encode(("agent-user:" + PASSWORD).encode()).decode()
    check("basic auth and the tenant header from the environment",
          h.get("authorization") == want and h.get("x-scope-orgid") == "team-a", h)
    check("the password is never in the log", PASSWORD not in open(log).read())
    q = re.findall(r"health: \d+ samples.* (\d+) MiB waiting to be unwound \(at most (\d+)\)",
                   open(log).read())
    check("a health line is logged, with what waits for the worker and the most that did, "
          "within the agent's bound (%s)" % q[-1:],
          q and all(int(n) <= int(m) <= 256 for n, m in q), q[-3:])
    # The bodies, read by go tool pprof.
    body = os.path.join(rdir, got[len(got) // 2]["body"])
    raw = subprocess.run(["go", "tool", "pprof", "-raw", body], capture_output=True, text=True)
    check("go tool pprof reads a window's profile", raw.returncode == 0, raw.stderr)
    out = raw.stdout
    check("its sample types are samples/count and cpu/nanoseconds",
          "samples/count cpu/nanoseconds" in out, out[:500])
    check("its period is 1e9/49 ns", "Period: 20408163" in out, out[:300])
    check("its duration is the window's", "Duration: 1s" in out or "Duration: 1.0" in out, out[:300])
    check("the inlined function, its line, inside the function it was inlined into",
          re.search(r"mix \S*agent-wl\.c:\d+.*\n\s+agent_hot \S*agent-wl\.c:\d+", out) is not None,
          out[out.find("Locations"):][:1500])
    # Changed by issue 28: the thread's name is no longer a string label,
    # which Pyroscope would make a series label of.
    check("samples are labelled with their pid and tid, numbers, and no thread name",
          re.search(r"pid:\[\d+\] tid:\[\d+\]", out) and "thread:" not in out
          and "process:" not in out, out[:800])
    check("no series label per thread or process: %s" % got[0].get("series_labels"),
          not {"thread", "process", "tid"} & {k for e in got for k in e["series_labels"]})


# A spool on a full disk: a tmpfs of 16 KiB, filled, mounted in a mount
# namespace of the agent's own (so nothing outlives it).
FULL_DISK = r"""
mount -t tmpfs -o size=16k tmpfs "$1" || exit 77
head -c 65536 /dev/zero >"$1/fill" 2>/dev/null
mkdir -p "$1/pyroscope"
if echo x >"$1/pyroscope/probe" 2>/dev/null; then exit 77; fi
shift
exec "$@"
"""


def full_disk(wl, env):
    """Windows are sent first and spooled only when the backend does not
    take them: with the spool's disk full, every window reaches a backend
    that is up, none lost; those it could not take while it was down (its
    first 2.5 s) wait in memory, and are delivered when it is back."""
    rdir = os.path.join(TMP, "recv-full")
    recv, port = start_receiver(rdir)
    control(rdir, {"down_until": time.time() + 2.5})
    spool = os.path.join(TMP, "spool-full")
    os.makedirs(spool)
    work = subprocess.Popen([wl, "600"])
    log = os.path.join(TMP, "agent-full.log")
    a = agent(["-p", str(work.pid), "--pyroscope", "http://127.0.0.1:%d" % port,
               "--interval", "1s", "-d", "3", "--spool-dir", spool, "--health-interval", "0"],
              log, env, wrap=["unshare", "-m", "sh", "-c", FULL_DISK, "sh", spool])
    rc = a.wait(120)
    for p in (work, recv):
        p.kill()
        p.wait()
    if rc == 77:
        say("# full disk: no tmpfs could be mounted here (not root?); skipped")
        return
    st = stopped_line(log)
    got = accepted(rdir)
    text = open(log).read()
    check("spool on a full disk: exit 0, every window taken (%d of %s), 0 lost"
          % (len(got), st and st[1]), rc == 0 and st and got and len(got) == st[1]
          and st[2] == 0, text[-1500:])
    check("spool on a full disk, backend down: windows waited in memory",
          "cannot be written (No space left on device): windows wait in memory" in text,
          text[-1500:])


def restart(wl, env):
    """A backend down for a whole run: the spool keeps what fits, the next
    run delivers it first."""
    rdir2 = os.path.join(TMP, "recv2")
    recv2, port2 = start_receiver(rdir2)
    control(rdir2, {"down_until": time.time() + 3600})
    spool = os.path.join(TMP, "spool2")
    work = subprocess.Popen([wl, "600"])
    log1 = os.path.join(TMP, "agent-r1.log")
    a = agent(["-p", str(work.pid), "--pyroscope", "http://127.0.0.1:%d" % port2,
               "--interval", "1s", "--spool-dir", spool, "--spool-size", "3K",
               "--flush-timeout", "1s", "--health-interval", "0"], log1, env)
    pdir = os.path.join(spool, "pyroscope")
    # Windows of this workload are about 700 bytes: a few fill 3 KiB.
    wait(lambda: "is full (--spool-size)" in open(log1).read(), "the spool to fill")
    a.send_signal(signal.SIGTERM)
    rc = a.wait(60)
    text = open(log1).read()
    check("down for a whole run: exit 0, and the log says the windows wait",
          rc == 0 and "the next start delivers them" in text, text[-1500:])
    m = re.findall(r"health: .* (\d+) dropped", text)
    size = sum(os.path.getsize(os.path.join(pdir, f)) for f in os.listdir(pdir))
    kept = sorted(f for f in os.listdir(pdir) if f.endswith(".req"))
    check("the spool kept at most --spool-size (%d bytes in %d files) and dropped the oldest (%s)"
          % (size, len(kept), m[-1] if m else "?"),
          (size <= 3072 or len(kept) == 1) and m and int(m[-1]) > 0)
    control(rdir2, {})
    # This run logs to a file, which logrotate moves away: SIGHUP opens it
    # again.
    log2 = os.path.join(TMP, "agent-r2.log")
    a = agent(["-p", str(work.pid), "--pyroscope", "http://127.0.0.1:%d" % port2,
               "--interval", "1s", "--spool-dir", spool, "-d", "4",
               "--health-interval", "0", "--log-file", log2],
              os.path.join(TMP, "agent-r2.stderr"), env)
    wait(lambda: os.path.exists(log2) and "sampling" in open(log2).read(), "the log file")
    os.rename(log2, log2 + ".1")
    a.send_signal(signal.SIGHUP)
    rc = a.wait(120)
    text = open(log2 + ".1").read()
    check("SIGHUP reopens --log-file after it was moved",
          os.path.exists(log2) and "log file reopened" in open(log2).read()
          and "stopped:" in open(log2).read(), text[-500:])
    got = accepted(rdir2)
    froms = [e["from"] for e in got]
    check("the next run delivered the %d spooled windows first, then its own, in order"
          % len(kept), rc == 0 and len(got) > len(kept) and froms == sorted(froms)
          and "left by an earlier run" in text, (rc, froms, text[-800:]))
    # A backend that holds a request 60 s: SIGTERM is answered within
    # --flush-timeout (2 s), not the 40 s the answer would be awaited
    # (4 x --timeout 10s); that request is unconfirmed, not sent again.
    control(rdir2, {"stall": 60})
    log3 = os.path.join(TMP, "agent-r3.log")
    a = agent(["-p", str(work.pid), "--pyroscope", "http://127.0.0.1:%d" % port2,
               "--interval", "1s", "--spool-dir", spool, "--timeout", "10s",
               "--flush-timeout", "2s", "--health-interval", "0"], log3, env)
    held = wait(lambda: any(e["outcome"] == "stalling" for e in entries(rdir2)),
                "a request held by the backend")
    t0 = time.time()
    a.send_signal(signal.SIGTERM)
    rc = a.wait(60)
    took = time.time() - t0
    c = stopped_counts(log3)
    check("SIGTERM with a request held by the backend: exit 0 within the 2 s grace (%.1f s), "
          "that request unconfirmed" % took,
          held and rc == 0 and took < 5 and c and c[6] == 1
          and "the close's grace ended" in open(log3).read(), (rc, c, open(log3).read()[-1500:]))
    work.kill()
    work.wait()
    recv2.kill()
    recv2.wait()


# The agent's wall clock an hour behind the kernel's, which stamps the files
# it writes: what a filesystem with fine-grained timestamps (Linux 6.13) does
# for a split second, and a network filesystem with its server's clock.
CLOCK_BEHIND = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <sys/time.h>
#include <time.h>
#define BEHIND 3600
int clock_gettime(clockid_t c, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	int r;
	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	r = real(c, ts);
	if (!r && (c == CLOCK_REALTIME || c == CLOCK_REALTIME_COARSE))
		ts->tv_sec -= BEHIND;
	return r;
}
time_t time(time_t *t)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
int gettimeofday(struct timeval *tv, void *tz)
{
	struct timespec ts;
	(void)tz;
	clock_gettime(CLOCK_REALTIME, &ts);
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}
"""


def clock_behind_env(env):
    """env with the agent's wall clock an hour behind.  A sanitizer's
    runtime must come first among preloaded libraries."""
    src = os.path.join(TMP, "clock-behind.c")
    lib = os.path.join(TMP, "clock-behind.so")
    with open(src, "w") as f:
        f.write(CLOCK_BEHIND)
    subprocess.check_call(["cc", "-shared", "-fPIC", "-O2", "-o", lib, src, "-ldl"])
    pre = [lib]
    ldd = subprocess.run(["ldd", DS], capture_output=True, text=True).stdout
    for m in re.finditer(r"(lib[at]san\.so\S*) => (\S+)", ldd):
        pre.insert(0, m.group(2))
    return dict(env, LD_PRELOAD=":".join(pre))


def out_dir(wl, env):
    """--out-dir keeps its files within --out-dir-age and --out-dir-size,
    and an agent whose clock is behind the files' stamps keeps its windows:
    a file from ahead of the clock is new, not old."""
    d = os.path.join(TMP, "outdir")
    os.makedirs(d)
    now = time.time()
    for name in ("old.pb.gz", "notes.txt"):
        with open(os.path.join(d, name), "wb") as f:
            f.write(b"x" * 100)
        os.utime(os.path.join(d, name), (now - 7200, now - 7200))
    work = subprocess.Popen([wl, "600"])
    log = os.path.join(TMP, "agent-dir.log")

    def windows():
        return sorted(f for f in os.listdir(d) if f.startswith("wl-dir-"))

    def run(extra, env):
        a = agent(["-p", str(work.pid), "--out-dir", d, "--service", "wl-dir",
                   "--interval", "1s", "--health-interval", "0"] + extra, log, env)
        seen, before = set(), set(windows())

        def three():
            seen.update(windows())
            return len(seen - before) >= 3 or a.poll() is not None
        wait(three, "three windows in --out-dir")
        a.send_signal(signal.SIGTERM)
        return a.wait(60)

    try:
        out_dir_runs(d, run, windows, log, env)
    finally:
        work.kill()
        work.wait()


def out_dir_runs(d, run, windows, log, env):
    rc = run(["--out-dir-age", "30m"], clock_behind_env(env))
    left = set(os.listdir(d))
    check("--out-dir-age 30m, the agent's clock 1 h behind the files': exit 0, the window"
          " older by its clock went, other files stayed",
          rc == 0 and "old.pb.gz" not in left and "notes.txt" in left,
          (rc, sorted(left), open(log).read()[-800:]))
    check("--out-dir: windows stamped ahead of the agent's clock are not old: all stay (%d)"
          % len(windows()), len(windows()) >= 3, (sorted(left), open(log).read()[-800:]))
    if not windows():
        return
    raw = subprocess.run(["go", "tool", "pprof", "-raw", os.path.join(d, windows()[-1])],
                         capture_output=True, text=True)
    check("go tool pprof reads a window of --out-dir, with the workload in it",
          raw.returncode == 0 and "agent_hot" in raw.stdout, raw.stderr[-500:])
    rc = run(["--out-dir-size", "2K"], env)
    gz = [f for f in os.listdir(d) if f.endswith(".pb.gz")]
    size = sum(os.path.getsize(os.path.join(d, f)) for f in gz)
    newest = max(windows(), key=lambda f: os.path.getmtime(os.path.join(d, f)), default=None)
    last = newest and int(newest.rsplit("-", 1)[1].split(".")[0])
    check("--out-dir-size 2K: exit 0, at most 2 KiB kept (%d bytes in %d files), the newest"
          " window among them" % (size, len(gz)),
          rc == 0 and (size <= 2048 or len(gz) == 1) and last is not None and last >= 2,
          (rc, sorted(gz)))


# Burns CPU, faults pages and sleeps a little (every kind of window has
# samples); "bad" names its thread with bytes that are not UTF-8, "memfd"
# runs a copy of itself from a memfd as its child and prints its pid.
NAMES_WL = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
__attribute__((noinline)) static unsigned long names_hot(unsigned long x)
{
	char *m = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (int i = 0; i < 1 << 16; i += 4096)
		m[i] = (char)x;
	munmap(m, 1 << 16);
	for (int i = 0; i < 20000; i++)
		x = x * 6364136223846793005ul + 1;
	return x;
}
int main(int argc, char **argv)
{
	time_t end = time(NULL) + atoi(argv[1]);
	volatile unsigned long sink = 0;
	if (argc > 2 && !strcmp(argv[2], "bad"))
		prctl(PR_SET_NAME, "g+\xff\xfe\xc3(x");
	if (argc > 2 && !strcmp(argv[2], "memfd")) {
		int in = open("/proc/self/exe", O_RDONLY), fd = memfd_create("sealed-7f3a", 0);
		struct stat st;
		pid_t pid;
		fstat(in, &st);
		sendfile(fd, in, NULL, (size_t)st.st_size);
		if (!(pid = fork())) {
			char *args[] = { argv[0], argv[1], NULL };
			fexecve(fd, args, (char *[]){ NULL });
			_exit(127);
		}
		printf("%d\n", (int)pid);
		fflush(stdout);
	}
	while (time(NULL) < end) {
		sink = names_hot(sink);
		usleep(200);
	}
	return 0;
}
"""


def names(env):
    """Names and labels the strict receiver takes, four agents at once."""
    src = os.path.join(TMP, "names-wl.c")
    wl = os.path.join(TMP, "names-wl")
    with open(src, "w") as f:
        f.write(NAMES_WL)
    subprocess.check_call(["cc", "-O2", "-g", "-o", wl, src])
    gpp = os.path.join(TMP, "g++")
    shutil.copy(wl, gpp)
    rdir = os.path.join(TMP, "recv-names")
    recv, port = start_receiver(rdir)
    bad = subprocess.Popen([gpp, "30", "bad"])
    parent = subprocess.Popen([wl, "30", "memfd"], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    pids = "%d,%d,%d" % (bad.pid, parent.pid, child)
    url = "http://127.0.0.1:%d" % port
    runs = {
        "process": ["--group-by", "process", "-e", "page-faults", "-c", "4"],
        "offcpu": ["--off-cpu"],
        "wall": ["--wall"],
        "host": ["--group-by", "host", "--otlp", url],
    }
    agents = {}
    for name, extra in runs.items():
        log = os.path.join(TMP, "agent-names-%s.log" % name)
        agents[name] = (agent(["-p", pids, "--pyroscope", url, "--interval", "1s", "-d", "3",
                               "--tag", "run=" + name, "--health-interval", "0",
                               "--spool-dir", os.path.join(TMP, "spool-names-" + name)]
                              + extra, log, env), log)
    rcs = {name: a.wait(60) for name, (a, log) in agents.items()}
    for p in (bad, parent, recv):
        p.kill()
        p.wait()
    subprocess.run(["kill", str(child)])
    es = entries(rdir)
    refused = [e for e in es if e["outcome"] == "refused"]
    check("names: the strict receiver refused nothing (%d requests)" % len(es),
          not refused and es, [(e.get("why"), e.get("service")) for e in refused][:5])
    got = {}
    for e in accepted(rdir):
        if e["path"] == "/push.v1.PusherService/Push":
            got.setdefault(e["series"][0]["labels"]["run"], []).append(e)
    for name, (a, log) in agents.items():
        text = open(log).read()
        if name != "process" and rcs[name] and "perf_event_paranoid" in text:
            say("# names: --%s is not allowed here, skipped:\n%s" % (name, text[-300:]))
            continue
        check("names: the %s run exits 0 and every window is taken (%d)"
              % (name, len(got.get(name, []))), rcs[name] == 0 and got.get(name), text[-1000:])

    def service(e):
        return e["service"]

    def of_pid(pid):
        return {service(e) for e in got.get("process", [])
                if e["series"][0]["labels"].get("pid") == str(pid)}
    check("names: the executable g++ is the service g__", of_pid(bad.pid) == {"g__"},
          of_pid(bad.pid))
    check("names: the program run from a memfd is named by its parent, names-wl",
          of_pid(child) == {"names-wl"}, of_pid(child))
    agent_push.check_kinds(check, got)
    labels = {k for es in got.values() for e in es for k in e.get("series_labels", [])}
    check("names: no series label per thread or process (%s)" % sorted(labels),
          not {"thread", "process", "tid"} & labels)
    host = re.sub(r"[^A-Za-z0-9_./-]", "_", socket.gethostname())
    check("names: --group-by host: one service, the host's name",
          {service(e) for e in got.get("host", [])} == {host})
    otlps = [e for e in accepted(rdir) if e["path"] == "/v1development/profiles"]
    if check("names: OTLP requests taken (%d)" % len(otlps), otlps):
        # Every window's: the last one, cut short by the end of the run,
        # may hold no sample of that thread.
        seen = []
        for e in otlps:
            dec = subprocess.run(["protoc", "-I", PROTOS, "--decode",
                                  "opentelemetry.proto.collector.profiles.v1development."
                                  "ExportProfilesServiceRequest", "otlp_profiles_service.proto"],
                                 stdin=open(os.path.join(rdir, e["body"]), "rb"),
                                 capture_output=True, text=True)
            seen += re.findall(r'string_value: "g.*', dec.stdout)
        good = [n for n in seen if re.match(r'string_value: "g\+(\\357\\277\\275|\ufffd){2}', n)]
        check("names: the thread name's bad bytes are U+FFFD in OTLP (%d such names in %d windows)"
              % (len(good), len(otlps)), good, seen[:3])


def locations_lines(text):
    """For each location_table entry of protoc's text, its number of lines."""
    counts, n, inside = [], 0, False
    for line in text.splitlines():
        if line == "  location_table {":
            inside, n = True, 0
        elif inside and line == "    lines {":
            n += 1
        elif inside and line == "  }":
            counts.append(n)
            inside = False
    return counts


def otlp(wl, env):
    rdir = os.path.join(TMP, "recv3")
    recv, port = start_receiver(rdir)
    work = subprocess.Popen([wl, "600"])
    log = os.path.join(TMP, "agent-otlp.log")
    env = dict(env, DWARFSAMPLE_OTLP_HEADERS="Authorization=Bearer tok-4471,X-Team=perf")
    a = agent(["-p", str(work.pid), "--otlp", "http://127.0.0.1:%d" % port, "--interval", "1s",
               "-d", "3", "--tag", "env=test", "--spool-dir", os.path.join(TMP, "spool3"),
               "--health-interval", "0"], log, env)
    rc = a.wait(120)
    work.kill()
    work.wait()
    recv.kill()
    recv.wait()
    text = open(log).read()
    st = stopped_line(log)
    got = accepted(rdir)
    check("OTLP: every window taken (%d of %s)" % (len(got), st and st[1]),
          rc == 0 and st and len(got) == st[1] and got, text[-1000:])
    if not got:
        return
    h = got[0]["headers"]
    check("OTLP: the headers of DWARFSAMPLE_OTLP_HEADERS, never in the log",
          h.get("authorization") == "Bearer tok-4471" and h.get("x-team") == "perf"
          and "tok-4471" not in text, h)
    check("OTLP: protobuf, gzipped", h.get("content-type") == "application/x-protobuf"
          and h.get("content-encoding") == "gzip", h)
    body = os.path.join(rdir, got[len(got) // 2]["body"])
    dec = subprocess.run(["protoc", "-I", PROTOS, "--decode",
                          "opentelemetry.proto.collector.profiles.v1development."
                          "ExportProfilesServiceRequest", "otlp_profiles_service.proto"],
                         stdin=open(body, "rb"), capture_output=True, text=True)
    check("OTLP: protoc decodes the request with the specification's messages",
          dec.returncode == 0, dec.stderr)
    out = dec.stdout
    check("OTLP: the resource says service.name, host.name and process.pid",
          re.search(r'key: "service.name"\s*value \{\s*string_value: "agent-wl"', out)
          and re.search(r'key: "host.name"', out)
          and re.search(r'key: "process.pid"\s*value \{\s*int_value: %d' % work.pid, out),
          out[:1500])
    check("OTLP: a profile per value type, cpu/nanoseconds and samples/count",
          out.count("\n    profiles {") == 2, out[:3000])
    check("OTLP: the workload's functions are named",
          'string_table: "agent_hot"' in out and 'string_table: "mix"' in out)
    check("OTLP: the inlined function is a second line of its location",
          2 in locations_lines(out), locations_lines(out))
    check("OTLP: samples carry thread.name and the tag",
          'string_value: "agent-wl"' in out and 'string_table: "thread.name"' in out
          and 'string_table: "env"' in out)


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    sys.exit(FAIL[0])
