// Every registered algorithm, for every collective it implements, passes the
// validator (symbolic data flow) for group sizes 1-17, 24, 30, 31, 32, 33,
// 64, 100; every root for sizes up to 17 (three roots beyond); byte counts
// 0, 1, 7, 4096 and 10^6 (counts not divisible by the group size); uneven
// and reordered counts for the v-variants; and every parameter variant the
// planner would try — each also after the execution passes (schedule/passes).
#include <gtest/gtest.h>

#include "../support/collectives.hpp"
#include "plan/build_schedule.hpp"
#include "algorithms/registry.hpp"
#include "model/machine_model.hpp"
#include "schedule/passes.hpp"
#include "schedule/validator.hpp"

using namespace hetcoll;
using hetcoll::testing::make_test_collective;

namespace {
const int kSizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 24, 30, 31, 32, 33, 64, 100};
const uint64_t kBytes[] = {0, 1, 7, 4096, 1000000};

std::vector<int> roots_for(CollOp op, int p) {
  if (!has_root(op)) return {0};
  if (p <= 17) {
    std::vector<int> r;
    for (int i = 0; i < p; ++i) r.push_back(i);
    return r;
  }
  return {0, p / 2 + 1, p - 1};
}

class Matrix : public ::testing::TestWithParam<std::string> {};

TEST_P(Matrix, EveryCaseIsValid) {
  const Algorithm& a = find_algorithm(GetParam());
  auto hockney = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  auto postal = parse_model("postal:lambda=1.7");
  size_t checked = 0;
  for (CollOp op : a.ops) {
    for (int p : kSizes) {
      for (int root : roots_for(op, p)) {
        for (uint64_t bytes : kBytes) {
          // Large vectors on the big groups only at the first root: the
          // schedule's structure does not depend on the size beyond this.
          if (p > 33 && bytes > 4096 && root != 0) continue;
          int variants = hetcoll::testing::has_variants(op) ? 3 : 1;
          for (int variant = 0; variant < variants; ++variant) {
            Collective c = make_test_collective(op, p, root, bytes, variant);
            std::vector<std::string> specs{a.name};
            if (a.variants && p <= 33 && bytes <= 4096)
              for (auto& v : a.variants(c, *hockney)) specs.push_back(v);
            for (auto& spec : specs) {
              for (const MachineModel* m : {hockney.get(), postal.get()}) {
                Schedule s = build_schedule(spec, c, *m);
                ValidationReport rep = validate(s);
                ASSERT_TRUE(rep.ok) << spec << " " << c.describe() << " variant " << variant << " on " << m->spec()
                                    << ": " << rep.summary();
                if (op == CollOp::allreduce && a.rank_consistent) {
                  ASSERT_TRUE(rep.rank_consistent) << spec << " " << c.describe();
                }
                ++checked;
                // What the MPI layer runs: the schedule after the execution
                // passes (input forwarding, receiving into accumulators).
                PassStats ps;
                Schedule f = optimize_for_execution(s, &ps);
                if (ps.forwarded + ps.received_in_place) {
                  ValidationReport frep = validate(f);
                  ASSERT_TRUE(frep.ok) << "optimized " << spec << " " << c.describe() << " variant " << variant
                                       << ": " << frep.summary();
                  if (op == CollOp::allreduce && a.rank_consistent) {
                    ASSERT_TRUE(frep.rank_consistent) << "optimized " << spec << " " << c.describe();
                  }
                  ++checked;
                }
              }
            }
          }
        }
      }
    }
  }
  RecordProperty("cases", int(checked));
  EXPECT_GT(checked, 0u);
}

std::vector<std::string> all_names() {
  std::vector<std::string> v;
  for (auto& a : registry()) v.push_back(a.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Registry, Matrix, ::testing::ValuesIn(all_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });
}  // namespace
