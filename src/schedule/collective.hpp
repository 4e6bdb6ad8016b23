// What a collective call asks for: the operation, the group size, the root and
// the element counts of every rank (all in elements of elem_size bytes).
// Schedules are generated for a Collective and validated against its promise
// (expected_outcome).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace hetcoll {

// The collectives, in the order of include/hetcoll_collectives.def (the one
// place they are listed; their MPI signatures are there too).
enum class CollOp : uint8_t {
#define HETCOLL_COLLECTIVE(name, Name, params, args) name,
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE
};
constexpr int kNumCollOps = 0
#define HETCOLL_COLLECTIVE(name, Name, params, args) +1
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE
    ;

const char* coll_op_name(CollOp op);
CollOp coll_op_from_name(const std::string& name);  // throws InputError listing the names
std::vector<CollOp> all_coll_ops();
// What kind of collective it is: its row of the kinds table (kFacts in
// collective.cpp), one row each.
bool is_reduction(CollOp op);  // combines contributions with an operator
bool has_root(CollOp op);
// Whether MPI gives every rank of the call every count: false for gatherv,
// scatterv (only the root has them) and alltoallv (each rank its own row).
// Decisions for these cannot depend on the counts.
bool counts_known_everywhere(CollOp op);
// The regular form of a variant: gatherv → gather, scatterv → scatter,
// allgatherv → allgather, reduce_scatter → reduce_scatter_block, alltoallv →
// alltoall, exscan → scan; every other collective is its own.
CollOp base_form(CollOp op);

// Limits on what a Collective may describe, checked by check() and the
// constructors before anything is allocated: hetcoll plans and simulates
// groups up to kMaxRanks (a schedule of 2M ranks already needs gigabytes);
// alltoallv, whose p×p counts are held in full, up to kMaxDenseRanks; and
// no rank's buffer beyond kMaxBytes.
constexpr int kMaxRanks = 1 << 21;
constexpr int kMaxDenseRanks = 1024;
constexpr uint64_t kMaxBytes = uint64_t(1) << 60;

struct Collective {
  CollOp op = CollOp::bcast;
  int nranks = 1;
  int root = 0;
  uint32_t elem_size = 1;  // bytes per element: reductions never split one
  // The reduction gives the same bits in any order of combining (integer
  // arithmetic, min/max, logical and bitwise ops). When false (floating
  // point), an allreduce must give every rank identical bits, so only
  // rank-consistent algorithms qualify.
  bool order_free = false;
  // MPI_IN_PLACE: the input lies inside the output (in_place_offset) on the
  // ranks where that applies. Schedules built for it order their accesses
  // to the shared bytes.
  bool in_place = false;
  // bcast/reduce/allreduce/scan/exscan: vector length; gather/scatter/
  // allgather/alltoall: elements per rank (per block); reduce_scatter_block:
  // elements each rank receives.
  uint64_t count = 0;
  // gatherv/scatterv/allgatherv/reduce_scatter: elements of each rank;
  // displs: their displacement in the root's (or everyone's) buffer.
  std::vector<uint64_t> counts, displs;
  // alltoallv: p*p matrices, row i is rank i's arguments.
  std::vector<uint64_t> sendcounts, sdispls, recvcounts, rdispls;

  // Sizes in bytes of rank r's send buffer ("in") and receive buffer ("out").
  uint64_t in_bytes(int r) const;
  uint64_t out_bytes(int r) const;
  // The largest number of bytes any one rank contributes or receives.
  uint64_t total_bytes() const;
  // The size that selects algorithms (overrides, decision cache): one rank's
  // message — the vector for bcast/reduce/allreduce/scan/exscan, one rank's
  // block for gather/scatter/allgather/alltoall/reduce_scatter_block, the
  // mean block for the v-variants, 0 for barrier.
  uint64_t size_bytes() const;

  // MPI_IN_PLACE: where rank r's input lies inside its output buffer, as
  // the byte offset in - out (negative: the output lies inside the input,
  // scatter at the root); nullopt where MPI_IN_PLACE does not apply to r.
  std::optional<int64_t> in_place_offset(int r) const;

  void check() const;  // throws InputError on inconsistent arguments
  std::string describe() const;
  json::Value to_json() const;
  static Collective from_json(const json::Value& v);

  // Convenience constructors (counts in elements).
  static Collective make(CollOp op, int nranks, uint64_t count, int root = 0, uint32_t elem_size = 1);
  static Collective make_v(CollOp op, std::vector<uint64_t> counts, int root = 0, uint32_t elem_size = 1);
  static Collective make_alltoallv(int nranks, std::vector<uint64_t> sendcounts, uint32_t elem_size = 1);
};

// Size classes: 0 for 0 bytes; then each octave [2^k, 2^(k+1)) in four
// equal parts. Integer arithmetic only, so every rank of every machine
// agrees. size_class_floor(c) is the smallest size of class c.
int size_class(uint64_t bytes);
uint64_t size_class_floor(int cls);

// The call a decision is planned on: the same collective, group, root,
// element size and order-freedom, not in place, with equal blocks of the
// smallest whole-element size of the call's size class. For gatherv,
// scatterv and alltoallv, whose counts no rank knows in full, equal blocks
// of kUnknownBlockBytes.
Collective representative(const Collective& call);
constexpr uint64_t kUnknownBlockBytes = 1024;

}  // namespace hetcoll
