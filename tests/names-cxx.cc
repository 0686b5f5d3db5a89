// SPDX-License-Identifier: Apache-2.0
// The C++ workload of test-inline-names.sh: namespaces (named and
// anonymous), a member of a class template, std::sort with a lambda (so
// std::__introsort_loop, std::__unguarded_partition and the lambda's
// operator() run, out of line and inlined), a function out of line in an
// anonymous namespace; built by g++ and by clang++.
// usage: names-cxx ROUNDS
#include <algorithm>
#include <cstdlib>
#include <vector>

namespace names {
namespace {

unsigned seed = 1;

int next_value()
{
	seed = seed * 1103515245u + 12345u;
	return static_cast<int>(seed >> 8);
}

} // namespace

template <typename T> struct Sorter {
	std::vector<T> v;
	__attribute__((noinline)) long run(int n);
};

template <typename T> long Sorter<T>::run(int n)
{
	v.resize(static_cast<size_t>(n));
	// Sixteen draws an element: the fill then lasts longer than a
	// sampling period at 999 Hz (about 3 ms a round against 1 ms), so
	// every round has a sample in next_value, whatever the phase of the
	// timer against the rounds.  One draw lasted 0.2 ms, and a capture
	// could miss it in all 90 rounds.
	for (auto &x : v) {
		x = 0;
		for (int k = 0; k < 16; k++)
			x ^= next_value();
	}
	std::sort(v.begin(), v.end(), [](T a, T b) { return (a ^ 0x5a5a) < (b ^ 0x5a5a); });
	return v[static_cast<size_t>(n / 2)];
}

template struct Sorter<int>;

namespace {

// Sorted with a lambda of an anonymous namespace, std::__introsort_loop's
// instance has internal linkage: gcc gives it no linkage name, and its
// DW_AT_name spells the template arguments unlike the demangled symbol.
__attribute__((noinline)) long sort_again(std::vector<int> &v)
{
	std::sort(v.begin(), v.end(), [](int a, int b) { return (a ^ 0x3c3c) < (b ^ 0x3c3c); });
	return v[v.size() / 3];
}

// Out of line, in an anonymous namespace: gcc gives it no linkage name.
template <int N> struct Repeat {
	__attribute__((noinline)) static long run(Sorter<int> &s, int rounds);
};

template <int N> long Repeat<N>::run(Sorter<int> &s, int rounds)
{
	long t = 0;

	for (int i = 0; i < rounds; i++)
		t += s.run(100000 + N) + sort_again(s.v);
	return t;
}

} // namespace

long repeat(Sorter<int> &s, int rounds)
{
	return Repeat<2>::run(s, rounds);
}

} // namespace names

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 40;
	names::Sorter<int> s;

	return names::repeat(s, rounds) == 42;
}
