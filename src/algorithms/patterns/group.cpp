#include "algorithms/patterns/group.hpp"

#include <algorithm>

namespace hetcoll {

Group Group::all(int n) {
  Group g;
  g.ranks.resize(size_t(n));
  for (int i = 0; i < n; ++i) g.ranks[size_t(i)] = i;
  return g;
}

Group Group::strided(int first, int stride, int count) {
  Group g;
  for (int i = 0; i < count; ++i) g.ranks.push_back(first + i * stride);
  return g;
}

bool Blocks::equal_sizes() const {
  for (auto l : len)
    if (l != len[0]) return false;
  return true;
}

uint64_t Blocks::total() const {
  uint64_t t = 0;
  for (auto l : len) t += l;
  return t;
}

uint64_t Blocks::largest() const {
  uint64_t m = 0;
  for (auto l : len) m = std::max(m, l);
  return m;
}

bool Blocks::any_empty() const {
  for (auto l : len)
    if (!l) return true;
  return false;
}

Blocks even_blocks(uint64_t count, uint32_t elem, int parts, uint64_t base) {
  Blocks b;
  uint64_t q = count / uint64_t(parts), r = count % uint64_t(parts), cur = base;
  for (int i = 0; i < parts; ++i) {
    uint64_t n = (q + (uint64_t(i) < r ? 1 : 0)) * elem;
    b.off.push_back(cur);
    b.len.push_back(n);
    cur += n;
  }
  return b;
}

Blocks blocks_of(const std::vector<uint64_t>& counts, uint32_t elem, uint64_t base) {
  Blocks b;
  uint64_t cur = base;
  for (auto c : counts) {
    b.off.push_back(cur);
    b.len.push_back(c * elem);
    cur += c * elem;
  }
  return b;
}

Blocks coll_blocks(const Collective& c) {
  const uint32_t e = c.elem_size;
  Blocks b;
  switch (c.op) {
    case CollOp::gatherv:
    case CollOp::scatterv:
    case CollOp::allgatherv:
      for (int i = 0; i < c.nranks; ++i) {
        b.off.push_back(c.displs[size_t(i)] * e);
        b.len.push_back(c.counts[size_t(i)] * e);
      }
      return b;
    case CollOp::reduce_scatter:  // each rank's block of the input, in rank order
      return blocks_of(c.counts, e);
    default:
      return even_blocks(c.count * uint64_t(c.nranks), e, c.nranks);
  }
}

bool contiguous(const Blocks& b) {
  uint64_t cur = 0;
  for (int i = 0; i < b.size(); ++i) {
    if (b.off[size_t(i)] != cur) return false;
    cur += b.len[size_t(i)];
  }
  return true;
}

Blocks packed(const Blocks& b) { return blocks_of(std::vector<uint64_t>(b.len.begin(), b.len.end()), 1); }

std::vector<uint64_t> offsets_in_order(const Blocks& b, const std::vector<int>& order) {
  std::vector<uint64_t> at(order.size(), 0);
  for (size_t i = 1; i < order.size(); ++i) at[i] = at[i - 1] + b.len[size_t(order[i - 1])];
  return at;
}

Place vector_place(Buf buf, const Blocks& blocks) {
  return [buf, blocks](int, int a, int b) { return Slice{buf, blocks.off[size_t(a)], blocks.span(a, b)}; };
}

}  // namespace hetcoll
