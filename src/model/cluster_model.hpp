// A hand-set network: it describes the machines the SimGrid testbed
// simulates (testbed/smpi/platforms) without a probe, and gives tests and
// `hetcoll plan` a machine with structure. Two shapes:
//
//  * subnets of hosts ("cluster:subnets=8+4+4,…"): a network interface per
//    host and an uplink per subnet. A message of m bytes from rank i to j:
//      send = o + m/b, arrive = send + a, recv = o, wire = m/b
//    with (a, b) = (shm_alpha, shm_bw) on one host, (alpha, bw) inside a
//    subnet, (alpha + up_latency, min(bw, up_bw)) across subnets.
//    Interfaces (bw each way) and uplinks (up_bw, one link both ways
//    unless duplex=split) are the topology's links.
//  * a tree of any depth ("tree:levels=8x4,bw=…:…,lat=…:…", fan-outs from
//    the root down, one bandwidth and latency per level's edges, a fabric
//    per level's switches): a message crosses its path's links, so
//      a = the path's latencies summed, b = its slowest link's bandwidth.
//
// The simulator shares the links max-min fairly. Ranks lie host by host
// (layout=block) or one per host in turn (layout=round). As on a probed
// network (profile_model.hpp): 64 sends in flight a rank, messages below
// 64 KiB eager.
#pragma once
#include <vector>

#include "model/machine_model.hpp"

namespace hetcoll {

struct ClusterParams {
  std::vector<int> subnets;  // hosts per subnet (cluster:)
  // tree: the fan-out of each level from the root down; per level, its
  // edges' bandwidth (bytes/s) and latency (s), whether one link serves
  // both ways, and (per switch level, the root's first) a fabric's
  // bandwidth (0: none).
  std::vector<int> fanout;
  std::vector<double> level_bw, level_latency, level_fabric;
  std::vector<char> level_shared;
  int ranks_per_host = 1;
  bool round = false;        // layout
  double o = 1e-6;           // per-message send and receive overhead
  double alpha = 50e-6, bw = 125e6;
  double up_latency = 3e-3, up_bw = 12.5e6;
  bool split_duplex = false;
  double shm_alpha = 1e-6, shm_bw = 5e9;
  double gamma = 0;
  double latency_sharing = 0;  // Topology::latency_sharing
};

class ClusterModel : public MachineModel {
 public:
  ClusterModel(ClusterParams p, std::string spec);
  std::string kind() const override { return "cluster"; }
  std::string spec() const override { return spec_; }
  std::string unit() const override { return "s"; }
  MessageCost message(int src, int dst, uint64_t bytes) const override;
  double reduce_time(int, uint64_t bytes) const override { return p_.gamma * double(bytes); }
  double copy_time(int, uint64_t) const override { return 0; }
  int ranks() const override { return topo_->ranks(); }
  TopologyPtr topology() const override { return topo_; }
  int send_ports() const override { return 64; }
  uint64_t eager_bytes() const override { return 65536; }
  json::Value to_json() const override;

 private:
  ClusterParams p_;
  std::string spec_;
  TopologyPtr topo_;
  bool tree_ = false;
  void build_subnets(Topology& t) const;
  void build_tree(Topology& t) const;
};

}  // namespace hetcoll
