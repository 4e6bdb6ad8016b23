// Groups and blocks: pure rank and size arithmetic shared by the generators.
//
// A Group maps local ranks 0..k-1 to ranks of the schedule's group (InterCom
// §9: "an array containing the IDs of the processors comprising a column");
// primitives are written once for local ranks and run on any group: the
// whole communicator, a row or column of a logical mesh, a subnet.
//
// Blocks partition a vector into parts, in bytes, never splitting an element.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "schedule/builder.hpp"

namespace hetcoll {

struct Group {
  std::vector<int> ranks;  // local → schedule rank
  int size() const { return int(ranks.size()); }
  int operator[](int k) const { return ranks[size_t(k)]; }
  static Group all(int n);
  static Group strided(int first, int stride, int count);  // first, first+stride, ...
};

struct Blocks {
  std::vector<uint64_t> off, len;  // bytes
  int size() const { return int(off.size()); }
  uint64_t end(int i) const { return off[size_t(i)] + len[size_t(i)]; }
  // Bytes of blocks [a, b), which must be contiguous.
  uint64_t span(int a, int b) const { return a >= b ? 0 : end(b - 1) - off[size_t(a)]; }
  bool equal_sizes() const;
  uint64_t total() const;    // bytes of all blocks
  uint64_t largest() const;  // bytes of the largest block
  bool any_empty() const;    // some block has no bytes (its messages are left out)
};

// count elements of elem bytes in `parts` nearly equal blocks (the first
// count % parts get one element more), starting at byte `base`.
Blocks even_blocks(uint64_t count, uint32_t elem, int parts, uint64_t base = 0);
// Blocks of the given element counts, contiguous from byte `base`.
Blocks blocks_of(const std::vector<uint64_t>& counts, uint32_t elem, uint64_t base = 0);

// The blocks of a gather/scatter/allgather (and their v forms): block i is
// rank i's part of the root's (allgather: everybody's) `out` or `in`; of a
// reduce_scatter(_block): rank i's block of everybody's `in` (the part it
// receives combined).
Blocks coll_blocks(const Collective& c);
// Do the blocks follow each other from offset 0, in rank order?
bool contiguous(const Blocks& b);
// The same lengths laid out contiguously from 0.
Blocks packed(const Blocks& b);
// Where block order[i] starts when the blocks `order` names are laid end
// to end in that order (each its own length).
std::vector<uint64_t> offsets_in_order(const Blocks& b, const std::vector<int>& order);

// Where member m keeps blocks [a, b) (contiguous bytes).
using Place = std::function<Slice(int member, int a, int b)>;
// The same buffer offsets on every member (vectors: broadcast, allgather,
// allreduce): blocks [a, b) at buf[base + off(a), base + end(b-1)).
Place vector_place(Buf buf, const Blocks& blocks);

}  // namespace hetcoll
