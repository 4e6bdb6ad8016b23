// Benchmark (not a test): build and simulate a λ-tree broadcast for up to
// 10^6 ranks. Reports wall time per phase and the peak resident memory, for
// several n to show that both grow linearly.
//   bench_lambda_tree [max_n] [lambda]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/postal_math.hpp"
#include "algorithms/registry.hpp"
#include "model/postal_model.hpp"
#include "sim/simulator.hpp"

using namespace hetcoll;
using Clock = std::chrono::steady_clock;

static double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

static long peak_rss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

int main(int argc, char** argv) {
  int max_n = argc > 1 ? std::atoi(argv[1]) : 1000000;
  double lambda = argc > 2 ? std::atof(argv[2]) : 1.8;
  PostalModel model(lambda);
  std::printf("{\"lambda\": %g, \"runs\": [\n", lambda);
  bool first = true;
  for (int n = 10000; n <= max_n; n *= 10) {
    // Each size in a fresh child would isolate the peak memory; instead the
    // sizes grow, so the running peak is the peak of the largest so far.
    auto t0 = Clock::now();
    Schedule s = generate("lambda_tree", Collective::make(CollOp::bcast, n, 512, 0), model);
    auto t1 = Clock::now();
    SimResult r = simulate(s, model, {false, false, {}});
    auto t2 = Clock::now();
    double expect = postal::Table(lambda, uint64_t(n)).T(uint64_t(n));
    std::printf("%s  {\"n\": %d, \"ops\": %zu, \"build_s\": %.3f, \"simulate_s\": %.3f, \"total_s\": %.3f, "
                "\"predicted\": %g, \"T_lambda\": %g, \"peak_rss_mb\": %.1f}",
                first ? "" : ",\n", n, s.total_ops(), seconds(t0, t1), seconds(t1, t2), seconds(t0, t2), r.makespan,
                expect, peak_rss_kb() / 1024.0);
    first = false;
    if (r.makespan != expect && std::abs(r.makespan - expect) > 1e-9) {
      std::fprintf(stderr, "\nprediction %g differs from T_lambda(n) = %g\n", r.makespan, expect);
      return 1;
    }
  }
  std::printf("\n]}\n");
  return 0;
}
