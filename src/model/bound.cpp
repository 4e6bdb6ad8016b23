#include "model/bound.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "util/error.hpp"

namespace hetcoll {
namespace {

// What a collective asks of a partition of its ranks into parts: the bytes
// that must enter and leave each part at least, and over all parts together
// the bytes that must cross between parts (each crossing enters one part and
// leaves another).
struct Crossing {
  std::vector<double> in, out;
  std::vector<char> used;  // the part holds ranks of the call
  double aggregate = 0;
};

// The block of rank i: what it contributes (allgather, gather), receives
// (scatter) or keeps of the reduced vector (reduce_scatter).
double block_bytes(const Collective& c, int i) {
  const double e = c.elem_size;
  switch (c.op) {
    case CollOp::gatherv:
    case CollOp::scatterv:
    case CollOp::allgatherv:
    case CollOp::reduce_scatter:
      return double(c.counts[size_t(i)]) * e;
    default:
      return double(c.count) * e;
  }
}

Crossing crossing(const Collective& c, const std::vector<int>& part, int nparts) {
  const int p = c.nranks;
  Crossing x;
  x.in.assign(size_t(nparts), 0);
  x.out.assign(size_t(nparts), 0);
  std::vector<int> ranks_in(size_t(nparts), 0);
  for (int r = 0; r < p; ++r) ++ranks_in[size_t(part[size_t(r)])];
  x.used.assign(size_t(nparts), 0);
  for (int X = 0; X < nparts; ++X) x.used[size_t(X)] = ranks_in[size_t(X)] > 0;
  const int k = int(std::count_if(ranks_in.begin(), ranks_in.end(), [](int n) { return n > 0; }));
  if (k < 2) return x;
  const double m = double(c.count) * c.elem_size;
  auto sum_in = [&] { return std::accumulate(x.in.begin(), x.in.end(), 0.0); };
  switch (c.op) {
    case CollOp::barrier:
      break;
    case CollOp::bcast:
    case CollOp::reduce: {  // the vector reaches every part from the root's (or back)
      const int rp = part[size_t(c.root)];
      for (int X = 0; X < nparts; ++X) {
        if (ranks_in[size_t(X)] == 0) continue;
        // bcast: the root's part gives the vector, every other takes it in;
        // reduce: the other way round.
        const bool gives = (X == rp) == (c.op == CollOp::bcast);
        (gives ? x.out : x.in)[size_t(X)] = m;
      }
      x.aggregate = double(k - 1) * m;
      break;
    }
    case CollOp::allreduce:  // every part needs the others' sum and gives its own
      for (int X = 0; X < nparts; ++X)
        if (ranks_in[size_t(X)] > 0) x.in[size_t(X)] = x.out[size_t(X)] = m;
      x.aggregate = 2.0 * double(k - 1) * m;  // k-1 to combine, k-1 to hand out
      break;
    case CollOp::scan:
    case CollOp::exscan: {  // rank i needs every rank below it
      std::vector<int> lo(size_t(nparts), p), hi(size_t(nparts), -1);
      for (int r = 0; r < p; ++r) {
        int X = part[size_t(r)];
        lo[size_t(X)] = std::min(lo[size_t(X)], r);
        hi[size_t(X)] = std::max(hi[size_t(X)], r);
      }
      // The lowest and highest ranks outside a part: of the two lowest and
      // two highest parts' ranks overall.
      for (int X = 0; X < nparts; ++X) {
        if (ranks_in[size_t(X)] == 0) continue;
        int below = -1, above = -1;
        for (int r = 0; r < p && below < 0; ++r)
          if (part[size_t(r)] != X) below = r;
        for (int r = p - 1; r >= 0 && above < 0; --r)
          if (part[size_t(r)] != X) above = r;
        if (below >= 0 && below < hi[size_t(X)]) x.in[size_t(X)] = m;
        if (above >= 0 && above > lo[size_t(X)]) x.out[size_t(X)] = m;
      }
      x.aggregate = sum_in();
      break;
    }
    case CollOp::gather:
    case CollOp::gatherv:
    case CollOp::scatter:
    case CollOp::scatterv: {  // the blocks outside the root's part travel to it (or from it)
      const bool to_root = c.op == CollOp::gather || c.op == CollOp::gatherv;
      const int rp = part[size_t(c.root)];
      for (int r = 0; r < p; ++r) {
        int X = part[size_t(r)];
        if (X == rp) continue;
        double b = block_bytes(c, r);
        (to_root ? x.out : x.in)[size_t(X)] += b;
        (to_root ? x.in : x.out)[size_t(rp)] += b;
      }
      x.aggregate = sum_in();
      break;
    }
    case CollOp::allgather:
    case CollOp::allgatherv:
    case CollOp::reduce_scatter:
    case CollOp::reduce_scatter_block: {
      // allgather: the others' blocks enter a part, its own leave it.
      // reduce_scatter: the others' contributions to a part's blocks enter
      // it, its contributions to the others' leave it; every element's k
      // contributions need k-1 crossings to meet.
      const bool gather = c.op == CollOp::allgather || c.op == CollOp::allgatherv;
      std::vector<double> own(size_t(nparts), 0);
      double all = 0;
      for (int r = 0; r < p; ++r) {
        double b = block_bytes(c, r);
        own[size_t(part[size_t(r)])] += b;
        all += b;
      }
      for (int X = 0; X < nparts; ++X) {
        if (ranks_in[size_t(X)] == 0) continue;
        x.in[size_t(X)] = gather ? all - own[size_t(X)] : own[size_t(X)];
        x.out[size_t(X)] = gather ? own[size_t(X)] : all - own[size_t(X)];
      }
      x.aggregate = double(k - 1) * all;
      break;
    }
    case CollOp::alltoall:
    case CollOp::alltoallv: {
      if (c.op == CollOp::alltoall) {
        const double b = double(c.count) * c.elem_size;
        for (int X = 0; X < nparts; ++X) {
          double n = ranks_in[size_t(X)];
          x.in[size_t(X)] = x.out[size_t(X)] = n * double(p - n) * b;
        }
      } else {
        for (int i = 0; i < p; ++i)
          for (int j = 0; j < p; ++j) {
            if (part[size_t(i)] == part[size_t(j)]) continue;
            double b = double(c.sendcounts[size_t(i) * size_t(p) + size_t(j)]) * c.elem_size;
            x.out[size_t(part[size_t(i)])] += b;
            x.in[size_t(part[size_t(j)])] += b;
          }
      }
      x.aggregate = sum_in();
      break;
    }
  }
  return x;
}

// The least costs of a zero-byte message, over the pairs given: the
// sender's overhead before bytes flow, the latency after they have, the
// receive; and the whole message.
struct Overheads {
  double send = 0, latency = 0, recv = 0, total = 0;
};
// `apart(a, b)`: the pairs whose messages count (those crossing the cut).
template <class Apart>
Overheads least_overheads(const MachineModel& m, const std::vector<int>& ranks, Apart apart) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  Overheads o{inf, inf, inf, inf};
  for (int a : ranks)
    for (int b : ranks) {
      if (a == b || !apart(a, b)) continue;
      MessageCost mc = m.message(a, b, 0);
      o.send = std::min(o.send, mc.send - mc.wire);
      o.latency = std::min(o.latency, mc.arrive - mc.send);
      o.recv = std::min(o.recv, mc.recv);
      o.total = std::min(o.total, mc.arrive + mc.recv);
    }
  if (!std::isfinite(o.total)) return {};
  auto pos = [](double v) { return std::max(0.0, v); };
  return {pos(o.send), pos(o.latency), pos(o.recv), pos(o.total)};
}

class Constraints {
 public:
  void add(std::string name, double bytes, double capacity, double overheads) {
    if (bytes <= 0 || capacity <= 0 || !std::isfinite(capacity)) return;
    ++b_.constraints;
    double t = overheads + bytes / capacity;
    if (t > b_.time) {
      b_.time = t;
      b_.cut = std::move(name);
      b_.bytes = bytes;
      b_.capacity = capacity;
      b_.overheads = overheads;
    }
  }
  void path(std::string name, double t) {
    ++b_.constraints;
    if (t > b_.time) {
      b_.time = t;
      b_.cut = std::move(name);
      b_.bytes = b_.capacity = 0;
      b_.overheads = t;
    }
  }
  Bound& bound() { return b_; }

 private:
  Bound b_;
};

// The links of a partition: per part, the link in and the link out (-1:
// none). Each part's own cut, and all parts together.
void network_cuts(Constraints& k, const Collective& c, const Topology& t, const std::vector<int>& part, int nparts,
                  const std::vector<int>& link_in, const std::vector<int>& link_out,
                  const std::vector<std::string>& names, const char* in_name, const char* out_name,
                  double overheads) {
  Crossing x = crossing(c, part, nparts);
  auto cap = [&](int l) { return l < 0 ? 0.0 : t.links[size_t(l)].bandwidth; };
  auto label = [&](const char* what, int X) {
    return cat(what, "(", X < int(names.size()) && !names[size_t(X)].empty() ? names[size_t(X)] : std::to_string(X),
               ")");
  };
  bool all_shared = true, any = false;
  double cap_in = 0, cap_out = 0;
  bool in_everywhere = true, out_everywhere = true;
  for (int X = 0; X < nparts; ++X) {
    if (!x.used[size_t(X)] || (x.in[size_t(X)] == 0 && x.out[size_t(X)] == 0 && x.aggregate == 0)) continue;
    const int li = link_in[size_t(X)], lo = link_out[size_t(X)];
    if (li >= 0 && li == lo) {
      k.add(label(in_name, X) + " both ways", x.in[size_t(X)] + x.out[size_t(X)], cap(li), overheads);
    } else {
      all_shared = false;
      k.add(label(in_name, X), x.in[size_t(X)], cap(li), overheads);
      k.add(label(out_name, X), x.out[size_t(X)], cap(lo), overheads);
    }
    any = true;
    in_everywhere = in_everywhere && li >= 0;
    out_everywhere = out_everywhere && lo >= 0;
    cap_in += cap(li);
    cap_out += cap(lo);
  }
  if (!any || x.aggregate <= 0) return;
  // Over all parts: every crossing enters one part and leaves another.
  if (all_shared && in_everywhere) {
    k.add(cat("all ", in_name, " links together, both ways"), 2 * x.aggregate, cap_in, overheads);
  } else {
    if (in_everywhere) k.add(cat("all ", in_name, " links together"), x.aggregate, cap_in, overheads);
    if (out_everywhere) k.add(cat("all ", out_name, " links together"), x.aggregate, cap_out, overheads);
  }
}

// The cuts of the tree, level by level: at depth d the ranks' parts are
// the subtrees rooted at depth d (a host above that depth its own), each
// guarded by its edge — the hosts' interfaces at the bottom, the
// switches' uplinks above. Every such level, with the least overheads of a
// message between two of its parts.
template <class Overheads>
void tree_cuts(Constraints& k, const Collective& c, const Topology& t, Overheads&& overheads_apart) {
  const int p = c.nranks;
  const int deepest = t.depth();
  std::vector<int> part(static_cast<size_t>(p)), node_of_part, in, out;
  std::vector<std::string> names;
  for (int d = deepest; d >= 1; --d) {
    node_of_part.clear();
    std::vector<int> part_of_node(t.nodes.size(), -1);
    for (int r = 0; r < p; ++r) {
      const int n = t.ancestor(t.node_of_host[size_t(t.host_of(r))], d);
      if (part_of_node[size_t(n)] < 0) {
        part_of_node[size_t(n)] = int(node_of_part.size());
        node_of_part.push_back(n);
      }
      part[size_t(r)] = part_of_node[size_t(n)];
    }
    if (node_of_part.size() < 2) continue;
    bool leaves = true;
    in.clear(), out.clear(), names.clear();
    for (int n : node_of_part) {
      const NetNode& x = t.nodes[size_t(n)];
      leaves = leaves && x.host >= 0;
      in.push_back(x.down);
      out.push_back(x.up);
      names.push_back(x.name);
    }
    network_cuts(k, c, t, part, int(node_of_part.size()), in, out, names, leaves ? "nic_down" : "uplink_in",
                 leaves ? "nic_up" : "uplink_out", overheads_apart(d));
  }
}

// A switch's fabric carries every byte that must cross between the parts
// of a partition all of whose crossings pass through it: its children's
// subtrees and the rest of the machine (a fabric every switch has — an
// emulated cluster's one machine — every byte between hosts).
template <class Overheads>
void fabric_cuts(Constraints& k, const Collective& c, const Topology& t, Overheads&& overheads_apart) {
  const int p = c.nranks;
  std::vector<int> done;
  for (size_t s = 0; s < t.nodes.size(); ++s) {
    const int f = t.nodes[s].fabric;
    if (f < 0 || std::find(done.begin(), done.end(), f) != done.end()) continue;
    if (!t.never_limits.empty() && t.never_limits[size_t(f)]) continue;
    bool everywhere = true;
    for (const NetNode& x : t.nodes) everywhere = everywhere && (x.host >= 0 || x.fabric == f);
    const double cap = t.links[size_t(f)].bandwidth;
    std::vector<int> part(static_cast<size_t>(p));
    if (everywhere) {
      done.push_back(f);
      for (int r = 0; r < p; ++r) part[size_t(r)] = t.host_of(r);
      Crossing x = crossing(c, part, t.hosts());
      k.add(t.links[size_t(f)].name, x.aggregate, cap, overheads_apart(t.depth()));
      continue;
    }
    // This switch alone: part 0 the machine outside it, then its children.
    const int d = t.nodes[s].depth;
    int parts = 1;
    std::vector<int> part_of_child(t.nodes.size(), -1);
    for (int r = 0; r < p; ++r) {
      const int leaf = t.node_of_host[size_t(t.host_of(r))];
      if (t.nodes[size_t(leaf)].depth <= d || t.ancestor(leaf, d) != int(s)) {
        part[size_t(r)] = 0;
        continue;
      }
      const int child = t.ancestor(leaf, d + 1);
      if (part_of_child[size_t(child)] < 0) part_of_child[size_t(child)] = parts++;
      part[size_t(r)] = part_of_child[size_t(child)];
    }
    Crossing x = crossing(c, part, parts);
    k.add(cat(t.links[size_t(f)].name, " (", t.nodes[s].name, ")"), x.aggregate, cap, overheads_apart(d + 1));
  }
}

// Per rank: its receive port takes every byte it must receive (and, without
// links, its send ports every byte it must send).
void port_cuts(Constraints& k, const Collective& c, const MachineModel& m, bool uniform, bool links) {
  const int p = c.nranks;
  std::vector<int> part(static_cast<size_t>(p));
  std::iota(part.begin(), part.end(), 0);
  Crossing x = crossing(c, part, p);
  constexpr uint64_t L = uint64_t(1) << 20;
  constexpr double inf = std::numeric_limits<double>::infinity();
  const int ports = std::max(1, m.send_ports());
  double r_fixed = inf, r_byte = inf, s_fixed = inf, s_byte = inf, first = inf;
  for (int v = 0; v < p; ++v) {
    if (x.in[size_t(v)] == 0 && x.out[size_t(v)] == 0) continue;
    if (!uniform || v == 0) {
      r_fixed = r_byte = s_fixed = s_byte = first = inf;
      for (int u = 0; u < p; ++u) {
        if (u == v) continue;
        MessageCost z = m.message(u, v, 0), big = m.message(u, v, L);
        r_fixed = std::min(r_fixed, z.recv);
        r_byte = std::min(r_byte, (big.recv - z.recv) / double(L));
        first = std::min(first, z.arrive);
        MessageCost zs = m.message(v, u, 0), bs = m.message(v, u, L);
        s_fixed = std::min(s_fixed, zs.send);
        s_byte = std::min(s_byte, (bs.send - zs.send) / double(L));
        if (uniform) break;
      }
    }
    if (!std::isfinite(r_fixed)) continue;
    auto pos = [](double d) { return std::max(0.0, d); };
    if (x.in[size_t(v)] > 0 && r_byte > 0)
      k.add(cat("receive port of rank ", v), x.in[size_t(v)], 1 / r_byte, pos(first) + pos(r_fixed));
    if (!links && x.out[size_t(v)] > 0 && s_byte > 0)
      k.add(cat("send port", ports > 1 ? "s" : "", " of rank ", v), x.out[size_t(v)], double(ports) / s_byte,
            pos(s_fixed) / ports);
  }
}

}  // namespace

std::string Bound::str(const std::string& unit) const {
  std::string what = capacity > 0 ? cat(cut, ": ", bytes, " B at ", capacity, " B/", unit, " + ", overheads, " ", unit,
                                        " of overheads")
                                  : cat(cut);
  return cat(time, " ", unit, " (", what, ")");
}

json::Value Bound::to_json() const {
  json::Value v = json::Value::object();
  v["bound"] = time;
  v["cut"] = cut;
  v["bytes"] = bytes;
  v["capacity"] = capacity;
  v["overheads"] = overheads;
  v["constraints"] = constraints;
  v["network"] = network;
  return v;
}

Bound lower_bound(const Collective& c, const MachineModel& m) {
  c.check();
  if (m.ranks() > 0 && m.ranks() < c.nranks)
    throw InputError(cat("the model describes ", m.ranks(), " ranks; the call has ", c.nranks));
  Constraints k;
  const int p = c.nranks;
  if (p < 2) return k.bound();
  TopologyPtr topo = m.topology();
  const bool links = topo && topo->multi_host();
  // Every pair alike: a model without per-rank data and without links.
  const bool uniform = m.ranks() == 0 && !topo;
  if (uniform || p <= kBoundPairRanks) port_cuts(k, c, m, uniform, links);
  // A collective that moves data (or a barrier) on two or more ranks needs
  // at least one message through.
  bool moves = c.op == CollOp::barrier;
  for (int r = 0; r < p && !moves; ++r) moves = c.in_bytes(r) > 0 || c.out_bytes(r) > 0;
  if (moves) {
    std::vector<int> all(size_t(uniform ? 2 : std::min(p, kBoundPairRanks)));
    std::iota(all.begin(), all.end(), 0);
    Overheads o = least_overheads(m, all, [](int, int) { return true; });
    if (uniform || p <= kBoundPairRanks) k.path("one message", o.total);
  }
  if (links) {
    const Topology& t = *topo;
    // One rank per host: the least overheads of a message between hosts.
    std::vector<int> rep(size_t(t.hosts()), -1);
    for (int r = p - 1; r >= 0; --r) rep[size_t(t.host_of(r))] = r;
    rep.erase(std::remove(rep.begin(), rep.end(), -1), rep.end());
    // The least overheads of a message that crosses a cut at depth d (its
    // two ends under different nodes of that depth).
    auto sum = [](const Overheads& o) { return o.send + o.latency + o.recv; };
    const bool pairs = int(rep.size()) <= kBoundPairRanks;
    std::vector<double> apart(size_t(t.depth()) + 1, -1.0);
    auto overheads_apart = [&](int d) {
      if (!pairs) return 0.0;
      double& o = apart[size_t(std::min(d, t.depth()))];
      if (o < 0) {
        auto leaf = [&](int r) { return t.node_of_host[size_t(t.host_of(r))]; };
        o = sum(least_overheads(m, rep, [&](int a, int b) { return t.ancestor(leaf(a), d) != t.ancestor(leaf(b), d); }));
      }
      return o;
    };
    tree_cuts(k, c, t, overheads_apart);
    fabric_cuts(k, c, t, overheads_apart);
  }
  Bound b = k.bound();
  b.network = links;
  return b;
}

}  // namespace hetcoll
