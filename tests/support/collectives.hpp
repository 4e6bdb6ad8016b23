// Test collectives: regular ones and irregular v-variants (uneven counts,
// zeros, displacements out of rank order with gaps), for a byte count.
#pragma once
#include <string>
#include <vector>

#include "schedule/collective.hpp"

namespace hetcoll::testing {

// Element size used for `bytes` of a reduction: 8, 4 or 1, whichever divides.
inline uint32_t elem_for(uint64_t bytes) { return bytes % 8 == 0 && bytes ? 8 : bytes % 4 == 0 && bytes ? 4 : 1; }

// variant 0: counts as regular as the op allows; 1: uneven counts with
// zeros; 2: like 1 with displacements in reverse rank order and gaps.
inline Collective make_test_collective(CollOp op, int p, int root, uint64_t bytes, int variant = 0) {
  uint32_t e = is_reduction(op) ? elem_for(bytes) : 1;
  uint64_t count = bytes / e;
  auto uneven = [&](int i) -> uint64_t {
    if (variant == 0) return count;
    uint64_t c = count + uint64_t((i * 5) % 7);
    if (i % 4 == 3) c = 0;
    return c;
  };
  switch (op) {
    case CollOp::gatherv:
    case CollOp::scatterv:
    case CollOp::allgatherv:
    case CollOp::reduce_scatter: {
      std::vector<uint64_t> counts;
      for (int i = 0; i < p; ++i) counts.push_back(op == CollOp::reduce_scatter ? uneven(i) : uneven(i));
      Collective c = Collective::make_v(op, counts, root, e);
      if (variant == 2 && op != CollOp::reduce_scatter) {
        uint64_t cur = 3;  // a gap at the front, then reverse order with gaps
        for (int i = p - 1; i >= 0; --i) {
          c.displs[size_t(i)] = cur;
          cur += counts[size_t(i)] + 2;
        }
      }
      return c;
    }
    case CollOp::alltoallv: {
      std::vector<uint64_t> m(size_t(p) * size_t(p));
      for (int i = 0; i < p; ++i)
        for (int j = 0; j < p; ++j)
          m[size_t(i) * size_t(p) + size_t(j)] = variant == 0 ? count : (count + uint64_t(i + 2 * j)) % (count + 4);
      Collective c = Collective::make_alltoallv(p, m, e);
      if (variant == 2) {  // receive blocks in reverse order with gaps
        for (int i = 0; i < p; ++i) {
          uint64_t cur = 1;
          for (int j = p - 1; j >= 0; --j) {
            c.rdispls[size_t(i) * size_t(p) + size_t(j)] = cur;
            cur += c.recvcounts[size_t(i) * size_t(p) + size_t(j)] + 1;
          }
        }
      }
      return c;
    }
    case CollOp::barrier:
      return Collective::make(op, p, 0, 0, 1);
    default:
      return Collective::make(op, p, count, root, e);
  }
}

inline bool has_variants(CollOp op) {
  return op == CollOp::gatherv || op == CollOp::scatterv || op == CollOp::allgatherv ||
         op == CollOp::reduce_scatter || op == CollOp::alltoallv;
}

}  // namespace hetcoll::testing
