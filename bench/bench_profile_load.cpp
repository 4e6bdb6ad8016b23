// Benchmark (not a test): how long every rank of a job takes to load a
// profile of N hosts (HETCOLL_PROFILE) — parsing the file's text and
// building the model the runtime plans on — and how large the file is:
// version 1 (subnets, classes and the n × n pair matrices the runtime
// skips) and version 2 (the tree: racks of 32 hosts, no matrices).
//   bench_profile_load [hosts ...]   (default: 64 256 1024 10000; version
//                                     1 only up to 4096 hosts)
// Min / median / max of 5 loads per size and version, as JSON lines.
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
  if (sizes.empty()) sizes = {64, 256, 1024, 10000};
  for (int hosts : sizes)
    for (int version : {1, 2}) {
    if (hosts < 1 || (version == 1 && hosts > 4096)) continue;
    const std::string text = profile_to_json(version == 1 ? testing::sample_profile(hosts)
                                                          : testing::sample_network_profile(hosts, 32));
    std::vector<double> secs;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = Clock::now();
      ProfileModel m(parse_profile(text, false), "profile:bench");
      secs.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      if (m.ranks() <= 0) return 1;
    }
    std::sort(secs.begin(), secs.end());
    std::printf("{\"hosts\": %d, \"version\": %d, \"bytes\": %zu, \"load_s\": {\"min\": %.4g, \"median\": %.4g, \"max\": %.4g}}\n",
                hosts, version, text.size(), secs.front(), secs[secs.size() / 2], secs.back());
    }
  return 0;
}
