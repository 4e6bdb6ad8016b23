// The runtime's model of a probed machine (HETCOLL_PROFILE=FILE): built from
// a profile (model/profile.hpp), compact — per host and per node and link
// of the network's tree (version 2), or per class of host pairs (version
// 1), O(hosts + subnets²); never a rank × rank matrix.
//
// Version 2: a message of m bytes from host i to host j crosses the path
// of the tree between them (model/topology.hpp):
//
//   wire   = (1/B(path) − R_m(j))·m        B: the path's slowest link
//   send   = S_c(i) + wire
//   arrive = send + L(path)                 L: its links' latencies summed
//   recv   = R_c(j) + R_m(j)·m
//
// and the links are the tree's, as the probe measured them. The rest of
// this comment is version 1's: the network as classes of pairs.
//
// Its "ranks" are the profile's hosts: the runtime maps each rank of a
// communicator to the index of its host (by host name), so two ranks of one
// host talk through shared memory and one profile serves any job on those
// hosts with any number of ranks per host. A message of m bytes from host i
// to host j, class c (shared memory when i = j, else the subnet pair):
//
//   wire   = (1/B(c) − R_m(j))·m             the bytes on the network
//   send   = S_c(i) + wire                    the sender's port pushes them
//   arrive = send + X_c(c)
//   recv   = R_c(j) + R_m(j)·m
//
// so the one-way time is Banikazemi's eq. 1, S + X + R, with the measured
// one-way time latency + m/B(c) (S_m·m, the sender's copy, overlaps the
// wire: it is inside the measured bandwidth). Reductions γ(i)·m, copies
// copy(i)·m.
//
// B(c) is the class's bandwidth with the network to itself (the probe's
// "alone" pair, never below what its pairs got at once: one_way_rate);
// what concurrent messages cost each other is the topology's business
// (model/topology.hpp), built from the profile:
//
//   interface of host h   the host's own rate where the probe measured it
//                         (nic_up, nic_down: its fastest pair inside its
//                         subnet), at most B of h's subnet class; one per
//                         direction, or one for both where two messages of
//                         the class in opposite directions got less than
//                         3/4 of what that pair got alone each
//   uplink of subnet a    where a class (a, b) was slowed by concurrent
//                         traffic (slowdown > 1.25) and a pair alone got
//                         less than the interfaces give: the most a pair
//                         of a's classes got alone; one link each way
//                         where that pair sending both ways at once got
//                         at least 3/4 of it each way (full duplex, see
//                         full_duplex), else one link for both directions.
//
//   connection of a      where one pair of a class, sending both ways at
//   pair of ranks        once, took turns (takes_turns): a link at the
//                        pair's one-way rate whose two directions take
//                        turns — a rendezvous waits while the other
//                        direction has messages moving or waiting (made by
//                        the simulator as pairs of ranks use it)
//
// A subnet's uplink is only bounded from below this way: a pair (a, b)
// limited by b's uplink says nothing more about a's.
#pragma once
#include <unordered_map>
#include <vector>

#include "model/profile.hpp"
#include "model/machine_model.hpp"

namespace hetcoll {

// A class's rate one way: its pair alone, never below what its pairs got
// all at once (an "alone" figure below that is one disturbed measurement,
// e.g. of a host held to part of a core).
double one_way_rate(const PairClass& c);
// A class's links carry both directions at once at (nearly) the rate of
// one (the probe's bandwidth_both_ways ≥ 3/4 of one_way_rate). Not
// measured (profiles before the probe did, sequential mode): false.
bool full_duplex(const PairClass& c);
// One pair of the class, sending both ways at once with its receives posted
// first (as the executor posts them), got less than 3/4 of one_way_rate
// each way, where two other pairs in opposite directions got at least 3/4
// (full_duplex): not the links but the pair's one connection made its two
// directions take turns. Not measured: false.
bool takes_turns(const PairClass& c);
// The exponent a of the probe's sharing measurement (Topology::
// latency_sharing), for the near and far pairs' latencies as the simulator
// weighs flows by them (the model's wire latencies): where the far message
// beside the near stream got less than 0.9 of its rate alone, and less
// than the interface (near_alone), the interface was shared in proportion
// to latency^-a:
//   far_shared / (near_alone - far_shared) = (far_latency / near_latency)^-a,
// clamped to 0 … Topology::kMaxLatencySharing. Else (or not measured, or
// latencies too alike to tell: a ratio below 1.5) 0, equal shares.
double sharing_exponent(const Profile::Sharing& s, double near_latency, double far_latency);

// The tree a version 1 profile's classes describe (as ProfileModel draws
// it: hosts under their subnet's switch, the subnets' uplinks, the
// backplane), as a version 2 "network", with `racks` (per subnet, found by
// bandwidth) inserted between a subnet's switch and its hosts. Latencies:
// a host's edge half its subnet's X_c, a subnet's uplink its share of
// the X_c between subnets (least squares over the pairs of subnets, not
// negative), a rack's uplink none (racks that latency does not tell apart).
std::vector<NodeProfile> network_from_classes(const Profile& p, const std::vector<RackProfile>& racks);

class ProfileModel : public MachineModel {
 public:
  // spec: the model's identity ("profile:PATH@digest").
  ProfileModel(const Profile& p, std::string spec);
  static std::shared_ptr<ProfileModel> load(const std::string& path);
  // From the text of a profile file read from path.
  static std::shared_ptr<ProfileModel> from_text(const std::string& text, const std::string& path);

  std::string kind() const override { return "profile"; }
  std::string spec() const override { return spec_; }
  std::string unit() const override { return "s"; }
  MessageCost message(int src, int dst, uint64_t bytes) const override;
  double reduce_time(int host, uint64_t bytes) const override;
  double copy_time(int host, uint64_t bytes) const override;
  int ranks() const override { return int(hosts_.size()); }
  bool maps_hosts() const override { return true; }
  std::vector<int> default_rank_map(int n) const override;
  bool receive_uses_cpu() const override { return receives_use_cpu_; }
  // Several hosts: the network's links share a rank's concurrent messages
  // (the topology), so sends need not wait for each other.
  int send_ports() const override { return topo_ && topo_->hosts() > 1 ? kNetworkPorts : 1; }
  static constexpr int kNetworkPorts = 64;
  // MPI libraries send messages below about 64 KiB eagerly over TCP (Open
  // MPI's btl_tcp_eager_limit, MPICH's ch3 eager limit, SimGrid's
  // smpi/send-is-detached-thresh): their sends complete at once.
  uint64_t eager_bytes() const override { return topo_ && topo_->hosts() > 1 ? kEagerBytes : 0; }
  static constexpr uint64_t kEagerBytes = 65536;
  json::Value to_json() const override;
  // The digest of the text the profile was read from (its spec's "@digest"):
  // the same file content gives the same digest wherever it lies.
  uint64_t content_digest() const override;
  TopologyPtr topology() const override { return topo_; }

  // The index of the host of this name, or -1.
  int host_index(const std::string& name) const;
  // Hosts by the 64-bit key of their name (what the MPI layer gathers per
  // communicator: 8 bytes a rank, not a name).
  static uint64_t host_key(const std::string& name);
  int host_of_key(uint64_t key) const;
  const std::string& host_name(int h) const { return hosts_.at(size_t(h)).name; }
  int subnet_of(int h) const { return hosts_.at(size_t(h)).subnet; }
  int subnets() const { return subnets_; }

  // The measured decision (hetcoll tune) for a call of `op` in size class
  // `size_class` on a group whose ranks are on these hosts, if the profile
  // has one for exactly this layout.
  const TunedEntry* measured(const std::string& op, const std::vector<int>& hosts_of_ranks, int size_class) const;
  bool has_measured() const { return !tuned_.empty(); }

 private:
  struct Host {
    std::string name;
    int subnet;
    double Sc, Sm, Rc, Rm, gamma, copy;
    double nic_up_per_byte = 0, nic_down_per_byte = 0;  // 1 / the host's interface rates (0: not measured)
  };
  struct Link {
    double Xc = 0;        // s: latency - S_c - R_c (eq. 3's constant)
    double per_byte = 0;  // s/B: 1 / the class's bandwidth
  };
  const Link& link(int a, int b) const;
  void build_topology(const Profile& p);  // version 1: from the classes
  void build_tree(const Profile& p);      // version 2: the profile's tree
  void add_connections(Topology& t, const Profile& p) const;  // classes whose pairs take turns (after settle)
  bool tree_ = false;
  std::vector<Host> hosts_;
  std::vector<int> probe_host_of_rank_;  // the measuring job's layout
  std::unordered_map<std::string, int> index_;
  std::unordered_map<uint64_t, int> by_key_;
  int subnets_ = 1;
  std::vector<Link> links_;  // subnets × subnets, symmetric
  Link shm_;
  TopologyPtr topo_;
  bool receives_use_cpu_ = false;
  std::vector<TunedLayout> tuned_;
  std::string spec_;
  uint64_t text_digest_ = 0;  // from_text: FNV-1a of the file's text
};

}  // namespace hetcoll
