// MPI_IN_PLACE: schedules built for an in-place call (the builder orders the
// accesses to bytes that `in` and `out` share, Collective::in_place_offset)
// must be valid under that aliasing — except for the collectives an
// algorithm lists in copy_in_place, where it must fail (deadlock or wrong
// data) and the executor copies the input aside instead.
#include <gtest/gtest.h>

#include <algorithm>

#include "../support/collectives.hpp"
#include "plan/build_schedule.hpp"
#include "algorithms/registry.hpp"
#include "model/machine_model.hpp"
#include "schedule/validator.hpp"

using namespace hetcoll;
using hetcoll::testing::make_test_collective;

namespace {
bool valid_in_place(const std::string& algo, const Collective& c, const MachineModel& m, std::string& why) {
  ValidationOptions opt;
  for (int r = 0; r < c.nranks; ++r) opt.in_minus_out.push_back(c.in_place_offset(r));
  ValidationReport rep = validate(build_schedule(algo, c, m), opt);
  if (!rep.ok) why = rep.summary();
  return rep.ok;
}
}  // namespace

TEST(InPlace, OnlyTheListedCollectivesNeedACopy) {
  auto hockney = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  // Composites on a machine with levels (ranks interleaved over hosts and subnets).
  auto cluster = parse_model("cluster:subnets=4+2+3,ranks=2,layout=round");
  // Hierarchical scans need consecutive ranks per host and subnet.
  auto block_cluster = parse_model("cluster:subnets=4+2+3,ranks=2");
  for (auto& a : registry())
    for (CollOp op : a.ops) {
      const MachineModel* m = a.composite ? cluster.get() : hockney.get();
      if (op == CollOp::bcast || op == CollOp::barrier) continue;  // no MPI_IN_PLACE
      bool safe = true;
      std::string why;
      for (int p : {1, 2, 3, 4, 5, 7, 8, 13, 16}) {
        for (int root : {0, p / 2, p - 1}) {
          for (uint64_t bytes : {1, 7, 96, 4096}) {
            for (int variant : {0, 2}) {
              if (variant && !hetcoll::testing::has_variants(op)) continue;
              Collective c = make_test_collective(op, p, root, bytes, variant);
              c.in_place = true;
              const MachineModel* mm = a.composite && a.distinct && !a.distinct(c, *m) ? block_cluster.get() : m;
              if (!valid_in_place(a.name, c, *mm, why)) safe = false;
              if (!safe) break;
            }
            if (!safe) break;
          }
          if (!safe) break;
        }
        if (!safe) break;
      }
      bool copies = std::find(a.copy_in_place.begin(), a.copy_in_place.end(), op) != a.copy_in_place.end();
      EXPECT_EQ(copies, !safe) << a.name << " " << coll_op_name(op) << (safe ? "" : ": " + why);
    }
}
