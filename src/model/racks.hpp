// Racks by bandwidth (the probe's racks phase, measure/probe/racks.cpp): from
// the rates of "shift" experiments inside a subnet — every host i of the
// subnet's order sending to host i + k at once — which hosts share one
// link out that latency does not show (a rack of a fat tree whose uplink
// is oversubscribed). Pure arithmetic on measured rates: no MPI.
//
// A flow is slow below kRackSlow (0.8) of the best rate its two hosts reached in
// any shift. At a shift k where some flows are slow and some not, the slow
// ones cross a rack's edge that k flows overload: a run of slow senders
// a … b puts an edge right after b (flow b crosses one, flow b + 1 none)
// and at a + k — true edges both, even where runs of neighbouring racks
// merge (which only hides edges): the edges of every such shift of at
// most half the subnet together. Two edges or more make racks.
#pragma once
#include <vector>

namespace hetcoll {

constexpr double kRackSlow = 0.8;

struct ShiftRates {
  std::vector<std::vector<int>> members;  // per subnet, its hosts in order
  std::vector<int> ks;                    // the shifts measured
  std::vector<std::vector<double>> rates; // per shift, per sender host (B/s; 0: no flow)
};

// Per host, the best rate it sent or received at in any shift (its
// interface, where a flow of it stayed inside its rack).
std::vector<double> best_rates(const ShiftRates& s, int hosts);
// Per host, where it sends at shift k (-1: none): subnets of 4 hosts or
// more with more than k hosts.
std::vector<int> shift_targets(const std::vector<std::vector<int>>& members, int hosts, int k);
// The next shift to measure, or 0: for the first subnet without a shift of
// slow and fast flows, between the largest shift with no slow flow and the
// smallest above it with all flows slow (halving the gap); or whose
// smallest such shift has runs of slow senders longer than itself (edges
// hidden), between the largest with none slow and it.
int next_shift(const ShiftRates& s, int hosts);
// Whether some flow of some shift was slow (bandwidth shows structure,
// found as racks or not).
bool any_slow_flow(const ShiftRates& s, int hosts);
// Per host its rack (numbered across subnets), -1 for none; `count` racks.
std::vector<int> racks_from_shifts(const ShiftRates& s, int hosts, int& count);

}  // namespace hetcoll
