#include "schedule/validator.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "schedule/expected_outcome.hpp"
#include "util/error.hpp"

namespace hetcoll {

namespace {

constexpr uint64_t kNone = ~uint64_t(0);

class Errors {
 public:
  explicit Errors(size_t cap) : cap_(cap) {}
  template <class... A>
  void add(const A&... a) {
    ++count_;
    if (list_.size() < cap_) list_.push_back(cat(a...));
  }
  bool any() const { return count_ > 0; }
  std::vector<std::string> take() {
    if (count_ > list_.size()) list_.push_back(cat("... and ", count_ - list_.size(), " more"));
    return std::move(list_);
  }

 private:
  size_t cap_, count_ = 0;
  std::vector<std::string> list_;
};

std::string where(const Schedule& s, uint64_t gid) {
  // Global id → "rank r op i (kind)".
  int lo = 0, hi = s.nranks();
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (s.first_op(mid) <= gid) lo = mid; else hi = mid;
  }
  return cat("rank ", lo, " op ", gid - s.first_op(lo), " (", op_kind_name(s.op_at(gid).kind), ")");
}

// ------------------------------------------------------------ expressions

uint64_t splitmix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Hash-consed combination trees. Node 0 is garbage (uninitialised bytes, or
// anything combined with garbage); nodes 1..p are the contributions of ranks
// 0..p-1; nodes p+1..2p are "the caller's original out bytes" of each rank.
// Combining is commutative per node (a⊕b and b⊕a are the same node, as they
// are bit-for-bit in IEEE arithmetic); association order is kept.
class Exprs {
 public:
  explicit Exprs(int p) : p_(p) {
    nodes_.push_back({0, 0, -1, 0, 0, 0});
    for (int r = 0; r < p; ++r) nodes_.push_back({0, 0, r, 1, splitmix(2 * uint64_t(r)), splitmix(2 * uint64_t(r) + 1)});
    for (int r = 0; r < p; ++r) nodes_.push_back({0, 0, -2 - r, 0, 0, 0});
    h1_.assign(size_t(p) + 1, 0);
    h2_.assign(size_t(p) + 1, 0);
    for (int r = 0; r < p; ++r) {
      h1_[size_t(r) + 1] = h1_[size_t(r)] + nodes_[size_t(r) + 1].h1;
      h2_[size_t(r) + 1] = h2_[size_t(r)] + nodes_[size_t(r) + 1].h2;
    }
  }
  static constexpr uint32_t garbage() { return 0; }
  uint32_t contrib(int r) const { return uint32_t(1 + r); }
  uint32_t original(int r) const { return uint32_t(1 + p_ + r); }
  bool is_data(uint32_t e) const { return e != 0 && nodes_[e].count > 0; }

  uint32_t combine(uint32_t x, uint32_t y) {
    if (!is_data(x) || !is_data(y)) return 0;
    uint32_t a = std::min(x, y), b = std::max(x, y);
    uint64_t key = (uint64_t(a) << 32) | b;
    auto it = cons_.find(key);
    if (it != cons_.end()) return it->second;
    const Node &na = nodes_[a], &nb = nodes_[b];
    nodes_.push_back({a, b, -1, na.count + nb.count, na.h1 + nb.h1, na.h2 + nb.h2});
    uint32_t id = uint32_t(nodes_.size() - 1);
    cons_.emplace(key, id);
    return id;
  }

  // Does e combine exactly ranks lo..hi-1, each once?
  bool is_range(uint32_t e, int lo, int hi) const {
    if (!is_data(e)) return false;
    const Node& n = nodes_[e];
    return n.count == uint64_t(hi - lo) && n.h1 == h1_[size_t(hi)] - h1_[size_t(lo)] &&
           n.h2 == h2_[size_t(hi)] - h2_[size_t(lo)];
  }

  std::string describe(uint32_t e) const {
    if (e == 0) return "uninitialised data";
    if (nodes_[e].leaf <= -2) return cat("rank ", -2 - nodes_[e].leaf, "'s original out bytes");
    std::vector<int> leaves;
    collect(e, leaves);
    std::sort(leaves.begin(), leaves.end());
    std::string s = "contributions {";
    for (size_t i = 0; i < leaves.size() && i < 12; ++i) s += cat(i ? "," : "", leaves[i]);
    if (leaves.size() > 12) s += cat(",... ", leaves.size(), " in all");
    return s + "}";
  }

 private:
  struct Node {
    uint32_t a, b;
    int32_t leaf;  // >= 0 contribution rank; -1 inner/garbage; <= -2 original out
    uint64_t count, h1, h2;
  };
  void collect(uint32_t e, std::vector<int>& out) const {
    if (out.size() > 64) return;
    const Node& n = nodes_[e];
    if (n.leaf >= 0) { out.push_back(n.leaf); return; }
    if (n.count == 0) return;
    collect(n.a, out);
    collect(n.b, out);
  }
  int p_;
  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, uint32_t> cons_;
  std::vector<uint64_t> h1_, h2_;
};

// ------------------------------------------------------------ byte contents

struct Piece {
  uint64_t len;
  uint32_t expr;
  uint64_t origin;  // offset, in the contributors' `in`, of this piece's first byte
};

// Contents of one storage area: segments keyed by start offset.
class Contents {
 public:
  std::vector<Piece> read(uint64_t off, uint64_t len) const {
    std::vector<Piece> out;
    uint64_t cur = off, end = off + len;
    auto it = segs_.upper_bound(off);
    if (it != segs_.begin()) --it;
    for (; it != segs_.end() && cur < end; ++it) {
      uint64_t s = it->first, e = it->second.end;
      if (e <= cur) continue;
      if (s >= end) break;
      if (s > cur) { out.push_back({s - cur, 0, 0}); cur = s; }
      uint64_t take = std::min(e, end) - cur;
      out.push_back({take, it->second.expr, it->second.origin + (cur - s)});
      cur += take;
    }
    if (cur < end) out.push_back({end - cur, 0, 0});
    return out;
  }

  void write(uint64_t off, const std::vector<Piece>& pieces) {
    uint64_t len = 0;
    for (auto& p : pieces) len += p.len;
    if (len == 0) return;
    split(off);
    split(off + len);
    segs_.erase(segs_.lower_bound(off), segs_.lower_bound(off + len));
    uint64_t cur = off;
    for (auto& p : pieces) {
      if (p.len == 0) continue;
      if (p.expr != 0) segs_[cur] = {cur + p.len, p.expr, p.origin};
      cur += p.len;
    }
  }

 private:
  struct Seg {
    uint64_t end;
    uint32_t expr;
    uint64_t origin;
  };
  void split(uint64_t x) {
    auto it = segs_.upper_bound(x);
    if (it == segs_.begin()) return;
    --it;
    if (it->first < x && x < it->second.end) {
      Seg right{it->second.end, it->second.expr, it->second.origin + (x - it->first)};
      it->second.end = x;
      segs_[x] = right;
    }
  }
  std::map<uint64_t, Seg> segs_;
};

// Where a logical buffer lives: a storage area and an offset into it.
struct Place {
  int storage;
  uint64_t base;
};

struct RankLayout {
  Place place[kNumBufs];
};

RankLayout layout_of(const Schedule&, const ValidationOptions& opt, int r) {
  RankLayout L;
  L.place[size_t(Buf::tmp)] = {2, 0};
  std::optional<int64_t> alias;
  if (size_t(r) < opt.in_minus_out.size()) alias = opt.in_minus_out[size_t(r)];
  if (alias) {
    int64_t d = *alias;
    L.place[size_t(Buf::in)] = {1, uint64_t(std::max<int64_t>(0, d))};
    L.place[size_t(Buf::out)] = {1, uint64_t(std::max<int64_t>(0, -d))};
  } else {
    L.place[size_t(Buf::in)] = {0, 0};
    L.place[size_t(Buf::out)] = {1, 0};
  }
  return L;
}

// ------------------------------------------------------------ checks

void check_structure(const Schedule& s, const ValidationOptions& opt, Errors& err) {
  const int p = s.nranks();
  const uint32_t e = s.coll.elem_size;
  for (int r = 0; r < p; ++r) {
    RankLayout L = layout_of(s, opt, r);
    auto in_bounds = [&](const Slice& sl) { return sl.len <= s.buffer_bytes(r, sl.buf) && sl.off <= s.buffer_bytes(r, sl.buf) - sl.len; };
    for (size_t i = 0; i < s.num_ops(r); ++i) {
      const Op& o = s.op(r, i);
      auto at = [&]() { return cat("rank ", r, " op ", i, " (", op_kind_name(o.kind), ")"); };
      for (auto* d = s.deps_begin(r, i); d != s.deps_end(r, i); ++d)
        if (*d >= i) err.add(at(), ": depends on op ", *d, ", which is not earlier");
      if (o.is_comm()) {
        if (o.peer < 0 || o.peer >= p) err.add(at(), ": peer ", o.peer, " is not in the group of ", p);
        else if (o.peer == r) err.add(at(), ": sends to itself (use copy)");
      }
      if (!in_bounds(o.slice()))
        err.add(at(), ": ", o.slice().str(), " exceeds ", buf_name(o.buf), " (", s.buffer_bytes(r, o.buf), " bytes)");
      if (o.kind != OpKind::send && o.buf == Buf::in) err.add(at(), ": writes the read-only send buffer");
      if (o.kind == OpKind::reduce || o.kind == OpKind::copy) {
        if (!in_bounds(o.src()))
          err.add(at(), ": ", o.src().str(), " exceeds ", buf_name(o.src_buf), " (", s.buffer_bytes(r, o.src_buf),
                  " bytes)");
        Place a = L.place[size_t(o.buf)], b = L.place[size_t(o.src_buf)];
        if (a.storage == b.storage && o.len) {
          uint64_t da = a.base + o.off, sb = b.base + o.src_off;
          bool same = da == sb;
          bool overlap = da < sb + o.len && sb < da + o.len;
          if (overlap && (!same || o.kind == OpKind::reduce))
            err.add(at(), ": source ", o.src().str(), " and destination ", o.slice().str(), " overlap");
        }
      }
      if (o.kind == OpKind::reduce && (o.len % e || o.off % e || o.src_off % e))
        err.add(at(), ": reduces ", o.slice().str(), " which is not whole ", e, "-byte elements");
    }
  }
}

// Every two ops of a rank that touch the same bytes, one of them writing,
// must be ordered by the rank's dependencies. Checked in program order
// (dependencies point to earlier ops) against an interval map of each
// storage: per byte range, its last writer and the readers since. A new
// access must be ordered after the last writer, and a new write after the
// readers since; by transitivity that orders every conflicting pair, with
// memory linear in the ops (no k×k closure). Whether a is an ancestor of b
// is a backward search from b that never goes below a; conflicting ops are
// almost always direct dependencies (the builder infers them), so it rarely
// takes more than a step.
class Ancestry {
 public:
  Ancestry(const Schedule& s, int r) : s_(s), r_(r), seen_(s.num_ops(r), 0) {}
  bool ordered(uint32_t a, uint32_t b) {  // a before b, a < b
    for (auto* d = s_.deps_begin(r_, b); d != s_.deps_end(r_, b); ++d)
      if (*d == a) return true;
    if (++stamp_ == 0) {
      std::fill(seen_.begin(), seen_.end(), 0);
      stamp_ = 1;
    }
    stack_.assign(1, b);
    seen_[b] = stamp_;
    while (!stack_.empty()) {
      uint32_t x = stack_.back();
      stack_.pop_back();
      for (auto* d = s_.deps_begin(r_, x); d != s_.deps_end(r_, x); ++d) {
        uint32_t y = *d;
        if (y == a) return true;
        if (y < a || y >= x || seen_[y] == stamp_) continue;
        seen_[y] = stamp_;
        stack_.push_back(y);
      }
    }
    return false;
  }

 private:
  const Schedule& s_;
  int r_;
  std::vector<uint32_t> seen_;
  uint32_t stamp_ = 0;
  std::vector<uint32_t> stack_;
};

void check_races(const Schedule& s, const ValidationOptions& opt, Errors& err) {
  uint64_t work = 0;
  struct Segment {
    uint64_t hi;
    int64_t writer = -1;           // the last op that wrote these bytes
    std::vector<uint32_t> readers;  // ops that read them since
  };
  for (int r = 0; r < s.nranks(); ++r) {
    const size_t k = s.num_ops(r);
    if (k < 2) continue;
    RankLayout L = layout_of(s, opt, r);
    Ancestry anc(s, r);
    std::map<uint64_t, Segment> storage[3];  // by place.storage: lo → segment
    std::set<std::pair<uint32_t, uint32_t>> reported;
    auto race = [&](uint32_t a, uint32_t b) {
      if (reported.insert({a, b}).second)
        err.add("rank ", r, ": ops ", a, " and ", b, " touch the same bytes, one writing, with no dependency between them");
    };
    // The segment boundaries of [lo, hi) in `m`, split so that segments
    // start at lo and end at hi.
    auto split = [](std::map<uint64_t, Segment>& m, uint64_t at) {
      auto it = m.upper_bound(at);
      if (it == m.begin()) return;
      --it;
      if (it->first < at && it->second.hi > at) {
        Segment right = it->second;
        it->second.hi = at;
        m.emplace(at, std::move(right));
      }
    };
    auto touch = [&](Buf b, uint64_t off, uint64_t len, uint32_t op, bool write) {
      if (len == 0) return;
      const Place pl = L.place[size_t(b)];
      auto& m = storage[pl.storage];
      const uint64_t lo = pl.base + off, hi = lo + len;
      split(m, lo);
      split(m, hi);
      // Fill the gaps in [lo, hi) with fresh segments.
      uint64_t at = lo;
      for (auto it = m.lower_bound(lo); at < hi;) {
        uint64_t next = it == m.end() ? hi : std::min(hi, it->first);
        if (next > at) it = m.emplace_hint(it, at, Segment{next, -1, {}});
        at = it->second.hi;
        ++it;
      }
      for (auto it = m.lower_bound(lo); it != m.end() && it->first < hi; ++it) {
        Segment& sg = it->second;
        work += 1 + (write ? sg.readers.size() : 0);
        if (opt.work_limit && work > opt.work_limit)
          throw TooLarge(cat("checking ", s.algorithm, " (", s.coll.describe(), ") for races takes more than ",
                             opt.work_limit, " steps"));
        if (sg.writer >= 0 && uint32_t(sg.writer) != op && !anc.ordered(uint32_t(sg.writer), op)) race(uint32_t(sg.writer), op);
        if (write) {
          for (uint32_t rd : sg.readers)
            if (rd != op && !anc.ordered(rd, op)) race(rd, op);
          sg.writer = op;
          sg.readers.clear();
        } else if (sg.readers.empty() || sg.readers.back() != op) {
          sg.readers.push_back(op);
        }
      }
    };
    for (size_t i = 0; i < k; ++i) {
      const Op& o = s.op(r, i);
      const uint32_t op = uint32_t(i);
      switch (o.kind) {
        case OpKind::send: touch(o.buf, o.off, o.len, op, false); break;
        case OpKind::recv: touch(o.buf, o.off, o.len, op, true); break;
        case OpKind::reduce:
        case OpKind::copy:
          touch(o.src_buf, o.src_off, o.len, op, false);
          touch(o.buf, o.off, o.len, op, true);
          break;
      }
    }
  }
}

}  // namespace

// ------------------------------------------------------------ matching

Matching match_messages(const Schedule& s, size_t max_errors) {
  const int p = s.nranks();
  Matching m;
  m.partner.assign(s.total_ops(), kNone);
  Errors err(max_errors);
  // Sends of each rank sorted by destination, stable in program order.
  std::vector<uint64_t> send_begin(static_cast<size_t>(p) + 1, 0);
  std::vector<std::pair<int32_t, uint64_t>> sends;  // (dst, gid)
  for (int r = 0; r < p; ++r) {
    size_t start = sends.size();
    for (size_t i = 0; i < s.num_ops(r); ++i) {
      const Op& o = s.op(r, i);
      if (o.kind == OpKind::send && o.peer >= 0 && o.peer < p) sends.emplace_back(o.peer, s.first_op(r) + i);
    }
    // (dst, gid): gids rise in program order, so this keeps program order per dst.
    std::sort(sends.begin() + long(start), sends.end());
    send_begin[size_t(r) + 1] = sends.size();
  }
  std::vector<uint32_t> seen(static_cast<size_t>(p), 0);
  std::vector<int32_t> touched;
  for (int j = 0; j < p; ++j) {
    for (size_t i = 0; i < s.num_ops(j); ++i) {
      const Op& o = s.op(j, i);
      if (o.kind != OpKind::recv || o.peer < 0 || o.peer >= p) continue;
      int src = o.peer;
      uint32_t k = seen[size_t(src)]++;
      if (k == 0) touched.push_back(src);
      auto b = sends.begin() + long(send_begin[size_t(src)]), e = sends.begin() + long(send_begin[size_t(src) + 1]);
      auto lo = std::lower_bound(b, e, j, [](const auto& x, int v) { return x.first < v; });
      auto hi = std::upper_bound(lo, e, j, [](int v, const auto& x) { return v < x.first; });
      uint64_t gid = s.first_op(j) + i;
      if (uint64_t(hi - lo) <= k) {
        err.add("rank ", j, " op ", i, ": receive #", k + 1, " from rank ", src, " has no matching send");
        continue;
      }
      uint64_t sg = (lo + long(k))->second;
      m.partner[gid] = sg;
      m.partner[sg] = gid;
      if (s.op_at(sg).len != o.len)
        err.add(where(s, sg), " sends ", s.op_at(sg).len, " bytes to rank ", j, " but op ", i, " there receives ",
                o.len);
    }
    for (int32_t t : touched) seen[size_t(t)] = 0;
    touched.clear();
  }
  for (auto& sd : sends)
    if (m.partner[sd.second] == kNone)
      err.add(where(s, sd.second), " to rank ", sd.first, " has no matching receive");
  m.errors = err.take();
  return m;
}

// ------------------------------------------------------------ validate

std::string ValidationReport::summary() const {
  if (ok) return cat("ok: ", messages, " messages, ", bytes, " bytes", rank_consistent ? "" : ", ranks combine in different orders");
  std::string s = cat("invalid (", errors.size(), " problem", errors.size() == 1 ? "" : "s", "): ");
  for (size_t i = 0; i < errors.size() && i < 4; ++i) s += (i ? "; " : "") + errors[i];
  return s;
}

namespace {

// The schedule run on symbols: every op's events (posted, complete) in an
// order its dependencies, messages and send port allow, each buffer byte's
// contents as an expression of the ranks' inputs.
class SymbolicRun {
 public:
  SymbolicRun(const Schedule& s, const ValidationOptions& opt, const Matching& m, Errors& err)
      : s_(s), opt_(opt), m_(m), err_(err), p_(s.nranks()), N_(s.total_ops()), deps_(build_dependents(s)),
        exprs_(s.nranks()), barrier_(s.coll.op == CollOp::barrier), words_((size_t(s.nranks()) + 63) / 64) {
    graph();
    initial_state();
  }
  // Every event in turn; false (said in err) when some can never happen.
  bool run();
  // What every rank ends with against what the collective promises.
  void check_outcome();
  // Allreduce: whether every rank combined in the same order.
  bool rank_consistent();

 private:
  void graph();
  void initial_state();
  void complete(uint64_t g, int r, uint64_t node);
  void reduce(uint64_t g, int r);
  void deadlock();
  void check_barrier();
  std::vector<Piece> read(int r, Buf b, uint64_t off, uint64_t len) {
    Place pl = layout_[size_t(r)].place[size_t(b)];
    std::vector<Piece> v = store_[size_t(r)][size_t(pl.storage)].read(pl.base + off, len);
    spend(v.size());
    return v;
  }
  void write(int r, Buf b, uint64_t off, const std::vector<Piece>& v) {
    Place pl = layout_[size_t(r)].place[size_t(b)];
    store_[size_t(r)][size_t(pl.storage)].write(pl.base + off, v);
    spend(v.size());
  }
  void spend(uint64_t pieces) {
    work_ += 1 + pieces;
    if (opt_.work_limit && work_ > opt_.work_limit)
      throw TooLarge(cat("validating ", s_.algorithm, " (", s_.coll.describe(), ") takes more than ", opt_.work_limit,
                         " steps (pieces of data followed)"));
  }
  uint64_t work_ = 0;
  uint64_t* know_row(uint64_t node) { return &know_[node * words_]; }
  void release(uint64_t node, uint64_t from) {
    if (barrier_) {
      uint64_t* dst = know_row(node);
      const uint64_t* src = know_row(from);
      for (size_t w = 0; w < words_; ++w) dst[w] |= src[w];
    }
    if (--indeg_[node] == 0) ready_.push_back(node);
  }

  const Schedule& s_;
  const ValidationOptions& opt_;
  const Matching& m_;
  Errors& err_;
  const int p_;
  const uint64_t N_;
  const Dependents deps_;
  // Global graph: node 2g = op g posted (its dependencies done), 2g+1 = op g
  // complete. A send completes only once its receive is posted and vice versa.
  std::vector<uint64_t> rank_of_;
  std::vector<uint32_t> indeg_;
  std::vector<uint64_t> next_send_;
  // Symbolic state.
  Exprs exprs_;
  std::vector<std::array<Contents, 3>> store_;
  std::vector<RankLayout> layout_;
  const bool barrier_;
  const size_t words_;
  std::vector<uint64_t> know_;  // per node, which ranks have entered (barrier only)
  std::unordered_map<uint64_t, std::vector<Piece>> in_flight_;
  std::deque<uint64_t> ready_;
  uint64_t processed_ = 0;
};

void SymbolicRun::graph() {
  rank_of_.assign(N_, 0);
  for (int r = 0; r < p_; ++r)
    for (size_t i = 0; i < s_.num_ops(r); ++i) rank_of_[s_.first_op(r) + i] = uint64_t(r);
  indeg_.assign(2 * N_, 0);
  // Sends leave a rank in program order, one at a time (the executor's send
  // port, exec/executor.hpp): a send is posted only once the rank's previous
  // send has completed. With more ports the order is the same and only
  // fewer waits remain, so a schedule that finishes here finishes with any.
  next_send_.assign(N_, kNone);
  for (uint64_t g = 0; g < N_; ++g) {
    indeg_[2 * g] = s_.op_at(g).dep_count;
    indeg_[2 * g + 1] = 1 + (s_.op_at(g).is_comm() ? 1 : 0);
  }
  for (int r = 0; r < p_; ++r) {
    uint64_t prev = kNone;
    for (size_t i = 0; i < s_.num_ops(r); ++i) {
      const uint64_t g = s_.first_op(r) + i;
      if (s_.op_at(g).kind != OpKind::send) continue;
      if (prev != kNone) {
        next_send_[prev] = g;
        ++indeg_[2 * g];
      }
      prev = g;
    }
  }
}

void SymbolicRun::initial_state() {
  store_.resize(size_t(p_));
  layout_.resize(size_t(p_));
  for (int r = 0; r < p_; ++r) {
    layout_[size_t(r)] = layout_of(s_, opt_, r);
    RankLayout& L = layout_[size_t(r)];
    uint64_t out_n = s_.buffer_bytes(r, Buf::out), in_n = s_.buffer_bytes(r, Buf::in);
    bool root_holds = s_.coll.op == CollOp::bcast && r == s_.coll.root;
    Place po = L.place[size_t(Buf::out)], pi = L.place[size_t(Buf::in)];
    store_[size_t(r)][size_t(po.storage)].write(
        po.base, {{out_n, root_holds ? exprs_.contrib(r) : exprs_.original(r), 0}});
    store_[size_t(r)][size_t(pi.storage)].write(pi.base, {{in_n, exprs_.contrib(r), 0}});
  }
  if (barrier_) know_.assign(2 * N_ * words_, 0);
  for (uint64_t g = 0; g < N_; ++g)
    if (indeg_[2 * g] == 0) ready_.push_back(2 * g);
}

bool SymbolicRun::run() {
  while (!ready_.empty()) {
    uint64_t node = ready_.front();
    ready_.pop_front();
    ++processed_;
    uint64_t g = node / 2;
    const Op& o = s_.op_at(g);
    int r = int(rank_of_[g]);
    if (node % 2 == 0) {  // posted
      if (barrier_) know_row(node)[size_t(r) / 64] |= uint64_t(1) << (r % 64);
      if (o.kind == OpKind::send) in_flight_[g] = read(r, o.buf, o.off, o.len);
      release(2 * g + 1, node);
      if (o.is_comm()) release(2 * m_.partner[g] + 1, node);
    } else {
      complete(g, r, node);
    }
  }
  if (processed_ == 2 * N_) return true;
  deadlock();
  return false;
}

void SymbolicRun::complete(uint64_t g, int r, uint64_t node) {
  const Op& o = s_.op_at(g);
  switch (o.kind) {
    case OpKind::send:
      if (next_send_[g] != kNone) release(2 * next_send_[g], node);
      break;
    case OpKind::recv: {
      auto it = in_flight_.find(m_.partner[g]);
      write(r, o.buf, o.off, it->second);
      in_flight_.erase(it);
      break;
    }
    case OpKind::copy:
      write(r, o.buf, o.off, read(r, o.src_buf, o.src_off, o.len));
      break;
    case OpKind::reduce:
      reduce(g, r);
      break;
  }
  for (uint64_t k = deps_.begin[g]; k < deps_.begin[g + 1]; ++k) release(2 * deps_.list[k], node);
}

void SymbolicRun::reduce(uint64_t g, int r) {
  const Op& o = s_.op_at(g);
  auto dst = read(r, o.buf, o.off, o.len), src = read(r, o.src_buf, o.src_off, o.len);
  std::vector<Piece> out;
  size_t a = 0, b = 0;
  uint64_t ua = 0, ub = 0;  // bytes used of dst[a], src[b]
  while (a < dst.size() && b < src.size()) {
    uint64_t n = std::min(dst[a].len - ua, src[b].len - ub);
    uint64_t oa = dst[a].origin + ua, ob = src[b].origin + ub;
    uint32_t ea = dst[a].expr, eb = src[b].expr;
    uint32_t e = exprs_.combine(ea, eb);
    if (exprs_.is_data(ea) && exprs_.is_data(eb) && oa != ob) {
      err_.add("rank ", r, " op ", g - s_.first_op(r), " (reduce): combines element at input offset ", oa,
               " with element at input offset ", ob);
      e = 0;
    }
    out.push_back({n, e, oa});
    ua += n;
    ub += n;
    if (ua == dst[a].len) { ++a; ua = 0; }
    if (ub == src[b].len) { ++b; ub = 0; }
  }
  write(r, o.buf, o.off, out);
}

void SymbolicRun::deadlock() {
  size_t shown = 0;
  for (uint64_t g = 0; g < N_ && shown < 4; ++g)
    if (indeg_[2 * g + 1] > 0 && s_.op_at(g).is_comm()) {
      const Op& o = s_.op_at(g);
      err_.add("deadlock: ", where(s_, g), o.kind == OpKind::send ? " to rank " : " from rank ", o.peer,
               " can never complete");
      ++shown;
    }
  if (!shown) err_.add("deadlock: ", 2 * N_ - processed_, " op events can never happen (dependency cycle)");
}

void SymbolicRun::check_barrier() {
  for (int r = 0; r < p_; ++r) {
    std::vector<uint64_t> heard(words_, 0);
    heard[size_t(r) / 64] |= uint64_t(1) << (r % 64);
    for (size_t i = 0; i < s_.num_ops(r); ++i) {
      const uint64_t* row = know_row(2 * (s_.first_op(r) + i) + 1);
      for (size_t w = 0; w < words_; ++w) heard[w] |= row[w];
    }
    for (int q = 0; q < p_; ++q)
      if (!((heard[size_t(q) / 64] >> (q % 64)) & 1)) {
        err_.add("barrier: rank ", r, " can leave before rank ", q, " has entered");
        break;
      }
  }
}

void SymbolicRun::check_outcome() {
  if (barrier_) return check_barrier();
  for (int r = 0; r < p_; ++r) {
    for (const Expect& x : expected_outcome(s_.coll, r)) {
      if (x.kind == Expect::Any || x.len == 0) continue;
      uint64_t cur = x.off;
      for (const Piece& pc : read(r, Buf::out, x.off, x.len)) {
        uint64_t want_origin = x.origin + (cur - x.off);
        bool good;
        if (x.kind == Expect::Untouched) good = pc.expr == exprs_.original(r) && pc.origin == cur;
        else good = exprs_.is_range(pc.expr, x.lo, x.hi) && pc.origin == want_origin;
        if (!good) {
          std::string want = x.kind == Expect::Untouched
                                 ? "its original bytes (outside the result)"
                                 : (x.hi - x.lo == 1 ? cat("rank ", x.lo, "'s data")
                                                     : cat("the combination of ranks ", x.lo, "..", x.hi - 1)) +
                                       cat(" from input offset ", want_origin);
          std::string got = exprs_.describe(pc.expr);
          if (exprs_.is_data(pc.expr)) got += cat(" from input offset ", pc.origin);
          err_.add("rank ", r, " out[", cur, ":", cur + pc.len, "] holds ", got, "; expected ", want);
        }
        cur += pc.len;
      }
    }
  }
}

bool SymbolicRun::rank_consistent() {
  auto ref = read(0, Buf::out, 0, s_.buffer_bytes(0, Buf::out));
  for (int r = 1; r < p_; ++r) {
    auto mine = read(r, Buf::out, 0, s_.buffer_bytes(r, Buf::out));
    // Compare byte ranges piece by piece.
    size_t a = 0, b = 0;
    uint64_t ua = 0, ub = 0;
    while (a < ref.size() && b < mine.size()) {
      if (ref[a].expr != mine[b].expr) return false;
      uint64_t n = std::min(ref[a].len - ua, mine[b].len - ub);
      ua += n;
      ub += n;
      if (ua == ref[a].len) { ++a; ua = 0; }
      if (ub == mine[b].len) { ++b; ub = 0; }
    }
  }
  return true;
}

}  // namespace

ValidationReport validate(const Schedule& s, const ValidationOptions& opt) {
  ValidationReport rep;
  Errors err(opt.max_errors);
  rep.messages = s.message_count();
  rep.bytes = s.bytes_sent();
  auto finish = [&]() {
    rep.errors = err.take();
    rep.ok = rep.errors.empty();
    if (!rep.ok) rep.rank_consistent = false;
    return rep;
  };
  try {
    s.coll.check();
  } catch (const InputError& e) {
    err.add("collective: ", e.what());
    return finish();
  }
  check_structure(s, opt, err);
  if (err.any()) return finish();
  Matching m = match_messages(s, opt.max_errors);
  for (auto& e : m.errors) err.add(e);
  if (err.any()) return finish();
  if (opt.check_races) check_races(s, opt, err);
  if (err.any()) return finish();

  SymbolicRun run(s, opt, m, err);
  if (!run.run() || err.any()) return finish();
  run.check_outcome();
  if (err.any()) return finish();
  if (s.coll.op == CollOp::allreduce && s.nranks() > 1) rep.rank_consistent = run.rank_consistent();
  return finish();
}

void validate_or_throw(const Schedule& s, const ValidationOptions& opt) {
  ValidationReport rep = validate(s, opt);
  if (!rep.ok) throw ScheduleError(cat(s.algorithm.empty() ? "schedule" : s.algorithm, " (", s.coll.describe(), "): ",
                                       rep.summary()));
}

}  // namespace hetcoll
