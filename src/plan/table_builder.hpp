// A decision table built by the planner (`hetcoll plan --table`): its
// decisions ahead of time, for the MPI layer to load (plan/decision_table.hpp
// is the table, its file and when it may serve).
#pragma once
#include <cstdint>
#include <vector>

#include "plan/decision_table.hpp"

namespace hetcoll {

// The planner's decisions for every op in `ops` (root 0; reductions both
// floating-point and order-free), every group size in `ranks`, element
// sizes `elems` and every size class up to max_bytes.
DecisionTable build_decision_table(const ModelPtr& model, const std::vector<int>& ranks,
                                   const std::vector<CollOp>& ops, uint64_t max_bytes,
                                   const std::vector<uint32_t>& elems);

}  // namespace hetcoll
