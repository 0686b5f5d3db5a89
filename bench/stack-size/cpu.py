import sys, time
# CPU-bound pure Python: recursion, dicts, sorting, classes
class Node:
    __slots__ = ("k", "l", "r")
    def __init__(s, k): s.k = k; s.l = None; s.r = None
def insert(n, k):
    if n is None: return Node(k)
    if k < n.k: n.l = insert(n.l, k)
    else: n.r = insert(n.r, k)
    return n
def depth(n): return 0 if n is None else 1 + max(depth(n.l), depth(n.r))
def fib(n): return n if n < 2 else fib(n-1) + fib(n-2)
end = time.time() + float(sys.argv[1])
x = 1
while time.time() < end:
    root = None
    for i in range(3000):
        x = (x * 1103515245 + 12345) % 2147483648
        root = insert(root, x)
    d = depth(root)
    fib(18)
    words = {}
    for i in range(20000):
        w = str((i * 7919) % 1000)
        words[w] = words.get(w, 0) + 1
    sorted(words.items(), key=lambda kv: (-kv[1], kv[0]))
