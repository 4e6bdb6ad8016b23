// Benchmark (not a test): how long every rank of a job takes to load a
// profile of N hosts (HETCOLL_PROFILE) — parsing the file's text and
// building the model the runtime plans on — and how large the file is.
//   bench_profile_load [hosts ...]   (default: 64 256 1024)
// Min / median / max of 5 loads per size, as JSON lines.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../tests/support/sample_profile.hpp"
#include "model/profile_model.hpp"

using namespace hetcoll;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {64, 256, 1024};
  for (int hosts : sizes) {
    if (hosts < 1) continue;
    const std::string text = profile_to_json(testing::sample_profile(hosts));
    std::vector<double> secs;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = Clock::now();
      ProfileModel m(parse_profile(text, false), "profile:bench");
      secs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      if (m.ranks() <= 0) return 1;
    }
    std::sort(secs.begin(), secs.end());
    std::printf("{\"hosts\": %d, \"bytes\": %zu, \"load_s\": {\"min\": %.4g, \"median\": %.4g, \"max\": %.4g}}\n", hosts,
                text.size(), secs.front(), secs[secs.size() / 2], secs.back());
  }
  return 0;
}
