# The workload of test-python-activate.sh, run by CPython inside the
# Debian 13 root (or Debian 12's python3.11): pure-Python recursion,
# checked, until the file STOP appears (60 s at most).  Before it, by
# MODE: "busy" nothing, "sleep S" time.sleep(S) and how long it took,
# "read" a line read from stdin; "signals" counts the SIGUSR1 it handles,
# printed at the end.  Each step printed as it ends.
import os
import signal
import sys
import time

handled = 0


def count(signum, frame):
    global handled
    handled += 1


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def outer(n):
    return fib(n)


mode, stop = sys.argv[1], sys.argv[2]
if mode == "signals":
    signal.signal(signal.SIGUSR1, count)
print("ready", flush=True)
if mode == "sleep":
    t0 = time.monotonic()
    time.sleep(float(sys.argv[3]))
    print("slept %.3f" % (time.monotonic() - t0), flush=True)
elif mode == "read":
    print("read %r" % sys.stdin.readline(), flush=True)
runs = wrong = 0
end = time.monotonic() + 60
while not os.path.exists(stop) and time.monotonic() < end:
    if outer(16) != 987:
        wrong += 1
    runs += 1
print("done %d runs, %d wrong" % (runs, wrong), flush=True)
if mode == "signals":
    print("handled %d" % handled, flush=True)
