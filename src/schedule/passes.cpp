#include "schedule/passes.hpp"

#include <algorithm>

namespace hetcoll {

namespace {

// How far past a copy the pass looks for sends of its bytes (the sends that
// matter come right after it; this bounds the cost on huge programs).
constexpr size_t kScan = 1024;

bool writes(const Op& o) { return o.kind != OpKind::send; }

bool overlaps(const Op& o, Buf buf, uint64_t off, uint64_t len) {
  return o.buf == buf && o.len > 0 && len > 0 && o.off < off + len && off < o.off + o.len;
}

bool erase(std::vector<uint32_t>& v, uint32_t x) {
  auto it = std::find(v.begin(), v.end(), x);
  if (it == v.end()) return false;
  v.erase(it);
  return true;
}

// Unpacks each rank's program into op and dependency lists, lets `edit`
// rewrite them (it returns how many rewrites it made) and packs the result:
// the schedule itself when nothing changed or it is in place (then `in`
// may be written, and both passes rely on it staying as it is).
template <class Edit>
Schedule rewrite_ranks(const Schedule& s, size_t* count, Edit&& edit) {
  if (count) *count = 0;
  if (s.coll.in_place) return s;
  const size_t p = size_t(s.nranks());
  std::vector<std::vector<Op>> ops(p);
  std::vector<std::vector<std::vector<uint32_t>>> deps(p);
  std::vector<uint64_t> tmp(p);
  size_t total = 0;
  for (size_t r = 0; r < p; ++r) {
    const int R = int(r);
    const size_t n = s.num_ops(R);
    tmp[r] = s.tmp_bytes(R);
    ops[r].reserve(n);
    deps[r].resize(n);
    for (size_t i = 0; i < n; ++i) {
      ops[r].push_back(s.op(R, i));
      deps[r][i].assign(s.deps_begin(R, i), s.deps_end(R, i));
    }
    total += edit(ops[r], deps[r]);
  }
  if (count) *count = total;
  if (total == 0) return s;
  return schedule_from_parts(s.coll, s.algorithm, std::move(ops), std::move(deps), std::move(tmp));
}

}  // namespace

Schedule forward_input_copies(const Schedule& s, size_t* forwarded) {
  // `in` is never written unless in place: then there is nothing to forward.
  return rewrite_ranks(s, forwarded, [](std::vector<Op>& O, std::vector<std::vector<uint32_t>>& D) {
    const size_t n = O.size();
    size_t count = 0;
    for (size_t c = 0; c < n; ++c) {
      const Op copy = O[c];
      if (copy.kind != OpKind::copy || copy.src_buf != Buf::in || copy.buf == Buf::in || copy.len == 0) continue;
      const uint64_t lo = copy.off, hi = copy.off + copy.len;
      for (size_t j = c + 1; j < n && j <= c + kScan; ++j) {
        Op& o = O[j];
        if (o.kind == OpKind::send && o.buf == copy.buf && o.len > 0 && o.off >= lo && o.off + o.len <= hi &&
            std::find(D[j].begin(), D[j].end(), uint32_t(c)) != D[j].end()) {
          const uint64_t old_off = o.off;
          const std::vector<uint32_t> before = D[j];  // every order the send had
          o.buf = Buf::in;
          o.off = copy.src_off + (old_off - lo);
          erase(D[j], uint32_t(c));
          // Writers of the old bytes waited for the send to read them; now
          // they need not, but keep every other order the send carried.
          for (size_t k = j + 1; k < n; ++k) {
            if (!writes(O[k]) || !overlaps(O[k], copy.buf, old_off, o.len) || O[k].buf == Buf::in) continue;
            if (!erase(D[k], uint32_t(j))) continue;
            for (uint32_t d : before)
              if (std::find(D[k].begin(), D[k].end(), d) == D[k].end()) D[k].push_back(d);
            std::sort(D[k].begin(), D[k].end());
          }
          ++count;
        }
        if (writes(o) && overlaps(o, copy.buf, lo, copy.len)) break;  // the copied bytes change here
      }
    }
    return count;
  });
}

namespace {
bool reads(const Op& o, Buf buf, uint64_t off, uint64_t len) {
  Slice r{buf, off, len};
  switch (o.kind) {
    case OpKind::send: return o.slice().overlaps(r);
    case OpKind::recv: return false;
    case OpKind::copy: return o.src().overlaps(r);
    case OpKind::reduce: return o.src().overlaps(r) || o.slice().overlaps(r);
  }
  return false;
}
bool touches(const Op& o, const Slice& r) { return reads(o, r.buf, r.off, r.len) || (writes(o) && o.slice().overlaps(r)); }
bool has(const std::vector<uint32_t>& v, uint32_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }
}  // namespace

Schedule receive_into_accumulators(const Schedule& s, size_t* rewritten) {
  return rewrite_ranks(s, rewritten, [](std::vector<Op>& O, std::vector<std::vector<uint32_t>>& D) {
    const size_t n = O.size();
    size_t count = 0;
    for (size_t d = 0; d < n; ++d) {
      const Op red = O[d];
      // T must be scratch: bytes of out the receive brought may be results.
      if (red.kind != OpKind::reduce || red.len == 0 || red.buf == Buf::in || red.src_buf != Buf::tmp) continue;
      const Slice W = red.slice(), T = red.src();
      if (W.overlaps(T)) continue;
      // Backwards from d: the receive that last wrote T, the copy of the
      // input that last wrote W, and nobody else touching W in between.
      size_t q = SIZE_MAX, c = SIZE_MAX;
      for (size_t k = d; k-- > 0 && d - k <= kScan;) {
        const Op& o = O[k];
        const bool w_touch = touches(o, W);
        if (q == SIZE_MAX && writes(o) && o.slice().overlaps(T)) {
          if (o.kind != OpKind::recv || o.buf != T.buf || o.off != T.off || o.len != T.len || w_touch ||
              !has(D[d], uint32_t(k)))
            break;  // T comes from something else
          q = k;
          continue;
        }
        if (w_touch) {  // the first toucher of W before d must be the copy
          if (o.kind == OpKind::copy && o.src_buf == Buf::in && o.buf == W.buf && o.off <= W.off && W.end() <= o.off + o.len)
            c = k;
          break;
        }
      }
      if (c == SIZE_MAX || q == SIZE_MAX || q < c) continue;
      // After q and until T is next overwritten whole, only d may read T.
      bool sole = true;
      for (size_t k = q + 1; k < n && sole; ++k) {
        if (k == d) continue;
        if (reads(O[k], T.buf, T.off, T.len)) sole = false;
        else if (writes(O[k]) && O[k].buf == T.buf && O[k].off <= T.off && T.end() <= O[k].off + O[k].len) break;
      }
      if (!sole) continue;
      const Op copy = O[c];
      O[q].buf = W.buf;
      O[q].off = W.off;
      O[d].src_buf = Buf::in;
      O[d].src_off = copy.src_off + (W.off - copy.off);
      if (!has(D[q], uint32_t(c))) {
        D[q].push_back(uint32_t(c));
        std::sort(D[q].begin(), D[q].end());
      }
      ++count;
    }
    return count;
  });
}

Schedule optimize_for_execution(const Schedule& s, PassStats* stats) {
  PassStats st;
  Schedule out = receive_into_accumulators(forward_input_copies(s, &st.forwarded), &st.received_in_place);
  if (stats) *stats = st;
  return out;
}

}  // namespace hetcoll
