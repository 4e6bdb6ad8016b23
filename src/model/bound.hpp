// The physical bound: the least time any schedule of a collective can take
// on a model — no algorithm, however clever, runs faster on that machine.
//
// It is the largest of a few lower bounds, each sound on its own
// (docs/bound.md derives them):
//
//  * cuts: the ranks of one subtree of the network's tree — a host, a
//    rack, a subnet, at every level the tree has — form a part X; a
//    collective says how many bytes must enter X and leave X at least
//    (bcast: the vector enters every part without the root; allreduce: the
//    vector enters and leaves every part; allgather: the others' blocks
//    enter X, its own leave it; ...). The edge that guards X in that
//    direction — a host's nic_down/nic_up, a switch's uplink_in/uplink_out,
//    one link both ways where it is shared — carries them at its
//    bandwidth.
//  * aggregates: over all parts of a level at once, the bytes that must
//    cross between parts (an allreduce needs 2(k-1) vectors across k parts:
//    k-1 to bring the contributions together, k-1 to hand the result out),
//    spread over the parts' links together; and over a switch's fabric,
//    the bytes that must cross between its children's subtrees and the
//    rest (a fabric every switch has, a backplane: every byte between
//    hosts).
//  * ports: a rank receives its bytes through its one receive port (and,
//    on a model without links, sends through its send ports).
//  * a path: every rank that must learn something receives at least one
//    message.
//
// A network constraint adds the least overheads a network message pays
// before its bytes flow and after they have arrived (the simulator's order:
// sender's overhead, bytes through the links, latency, receive).
#pragma once
#include <cstdint>
#include <string>

#include "model/machine_model.hpp"
#include "schedule/collective.hpp"

namespace hetcoll {

struct Bound {
  double time = 0;       // the bound, in the model's unit
  // The binding constraint: its name ("uplink_in(B)", "receive port of
  // rank 3", "one message"), the bytes it must carry, its capacity in
  // bytes per unit (0 for the path) and the overheads added to them.
  std::string cut;
  double bytes = 0, capacity = 0, overheads = 0;
  // Every constraint considered, for explanations: "name bytes capacity time".
  int constraints = 0;
  bool network = false;  // the model has links (a topology)
  std::string str(const std::string& unit) const;  // one line
  json::Value to_json() const;
};

// The bound for `c` on `m` (m: the model of the call's group). Past
// kBoundPairRanks ranks, per-pair minima (overheads, ports) are taken only
// where the model makes every pair alike; the cuts hold at any size.
Bound lower_bound(const Collective& c, const MachineModel& m);
constexpr int kBoundPairRanks = 1024;

}  // namespace hetcoll
