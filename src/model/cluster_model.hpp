// A hand-set cluster: subnets of hosts, ranks on hosts, a network
// interface per host and an uplink per subnet ("cluster:subnets=8+4+4,…").
// It describes the machines the SimGrid testbed simulates
// (testbed/smpi/platforms) without a probe, and gives tests and `hetcoll
// plan` a machine with structure.
//
// A message of m bytes from rank i to rank j:
//   send = o + m/b, arrive = send + a, recv = o, wire = m/b
// with (a, b) = (shm_alpha, shm_bw) on one host, (alpha, bw) inside a
// subnet, (alpha + up_latency, min(bw, up_bw)) across subnets. Interfaces
// (bw each way) and uplinks (up_bw, one link both ways unless
// duplex=split) are the topology's links, shared max-min fairly by the
// simulator. Ranks lie host by host (layout=block) or one per host in turn
// (layout=round). As on a probed network (profile_model.hpp): 64 sends in
// flight a rank, messages below 64 KiB eager.
#pragma once
#include <vector>

#include "model/machine_model.hpp"

namespace hetcoll {

struct ClusterParams {
  std::vector<int> subnets;  // hosts per subnet
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
};

}  // namespace hetcoll
