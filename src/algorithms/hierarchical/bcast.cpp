// hierarchical, bcast: the vector down the levels, pipelined in pieces.
// The algorithm as a whole: algorithms/hierarchical/hierarchical.cpp.
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll::hierarchical {

Schedule bcast(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, name_of(ctx));
  const Levels L = levels_of(ctx.model, c.nranks, c.root, true);
  for (const Piece& pc : pieces_of(ctx)) {
    const uint64_t at = pc.first * c.elem_size;
    auto place = [at](int, const Slice& s) { return shift(s, at); };
    run_phase(b, ctx, L.top, sub_call(CollOp::bcast, int(L.top.size()), pc.count, c), place);
    for (auto& g : L.subnets) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), pc.count, c), place, &L.like(g));
    for (auto& g : L.hosts) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), pc.count, c), place, &L.like(g));
  }
  return b.finish();
}

}  // namespace hetcoll::hierarchical
