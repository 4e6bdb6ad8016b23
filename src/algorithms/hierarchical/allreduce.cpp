// hierarchical, allreduce: up and down the levels in pieces; by slices (slices=1); by shares sized to the uplinks (shares=1).
// The algorithm as a whole: algorithms/hierarchical/hierarchical.cpp.
#include "algorithms/hierarchical/phases.hpp"

namespace hetcoll::hierarchical {

ShareRoles share_roles(const MachineModel& m, const Levels& L) {
  const size_t S = L.subnets.size();
  ShareRoles r;
  r.up.resize(S);
  r.own.resize(S);
  r.down.resize(S);
  r.share.assign(S, 0);
  // Each subnet's rate out: its up rank's best message time to another
  // subnet (the uplink where the pair's other end is no slower).
  constexpr uint64_t kProbe = uint64_t(1) << 20;
  std::vector<double> rate(S, 0);
  for (size_t a = 0; a < S; ++a)
    for (size_t t = 0; t < S; ++t)
      if (t != a) {
        const double took = m.message(L.subnets[a][0], L.subnets[t][0], kProbe).total();
        rate[a] = std::max(rate[a], took > 0 ? std::min(1e30, double(kProbe) / took) : 1e30);
      }
  if (S == 1) {
    r.share = {1.0};
  } else if (S == 2) {
    r.share = {rate[0] / (rate[0] + rate[1]), rate[1] / (rate[0] + rate[1])};
  } else {
    // The time T every owner takes: x_s = max(0, (T rate_s - 1) / (S-2)),
    // summing to 1 (bisection: the sum grows with T).
    auto shares_at = [&](double T) {
      double sum = 0;
      for (size_t a = 0; a < S; ++a) sum += std::max(0.0, (T * rate[a] - 1) / double(S - 2));
      return sum;
    };
    double lo = 0, hi = 1;
    for (size_t a = 0; a < S; ++a) hi = std::max(hi, double(S) / rate[a]);
    for (int i = 0; i < 100; ++i) {
      const double mid = (lo + hi) / 2;
      (shares_at(mid) < 1 ? lo : hi) = mid;
    }
    double sum = 0;
    for (size_t a = 0; a < S; ++a) sum += r.share[a] = std::max(0.0, (hi * rate[a] - 1) / double(S - 2));
    for (double& x : r.share) x /= sum;
  }
  for (size_t a = 0; a < S; ++a) {
    const std::vector<int>& g = L.subnets[a];
    const size_t last = g.size() - 1;
    r.up[a] = g[0];
    if (r.share[a] > 0) {
      r.own[a] = g[std::min<size_t>(1, last)];
      r.down[a] = g[std::min<size_t>(2, last)];
    } else {  // owns nothing: up and down only
      r.own[a] = g[0];
      r.down[a] = g[std::min<size_t>(1, last)];
    }
  }
  return r;
}

namespace {

// g with `first` moved to the front (the others in order): a phase rooted there.
std::vector<int> led_by(const std::vector<int>& g, int first) {
  std::vector<int> v{first};
  for (int x : g)
    if (x != first) v.push_back(x);
  return v;
}

}  // namespace

std::vector<uint64_t> split_by_shares(uint64_t count, const std::vector<double>& share) {
  const size_t S = share.size();
  std::vector<uint64_t> n(S, 0);
  std::vector<std::pair<double, size_t>> rest;
  uint64_t given = 0;
  for (size_t a = 0; a < S; ++a) {
    const double exact = share[a] * double(count);
    n[a] = std::min<uint64_t>(count, uint64_t(exact));
    given += n[a];
    if (share[a] > 0) rest.push_back({exact - double(n[a]), a});
  }
  std::stable_sort(rest.begin(), rest.end(), [](auto& x, auto& y) { return x.first > y.first; });
  for (size_t i = 0; given < count; i = (i + 1) % rest.size(), ++given) ++n[rest[i].second];
  return n;
}

namespace {

Schedule allreduce_shares(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, name_of(ctx));
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  const size_t S = L.subnets.size();
  const ShareRoles R = share_roles(ctx.model, L);
  Levels hosts_only = L;
  for (auto& g : hosts_only.subnets) g.resize(1);
  const uint64_t E = c.elem_size;
  // Elements [first, first + count) of the vector, held by one rank.
  struct Range {
    uint64_t first, count;
    int holder;
  };
  // Consecutive shares of the piece held by the same rank, as ranges.
  auto ranges = [&](const std::vector<uint64_t>& part, uint64_t first, const std::function<int(size_t)>& holder) {
    std::vector<Range> v;
    uint64_t at = first;
    for (size_t o = 0; o < S; ++o) {
      if (part[o] == 0) continue;
      const int h = holder(o);
      if (!v.empty() && v.back().holder == h && v.back().first + v.back().count == at)
        v.back().count += part[o];
      else
        v.push_back({at, part[o], h});
      at += part[o];
    }
    return v;
  };
  const std::vector<Piece> pieces = pieces_of(ctx);
  std::vector<std::vector<uint64_t>> parts;
  for (const Piece& pc : pieces) parts.push_back(split_by_shares(pc.count, R.share));
  auto part_first = [&](size_t i, size_t o) {
    uint64_t f = pieces[i].first;
    for (size_t x = 0; x < o; ++x) f += parts[i][x];
    return f;
  };
  // All the way up first, piece by piece, then all the way down: a rank
  // sends in program order, so piece by piece up and down together would
  // hold piece i+1's partial sum (going up from c1 to c0, say) behind piece
  // i coming down. Up: host reduces; in each subnet a reduce of every share
  // to the rank that sends it on (up, or own for its own share); to each
  // owner the others' partial sums. Those go one after another (serial
  // sends), so that piece i is through, combined and on its way down while
  // i+1 goes up (shared at once, they would all arrive at the end); the way
  // down keeps their pace, a piece leaving its owner once combined.
  b.serial_sends(true);
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& pc = pieces[i];
    const std::vector<Slice> partial = reduce_up(b, ctx, hosts_only, false, nullptr, pc);
    // sums[s][o]: subnet s's partial sum of share o (element-indexed at first).
    std::vector<std::vector<Slice>> sums(S, std::vector<Slice>(S));
    for (size_t s = 0; s < S; ++s) {
      const std::vector<int>& g = L.subnets[s];
      for (const Range& rg : ranges(parts[i], pc.first, [&](size_t o) { return o == s ? R.own[s] : R.up[s]; })) {
        const uint64_t off = (rg.first - pc.first) * E, len = rg.count * E;
        Slice dest = partial[size_t(g[0])].sub(off, len);
        if (g.size() > 1) {
          dest = Slice{Buf::tmp, b.alloc_tmp(rg.holder, len), len};
          const std::vector<int> grp = led_by(g, rg.holder);
          run_phase(b, ctx, grp, sub_call(CollOp::reduce, int(grp.size()), rg.count, c), [&](int k, const Slice& sl) {
            if (sl.buf == Buf::in) return partial[size_t(grp[size_t(k)])].sub(off + sl.off, sl.len);
            return dest.sub(sl.off, sl.len);
          });
        }
        for (size_t o = 0, at = pc.first; o < S; at += parts[i][o], ++o)
          if (parts[i][o] && at >= rg.first && at < rg.first + rg.count)
            sums[s][o] = dest.sub((at - rg.first) * E, parts[i][o] * E);
      }
    }
    for (size_t o = 0; o < S; ++o) {
      if (parts[i][o] == 0) continue;
      std::vector<int> grp{R.own[o]};
      std::vector<size_t> from{o};
      for (size_t t = 0; t < S; ++t)
        if (t != o) grp.push_back(R.up[t]), from.push_back(t);
      const uint64_t at = part_first(i, o) * E;
      if (grp.size() == 1) {  // one subnet: its share is all there is
        if (b.wants(grp[0])) b.copy(grp[0], {Buf::out, at, parts[i][o] * E}, sums[o][o]);
        continue;
      }
      run_phase(b, ctx, grp, sub_call(CollOp::reduce, int(grp.size()), parts[i][o], c), [&](int k, const Slice& sl) {
        if (sl.buf == Buf::in) return sums[from[size_t(k)]][o].sub(sl.off, sl.len);
        return shift(sl, at);  // out: the owner's, in place
      });
    }
  }
  b.serial_sends(false);
  // Down, piece by piece: each owner's result to the others' down ranks;
  // in each subnet from where each share's result is; inside hosts.
  for (size_t i = 0; i < pieces.size(); ++i) {
    const Piece& pc = pieces[i];
    for (size_t o = 0; o < S; ++o) {
      if (parts[i][o] == 0) continue;
      std::vector<int> grp{R.own[o]};
      for (size_t t = 0; t < S; ++t)
        if (t != o) grp.push_back(R.down[t]);
      const uint64_t at = part_first(i, o) * E;
      run_phase(b, ctx, grp, sub_call(CollOp::bcast, int(grp.size()), parts[i][o], c),
                [at](int, const Slice& sl) { return shift(sl, at); });
    }
    for (size_t s = 0; s < S; ++s) {
      const std::vector<int>& g = L.subnets[s];
      if (g.size() <= 1) continue;
      for (const Range& rg : ranges(parts[i], pc.first, [&](size_t o) { return o == s ? R.own[s] : R.down[s]; })) {
        const std::vector<int> grp = led_by(g, rg.holder);
        const uint64_t at = rg.first * E;
        run_phase(b, ctx, grp, sub_call(CollOp::bcast, int(grp.size()), rg.count, c),
                  [at](int, const Slice& sl) { return shift(sl, at); });
      }
    }
    auto place = [at = pc.first * E](int, const Slice& sl) { return shift(sl, at); };
    for (auto& g : L.hosts) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), pc.count, c), place, &L.like(g));
  }
  return b.finish();
}

}  // namespace

Schedule allreduce(const GenContext& ctx) {
  if (param_int(ctx, "shares", 0)) return allreduce_shares(ctx);
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, name_of(ctx));
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  // Combine below the highest level that has several groups, allreduce
  // there, broadcast back down.
  const bool top = L.top.size() > 1, subnet = !top && L.subnets[0].size() > 1;
  Levels hosts_only = L;  // one subnet: combine inside hosts, allreduce among the host leaders
  for (auto& g : hosts_only.subnets) g.resize(1);
  const std::vector<int>& group = top ? L.top : subnet ? L.subnets[0] : L.hosts[0];
  for (const Piece& pc : pieces_of(ctx)) {
    const uint64_t at = pc.first * c.elem_size, m = pc.count * c.elem_size;
    const Slice out{Buf::out, at, m};
    auto place = [at](int, const Slice& s) { return shift(s, at); };
    std::vector<Slice> partial(size_t(c.nranks), Slice{Buf::in, at, m});
    if (top) partial = reduce_up(b, ctx, L, false, nullptr, pc);
    else if (subnet) partial = reduce_up(b, ctx, hosts_only, false, nullptr, pc);
    run_phase(b, ctx, group, sub_call(CollOp::allreduce, int(group.size()), pc.count, c), [&](int k, const Slice& s) {
      if (s.buf == Buf::in) return partial[size_t(group[size_t(k)])].sub(s.off, s.len);
      return shift(s, at);
    });
    if (group.size() <= 1 && b.wants(group[0])) b.copy(group[0], out, partial[size_t(group[0])]);
    if (top)
      for (auto& g : L.subnets) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), pc.count, c), place, &L.like(g));
    if (top || subnet)
      for (auto& g : L.hosts) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), pc.count, c), place, &L.like(g));
  }
  return b.finish();
}

// Allreduce by slices: inside each subnet a reduce-scatter of the hosts'
// partial sums into K slices (K: the fewest hosts of any subnet), the k-th
// host of every subnet allreduces slice k with the k-th hosts of the others
// (K allreduces across the uplinks at once), an allgather of the slices
// inside each subnet, a broadcast inside each host. Every rank ends with
// the cross-subnet allreduces' bits: identical results.
Schedule allreduce_slices(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical[slices=1]");
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  Levels hosts_only = L;
  for (auto& g : hosts_only.subnets) g.resize(1);
  const std::vector<Slice> partial = reduce_up(b, ctx, hosts_only, false, nullptr, Piece{0, c.count});
  size_t K = SIZE_MAX;
  for (auto& g : L.subnets) K = std::min(K, g.size());
  const Blocks slices = even_blocks(c.count, c.elem_size, int(K));
  auto counts_for = [&](size_t members) {
    std::vector<uint64_t> v(members, 0);
    for (size_t k = 0; k < K; ++k) v[k] = slices.len[k] / c.elem_size;
    return v;
  };
  // Slice k of member k of each subnet: combined over the subnet (T), then
  // over all subnets (U).
  std::vector<Slice> T(static_cast<size_t>(c.nranks)), U(static_cast<size_t>(c.nranks));
  for (auto& g : L.subnets) {
    for (size_t k = 0; k < K; ++k) {
      const int r = g[k];
      T[size_t(r)] = {Buf::tmp, b.alloc_tmp(r, slices.len[k]), slices.len[k]};
      U[size_t(r)] = {Buf::tmp, b.alloc_tmp(r, slices.len[k]), slices.len[k]};
    }
    if (g.size() == 1) {
      if (b.wants(g[0])) b.copy(g[0], T[size_t(g[0])], partial[size_t(g[0])]);
      continue;
    }
    Collective rs = Collective::make_v(CollOp::reduce_scatter, counts_for(g.size()), 0, c.elem_size);
    rs.order_free = c.order_free;
    run_phase(b, ctx, g, rs, [&](int k, const Slice& sl) {
      const int r = g[size_t(k)];
      if (sl.buf == Buf::in) return partial[size_t(r)].sub(sl.off, sl.len);
      return T[size_t(r)].sub(sl.off, sl.len);
    }, &L.like(g));
  }
  for (size_t k = 0; k < K; ++k) {
    std::vector<int> across;
    for (auto& g : L.subnets) across.push_back(g[k]);
    if (across.size() == 1) {
      if (b.wants(across[0])) b.copy(across[0], U[size_t(across[0])], T[size_t(across[0])]);
      continue;
    }
    run_phase(b, ctx, across, sub_call(CollOp::allreduce, int(across.size()), slices.len[k] / c.elem_size, c),
              [&](int m, const Slice& sl) {
                const int r = across[size_t(m)];
                return sl.buf == Buf::in ? T[size_t(r)].sub(sl.off, sl.len) : U[size_t(r)].sub(sl.off, sl.len);
              });
  }
  for (auto& g : L.subnets) {
    if (g.size() == 1) {
      if (b.wants(g[0])) b.copy(g[0], {Buf::out, 0, vector_bytes(c)}, U[size_t(g[0])]);
      continue;
    }
    Collective ag = Collective::make_v(CollOp::allgatherv, counts_for(g.size()), 0, c.elem_size);
    run_phase(b, ctx, g, ag, [&](int k, const Slice& sl) {
      if (sl.buf == Buf::in) return U[size_t(g[size_t(k)])].sub(sl.off, sl.len);
      return sl;  // out: the vector, slices in order
    }, &L.like(g));
  }
  auto same = [](int, const Slice& sl) { return sl; };
  for (auto& g : L.hosts) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), c.count, c), same, &L.like(g));
  return b.finish();
}

}  // namespace hetcoll::hierarchical
