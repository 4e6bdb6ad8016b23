// Flows at once and the links they measure: flow_rates, the links of groups
// of hosts (group_links, fan_links) and phase 4e, the subnets' own links.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "measure/probe/probe.hpp"

namespace hetcoll::probe {

// Rank 0's estimate of one flow_rates experiment of `bytes` flows (its
// three repeats): each flow at a quarter of the slowest pair's rate, and
// 5 ms of barriers and answers a repeat (0 on the other ranks; the budget's
// decisions are rank 0's).
double Probe::flows_estimate(uint64_t bytes) const {
  double slowest = 0;
  for (size_t k = 0; k < pd.large_min.size() && g_rank == 0; ++k) slowest = std::max(slowest, pd.large_min[k]);
  return 3 * (4 * slowest * double(bytes) / double(large) + 0.005);
}

// Flows at once: every host h with to[h] >= 0 sends a message from its
// leader to to[h]'s (a host receives at most one), each receiver answering
// with a small message; a flow's rate its bytes over (the time from a
// barrier to the answer, less two one-way latencies of the pair). Three
// repeats: all flows `bytes` first; then twice each flow sized to its
// last rate (bytes times its rate over the fastest's, at least 1/16 of
// them), so that the flows end together and each moved at its share of
// what it crossed while all of them ran. Flows of equal bytes do not end
// together where a link gives flows of shorter round trips more (CM02,
// TCP): the first done leave the rest more, and rates summed say more than
// the link moved (5 flows out of a 25 MB/s link summed to 27.5). Per
// sender, the best of the two sized repeats. Rank 0 gets the rates (0
// where no flow); every rank calls it.
std::vector<double> Probe::flow_rates(const std::vector<int>& to, uint64_t bytes) {
  std::vector<int> from(size_t(H), -1);
  for (int h = 0; h < H; ++h)
    if (to[size_t(h)] >= 0) from[size_t(to[size_t(h)])] = h;
  std::vector<char> out(static_cast<size_t>(bytes), 1), in(static_cast<size_t>(bytes));
  auto leader = [&](int host) { return hosts.ranks[size_t(host)][0]; };
  std::vector<double> last(size_t(H), 0.0), best(size_t(H), 0.0), mine(static_cast<size_t>(H)), all(static_cast<size_t>(H));
  std::vector<unsigned long long> size(size_t(H), bytes);
  for (int rep = 0; rep < 3; ++rep) {
    if (rep > 0) {  // rank 0 sizes the flows to the last repeat's rates
      double fastest = 0;
      for (int h = 0; h < H && g_rank == 0; ++h) fastest = std::max(fastest, last[size_t(h)]);
      for (int h = 0; h < H && g_rank == 0; ++h)
        size[size_t(h)] = fastest > 0 && last[size_t(h)] > 0
                              ? std::clamp<unsigned long long>((unsigned long long)(double(bytes) * last[size_t(h)] / fastest),
                                                               std::max<uint64_t>(bytes / 16, 1), bytes)
                              : bytes;
      MPI_Bcast(size.data(), H, MPI_UNSIGNED_LONG_LONG, 0, g_comm);
    }
    std::fill(mine.begin(), mine.end(), 0.0);
    quiet_barrier();
    MPI_Barrier(g_comm);
    const int me = hosts.mine, t = to[size_t(me)], f = from[size_t(me)];
    if (hosts.leader() && (t >= 0 || f >= 0)) {
      // The answer leaves as soon as the receive is in (not after this
      // host's own send: a slow flow out would make the flow in look slow).
      const double t0 = MPI_Wtime();
      MPI_Request send = MPI_REQUEST_NULL, recv = MPI_REQUEST_NULL;
      if (f >= 0) MPI_Irecv(in.data(), count_of(size[size_t(f)]), MPI_BYTE, leader(f), kData, g_comm, &recv);
      if (t >= 0) MPI_Isend(out.data(), count_of(size[size_t(me)]), MPI_BYTE, leader(t), kData, g_comm, &send);
      char ack = 0;
      MPI_Request answer = MPI_REQUEST_NULL;
      if (t >= 0) MPI_Irecv(&ack, 1, MPI_BYTE, leader(t), kDone, g_comm, &answer);
      // Whichever comes first: the flow in (answer it), the answer to the
      // flow out (its time).
      MPI_Request pending[2] = {recv, answer};
      char done = 0;
      for (int left = (f >= 0) + (t >= 0); left > 0; --left) {
        int which = MPI_UNDEFINED;
        MPI_Waitany(2, pending, &which, MPI_STATUS_IGNORE);
        if (which == 0) MPI_Send(&done, 1, MPI_BYTE, leader(f), kDone, g_comm);
        if (which == 1) mine[size_t(me)] = MPI_Wtime() - t0;
      }
      MPI_Wait(&send, MPI_STATUS_IGNORE);
    }
    MPI_Reduce(mine.data(), all.data(), H, MPI_DOUBLE, MPI_MAX, 0, g_comm);
    if (g_rank == 0)
      for (int h = 0; h < H; ++h) {
        last[size_t(h)] = 0;
        if (to[size_t(h)] < 0 || !(all[size_t(h)] > 0)) continue;
        // Less the way there and the answer's way back.
        const double answer = pd.small_min[size_t(h) * size_t(H) + size_t(to[size_t(h)])];
        const double took = all[size_t(h)] - 2 * answer;
        if (took > 0) last[size_t(h)] = double(size[size_t(h)]) / took;
        if (rep == 2) best[size_t(h)] = last[size_t(h)];
      }
  }
  quiet_barrier();
  return best;
}

// Rank 0: per host, the fastest its interface was seen to move — its best
// flow in the racks' shifts, or with any partner in the pairs' rounds
// (pairs share no interface).
std::vector<double> Probe::interface_rates() const {
  std::vector<double> nic(size_t(H), 0.0);
  const double payload = double(large - opt.small);
  for (int h = 0; h < H; ++h) {
    nic[size_t(h)] = h < int(rack_nic.size()) ? rack_nic[size_t(h)] : 0.0;
    for (int o = 0; o < H && pd.large_min.size() == HH; ++o) {
      const size_t k = size_t(h) * size_t(H) + size_t(o);
      if (o != h && pd.large_min[k] > pd.small_min[k])
        nic[size_t(h)] = std::max(nic[size_t(h)], payload / (pd.large_min[k] - pd.small_min[k]));
    }
  }
  return nic;
}

// Groups `which` of g one after another, each to all the other groups of
// its vote at once and all of those to it (its hosts to the others' hosts
// interleaved, one group's in turn, nearest first; as many flows as it has hosts): a link
// out faster than any one group's link in (5 Gbit/s out, 1 Gbit/s into
// each other subnet; a rack of 2.5 Gbit/s beside one of 2) is filled only
// by flows into several. A link gets the sums through it where they are
// more than it had; where every flow moved at its ends' rate, at least its
// hosts' interfaces together (as in group_links). Every rank calls it with
// the same `which`; rank 0 changes `links`.
void Probe::fan_links(const GroupSet& g, const std::vector<int>& which, uint64_t bytes, std::vector<RackProfile>& links) {
  const std::vector<double> nic = g_rank == 0 ? interface_rates() : std::vector<double>(size_t(H), 0.0);
  auto all_free = [&](const std::vector<int>& to, const std::vector<double>& rate) {
    bool any = false;
    for (int h = 0; h < H; ++h) {
      if (to[size_t(h)] < 0) continue;
      const double ends = std::min(nic[size_t(h)], nic[size_t(to[size_t(h)])]);
      if (!(ends > 0) || rate[size_t(h)] < kRackSlow * ends) return false;
      any = true;
    }
    return any;
  };
  const int count = int(g.hosts.size());
  size_t widest = 0;
  for (const auto& m : g.hosts) widest = std::max(widest, m.size());
  for (int r : which) {
    // The other groups' hosts interleaved, the groups nearest in order
    // first, after and before it in turn (r+1, r-1, r+2, …): its neighbours,
    // often under the same switch above, beside groups under others, so
    // that a link of its own faster than the one above it shows (a rack of
    // 937.5 MB/s in a pod whose uplink moves 390: flows into its pod's
    // other rack and out of the pod at once).
    std::vector<int> near;
    for (int o = 1; 2 * o <= count + 1; ++o)
      for (int x : {(r + o) % count, (r - o + count) % count})
        if (x != r && std::find(near.begin(), near.end(), x) == near.end() && g.vote[size_t(x)] == g.vote[size_t(r)])
          near.push_back(x);
    std::vector<int> others;
    for (size_t q = 0; q < widest; ++q)
      for (int x : near)
        if (q < g.hosts[size_t(x)].size()) others.push_back(g.hosts[size_t(x)][q]);

    const auto& mine = g.hosts[size_t(r)];
    std::vector<int> out_to(size_t(H), -1), in_to(size_t(H), -1);
    for (size_t q = 0; q < mine.size() && q < others.size(); ++q) {
      out_to[size_t(mine[q])] = others[q];
      in_to[size_t(others[q])] = mine[q];
    }
    if (others.empty()) continue;  // (the same on every rank)
    const std::vector<double> ro = flow_rates(out_to, bytes), ri = flow_rates(in_to, bytes);
    if (g_rank != 0) continue;
    double fan_out = 0, fan_in = 0, hosts_sum = 0;
    for (int h = 0; h < H; ++h) fan_out += ro[size_t(h)], fan_in += ri[size_t(h)];
    for (int h : mine) hosts_sum += nic[size_t(h)];
    const bool out_free = all_free(out_to, ro), in_free = all_free(in_to, ri);
    RackProfile& l = links[size_t(r)];
    if (l.shared ? out_free && in_free : out_free) fan_out = std::max(fan_out, l.shared ? 2 * hosts_sum : hosts_sum);
    if (l.shared ? out_free && in_free : in_free) fan_in = std::max(fan_in, l.shared ? 2 * hosts_sum : hosts_sum);
    const bool more_out = fan_out > l.up.bandwidth, more_in = fan_in > (l.shared ? l.up : l.down).bandwidth;
    const char* at_least = out_free || in_free ? " (its flows at their hosts' rate: at least)" : "";
    if (l.shared) {
      if (more_out || more_in) {
        l.up.bandwidth = l.down.bandwidth = std::max(fan_out, fan_in);
        l.up.how = l.down.how = l.up.how + "; to and from all the others" + at_least;
      }
      continue;
    }
    if (more_out) l.up.bandwidth = fan_out, l.up.how += cat("; to all the others", out_free ? at_least : "");
    if (more_in) l.down.bandwidth = fan_in, l.down.how += cat("; from all the others", in_free ? at_least : "");
  }
}

// 4e. The subnets' links (concurrent mode, two subnets or more): the
// subnets as groups of group_links — every subnet's hosts to the next
// subnet's at once, and to the one before, and every host to another
// subnet's host — each subnet's link out and in, as its flows summed (or
// "at least" its hosts' interfaces where every flow moved at its ends'
// rate). The pairs' classes alone cannot tell a subnet's link: one pair
// across moves at its NIC where NICs are slower than the uplink (several
// flows fill it), a class is one rate for both directions (an uplink
// faster in than out) and one rate for both subnets. 3–5 experiments of
// at most H flows each, and with three subnets or more 2 per subnet (to
// all the others, from all the others).
void Probe::subnet_links() {
  if (opt.sequential || S < 2 || H < 2) return;
  const uint64_t bytes = std::min<uint64_t>(large * 16, uint64_t(16) << 20);
  std::vector<std::vector<int>> members(static_cast<size_t>(S));
  for (int h = 0; h < H; ++h) members[size_t(subnet_of[size_t(h)])].push_back(h);
  // group_links' 5 experiments, and 2 per subnet with three or more.
  if (!affords((5 + (S >= 3 ? 2 * S : 0)) * flows_estimate(bytes), 0.88)) {
    exhausted = true;
    return;
  }
  bar.phase("subnet links", 0.5, 0.5);
  GroupSet g;
  g.inside = false;  // inside a subnet: the pairs and the racks measured it
  g.symmetric = false;  // uplinks faster one way than the other
  for (int s = 0; s < S; ++s) {
    g.hosts.push_back(members[size_t(s)]);
    g.next.push_back((s + 1) % S);
    g.index.push_back(s);
    g.vote.push_back(0);  // one kind of link for all (as a subnet's racks): some measured out alone
  }
  std::vector<double> inside;
  std::vector<RackProfile> links = group_links(g, bytes, "subnets: subnet to next subnet ", inside);
  // With three subnets or more, each subnet to all the others and back.
  std::vector<int> which;
  for (int s = 0; S >= 3 && s < S; ++s) which.push_back(s);
  fan_links(g, which, bytes, links);
  if (g_rank != 0) return;
  for (int s = 0; s < S; ++s) links[size_t(s)].subnet = s;
  found_subnets = std::move(links);
}

// The links of groups of hosts (racks; a declared level's switches): inside
// every group a shift by one (every flow at its ends' rate, else the
// group is not one: inside_ratio, the worst flow inside over the best
// inside any group); every group j to its next at once, position by
// position (each group's link out and in loaded), and again to the group
// before it (a link out measured into two different links in: the
// faster, where the first one's link in was the narrower); then only the
// groups of even index to a next of odd index, and of odd index to a next
// of even index (out alone): a group's link
// is one for both ways where its flows out moved 1.5x faster alone (the
// groups of one vote decide together), its capacity the rates through it
// summed. Where every flow through a link moved at its hosts' rate, the
// link did not limit them: at least its hosts' interfaces together (a
// group sends only as many flows as the group it sends to has hosts).
// And every host of a cycle of groups at once to a host of another group
// (spread_flows): a group larger than the one after it loads its own links
// with all its hosts (a rack of 4 beside racks of 3 read 1.88 of its
// 2.5 GB/s through the 3 flows its next could take).
// Every rank calls it; rank 0 gets the links (subnet and within left to
// the caller).
std::vector<int> Probe::spread_flows(const GroupSet& g) const {
  std::vector<int> to(size_t(H), -1);
  std::vector<bool> seen(g.hosts.size(), false);
  for (size_t first = 0; first < g.hosts.size(); ++first) {
    if (seen[first] || g.next[first] < 0 || g.next[first] == int(first)) continue;
    // The cycle through `first`: its groups' hosts one after another.
    std::vector<int> order, group;
    size_t most = 0;
    for (int r = int(first); r >= 0 && !seen[size_t(r)]; r = g.next[size_t(r)]) {
      seen[size_t(r)] = true;
      for (int h : g.hosts[size_t(r)]) order.push_back(h), group.push_back(r);
      most = std::max(most, g.hosts[size_t(r)].size());
    }
    const size_t T = order.size();
    size_t shift = most;
    if (2 * shift == T) ++shift;  // no pair both ways at once
    if (shift >= T) continue;
    for (size_t i = 0; i < T; ++i) {
      const size_t j = (i + shift) % T;
      if (group[j] != group[i]) to[size_t(order[i])] = order[j];  // (two groups: the wrap lands inside)
    }
  }
  return to;
}

std::vector<RackProfile> Probe::group_links(const GroupSet& g, uint64_t bytes, const std::string& how_first,
                                            std::vector<double>& inside_ratio) {
  const int count = int(g.hosts.size());
  std::vector<int> group_of(size_t(H), -1), prev(size_t(count), -1);
  for (int r = 0; r < count; ++r)
    for (int h : g.hosts[size_t(r)]) group_of[size_t(h)] = r;
  for (int r = 0; r < count; ++r)
    if (g.next[size_t(r)] >= 0 && g.next[size_t(r)] != r) prev[size_t(g.next[size_t(r)])] = r;
  std::vector<int> inside(size_t(H), -1), across(size_t(H), -1), back(size_t(H), -1), one_way(size_t(H), -1),
      one_way_odd(size_t(H), -1);
  for (int r = 0; r < count; ++r) {
    const auto& a = g.hosts[size_t(r)];
    // No pair both ways at once (over TCP its two directions may take
    // turns on one connection): a rack of 2 sends one way inside.
    if (a.size() >= 2 && g.inside)
      for (size_t q = 0; q < (a.size() == 2 ? 1 : a.size()); ++q) inside[size_t(a[q])] = a[(q + 1) % a.size()];
    // Host q of a group receives from host q of the group before it only
    // (after it, going back); in a cycle of two groups, the second sends to
    // host q + 1 (no pair both ways).
    const int nx = g.next[size_t(r)], pv = prev[size_t(r)];
    if (nx >= 0 && nx != r) {
      const auto& b = g.hosts[size_t(nx)];
      const size_t turn = g.next[size_t(nx)] == r && g.index[size_t(r)] % 2 == 1 && b.size() > 1 ? 1 : 0;
      for (size_t q = 0; q < std::min(a.size(), b.size()); ++q) {
        across[size_t(a[q])] = b[(q + turn) % b.size()];
        if (g.index[size_t(r)] % 2 == 0 && g.index[size_t(nx)] % 2 == 1) one_way[size_t(a[q])] = b[q];
        if (g.index[size_t(r)] % 2 == 1 && g.index[size_t(nx)] % 2 == 0 && g.next[size_t(nx)] != r)
          one_way_odd[size_t(a[q])] = b[q];
      }
    }
    if (pv >= 0 && pv != nx)
      for (size_t q = 0; q < std::min(a.size(), g.hosts[size_t(pv)].size()); ++q) back[size_t(a[q])] = g.hosts[size_t(pv)][q];
  }
  const std::vector<int> spread = spread_flows(g);
  const bool any_back = std::any_of(back.begin(), back.end(), [](int t) { return t >= 0; });
  const bool any_spread = std::any_of(spread.begin(), spread.end(), [](int t) { return t >= 0; });
  const std::vector<double> rin = g.inside ? flow_rates(inside, bytes) : std::vector<double>(size_t(H), 0.0),
                            racr = flow_rates(across, bytes),
                            rback = any_back ? flow_rates(back, bytes) : std::vector<double>(size_t(H), 0.0),
                            rone = flow_rates(one_way, bytes),
                            rodd = std::any_of(one_way_odd.begin(), one_way_odd.end(), [](int t) { return t >= 0; })
                                       ? flow_rates(one_way_odd, bytes)
                                       : std::vector<double>(size_t(H), 0.0),
                            rspread = any_spread ? flow_rates(spread, bytes) : std::vector<double>(size_t(H), 0.0);
  std::vector<RackProfile> out;
  inside_ratio.assign(size_t(count), 1.0);
  if (g_rank != 0) return out;
  double best_inside = 0;
  for (int h = 0; h < H; ++h) best_inside = std::max(best_inside, rin[size_t(h)]);
  for (int h = 0; h < H; ++h)
    if (inside[size_t(h)] >= 0 && best_inside > 0)
      inside_ratio[size_t(group_of[size_t(h)])] = std::min(inside_ratio[size_t(group_of[size_t(h)])], rin[size_t(h)] / best_inside);
  // A host's interface: at least its best flow so far, or inside its group.
  std::vector<double> nic = interface_rates();
  for (int h = 0; h < H; ++h) {
    if (inside[size_t(h)] >= 0) {
      nic[size_t(h)] = std::max(nic[size_t(h)], rin[size_t(h)]);
      nic[size_t(inside[size_t(h)])] = std::max(nic[size_t(inside[size_t(h)])], rin[size_t(h)]);
    }
  }
  // Per group and experiment (0 next, 1 back): the rates out of it and into
  // it summed, and whether every such flow moved at its ends' rate.
  struct Through {
    double out = 0, in = 0;
    bool out_free = true, in_free = true;
  };
  std::vector<std::array<Through, 3>> th(static_cast<size_t>(count));
  for (int e = 0; e < 3; ++e) {
    const std::vector<int>& to = e == 0 ? across : e == 1 ? back : spread;
    const std::vector<double>& rate = e == 0 ? racr : e == 1 ? rback : rspread;
    for (int h = 0; h < H; ++h) {
      const int t = to[size_t(h)];
      if (t < 0) continue;
      const double ends = std::min(nic[size_t(h)], nic[size_t(t)]);
      const bool free = ends > 0 && rate[size_t(h)] >= kRackSlow * ends;
      Through& a = th[size_t(group_of[size_t(h)])][size_t(e)];
      Through& b = th[size_t(group_of[size_t(t)])][size_t(e)];
      a.out += rate[size_t(h)], a.out_free = a.out_free && free;
      b.in += rate[size_t(h)], b.in_free = b.in_free && free;
    }
  }
  // Per vote, whether its groups' links carry both ways on one (from the
  // groups whose flows out were measured alone too).
  std::map<int, int> shared_votes, votes, clear_votes;
  std::vector<double> alone_out(size_t(count), 0.0);
  for (int h = 0; h < H; ++h)
    if (group_of[size_t(h)] >= 0)
      alone_out[size_t(group_of[size_t(h)])] += (one_way[size_t(h)] >= 0 ? rone[size_t(h)] : 0.0) +
                                                (one_way_odd[size_t(h)] >= 0 ? rodd[size_t(h)] : 0.0);
  for (int r = 0; r < count; ++r)
    if (alone_out[size_t(r)] > 0 && th[size_t(r)][0].out > 0) {
      ++votes[g.vote[size_t(r)]];
      // Its flows out 1.5x faster alone; or 1.2x faster alone and, both
      // ways, out and in together no more than alone (one link whose
      // share each way follows the flows' latencies, as CM02's and TCP's
      // do: 17 out and 8 in of 25 alone).
      const double a = alone_out[size_t(r)], o = th[size_t(r)][0].out, i = th[size_t(r)][0].in;
      shared_votes[g.vote[size_t(r)]] += a > 1.5 * o || (a > 1.2 * o && o + i <= 1.2 * a);
      clear_votes[g.vote[size_t(r)]] += a > 1.5 * o;
    }
  for (int r = 0; r < count; ++r) {
    const Through& f = th[size_t(r)][0];
    const Through& b = th[size_t(r)][1];
    const Through& sp = th[size_t(r)][2];
    RackProfile x;
    x.hosts = g.hosts[size_t(r)];
    const int v = g.vote[size_t(r)];
    // A tie goes to one link where some group's flows out moved 1.5x
    // faster alone (the links of a full duplex path never slow each other).
    x.shared = votes[v] > 0 && (2 * shared_votes[v] > votes[v] || (2 * shared_votes[v] == votes[v] && clear_votes[v] > 0));
    std::string how = how_first + (any_back ? "and back, " : "") + (any_spread ? "every host to another group's, " : "") +
                      (alone_out[size_t(r)] > 0 ? "both ways and out alone" : "both ways");
    double hosts_sum = 0;
    for (int h : x.hosts) hosts_sum += nic[size_t(h)];
    if (f.out <= 0 && f.in <= 0 && b.out <= 0 && b.in <= 0 && sp.out <= 0 && sp.in <= 0) {
      // No flow through it (no next): its hosts' interfaces together, not a limit.
      x.up = x.down = {hosts_sum, 0, how_first + "not measured (nothing to send to beside it): its hosts' interfaces"};
      out.push_back(std::move(x));
      continue;
    }
    // Flows at their hosts' rate: the link did not limit them.
    const bool out_free = (f.out > 0 && f.out_free) || (b.out > 0 && b.out_free) || (sp.out > 0 && sp.out_free);
    const bool in_free = (f.in > 0 && f.in_free) || (b.in > 0 && b.in_free) || (sp.in > 0 && sp.in_free);
    if (x.shared) {
      double both = std::max({f.out + f.in, b.out + b.in, sp.out + sp.in, alone_out[size_t(r)]});
      if (out_free && in_free) both = std::max(both, 2 * hosts_sum), how += "; its flows at their hosts' rate: at least";
      x.up = x.down = {both, 0, how};
    } else {
      double up = std::max({f.out, b.out, sp.out, alone_out[size_t(r)]});
      // What came in was held to what the group before sent out (its link
      // out full): a bound from below; the link in at least as fast as
      // this group's own link out then.
      double prev_out = 0;
      if (prev[size_t(r)] >= 0) prev_out = th[size_t(prev[size_t(r)])][0].out;
      // (Not where links may differ by direction: subnets' uplinks.)
      const bool held = g.symmetric && f.in > 0 && prev_out > 0 && f.in >= 0.95 * prev_out;
      double down = std::max({f.in > 0 ? (held ? std::max(f.in, up) : f.in) : up, b.in, sp.in});
      if (out_free) up = std::max(up, hosts_sum);
      if (in_free) down = std::max(down, hosts_sum);
      if (out_free || in_free) how += "; its flows at their hosts' rate: at least";
      x.up = {up, 0, how};
      x.down = {down, 0, how};
    }
    out.push_back(std::move(x));
  }
  return out;
}

}  // namespace hetcoll::probe
