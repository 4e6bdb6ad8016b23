// Benchmark (not a test): how long synthesizing packed trees takes, and how
// close their rate comes to the physical bound's, as the hosts grow —
// issue 25 asks under 1 s at 64 hosts and under 10 s at 1024.
//   bench_packing [subnets×hosts ...]   (default: 4x16 16x16 32x16 64x16)
// Each machine: cluster:, one rank a host, 125 MB/s interfaces, uplinks of
// 12.5 MB/s shared both ways. Per machine: the packing alone (rounds ×
// hosts²), the whole packed_bcast schedule (packing, segments, every
// rank's program), the trees kept and their rate against the bound's
// (1 MiB over the bound's bandwidth part).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/bound.hpp"
#include "model/tree_packing.hpp"
#include "plan/build_schedule.hpp"

using namespace hetcoll;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  std::vector<std::pair<int, int>> machines;
  for (int i = 1; i < argc; ++i) {
    int s = 0, h = 0;
    if (std::sscanf(argv[i], "%dx%d", &s, &h) == 2 && s > 0 && h > 0) machines.push_back({s, h});
  }
  if (machines.empty()) machines = {{4, 16}, {16, 16}, {32, 16}, {64, 16}};
  std::printf("[\n");
  for (size_t i = 0; i < machines.size(); ++i) {
    const auto [s, h] = machines[i];
    std::string spec = "cluster:subnets=";
    for (int k = 0; k < s; ++k) spec += (k ? "+" : "") + std::to_string(h);
    spec += ",bw=125e6,up_bw=12.5e6";
    ModelPtr m = parse_model(spec);
    const int p = s * h;
    auto t0 = Clock::now();
    TreePacking tp = pack_trees(*m->topology(), 0, TreeDirection::out, 8);
    const double pack_s = std::chrono::duration<double>(Clock::now() - t0).count();
    const Collective c = Collective::make(CollOp::bcast, p, 1 << 20);
    t0 = Clock::now();
    Schedule sch = build_schedule("packed_bcast", c, *m);
    const double gen_s = std::chrono::duration<double>(Clock::now() - t0).count();
    const Bound b = lower_bound(c, *m);
    const double bound_rate = b.capacity > 0 ? b.capacity / b.bytes * double(1 << 20) : 0;
    std::printf("%s  {\"subnets\": %d, \"hosts\": %d, \"pack_s\": %.3f, \"generate_s\": %.3f, \"ops\": %llu, "
                "\"trees\": %zu, \"rate\": %.4g, \"bound_rate\": %.4g, \"of_bound\": %.3f}",
                i ? ",\n" : "", s, p, pack_s, gen_s, (unsigned long long)sch.total_ops(), tp.trees.size(), tp.rate,
                bound_rate, bound_rate > 0 ? tp.rate / bound_rate : 0.0);
    std::fflush(stdout);
  }
  std::printf("\n]\n");
  return 0;
}
