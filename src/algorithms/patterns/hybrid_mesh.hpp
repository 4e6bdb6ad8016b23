// Logical meshes for InterCom's hybrid algorithms (§6, Table 2, Fig. 3).
//
// A group of p ranks is viewed as a d1 × ... × dk mesh; rank
// r = ((c1·d2 + c2)·d3 + c3)... (dimension 1 varies slowest, so the ranks of
// a dimension-k line are consecutive). A strategy string says what happens
// in each dimension, in execution order:
//
//   bcast, allreduce:  S^(k-1) M C^(k-1)  or  S^k C^k
//     S  scatter (bcast) / bucket distributed combine (allreduce) of the
//        current piece along dimension i, i = 1, 2, ...
//     M  short-vector algorithm along dimension k: MST broadcast / MST
//        combine-to-one + broadcast
//     C  bucket collect along the dimensions in reverse order
//   allgather:         M C^(k-1)  or  C^k
//     stages from dimension k outwards; M = MST gather + broadcast, C =
//     bucket collect of the chunks gathered so far
//
// e.g. "2x3x5:SSMCC" for 30 ranks (InterCom Table 2's second row).
#pragma once
#include <string>
#include <vector>

#include "algorithms/patterns/group.hpp"
#include "algorithms/registry.hpp"

namespace hetcoll {

struct Mesh {
  std::vector<int> dims;
  std::string strategy;
  std::string str() const;  // "2x3x5:SSMCC"
  int size() const;
  bool has_m() const { return strategy.find('M') != std::string::npos; }
  // The members of rank r's line along dimension i (0-based), ordered by c_i.
  Group line(int i, int r) const;
  int coord(int i, int r) const;
  int stride(int i) const;
};

// Parses and checks "d1xd2x...:STRATEGY" for `op` and p ranks; throws
// InputError with the rule that is broken.
Mesh parse_mesh(const std::string& text, CollOp op, int p);

// Every ordered factorisation of p into factors ≥ 2 with at least two
// dimensions, with both strategies: the planner's candidates.
std::vector<Mesh> hybrid_meshes(CollOp op, int p);

// Closed form (Hockney) of the hybrid for equal pieces, conflict-free
// (complete graph); nullopt when some piece is uneven. With
// conflict_factor, every β term of dimension i is multiplied by
// d1·...·d(i-1) as in InterCom's formulas for a linear array (the bold
// factors of §6): the paper's numbers.
std::optional<Terms> hybrid_cost(CollOp op, const Mesh& mesh, uint64_t count, uint32_t elem, bool conflict_factor);

// The same with uneven pieces taken as fractions: an estimate, for ranking.
Terms hybrid_estimate(CollOp op, const Mesh& mesh, uint64_t count, uint32_t elem);

// The mesh with the smallest closed-form cost on the α-β-γ estimate of the
// model at this size (the default when no mesh is given); for a prime p
// (or p < 4) the one-dimensional short-vector form "p:M". p ≥ 2.
Mesh best_mesh(CollOp op, int p, uint64_t count, uint32_t elem, const MachineModel& model);

// The part of the vector (elements) that rank r holds after the scatters
// along dimensions 0..level-1: nested even splits indexed by r's coordinates.
struct Piece {
  uint64_t off, count;
};
Piece mesh_piece(const Mesh& mesh, int r, int level, uint64_t count);

// bcast, allreduce: where the members of rank r's line along dimension
// `level` keep the parts of their piece (mesh_piece at `level`), split
// evenly among the d_level members, in `out` — the places of the scatter
// or distributed combine along that dimension and of its collect back.
Place mesh_split_place(const Mesh& mesh, int r, int level, uint64_t count, uint32_t elem);
// bcast, allreduce: the bucket collects back along dimensions scatters-1,
// …, 0, every line of each (coordinate 0 runs it) gathering the parts its
// members hold.
void mesh_collect_back(Builder& b, const Mesh& mesh, int scatters, uint64_t count, uint32_t elem);

// The mesh a hybrid generator uses: its mesh= parameter, else best_mesh().
Mesh hybrid_mesh_for(const GenContext& ctx, const char* algo);
// Its builder, named for the spec that rebuilds the schedule: the mesh.
Builder hybrid_builder(const GenContext& ctx, const char* algo, const Mesh& mesh);

// The closed form of the hybrid of `op` ("hybrid_<op>") for the call:
// hybrid_cost of the mesh it uses, conflict-free; allreduce with an M
// stage only where the last dimension is a power of two (the MST
// combine-to-one is exact there only).
std::optional<Terms> hybrid_closed(CollOp op, const GenContext& ctx);
// Its parameters: mesh; bcast and allreduce also levels.
std::vector<ParamSpec> hybrid_params(CollOp op);

// The planner hooks the hybrid algorithm of `Op` ("hybrid_<op>") shares
// with the others: its closed form, its estimate (hybrid_estimate of the
// mesh it would use) and its variants (one spec per mesh of the group).
template <CollOp Op>
std::optional<Terms> hybrid_closed_hook(const GenContext& ctx, const HockneyParams&) {
  return hybrid_closed(Op, ctx);
}
template <CollOp Op>
std::optional<Terms> hybrid_estimate_hook(const GenContext& ctx, const HockneyParams&) {
  if (ctx.coll.nranks == 1) return Terms{};
  const std::string name = std::string("hybrid_") + coll_op_name(Op);
  return hybrid_estimate(Op, hybrid_mesh_for(ctx, name.c_str()), ctx.coll.count, ctx.coll.elem_size);
}

// On a machine with subnets, bcast and allreduce also try each mesh on the
// ranks numbered subnet by subnet (levels=1: the logical mesh follows the
// subnets), right after the same mesh in rank order.
bool has_subnets(const MachineModel& m, int n);
template <CollOp Op>
std::vector<std::string> hybrid_variants_hook(const Collective& c, const MachineModel& model) {
  std::vector<std::string> v;
  const bool levels = (Op == CollOp::bcast || Op == CollOp::allreduce) && has_subnets(model, c.nranks);
  for (auto& m : hybrid_meshes(Op, c.nranks)) {
    v.push_back(std::string("hybrid_") + coll_op_name(Op) + "[mesh=" + m.str() + "]");
    if (levels) v.push_back(std::string("hybrid_") + coll_op_name(Op) + "[levels=1,mesh=" + m.str() + "]");
  }
  return v;
}

// The registry's facts of the hybrid of `Op` beside its generator: its
// parameters and the hooks above.
template <CollOp Op>
void hybrid_registry_entry(Algorithm& a) {
  a.params = hybrid_params(Op);
  a.closed_form = hybrid_closed_hook<Op>;
  a.estimate = hybrid_estimate_hook<Op>;
  a.variants = hybrid_variants_hook<Op>;
}

}  // namespace hetcoll
