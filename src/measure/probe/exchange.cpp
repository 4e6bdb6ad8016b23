// The probe's MPI measuring helpers (exchange.hpp): the clock, rank 0's
// decisions, the sleeping barrier, ping-pongs, the hosts and their pairs.
#include "measure/probe/exchange.hpp"

#include <algorithm>
#include <ctime>
#include <string>
#include <vector>

#include "model/fit.hpp"

namespace hetcoll::probe {

MPI_Comm g_comm;
int g_rank = 0, g_size = 1;
double g_start = 0;

double elapsed() { return MPI_Wtime() - g_start; }

// Rank 0 decides, every rank follows.
bool agree(bool v) {
  int x = v ? 1 : 0;
  MPI_Bcast(&x, 1, MPI_INT, 0, g_comm);
  return x != 0;
}

// A barrier that sleeps while it waits. With more ranks than cores, a rank
// with nothing to measure that spins in MPI_Barrier (yielding or not) takes
// time slices from the pairs being measured and inflates their round trips.
// Under SMPI the CPU is not the clock: a plain barrier.
void quiet_barrier() {
#if defined(SMPI_H)
  MPI_Barrier(g_comm);
#else
  MPI_Request rq;
  MPI_Ibarrier(g_comm, &rq);
  int done = 0;
  MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
  const timespec nap{0, 50000};  // 50 us: well under a measuring round
  while (!done) {
    nanosleep(&nap, nullptr);
    MPI_Test(&rq, &done, MPI_STATUS_IGNORE);
  }
#endif
}

Measure summarize(std::vector<double> v) {
  if (v.empty()) return {};
  return {*std::min_element(v.begin(), v.end()), median(v)};
}

namespace {

// Rounds trips of a small message: enough of them to take ~200 us (the
// clock's grain and jitter), 1 to 16, from the untimed first trip.
int trips_for(double rtt) { return int(std::clamp(200e-6 / std::max(rtt, 1e-9), 1.0, 16.0)); }

}  // namespace

// One-way time of `iters` round trips of `bytes` (initiator's clock; 0
// iterations: as many as trips_for says, the initiator tells the partner),
// after one untimed small round trip: the partner may still be leaving a
// barrier or another pair, and an MPI that moves a message only once its
// receive is posted (SimGrid) would charge that wait to the first trip.
double pingpong(int peer, bool initiator, std::vector<char>& buf, uint64_t bytes, int iters) {
  char sync = 0;
  if (initiator) {
    const double s0 = MPI_Wtime();
    MPI_Send(&sync, 1, MPI_BYTE, peer, kPing, g_comm);
    MPI_Recv(&sync, 1, MPI_BYTE, peer, kPing, g_comm, MPI_STATUS_IGNORE);
    if (iters == 0) {  // told in a round trip of its own: the partner then waits for the first ping
      iters = trips_for(MPI_Wtime() - s0);
      MPI_Send(&iters, 1, MPI_INT, peer, kPing, g_comm);
      MPI_Recv(&sync, 1, MPI_BYTE, peer, kPing, g_comm, MPI_STATUS_IGNORE);
    }
  } else {
    MPI_Recv(&sync, 1, MPI_BYTE, peer, kPing, g_comm, MPI_STATUS_IGNORE);
    MPI_Send(&sync, 1, MPI_BYTE, peer, kPing, g_comm);
    if (iters == 0) {
      MPI_Recv(&iters, 1, MPI_INT, peer, kPing, g_comm, MPI_STATUS_IGNORE);
      MPI_Send(&sync, 1, MPI_BYTE, peer, kPing, g_comm);
    }
  }
  const double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (initiator) {
      MPI_Send(buf.data(), count_of(bytes), MPI_BYTE, peer, kPing, g_comm);
      MPI_Recv(buf.data(), count_of(bytes), MPI_BYTE, peer, kPing, g_comm, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf.data(), count_of(bytes), MPI_BYTE, peer, kPing, g_comm, MPI_STATUS_IGNORE);
      MPI_Send(buf.data(), count_of(bytes), MPI_BYTE, peer, kPing, g_comm);
    }
  }
  return (MPI_Wtime() - t0) / (2.0 * iters);
}

// A large message one way and a small answer (initiator's clock), after an
// untimed small round trip.
double large_then_small(int peer, bool initiator, std::vector<char>& buf, uint64_t large, uint64_t small) {
  pingpong(peer, initiator, buf, small, 1);
  const double t0 = MPI_Wtime();
  if (initiator) {
    MPI_Send(buf.data(), count_of(large), MPI_BYTE, peer, kPing, g_comm);
    MPI_Recv(buf.data(), count_of(small), MPI_BYTE, peer, kPing, g_comm, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(buf.data(), count_of(large), MPI_BYTE, peer, kPing, g_comm, MPI_STATUS_IGNORE);
    MPI_Send(buf.data(), count_of(small), MPI_BYTE, peer, kPing, g_comm);
  }
  return MPI_Wtime() - t0;
}

// Round-robin tournament (circle method) over n players: the partner of
// `player` in `round` (0 … rounds(n)-1), or -1 (a bye when n is odd).
int rounds_of(int n) { return n % 2 ? n : n - 1; }
int partner(int player, int round, int n) {
  const int m = n % 2 ? n + 1 : n;  // with a dummy player m-1 when n is odd
  int q;
  if (player == m - 1) q = round;
  else if (player == round) q = m - 1;
  else q = ((2 * round - player) % (m - 1) + (m - 1)) % (m - 1);
  return q >= n ? -1 : q;
}

Hosts find_hosts() {
  MPI_Comm node;
  MPI_Comm_split_type(g_comm, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
  int node_rank = 0;
  MPI_Comm_rank(node, &node_rank);
  int leader = g_rank;
  MPI_Bcast(&leader, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  std::vector<int> leaders(static_cast<size_t>(g_size));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, g_comm);
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(size_t(g_size) * (MPI_MAX_PROCESSOR_NAME + 1));
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, g_comm);
  Hosts h;
  h.host_of.assign(size_t(g_size), -1);
  for (int r = 0; r < g_size; ++r) {
    const int l = leaders[size_t(r)];
    if (h.host_of[size_t(l)] < 0) {
      h.host_of[size_t(l)] = h.n();
      std::string nm(&all[size_t(l) * (MPI_MAX_PROCESSOR_NAME + 1)]);
      if (nm.empty()) nm = "host" + std::to_string(h.n());
      // Two shared-memory domains of one name (containers): keep them apart.
      for (const std::string& other : h.names)
        if (other == nm) nm += "#" + std::to_string(h.n());
      h.names.push_back(nm);
      h.ranks.emplace_back();
    }
    h.host_of[size_t(r)] = h.host_of[size_t(l)];
    h.ranks[size_t(h.host_of[size_t(r)])].push_back(r);
  }
  h.mine = h.host_of[size_t(g_rank)];
  return h;
}

// The host pairs in measuring order: round by round (each host in at most
// one pair per round), the lower host first.
std::vector<std::pair<int, int>> pair_order(int n) {
  std::vector<std::pair<int, int>> v;
  if (n < 2) return v;
  for (int r = 0; r < rounds_of(n); ++r)
    for (int a = 0; a < n; ++a) {
      int b = partner(a, r, n);
      if (b > a) v.emplace_back(a, b);
    }
  return v;
}

std::vector<double> reduce_to_root(std::vector<double> v) {
  std::vector<double> out(v.size(), 0.0);
  MPI_Reduce(v.data(), out.data(), int(v.size()), MPI_DOUBLE, MPI_SUM, 0, g_comm);
  return out;
}

}  // namespace hetcoll::probe
