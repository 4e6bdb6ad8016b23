// star_gather — linear gather and gatherv: every rank sends its block to the
// root, which receives them straight into `out` in rank order.
//
// Steps: p-1 receives at the root (one port: they serialise); p-1 messages.
// Cost: (p-1)(alpha + (n/p) beta)
// Source: the sequential tree of MPICH's gather, Banikazemi et al. §3.3
// (eqs. 10-12).
#include "algorithms/all.hpp"
#include "algorithms/patterns/rooted_blocks.hpp"

namespace hetcoll {
namespace {
Schedule generate(const GenContext& ctx) { return star_blocks(ctx, "star_gather"); }
}  // namespace

Algorithm star_gather_algorithm() {
  Algorithm a{{CollOp::gather, CollOp::gatherv}, generate};
  star_blocks_entry(a);  // its closed form, rounds and local counts
  return a;
}
}  // namespace hetcoll
