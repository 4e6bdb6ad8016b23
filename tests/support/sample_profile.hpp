// A synthetic profile for tests and benchmarks: `hosts` hosts in two
// subnets, one rank each plus a second rank on host 0, pair classes, a
// reduction rate and one λ point.
#pragma once
#include <algorithm>
#include <string>

#include "model/profile.hpp"

namespace hetcoll::testing {

inline Profile sample_profile(int hosts = 4, bool pairs = true) {
  Profile p;
  p.created = "2026-11-23T00:00:00Z";
  p.tool = "test";
  p.mpi = "none";
  p.ranks = hosts + 1;
  p.repeats = 3;
  const int half = std::max(1, hosts / 2);
  int rank = 0;
  for (int h = 0; h < hosts; ++h) {
    HostProfile x;
    x.name = "node" + std::to_string(h);
    x.ranks.push_back(rank++);
    if (h == 0) x.ranks.push_back(rank++);
    x.subnet = h < half ? 0 : 1;
    x.Sc = {1e-6, 1.1e-6};
    x.Rc = {2e-6, 2.2e-6};
    x.Sm = 1e-10;
    x.Rm = 2e-10;
    x.gamma = 3e-10;
    x.copy = 1e-10;
    p.hosts.push_back(x);
  }
  const size_t n = pairs ? size_t(hosts) : 0;
  p.small.assign(n * n, {});
  p.large.assign(n * n, {});
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j)
      if (i != j) {
        const bool same = p.hosts[i].subnet == p.hosts[j].subnet;
        p.small[i * n + j] = {same ? 10e-6 : 1e-3, same ? 11e-6 : 1.1e-3};
        p.large[i * n + j] = {same ? 1e-3 : 10e-3, same ? 1.1e-3 : 11e-3};
      }
  p.subnet_count = hosts > 1 ? 2 : 1;
  p.subnet_gap = 100;
  for (int h = 0; h < hosts; ++h) p.ring.push_back(h);
  p.ring_crossings = hosts > 1 ? 2 : 0;
  PairClass shm;
  shm.name = "shared memory";
  shm.pairs = 1;
  shm.latency = 1e-6, shm.bandwidth = 5e9, shm.Xc = 0.5e-6, shm.Xm = 1e-11;
  p.classes.push_back(shm);
  for (int a = 0; a < p.subnet_count; ++a)
    for (int b = a; b < p.subnet_count; ++b) {
      PairClass c;
      c.name = "c";
      c.a = a, c.b = b;
      c.pairs = 1;
      c.latency = a == b ? 10e-6 : 1e-3;
      c.bandwidth = a == b ? 1.25e8 : 1.25e7;
      c.Xc = c.latency - 3e-6;
      c.Xm = 1 / c.bandwidth - 3e-10;
      p.classes.push_back(c);
    }
  p.reductions.push_back({"sum", "f64", {3e-10, 3.1e-10}});
  LambdaPoint l;
  l.bytes = 8;
  l.ks = {1, 2};
  l.exp1 = {{3e-6, 3e-6}, {4e-6, 4e-6}};
  l.exp2 = {{2e-6, 2e-6}, {4e-6, 4e-6}};
  l.fit1 = {1e-6, 1.5, 1};
  l.fit2 = {1e-6, 1.0, 1};
  p.lambda.push_back(l);
  return p;
}

// The sample's hosts as a version 2 tree, without pair matrices: racks of
// `rack` hosts (0: one rack per subnet) under a spine; interfaces 125 MB/s
// each way (1 µs), each rack's uplink 50 MB/s both ways (2 µs), the
// spine's fabric 1 GB/s.
inline Profile sample_network_profile(int hosts = 4, int rack = 0) {
  Profile p = sample_profile(hosts, false);
  p.version = 2;
  NodeProfile root;
  root.name = "spine";
  root.fabric = {1e9, 0, "declared"};
  p.network.push_back(root);
  std::vector<int> rack_node;
  const int racks = rack > 0 ? (hosts + rack - 1) / rack : p.subnet_count;
  for (int s = 0; s < racks; ++s) {
    NodeProfile r;
    r.name = "rack" + std::to_string(s);
    r.parent = 0;
    r.shared = true;
    r.up = r.down = {50e6, 2e-6, "declared"};
    rack_node.push_back(int(p.network.size()));
    p.network.push_back(r);
  }
  for (int h = 0; h < hosts; ++h) {
    NodeProfile x;
    x.name = p.hosts[size_t(h)].name;
    x.parent = rack_node[size_t(rack > 0 ? h / rack : p.hosts[size_t(h)].subnet)];
    x.host = h;
    x.up = x.down = {125e6, 1e-6, "pair alone"};
    p.network.push_back(x);
  }
  return p;
}

}  // namespace hetcoll::testing
