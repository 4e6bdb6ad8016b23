// Every closed form equals the simulator's time for the same schedule on the
// Hockney model — with latency, bandwidth or combining dominant — wherever
// the algorithm claims one. It may decline where its formula does not hold
// (uneven blocks, a group that is not a power of two), but not in the
// regular cases every formula of the papers covers: for each collective it
// implements, a power-of-two group whose vector divides evenly among the
// ranks must get its closed form.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "../support/collectives.hpp"
#include "algorithms/patterns/common.hpp"
#include "algorithms/registry.hpp"
#include "model/hockney_model.hpp"
#include "sim/simulator.hpp"

using namespace hetcoll;
using hetcoll::testing::make_test_collective;

namespace {
class ClosedForm : public ::testing::TestWithParam<std::string> {};

TEST_P(ClosedForm, EqualsTheSimulator) {
  const Algorithm& a = find_algorithm(GetParam());
  ASSERT_NE(a.closed_form, nullptr);
  const char* models[] = {"hockney:alpha=10us,beta=0.1ns,gamma=0.05ns", "hockney:alpha=1ns,beta=1ns,gamma=0.2ns",
                          "hockney:alpha=1us,beta=0.1ns,gamma=2ns"};
  size_t compared = 0;
  std::vector<std::string> regular_missing;
  std::map<CollOp, size_t> per_op;
  for (const char* spec : models) {
    auto model = parse_model(spec);
    for (CollOp op : a.ops) {
      for (int p : {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 17, 24, 30, 32, 64, 100, 128}) {
        for (uint64_t bytes : {uint64_t(8), uint64_t(7680), uint64_t(960000), uint64_t(1) << 20}) {
          int root = has_root(op) ? p / 3 : 0;
          Collective c = make_test_collective(op, p, root, bytes);
          std::vector<std::string> specs{a.name};
          if (a.variants && p <= 64)
            for (auto& v : a.variants(c, *model)) specs.push_back(v);
          const bool regular = (p & (p - 1)) == 0 && c.count % uint64_t(p) == 0;
          for (auto& s : specs) {
            auto cf = closed_form(s, c, *model);
            // Pipelines longer than kMaxRecurrenceSteps stage steps are left to the simulator.
            bool too_long = false;
            if (a.name == "chain_bcast" || a.name == "chain_reduce") {
              const Params none{};
              GenContext ctx{c, *model, none, -1};
              const uint64_t k = uint64_t(pipeline_segments(ctx, pipeline_segment(ctx, a.name == "chain_reduce")).size());
              too_long = uint64_t(p) * k > kMaxRecurrenceSteps;
            }
            if (!cf && regular && s == a.name && !too_long) regular_missing.push_back(c.describe());
            if (!cf) continue;
            const auto& h = static_cast<const HockneyModel&>(*model);
            double predicted = cf->alpha * h.alpha() + cf->beta * h.beta() + cf->gamma * h.gamma();
            double simulated = simulate(generate(s, c, *model), *model, {false, false, {}}).makespan;
            ASSERT_NEAR(predicted, simulated, 1e-9 * std::max(1e-6, simulated))
                << s << " " << c.describe() << " on " << spec << ": closed form " << cf->alpha << " alpha + "
                << cf->beta << " beta-bytes + " << cf->gamma << " gamma-bytes";
            ++compared;
            ++per_op[op];
          }
        }
      }
    }
  }
  for (CollOp op : a.ops) EXPECT_GT(per_op[op], 0u) << a.name << " has no closed form for " << coll_op_name(op);
  EXPECT_TRUE(regular_missing.empty()) << a.name << " has no closed form for " << regular_missing.size()
                                       << " regular calls, e.g. " << regular_missing.front();
  RecordProperty("compared", int(compared));
}

std::vector<std::string> with_closed_forms() {
  std::vector<std::string> v;
  for (auto& a : registry())
    if (a.closed_form) v.push_back(a.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Registry, ClosedForm, ::testing::ValuesIn(with_closed_forms()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });
}  // namespace
