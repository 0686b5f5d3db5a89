#!/bin/sh
# A large C file for gcc to compile while perf and dwarfsample watch its
# cc1: N functions of loops, switches and arithmetic (deterministic, so
# every run compiles the same thing).
# usage: gen-big-c.sh N > big.c
set -eu
awk -v n="${1:?usage: gen-big-c.sh N}" 'BEGIN {
	seed = 12345
	for (i = 0; i < n; i++) {
		seed = (seed * 1103515245 + 12345) % 2147483648
		k = seed % 97 + 3
		printf "int f%d(int *a, int n) {\n  int s = %d;\n", i, i
		printf "  for (int j = 0; j < n; j++) {\n"
		printf "    switch ((a[j] + j) %% 7) {\n"
		printf "    case 0: s += a[j] * %d; break;\n", k
		printf "    case 1: s ^= a[j] << %d; break;\n", k % 9 + 1
		printf "    case 2: s -= a[(j + %d) %% n]; break;\n", k % 5
		printf "    case 3: if (s > %d) s /= 3; else s *= 2; break;\n", k * 7
		printf "    default: s += j;\n    }\n  }\n"
		if (i > 0)
			printf "  if (s & 1) s += f%d(a, n / 2);\n", (i * 7) % i
		printf "  return s;\n}\n"
	}
}'
