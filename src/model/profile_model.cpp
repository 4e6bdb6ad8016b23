#include "model/profile_model.hpp"

#include <algorithm>
#include <cmath>

#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll {

double one_way_rate(const PairClass& c) { return std::max(c.bandwidth_alone, c.bandwidth); }

// The rate of the pair the probe timed alone, both ways and as one pair
// both ways (one pair of the class): those are held to it, not to the
// class's — in a class of fast and slow interfaces that pair may be a slow
// one (issue 25: a slow pair's both-ways rate against the class's fast
// median read as a half-duplex network).
double measured_pair_rate(const PairClass& c) { return c.bandwidth_alone > 0 ? c.bandwidth_alone : one_way_rate(c); }

bool full_duplex(const PairClass& c) {
  return c.bandwidth_both_ways > 0 && c.bandwidth_both_ways >= 0.75 * measured_pair_rate(c);
}

bool takes_turns(const PairClass& c) {
  return full_duplex(c) && c.bandwidth_same_pair > 0 && c.bandwidth_same_pair < 0.75 * measured_pair_rate(c);
}

double sharing_exponent(const Profile::Sharing& s, double near_latency, double far_latency) {
  const double x = s.far_shared, c = s.near_alone;
  if (!s.measured || !(x > 0) || !(c > x) || !(x < 0.9 * s.far_alone)) return 0;
  if (!(near_latency > 0) || !(far_latency >= 1.5 * near_latency)) return 0;
  const double a = std::log((c - x) / x) / std::log(far_latency / near_latency);
  return std::clamp(a, 0.0, Topology::kMaxLatencySharing);
}

ProfileModel::ProfileModel(const Profile& p, std::string spec) : spec_(std::move(spec)) {
  subnets_ = p.subnet_count;
  receives_use_cpu_ = p.receives_use_cpu;
  tuned_ = p.tuned;
  for (size_t i = 0; i < p.hosts.size(); ++i) {
    const HostProfile& h = p.hosts[i];
    hosts_.push_back({h.name, h.subnet, h.Sc.median, h.Sm, h.Rc.median, h.Rm, h.gamma, h.copy,
                      h.nic_up > 0 ? 1 / h.nic_up : 0.0, h.nic_down > 0 ? 1 / h.nic_down : 0.0});
    index_.emplace(h.name, int(i));
    by_key_.emplace(host_key(h.name), int(i));
  }
  probe_host_of_rank_.assign(size_t(p.ranks), 0);
  for (size_t i = 0; i < p.hosts.size(); ++i)
    for (int r : p.hosts[i].ranks) probe_host_of_rank_[size_t(r)] = int(i);
  links_.assign(size_t(subnets_) * size_t(subnets_), Link{});
  // A class's bytes move at what a pair got with the network to itself
  // (the probe's "alone" pair; what concurrent messages cost each other
  // is the topology's business), never below what its pairs got at once.
  auto per_byte = [](const PairClass& c) {
    const double bw = one_way_rate(c);
    return bw > 0 ? 1 / bw : 0.0;
  };
  for (const PairClass& c : p.classes) {
    Link l{c.Xc, per_byte(c)};
    if (c.a < 0) {
      shm_ = l;
      continue;
    }
    links_[size_t(c.a) * size_t(subnets_) + size_t(c.b)] = l;
    links_[size_t(c.b) * size_t(subnets_) + size_t(c.a)] = l;
  }
  // Ranks of one host without a measured shared-memory class: the host's
  // own subnet class (an upper bound; shared memory is faster).
  if (!p.shared_memory()) {
    const PairClass* inside = nullptr;
    for (const PairClass& c : p.classes)
      if (c.a >= 0 && c.a == c.b) inside = &c;
    if (inside) shm_ = {inside->Xc, per_byte(*inside)};
  }
  if (p.network.empty()) build_topology(p);
  else build_tree(p);
}

// A version 2 profile's tree, as the probe (or a site's declaration the
// probe measured) drew it: each link at what a message alone gets through
// it, with its latency.
void ProfileModel::build_tree(const Profile& p) {
  auto t = std::make_shared<Topology>();
  tree_ = true;
  const int H = int(hosts_.size());
  std::vector<int> node_of(p.network.size(), 0);
  auto add = [&](const NodeProfile& n, const LinkProfile& l, const char* what) {
    return l.bandwidth > 0 ? t->add_link(cat(what, "(", n.name, ")"), l.bandwidth, l.latency) : -1;
  };
  t->nodes[0].name = p.network[0].name;
  t->nodes[0].fabric = add(p.network[0], p.network[0].fabric, "fabric");
  // A fabric "as" another node's: that node's link.
  auto fabric = [&](size_t i) {
    const NodeProfile& n = p.network[i];
    return n.fabric_as >= 0 ? t->nodes[size_t(node_of[size_t(n.fabric_as)])].fabric : add(n, n.fabric, "fabric");
  };
  std::vector<int> leaf_of_host(size_t(H), -1);
  for (size_t i = 1; i < p.network.size(); ++i) {
    const NodeProfile& n = p.network[i];
    const bool host = n.host >= 0;
    const int up = add(n, n.up, n.shared ? (host ? "nic" : "uplink") : (host ? "nic_up" : "uplink_up"));
    const int down = n.shared ? up : add(n, n.down, host ? "nic_down" : "uplink_down");
    const int parent = node_of[size_t(n.parent)];
    if (!host) {
      node_of[i] = t->add_switch(parent, n.name, up, down, fabric(i));
      continue;
    }
    const int h = t->add_host(parent, n.name, up, down);
    node_of[i] = t->node_of_host[size_t(h)];
    leaf_of_host[size_t(n.host)] = h;
  }
  // The tree's hosts in the profile's order.
  std::vector<int> order(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h) order[size_t(h)] = t->node_of_host[size_t(leaf_of_host[size_t(h)])];
  for (int h = 0; h < H; ++h) {
    t->node_of_host[size_t(h)] = order[size_t(h)];
    t->nodes[size_t(order[size_t(h)])].host = h;
    t->host_of_rank.push_back(h);
  }
  const auto& sh = p.sharing;
  if (sh.measured && sh.receiver >= 0 && sh.receiver < H && sh.near >= 0 && sh.near < H && sh.far >= 0 && sh.far < H)
    t->latency_sharing =
        sharing_exponent(sh, t->path_latency(sh.near, sh.receiver), t->path_latency(sh.far, sh.receiver));
  if (p.ring.size() == size_t(H)) {
    std::vector<int> pos(size_t(H), -1);
    bool ok = true;
    for (size_t i = 0; i < p.ring.size() && ok; ++i) {
      const int h = p.ring[i];
      ok = h >= 0 && h < H && pos[size_t(h)] < 0;
      if (ok) pos[size_t(h)] = int(i);
    }
    if (ok) t->ring_position = pos;
  }
  t->check();
  t->settle();
  add_connections(*t, p);
  topo_ = t;
}

// Classes whose pair took turns: a connection of two of their ranks
// carries one direction at a time, at the fastest a message of the class
// moves alone (message(): the wire time leaves out the receiver's copy),
// so that a message alone is never slowed by it. The topology's groups
// must be the subnets (a tree whose racks split one subnet has groups of
// its own: no connections then).
void ProfileModel::add_connections(Topology& t, const Profile& p) const {
  const int S = subnets_;
  if (t.groups() != S) return;
  for (size_t h = 0; h < hosts_.size(); ++h)
    if (t.group_of_host(int(h)) != hosts_[h].subnet) return;
  for (const PairClass& c : p.classes) {
    if (c.a < 0 || !takes_turns(c)) continue;
    const Link& l = link(c.a, c.b);
    double Rm = 0;
    for (const Host& h : hosts_)
      if (h.subnet == c.a || h.subnet == c.b) Rm = std::max(Rm, h.Rm);
    const double per_byte = l.per_byte - Rm;
    if (!(per_byte > 0)) continue;
    if (t.connection.empty()) t.connection.assign(size_t(S) * size_t(S), 0.0);
    t.connection[size_t(c.a) * size_t(S) + size_t(c.b)] = t.connection[size_t(c.b) * size_t(S) + size_t(c.a)] =
        1 / per_byte;
  }
}

void ProfileModel::build_topology(const Profile& p) {
  auto t = std::make_shared<Topology>();
  const int H = int(hosts_.size()), S = subnets_;
  // The tree of depth 2 the classes describe: hosts under their subnet's
  // switch, the subnets under one root.
  std::vector<int> switch_of(static_cast<size_t>(S));
  for (int a = 0; a < S; ++a) switch_of[size_t(a)] = t->add_switch(0, cat("subnet ", a));
  t->host_of_rank.resize(size_t(H));
  for (int h = 0; h < H; ++h) t->host_of_rank[size_t(h)] = h;
  auto rate = [](const Link& l) { return l.per_byte > 0 ? 1 / l.per_byte : 0.0; };
  // A host's interface: what a pair of its subnet gets alone; in a subnet
  // of one host, the fastest of its classes.
  std::vector<double> nic(size_t(S), 0);
  for (int a = 0; a < S; ++a) {
    const bool inside_measured = p.between(a, a) != nullptr;
    for (int b = 0; b < S; ++b)
      if (b == a || !inside_measured) nic[size_t(a)] = std::max(nic[size_t(a)], rate(link(a, b)));
  }
  // One link for both directions where a pair inside the subnet, sending
  // both ways at once, got less than 3/4 of its one-way rate each way (a
  // half-duplex medium, or hosts whose CPUs cannot drive both directions).
  std::vector<bool> nic_shared(size_t(S), false);
  for (const PairClass& c : p.classes)
    if (c.a >= 0 && c.a == c.b && c.bandwidth_both_ways > 0 && !full_duplex(c)) nic_shared[size_t(c.a)] = true;
  // A host whose own interface the probe measured (its fastest pair inside
  // its subnet, each way) has that: a subnet mixing interfaces has a class
  // rate from one pair alone, perhaps a slow one (a 312 MB/s host drawn at
  // its subnet's 125).
  for (int h = 0; h < H; ++h) {
    const Host& x = hosts_[size_t(h)];
    const int sn = x.subnet;
    const double bw = nic[size_t(sn)];
    int up = -1, down = -1;
    if (bw > 0) {
      const double u = x.nic_up_per_byte > 0 ? 1 / x.nic_up_per_byte : bw;
      const double d = x.nic_down_per_byte > 0 ? 1 / x.nic_down_per_byte : bw;
      if (nic_shared[size_t(sn)]) {
        up = down = t->add_link(cat("nic(", x.name, ")"), std::min(u, d));
      } else {
        up = t->add_link(cat("nic_up(", x.name, ")"), u);
        down = t->add_link(cat("nic_down(", x.name, ")"), d);
      }
    }
    t->add_host(switch_of[size_t(sn)], x.name, up, down);
  }
  std::vector<double> up(size_t(S), 0);
  std::vector<bool> duplex(size_t(S), false);
  for (const PairClass& c : p.classes) {
    if (c.a < 0 || c.a == c.b || !(c.slowdown > 1.25)) continue;
    const double r = rate(link(c.a, c.b));
    if (!(r > 0) || r >= 0.8 * std::min(nic[size_t(c.a)], nic[size_t(c.b)])) continue;
    const bool full = full_duplex(c);
    for (int s : {c.a, c.b})
      if (r > up[size_t(s)]) up[size_t(s)] = r, duplex[size_t(s)] = full;
  }
  for (int a = 0; a < S; ++a) {
    if (!(up[size_t(a)] > 0)) continue;
    NetNode& sw = t->nodes[size_t(switch_of[size_t(a)])];
    if (duplex[size_t(a)]) {
      sw.up = t->add_link(cat("uplink_out(subnet ", a, ")"), up[size_t(a)]);
      sw.down = t->add_link(cat("uplink_in(subnet ", a, ")"), up[size_t(a)]);
    } else {
      sw.up = sw.down = t->add_link(cat("uplink(subnet ", a, ")"), up[size_t(a)]);
    }
  }
  // How flows of different latencies share a link, as the probe found,
  // weighed by the latencies the simulator weighs them by (message():
  // arrive - send, the classes' Xc).
  const auto& sh = p.sharing;
  if (sh.measured && sh.receiver >= 0 && sh.receiver < H && sh.near >= 0 && sh.near < H && sh.far >= 0 && sh.far < H) {
    const int sr = hosts_[size_t(sh.receiver)].subnet;
    t->latency_sharing = sharing_exponent(sh, link(hosts_[size_t(sh.near)].subnet, sr).Xc,
                                          link(hosts_[size_t(sh.far)].subnet, sr).Xc);
  }
  // The backplane the probe found: one link all traffic between hosts
  // shares — every switch's fabric, crossed once by a message.
  if (p.backplane.bandwidth > 0 && H > 1) {
    const int backplane = t->add_link("backplane", p.backplane.bandwidth);
    t->nodes[0].fabric = backplane;
    for (int a = 0; a < S; ++a) t->nodes[size_t(switch_of[size_t(a)])].fabric = backplane;
  }
  // The probe's ring (profile hosts in ring order), where it covers every host once.
  if (p.ring.size() == size_t(H)) {
    std::vector<int> pos(size_t(H), -1);
    bool ok = true;
    for (size_t i = 0; i < p.ring.size(); ++i) {
      const int h = p.ring[i];
      if (h < 0 || h >= H || pos[size_t(h)] >= 0) { ok = false; break; }
      pos[size_t(h)] = int(i);
    }
    if (ok) t->ring_position = pos;
  }
  t->check();
  t->settle();
  add_connections(*t, p);
  topo_ = t;
}

std::shared_ptr<ProfileModel> ProfileModel::load(const std::string& path) {
  return from_text(read_model_file(path), path);
}

std::shared_ptr<ProfileModel> ProfileModel::from_text(const std::string& text, const std::string& path) {
  Profile p;
  try {
    p = parse_profile(text, false);
  } catch (const InputError& e) {
    throw InputError(cat(path, ": ", e.what()));
  }
  // The identity: the path and a digest of the text (a re-probed file is
  // another model, for decision caches and tables).
  const uint64_t h = fnv1a(text);
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(h));
  auto m = std::make_shared<ProfileModel>(p, cat("profile:", path, "@", digest));
  m->text_digest_ = h;
  return m;
}

uint64_t ProfileModel::host_key(const std::string& name) { return fnv1a(name); }

const TunedEntry* ProfileModel::measured(const std::string& op, const std::vector<int>& hosts_of_ranks,
                                         int size_class) const {
  for (const TunedLayout& t : tuned_) {
    if (t.hosts != hosts_of_ranks) continue;
    for (const TunedEntry& e : t.entries)
      if (e.op == op && size_class >= e.class_lo && size_class < e.class_hi) return &e;
  }
  return nullptr;
}

std::vector<int> ProfileModel::default_rank_map(int n) const {
  std::vector<int> map(size_t(std::max(n, 0)));
  for (size_t r = 0; r < map.size(); ++r) map[r] = probe_host_of_rank_[r % probe_host_of_rank_.size()];
  return map;
}

int ProfileModel::host_of_key(uint64_t key) const {
  auto it = by_key_.find(key);
  return it == by_key_.end() ? -1 : it->second;
}

int ProfileModel::host_index(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

const ProfileModel::Link& ProfileModel::link(int a, int b) const {
  return links_[size_t(a) * size_t(subnets_) + size_t(b)];
}

MessageCost ProfileModel::message(int src, int dst, uint64_t bytes) const {
  if (src < 0 || dst < 0 || src >= ranks() || dst >= ranks())
    throw InputError(cat("the profile describes ", ranks(), " hosts; host ", src < 0 || src >= ranks() ? src : dst,
                         " is not one of them"));
  const Host& s = hosts_[size_t(src)];
  const Host& r = hosts_[size_t(dst)];
  const double m = double(bytes);
  if (tree_ && src != dst) {
    // The path's links: its slowest link's rate (a host's interface is its
    // leaf's edge), its latencies summed.
    const double wire = std::max(0.0, 1 / topo_->path_bandwidth(src, dst) - r.Rm) * m;
    const double send = s.Sc + wire;
    return {send, send + topo_->path_latency(src, dst), r.Rc + r.Rm * m, wire};
  }
  const Link& l = src == dst ? shm_ : link(s.subnet, r.subnet);
  // The one-way time of a large message is latency + m / bandwidth, of
  // which the receiver's copy is R_m·m: the rest is on the wire (the
  // sender's per-byte cost S_m overlaps it: it is inside the measured
  // bandwidth).
  // Between hosts, no faster than the sender's interface out and the
  // receiver's in (where the probe measured them).
  const double per_byte =
      src == dst ? l.per_byte : std::max({l.per_byte, s.nic_up_per_byte, r.nic_down_per_byte});
  const double wire = std::max(0.0, per_byte - r.Rm) * m;
  const double send = s.Sc + wire;
  return {send, send + l.Xc, r.Rc + r.Rm * m, wire};
}

double ProfileModel::reduce_time(int host, uint64_t bytes) const {
  return hosts_.at(size_t(host)).gamma * double(bytes);
}

double ProfileModel::copy_time(int host, uint64_t bytes) const {
  return hosts_.at(size_t(host)).copy * double(bytes);
}

uint64_t ProfileModel::content_digest() const { return text_digest_ ? text_digest_ : fnv1a(spec_); }

json::Value ProfileModel::to_json() const {
  json::Value v = json::Value::object();
  v["model"] = "profile";
  v["spec"] = spec_;
  v["hosts"] = int(hosts_.size());
  v["subnets"] = subnets_;
  return v;
}

}  // namespace hetcoll

namespace hetcoll {

std::vector<NodeProfile> network_from_classes(const Profile& p, const std::vector<RackProfile>& racks) {
  Profile v1 = p;
  v1.network.clear();
  const ProfileModel m(v1, "profile:network");
  const Topology& t = *m.topology();
  const int S = std::max(1, p.subnet_count);
  // X_c per class (subnets a ≤ b).
  auto Xc = [&](int a, int b) {
    const PairClass* c = p.between(a, b);
    return c ? std::max(0.0, c->Xc) : 0.0;
  };
  // Subnet uplink latencies u: u_a + u_b ≈ X_c(a, b) − (X_c(a, a) + X_c(b, b)) / 2,
  // least squares by Gauss-Seidel sweeps, not negative.
  std::vector<double> u(size_t(S), 0.0);
  for (int sweep = 0; sweep < 200 && S > 1; ++sweep)
    for (int a = 0; a < S; ++a) {
      double sum = 0;
      int n = 0;
      for (int b = 0; b < S; ++b) {
        if (b == a || !p.between(a, b)) continue;
        sum += Xc(a, b) - (Xc(a, a) + Xc(b, b)) / 2 - u[size_t(b)];
        ++n;
      }
      if (n) u[size_t(a)] = std::max(0.0, sum / n);
    }
  auto link_of = [&](int l, double latency, const char* how) {
    LinkProfile x;
    if (l >= 0) x.bandwidth = t.links[size_t(l)].bandwidth;
    x.latency = latency;
    x.how = how;
    return x;
  };
  std::vector<NodeProfile> out;
  NodeProfile root;
  root.name = "root";
  root.fabric = link_of(t.nodes[0].fabric, 0, "backplane: all hosts sending at once");
  if (t.nodes[0].fabric < 0) root.fabric = {};
  out.push_back(root);
  // Per subnet: its switch, its racks, its hosts.
  for (int a = 0; a < S; ++a) {
    const int sw = t.group_node(a);
    const NetNode& x = t.nodes[size_t(sw)];
    NodeProfile n;
    n.name = cat("subnet ", a);
    n.parent = 0;
    n.shared = x.up == x.down;
    n.up = link_of(x.up, u[size_t(a)], "uplink: the fastest slowed class alone");
    n.down = link_of(x.down, u[size_t(a)], "uplink: the fastest slowed class alone");
    if (x.fabric >= 0 && x.fabric == t.nodes[0].fabric) n.fabric_as = 0;
    const int subnet_node = int(out.size());
    out.push_back(n);
    std::vector<int> parent_of_host(p.hosts.size(), subnet_node);
    std::vector<int> node_of_rack(racks.size(), -1);
    for (size_t ri = 0; ri < racks.size(); ++ri) {
      const RackProfile& r = racks[ri];
      if (r.subnet != a) continue;
      NodeProfile rn;
      rn.name = r.name.empty() ? cat("subnet ", a, " rack ", out.size() - size_t(subnet_node)) : r.name;
      // Nested racks: under the rack holding it (listed before it), hosts
      // under the innermost.
      const bool nested = r.within >= 0 && size_t(r.within) < ri && node_of_rack[size_t(r.within)] >= 0;
      rn.parent = nested ? node_of_rack[size_t(r.within)] : subnet_node;
      rn.shared = r.shared;
      rn.up = r.up;
      rn.down = r.shared ? r.up : r.down;
      if (n.fabric_as >= 0) rn.fabric_as = 0;
      const int rack_node = int(out.size());
      node_of_rack[ri] = rack_node;
      out.push_back(rn);
      for (int h : r.hosts)
        if (h >= 0 && size_t(h) < p.hosts.size()) parent_of_host[size_t(h)] = rack_node;
    }
    for (size_t h = 0; h < p.hosts.size(); ++h) {
      if (p.hosts[h].subnet != a) continue;
      const NetNode& leaf = t.nodes[size_t(t.node_of_host[h])];
      NodeProfile hn;
      hn.name = p.hosts[h].name;
      hn.parent = parent_of_host[h];
      hn.host = int(h);
      hn.shared = leaf.up == leaf.down && leaf.up >= 0;
      const char* how = "interface: the host's fastest pair in its subnet, or its class alone";
      hn.up = link_of(leaf.up, Xc(a, a) / 2, how);
      hn.down = link_of(leaf.down, Xc(a, a) / 2, how);
      out.push_back(hn);
    }
  }
  return out;
}

}  // namespace hetcoll
