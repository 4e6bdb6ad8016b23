// Structure from measured costs: ECO's subnet partition and ring order.
//
// partition_subnets — Lowekamp & Beguelin (ECO), §4.1, Fig. 2. Edges (host
// pairs, cost = the smaller-is-better one-way time of a small message, the
// minimum of repeats as ECO argues in §3) are taken cheapest first; the two
// ends are merged into one subnet when the edge costs at most (1 + t) times
// the cheapest edge incident on each end and (1 + t) times the cheapest
// edge inside each end's current subnet (t = 0.20 in the paper). A host
// joining a subnet is not checked against every member, so a few bad
// measurements do not split a subnet. O(n² log n) for n hosts.
//
// ring_order — ECO's topology function (§6, Fig. 3c): a ring through all
// hosts that crosses between subnets as few times as possible: each
// subnet's hosts consecutive (so a ring over k > 1 subnets crosses exactly
// k times), subnets in nearest-neighbour order of their median
// inter-subnet cost, hosts inside a subnet in nearest-neighbour order.
#pragma once
#include <cstddef>
#include <vector>

namespace hetcoll {

constexpr double kEcoThreshold = 0.20;

struct SubnetPartition {
  std::vector<int> subnet_of;            // per host: 0 … count-1, numbered by first host
  std::vector<std::vector<int>> groups;  // per subnet: its hosts, ascending
  double threshold = kEcoThreshold;
  // The separation: the cheapest edge between two subnets over the most
  // expensive edge inside one (0 when there is one subnet or no edge inside).
  double gap = 0;
  double max_inside = 0, min_between = 0;
  int count() const { return int(groups.size()); }
};

// cost: n×n, row-major; cost[i][j] for i≠j (the diagonal is ignored); the
// partition uses max(cost[i][j], cost[j][i]). Throws InputError on a
// negative or non-finite cost, or a threshold outside [0, 10].
SubnetPartition partition_subnets(const std::vector<double>& cost, size_t n, double threshold = kEcoThreshold);

// ECO's partition, widened where it is not significant: when the subnets it
// finds are not separated by a gap of at least kMinSubnetGap (the cheapest
// edge between subnets over the most expensive inside one), load noise has
// split a subnet (on a loaded machine latencies inside one vary by 1.5×,
// past ECO's 20 %), and the partition is taken again with thresholds 0.5,
// 1, 2 — the first with such a gap, or with one subnet, stands (its
// threshold recorded). Where ECO's partition has the gap, it is the answer.
constexpr double kMinSubnetGap = 2.0;
SubnetPartition significant_subnets(const std::vector<double>& cost, size_t n, double threshold = kEcoThreshold);

struct RingOrder {
  std::vector<int> hosts;  // the ring, starting at host 0
  int crossings = 0;       // ring edges between two subnets (including the closing edge)
};
RingOrder ring_order(const std::vector<double>& cost, size_t n, const std::vector<int>& subnet_of);

}  // namespace hetcoll
