// class Probe: what each phase measured, kept for the next phases and the
// profile, and the structs its files share. The probe, phase by phase:
//
// hetcoll-probe: measures the machine an MPI job runs on and writes a
// machine profile (model/profile.hpp, docs/profile.md). An MPI program of
// its own (`hetcoll probe --np K` runs it under mpirun); it uses plain
// point-to-point MPI and hetcoll's core, never hetcoll's collectives.
//
// Phases, in order (each rank 0's decision, broadcast, so every rank agrees):
//  1. hosts      ranks sharing memory (MPI_Comm_split_type) form a host; its
//                lowest rank leads it; the name is MPI_Get_processor_name.
//  2. pairs      ECO §3: for every pair of host leaders, the one-way time of a
//                small message (several round trips per repeat) and of a
//                large one; minimum and median over repeats. Concurrent mode:
//                p-1 rounds of disjoint pairs (round-robin tournament), all
//                pairs of a round at once. Sequential mode (ECO's): one pair at
//                a time, a token passed from pair to pair.
//  3. subnets    ECO §4.1 Fig. 2 on the small-message minima (rank 0), ring.
//  4. alone      concurrent mode: one pair of each class measured alone: how
//                much concurrent traffic slowed the class (a shared uplink);
//                and the same pair sending both ways at once: whether its
//                path is full duplex (profile: bandwidth_both_ways); and
//                the pair itself both ways at once, receives posted first:
//                whether its two directions take turns on one connection
//                (profile: bandwidth_same_pair).
//  4b. backplane concurrent mode: every host at once to the next host of its
//                subnet on the ring: whether flows that share no interface
//                and no uplink still share a capacity (profile: backplane).
//  4c. sharing  concurrent mode, two subnets or more: a host of a subnet of
//                two or more receives a large message from another subnet
//                (far) alone, then again beside a stream from a host of its
//                own subnet (near): how flows of different latencies share
//                its interface (profile: sharing; SimGrid's CM02 and TCP
//                give long round trips less).
//  4e. subnet links  concurrent mode, two subnets or more: the subnets as
//                groups (group_links): every subnet's hosts at once to the
//                next subnet's, and back, and every host to another
//                subnet's: each subnet's link out and in, measured where
//                the pairs' classes cannot tell them (NICs slower than the
//                uplink, uplinks faster one way, interfaces mixed).
//  5. overheads  Banikazemi §2: per host S_c (consecutive small sends), S_m
//                (consecutive large sends), R_c and R_m (receives of
//                messages already arrived), against the nearest host.
//  6. shared     two ranks of one host: one-way small and large times.
//  7. kernels    γ per (op, type) with hetcoll's reduction kernels; memcpy.
//  8. lambda     Bruck §2.2, both experiments, 8 B … 4 MiB, blocking and
//                non-blocking sends, k = 1 … K: λ(m) and t0(m).
// A budget (--budget) cuts repeats, sizes and the optional phases (4-8).
// Ranks with nothing to measure wait in quiet_barrier (sleeping), not
// spinning in MPI, so that the pairs being measured keep the cores.
//
// The files of src/measure/probe/: main.cpp (main, Probe::run: the phases
// in order), options, progress, exchange (the MPI helpers), and the phases
// by theme: pairs.cpp (2-4), sharing.cpp (4b backplane, 4c sharing),
// links.cpp (flows at once, groups' links, 4e subnet links), racks.cpp
// (4d racks, pods), declared.cpp (--topology), hosts.cpp (5-8);
// build_profile.cpp assembles and writes the profile (rank 0).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "exec/reduce_kernels.hpp"
#include "measure/probe/exchange.hpp"
#include "measure/probe/options.hpp"
#include "measure/probe/progress.hpp"
#include "measure/program_args.hpp"
#include "model/declared_topology.hpp"
#include "model/fit.hpp"
#include "model/profile.hpp"
#include "model/profile_model.hpp"
#include "model/racks.hpp"
#include "model/subnets.hpp"

namespace hetcoll::probe {

struct PairData {
  // n×n; filled at the initiator's row, then reduced to rank 0.
  std::vector<double> small_min, small_med, large_min, large_med;
};

// Kernels whose reduction rate the probe measures (the profile names them).
struct Kern {
  ReduceOp op;
  ElemType type;
  const char* type_name;
};
const Kern kKernels[] = {{ReduceOp::sum, ElemType::f64, "f64"}, {ReduceOp::sum, ElemType::f32, "f32"},
                         {ReduceOp::sum, ElemType::i32, "i32"}, {ReduceOp::sum, ElemType::i64, "i64"},
                         {ReduceOp::max, ElemType::f64, "f64"}, {ReduceOp::min, ElemType::i32, "i32"},
                         {ReduceOp::prod, ElemType::f64, "f64"}, {ReduceOp::band, ElemType::u8, "u8"}};
// host rows: Sc min, Sc med, Sm, Rc min, Rc med, Rm, gamma, copy
constexpr int kHostFields = 8;

// One run of the probe: the phases in turn (run()), what each measured kept
// for the next and for the profile, which rank 0 assembles and writes.
class Probe {
 public:
  explicit Probe(const Options& opt)
      : opt(opt), large(opt.large), bar(opt.progress), budget(opt.budget) {}
  int run();

 private:
  bool within(double share) { return agree(budget <= 0 || elapsed() < share * budget); }
  // Whether a phase of about `cost` seconds (rank 0's estimate) still fits
  // in `share` of the budget; rank 0 decides, every rank follows.
  bool affords(double cost, double share) { return agree(budget <= 0 || elapsed() + cost <= share * budget); }
  int class_of(int a, int b) const {
    int x = std::min(subnet_of[size_t(a)], subnet_of[size_t(b)]), y = std::max(subnet_of[size_t(a)], subnet_of[size_t(b)]);
    return x * S + y;
  }
  // 2-4. pairs.cpp: every pair's latency and bandwidth; the subnets; one
  // pair per class alone, both ways, and one pair both ways.
  void pairs();
  void subnets();
  void alone_pairs();
  // 4b, 4c. sharing.cpp: whether flows that share no interface share a
  // capacity (the backplane); how a near and a far flow share an interface.
  void backplane();
  void sharing();
  double far_message(int r, int n, int f, bool stream, uint64_t bytes);
  // links.cpp: flows at once and their rates; the links of groups of hosts
  // (racks, pods, declared switches, subnets); 4e. the subnets' own links.
  std::vector<double> flow_rates(const std::vector<int>& to, uint64_t bytes);
  double flows_estimate(uint64_t bytes) const;
  std::vector<double> interface_rates() const;
  struct GroupSet {
    std::vector<std::vector<int>> hosts;  // per group, its hosts in host order
    std::vector<int> next;                // per group, the group its hosts send to (-1: none)
    std::vector<int> index;               // per group, its place among those it cycles with
    std::vector<int> vote;                // per group, the groups that decide "one link both ways" together
    bool inside = true;                   // check the flows inside each group (racks; not upper levels)
    bool symmetric = true;                // a link in as fast as its link out where nothing showed more (not subnets)
  };
  std::vector<RackProfile> group_links(const GroupSet& g, uint64_t bytes, const std::string& how_first,
                                       std::vector<double>& inside_ratio);
  // Per host, the host it sends to when each cycle of groups (next) sends
  // at once, every host to a host of another group and every host
  // receiving one flow: the groups' hosts one after another, shifted by the
  // largest group (a group larger than its next loads its link out with all
  // its hosts, spread over the groups after it; -1: no flow).
  std::vector<int> spread_flows(const GroupSet& g) const;
  void fan_links(const GroupSet& g, const std::vector<int>& which, uint64_t bytes, std::vector<RackProfile>& links);
  void subnet_links();
  // 4d. racks.cpp: racks by bandwidth, in one order of the hosts after
  // another; then pods of racks.
  void racks();
  bool racks_in_order(const std::vector<int>& order_of_hosts, double& took);
  std::vector<RackProfile> pods(const std::vector<std::vector<int>>& rack, const std::vector<int>& subnet_of_rack,
                                uint64_t bytes);
  // declared.cpp: a declared topology (--topology) measured switch by
  // switch, and what of it held.
  void declared();
  void hold_declared(const DeclaredTopology& t, const DeclaredLayout& lay, const std::vector<RackProfile>& links,
                     const std::vector<double>& ratio);
  // 5-8. hosts.cpp: the overheads, shared memory, the kernels, λ.
  void overheads();
  void shared_memory();
  void kernels();
  void lambda_experiments();
  // build_profile.cpp (rank 0): the profile from every phase, written.
  int write_profile();
  void host_rows(Profile& p);
  void pair_classes(Profile& p, std::string& unmeasured);
  void interfaces(Profile& p);
  void receive_copy_beyond_interfaces(Profile& p);
  void transmission(Profile& p);
  void backplane_of(Profile& p);
  void rack_latencies(Profile& p);

  const Options& opt;
  uint64_t large;  // the bandwidth message; smaller when the budget cannot pay for it
  Progress bar;
  const double budget;
  bool exhausted = false;
  // 1. Hosts.
  Hosts hosts;
  int H = 0;
  size_t HH = 0;
  std::vector<char> buf, buf2;
  std::vector<std::pair<int, int>> order;  // host pairs, round by round
  // 2. Pairs.
  int repeats_done = 0;
  PairData pd;
  // 3. Subnets.
  std::vector<int> subnet_of;
  SubnetPartition part;
  RingOrder ring;
  int S = 0;
  // 4. Alone, both ways, one pair both ways; 4b. the backplane.
  std::vector<double> alone, alone_both, alone_same;
  double same_payload = 0;  // bytes of the same_pair messages
  std::vector<int> bp_to;
  int bp_flows = 0;
  double bp_aggregate = 0;
  // 4d. Racks by bandwidth (rank 0).
  std::vector<RackProfile> found_racks;
  std::vector<double> rack_nic;  // per host, its best rate in the shifts
  // 4e. The subnets' own links (rank 0; per subnet, empty: not measured).
  std::vector<RackProfile> found_subnets;
  // 4c. Sharing (rank 0).
  Profile::Sharing shares;
  // 5. Overheads, 7. kernels: per host, kHostFields values.
  std::vector<double> hostv;
  // 6. Shared memory: per host, small and large one-way minima.
  std::vector<double> shm;
  std::vector<double> kern_min, kern_med;
  // 8. λ.
  std::vector<LambdaPoint> lambda;
  double probe_seconds = 0;
};

}  // namespace hetcoll::probe
