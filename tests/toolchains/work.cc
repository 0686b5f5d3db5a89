// SPDX-License-Identifier: Apache-2.0
/*
 * The toolchain matrix's C++ workload: work.c with namespaces, templates
 * and a lambda.  main -> tc::recurse<unsigned long> DEPTH frames deep ->
 * tc::Spinner<unsigned long>::run, which loops for the CPU seconds given,
 * sorting a small array with std::sort and a lambda (out-of-line and
 * inlined template instances of the standard library), calling
 * tc::detail::mix (inlined) and tc_lib_step of the shared library.
 */
#include <algorithm>
#include <array>
#include <cstdlib>
#include <ctime>

#include "tclib.h"

namespace tc {

constexpr int depth = 41;

namespace detail {

inline __attribute__((always_inline)) unsigned long mix(unsigned long x)
{
	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ul;
	return x ^ (x >> 29);
}

} // namespace detail

template <typename T> class Spinner {
public:
	explicit Spinner(double seconds) : seconds_(seconds) {}
	T run();

private:
	double seconds_;
};

/* CPU time, as in work.c, read once per 2000 rounds. */
template <typename T> __attribute__((noinline)) T Spinner<T>::run()
{
	std::clock_t end = std::clock() + (std::clock_t)(seconds_ * CLOCKS_PER_SEC);
	std::array<T, 64> v;
	T x = 1;

	do {
		for (int i = 0; i < 2000; i++) {
			for (T &e : v)
				e = x = tc_lib_step(detail::mix(x));
			std::sort(v.begin(), v.end(),
				  [](T a, T b) { return detail::mix(a) < detail::mix(b); });
			x ^= v[0];
		}
	} while (std::clock() < end);
	return x;
}

volatile unsigned long sink;

/* The store after the call keeps it from being a tail call. */
template <typename T> __attribute__((noinline)) T recurse(int d, Spinner<T> &s)
{
	T r = d > 1 ? recurse(d - 1, s) : s.run();

	sink = r;
	return r ^ (T)d;
}

} // namespace tc

int main(int argc, char **argv)
{
	tc::Spinner<unsigned long> s(argc > 1 ? std::atof(argv[1]) : 1.0);

	tc::recurse(tc::depth, s);
	return 0;
}
