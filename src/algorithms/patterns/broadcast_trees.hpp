// The broadcast trees of Bruck et al. §2 as pure rank arithmetic (node 0 is
// the source). Generators in binomial_tree.cpp, lambda_tree.cpp and
// alpha_partition.cpp turn them into schedules.
#pragma once
#include "algorithms/patterns/postal_math.hpp"
#include "algorithms/patterns/tree.hpp"
#include "model/machine_model.hpp"

namespace hetcoll {

Tree binomial_tree(int n);                       // split ⌈n/2⌉ (§2.1)
Tree lambda_tree(int n, double lambda);          // greedy two-queue construction (§2.3)
Tree alpha_partition_tree(int n, double alpha);  // fixed α (§2.4)
Tree alpha_partition_tree(int n, const postal::AlphaTable& table);  // α(n) from the look-up table

// With λ = 1 the λ-tree and the α-partition tree (α = 1/2 from the table)
// are the binomial tree: the planner evaluates them only when λ > 1.
bool postal_lambda_above_one(const Collective& c, const MachineModel& m);

}  // namespace hetcoll
