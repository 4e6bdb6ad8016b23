// Rank 0's profile: every phase's measurements assembled into a Profile
// (hosts, classes, interfaces, backplane, racks), checked and written.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "measure/probe/probe.hpp"

#ifndef HETCOLL_VERSION_STRING
#define HETCOLL_VERSION_STRING "unknown"
#endif

namespace hetcoll::probe {

namespace {

// A class's bandwidth: the median over its pairs whose large message took
// longer than the small one (the others, noise on a loaded machine, say
// nothing about it); none such: the class is named in `unmeasured` and no
// profile is written.
double bandwidth_of(std::vector<double> bw, const std::string& name, std::string& unmeasured) {
  bw.erase(std::remove_if(bw.begin(), bw.end(), [](double x) { return !(x > 0); }), bw.end());
  if (!bw.empty()) return median(bw);
  unmeasured += (unmeasured.empty() ? "" : ", ") + name;
  return 1.0;
}

}  // namespace

// Per host: its names, ranks, subnet and overheads, the receive overhead
// R_c capped so that S_c + R_c never exceeds a measured one-way time (R_m:
// receive_copy_beyond_interfaces, once the interfaces are known).
void Probe::host_rows(Profile& p) {
  for (int h = 0; h < H; ++h) {
    HostProfile x;
    x.name = hosts.names[size_t(h)];
    x.ranks = hosts.ranks[size_t(h)];
    x.subnet = subnet_of[size_t(h)];
    const double* row = &hostv[size_t(h) * kHostFields];
    x.Sc = {row[0], row[1]};
    x.Sm = row[2];
    x.Rc = {row[3], row[4]};
    x.Rm = row[5];
    x.gamma = row[6];
    x.copy = row[7];
    p.hosts.push_back(x);
  }
  // S_c + R_c never exceeds a measured one-way time: R_c is capped by the
  // host's fastest pair (shared memory included).
  for (int j = 0; j < H; ++j) {
    HostProfile& x = p.hosts[size_t(j)];
    auto cap = [&](double one_way_small, double Sc) {
      if (one_way_small <= 0) return;
      const double rc = std::max(0.0, one_way_small - Sc);
      x.Rc.min = std::min(x.Rc.min, rc);
      x.Rc.median = std::min(x.Rc.median, rc);
    };
    for (int i = 0; i < H; ++i)
      if (i != j) cap(pd.small_min[size_t(i) * size_t(H) + size_t(j)], p.hosts[size_t(i)].Sc.median);
    cap(shm[size_t(j) * 2], x.Sc.median);
  }
}

// Classes of host pairs (and shared memory): latency, bandwidth alone, both
// ways and one pair both ways (Banikazemi's X: transmission(), once R_m is
// known).
void Probe::pair_classes(Profile& p, std::string& unmeasured) {
  const double payload = double(large - opt.small);
  // Classes of host pairs.
  for (int a = 0; a < S; ++a)
    for (int b = a; b < S; ++b) {
      std::vector<double> lat, bw;
      for (int i = 0; i < H; ++i)
        for (int j = i + 1; j < H; ++j) {
          if (std::min(subnet_of[size_t(i)], subnet_of[size_t(j)]) != a ||
              std::max(subnet_of[size_t(i)], subnet_of[size_t(j)]) != b)
            continue;
          const size_t k = size_t(i) * size_t(H) + size_t(j);
          const double l = pd.small_min[k], big = pd.large_min[k];
          const double bwp = big > l ? payload / (big - l) : 0;
          lat.push_back(l);
          bw.push_back(bwp);
        }
      if (lat.empty()) continue;
      PairClass c;
      c.a = a, c.b = b;
      c.name = a == b ? "subnet " + std::to_string(a) : "subnets " + std::to_string(a) + "-" + std::to_string(b);
      c.pairs = int(lat.size());
      c.latency = median(lat);
      c.bandwidth = bandwidth_of(bw, c.name, unmeasured);
      const double al = alone[size_t(a) * size_t(S) + size_t(b)];
      c.bandwidth_alone = opt.sequential ? c.bandwidth : (al > c.latency ? payload / (al - c.latency) : 0);
      c.slowdown = c.bandwidth_alone > 0 ? c.bandwidth_alone / c.bandwidth : 1;
      // both ways: a large one-way time and a small answer's latency.
      const double bt = alone_both[size_t(a) * size_t(S) + size_t(b)] - c.latency;
      c.bandwidth_both_ways = opt.sequential || !(bt > c.latency) ? 0 : payload / (bt - c.latency);
      // one pair both ways (same_pair): a ping, its answer, the large
      // message's latency and the last answer's.
      const double st = alone_same[size_t(a) * size_t(S) + size_t(b)] - 4 * c.latency;
      c.bandwidth_same_pair = opt.sequential || !(st > 0) ? 0 : same_payload / st;
      c.beta = 1.0 / c.bandwidth;
      c.alpha = std::max(0.0, c.latency - double(opt.small) * c.beta);
      p.classes.push_back(c);
    }
  {
    std::vector<double> lat, bw;
    for (int h = 0; h < H; ++h) {
      const double l = shm[size_t(h) * 2], big = shm[size_t(h) * 2 + 1];
      if (l <= 0) continue;
      lat.push_back(l);
      bw.push_back(big > l ? payload / (big - l) : 0);
    }
    if (!lat.empty()) {
      PairClass c;
      c.name = "shared memory";
      c.pairs = int(lat.size());
      c.latency = median(lat);
      c.bandwidth = bandwidth_of(bw, c.name, unmeasured);
      c.bandwidth_alone = 0;
      c.beta = 1.0 / c.bandwidth;
      c.alpha = std::max(0.0, c.latency - double(opt.small) * c.beta);
      p.classes.insert(p.classes.begin(), c);
    }
  }
}

// Each host's interface, out and in: the fastest of its pairs (concurrent
// rounds pair disjoint hosts, so a pair shares neither interface; across
// subnets an uplink may limit it more, but it is still at most the host's
// own rate: a fast host among slow ones shows its rate only across). A
// pair moves at its slower end, so one fast partner shows the host's own
// rate — where a class mixes fast and slow interfaces, its median
// describes neither.
// Where the class's pairs were slowed together (a backplane shared by the
// round's pairs) a pair's rate is scaled up by that slowdown, at most to
// the class's one-way rate — never below the rate the pair moved (a class
// of mixed interfaces measured alone on a slow pair had capped every host
// at the slow one's 125 MB/s). The slowdown is the pair measured alone's
// own: alone over its rate in the rounds — not the class's (alone over the
// class's median), which in a subnet of mixed interfaces is a fast pair
// against the slow ones' median (10x: every 1 Gbit/s host drawn at 10).
void Probe::interfaces(Profile& p) {
  const double payload = double(large - opt.small);
  // Per subnet, the slowdown of its pair measured alone (the first pair of
  // its class in the rounds' order, as alone_pairs takes it).
  std::vector<double> slowed(size_t(S), 1.0);
  std::vector<bool> seen(size_t(S), false);
  for (auto [a, b] : order) {
    const int sa = subnet_of[size_t(a)];
    if (sa != subnet_of[size_t(b)] || seen[size_t(sa)]) continue;
    seen[size_t(sa)] = true;
    const size_t k = size_t(a) * size_t(H) + size_t(b);
    const PairClass* c = p.between(sa, sa);
    if (c && pd.large_min[k] > pd.small_min[k] && c->bandwidth_alone > 0)
      slowed[size_t(sa)] = std::max(1.0, c->bandwidth_alone / (payload / (pd.large_min[k] - pd.small_min[k])));
  }
  for (int i = 0; i < H; ++i)
    for (int j = 0; j < H; ++j) {
      if (i == j) continue;
      const size_t k = size_t(i) * size_t(H) + size_t(j);
      const double l = pd.small_min[k], big = pd.large_min[k];
      if (!(big > l)) continue;
      double bw = payload / (big - l);
      const bool inside = subnet_of[size_t(i)] == subnet_of[size_t(j)];
      const double sd = slowed[size_t(subnet_of[size_t(i)])];
      if (const PairClass* c = p.between(subnet_of[size_t(i)], subnet_of[size_t(i)]); inside && c && sd > 1)
        bw = std::max(bw, std::min(bw * sd, one_way_rate(*c)));
      p.hosts[size_t(i)].nic_up = std::max(p.hosts[size_t(i)].nic_up, bw);
      p.hosts[size_t(j)].nic_down = std::max(p.hosts[size_t(j)].nic_down, bw);
    }
}

// A receiver's per-byte copy R_m is what a pair's large message takes
// beyond the wire, and the wire is no faster than the slower interface of
// the two: a host whose own card is slow reads its card's time in every
// receive (overheads() cannot tell the two apart), which the model would
// charge twice — on the link and again on the receiver (cluster16 with one
// card 8x slower: R_m of 5.6 ns/B on that host, scatter mispredicted by
// 46 %). After interfaces(), the one place R_m is capped: by every pair
// into the host (its shared memory included: less its own S_m), and by its
// classes' pair measured alone (the rounds' pairs share a blocking fabric:
// backplane16's hosts read 7.2 ns/B of a 8 ns/B card as R_m).
void Probe::receive_copy_beyond_interfaces(Profile& p) {
  const double payload = double(large - opt.small);
  auto per_byte = [](double rate) { return rate > 0 ? 1.0 / rate : 0.0; };
  for (int j = 0; j < H; ++j) {
    HostProfile& r = p.hosts[size_t(j)];
    auto cap = [&](double small, double big, double wire) {
      if (small > 0 && big > small) r.Rm = std::min(r.Rm, std::max(0.0, (big - small) / payload - wire));
    };
    for (int i = 0; i < H; ++i) {
      const size_t k = size_t(i) * size_t(H) + size_t(j);
      if (i == j) continue;
      const HostProfile& s = p.hosts[size_t(i)];
      cap(pd.small_min[k], pd.large_min[k], std::max({s.Sm, per_byte(s.nic_up), per_byte(r.nic_down)}));
    }
    cap(shm[size_t(j) * 2], shm[size_t(j) * 2 + 1], r.Sm);
    for (const PairClass& c : p.classes)
      if (c.a >= 0 && (c.a == r.subnet || c.b == r.subnet) && c.bandwidth_alone > 0 && r.nic_down > 0)
        r.Rm = std::min(r.Rm, std::max(0.0, per_byte(c.bandwidth_alone) - per_byte(r.nic_down)));
  }
}

// Banikazemi's X of each class (eq. 3): latency − S_c − R_c and
// 1/bandwidth − S_m − R_m over its pairs both ways (shared memory: each
// host's two ranks), medians, not negative — from the overheads as capped.
void Probe::transmission(Profile& p) {
  const double payload = double(large - opt.small);
  auto add = [&](std::vector<double>& xc, std::vector<double>& xm, double l, double big, const HostProfile& s,
                 const HostProfile& r) {
    const double bwp = big > l ? payload / (big - l) : 0;
    xc.push_back(std::max(0.0, l - s.Sc.median - r.Rc.median));
    xm.push_back(bwp > 0 ? std::max(0.0, 1.0 / bwp - s.Sm - r.Rm) : 0.0);
  };
  for (PairClass& c : p.classes) {
    std::vector<double> xc, xm;
    if (c.a < 0) {
      for (int h = 0; h < H; ++h)
        if (shm[size_t(h) * 2] > 0) add(xc, xm, shm[size_t(h) * 2], shm[size_t(h) * 2 + 1], p.hosts[size_t(h)],
                                         p.hosts[size_t(h)]);
    } else {
      for (int i = 0; i < H; ++i)
        for (int j = i + 1; j < H; ++j) {
          if (std::min(subnet_of[size_t(i)], subnet_of[size_t(j)]) != c.a ||
              std::max(subnet_of[size_t(i)], subnet_of[size_t(j)]) != c.b)
            continue;
          const size_t k = size_t(i) * size_t(H) + size_t(j);
          add(xc, xm, pd.small_min[k], pd.large_min[k], p.hosts[size_t(i)], p.hosts[size_t(j)]);
          add(xc, xm, pd.small_min[k], pd.large_min[k], p.hosts[size_t(j)], p.hosts[size_t(i)]);
        }
    }
    if (!xc.empty()) c.Xc = median(xc), c.Xm = median(xm);
  }
}

void Probe::backplane_of(Profile& p) {
  // The backplane: the aggregate against what the flows would move if
  // each moved at its class's alone rate (a host both sending and
  // receiving through a half-duplex interface: half) — measured the same
  // way, all their bytes over the slowest one's time.
  if (bp_flows > 0 && bp_aggregate > 0) {
    // Each flow at its own pair's rate (the pair measured in the bandwidth
    // phase: a slow interface on the ring is a slow flow, not a backplane),
    // at most its class's alone rate.
    const double payload = double(large - opt.small);
    double slowest_rate = 0;
    for (int h = 0; h < H; ++h) {
      if (bp_to[size_t(h)] < 0) continue;
      const int s = subnet_of[size_t(h)];
      const PairClass* c = p.between(s, s);
      if (!c) continue;
      double rate = std::max(c->bandwidth_alone, c->bandwidth);
      const size_t k = size_t(h) * size_t(H) + size_t(bp_to[size_t(h)]);
      if (pd.large_min[k] > pd.small_min[k]) rate = std::min(rate, payload / (pd.large_min[k] - pd.small_min[k]));
      int in_subnet = 0;
      for (int g = 0; g < H; ++g) in_subnet += subnet_of[size_t(g)] == s;
      if (in_subnet >= 3 && c->bandwidth_both_ways > 0 && !full_duplex(*c)) rate /= 2;
      if (rate > 0) slowest_rate = slowest_rate > 0 ? std::min(slowest_rate, rate) : rate;
    }
    const double expected = double(bp_flows) * slowest_rate;
    p.backplane.flows = bp_flows;
    p.backplane.aggregate = bp_aggregate;
    p.backplane.expected = expected;
    p.backplane.bandwidth = bp_aggregate < kBackplaneShare * expected ? bp_aggregate : 0;
  }
}

// The racks' latencies, from the pairs' small-message minima: a rack's
// hosts' edges carry what a pair inside it takes beyond the subnet's X_c
// share (median inside the rack against the subnet class's latency), its
// uplink half the median's step from inside to across.
void Probe::rack_latencies(Profile& p) {
  auto median_of = [](std::vector<double> v) { return v.empty() ? 0.0 : summarize(std::move(v)).median; };
  for (size_t i = 0; i < p.network.size(); ++i) {
    NodeProfile& rack = p.network[i];
    if (rack.host >= 0 || rack.parent <= 0) continue;
    std::vector<int> members;
    for (const NodeProfile& n : p.network)
      if (n.parent == int(i) && n.host >= 0) members.push_back(n.host);
    if (members.size() < 2) continue;
    const int sn = p.hosts[size_t(members[0])].subnet;
    const PairClass* c = p.between(sn, sn);
    if (!c) continue;
    std::vector<double> in, across;
    for (int a : members)
      for (int b = 0; b < H; ++b) {
        if (b == a || p.hosts[size_t(b)].subnet != sn) continue;
        const double l = pd.small_min[size_t(a) * size_t(H) + size_t(b)];
        const bool same = std::find(members.begin(), members.end(), b) != members.end();
        (same ? in : across).push_back(l);
      }
    if (in.empty() || across.empty()) continue;
    const double l_in = median_of(in), l_across = median_of(across);
    const double edge = std::max(0.0, (std::max(0.0, c->Xc) - (c->latency - l_in)) / 2);
    const double step = std::max(0.0, (l_across - l_in) / 2);
    rack.up.latency = rack.down.latency = step;
    for (NodeProfile& n : p.network)
      if (n.parent == int(i) && n.host >= 0) n.up.latency = n.down.latency = edge;
  }
}

namespace {

// A host's interface from its pairs' best rate and its best flow of the
// racks' shifts (0: none): the flow's where the pairs read at most 25 %
// more (write_profile), else the larger.
double interface(double pairs, double flow) { return flow > 0 && pairs <= 1.25 * flow ? flow : std::max(pairs, flow); }

}  // namespace

// Rank 0: the profile assembled from every phase, checked and written.
int Probe::write_profile() {
  int rc = 0;
  Profile p;
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  p.created = date;
  p.tool = std::string("hetcoll-probe ") + HETCOLL_VERSION_STRING;
  char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  p.mpi = std::string(lib, strnlen(lib, sizeof lib));
  if (auto nl = p.mpi.find('\n'); nl != std::string::npos) p.mpi.resize(nl);
  p.mode = opt.sequential ? "sequential" : "concurrent";
  p.ranks = g_size;
  p.repeats = repeats_done;
  p.budget = budget;
  p.seconds = probe_seconds;
  for (const auto& [name, t] : bar.times) {
    bool merged = false;
    for (auto& q : p.phases)
      if (q.first == name) q.second += t, merged = true;
    if (!merged) p.phases.emplace_back(name, t);
  }
  p.budget_exhausted = exhausted;
  p.small_bytes = opt.small;
  p.large_bytes = large;
  host_rows(p);
  p.small.resize(HH);
  p.large.resize(HH);
  for (size_t k = 0; k < HH; ++k) {
    p.small[k] = {pd.small_min[k], pd.small_med[k]};
    p.large[k] = {pd.large_min[k], pd.large_med[k]};
  }
  p.subnet_threshold = part.threshold;
  p.subnet_count = std::max(1, part.count());
  p.subnet_gap = part.gap;
  p.ring = ring.hosts;
  p.ring_crossings = ring.crossings;
  std::string unmeasured;
  pair_classes(p, unmeasured);
  interfaces(p);
  backplane_of(p);
  p.sharing = shares;
  // A host's interface: at least its best flow in the racks' shifts (the
  // class's pair alone may have crossed an oversubscribed rack link). Where
  // its pairs read at most 25 % more, the flow's (16x the bytes) is the
  // rate: a pair's message over its small one's time can read a latency
  // that grows with the size as bandwidth (SMPI's factors: 13.8 and 15.1
  // GB/s for 12.5 GB/s NICs).
  for (size_t h = 0; h < rack_nic.size() && h < p.hosts.size(); ++h) {
    p.hosts[h].nic_up = interface(p.hosts[h].nic_up, rack_nic[h]);
    p.hosts[h].nic_down = interface(p.hosts[h].nic_down, rack_nic[h]);
  }
  receive_copy_beyond_interfaces(p);
  transmission(p);
  if (!found_racks.empty()) {
    // The racks explain the slowed flows the backplane experiment saw (its
    // ring crosses their links): no backplane beside them.
    p.backplane.bandwidth = 0;
    p.network = network_from_classes(p, found_racks);
    rack_latencies(p);
    // Its leaf's links: the host's interface (below).
    for (NodeProfile& n : p.network)
      if (n.host >= 0 && size_t(n.host) < rack_nic.size() && rack_nic[size_t(n.host)] > 0) {
        n.up.bandwidth = interface(n.up.bandwidth, rack_nic[size_t(n.host)]);
        n.down.bandwidth = interface(n.down.bandwidth, rack_nic[size_t(n.host)]);
      }
  }
  // The subnets' links as measured (subnet_links): the tree with them, the
  // uplinks' latencies as the classes give them.
  if (found_subnets.size() == size_t(S) && S >= 2) {
    if (p.network.empty()) p.network = network_from_classes(p, found_racks);
    int a = 0;
    for (size_t i = 1; i < p.network.size() && a < S; ++i) {
      NodeProfile& n = p.network[i];
      if (n.parent != 0 || n.host >= 0) continue;
      const RackProfile& m = found_subnets[size_t(a++)];
      if (!(m.up.bandwidth > 0) || !(m.down.bandwidth > 0)) continue;
      n.shared = m.shared;
      n.up = {m.up.bandwidth, n.up.latency, m.up.how};
      n.down = {m.shared ? m.up.bandwidth : m.down.bandwidth, n.down.latency, m.shared ? m.up.how : m.down.how};
    }
  }
  for (size_t k = 0; k < kern_med.size(); ++k)
    if (kern_med[k] > 0 || kern_min[k] > 0)
      p.reductions.push_back({reduce_op_name(kKernels[k].op), kKernels[k].type_name, {kern_min[k], kern_med[k]}});
  p.lambda = std::move(lambda);
  p.receives_use_cpu = H == 1;
  try {
    if (!unmeasured.empty())
      throw std::runtime_error("no bandwidth measured for " + unmeasured + ": no pair's " + std::to_string(large) +
                               "-byte message took longer than its " + std::to_string(opt.small) +
                               "-byte one (a machine this loaded measures noise; a larger --large may help); "
                               "no profile written");
    const std::string text = profile_to_json(p);
    parse_profile(text);  // what we write, we can read
    std::ofstream out(opt.out, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + opt.out);
    std::printf("hetcoll-probe: %d ranks on %d hosts in %d subnet%s (gap %.2fx); %.2f s%s; wrote %s\n", g_size, H,
                p.subnet_count, p.subnet_count == 1 ? "" : "s", p.subnet_gap, probe_seconds,
                exhausted ? " (budget reached: fewer repeats or phases)" : "", opt.out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetcoll-probe: %s\n", e.what());
    rc = 1;
  }
  return rc;
}

}  // namespace hetcoll::probe
