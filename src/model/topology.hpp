// Topology: where a model's ranks sit and which links their messages share.
//
// A tree of any depth, as a site draws its network (Slurm's topology.conf,
// SimGrid's zones): ranks on hosts (ranks of one host talk through shared
// memory), hosts the leaves, switches the inner nodes — racks, pods,
// subnets, sites — up to one root. Each node but the root hangs off its
// parent by an edge of two links, one each way (`up` toward the parent,
// `down` from it), or of one link both directions share (up == down: a
// half-duplex or shared link, SimGrid's SHARED); a switch may have a
// fabric of its own, a capacity every message through it shares (a
// backplane slower than its ports). A link id -1 is a link that never
// limits. One link may stand in several places (a fabric every switch of
// a machine shares: the one machine whose CPUs move every packet of an
// emulated cluster); a message crosses it once.
//
// A message from host a to host b crosses the edges from a up to the
// lowest switch above both, that switch and every switch on the way
// (their fabrics), and the edges down to b:
//
//   same host       no network link
//   otherwise       up(a) … up(child of the top) fabric(top) down(…) … down(b)
//
// ECO's and Banikazemi's cluster is the tree of depth 2: hosts under
// subnet switches (their interfaces the hosts' edges) under one root (the
// subnets' uplinks the switches' edges). A "group" is a subtree whose
// root is a child of the highest switch where the tree branches (the
// tree's root; below it where it has one child, a switch with switches
// under it): a subnet, a rack of a fat tree (whose one subnet the probe
// found racks in) — what hierarchical collectives, the connection rates
// and "across groups first" orderings see.
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
// The simulator shares each link's bandwidth max-min fairly among the
// messages crossing it at the same instant, on top of each message's own
// rate (MessageCost::wire), as SimGrid's flow model does — weighted by the
// messages' latencies where the probe found that long ones get less
// (latency_sharing).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hetcoll {

struct NetLink {
  std::string name;        // "nic_up(a3)", "uplink(A)"
  double bandwidth = 0;    // bytes/s, shared max-min fairly
  double latency = 0;      // s, one way (models that price by path: path_latency)
};

// A host (a leaf) or a switch of the tree.
struct NetNode {
  std::string name;
  int parent = -1;          // -1: the root
  int up = -1, down = -1;   // the edge to the parent, each way (equal: one shared link)
  int fabric = -1;          // a switch's own capacity (-1: none)
  int depth = 0;            // the root's is 0
  int host = -1;            // the host a leaf is; -1: a switch
};

class Topology {
 public:
  static constexpr int kMaxDepth = 16;
  // The links of a route: up to kMaxDepth edges each way and the switches between.
  static constexpr int kMaxRoute = 4 * kMaxDepth;

  // Per rank: its host. The tree: nodes[0] is the root, a node's parent
  // comes before it; per host, its leaf. All link ids index links (or are -1).
  std::vector<int> host_of_rank;
  std::vector<NetNode> nodes;
  std::vector<int> node_of_host;
  std::vector<NetLink> links;
  // Per pair of groups (groups × groups, symmetric), the bytes/s of the
  // connection between two ranks of those groups, whose directions take
  // turns; 0: no such connection, the directions do not wait for each
  // other. Empty: 0 everywhere.
  std::vector<double> connection;
  // Per host: its place on the probe's ring (ECO §6: groups visited in
  // turn, hosts of a group one after another); empty when there is none.
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

  Topology();  // a root switch, nothing below it

  // Building, top down: a link, a switch under `parent`, a host under
  // `parent` (its id, and a leaf of its own).
  int add_link(std::string name, double bandwidth, double latency = 0);
  int add_switch(int parent, std::string name, int up = -1, int down = -1, int fabric = -1);
  int add_host(int parent, std::string name, int up = -1, int down = -1);

  int ranks() const { return int(host_of_rank.size()); }
  int hosts() const { return int(node_of_host.size()); }
  int host_of(int rank) const { return host_of_rank[size_t(rank)]; }
  const std::string& host_name(int host) const { return nodes[size_t(node_of_host[size_t(host)])].name; }
  // The leaves' deepest depth (2 for a machine of subnets).
  int depth() const;
  // The ancestor of node n at depth d (n itself when d is its depth or more).
  int ancestor(int n, int d) const;

  // Groups: the subtrees under the root, numbered in node order.
  int groups() const { return int(group_nodes_.size()); }
  int group_node(int g) const { return group_nodes_[size_t(g)]; }
  int group_of_host(int host) const { return group_of_leaf_[size_t(host)]; }
  int group_of(int rank) const { return group_of_host(host_of(rank)); }

  // The links a message from rank a to rank b crosses, in order, each
  // once, leaving out those that never limit (settle), into out (at most
  // kMaxRoute); returns how many. route_hosts: the same between hosts.
  int route(int a, int b, int out[kMaxRoute]) const { return route_hosts(host_of(a), host_of(b), out); }
  int route_hosts(int ha, int hb, int out[kMaxRoute]) const;
  // The one-way latency of that path: its links' latencies summed; and its
  // slowest link's bandwidth (a message alone moves at it) — every link of
  // it counted, those that never limit too.
  double path_latency(int ha, int hb) const;
  double path_bandwidth(int ha, int hb) const;
  // The rate of the connection of ranks a and b (on different hosts) whose
  // directions take turns, or 0 (see connection).
  double connection_between(int a, int b) const;

  // The same machine seen by a group whose rank i is this topology's rank
  // map[i]: the hosts the group reaches and the switches above them, with
  // their links (renumbered in the base's order, bandwidths and the ring's
  // order unchanged).
  std::shared_ptr<const Topology> mapped(const std::vector<int>& map) const;

  // Checks the tree, ids and bandwidths; throws InputError naming the
  // problem. Builders call it, then settle().
  void check() const;
  // Marks the links no traffic can fill — an edge or a fabric at least as
  // fast as all the interfaces that can feed it together — which route()
  // then leaves out: max-min fair rates are the same without them, and
  // the simulator's sharing of a busy network no longer joins every message
  // into one group through a link that never limits. Also numbers the
  // groups. Builders call it last.
  void settle();

  // Are there several hosts? Several groups?
  bool multi_host() const;
  bool multi_group() const;

 private:
  std::vector<int> group_nodes_;    // per group: its node
  std::vector<int> group_of_leaf_;  // per host: its group
  void number_groups();
  int branching_top() const;
};

using TopologyPtr = std::shared_ptr<const Topology>;

}  // namespace hetcoll
