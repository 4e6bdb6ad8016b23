#include "model/topology.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "util/error.hpp"

namespace hetcoll {

int Topology::route(int a, int b, int out[kMaxRoute]) const {
  const int ha = host_of(a), hb = host_of(b);
  if (ha == hb) return 0;
  int n = 0;
  auto add = [&](int l) {
    if (l >= 0 && (never_limits.empty() || !never_limits[size_t(l)])) out[n++] = l;
  };
  add(nic_up[size_t(ha)]);
  add(backplane);
  const int sa = subnet_of_host[size_t(ha)], sb = subnet_of_host[size_t(hb)];
  if (sa != sb) {
    add(uplink_out[size_t(sa)]);
    add(uplink_in[size_t(sb)]);
  }
  add(nic_down[size_t(hb)]);
  return n;
}

double Topology::connection_between(int a, int b) const {
  if (connection.empty() || host_of(a) == host_of(b)) return 0;
  return connection[size_t(subnet_of(a)) * size_t(subnets()) + size_t(subnet_of(b))];
}

// Only the hosts, subnets and links the group reaches, renumbered in the
// order of the base's ids: a group of a few ranks of a machine of thousands
// of hosts (a phase of a hierarchical collective) does not copy the machine.
// What the group's messages cross, at what bandwidth, is unchanged; the
// probe's ring keeps its order.
std::shared_ptr<const Topology> Topology::mapped(const std::vector<int>& map) const {
  auto t = std::make_shared<Topology>();
  for (int r : map)
    if (r < 0 || r >= ranks())
      throw InputError(cat("rank map entry ", r, " is not a rank of the topology (", ranks(), " ranks)"));
  // The group's hosts and subnets, ascending; a new id is a position there.
  std::vector<int> used_hosts, used_subnets;
  used_hosts.reserve(map.size());
  for (int r : map) used_hosts.push_back(host_of(r));
  std::sort(used_hosts.begin(), used_hosts.end());
  used_hosts.erase(std::unique(used_hosts.begin(), used_hosts.end()), used_hosts.end());
  for (int h : used_hosts) used_subnets.push_back(subnet_of_host[size_t(h)]);
  std::sort(used_subnets.begin(), used_subnets.end());
  used_subnets.erase(std::unique(used_subnets.begin(), used_subnets.end()), used_subnets.end());
  auto new_id = [](const std::vector<int>& used, int old) {
    return int(std::lower_bound(used.begin(), used.end(), old) - used.begin());
  };
  std::unordered_map<int, int> link_new;
  auto link = [&](int l) -> int {
    if (l < 0) return -1;
    auto [it, fresh] = link_new.emplace(l, int(t->links.size()));
    if (fresh) {
      t->links.push_back(links[size_t(l)]);
      if (!never_limits.empty()) t->never_limits.push_back(never_limits[size_t(l)]);
    }
    return it->second;
  };
  for (int sn : used_subnets) {
    t->uplink_out.push_back(link(uplink_out[size_t(sn)]));
    t->uplink_in.push_back(link(uplink_in[size_t(sn)]));
    if (!subnet_names.empty()) t->subnet_names.push_back(subnet_names[size_t(sn)]);
  }
  for (int h : used_hosts) {
    t->subnet_of_host.push_back(new_id(used_subnets, subnet_of_host[size_t(h)]));
    t->nic_up.push_back(link(nic_up[size_t(h)]));
    t->nic_down.push_back(link(nic_down[size_t(h)]));
    if (!host_names.empty()) t->host_names.push_back(host_names[size_t(h)]);
  }
  t->backplane = link(backplane);
  t->latency_sharing = latency_sharing;
  t->host_of_rank.resize(map.size());
  for (size_t i = 0; i < map.size(); ++i) t->host_of_rank[i] = new_id(used_hosts, host_of(map[i]));
  if (!connection.empty()) {
    const size_t S = used_subnets.size(), B = size_t(subnets());
    t->connection.resize(S * S);
    for (size_t a = 0; a < S; ++a)
      for (size_t b = 0; b < S; ++b)
        t->connection[a * S + b] = connection[size_t(used_subnets[a]) * B + size_t(used_subnets[b])];
  }
  if (!ring_position.empty()) {  // the group's hosts in the ring's order
    std::vector<int> order(used_hosts.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return ring_position[size_t(used_hosts[size_t(a)])] < ring_position[size_t(used_hosts[size_t(b)])];
    });
    t->ring_position.resize(used_hosts.size());
    for (size_t k = 0; k < order.size(); ++k) t->ring_position[size_t(order[k])] = int(k);
  }
  return t;
}

void Topology::settle() {
  never_limits.assign(links.size(), 0);
  auto bw = [&](int l) { return l < 0 ? INFINITY : links[size_t(l)].bandwidth; };
  // What the interfaces can feed in all, and per subnet.
  double up_all = 0, down_all = 0;
  std::vector<double> up(size_t(subnets()), 0.0), down(size_t(subnets()), 0.0);
  for (int h = 0; h < hosts(); ++h) {
    const size_t s = size_t(subnet_of_host[size_t(h)]);
    up[s] += bw(nic_up[size_t(h)]);
    down[s] += bw(nic_down[size_t(h)]);
    up_all += bw(nic_up[size_t(h)]);
    down_all += bw(nic_down[size_t(h)]);
  }
  // Every message between hosts leaves through one interface and enters
  // through one.
  if (backplane >= 0 && bw(backplane) >= std::min(up_all, down_all)) never_limits[size_t(backplane)] = 1;
  for (int s = 0; s < subnets(); ++s) {
    const int out = uplink_out[size_t(s)], in = uplink_in[size_t(s)];
    if (out >= 0 && out == in) {  // both directions share it
      if (bw(out) >= up[size_t(s)] + down[size_t(s)]) never_limits[size_t(out)] = 1;
      continue;
    }
    if (out >= 0 && bw(out) >= up[size_t(s)]) never_limits[size_t(out)] = 1;
    if (in >= 0 && bw(in) >= down[size_t(s)]) never_limits[size_t(in)] = 1;
  }
}

void Topology::check() const {
  const int H = hosts(), S = subnets(), L = int(links.size());
  auto link_ok = [&](int l) { return l >= -1 && l < L; };
  for (int h : host_of_rank)
    if (h < 0 || h >= H) throw InputError(cat("topology: rank on host ", h, " of ", H));
  if (int(nic_up.size()) != H || int(nic_down.size()) != H)
    throw InputError("topology: one interface entry per host is needed");
  if (int(uplink_in.size()) != S) throw InputError("topology: one uplink entry per subnet is needed");
  for (int s : subnet_of_host)
    if (s < 0 || s >= S) throw InputError(cat("topology: host in subnet ", s, " of ", S));
  if (!ring_position.empty()) {
    if (int(ring_position.size()) != H) throw InputError("topology: the ring needs one position per host");
    std::vector<bool> seen(size_t(H), false);
    for (int x : ring_position) {
      if (x < 0 || x >= H || seen[size_t(x)]) throw InputError("topology: the ring's positions must be 0 … hosts-1, each once");
      seen[size_t(x)] = true;
    }
  }
  for (int h = 0; h < H; ++h)
    if (!link_ok(nic_up[size_t(h)]) || !link_ok(nic_down[size_t(h)]))
      throw InputError(cat("topology: host ", h, " names a link that does not exist"));
  for (int s = 0; s < S; ++s)
    if (!link_ok(uplink_out[size_t(s)]) || !link_ok(uplink_in[size_t(s)]))
      throw InputError(cat("topology: subnet ", s, " names a link that does not exist"));
  if (!link_ok(backplane)) throw InputError("topology: the backplane names a link that does not exist");
  if (!(latency_sharing >= 0 && latency_sharing <= kMaxLatencySharing))
    throw InputError(cat("topology: latency sharing exponent ", latency_sharing, " (must be 0 … ", kMaxLatencySharing, ")"));
  if (!connection.empty()) {
    if (connection.size() != size_t(S) * size_t(S))
      throw InputError("topology: one connection rate per pair of subnets is needed");
    for (int a = 0; a < S; ++a)
      for (int b = 0; b < S; ++b) {
        const double x = connection[size_t(a) * size_t(S) + size_t(b)];
        if (!(x >= 0) || !std::isfinite(x) || x != connection[size_t(b) * size_t(S) + size_t(a)])
          throw InputError(cat("topology: the connection rate between subnets ", a, " and ", b, " is ", x,
                               " (must be finite, not negative, the same both ways)"));
      }
  }
  for (const NetLink& l : links)
    if (!(l.bandwidth > 0) || !std::isfinite(l.bandwidth))
      throw InputError(cat("topology: link ", l.name, " has bandwidth ", l.bandwidth, " (must be positive)"));
}

bool Topology::multi_host() const {
  for (int h : host_of_rank)
    if (h != host_of_rank[0]) return true;
  return false;
}

bool Topology::multi_subnet() const {
  for (size_t r = 0; r < host_of_rank.size(); ++r)
    if (subnet_of(int(r)) != subnet_of(0)) return true;
  return false;
}

}  // namespace hetcoll
