// SPDX-License-Identifier: Apache-2.0
//
// bench-live-churn: a busy C++ program for bench-live.  Each thread churns
// std::map<std::string, ...>, std::unordered_map and std::sort over
// strings, reached through a template recursion whose path depends on the
// data, so that samples fall on many distinct stacks through libstdc++'s
// templates (hundreds, as a real C++ service's would) and the profiler's
// tables have something to grow on.  -O2 -g, frame pointers omitted.
//
// usage: bench-live-churn [-d SECONDS | -r ROUNDS] [-t THREADS] [-w]
//   -d  run this long (default 10 s)
//   -r  do this fixed amount of work per thread instead, then print the
//       time it took on standard output
//   -t  threads (default 2)
//   -w  wait for a byte on standard input before starting the clock
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <unistd.h>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace {

std::uint64_t volatile sink;

struct Ctx {
	std::uint64_t seed;
	std::map<std::string, std::uint64_t> ordered;
	std::unordered_map<std::string, std::uint64_t> hashed;
	std::vector<std::string> words;

	std::uint64_t next()
	{
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		return seed >> 17;
	}
	std::string word()
	{
		std::uint64_t v = next();
		std::string s = "w";

		for (int i = 0; i < 6 + static_cast<int>(v % 10); i++, v >>= 5)
			s += static_cast<char>('a' + (v % 26));
		return s;
	}
};

template <int Kind> struct Leaf;

template <> struct Leaf<0> {
	NOINLINE static void run(Ctx &c)
	{
		for (int i = 0; i < 200; i++) {
			auto it = c.ordered.emplace(c.word(), 0).first;
			it->second += c.next();
		}
		while (c.ordered.size() > 4000)
			c.ordered.erase(c.ordered.begin());
	}
};

template <> struct Leaf<1> {
	NOINLINE static void run(Ctx &c)
	{
		c.words.clear();
		for (int i = 0; i < 300; i++)
			c.words.push_back(c.word());
		std::sort(c.words.begin(), c.words.end());
		std::stable_sort(c.words.begin(), c.words.end(),
				 [](const std::string &a, const std::string &b) {
					 return a.size() < b.size();
				 });
		sink = sink + c.words.front().size();
	}
};

template <> struct Leaf<2> {
	NOINLINE static void run(Ctx &c)
	{
		for (int i = 0; i < 300; i++)
			c.hashed[c.word()] += c.next();
		if (c.hashed.size() > 8000)
			c.hashed.clear();
	}
};

// 2^Depth paths from the root to each leaf kind, chosen by the data.
template <int Depth, int Branch> struct Level {
	NOINLINE static void run(Ctx &c)
	{
		if (c.next() & 1)
			Level<Depth - 1, 0>::run(c);
		else
			Level<Depth - 1, 1>::run(c);
		sink = sink + 1;
	}
};

template <int Branch> struct Level<0, Branch> {
	NOINLINE static void run(Ctx &c)
	{
		switch (c.next() % 3) {
		case 0: Leaf<0>::run(c); break;
		case 1: Leaf<1>::run(c); break;
		default: Leaf<2>::run(c); break;
		}
		sink = sink + 1;
	}
};

double now()
{
	using namespace std::chrono;
	return duration<double>(steady_clock::now().time_since_epoch()).count();
}

NOINLINE void worker(unsigned id, double deadline, long rounds)
{
	Ctx c{ id + 1u, {}, {}, {} };

	for (long r = 0; rounds ? r < rounds : now() < deadline; r++)
		Level<7, 0>::run(c);
}

} // namespace

int main(int argc, char **argv)
{
	double seconds = 10;
	long rounds = 0;
	int threads = 2, opt;
	bool wait_start = false;

	while ((opt = getopt(argc, argv, "d:r:t:w")) != -1) {
		if (opt == 'd')
			seconds = std::atof(optarg);
		else if (opt == 'r')
			rounds = std::atol(optarg);
		else if (opt == 't')
			threads = std::atoi(optarg);
		else if (opt == 'w')
			wait_start = true;
		else
			return 2;
	}
	if (threads < 1 || threads > 64 || seconds <= 0 || rounds < 0) {
		std::fprintf(stderr, "usage: bench-live-churn [-d SECONDS | -r ROUNDS] "
				     "[-t THREADS (1-64)] [-w]\n");
		return 2;
	}
	if (wait_start) {
		char byte;

		if (read(0, &byte, 1) != 1)
			return 1;
	}

	double t0 = now();
	std::vector<std::thread> pool;

	for (int i = 1; i < threads; i++)
		pool.emplace_back(worker, static_cast<unsigned>(i), t0 + seconds, rounds);
	worker(0, t0 + seconds, rounds);
	for (auto &t : pool)
		t.join();
	std::printf("%.6f\n", now() - t0);
	return 0;
}
