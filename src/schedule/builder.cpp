#include "schedule/builder.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>

#include "util/error.hpp"
#include "util/work_meter.hpp"

namespace hetcoll {

// Per rank and buffer, an interval map of who touched each byte last: the last
// writer and the readers since. Created lazily, only when inference is on.
struct Builder::Hazards {
  struct Seg {
    uint64_t end;
    int64_t writer = -1;
    std::vector<uint32_t> readers;
  };
  using Map = std::map<uint64_t, Seg>;
  std::vector<std::array<Map, kNumBufs>> maps;

  explicit Hazards(int nranks) : maps(size_t(nranks)) {}

  // Splits so that a segment boundary exists at x (if x falls inside one).
  void writers(int rank, Slice s, std::vector<uint32_t>& out) const {
    if (s.len == 0) return;
    s = physical(rank, s);
    const Map& m = maps[size_t(rank)][size_t(s.buf)];
    auto it = m.upper_bound(s.off);
    if (it != m.begin()) --it;
    for (; it != m.end() && it->first < s.end(); ++it)
      if (it->second.end > s.off && it->second.writer >= 0) out.push_back(uint32_t(it->second.writer));
  }

  static void split(Map& m, uint64_t x) {
    auto it = m.upper_bound(x);
    if (it == m.begin()) return;
    --it;
    if (it->first < x && x < it->second.end) {
      Seg right = it->second;
      it->second.end = x;
      m.emplace(x, std::move(right));
    }
  }

  // With MPI_IN_PLACE `in` and `out` share memory: track both in one
  // coordinate space (the outer of the two buffers).
  std::vector<std::optional<int64_t>> alias;
  Slice physical(int rank, Slice s) const {
    if (size_t(rank) >= alias.size() || !alias[size_t(rank)] || s.buf == Buf::tmp) return s;
    int64_t d = *alias[size_t(rank)];
    if (d >= 0) return s.buf == Buf::in ? Slice{Buf::out, s.off + uint64_t(d), s.len} : s;
    return s.buf == Buf::out ? Slice{Buf::in, s.off + uint64_t(-d), s.len} : s;
  }

  // `op` reads or writes all of one segment: it depends on the segment's
  // writer and, writing, on its readers; then it is recorded.
  static void touch(Seg& seg, uint32_t op, bool write, std::vector<uint32_t>& deps) {
    if (seg.writer >= 0) deps.push_back(uint32_t(seg.writer));
    if (write) {
      deps.insert(deps.end(), seg.readers.begin(), seg.readers.end());
      seg.writer = op;
      seg.readers.clear();
    } else {
      seg.readers.push_back(op);
    }
  }

  void access(int rank, uint32_t op, Slice s, bool write, std::vector<uint32_t>& deps) {
    if (s.len == 0) return;
    s = physical(rank, s);
    Map& m = maps[size_t(rank)][size_t(s.buf)];
    // Two fast paths, the whole of a pipeline's traffic (a segment written
    // past everything before it, then read or written again as it is): no
    // search of the map.
    if (m.empty() || s.off >= std::prev(m.end())->second.end) {
      Seg seg{s.end(), -1, {}};
      if (write) seg.writer = op; else seg.readers.push_back(op);
      merge_into_previous(m, m.emplace_hint(m.end(), s.off, std::move(seg)), op);
      return;
    }
    if (auto last = std::prev(m.end()); last->first == s.off && last->second.end == s.end()) {
      touch(last->second, op, write, deps);
      if (write) merge_into_previous(m, last, op);
      return;
    }
    split(m, s.off);
    split(m, s.end());
    uint64_t cursor = s.off;
    auto it = m.lower_bound(s.off);
    std::vector<std::pair<uint64_t, uint64_t>> gaps;
    for (; it != m.end() && it->first < s.end(); ++it) {
      if (it->first > cursor) gaps.emplace_back(cursor, it->first);
      touch(it->second, op, write, deps);
      cursor = it->second.end;
    }
    if (cursor < s.end()) gaps.emplace_back(cursor, s.end());
    for (auto& g : gaps) {
      Seg seg{g.second, -1, {}};
      if (write) seg.writer = op; else seg.readers.push_back(op);
      m.emplace(g.first, std::move(seg));
    }
    if (write) merge_written(m, s, op);
  }

  // The last segment, just written by `op`, joins the one before it when
  // that one ends where it starts, was written by `op` too and has no
  // readers (merge_written for the end of the map).
  static void merge_into_previous(Map& m, Map::iterator it, uint32_t op) {
    if (it == m.begin() || it->second.writer != int64_t(op) || !it->second.readers.empty()) return;
    auto prev = std::prev(it);
    if (prev->second.end != it->first || prev->second.writer != int64_t(op) || !prev->second.readers.empty()) return;
    prev->second.end = it->second.end;
    m.erase(it);
  }

  // After a write, neighbouring pieces written by the same op with no
  // readers are one segment again; keeps maps small for block-wise writes.
  static void merge_written(Map& m, Slice s, uint32_t op) {
    auto it = m.find(s.off);
    if (it == m.end()) return;
    if (it != m.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end == it->first && prev->second.writer == op && prev->second.readers.empty()) it = prev;
    }
    while (true) {
      auto next = std::next(it);
      if (next == m.end() || next->first != it->second.end || next->second.writer != op ||
          !next->second.readers.empty() || !it->second.readers.empty() || it->second.writer != op)
        break;
      it->second.end = next->second.end;
      m.erase(next);
    }
  }
};

Builder::Builder(const Collective& coll, std::string algorithm, bool infer_deps)
    : coll_(coll), algorithm_(std::move(algorithm)), count_(size_t(coll.nranks), 0), tmp_(size_t(coll.nranks), 0) {
  if (infer_deps) {
    hazards_ = std::make_unique<Hazards>(coll.nranks);
    if (coll.in_place)
      for (int r = 0; r < coll.nranks; ++r) hazards_->alias.push_back(coll.in_place_offset(r));
  }
}
Builder::~Builder() = default;
Builder::Builder(Builder&&) noexcept = default;
Builder& Builder::operator=(Builder&&) noexcept = default;

uint32_t Builder::add(int rank, Op op, const uint32_t* after, size_t n_after) {
  if (rank < 0 || rank >= coll_.nranks)
    throw ScheduleError(cat(algorithm_, ": op on rank ", rank, " outside the group of ", coll_.nranks));
  uint32_t idx = count_[size_t(rank)]++;
  if (!wants(rank)) return idx;
  if (limit_ && ops_.size() >= limit_)
    throw TooLarge(cat(algorithm_, ": more than ", limit_, " ops for ", coll_.describe()));
  t_work_steps += kStepsPerOp;
  for (size_t k = 0; k < n_after; ++k)
    if (after[k] >= idx)
      throw ScheduleError(cat(algorithm_, ": rank ", rank, " op ", idx, " depends on later op ", after[k]));
  if (!hazards_ && n_after <= 1) {  // the common fast path: no inference, no sorting
    op.dep_begin = uint32_t(deps_.size());
    op.dep_count = uint32_t(n_after);
    if (n_after) deps_.push_back(after[0]);
    ops_.push_back(op);
    op_rank_.push_back(rank);
    return idx;
  }
  std::vector<uint32_t>& deps = scratch_;
  deps.assign(after, after + n_after);
  if (hazards_) {
    switch (op.kind) {
      case OpKind::send:
        hazards_->access(rank, idx, op.slice(), false, deps);
        break;
      case OpKind::recv:
        hazards_->access(rank, idx, op.slice(), true, deps);
        break;
      case OpKind::reduce:
      case OpKind::copy:
        hazards_->access(rank, idx, op.src(), false, deps);
        hazards_->access(rank, idx, op.slice(), true, deps);
        break;
    }
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  if (!deps.empty() && deps.back() == idx) deps.pop_back();
  op.dep_begin = uint32_t(deps_.size());
  op.dep_count = uint32_t(deps.size());
  deps_.insert(deps_.end(), deps.begin(), deps.end());
  ops_.push_back(op);
  op_rank_.push_back(rank);
  return idx;
}

uint32_t Builder::send(int rank, int to, Slice src, After after) {
  Op o;
  o.kind = OpKind::send;
  o.serial = serial_;
  o.peer = to;
  o.buf = src.buf;
  o.off = src.off;
  o.len = src.len;
  return add(rank, o, after.begin(), after.size());
}

uint32_t Builder::recv(int rank, int from, Slice dst, After after) {
  Op o;
  o.kind = OpKind::recv;
  o.peer = from;
  o.buf = dst.buf;
  o.off = dst.off;
  o.len = dst.len;
  return add(rank, o, after.begin(), after.size());
}

namespace {
Op local_op(OpKind kind, Slice dst, Slice src) {
  if (dst.len != src.len)
    throw ScheduleError(cat(op_kind_name(kind), ": destination ", dst.str(), " and source ", src.str(),
                            " differ in length"));
  Op o;
  o.kind = kind;
  o.buf = dst.buf;
  o.off = dst.off;
  o.len = dst.len;
  o.src_buf = src.buf;
  o.src_off = src.off;
  return o;
}
}  // namespace

uint32_t Builder::reduce(int rank, Slice dst, Slice src, After after) {
  return add(rank, local_op(OpKind::reduce, dst, src), after.begin(), after.size());
}

uint32_t Builder::copy(int rank, Slice dst, Slice src, After after) {
  return add(rank, local_op(OpKind::copy, dst, src), after.begin(), after.size());
}

std::vector<uint32_t> Builder::last_writers(int rank, Slice s) const {
  std::vector<uint32_t> w;
  if (hazards_ && wants(rank)) hazards_->writers(rank, s, w);
  std::sort(w.begin(), w.end());
  w.erase(std::unique(w.begin(), w.end()), w.end());
  return w;
}

uint32_t Builder::recv_after(int rank, int from, Slice dst, const std::vector<uint32_t>& after) {
  Op o;
  o.kind = OpKind::recv;
  o.peer = from;
  o.buf = dst.buf;
  o.off = dst.off;
  o.len = dst.len;
  return add(rank, o, after.data(), after.size());
}

uint64_t Builder::alloc_tmp(int rank, uint64_t bytes) {
  uint64_t off = tmp_[size_t(rank)];
  tmp_[size_t(rank)] += bytes;
  return off;
}

void Builder::append(const Schedule& sub, const std::vector<int>& rank_map, SliceMap map) {
  if (int(rank_map.size()) != sub.nranks())
    throw ScheduleError(cat("append: rank map has ", rank_map.size(), " entries for a group of ", sub.nranks()));
  for (int k = 0; k < sub.nranks(); ++k) {
    int rank = rank_map[size_t(k)];
    if (!wants(rank)) {
      count_[size_t(rank)] += uint32_t(sub.num_ops(k));
      continue;
    }
    uint64_t tmp_base = sub.tmp_bytes(k) ? alloc_tmp(rank, sub.tmp_bytes(k)) : 0;
    auto translate = [&](const Slice& s) {
      if (map) return map(k, s);
      if (s.buf == Buf::tmp) return Slice{Buf::tmp, s.off + tmp_base, s.len};
      return s;
    };
    uint32_t base = count_[size_t(rank)];
    for (size_t i = 0; i < sub.num_ops(k); ++i) {
      Op o = sub.op(k, i);
      std::vector<uint32_t> after;
      for (auto* d = sub.deps_begin(k, i); d != sub.deps_end(k, i); ++d) after.push_back(base + *d);
      Slice dst = translate(o.slice());
      o.buf = dst.buf;
      o.off = dst.off;
      if (o.kind == OpKind::reduce || o.kind == OpKind::copy) {
        Slice src = translate(o.src());
        o.src_buf = src.buf;
        o.src_off = src.off;
      }
      if (o.is_comm()) o.peer = rank_map[size_t(o.peer)];
      if (o.kind == OpKind::send) o.serial = o.serial || serial_;
      add(rank, o, after.data(), after.size());
    }
  }
}

Schedule Builder::finish() {
  Schedule s;
  s.coll = coll_;
  s.algorithm = algorithm_;
  const size_t n = size_t(coll_.nranks);
  s.rank_begin_.assign(n + 1, 0);
  for (int32_t r : op_rank_) ++s.rank_begin_[size_t(r) + 1];
  for (size_t r = 0; r < n; ++r) s.rank_begin_[r + 1] += s.rank_begin_[r];
  s.tmp_bytes_ = std::move(tmp_);
  hazards_.reset();
  if (std::is_sorted(op_rank_.begin(), op_rank_.end())) {  // emitted rank by rank: already in place
    s.ops_ = std::move(ops_);
    s.deps_ = std::move(deps_);
    op_rank_.clear();
    return s;
  }
  s.ops_.resize(ops_.size());
  std::vector<uint64_t> fill(s.rank_begin_.begin(), s.rank_begin_.end() - 1);
  std::vector<uint64_t> where(ops_.size());
  for (size_t k = 0; k < ops_.size(); ++k) where[k] = fill[size_t(op_rank_[k])]++;
  // Dependencies laid out in final op order.
  std::vector<uint64_t> dep_pos(ops_.size() + 1, 0);
  for (size_t k = 0; k < ops_.size(); ++k) dep_pos[where[k] + 1] = ops_[k].dep_count;
  for (size_t g = 0; g < ops_.size(); ++g) dep_pos[g + 1] += dep_pos[g];
  s.deps_.resize(deps_.size());
  for (size_t k = 0; k < ops_.size(); ++k) {
    Op o = ops_[k];
    uint64_t g = where[k];
    std::copy(deps_.begin() + o.dep_begin, deps_.begin() + o.dep_begin + o.dep_count, s.deps_.begin() + dep_pos[g]);
    o.dep_begin = uint32_t(dep_pos[g]);
    s.ops_[g] = o;
  }
  ops_.clear();
  op_rank_.clear();
  deps_.clear();
  return s;
}

}  // namespace hetcoll
