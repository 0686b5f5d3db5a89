#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>
static volatile uint64_t sink;
int main(int argc, char **argv) {
  using clk = std::chrono::steady_clock;
  auto end = clk::now() + std::chrono::duration<double>(argc > 1 ? atof(argv[1]) : 5);
  uint64_t s = 1;
  while (clk::now() < end) {
    std::vector<uint64_t> v(50000);
    for (auto &x : v) x = (s = s * 6364136223846793005ull + 1442695040888963407ull) >> 17;
    std::sort(v.begin(), v.end());
    std::map<std::string, uint64_t> m;
    for (size_t i = 0; i < 20000; i++) m[std::to_string(v[i] % 7919)] += i;
    for (auto it = m.begin(); it != m.end();) it = (it->second & 1) ? m.erase(it) : std::next(it);
    sink += m.size() + v[v.size() / 2];
  }
}
