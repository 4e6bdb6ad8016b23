// Topology: where a model's ranks sit and which links their messages share.
//
// Three levels, as ECO (§4) and Banikazemi (§2) see a cluster: ranks on
// hosts (ranks of one host talk through shared memory), hosts in subnets
// (hosts of one subnet hang off one switch, each through its own network
// interface), and subnets joined through their uplinks. A message from rank
// a to rank b crosses
//
//   same host       no network link
//   same subnet     nic_up(host a), nic_down(host b)
//   other subnet    nic_up(host a), uplink_out(subnet a), uplink_in(subnet b),
//                   nic_down(host b)
//
// and, between two hosts, the backplane when there is one: a capacity all
// traffic between hosts shares (a switch fabric's; on an emulated cluster,
// the one machine's CPUs that move every packet).
//
// Where the probe saw one pair of ranks sending both ways at once take
// turns (profile: bandwidth_same_pair), a rendezvous message also crosses
// its pair's connection: one link per pair of ranks, at the pair's one-way
// rate, whose two directions take turns — a message waits while the other
// direction has messages moving or waiting (MPI over TCP: one connection
// per pair of ranks; Open MPI's go-ahead for one direction's rendezvous
// travels behind the other direction's bytes). The simulator makes these
// links as pairs use them.
//
// (a link id of -1 is a link that never limits). A link of one subnet may
// carry both directions (uplink_out == uplink_in: a half-duplex or shared
// uplink, SimGrid's SHARED) or one each (full duplex). The simulator shares
// each link's bandwidth max-min fairly among the messages crossing it at the
// same instant, on top of each message's own rate (MessageCost::wire), as
// SimGrid's flow model does — weighted by the messages' latencies where the
// probe found that long ones get less (latency_sharing).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hetcoll {

struct NetLink {
  std::string name;        // "nic_up(a3)", "uplink(A)"
  double bandwidth = 0;    // bytes/s, shared max-min fairly
};

class Topology {
 public:
  // Per rank: its host. Per host: its subnet and interface links. Per
  // subnet: its uplinks. All link ids index links (or are -1).
  std::vector<int> host_of_rank;
  std::vector<int> subnet_of_host;
  std::vector<int> nic_up, nic_down;         // per host
  std::vector<int> uplink_out, uplink_in;    // per subnet
  int backplane = -1;                         // every message between hosts
  // Per pair of subnets (subnets × subnets, symmetric), the bytes/s of the
  // connection between two ranks of those subnets, whose directions take
  // turns; 0: no such connection, the directions do not wait for each
  // other. Empty: 0 everywhere.
  std::vector<double> connection;
  std::vector<NetLink> links;
  std::vector<std::string> host_names, subnet_names;  // for explanations (may be empty)
  // Per host: its place on the probe's ring (ECO §6: subnets visited in
  // turn, hosts of a subnet one after another); empty when there is none.
  // Hierarchical collectives order their leaders along it.
  std::vector<int> ring_position;
  std::vector<char> never_limits;  // per link (settle); empty: every link may limit
  // How messages crossing one link share it: in proportion to
  // latency^-latency_sharing, the latency their pair's (0: equally, the
  // max-min fair shares; 1: SimGrid's CM02, whose flows share a link in
  // proportion to 1/latency, and about TCP's bias against long round
  // trips). The probe measures it (profile: sharing).
  double latency_sharing = 0;
  static constexpr double kMaxLatencySharing = 4;

  int ranks() const { return int(host_of_rank.size()); }
  int hosts() const { return int(subnet_of_host.size()); }
  int subnets() const { return int(uplink_out.size()); }
  int host_of(int rank) const { return host_of_rank[size_t(rank)]; }
  int subnet_of(int rank) const { return subnet_of_host[size_t(host_of(rank))]; }

  // The links a message from rank a to rank b crosses, in order, into out
  // (at most kMaxRoute); returns how many.
  static constexpr int kMaxRoute = 5;
  int route(int a, int b, int out[kMaxRoute]) const;
  // The rate of the connection of ranks a and b (on different hosts) whose
  // directions take turns, or 0 (see connection).
  double connection_between(int a, int b) const;

  // The same machine seen by a group whose rank i is this topology's rank
  // map[i]: the hosts, subnets and links the group reaches (renumbered in
  // the base's order, bandwidths and the ring's order unchanged).
  std::shared_ptr<const Topology> mapped(const std::vector<int>& map) const;

  // Checks ids and bandwidths; throws InputError naming the problem.
  void check() const;
  // Marks the links no traffic can fill — a backplane or an uplink at least
  // as fast as all the interfaces that feed it together — which route()
  // then leaves out: max-min fair rates are the same without them, and
  // the simulator's sharing of a busy network no longer joins every message
  // into one group through a link that never limits. Builders call it last.
  void settle();

  // Are there several hosts? Several subnets?
  bool multi_host() const;
  bool multi_subnet() const;
};

using TopologyPtr = std::shared_ptr<const Topology>;

}  // namespace hetcoll
