// Rounds: the price of a regular schedule without building it.
//
// Ring, recursive-doubling, dissemination and pairwise schedules are
// sequences of rounds in which every taking-part rank sends one message to
// a partner given by rank arithmetic (r+d mod p, r xor d, a fold of the
// extra ranks onto the core) and the receiver may combine it. They have
// p·log p to p² operations: past a few thousand ranks they cannot be
// simulated within a decision's budget, while pricing a round takes one
// pass over the ranks.
//
// A round is priced in lock step, as the simulator would run it if every
// rank started the round together (Round::times rounds alike cost the same):
//
//   per message r → q:   the model's MessageCost (per pair: heterogeneous
//                        nodes, hosts and subnets of a profile), and on a
//                        model with a topology the bytes through the links
//                        of its route (topology.hpp): each link carries the
//                        round's bytes of every message crossing it, at its
//                        bandwidth; a message's bytes take the longer of its
//                        own rate (MessageCost::wire) and its most loaded
//                        link's load over bandwidth (max-min fair sharing
//                        of equal messages); a pair sending both ways where
//                        its directions take turns (Topology::connection)
//                        moves both through its one connection;
//   the round            ends when the last receiver has its data (and has
//                        combined it: reduce bytes at its reduction rate) or
//                        the last sender's port is free, whichever is later.
//
// Exact on the α-β-γ, postal and LogGP models for the schedules whose
// rounds are synchronised by their data (each send needs the last receive);
// on a network it is the step-by-step bottleneck of the issue's
// description: bytes each link, NIC and uplink carries over its capacity,
// plus the latencies. A round whose ranks cost alike (a model without
// per-rank data or topology) is priced from one message.
#pragma once
#include <cstdint>
#include <vector>

#include "model/machine_model.hpp"

namespace hetcoll {

struct Round {
  enum class Pattern : uint8_t {
    shift,     // r → (r + distance) mod p, for r < active (active ≤ p: a sub-ring of ranks 0 … active-1, mod active)
    xor_,      // r → r xor distance, for r < active (both directions: an exchange)
    fold_in,   // r → r - active, for r ≥ active (the extra ranks into the core)
    fold_out,  // r → r + active, for r < p - active (the core back to the extra ranks)
    open,      // r → r + distance, for r + distance < active (a prefix: no wrap)
    gather,    // r → distance (the root), for r < active: the root takes them in turn
    scatter,   // the root (distance) → r, for r < active, in rank order from the root, as its ports allow
    local,     // no message: every rank copies `bytes` (scratch, rotations)
  };
  Pattern pattern = Pattern::shift;
  int distance = 1;
  int active = 0;           // 0: every rank
  uint64_t bytes = 0;       // per message
  uint64_t reduce = 0;      // bytes the receiver combines after the message
  // Rounds alike (a weight: sampled sweeps). A ring (shift by 1 of every
  // rank, one message at a time, times > 1) is priced as the pipeline it
  // is: a block is delayed by every hop it crosses, and the steps follow
  // each other at the busiest port's pace.
  double times = 1;
  // shift: this many distances at once (distance, distance+stride, …):
  // sends a rank posts together — in flight as many as the model's
  // send_ports(), or all of them when eager — whose overheads follow each
  // other and whose bytes share the links; the receiver takes them one
  // after another.
  int fan = 1;
  int stride = 1;           // shift: the distances of a fan are distance + f·stride (mod p)
  // The round whose receipt the sends carry, counted back among the rounds
  // with messages: 1 the one before (the default: each step forwards what
  // the last brought), k an earlier one, 0 none (a rank's own data). A send
  // waits only for that data and for the rank's last send.
  int needs = 1;
};

struct RoundsPrice {
  double time = 0;
  uint64_t messages = 0;  // of the whole schedule the rounds describe (weighted)
};

// The rounds' price on a model of p ranks (model ranks 0 … p-1). Identical
// rounds (pattern, distance, active, bytes, reduce) are priced once.
RoundsPrice price_rounds(const MachineModel& m, int p, const std::vector<Round>& rounds);

// Rounds r → r+d for d in [first, last], at most `samples` of them priced
// (fewer where p·fan messages a batch would make more than 2^17 in all)
// (evenly spread, each standing for its share of the sweep): the steps of a
// pairwise exchange or of a spread of sends to everyone.
// fan: how many of them a rank posts at once (1: one after another, each
// waiting for the last receive; p-1: a spread of sends all posted at once).
void add_shift_sweep(std::vector<Round>& out, int p, int first, int last, uint64_t bytes, int fan = 1,
                     int samples = 24);

}  // namespace hetcoll
