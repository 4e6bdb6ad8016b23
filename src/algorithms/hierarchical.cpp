// hierarchical — every collective in phases that follow the machine: inside
// each host (shared memory), among the hosts of each subnet, among the
// subnets (one leader each, the root's subnet leading). Each phase is a
// collective on that level's groups whose algorithm the model picks by
// simulating the group's candidates on the group's view of the machine
// (hierarchy.hpp: best_flat) — a pipelined chain across slow uplinks, a
// binomial tree inside a subnet, whatever is fastest there.
//
//   bcast      top bcast → subnet bcasts → host bcasts
//   reduce     host reduces → subnet reduces → top reduce to the root
//   allreduce  host reduces → subnet reduces → top allreduce among subnet
//              leaders → subnet bcasts → host bcasts (every rank gets the
//              top allreduce's bits: identical results)
//   allgather(v)  host gathers → subnet gathervs → top allgatherv of subnet
//              blocks → leaders put blocks in rank order → subnet and host
//              bcasts of the whole vector (blocks with gaps or out of rank
//              order: of the staged blocks, every rank puts them in place)
//   reduce_scatter(_block)  vectors laid out subnet by subnet → host and
//              subnet reduces → reduce-scatter among subnet leaders (each
//              gets its subnet's blocks) → scatters inside subnets and hosts
//   scan, exscan  (hosts' and subnets' ranks consecutive) exscan + reduce
//              inside hosts, the same among each subnet's hosts, an exscan
//              among subnets → offsets broadcast down → each rank combines
//   gather     host gathers → subnet gathervs → a gatherv of subnet blocks
//              to the root → the root puts them in rank order; scatter the
//              same backwards
//   alltoall   gathers at subnet leaders → one message per pair of subnets
//              → scatters (every block still crosses once; S(S-1) messages
//              cross instead of p(p-1))
//   barrier    binomial fan-in inside hosts and subnets → a star through
//              the first subnet leader (dissemination beyond 16 subnets) →
//              fan-out
//
// direct=1 (barrier, allgather): inside each subnet first, then every rank
// hears from its counterpart in the other subnets (rank j of subnet t from
// rank j mod |s| of subnet s): one crossing, no fan-out — for latency-bound
// sizes.
// slices=1 (allreduce): reduce-scatter inside each subnet, the k-th hosts
// of all subnets allreduce slice k (K allreduces across the uplinks at
// once), allgather inside: an allreduce of slices.
// shares=1 (allreduce): each subnet owns a share of the vector sized to its
// uplink (the slowest owns none); the others' partial sums of it go to the
// owner, its result back to them, piece by piece (pieces=K) so that one
// piece goes up while the one before comes down, through different pairs
// of ranks (allreduce_shares). Across a subnet's uplink (1 + (S-2)x) of
// the vector each way for a share x: one vector for the slowest subnet.
// pieces=K (bcast, reduce, allreduce): the vector in K pieces, each through
// every phase, so that one piece crosses the slow links while the one before
// it spreads inside the subnets; the planner tries 1-16 for 64 KiB and more.
//
// Steps: the sum of the phases'. Bytes: across subnets only the top phase's
// (one vector per subnet for bcast/reduce/allreduce, the subnet's blocks for
// allgather), which is what makes it win where uplinks are slow and shared.
// Constraints: a model with a topology of several levels (hosts with
// several ranks, or several subnets); otherwise it is a flat algorithm and
// the planner skips it. Scan and exscan: every host's and every subnet's
// ranks consecutive (a block layout). Not for gatherv, scatterv and
// alltoallv: their leaders would forward blocks whose sizes MPI gives only
// to the root (or to their owner), and a schedule is built before any byte
// moves. Reductions combine in the hierarchy's order (any
// order is allowed for MPI's predefined operations; hetcoll declines user
// operations). In-place calls run in place (the builder orders the
// accesses to the shared bytes; tests/algorithms/test_in_place.cpp), but
// alltoall, whose input is copied aside.
// Source: ECO (Lowekamp & Beguelin 1996) §4-5 (operations across subnets,
// rooted at the originator's subnet, then inside); Banikazemi et al. 1999
// §4 (trees that follow node and network speeds); the host level as in
// MPICH's SMP-aware and Open MPI's han collectives.
#include "algorithms/all.hpp"
#include "algorithms/broadcast_trees.hpp"
#include "algorithms/common.hpp"
#include "algorithms/hierarchy.hpp"

namespace hetcoll {
namespace {

// The level at which the vector is combined among groups' leaders (the
// highest one with more than one member at the root): top, the root's
// subnet, or the root's host.
enum class Level { host, subnet, top };

Collective sub_call(CollOp op, int n, uint64_t count, const Collective& parent) {
  Collective c = Collective::make(op, n, count, 0, parent.elem_size);
  // An allreduce phase gives every member the same bits whatever the
  // operation (hierarchical is rank-consistent: padding bytes of a long
  // double included), so its algorithm must be rank-consistent.
  c.order_free = op == CollOp::allreduce ? false : parent.order_free;
  return c;
}

// A piece of the vector: elements [first, first + count).
struct Piece {
  uint64_t first = 0, count = 0;
};

// The vector in `pieces` nearly equal pieces of whole elements: each runs
// the phases on its own, so a piece crosses the slow links while the one
// before it spreads inside the subnets (the builder's data dependencies
// pipeline them).
std::vector<Piece> pieces_of(const GenContext& ctx) {
  const uint64_t n = ctx.coll.count;
  const uint64_t k = std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(param_int(ctx, "pieces", 1)), n));
  std::vector<Piece> v;
  for (uint64_t i = 0, at = 0; i < k; ++i) {
    const uint64_t len = n / k + (i < n % k ? 1 : 0);
    v.push_back({at, len});
    at += len;
  }
  return v;
}

// The schedule's name: the spec that rebuilds it.
std::string name_of(const GenContext& ctx) {
  const int k = param_int(ctx, "pieces", 1);
  std::string p;  // in the spec's order (by name)
  if (k > 1) p = cat("pieces=", k);
  if (param_int(ctx, "shares", 0)) p += cat(p.empty() ? "" : ",", "shares=1");
  return p.empty() ? std::string("hierarchical") : cat("hierarchical[", p, "]");
}

// Places a sub-collective's in/out bytes at the piece's offset.
Slice shift(const Slice& s, uint64_t by) { return {s.buf, s.off + by, s.len}; }

Schedule bcast(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, name_of(ctx));
  const Levels L = levels_of(ctx.model, c.nranks, c.root, true);
  for (const Piece& pc : pieces_of(ctx)) {
    const uint64_t at = pc.first * c.elem_size;
    auto place = [at](int, const Slice& s) { return shift(s, at); };
    run_phase(b, ctx, L.top, sub_call(CollOp::bcast, int(L.top.size()), pc.count, c), place);
    for (auto& g : L.subnets) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), pc.count, c), place, &L.like(g));
    for (auto& g : L.hosts) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), pc.count, c), place, &L.like(g));
  }
  return b.finish();
}

// Combines everybody's input up the hierarchy to the leaders of `upto`'s
// groups; returns where each rank's partial result lies (its input where it
// combined nothing). The root's partial at level `final_level` goes to
// `root_out` when given.
std::vector<Slice> reduce_up(Builder& b, const GenContext& ctx, const Levels& L, bool include_top,
                             const Slice* root_out, const Piece& pc) {
  const Collective& c = ctx.coll;
  const uint64_t m = pc.count * c.elem_size;
  std::vector<Slice> partial(size_t(c.nranks), Slice{Buf::in, pc.first * c.elem_size, m});
  // The last phase the root leads with others in it writes to root_out.
  const int root = c.root;
  int last = -1;  // 0 host, 1 subnet, 2 top
  if (L.hosts[0].size() > 1) last = 0;
  if (L.subnets[0].size() > 1) last = 1;
  if (include_top && L.top.size() > 1) last = 2;
  auto phase = [&](const std::vector<int>& g, int level) {
    if (g.size() <= 1) return;
    const int leader = g[0];
    Slice dest = root_out && leader == root && level == last ? *root_out
                                                             : Slice{Buf::tmp, b.alloc_tmp(leader, m), m};
    run_phase(b, ctx, g, sub_call(CollOp::reduce, int(g.size()), pc.count, c), [&](int k, const Slice& s) {
      if (s.buf == Buf::in) return partial[size_t(g[size_t(k)])].sub(s.off, s.len);
      return dest.sub(s.off, s.len);  // out: the leader's
    }, &L.like(g));
    partial[size_t(leader)] = dest;
  };
  for (auto& g : L.hosts) phase(g, 0);
  for (auto& g : L.subnets) phase(g, 1);
  if (include_top) phase(L.top, 2);
  return partial;
}

Schedule reduce(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, name_of(ctx));
  const Levels L = levels_of(ctx.model, c.nranks, c.root, true);
  for (const Piece& pc : pieces_of(ctx)) {
    const Slice out{Buf::out, pc.first * c.elem_size, pc.count * c.elem_size};
    std::vector<Slice> partial = reduce_up(b, ctx, L, true, &out, pc);
    if (partial[size_t(c.root)].buf == Buf::in && b.wants(c.root)) b.copy(c.root, out, partial[size_t(c.root)]);
  }
  return b.finish();
}

// shares=1: allreduce by shares. Each subnet owns a share of the vector,
// sized to its uplink; the others send it their partial sums of that share
// and it sends back the result (a reduce-scatter and an allgather among
// subnets). Across its uplink a subnet then carries (1 + (S-2)x) of the
// vector each way for a share x: the slowest subnet owns nothing and
// carries one vector each way (the least any allreduce can), the others
// split the vector so that none takes longer (S = 2: x in proportion to the
// uplinks, each carries one vector). Three ranks of a subnet play the roles
// (its host leaders, where it has them): `up` sends the subnet's partial
// sums of the others' shares, `own` combines its share and sends the
// result, `down` receives the others' results — so that no pair of ranks
// streams both ways (over TCP such a pair's two directions take turns:
// profile bandwidth_same_pair).
struct ShareRoles {
  std::vector<int> up, own, down;  // per subnet
  std::vector<double> share;       // per subnet, summing to 1
};

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

// g with `first` moved to the front (the others in order): a phase rooted there.
std::vector<int> led_by(const std::vector<int>& g, int first) {
  std::vector<int> v{first};
  for (int x : g)
    if (x != first) v.push_back(x);
  return v;
}

// A piece's elements split among the subnets by their shares (whole
// elements, largest remainders; non-owners get none).
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

// Gather: host gathers → subnet gathervs → a gatherv of the subnets' blocks
// among the subnet leaders to the root (which leads them all) → the root
// puts the blocks in rank order. Scatter is the same backwards. Across the
// slow links one message per subnet.
Schedule gather_or_scatter(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const bool gather = c.op == CollOp::gather;
  Builder b = make_builder(ctx, "hierarchical");
  const Levels L = levels_of(ctx.model, c.nranks, c.root, true);
  const uint64_t blk = c.count * c.elem_size;
  const int p = c.nranks, root = c.root;
  const std::vector<int> order = level_order(L);  // the root's staging, block i from/to order[i]
  std::map<int, const std::vector<int>*> host_of_leader, subnet_of_leader;
  for (auto& g : L.hosts) host_of_leader[g[0]] = &g;
  for (auto& g : L.subnets) subnet_of_leader[g[0]] = &g;
  auto ranks_under = [&](int subnet_leader) {
    uint64_t n = 0;
    for (int h : *subnet_of_leader[subnet_leader]) n += host_of_leader[h]->size();
    return n;
  };
  // stage[r]: a leader's blocks of everything under it, in level order.
  std::vector<Slice> host_stage(static_cast<size_t>(p)), subnet_stage(static_cast<size_t>(p));
  for (auto& g : L.hosts) {
    const uint64_t len = g.size() * blk;
    host_stage[size_t(g[0])] = g.size() == 1 ? Slice{gather ? Buf::in : Buf::out, 0, blk}
                                             : Slice{Buf::tmp, b.alloc_tmp(g[0], len), len};
  }
  for (auto& g : L.subnets) {
    const uint64_t len = ranks_under(g[0]) * blk;
    subnet_stage[size_t(g[0])] = g.size() == 1 ? host_stage[size_t(g[0])] : Slice{Buf::tmp, b.alloc_tmp(g[0], len), len};
  }
  const Slice all = L.top.size() == 1 ? subnet_stage[size_t(root)] : Slice{Buf::tmp, b.alloc_tmp(root, uint64_t(p) * blk), uint64_t(p) * blk};
  auto host_phase = [&] {
    for (auto& g : L.hosts) {
      if (g.size() == 1) continue;
      const Slice st = host_stage[size_t(g[0])];
      run_phase(b, ctx, g, sub_call(c.op, int(g.size()), c.count, c), [&](int, const Slice& sl) {
        if ((sl.buf == Buf::out) == gather) return st.sub(sl.off, sl.len);  // the root's side
        return sl;
      }, &L.like(g));
    }
  };
  auto subnet_phase = [&] {
    for (auto& g : L.subnets) {
      if (g.size() == 1) continue;
      std::vector<uint64_t> counts;
      for (int h : g) counts.push_back(host_of_leader[h]->size() * c.count);
      const Slice st = subnet_stage[size_t(g[0])];
      Collective sub = Collective::make_v(gather ? CollOp::gatherv : CollOp::scatterv, counts, 0, c.elem_size);
      run_phase(b, ctx, g, sub, [&](int k, const Slice& sl) {
        const bool root_side = (sl.buf == Buf::out) == gather;
        return root_side ? st.sub(sl.off, sl.len) : host_stage[size_t(g[size_t(k)])].sub(sl.off, sl.len);
      }, &L.like(g));
    }
  };
  auto top_phase = [&] {
    if (L.top.size() == 1) return;
    std::vector<uint64_t> counts;
    for (int s : L.top) counts.push_back(ranks_under(s) * c.count);
    Collective sub = Collective::make_v(gather ? CollOp::gatherv : CollOp::scatterv, counts, 0, c.elem_size);
    run_phase(b, ctx, L.top, sub, [&](int k, const Slice& sl) {
      const bool root_side = (sl.buf == Buf::out) == gather;
      return root_side ? all.sub(sl.off, sl.len) : subnet_stage[size_t(L.top[size_t(k)])].sub(sl.off, sl.len);
    });
  };
  // The root's blocks between rank order (its buffer) and level order (all).
  auto permute = [&] {
    if (!b.wants(root)) return;
    for (size_t i = 0; i < order.size(); ++i) {
      const Slice user{gather ? Buf::out : Buf::in, uint64_t(order[i]) * blk, blk};
      if (gather) b.copy(root, user, order[i] == root ? Slice{Buf::in, 0, blk} : all.sub(i * blk, blk));
      else b.copy(root, all.sub(i * blk, blk), user);  // the root's own block too: the phases deliver it
    }
  };
  if (gather) {
    host_phase();
    subnet_phase();
    top_phase();
    permute();
  } else {
    permute();
    top_phase();
    subnet_phase();
    host_phase();
  }
  return b.finish();
}

// The counts of `members`' blocks: a gather (equal counts) where they are
// alike, else a gatherv — or scatter/scatterv.
Collective blocks_call(CollOp regular, CollOp v, const std::vector<uint64_t>& counts, const Collective& parent) {
  bool equal = true;
  for (uint64_t x : counts) equal = equal && x == counts[0];
  if (equal && !counts.empty()) return sub_call(regular, int(counts.size()), counts[0], parent);
  Collective c = Collective::make_v(v, counts, 0, parent.elem_size);
  c.order_free = parent.order_free;
  return c;
}

// Allgather and allgatherv: host gathers → subnet gathervs → a top
// allgatherv of the subnets' blocks; then, where the blocks lie in rank
// order without gaps (allgather, a packed allgatherv), each subnet leader
// puts them in place and the whole output is broadcast inside subnets and
// hosts; otherwise the staged blocks are broadcast and every rank puts them
// in place (bytes between blocks are never written).
Schedule allgather(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical");
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  const int p = c.nranks;
  const uint64_t e = c.elem_size;
  const Blocks blocks = coll_blocks(c);
  auto count = [&](int r) { return blocks.len[size_t(r)] / e; };
  auto own = [&](int r) { return Slice{Buf::in, 0, blocks.len[size_t(r)]}; };
  auto bytes_of = [&](const std::vector<int>& ranks) {
    uint64_t n = 0;
    for (int r : ranks) n += blocks.len[size_t(r)];
    return n;
  };
  // Staging: a leader's blocks of its group, in group order.
  std::vector<Slice> host_stage(static_cast<size_t>(p)), subnet_stage(static_cast<size_t>(p));
  std::vector<std::vector<int>> host_order(static_cast<size_t>(p)), subnet_order(static_cast<size_t>(p));
  for (auto& g : L.hosts) {
    const int lead = g[0];
    host_order[size_t(lead)] = g;
    if (g.size() == 1) {
      host_stage[size_t(lead)] = own(lead);
      continue;
    }
    const uint64_t len = bytes_of(g);
    const Slice st{Buf::tmp, b.alloc_tmp(lead, len), len};
    std::vector<uint64_t> counts;
    for (int r : g) counts.push_back(count(r));
    run_phase(b, ctx, g, blocks_call(CollOp::gather, CollOp::gatherv, counts, c), [&](int k, const Slice& s) {
      if (s.buf == Buf::in) return own(g[size_t(k)]).sub(s.off, s.len);
      return st.sub(s.off, s.len);
    }, &L.like(g));
    host_stage[size_t(lead)] = st;
  }
  for (auto& g : L.subnets) {
    const int lead = g[0];
    std::vector<uint64_t> counts;
    std::vector<int> order;
    for (int h : g) {
      counts.push_back(bytes_of(host_order[size_t(h)]) / e);
      order.insert(order.end(), host_order[size_t(h)].begin(), host_order[size_t(h)].end());
    }
    subnet_order[size_t(lead)] = order;
    if (g.size() == 1) {
      subnet_stage[size_t(lead)] = host_stage[size_t(lead)];
      continue;
    }
    const uint64_t len = bytes_of(order);
    const Slice st{Buf::tmp, b.alloc_tmp(lead, len), len};
    Collective sub = Collective::make_v(CollOp::gatherv, counts, 0, c.elem_size);
    run_phase(b, ctx, g, sub, [&](int k, const Slice& s) {
      if (s.buf == Buf::in) return host_stage[size_t(g[size_t(k)])].sub(s.off, s.len);
      return st.sub(s.off, s.len);
    }, &L.like(g));
    subnet_stage[size_t(lead)] = st;
  }
  // Top: every subnet leader gets all blocks, in the order of `order`.
  std::vector<uint64_t> counts;
  std::vector<int> order;
  for (int s : L.top) {
    counts.push_back(bytes_of(subnet_order[size_t(s)]) / e);
    order.insert(order.end(), subnet_order[size_t(s)].begin(), subnet_order[size_t(s)].end());
  }
  const uint64_t total = bytes_of(order);
  std::vector<uint64_t> at(order.size(), 0);  // where order[i]'s block lies in the staging
  for (size_t i = 1; i < order.size(); ++i) at[i] = at[i - 1] + blocks.len[size_t(order[i - 1])];
  std::vector<Slice> all(static_cast<size_t>(p));
  if (L.top.size() > 1) {
    Collective sub = Collective::make_v(CollOp::allgatherv, counts, 0, c.elem_size);
    for (int s : L.top) all[size_t(s)] = {Buf::tmp, b.alloc_tmp(s, total), total};
    run_phase(b, ctx, L.top, sub, [&](int k, const Slice& s) {
      const int r = L.top[size_t(k)];
      if (s.buf == Buf::in) return subnet_stage[size_t(r)].sub(s.off, s.len);
      return all[size_t(r)].sub(s.off, s.len);
    });
  } else {
    all[size_t(L.top[0])] = subnet_stage[size_t(L.top[0])];
  }
  // Rank r puts the staged blocks (in `from`) where they belong, its own
  // straight from its input.
  auto unpack = [&](int r, const Slice& from) {
    if (!b.wants(r)) return;
    for (size_t i = 0; i < order.size(); ++i) {
      const int owner = order[i];
      const Slice dst{Buf::out, blocks.off[size_t(owner)], blocks.len[size_t(owner)]};
      if (dst.len == 0) continue;
      b.copy(r, dst, owner == r ? own(r) : from.sub(at[i], dst.len));
    }
  };
  auto same = [](int, const Slice& s) { return s; };
  if (contiguous(blocks)) {
    for (int s : L.top) unpack(s, all[size_t(s)]);
    for (auto& g : L.subnets) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), total / e, c), same, &L.like(g));
    for (auto& g : L.hosts) run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), total / e, c), same, &L.like(g));
    return b.finish();
  }
  // Gaps or blocks out of rank order: broadcast the staging, unpack everywhere.
  std::vector<Slice> staged = all;
  auto spread = [&](const std::vector<int>& g) {
    if (g.size() <= 1) return;
    for (size_t k = 1; k < g.size(); ++k) staged[size_t(g[k])] = {Buf::tmp, b.alloc_tmp(g[k], total), total};
    run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), total / e, c),
              [&](int k, const Slice& s) { return staged[size_t(g[size_t(k)])].sub(s.off, s.len); }, &L.like(g));
  };
  for (auto& g : L.subnets) spread(g);
  for (auto& g : L.hosts) spread(g);
  for (int r = 0; r < p; ++r) unpack(r, staged[size_t(r)]);
  return b.finish();
}

// Reduce-scatter (equal blocks, or reduce_scatter's counts): every rank
// lays its vector out in level order; combine up to the subnet leaders
// (host reduces, subnet reduces), a reduce-scatter among the subnet leaders
// hands each its subnet's blocks, then scatters inside each subnet and
// each host deliver the blocks.
Schedule reduce_scatter(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical");
  const Levels L = levels_of(ctx.model, c.nranks, 0, true);
  const int p = c.nranks;
  const uint64_t e = c.elem_size;
  const Blocks blocks = c.op == CollOp::reduce_scatter ? blocks_of(c.counts, c.elem_size)
                                                       : even_blocks(c.count * uint64_t(p), c.elem_size, p);
  auto len = [&](int r) { return blocks.len[size_t(r)]; };
  const uint64_t all = blocks.span(0, p);
  const std::vector<int> order = level_order(L);
  std::vector<uint64_t> at(order.size(), 0);  // where order[i]'s block lies in level order
  for (size_t i = 1; i < order.size(); ++i) at[i] = at[i - 1] + len(order[i - 1]);
  // The permuted input of every rank.
  std::vector<Slice> partial(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) {
    partial[size_t(r)] = {Buf::tmp, b.alloc_tmp(r, all), all};
    if (!b.wants(r)) continue;
    for (size_t i = 0; i < order.size(); ++i)
      if (len(order[i]))
        b.copy(r, partial[size_t(r)].sub(at[i], len(order[i])), {Buf::in, blocks.off[size_t(order[i])], len(order[i])});
  }
  auto reduce_to_leader = [&](const std::vector<int>& g) {
    if (g.size() <= 1) return;
    const Slice dest{Buf::tmp, b.alloc_tmp(g[0], all), all};
    run_phase(b, ctx, g, sub_call(CollOp::reduce, int(g.size()), all / e, c), [&](int k, const Slice& sl) {
      if (sl.buf == Buf::in) return partial[size_t(g[size_t(k)])].sub(sl.off, sl.len);
      return dest.sub(sl.off, sl.len);
    }, &L.like(g));
    partial[size_t(g[0])] = dest;
  };
  for (auto& g : L.hosts) reduce_to_leader(g);
  for (auto& g : L.subnets) reduce_to_leader(g);
  // Bytes per host and per subnet (by leader), and the hosts' ranks.
  std::map<int, uint64_t> host_bytes, subnet_bytes;
  std::map<int, const std::vector<int>*> host_of_leader;
  for (auto& g : L.hosts) {
    host_of_leader[g[0]] = &g;
    for (int r : g) host_bytes[g[0]] += len(r);
  }
  for (auto& g : L.subnets)
    for (int h : g) subnet_bytes[g[0]] += host_bytes[h];
  // Top: subnet leader s gets its subnet's blocks (contiguous in level order).
  std::vector<Slice> mine(static_cast<size_t>(p));
  for (int s : L.top) {
    const uint64_t n = subnet_bytes[s];
    mine[size_t(s)] = L.top.size() > 1 ? Slice{Buf::tmp, b.alloc_tmp(s, n), n} : partial[size_t(s)].sub(0, n);
  }
  if (L.top.size() > 1) {
    std::vector<uint64_t> counts;
    for (int s : L.top) counts.push_back(subnet_bytes[s] / e);
    Collective rs = Collective::make_v(CollOp::reduce_scatter, counts, 0, c.elem_size);
    rs.order_free = c.order_free;
    run_phase(b, ctx, L.top, rs, [&](int k, const Slice& sl) {
      const int r = L.top[size_t(k)];
      return sl.buf == Buf::in ? partial[size_t(r)].sub(sl.off, sl.len) : mine[size_t(r)].sub(sl.off, sl.len);
    });
  }
  // Inside each subnet: the leader's blocks to its hosts' leaders.
  for (auto& g : L.subnets) {
    if (g.size() <= 1) continue;
    std::vector<uint64_t> counts;
    for (int h : g) counts.push_back(host_bytes[h] / e);
    for (size_t k = 1; k < g.size(); ++k) mine[size_t(g[k])] = {Buf::tmp, b.alloc_tmp(g[k], host_bytes[g[k]]), host_bytes[g[k]]};
    const Slice from = mine[size_t(g[0])];
    std::vector<Slice> to(g.size());
    for (size_t k = 0; k < g.size(); ++k)
      to[k] = k == 0 ? Slice{Buf::tmp, b.alloc_tmp(g[0], host_bytes[g[0]]), host_bytes[g[0]]} : mine[size_t(g[k])];
    run_phase(b, ctx, g, blocks_call(CollOp::scatter, CollOp::scatterv, counts, c), [&](int k, const Slice& sl) {
      return sl.buf == Buf::in ? from.sub(sl.off, sl.len) : to[size_t(k)].sub(sl.off, sl.len);
    }, &L.like(g));
    mine[size_t(g[0])] = to[0];
  }
  // Inside each host: each rank its block, into out.
  for (auto& g : L.hosts) {
    const Slice from = mine[size_t(g[0])];
    if (g.size() == 1) {
      if (b.wants(g[0]) && len(g[0])) b.copy(g[0], {Buf::out, 0, len(g[0])}, from.sub(0, len(g[0])));
      continue;
    }
    std::vector<uint64_t> counts;
    for (int r : g) counts.push_back(len(r) / e);
    run_phase(b, ctx, g, blocks_call(CollOp::scatter, CollOp::scatterv, counts, c), [&](int, const Slice& sl) {
      return sl.buf == Buf::in ? from.sub(sl.off, sl.len) : sl;
    }, &L.like(g));
  }
  return b.finish();
}

// Are every host's ranks consecutive, and every subnet's? (A prefix over
// ranks then splits at hosts and subnets.)
bool consecutive(const Levels& L) {
  std::map<int, const std::vector<int>*> host_of_leader;
  for (auto& g : L.hosts) host_of_leader[g[0]] = &g;
  auto span_ok = [](const std::vector<int>& ranks) {
    if (ranks.empty()) return true;
    const auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end());
    return size_t(*hi - *lo) + 1 == ranks.size();
  };
  for (auto& g : L.hosts)
    if (!span_ok(g)) return false;
  for (auto& g : L.subnets) {
    std::vector<int> ranks;
    for (int h : g) ranks.insert(ranks.end(), host_of_leader[h]->begin(), host_of_leader[h]->end());
    if (!span_ok(ranks)) return false;
  }
  return true;
}

// Scan and exscan (every host's and subnet's ranks consecutive): inside
// each host an exscan (the ranks before, on the host) and a reduce (the
// host's sum); among each subnet's hosts an exscan and a reduce of those
// sums; among the subnets an exscan of theirs; then each subnet's offset
// is broadcast to its hosts, each host's to its ranks, and every rank adds
// the three parts (and, for scan, its own input). Across the slow links one
// exscan among the subnet leaders.
Schedule scan(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  const bool ex = c.op == CollOp::exscan;
  Builder b = make_builder(ctx, "hierarchical");
  Levels L = levels_of(ctx.model, c.nranks, 0, true);
  if (!consecutive(L))
    throw InputError("hierarchical scan/exscan needs every host's and every subnet's ranks to be consecutive");
  // Groups in rank order (leaders the lowest ranks), whatever order the
  // ring gave the leaders.
  for (auto& g : L.subnets) std::sort(g.begin(), g.end());
  L.subnet_like.clear();  // found for the groups as they were ordered
  L.top.clear();
  for (auto& g : L.subnets) L.top.push_back(g[0]);
  std::sort(L.top.begin(), L.top.end());
  const int p = c.nranks;
  const uint64_t m = vector_bytes(c);
  const Slice in{Buf::in, 0, m}, out{Buf::out, 0, m};
  auto fresh = [&](int r) { return Slice{Buf::tmp, b.alloc_tmp(r, m), m}; };
  using Part = std::optional<Slice>;  // nothing: the identity (no ranks before)
  // x ⊕ y at rank r, where both may be the identity.
  auto combine = [&](int r, const Part& x, const Part& y) -> Part {
    if (!x) return y;
    if (!y) return x;
    const Slice d = fresh(r);
    if (b.wants(r)) {
      b.copy(r, d, *x);
      b.reduce(r, d, *y);
    }
    return d;
  };
  // The exscan (into excl[]) and the sum at the leader (into sum[g[0]]) of
  // the parts `of` of a group's members, in rank order.
  auto prefix_and_sum = [&](const std::vector<int>& g, std::vector<Slice>& of, std::vector<Part>& excl,
                            std::vector<Slice>* sum) {
    if (g.size() == 1) {
      if (sum) (*sum)[size_t(g[0])] = of[size_t(g[0])];
      return;
    }
    const Slice scratch = fresh(g[0]);  // member 0's exscan output is undefined
    for (size_t k = 1; k < g.size(); ++k) excl[size_t(g[k])] = fresh(g[k]);
    run_phase(b, ctx, g, sub_call(CollOp::exscan, int(g.size()), c.count, c), [&](int k, const Slice& s) {
      const int r = g[size_t(k)];
      if (s.buf == Buf::in) return of[size_t(r)].sub(s.off, s.len);
      return (k == 0 ? scratch : *excl[size_t(r)]).sub(s.off, s.len);
    }, &L.like(g));
    if (!sum) return;
    const Slice total = fresh(g[0]);
    run_phase(b, ctx, g, sub_call(CollOp::reduce, int(g.size()), c.count, c), [&](int k, const Slice& s) {
      if (s.buf == Buf::in) return of[size_t(g[size_t(k)])].sub(s.off, s.len);
      return total.sub(s.off, s.len);
    }, &L.like(g));
    (*sum)[size_t(g[0])] = total;
  };
  std::vector<Slice> input(static_cast<size_t>(p), in), host_sum(static_cast<size_t>(p)), subnet_sum(static_cast<size_t>(p));
  std::vector<Part> in_host(static_cast<size_t>(p)), in_subnet(static_cast<size_t>(p)), among(static_cast<size_t>(p));
  const bool top = L.top.size() > 1;
  for (auto& g : L.hosts) prefix_and_sum(g, input, in_host, &host_sum);  // root 0: members in rank order
  for (auto& g : L.subnets) prefix_and_sum(g, host_sum, in_subnet, top ? &subnet_sum : nullptr);
  if (top) prefix_and_sum(L.top, subnet_sum, among, nullptr);
  // Offsets down: a subnet's (the subnets before it) to its host leaders,
  // each host's (subnets and hosts before it) to its ranks.
  auto spread = [&](const std::vector<int>& g, std::vector<Part>& part) {
    const Part from = part[size_t(g[0])];
    if (!from || g.size() == 1) return;
    for (size_t k = 1; k < g.size(); ++k) part[size_t(g[k])] = fresh(g[k]);
    run_phase(b, ctx, g, sub_call(CollOp::bcast, int(g.size()), c.count, c),
              [&](int k, const Slice& s) { return part[size_t(g[size_t(k)])]->sub(s.off, s.len); }, &L.like(g));
  };
  std::vector<Part> host_offset(static_cast<size_t>(p));
  for (auto& g : L.subnets) {
    spread(g, among);
    for (int h : g) host_offset[size_t(h)] = combine(h, among[size_t(h)], in_subnet[size_t(h)]);
  }
  for (auto& g : L.hosts) spread(g, host_offset);
  for (int r = 0; r < p; ++r) {
    if (!b.wants(r)) continue;
    const Part excl = combine(r, host_offset[size_t(r)], in_host[size_t(r)]);
    if (ex) {
      if (excl) b.copy(r, out, *excl);  // rank 0's output is undefined
    } else if (!excl) {
      if (!c.in_place) b.copy(r, out, in);
    } else if (c.in_place) {
      b.reduce(r, out, *excl);  // out holds the input
    } else {
      b.copy(r, out, in);
      b.reduce(r, out, *excl);
    }
  }
  return b.finish();
}

constexpr int kStarTop = 16;  // subnets up to which the barrier's top phase is a star

// Empty messages of a barrier, with explicit dependencies (they carry no data
// to infer them from): a rank's send waits for everything it heard and for
// its previous send.
class Tokens {
 public:
  Tokens(Builder& b, int nranks) : b_(b), wait_(static_cast<size_t>(nranks)) {}
  void send(int r, int to) {
    if (!b_.wants(r)) return;
    Op o;
    o.kind = OpKind::send;
    o.peer = to;
    o.buf = Buf::tmp;
    wait_[size_t(r)] = {b_.add(r, o, wait_[size_t(r)].data(), wait_[size_t(r)].size())};
  }
  void recv(int r, int from) {
    if (!b_.wants(r)) return;
    Op o;
    o.kind = OpKind::recv;
    o.peer = from;
    o.buf = Buf::tmp;
    wait_[size_t(r)].push_back(b_.add(r, o, nullptr, 0));
  }

 private:
  Builder& b_;
  std::vector<std::vector<uint32_t>> wait_;  // each rank's next send waits for these
};

// Barrier: explicit dependencies (empty messages carry no data to infer them from).
Schedule barrier(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical", false);
  const Levels L = levels_of(ctx.model, c.nranks, 0);
  Tokens tokens(b, c.nranks);
  auto send = [&](int r, int to) { tokens.send(r, to); };
  auto recv = [&](int r, int from) { tokens.recv(r, from); };
  // Binomial fan-in to the group's member 0 and fan-out back.
  auto fan = [&](const std::vector<int>& g, bool in) {
    const Tree t = binomial_tree(int(g.size()));
    std::vector<int> nodes{0};  // breadth first
    for (size_t k = 0; k < nodes.size(); ++k)
      for (uint32_t e = t.child_begin[size_t(nodes[k])]; e < t.child_begin[size_t(nodes[k]) + 1]; ++e)
        nodes.push_back(t.children[e]);
    if (in) {
      for (size_t k = nodes.size(); k-- > 1;) {  // deepest first: children before their parents send
        const int v = nodes[k];
        recv(g[size_t(t.parent[size_t(v)])], g[size_t(v)]);
        send(g[size_t(v)], g[size_t(t.parent[size_t(v)])]);
      }
    } else {
      for (size_t k = 1; k < nodes.size(); ++k) {
        const int v = nodes[k];
        send(g[size_t(t.parent[size_t(v)])], g[size_t(v)]);
        recv(g[size_t(v)], g[size_t(t.parent[size_t(v)])]);
      }
    }
  };
  for (auto& g : L.hosts) fan(g, true);
  for (auto& g : L.subnets) fan(g, true);
  // Among the subnet leaders: a star through the first (two crossings, each
  // on the leader's own uplink) for a few subnets, dissemination beyond.
  const int S = int(L.top.size());
  if (S <= kStarTop) {
    for (int k = 1; k < S; ++k) {
      recv(L.top[0], L.top[size_t(k)]);
      send(L.top[size_t(k)], L.top[0]);
    }
    for (int k = 1; k < S; ++k) {
      send(L.top[0], L.top[size_t(k)]);
      recv(L.top[size_t(k)], L.top[0]);
    }
  } else {
    for (int d = 1; d < S; d *= 2) {
      for (int k = 0; k < S; ++k) send(L.top[size_t(k)], L.top[size_t((k + d) % S)]);
      for (int k = 0; k < S; ++k) recv(L.top[size_t(k)], L.top[size_t((k - d % S + S) % S)]);
    }
  }
  for (auto& g : L.subnets) fan(g, false);
  for (auto& g : L.hosts) fan(g, false);
  return b.finish();
}

// Every subnet's ranks (host by host, leaders first), subnets in top order.
std::vector<std::vector<int>> subnet_members(const Levels& L) {
  std::map<int, const std::vector<int>*> host_of_leader;
  for (auto& g : L.hosts) host_of_leader[g[0]] = &g;
  std::vector<std::vector<int>> members;
  for (auto& g : L.subnets) {
    members.emplace_back();
    for (int h : g) members.back().insert(members.back().end(), host_of_leader[h]->begin(), host_of_leader[h]->end());
  }
  return members;
}

// Barrier, direct: a dissemination barrier inside every subnet, then one
// among the subnets in which every rank takes part — in round d, rank j of
// subnet t hears from rank j mod |s| of subnet s = t - d — so that no
// fan-out is needed: the slow links are crossed ⌈log2 S⌉ times in all.
Schedule barrier_direct(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical[direct=1]", false);
  const std::vector<std::vector<int>> M = subnet_members(levels_of(ctx.model, c.nranks, 0));
  Tokens tokens(b, c.nranks);
  auto send = [&](int r, int to) { tokens.send(r, to); };
  auto recv = [&](int r, int from) { tokens.recv(r, from); };
  for (auto& g : M) {
    const int n = int(g.size());
    for (int d = 1; d < n; d *= 2) {
      for (int k = 0; k < n; ++k) send(g[size_t(k)], g[size_t((k + d) % n)]);
      for (int k = 0; k < n; ++k) recv(g[size_t(k)], g[size_t((k - d % n + n) % n)]);
    }
  }
  const int S = int(M.size());
  for (int d = 1; d < S; d *= 2) {
    for (int src = 0; src < S; ++src) {
      const auto& from = M[size_t(src)];
      const auto& to = M[size_t((src + d) % S)];
      for (size_t k = 0; k < from.size(); ++k)
        for (size_t j = k; j < to.size(); j += from.size()) send(from[k], to[j]);
    }
    for (int t = 0; t < S; ++t) {
      const auto& from = M[size_t((t - d % S + S) % S)];
      const auto& to = M[size_t(t)];
      for (size_t j = 0; j < to.size(); ++j) recv(to[j], from[j % from.size()]);
    }
  }
  return b.finish();
}

// Allgather, direct: an allgather inside every subnet, then every rank
// takes the other subnets' blocks from its counterpart there (rank j of
// subnet t from rank j mod |s| of subnet s) and puts all in rank order. One
// crossing of the slow links, but every rank's: for small blocks.
Schedule allgather_direct(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical[direct=1]");
  const std::vector<std::vector<int>> M = subnet_members(levels_of(ctx.model, c.nranks, 0));
  const uint64_t blk = c.count * c.elem_size;
  const int S = int(M.size());
  // have[r][s]: where rank r holds subnet s's blocks (in member order).
  std::vector<std::vector<Slice>> have(static_cast<size_t>(c.nranks), std::vector<Slice>(size_t(S)));
  for (int s = 0; s < S; ++s) {
    const auto& g = M[size_t(s)];
    const uint64_t len = g.size() * blk;
    for (int r : g) have[size_t(r)][size_t(s)] = {Buf::tmp, b.alloc_tmp(r, len), len};
    if (g.size() == 1) {
      if (b.wants(g[0])) b.copy(g[0], have[size_t(g[0])][size_t(s)], {Buf::in, 0, blk});
      continue;
    }
    run_phase(b, ctx, g, sub_call(CollOp::allgather, int(g.size()), c.count, c), [&](int k, const Slice& sl) {
      if (sl.buf == Buf::in) return sl;
      return have[size_t(g[size_t(k)])][size_t(s)].sub(sl.off, sl.len);
    });
  }
  for (int t = 0; t < S; ++t)
    for (int s = 0; s < S; ++s) {
      if (s == t) continue;
      const auto& from = M[size_t(s)];
      const auto& to = M[size_t(t)];
      const uint64_t len = from.size() * blk;
      for (size_t j = 0; j < to.size(); ++j) {
        const int dst = to[j], src = from[j % from.size()];
        have[size_t(dst)][size_t(s)] = {Buf::tmp, b.alloc_tmp(dst, len), len};
        if (b.wants(src)) b.send(src, dst, have[size_t(src)][size_t(s)]);
        if (b.wants(dst)) b.recv(dst, src, have[size_t(dst)][size_t(s)]);
      }
    }
  for (int r = 0; r < c.nranks; ++r) {
    if (!b.wants(r)) continue;
    for (int s = 0; s < S; ++s)
      for (size_t i = 0; i < M[size_t(s)].size(); ++i) {
        const int owner = M[size_t(s)][i];
        const Slice dst{Buf::out, uint64_t(owner) * blk, blk};
        b.copy(r, dst, owner == r ? Slice{Buf::in, 0, blk} : have[size_t(r)][size_t(s)].sub(i * blk, blk));
      }
  }
  return b.finish();
}

// Alltoall through subnet leaders: each subnet's ranks gather their whole
// send buffers at the leader, leaders exchange one message per pair of
// subnets (the blocks from one subnet's ranks to the other's), and each
// leader scatters to its ranks their blocks in source-rank order. Every
// block crosses the slow links once, as in any alltoall, but in S(S-1)
// messages instead of p(p-1): for latency-bound sizes.
Schedule alltoall_leaders(const GenContext& ctx) {
  const Collective& c = ctx.coll;
  Builder b = make_builder(ctx, "hierarchical");
  const std::vector<std::vector<int>> M = subnet_members(levels_of(ctx.model, c.nranks, 0));
  const int p = c.nranks, S = int(M.size());
  const uint64_t blk = c.count * c.elem_size, row = uint64_t(p) * blk;
  // G[s]: at leader s, member i's send buffer at i * row.
  std::vector<Slice> G(static_cast<size_t>(S));
  for (int s = 0; s < S; ++s) {
    const auto& g = M[size_t(s)];
    const int lead = g[0];
    if (g.size() == 1) {
      G[size_t(s)] = {Buf::in, 0, row};
      continue;
    }
    G[size_t(s)] = {Buf::tmp, b.alloc_tmp(lead, g.size() * row), g.size() * row};
    run_phase(b, ctx, g, sub_call(CollOp::gather, int(g.size()), uint64_t(p) * c.count, c), [&](int, const Slice& sl) {
      return sl.buf == Buf::in ? sl : G[size_t(s)].sub(sl.off, sl.len);
    });
  }
  // P[t]: at leader t, member j's receive buffer (blocks in source-rank
  // order) at j * row.
  std::vector<Slice> P(static_cast<size_t>(S));
  for (int t = 0; t < S; ++t) {
    const auto& g = M[size_t(t)];
    P[size_t(t)] = g.size() == 1 ? Slice{Buf::out, 0, row}
                                 : Slice{Buf::tmp, b.alloc_tmp(g[0], g.size() * row), g.size() * row};
  }
  for (int s = 0; s < S; ++s)
    for (int t = 0; t < S; ++t) {
      const auto& from = M[size_t(s)];
      const auto& to = M[size_t(t)];
      const int ls = from[0], lt = to[0];
      // Blocks (i in s, j in t), i major.
      const uint64_t len = from.size() * to.size() * blk;
      Slice sent = G[size_t(s)], got = G[size_t(s)];
      if (s != t) {
        sent = {Buf::tmp, b.alloc_tmp(ls, len), len};
        got = {Buf::tmp, b.alloc_tmp(lt, len), len};
        if (b.wants(ls))
          for (size_t i = 0; i < from.size(); ++i)
            for (size_t j = 0; j < to.size(); ++j)
              b.copy(ls, sent.sub((i * to.size() + j) * blk, blk),
                     G[size_t(s)].sub(i * row + uint64_t(to[j]) * blk, blk));
        if (b.wants(ls)) b.send(ls, lt, sent);
        if (b.wants(lt)) b.recv(lt, ls, got);
      }
      if (!b.wants(lt)) continue;
      for (size_t i = 0; i < from.size(); ++i)
        for (size_t j = 0; j < to.size(); ++j) {
          const Slice src = s == t ? G[size_t(s)].sub(i * row + uint64_t(to[j]) * blk, blk)
                                   : got.sub((i * to.size() + j) * blk, blk);
          b.copy(lt, P[size_t(t)].sub(j * row + uint64_t(from[i]) * blk, blk), src);
        }
    }
  for (int t = 0; t < S; ++t) {
    const auto& g = M[size_t(t)];
    if (g.size() == 1) continue;
    run_phase(b, ctx, g, sub_call(CollOp::scatter, int(g.size()), uint64_t(p) * c.count, c), [&](int, const Slice& sl) {
      return sl.buf == Buf::in ? P[size_t(t)].sub(sl.off, sl.len) : sl;
    });
  }
  return b.finish();
}

Schedule generate(const GenContext& ctx) {
  const bool direct = param_int(ctx, "direct", 0) != 0;
  if (direct && ctx.coll.op == CollOp::barrier) return barrier_direct(ctx);
  if (direct && ctx.coll.op == CollOp::allgather) return allgather_direct(ctx);
  switch (ctx.coll.op) {
    case CollOp::bcast: return bcast(ctx);
    case CollOp::reduce: return reduce(ctx);
    case CollOp::allreduce: return param_int(ctx, "slices", 0) ? allreduce_slices(ctx) : allreduce(ctx);
    case CollOp::allgather:
    case CollOp::allgatherv: return allgather(ctx);
    case CollOp::reduce_scatter_block:
    case CollOp::reduce_scatter: return reduce_scatter(ctx);
    case CollOp::scan:
    case CollOp::exscan: return scan(ctx);
    case CollOp::alltoall: return alltoall_leaders(ctx);
    case CollOp::gather:
    case CollOp::scatter: return gather_or_scatter(ctx);
    case CollOp::barrier: return barrier(ctx);
    default: throw InputError(cat("hierarchical does not implement ", coll_op_name(ctx.coll.op)));
  }
}

// What the phases cost: each level's slowest group (phases of one level run
// at once, on disjoint links but for the uplinks the top phase alone
// uses), levels one after another; K pieces pipeline, so the slowest
// level's time beyond its latency (its time for one element) is paid K-1
// more times — an allreduce's pieces pay their whole time again (each
// piece's top allreduce waits for the one before on the leaders: what the
// simulation of whole schedules shows). Every group's algorithm as chosen by its decider's
// simulation: an estimate built from simulations, for where the whole
// schedule is beyond the decision's budget (thousands of ranks).
struct LevelCost {
  double time = 0, latency = 0;  // latency: the same phases for one element
  uint64_t messages = 0;
};
using SubFor = std::function<Collective(const std::vector<int>&)>;
LevelCost level_cost(const GenContext& ctx, const Levels& L, const std::vector<std::vector<int>>& groups,
                     const SubFor& sub, bool pipelined) {
  LevelCost lc;
  for (auto& g : groups) {
    if (g.size() <= 1) continue;
    const Collective call = sub(g);
    const PhaseChoice pc = phase_choice(ctx, L.like(g), call);
    lc.time = std::max(lc.time, pc.time);
    lc.messages += pc.messages;
    if (pipelined) {
      Collective one = call;
      one.count = std::min<uint64_t>(one.count, 1);
      lc.latency = std::max(lc.latency, phase_choice(ctx, L.like(g), one).time);
    }
  }
  return lc;
}

std::optional<Terms> estimate(const GenContext& ctx, const HockneyParams&) {
  const Collective& c = ctx.coll;
  const CollOp op = c.op;
  const bool vec = op == CollOp::bcast || op == CollOp::reduce || op == CollOp::allreduce;
  if ((!vec && op != CollOp::allgather) || param_int(ctx, "slices", 0) || param_int(ctx, "direct", 0) ||
      param_int(ctx, "shares", 0))
    return std::nullopt;
  const Levels L = levels_of(ctx.model, c.nranks, has_root(op) ? c.root : 0, true);
  const std::vector<std::vector<int>> top{L.top};
  std::vector<LevelCost> levels;
  const uint64_t pieces =
      vec ? std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(param_int(ctx, "pieces", 1)), c.count)) : 1;
  auto add = [&](const std::vector<std::vector<int>>& groups, const SubFor& sub) {
    levels.push_back(level_cost(ctx, L, groups, sub, pieces > 1 && op != CollOp::allreduce));
  };
  if (vec) {
    const uint64_t n = (c.count + pieces - 1) / pieces;
    auto of = [&](CollOp o) { return [&, o](const std::vector<int>& g) { return sub_call(o, int(g.size()), n, c); }; };
    if (op == CollOp::bcast) {
      add(top, of(CollOp::bcast));
      add(L.subnets, of(CollOp::bcast));
      add(L.hosts, of(CollOp::bcast));
    } else if (op == CollOp::reduce) {
      add(L.hosts, of(CollOp::reduce));
      add(L.subnets, of(CollOp::reduce));
      add(top, of(CollOp::reduce));
    } else {
      const bool has_top = L.top.size() > 1, subnet = !has_top && L.subnets[0].size() > 1;
      add(L.hosts, of(CollOp::reduce));
      if (has_top) add(L.subnets, of(CollOp::reduce));
      add({has_top ? L.top : subnet ? L.subnets[0] : L.hosts[0]}, of(CollOp::allreduce));
      if (has_top) add(L.subnets, of(CollOp::bcast));
      if (has_top || subnet) add(L.hosts, of(CollOp::bcast));
    }
  } else {  // allgather
    std::map<int, uint64_t> host_ranks;
    for (auto& g : L.hosts) host_ranks[g[0]] = g.size();
    add(L.hosts, [&](const std::vector<int>& g) { return sub_call(CollOp::gather, int(g.size()), c.count, c); });
    add(L.subnets, [&](const std::vector<int>& g) {
      std::vector<uint64_t> counts;
      for (int h : g) counts.push_back(host_ranks[h] * c.count);
      return Collective::make_v(CollOp::gatherv, counts, 0, c.elem_size);
    });
    std::vector<uint64_t> counts;
    for (auto& g : L.subnets) {
      uint64_t n = 0;
      for (int h : g) n += host_ranks[h] * c.count;
      counts.push_back(n);
    }
    add(top, [&](const std::vector<int>&) { return Collective::make_v(CollOp::allgatherv, counts, 0, c.elem_size); });
    const uint64_t whole = uint64_t(c.nranks) * c.count;
    add(L.subnets, [&](const std::vector<int>& g) { return sub_call(CollOp::bcast, int(g.size()), whole, c); });
    add(L.hosts, [&](const std::vector<int>& g) { return sub_call(CollOp::bcast, int(g.size()), whole, c); });
  }
  double sum = 0, slowest = 0;
  uint64_t messages = 0;
  for (const LevelCost& lc : levels) {
    sum += lc.time;
    slowest = std::max(slowest, lc.time - lc.latency);
    messages += lc.messages;
  }
  Terms t;
  t.fixed = sum + double(pieces - 1) * slowest;
  t.messages = std::max<uint64_t>(1, messages * pieces);
  return t;
}

// Only where the machine has levels to follow.
bool distinct(const Collective& c, const MachineModel& m) {
  const Levels L = levels_of(m, c.nranks, has_root(c.op) ? c.root : 0);
  if (L.trivial()) return false;
  return (c.op != CollOp::scan && c.op != CollOp::exscan) || consecutive(L);
}

// Vectors of 64 KiB and more also in 2 … 16 pieces; allreduce also by
// slices and, across several subnets, by shares (1, 4, 8, 16 pieces).
std::vector<std::string> variants(const Collective& c, const MachineModel& m) {
  if ((c.op != CollOp::bcast && c.op != CollOp::reduce && c.op != CollOp::allreduce) ||
      c.count * c.elem_size < (uint64_t(64) << 10))
    return {};
  std::vector<std::string> v{"hierarchical"};
  for (int k : {2, 4, 8, 16})
    if (uint64_t(k) <= c.count) v.push_back(cat("hierarchical[pieces=", k, "]"));
  if (c.op == CollOp::allreduce) {
    v.push_back("hierarchical[slices=1]");
    if (levels_of(m, c.nranks, 0).top.size() > 1)
      for (int k : {1, 4, 8, 16})
        if (uint64_t(k) <= c.count) v.push_back(k > 1 ? cat("hierarchical[pieces=", k, ",shares=1]") : "hierarchical[shares=1]");
  }
  return v;
}

// Which settings the planner tries.
std::vector<std::string> all_variants(const Collective& c, const MachineModel& m) {
  if (c.op == CollOp::barrier || c.op == CollOp::allgather) return {"hierarchical", "hierarchical[direct=1]"};
  return variants(c, m);
}

}  // namespace

Algorithm hierarchical_algorithm() {
  Algorithm a;
  a.name = "hierarchical";
  a.ops = {CollOp::bcast,    CollOp::reduce,         CollOp::allreduce, CollOp::allgather,
           CollOp::allgatherv, CollOp::reduce_scatter_block, CollOp::reduce_scatter, CollOp::alltoall,
           CollOp::gather,   CollOp::scatter,        CollOp::barrier,   CollOp::scan,
           CollOp::exscan};
  a.description = "phases inside hosts, inside subnets and among subnets, each phase's algorithm chosen by the model";
  a.steps = "the sum of the phases' steps";
  a.bytes = "across subnets: one vector per subnet (allgather: the subnet's blocks)";
  a.cost = "the phases' costs; the top phase crosses the slow links once";
  a.source = "ECO §4-5; Banikazemi et al. §4; SMP-aware collectives";
  a.composite = true;
  a.estimate = estimate;
  a.copy_in_place = {CollOp::alltoall};
  a.params = {{"pieces", ParamKind::integer, 1, 64, false,
                "bcast, reduce, allreduce: the vector in this many pieces, each through all phases (pipelined)"},
              {"slices", ParamKind::integer, 0, 1, false,
               "allreduce: 1 = reduce-scatter inside subnets, allreduce of each slice across them, allgather back"},
              {"shares", ParamKind::integer, 0, 1, false,
               "allreduce: 1 = each subnet owns a share of the vector sized to its uplink (reduce-scatter and "
               "allgather among subnets)"},
              {"direct", ParamKind::integer, 0, 1, false,
               "barrier, allgather: 1 = every rank crosses to its counterpart in the other subnets (no fan-out)"}};
  a.generate = generate;
  a.distinct = distinct;
  a.variants = all_variants;
  return a;
}

}  // namespace hetcoll
