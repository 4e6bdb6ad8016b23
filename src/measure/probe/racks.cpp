// Phase 4d, racks by bandwidth: the hosts of a subnet in an order, shifts of
// flows, the racks they show checked and measured; then pods of racks.
#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "measure/probe/probe.hpp"

namespace hetcoll::probe {

namespace {

// Names compared with their runs of digits as numbers: r2h9 < r2h10 < r10h0.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0, db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Without leading zeros, the longer run is the larger number.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      i = ie, j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

}  // namespace

// 4d. Racks (concurrent mode): inside a subnet (hosts latency does not
// tell apart), the hosts whose messages leave through one shared link —
// a rack of a fat tree whose uplink is oversubscribed. Hosts are taken in
// the ring's order (nearest latency next: racks in runs where latency
// tells them apart at all; else the host order, a hostfile's; else by
// name, numbers by value).
//  1. Shifts: for k = 1, 2, 4, … below the subnet's size, every host i of
//     the subnet sends to host i + k (cyclically), all at once; where no
//     shift had slow and fast flows, the shifts between the last with none
//     slow and the first with all slow (at most 6 more). The rack edges
//     from the rates: model/racks.hpp.
//  2. Checks and capacities, the racks found as racks: inside every rack a
//     shift by one (every flow at its ends' rate, else the racks are
//     dropped); every rack j to rack j + 1 at once, position by position
//     (each rack's link out and in loaded); then only even racks to the
//     next (out alone): a rack's link is one for both ways where its
//     flows out moved 1.5x faster alone, and its capacity the rates
//     through it summed.
// log2(n) + 3 experiments of n flows per subnet: O(p log p) messages.
void Probe::racks() {
  if (opt.sequential || H < 4) return;
  // A subnet's hosts in the probe's ring order (nearest latency next: a
  // rack's hosts together where latency tells them apart at all); where
  // that finds no racks that hold, in the host order (a hostfile's,
  // usually by name: where latency is equal, its differences are noise
  // and the ring's order is theirs), then by name; the same on every rank.
  std::vector<std::vector<int>> orders;
  if (g_rank == 0 && ring.hosts.size() == size_t(H)) orders.push_back(ring.hosts);
  std::vector<int> by_host(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h) by_host[size_t(h)] = h;
  if (orders.empty() || orders[0] != by_host) orders.push_back(by_host);
  // Then by name, numbers by value (r2h10 after r2h9): where a hostfile
  // interleaves or shuffles racks whose names say where they are.
  std::vector<int> by_name = by_host;
  std::stable_sort(by_name.begin(), by_name.end(),
                   [&](int a, int b) { return natural_less(hosts.names[size_t(a)], hosts.names[size_t(b)]); });
  if (g_rank == 0 && std::find(orders.begin(), orders.end(), by_name) == orders.end()) orders.push_back(by_name);
  int tries = int(orders.size());
  MPI_Bcast(&tries, 1, MPI_INT, 0, g_comm);
  orders.resize(size_t(tries), by_host);
  for (auto& o : orders) MPI_Bcast(o.data(), H, MPI_INT, 0, g_comm);
  double took = 0;  // the first order's time: the estimate for the next
  for (const auto& o : orders)
    if (racks_in_order(o, took)) return;
}

// Racks by bandwidth with the hosts in `order`: whether that is settled —
// racks found that hold (found_racks on rank 0), or no flow slowed at all —
// the same on every rank.
bool Probe::racks_in_order(const std::vector<int>& order_of_hosts, double& took) {
  std::vector<std::vector<int>> members(static_cast<size_t>(S));
  for (int h : order_of_hosts) members[size_t(subnet_of[size_t(h)])].push_back(h);
  int widest = 0;
  for (const auto& m : members) widest = std::max(widest, int(m.size()));
  if (widest < 4) return true;  // nothing to find
  // 16x the bandwidth message (at most 16 MiB): a flow's latencies (the
  // way there, a rendezvous, the answer) a few percent of its time even at
  // 100 Gbit/s, or flows of nearer pairs read as faster.
  const uint64_t bytes = std::min<uint64_t>(large * 16, uint64_t(16) << 20);
  // Rank 0's estimate: a shift's flows at a quarter of the slowest pair's
  // rate, 2 repeats, log2 + 4 experiments (and up to 6 between shifts).
  int experiments = 4;
  for (int k = 1; 2 * k <= widest; k *= 2) ++experiments;
  const double estimate = took > 0 ? 1.2 * took : experiments * flows_estimate(bytes);
  if (!affords(estimate, 0.85)) {
    exhausted = true;
    return true;
  }
  const double start = MPI_Wtime();
  struct Took {
    double& took;
    double start;
    ~Took() { took = MPI_Wtime() - start; }
  } timing{took, start};
  bar.phase("racks", 0.5, 0.5);
  ShiftRates sh;
  sh.members = members;
  for (int k = 1; 2 * k <= widest; k *= 2) {  // at most half a subnet (model/racks.cpp)
    sh.rates.push_back(flow_rates(shift_targets(members, H, k), bytes));
    sh.ks.push_back(k);
  }
  // Where no shift had slow and fast flows, the shifts between the last
  // with none slow and the first with all slow, halving (rank 0 decides).
  for (int more = 0; more < 6; ++more) {
    int k = g_rank == 0 ? next_shift(sh, H) : 0;
    MPI_Bcast(&k, 1, MPI_INT, 0, g_comm);
    if (k == 0) break;
    sh.rates.push_back(flow_rates(shift_targets(members, H, k), bytes));
    sh.ks.push_back(k);
  }
  // Rank 0: the rack edges per subnet, the racks between them.
  int racks_count = 0;
  std::vector<int> rack_of(size_t(H), -1);  // per host, a rack number (global), -1: none
  if (g_rank == 0) rack_of = racks_from_shifts(sh, H, racks_count);
  if (g_rank == 0) {
    const std::vector<double> best = best_rates(sh, H);
    rack_nic.resize(size_t(H), 0.0);
    for (int h = 0; h < H; ++h) rack_nic[size_t(h)] = std::max(rack_nic[size_t(h)], best[size_t(h)]);
  }
  // No racks and no slow flow: no structure another order would show.
  int slowed = g_rank == 0 && any_slow_flow(sh, H);
  MPI_Bcast(&slowed, 1, MPI_INT, 0, g_comm);
  MPI_Bcast(&racks_count, 1, MPI_INT, 0, g_comm);
  if (racks_count == 0) return !slowed;
  MPI_Bcast(rack_of.data(), H, MPI_INT, 0, g_comm);
  // The racks' hosts in host order, and each rack's next in its subnet.
  std::vector<std::vector<int>> rack(static_cast<size_t>(racks_count));
  std::vector<int> subnet_of_rack(size_t(racks_count), -1);
  for (int h = 0; h < H; ++h)
    if (rack_of[size_t(h)] >= 0) {
      rack[size_t(rack_of[size_t(h)])].push_back(h);
      subnet_of_rack[size_t(rack_of[size_t(h)])] = subnet_of[size_t(h)];
    }
  std::vector<int> next(size_t(racks_count), -1), index_in_subnet(size_t(racks_count), 0);
  for (int s = 0; s < S; ++s) {
    std::vector<int> rs;
    for (int r = 0; r < racks_count; ++r)
      if (subnet_of_rack[size_t(r)] == s) rs.push_back(r);
    for (size_t j = 0; j < rs.size(); ++j) {
      next[size_t(rs[j])] = rs[(j + 1) % rs.size()];
      index_in_subnet[size_t(rs[j])] = int(j);
    }
  }
  GroupSet g;
  g.hosts = rack;
  g.next = next;
  g.index = index_in_subnet;
  g.vote = subnet_of_rack;
  std::vector<double> inside_ratio;
  std::vector<RackProfile> links =
      group_links(g, bytes, cat("racks by bandwidth: ", sh.ks.size(), " shifts, rack to next rack "), inside_ratio);
  // Every rack of a subnet of three racks or more to all the others and
  // back, where the budget affords it: a rack's link faster than the next
  // rack's reads as the next's (2.5 Gbit/s beside 2).
  std::vector<int> which;
  for (int r = 0; r < racks_count; ++r)
    if (std::count(subnet_of_rack.begin(), subnet_of_rack.end(), subnet_of_rack[size_t(r)]) >= 3) which.push_back(r);
  if (!which.empty() && affords(double(which.size()) * 2 * flows_estimate(bytes), 0.85))
    fan_links(g, which, bytes, links);
  // Inside a rack every flow at its ends' rate, or the racks are not racks.
  int held = 1;
  for (int r = 0; r < racks_count && g_rank == 0 && held; ++r)
    if (inside_ratio[size_t(r)] < kRackSlow) {
      std::fprintf(stderr, "hetcoll-probe: racks by bandwidth dropped: inside the rack of %s … %s (%zu hosts) a flow moved %.0f %% "
                   "of the best inside one\n", hosts.names[size_t(rack[size_t(r)].front())].c_str(),
                   hosts.names[size_t(rack[size_t(r)].back())].c_str(), rack[size_t(r)].size(), 100 * inside_ratio[size_t(r)]);
      held = 0;
    }
  // Racks of one host each are no structure (nothing inside to check):
  // the order's noise cut every edge.
  if (g_rank == 0 && held && std::all_of(rack.begin(), rack.end(), [](const auto& r) { return r.size() == 1; })) {
    std::fprintf(stderr, "hetcoll-probe: racks by bandwidth dropped: %d racks of one host each\n", racks_count);
    held = 0;
  }
  MPI_Bcast(&held, 1, MPI_INT, 0, g_comm);
  if (!held) return false;
  std::vector<RackProfile> pod_links = pods(rack, subnet_of_rack, bytes);
  if (g_rank != 0) return true;
  for (int r = 0; r < racks_count; ++r) links[size_t(r)].subnet = subnet_of_rack[size_t(r)];
  // Pods first, each rack after them within its pod (network_from_classes
  // nests a rack under one listed before it).
  for (RackProfile& l : links) {
    for (size_t q = 0; q < pod_links.size(); ++q)
      if (std::includes(pod_links[q].hosts.begin(), pod_links[q].hosts.end(), l.hosts.begin(), l.hosts.end()))
        l.within = int(q);
  }
  found_racks = std::move(pod_links);
  found_racks.insert(found_racks.end(), links.begin(), links.end());
  return true;
}

// Pods by bandwidth (concurrent mode, after racks that held): the racks of
// a subnet as the hosts were — for k = 1, 2, 4, … below half their count,
// every rack j sends to rack j + k at once (host q to host q), a rack's
// rate the rates of its flows summed; where racks share a link above them
// (a pod of a 3-level fat tree whose uplink is oversubscribed), the racks
// whose flows cross a pod's edge are slow (model/racks.hpp, racks as
// hosts). Pods of one rack each are none. Each pod's links then as the
// racks' (group_links, and to and from all the others with 3 pods or
// more). Every rank calls it; rank 0 gets the pods (hosts ascending,
// within -1), none where there are none.
std::vector<RackProfile> Probe::pods(const std::vector<std::vector<int>>& rack, const std::vector<int>& subnet_of_rack,
                                     uint64_t bytes) {
  const int R = int(rack.size());
  std::vector<std::vector<int>> members(static_cast<size_t>(S));  // per subnet, its racks in order
  for (int r = 0; r < R; ++r) members[size_t(subnet_of_rack[size_t(r)])].push_back(r);
  int widest = 0;
  for (const auto& m : members) widest = std::max(widest, int(m.size()));
  if (widest < 4) return {};
  int experiments = 6 + 5 + 2 * widest;  // shifts (and up to 6 more), group_links, fans
  for (int k = 1; 2 * k <= widest; k *= 2) ++experiments;
  if (!affords(experiments * flows_estimate(bytes), 0.85)) {
    exhausted = true;
    return {};
  }
  bar.phase("pods", 0.5, 0.5);
  // A shift of the racks: the flows of the hosts, and per rack the rates
  // of its flows summed.
  auto rack_shift = [&](int k) {
    const std::vector<int> rack_to = shift_targets(members, R, k);
    std::vector<int> to(size_t(H), -1);
    for (int r = 0; r < R; ++r)
      if (rack_to[size_t(r)] >= 0)
        for (size_t q = 0; q < std::min(rack[size_t(r)].size(), rack[size_t(rack_to[size_t(r)])].size()); ++q)
          to[size_t(rack[size_t(r)][q])] = rack[size_t(rack_to[size_t(r)])][q];
    const std::vector<double> rate = flow_rates(to, bytes);
    std::vector<double> per_rack(size_t(R), 0.0);
    for (int r = 0; r < R; ++r)
      for (int h : rack[size_t(r)])
        if (to[size_t(h)] >= 0) per_rack[size_t(r)] += rate[size_t(h)];
    return per_rack;
  };
  ShiftRates sh;
  sh.members = members;
  for (int k = 1; 2 * k <= widest; k *= 2) sh.rates.push_back(rack_shift(k)), sh.ks.push_back(k);
  for (int more = 0; more < 6; ++more) {
    int k = g_rank == 0 ? next_shift(sh, R) : 0;
    MPI_Bcast(&k, 1, MPI_INT, 0, g_comm);
    if (k == 0) break;
    sh.rates.push_back(rack_shift(k)), sh.ks.push_back(k);
  }
  int count = 0;
  std::vector<int> pod_of(size_t(R), -1);
  if (g_rank == 0) pod_of = racks_from_shifts(sh, R, count);
  // Pods of one rack each are no structure; a pod of every rack of its
  // subnet neither.
  if (g_rank == 0) {
    std::vector<int> size(size_t(count), 0);
    for (int r = 0; r < R; ++r)
      if (pod_of[size_t(r)] >= 0) ++size[size_t(pod_of[size_t(r)])];
    if (std::all_of(size.begin(), size.end(), [](int n) { return n <= 1; })) count = 0;
  }
  MPI_Bcast(&count, 1, MPI_INT, 0, g_comm);
  if (count == 0) return {};
  MPI_Bcast(pod_of.data(), R, MPI_INT, 0, g_comm);
  GroupSet g;
  g.inside = false;  // inside a pod: its racks' links measured
  std::vector<int> subnet_of_pod(size_t(count), -1);
  g.hosts.assign(size_t(count), {});
  for (int r = 0; r < R; ++r)
    if (pod_of[size_t(r)] >= 0) {
      auto& hs = g.hosts[size_t(pod_of[size_t(r)])];
      hs.insert(hs.end(), rack[size_t(r)].begin(), rack[size_t(r)].end());
      subnet_of_pod[size_t(pod_of[size_t(r)])] = subnet_of_rack[size_t(r)];
    }
  for (auto& hs : g.hosts) std::sort(hs.begin(), hs.end());
  g.next.assign(size_t(count), -1);
  g.index.assign(size_t(count), 0);
  for (int sn = 0; sn < S; ++sn) {
    std::vector<int> ps;
    for (int q = 0; q < count; ++q)
      if (subnet_of_pod[size_t(q)] == sn) ps.push_back(q);
    for (size_t j = 0; j < ps.size(); ++j) g.next[size_t(ps[j])] = ps[(j + 1) % ps.size()], g.index[size_t(ps[j])] = int(j);
  }
  g.vote = subnet_of_pod;
  std::vector<double> inside;
  std::vector<RackProfile> links = group_links(g, bytes, cat("pods by bandwidth: ", sh.ks.size(), " shifts of racks, pod to next pod "), inside);
  std::vector<int> which;
  for (int q = 0; q < count; ++q)
    if (std::count(subnet_of_pod.begin(), subnet_of_pod.end(), subnet_of_pod[size_t(q)]) >= 3) which.push_back(q);
  fan_links(g, which, bytes, links);
  if (g_rank != 0) return {};
  for (int q = 0; q < count; ++q) links[size_t(q)].subnet = subnet_of_pod[size_t(q)];
  return links;
}

}  // namespace hetcoll::probe
