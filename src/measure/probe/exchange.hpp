// The probe's MPI measuring helpers: its communicator and clock, rank 0's
// decisions, a sleeping barrier, ping-pongs, the hosts and their pairs' order.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/profile.hpp"

namespace hetcoll::probe {

// The probe's communicator (a duplicate of MPI_COMM_WORLD), this rank, the
// number of ranks and the clock's start (main sets them; rank 0 and 1 rank
// until then).
extern MPI_Comm g_comm;
extern int g_rank, g_size;
extern double g_start;

enum Tag : int { kPing = 1, kToken, kData, kDone, kLambda, kLambdaBack, kStream, kStop };

// Seconds since g_start.
double elapsed();
// Rank 0 decides, every rank follows: rank 0's v.
bool agree(bool v);
// A barrier that sleeps while it waits (exchange.cpp says why).
void quiet_barrier();
// Minimum and median; {} for none.
Measure summarize(std::vector<double> v);

inline int count_of(uint64_t bytes) { return int(bytes); }  // sizes are at most 1 GiB

// One-way time of round trips of `bytes` (exchange.cpp).
double pingpong(int peer, bool initiator, std::vector<char>& buf, uint64_t bytes, int iters);
// A large message one way and a small answer (initiator's clock).
double large_then_small(int peer, bool initiator, std::vector<char>& buf, uint64_t large, uint64_t small);
// Round-robin tournament over n players: its rounds, and the partner of
// `player` in `round` (-1: a bye).
int rounds_of(int n);
int partner(int player, int round, int n);

struct Hosts {
  std::vector<std::string> names;            // per host
  std::vector<std::vector<int>> ranks;       // per host, ascending; [0] leads
  std::vector<int> host_of;                  // per rank
  int mine = 0;                              // this rank's host
  bool leader() const { return ranks[size_t(mine)][0] == g_rank; }
  int n() const { return int(names.size()); }
};

// The hosts: ranks sharing memory form one, its lowest rank leads it.
Hosts find_hosts();
// The host pairs in measuring order, round by round, the lower host first.
std::vector<std::pair<int, int>> pair_order(int n);

// Measures a list of host pairs, one pair at a time: the initiator of pair
// k waits for a token from the initiator of pair k-1. `measure(peer,
// initiator)` runs on both leaders of a pair.
template <class F>
void one_pair_at_a_time(const Hosts& h, const std::vector<std::pair<int, int>>& pairs, F measure) {
  if (!h.leader()) return;
  const int me = h.mine;
  auto leader = [&](int host) { return h.ranks[size_t(host)][0]; };
  for (size_t k = 0; k < pairs.size(); ++k) {
    const auto [a, b] = pairs[k];
    if (a != me && b != me) continue;
    if (a == me) {
      if (k > 0 && pairs[k - 1].first != me) {
        int token;
        MPI_Recv(&token, 1, MPI_INT, leader(pairs[k - 1].first), kToken, g_comm, MPI_STATUS_IGNORE);
      }
      measure(leader(b), true, a, b);
      if (k + 1 < pairs.size() && pairs[k + 1].first != me) {
        int token = 0;
        MPI_Send(&token, 1, MPI_INT, leader(pairs[k + 1].first), kToken, g_comm);
      }
    } else {
      measure(leader(a), false, a, b);
    }
  }
}

// v summed over the ranks, at rank 0 (zeros elsewhere).
std::vector<double> reduce_to_root(std::vector<double> v);

}  // namespace hetcoll::probe
