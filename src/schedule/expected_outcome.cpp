#include "schedule/expected_outcome.hpp"

#include <algorithm>

namespace hetcoll {

namespace {
// Fills gaps between the given data pieces with Untouched ranges.
std::vector<Expect> cover(std::vector<Expect> data, uint64_t total) {
  std::sort(data.begin(), data.end(), [](const Expect& a, const Expect& b) { return a.off < b.off; });
  std::vector<Expect> out;
  uint64_t cur = 0;
  for (auto& d : data) {
    if (d.len == 0) continue;
    if (d.off > cur) out.push_back({Expect::Untouched, cur, d.off - cur});
    out.push_back(d);
    cur = d.off + d.len;
  }
  if (cur < total) out.push_back({Expect::Untouched, cur, total - cur});
  return out;
}

Expect data(uint64_t off, uint64_t len, int lo, int hi, uint64_t origin) {
  return {Expect::Data, off, len, lo, hi, origin};
}
}  // namespace

std::vector<Expect> expected_outcome(const Collective& c, int r) {
  const uint64_t e = c.elem_size;
  const int p = c.nranks;
  const size_t P = size_t(p);
  const uint64_t total = c.out_bytes(r);
  std::vector<Expect> d;
  switch (c.op) {
    case CollOp::barrier:
      break;
    case CollOp::bcast:
      d.push_back(data(0, c.count * e, c.root, c.root + 1, 0));
      break;
    case CollOp::reduce:
      if (r == c.root) d.push_back(data(0, c.count * e, 0, p, 0));
      break;
    case CollOp::allreduce:
      d.push_back(data(0, c.count * e, 0, p, 0));
      break;
    case CollOp::scan:
      d.push_back(data(0, c.count * e, 0, r + 1, 0));
      break;
    case CollOp::exscan:
      if (r == 0) return {{Expect::Any, 0, total}};
      d.push_back(data(0, c.count * e, 0, r, 0));
      break;
    case CollOp::gather:
      if (r == c.root)
        for (int i = 0; i < p; ++i) d.push_back(data(uint64_t(i) * c.count * e, c.count * e, i, i + 1, 0));
      break;
    case CollOp::gatherv:
      if (r == c.root)
        for (int i = 0; i < p; ++i) d.push_back(data(c.displs[size_t(i)] * e, c.counts[size_t(i)] * e, i, i + 1, 0));
      break;
    case CollOp::scatter:
      d.push_back(data(0, c.count * e, c.root, c.root + 1, uint64_t(r) * c.count * e));
      break;
    case CollOp::scatterv:
      d.push_back(data(0, c.counts[size_t(r)] * e, c.root, c.root + 1, c.displs[size_t(r)] * e));
      break;
    case CollOp::allgather:
      for (int i = 0; i < p; ++i) d.push_back(data(uint64_t(i) * c.count * e, c.count * e, i, i + 1, 0));
      break;
    case CollOp::allgatherv:
      for (int i = 0; i < p; ++i) d.push_back(data(c.displs[size_t(i)] * e, c.counts[size_t(i)] * e, i, i + 1, 0));
      break;
    case CollOp::reduce_scatter_block:
      d.push_back(data(0, c.count * e, 0, p, uint64_t(r) * c.count * e));
      break;
    case CollOp::reduce_scatter: {
      uint64_t before = 0;
      for (int i = 0; i < r; ++i) before += c.counts[size_t(i)];
      d.push_back(data(0, c.counts[size_t(r)] * e, 0, p, before * e));
      break;
    }
    case CollOp::alltoall:
      for (int i = 0; i < p; ++i)
        d.push_back(data(uint64_t(i) * c.count * e, c.count * e, i, i + 1, uint64_t(r) * c.count * e));
      break;
    case CollOp::alltoallv:
      for (size_t i = 0; i < P; ++i)
        d.push_back(data(c.rdispls[size_t(r) * P + i] * e, c.recvcounts[size_t(r) * P + i] * e, int(i), int(i) + 1,
                         c.sdispls[i * P + size_t(r)] * e));
      break;
  }
  return cover(std::move(d), total);
}

}  // namespace hetcoll
