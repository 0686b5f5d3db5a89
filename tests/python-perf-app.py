# The workload of test-python-perf.sh: pure Python, a fixed number of
# rounds (not a time), each a chain outer -> middle -> fib(22), fib
# recursing 22 deep, so that almost every sample is in that chain.
import sys


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


print(outer(int(sys.argv[1])))
