// star_scatter — linear scatter and scatterv: the root sends each rank its
// block directly, in rank order after the root.
//
// Steps: p-1 sends by the root; p-1 messages, (p-1)/p·n bytes from the root.
// Cost: (p-1)(alpha + (n/p) beta)
// Source: the sequential tree of MPICH's scatter, Banikazemi et al. §3.2
// (eqs. 8-9).
#include "algorithms/all.hpp"
#include "algorithms/patterns/rooted_blocks.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) { return star_blocks(ctx, "star_scatter"); }
}  // namespace

Algorithm star_scatter_algorithm() {
  Algorithm a{{CollOp::scatter, CollOp::scatterv}, generate};
  star_blocks_entry(a);  // its closed form, rounds and local counts
  return a;
}
}  // namespace hetcoll
