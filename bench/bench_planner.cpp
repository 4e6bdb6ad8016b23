// Benchmark (not a test): how long the planner takes to decide.
//   cold: an empty cache, p ranks, every collective at a few sizes — every
//         candidate (all variants) evaluated;
//   warm: the same call again, from the decision cache.
//   bench_planner [p] [model]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/machine_model.hpp"
#include "plan/planner.hpp"

using namespace hetcoll;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int p = argc > 1 ? std::atoi(argv[1]) : 1024;
  std::string spec = argc > 2 ? argv[2] : "hockney:alpha=2us,beta=0.1ns,gamma=0.05ns";
  ModelPtr model = parse_model(spec);
  std::printf("{\"ranks\": %d, \"model\": \"%s\", \"cold\": [\n", p, spec.c_str());
  bool first = true;
  double worst = 0;
  for (CollOp op : all_coll_ops()) {
    for (uint64_t bytes : {uint64_t(8), uint64_t(65536), uint64_t(1) << 22}) {
      if (op == CollOp::barrier && bytes != 8) continue;
      if (op == CollOp::alltoallv && p > int(kMaxDenseRanks)) continue;  // the MPI layer leaves it to MPI
      Collective c = op == CollOp::barrier ? Collective::make(op, p, 0) : Collective::make(op, p, bytes / 8, 0, 8);
      Planner planner(model);
      auto t0 = Clock::now();
      Decision d = planner.decide(c);
      double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      worst = std::max(worst, ms);
      std::printf("%s  {\"op\": \"%s\", \"bytes\": %llu, \"ms\": %.2f, \"choice\": \"%s\"}", first ? "" : ",\n",
                  coll_op_name(op), (unsigned long long)bytes, ms, d.algorithm.c_str());
      first = false;
    }
  }
  // Warm: the same decision, many times.
  Planner planner(model);
  Collective c = Collective::make(CollOp::allreduce, p, 8192, 0, 8);
  planner.decide(c);
  const int reps = 2000000;
  auto t0 = Clock::now();
  size_t sink = 0;
  for (int i = 0; i < reps; ++i) sink += planner.decide_shared(c)->algorithm.size();  // as the MPI layer asks
  double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / reps;
  std::printf("\n], \"cold_worst_ms\": %.2f, \"warm_ns_per_call\": %.1f, \"sink\": %zu}\n", worst, ns, sink % 7);
  return 0;
}
