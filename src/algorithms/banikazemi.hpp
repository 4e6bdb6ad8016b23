// Banikazemi et al.'s analytic models of broadcast, scatter and gather
// (HCW 1999, §3, eqs. 6-12), as functions of any machine model: the
// closed-form view beside the simulator's (hetcoll predict prints both for
// the same tree).
//
// Written with MessageCost (model/machine_model.hpp): the sender is busy
// `send` per message, the message is at the receiver `arrive` after its send
// started and usable `recv` later. On a heterogeneous model (send = S_c +
// S_m·m, arrive − send = X_c + X_m·m, recv = R_c + R_m·m) these are the
// paper's equations exactly:
//
//   broadcast over a tree (6, 7): node i has the data at
//     T(i) = T(parent) + Σ_{children c up to and including i} send(parent→c)
//            + (arrive − send)(parent→i) + recv(parent→i)
//     T = max_i T(i)
//   scatter over a sequential tree (8, 9): the same with every parent the root
//     and message size the block.
//   gather over a reverse sequential tree (10-12): messages arrive at the
//     root in the order of their senders' send overheads, one transmission
//     after another on the root's link,
//     T_arrive(k) = (k-th smallest send(j→root)) + k·(arrive − send)
//     T_recv(k)   = max(T_recv(k−1), T_arrive(k)) + recv(j→root)
//     T = T_recv(n−1)
//
// The models ignore contention beyond what the equations state (the paper:
// "applicable only to fully-connected systems"); the simulator does not.
#pragma once
#include <cstdint>
#include <vector>

#include "algorithms/patterns/tree.hpp"
#include "model/machine_model.hpp"

namespace hetcoll {

struct AnalyticResult {
  double time = 0;                // the operation's completion time
  std::vector<double> per_rank;   // when each rank has its data (gather: the root's receives, in order)
};

// Eqs. 6-7. The tree's node v is rank (v + root) mod n; messages of `bytes`.
AnalyticResult banikazemi_bcast(const MachineModel& m, const Tree& t, int root, uint64_t bytes);
// Eqs. 8-9: the root sends `block` bytes to every other rank, in the order
// of the sequential tree (ranks root+1, root+2, … mod n).
AnalyticResult banikazemi_scatter(const MachineModel& m, int nranks, int root, uint64_t block);
// Eqs. 10-12: every other rank sends `block` bytes to the root.
AnalyticResult banikazemi_gather(const MachineModel& m, int nranks, int root, uint64_t block);

}  // namespace hetcoll
