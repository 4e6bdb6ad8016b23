// A machine profile: what `hetcoll probe` measured on a set of hosts, and
// the model the runtime builds from it. Stored as versioned JSON
// (docs/profile.md, docs/profile.schema.json); read with nlohmann/json and
// checked field by field, so a malformed, truncated or hostile file is an
// InputError naming the problem, in time and memory bounded by the file's
// size (at most kMaxProfileFileBytes).
//
// Per host: Banikazemi §2 send and receive overheads S_c + S_m·m, R_c +
// R_m·m, and the reduction and copy rates. The network, as a tree of any
// depth (version 2: model/topology.hpp's, each link with its bandwidth,
// latency and how it was known), or as classes of pairs (version 1:
// shared memory, inside a subnet, between two subnets — Hockney α, β, the
// transmission X_c + X_m·m, and how much slower concurrent traffic is than
// one pair alone; version 2 keeps the shared-memory class). Per host pair
// (optional, for the command line; the runtime never reads them): the
// one-way time of a small and of a large message (ECO §3: the minimum of
// repeats, and their median). Structure: ECO's subnets and ring. Bruck
// §2.2: λ(m) and t0(m) from both experiments.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/fit.hpp"

namespace hetcoll {

constexpr int kProfileVersion = 2;  // the versions read: 1 and 2
constexpr const char* kProfileFormat = "hetcoll-profile";
constexpr size_t kMaxProfileHosts = 65536;
constexpr size_t kMaxProfileRanks = size_t(1) << 22;
constexpr size_t kMaxProfileDepth = 32;
constexpr uint64_t kMaxProfileFileBytes = uint64_t(64) << 20;
constexpr double kBackplaneShare = 0.75;

// One figure over repeats.
struct Measure {
  double min = 0, median = 0;
};

struct HostProfile {
  std::string name;        // MPI_Get_processor_name
  std::vector<int> ranks;  // the probe job's ranks on this host; the first leads it
  int subnet = 0;
  Measure Sc, Rc;          // s: one small send / one receive of a message already there
  double Sm = 0, Rm = 0;   // s per byte
  double gamma = 0;        // s per byte: sum of doubles with hetcoll's kernel
  double copy = 0;         // s per byte: memcpy
  // B/s: the host's network interface out and in — the fastest of its
  // pairs inside its subnet, each way (a pair moves at its slower end:
  // one fast partner shows the host's own rate). 0: not measured (a host
  // alone in its subnet, profiles before issue 25).
  double nic_up = 0, nic_down = 0;
};

// A class of host pairs: shared memory (two ranks of one host), inside
// subnet a (a == b), or between subnets a < b.
struct PairClass {
  std::string name;
  int a = -1, b = -1;          // -1, -1: shared memory
  int pairs = 0;               // host pairs measured (rank pairs for shared memory)
  double latency = 0;          // s, one-way small message: median over pairs of their minima
  double bandwidth = 0;        // B/s: median over pairs, measured as the mode says
  double bandwidth_alone = 0;  // B/s: one pair with the network to itself (0: not measured)
  double slowdown = 1;         // bandwidth_alone / bandwidth (1: no sharing seen)
  // B/s each way: two large messages of the class at once in opposite
  // directions, from other pairs than one pair's two ends (measure/probe/pairs.cpp
  // both_ways; 0: not measured). Near bandwidth_alone: the links are full
  // duplex; near half of it: both directions share them.
  double bandwidth_both_ways = 0;
  // B/s each way: one pair of the class sending large messages to each
  // other at once, each receive posted before its send as hetcoll's
  // executor posts them (measure/probe/pairs.cpp same_pair; 0: not measured). Well
  // below bandwidth_alone: the pair's two directions take turns — MPI over
  // TCP has one connection per pair of ranks, and Open MPI's go-ahead for
  // one direction's rendezvous waits behind the other direction's bytes.
  double bandwidth_same_pair = 0;
  double alpha = 0, beta = 0;  // Hockney: one-way α + β·m
  double Xc = 0, Xm = 0;       // Banikazemi eq. 3: latency - S_c - R_c, 1/bandwidth - S_m - R_m (>= 0)
};

// A link of the network's tree: what a message alone gets through it, the
// latency it adds, and how that was known ("measured: …", "declared:
// topology.conf line 4", …).
struct LinkProfile {
  double bandwidth = 0;  // B/s; 0: none (a fabric), or nothing limits there
  double latency = 0;    // s, one way
  std::string how;
};
// A node of the tree: the root (parent -1, first), a switch, or a host's
// leaf (host: its index). Its edge to its parent: up and down, or one
// link both ways (shared: up only). A switch's fabric (bandwidth 0: none).
struct NodeProfile {
  std::string name;
  int parent = -1;
  int host = -1;
  bool shared = false;
  LinkProfile up, down, fabric;
  int fabric_as = -1;  // the fabric is node fabric_as's (one link, e.g. a backplane every switch has)
};
// Per subnet, the racks the probe found in it by bandwidth (hosts whose
// messages leave through one shared link that latency does not show).
// Racks may nest (a declared topology's levels): `within` is the index of
// the rack holding this one in the same list (before it), -1: the subnet.
struct RackProfile {
  int subnet = 0;
  int within = -1;
  std::string name;        // a declared switch's name; empty: "subnet S rack K"
  std::vector<int> hosts;  // profile host indices (every host below it)
  bool shared = false;     // one uplink both ways
  LinkProfile up, down;
};

struct ReduceRate {
  std::string op, type;
  Measure gamma;  // s per byte
};

// Bruck §2.2 at one size and send mode: times for k = 1 … K and both fits.
struct LambdaPoint {
  uint64_t bytes = 0;
  bool nonblocking = false;
  std::vector<int> ks;
  std::vector<Measure> exp1, exp2;  // T(k)
  PostalFit fit1, fit2;             // from the minima
};

// Measured decisions (hetcoll tune): for one job layout (the host of each
// rank of MPI_COMM_WORLD), per collective and range of the planner's size
// classes, the native collective and hetcoll's best predicted candidates
// timed on the machine (Banikazemi Fig. 2: barrier-subtracted loops, the
// slowest rank, minimum and median over repeats) and the winner.
struct TunedTime {
  std::string algorithm;  // "native" or an algorithm spec
  Measure time;           // s per call
  double predicted = 0;   // s (0 for native)
};
// How a measured decision's times were taken (TunedEntry::timing).
inline const char* const kTimingFig2 = "Fig. 2", *const kTimingSynchronized = "synchronized start",
                         *const kTimingLearned = "learned in the job";
inline const char* const kTunedTimings[] = {kTimingFig2, kTimingSynchronized, kTimingLearned};
struct TunedEntry {
  std::string op;
  uint64_t bytes = 0;          // the size measured (Collective::size_bytes)
  int class_lo = 0, class_hi = 0;  // size classes [lo, hi) the winner decides
  std::string winner;          // by median
  // How the times were taken, one of kTunedTimings: "Fig. 2" (Banikazemi's
  // barrier-subtracted loops), "synchronized start" where the barrier hid
  // some candidate's call (measure/sync_timing.hpp), or "learned in the
  // job" (HETCOLL_LEARN_SAVE: the slowest rank's mean of the job's calls).
  std::string timing = kTimingFig2;
  std::vector<TunedTime> times;
};
struct TunedLayout {
  std::vector<int> hosts;  // per rank
  std::string created;
  int repeats = 0;
  std::vector<TunedEntry> entries;
};
constexpr size_t kMaxTunedLayouts = 64, kMaxTunedEntries = 4096;

struct Profile {
  int version = kProfileVersion;
  // When, where and how it was measured.
  std::string created;  // ISO 8601 UTC
  std::string tool;     // "hetcoll-probe 0.2.0"
  std::string mpi;      // MPI_Get_library_version, first line
  std::string mode = "concurrent";  // or "sequential"
  int ranks = 0;
  int repeats = 0;
  double budget = 0;    // s (0: none)
  double seconds = 0;   // the probe's own cost
  std::vector<std::pair<std::string, double>> phases;  // and per phase (s)
  bool budget_exhausted = false;
  // What `hetcoll correct` changed, and from what (empty: as measured).
  std::string corrected;
  uint64_t small_bytes = 8, large_bytes = uint64_t(1) << 20;

  std::vector<HostProfile> hosts;
  // n×n row-major (sender, receiver), diagonal 0: one-way time of a small
  // and of a large message. Empty when loaded without pairs.
  std::vector<Measure> small, large;

  double subnet_threshold = 0.2, subnet_gap = 0;
  int subnet_count = 1;
  std::vector<int> ring;
  int ring_crossings = 0;

  // Probe phase "backplane": every host at once sending the large message
  // to the next host of its subnet on the ring — flows that share no
  // interface and no uplink. aggregate: their bytes over the slowest flow's
  // time; expected: the same had each moved at its class's alone rate
  // (flows × the slowest of those rates). bandwidth: the
  // aggregate where it fell below kBackplaneShare of expected (a capacity
  // all traffic between hosts shares: a switch fabric's; on an emulated
  // cluster, the one machine's CPUs), else 0. flows 0: not measured.
  struct Backplane {
    int flows = 0;
    double aggregate = 0, expected = 0, bandwidth = 0;  // B/s
  } backplane;

  // Probe phase "sharing": how two messages into one host's interface
  // share it when their latencies differ — one from a host of its subnet
  // (near), streaming, and one from another subnet (far). far_alone: the
  // far pair's rate alone; far_shared: with the near stream beside it;
  // near_alone: the near pair's rate alone (the interface). The model
  // fits the exponent of Topology::latency_sharing to them (profile_model.hpp:
  // sharing_exponent). measured 0: not measured (one subnet, or no subnet
  // of two hosts).
  struct Sharing {
    int measured = 0;
    int receiver = -1, near = -1, far = -1;            // hosts
    double near_latency = 0, far_latency = 0;          // s, the pairs' small-message one-way minima
    double near_alone = 0, far_alone = 0, far_shared = 0;  // B/s
  } sharing;

  // The network's tree (version 2): parents before children, every host's
  // leaf once. Empty in version 1, whose classes describe the network.
  std::vector<NodeProfile> network;
  std::vector<PairClass> classes;
  std::vector<ReduceRate> reductions;
  std::vector<LambdaPoint> lambda;
  bool receives_use_cpu = false;  // the runtime model: receives are the receiver's copies
  std::vector<TunedLayout> tuned;

  size_t host_index(const std::string& name) const;  // hosts.size() when absent
  const PairClass* shared_memory() const;
  const PairClass* between(int a, int b) const;      // a, b subnets, either order
};

// Parse and check. with_pairs = false skips the pair matrices (what the
// runtime needs is the rest; a profile may have none). Throws InputError.
Profile parse_profile(const std::string& text, bool with_pairs = true);
Profile load_profile(const std::string& path, bool with_pairs = true);
std::string profile_to_json(const Profile& p);

// Does this JSON text claim to be a profile (its "format")? A cheap look at
// the text, so that HETCOLL_PROFILE=FILE can tell a profile from a model file.
bool looks_like_profile(const std::string& text);

}  // namespace hetcoll
