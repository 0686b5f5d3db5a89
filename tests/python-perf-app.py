# The workload of test-python-perf.sh: pure Python, a fixed number of
# rounds (not a time), each a chain outer -> middle -> fib(22), fib
# recursing 22 deep, so that almost every sample is in that chain; run by
# the main thread, or with "thread" by a thread it starts and joins.
import sys
import threading


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def middle(n):
    return fib(n)


def outer(rounds):
    total = 0
    for _ in range(rounds):
        total += middle(22)
    return total


if sys.argv[2:] == ["thread"]:
    worker = threading.Thread(target=outer, args=(int(sys.argv[1]),))
    worker.start()
    worker.join()
else:
    print(outer(int(sys.argv[1])))
