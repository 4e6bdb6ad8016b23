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
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "exec/reduce_kernels.hpp"
#include "model/fit.hpp"
#include "model/profile.hpp"
#include "model/profile_model.hpp"
#include "model/declared_topology.hpp"
#include "model/racks.hpp"
#include "measure/program_args.hpp"
#include "model/subnets.hpp"

#ifndef HETCOLL_VERSION_STRING
#define HETCOLL_VERSION_STRING "unknown"
#endif

using namespace hetcoll;

namespace {

struct Options {
  std::string out = "hetcoll-profile.json";
  double budget = 0;  // s, 0: none
  bool sequential = false;
  int repeats = 5;
  double threshold = kEcoThreshold;
  uint64_t small = 8, large = uint64_t(256) << 10;
  int lambda_k = 4;
  uint64_t lambda_max = uint64_t(4) << 20;
  bool lambda = true;
  bool progress = true;
  std::string topology;  // --topology FILE (topology.conf's form), empty: none
  std::string command;
};

MPI_Comm g_comm;
int g_rank = 0, g_size = 1;
double g_start = 0;

enum Tag : int { kPing = 1, kToken, kData, kDone, kLambda, kLambdaBack, kStream, kStop };

[[noreturn]] void usage_error(const std::string& msg) { program::fail(msg); }

double parse_seconds(const std::string& v) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  std::string unit = end ? end : "";
  if (unit == "m" || unit == "min") x *= 60;
  else if (unit == "ms") x *= 1e-3;
  else if (!unit.empty() && unit != "s") usage_error("--budget '" + v + "': a number of seconds (60, 60s, 2m)");
  if (!(x >= 0) || !std::isfinite(x)) usage_error("--budget '" + v + "' is not a duration");
  return x;
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) usage_error(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" || a == "--output") o.out = value(i);
    else if (a == "--budget") o.budget = parse_seconds(value(i));
    else if (a == "--sequential") o.sequential = true;
    else if (a == "--repeats") {
      o.repeats = program::parse_int(value(i), "--repeats", 1, 1000);
    } else if (a == "--threshold") {
      o.threshold = program::parse_real(value(i), "--threshold", 0, 10, "0 to 10 (ECO: 0.2)");
    } else if (a == "--large") {
      o.large = program::parse_size(value(i), "--large", uint64_t(1) << 30, 1024);  // the bandwidth is timed on it
    } else if (a == "--lambda-max") o.lambda_max = program::parse_size(value(i), "--lambda-max", uint64_t(1) << 30);
    else if (a == "--lambda-k") {
      o.lambda_k = program::parse_int(value(i), "--lambda-k", 2, 64);
    } else if (a == "--no-lambda") o.lambda = false;
    else if (a == "--no-progress") o.progress = false;
    else if (a == "--topology") o.topology = value(i);
    else if (a == "-h" || a == "--help") {
      if (g_rank == 0)
        std::printf("usage: hetcoll-probe [-o FILE] [--budget 60s] [--sequential] [--repeats N] [--threshold 0.2]\n"
                    "                     [--large 256k] [--lambda-k 4] [--lambda-max 4M] [--no-lambda] [--no-progress]\n"
                    "                     [--topology FILE] [--check]\n");
      program::done();
    } else if (a == "--check") {
    } else usage_error("unknown argument '" + a + "' (--help lists them)");
  }
  return o;
}

double elapsed() { return MPI_Wtime() - g_start; }

// Rank 0's progress line on stderr: a bar on a terminal, a line per phase otherwise.
class Progress {
 public:
  explicit Progress(bool on) : on_(on && g_rank == 0), tty_(isatty(2)) {}
  void phase(const std::string& name, double from, double to) {
    const double now = elapsed();
    if (!name_.empty() && name_ != name) {  // the phase just ended
      if (!times.empty() && times.back().first == name_) times.back().second += now - since_;
      else times.emplace_back(name_, now - since_);
    }
    if (name_ != name) since_ = now;
    name_ = name, from_ = from, to_ = to;
    if (on_ && !tty_ && !name.empty()) std::fprintf(stderr, "hetcoll-probe: %-9s (%.1f s)\n", name.c_str(), elapsed());
    update(0);
  }
  void update(double f) {
    if (!on_ || !tty_) return;
    double t = from_ + (to_ - from_) * std::clamp(f, 0.0, 1.0);
    int filled = int(t * 30 + 0.5);
    std::fprintf(stderr, "\rprobe [%s%s] %3d%% %-9s %6.1f s", std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(30 - filled), '.').c_str(), int(t * 100 + 0.5), name_.c_str(), elapsed());
    std::fflush(stderr);
  }
  void done() {
    phase("", 1, 1);
    if (on_ && tty_) std::fprintf(stderr, "\n");
  }
  std::vector<std::pair<std::string, double>> times;  // seconds per phase, in order

 private:
  bool on_, tty_;
  std::string name_;
  double from_ = 0, to_ = 1, since_ = 0;
};

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

int count_of(uint64_t bytes) { return int(bytes); }  // sizes are at most 1 GiB

// Rounds trips of a small message: enough of them to take ~200 us (the
// clock's grain and jitter), 1 to 16, from the untimed first trip.
int trips_for(double rtt) { return int(std::clamp(200e-6 / std::max(rtt, 1e-9), 1.0, 16.0)); }

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

struct Hosts {
  std::vector<std::string> names;            // per host
  std::vector<std::vector<int>> ranks;       // per host, ascending; [0] leads
  std::vector<int> host_of;                  // per rank
  int mine = 0;                              // this rank's host
  bool leader() const { return ranks[size_t(mine)][0] == g_rank; }
  int n() const { return int(names.size()); }
};

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

// Two large messages at once, in opposite directions through the links of
// the class of hosts a and b: a → b and, between subnets, b2 → a2 (b2 another
// host of b's subnet, a2 another of a's; a subnet's one host itself);
// inside a subnet, c → a (c a third host). Never b → a (0: not measured,
// where there is no other pair). Other pairs, as a
// collective's opposite flows mostly are: MPI over TCP carries one pair's two
// directions on one connection, and Open MPI then often moves them one after
// the other. a starts the second sender with a small message, then sends;
// the receivers answer a with a small message when their message is in.
// a's time (0 elsewhere): one one-way large time and about a small latency
// when the links carry both directions at full rate, about twice the wire
// time when the directions share them. Every rank calls it (a barrier first).
// The second flow of both_ways for the pair a → b: inside a subnet, into
// a from the host of a's subnet (not b) whose pair with a moved fastest
// (a slow interface on the second flow would read as a path that takes
// turns: 125 MB/s both ways against 1.26 GB/s one way); across, from a
// host of b's subnet (not b) into a host of a's (not a), the fastest
// pairs again. Rank 0's choice (rate: the pairs' one-way rates, per pair
// of hosts); {b, a} where there is none.
std::pair<int, int> second_flow(int H, int a, int b, const std::vector<int>& subnet_of, const std::vector<double>& rate) {
  auto fastest = [&](int host, int peer, int not1, int not2) {  // the fastest partner of peer in host's subnet
    int best = -1;
    for (int x = 0; x < H; ++x)
      if (x != not1 && x != not2 && subnet_of[size_t(x)] == subnet_of[size_t(host)] &&
          (best < 0 || rate[size_t(x) * size_t(H) + size_t(peer)] > rate[size_t(best) * size_t(H) + size_t(peer)]))
        best = x;
    return best;
  };
  int s2, d2;
  if (subnet_of[size_t(a)] != subnet_of[size_t(b)]) {
    d2 = fastest(a, b, a, a);
    s2 = d2 >= 0 ? fastest(b, d2, b, b) : -1;
    if (s2 < 0) s2 = b;
    if (d2 < 0) d2 = a;
  } else {
    s2 = fastest(a, a, a, b), d2 = a;
    if (s2 < 0) s2 = b;
  }
  return {s2, d2};
}

double both_ways(const Hosts& h, int a, int b, int s2, int d2, std::vector<char>& out, std::vector<char>& in,
                 uint64_t large, uint64_t small) {
  // The pair's own reverse direction would measure the connection, not
  // the links: not measured (0).
  if (s2 == b && d2 == a) return 0;
  auto leader = [&](int host) { return h.ranks[size_t(host)][0]; };
  const int ra = leader(a), rb = leader(b), rs = leader(s2), rd = leader(d2);
  std::vector<int> others;  // the ranks a pings first, once each
  for (int r : {rb, rs, rd})
    if (r != ra && std::find(others.begin(), others.end(), r) == others.end()) others.push_back(r);
  quiet_barrier();
  const int me = g_rank;
  if (me == ra) {
    for (int r : others) pingpong(r, true, out, small, 1);  // every end in place
    const double t0 = MPI_Wtime();
    MPI_Request rq[3];
    int n = 0;
    MPI_Isend(out.data(), 1, MPI_BYTE, rs, kData, g_comm, &rq[n++]);  // go
    MPI_Isend(out.data(), count_of(large), MPI_BYTE, rb, kData, g_comm, &rq[n++]);
    if (rd == ra) MPI_Irecv(in.data(), count_of(large), MPI_BYTE, rs, kData, g_comm, &rq[n++]);
    MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
    MPI_Recv(in.data(), count_of(small), MPI_BYTE, rb, kDone, g_comm, MPI_STATUS_IGNORE);
    if (rd != ra) MPI_Recv(in.data(), count_of(small), MPI_BYTE, rd, kDone, g_comm, MPI_STATUS_IGNORE);
    return MPI_Wtime() - t0;
  }
  if (std::find(others.begin(), others.end(), me) == others.end()) return 0;
  pingpong(ra, false, out, small, 1);
  // rs's go, then rs's send and the receives of whichever roles this rank has.
  if (me == rs) MPI_Recv(in.data(), 1, MPI_BYTE, ra, kData, g_comm, MPI_STATUS_IGNORE);
  MPI_Request rq[3];
  int n = 0;
  if (me == rs) MPI_Isend(out.data(), count_of(large), MPI_BYTE, rd, kData, g_comm, &rq[n++]);
  if (me == rb) MPI_Irecv(in.data(), count_of(large), MPI_BYTE, ra, kData, g_comm, &rq[n++]);
  if (me == rd) MPI_Irecv(in.data(), count_of(large), MPI_BYTE, rs, kData, g_comm, &rq[n++]);
  MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
  if (me == rb || me == rd) MPI_Send(out.data(), count_of(small), MPI_BYTE, ra, kDone, g_comm);
  return 0;
}

// One pair both ways at once: a and b (their hosts' first ranks) each post
// the receive of the other's large message — receives before sends, the
// order in which hetcoll's executor posts a schedule's messages — then a
// pings b, b answers and sends, and a sends once the answer is in: b's
// message leaves a latency before a's, as a schedule's two directions
// rarely leave together. b answers a with a small message once its receive
// is in. a's time from its ping (0 elsewhere): four small latencies and
// about one large message's time where the pair's two directions move at
// once; about two where they take turns (MPI over TCP: one connection per
// pair of ranks; Open MPI's go-ahead for the later direction's rendezvous
// travels behind the earlier direction's bytes). On the emulated cluster
// started so, pairs between subnets took turns in 9 of 9 repeats at 1 MiB;
// started by one message from a (b a latency late instead), 0 to 2 of 9;
// after a barrier, 0 to 2 of 9. Every rank calls it (a barrier first).
double same_pair(const Hosts& h, int a, int b, std::vector<char>& out, std::vector<char>& in, uint64_t large,
                 uint64_t small) {
  const int ra = h.ranks[size_t(a)][0], rb = h.ranks[size_t(b)][0];
  quiet_barrier();
  const int me = g_rank;
  if (me != ra && me != rb) return 0;
  const int peer = me == ra ? rb : ra;
  pingpong(peer, me == ra, out, small, 1);  // both ends in place
  std::vector<char> note(size_t(std::max<uint64_t>(small, 1)));  // the go and the answer
  MPI_Request rq[2];
  MPI_Irecv(in.data(), count_of(large), MPI_BYTE, peer, kData, g_comm, &rq[0]);
  double t0 = 0;
  if (me == ra) {
    t0 = MPI_Wtime();
    MPI_Send(note.data(), 1, MPI_BYTE, rb, kToken, g_comm);
    MPI_Recv(note.data(), 1, MPI_BYTE, rb, kToken, g_comm, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(note.data(), 1, MPI_BYTE, ra, kToken, g_comm, MPI_STATUS_IGNORE);
    MPI_Send(note.data(), 1, MPI_BYTE, ra, kToken, g_comm);
  }
  MPI_Isend(out.data(), count_of(large), MPI_BYTE, peer, kData, g_comm, &rq[1]);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  if (me == rb) {
    MPI_Send(note.data(), count_of(small), MPI_BYTE, ra, kDone, g_comm);
    MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
    return 0;
  }
  MPI_Recv(note.data(), count_of(small), MPI_BYTE, rb, kDone, g_comm, MPI_STATUS_IGNORE);
  const double t = MPI_Wtime() - t0;
  MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
  return t;
}

struct PairData {
  // n×n; filled at the initiator's row, then reduced to rank 0.
  std::vector<double> small_min, small_med, large_min, large_med;
};

std::vector<double> reduce_to_root(std::vector<double> v) {
  std::vector<double> out(v.size(), 0.0);
  MPI_Reduce(v.data(), out.data(), int(v.size()), MPI_DOUBLE, MPI_SUM, 0, g_comm);
  return out;
}

}  // namespace

namespace {

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

// A class's bandwidth: the median over its pairs whose large message took
// longer than the small one (the others, noise on a loaded machine, say
// nothing about it); none such: the class is named in `unmeasured` and no
// profile is written.
double bandwidth_of(std::vector<double> bw, const std::string& name, std::string& unmeasured) {
  bw.erase(std::remove_if(bw.begin(), bw.end(), [](double x) { return !(x > 0); }), bw.end());
  if (!bw.empty()) return median(bw);
  unmeasured += (unmeasured.empty() ? "" : ", ") + name;
  return 1.0;
}

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
  void pairs();
  void subnets();
  void alone_pairs();
  void backplane();
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
  void racks();
  std::vector<RackProfile> pods(const std::vector<std::vector<int>>& rack, const std::vector<int>& subnet_of_rack,
                                uint64_t bytes);
  void subnet_links();
  bool racks_in_order(const std::vector<int>& order_of_hosts, double& took);
  void declared();
  void hold_declared(const DeclaredTopology& t, const DeclaredLayout& lay, const std::vector<RackProfile>& links,
                     const std::vector<double>& ratio);
  void sharing();
  double far_message(int r, int n, int f, bool stream, uint64_t bytes);
  void overheads();
  void shared_memory();
  void kernels();
  void lambda_experiments();
  int write_profile();
  void interfaces(Profile& p);
  void host_rows(Profile& p);
  void pair_classes(Profile& p, std::string& unmeasured);
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

int Probe::run() {
  bar.phase("hosts", 0, 0.02);
  hosts = find_hosts();
  H = hosts.n();
  HH = size_t(H) * size_t(H);
  buf.assign(std::max<uint64_t>(large, 4096) + 64, 0);
  buf2.assign(buf.size(), 0);
  order = pair_order(H);
  hostv.assign(size_t(H) * kHostFields, 0.0);
  shm.assign(size_t(H) * 2, 0.0);
  pairs();
  subnets();
  alone_pairs();
  backplane();
  racks();
  declared();
  subnet_links();
  sharing();
  overheads();
  shared_memory();
  kernels();
  lambda_experiments();
  probe_seconds = elapsed();
  bar.done();
  int rc = g_rank == 0 ? write_profile() : 0;
  MPI_Bcast(&rc, 1, MPI_INT, 0, g_comm);
  return rc;
}

void Probe::pairs() {
  // 2. Pairs: latency (every repeat), then bandwidth (every repeat), each
  // phase cut short by the budget after its first repeat.
  std::vector<std::vector<double>> small_t(HH), large_t(HH);  // this leader's rows
  repeats_done = opt.repeats;
  for (int big = 0; big < 2; ++big) {
    // Bandwidth varies less than small-message latency: at most 3 repeats.
    if (big) repeats_done = std::min(repeats_done, 3);
    for (int rep = 0; rep < repeats_done; ++rep) {
      bar.phase(big ? "bandwidth" : "latency", 0.02 + (big ? 0.12 : 0.0) + (big ? 0.28 : 0.12) * rep / repeats_done,
                0.02 + (big ? 0.12 : 0.0) + (big ? 0.28 : 0.12) * (rep + 1) / repeats_done);
      auto measure = [&](int peer, bool init, int a, int b) {
        const size_t k = size_t(a) * size_t(H) + size_t(b);
        if (!big) {
          const double t = pingpong(peer, init, buf, opt.small, 0);
          if (init) small_t[k].push_back(t);
        } else {
          // One way large, the answer small: the large message's one-way
          // time is the total less the small one's (measured before).
          const double t = large_then_small(peer, init, buf, large, opt.small);
          if (init) large_t[k].push_back(std::max(0.0, t - *std::min_element(small_t[k].begin(), small_t[k].end())));
        }
      };
      if (opt.sequential) {
        one_pair_at_a_time(hosts, order, measure);
        quiet_barrier();
      } else {
        const double rep_start = elapsed();
        for (int r = 0; r < rounds_of(H) && H > 1; ++r) {
          quiet_barrier();
          if (hosts.leader()) {
            int q = partner(hosts.mine, r, H);
            if (q >= 0) measure(hosts.ranks[size_t(q)][0], hosts.mine < q, std::min(hosts.mine, q), std::max(hosts.mine, q));
          }
          bar.update(double(r + 1) / rounds_of(H));
          // After the first bandwidth round under a budget: if all rounds at
          // this size would take more than a quarter of the budget, start
          // over with a smaller message (a power of two, at least 16 KiB).
          if (big && rep == 0 && r == 0 && budget > 0 && rounds_of(H) > 1) {
            unsigned long long next = large;
            quiet_barrier();
            if (g_rank == 0) {
              const double projected = (elapsed() - rep_start) * rounds_of(H);
              while (next > (uint64_t(16) << 10) && projected * double(next) / double(large) > 0.25 * budget) next /= 2;
            }
            MPI_Bcast(&next, 1, MPI_UNSIGNED_LONG_LONG, 0, g_comm);
            if (next != large) {
              large = next;
              for (auto& v : large_t) v.clear();
              r = -1;  // the rounds again, at the new size
            }
          }
        }
        quiet_barrier();
      }
      // Latency may use a fifth of the budget, latency and bandwidth together half.
      if (rep + 1 < repeats_done && !within(big ? 0.5 : 0.2)) {
        exhausted |= rep + 1 < 3;  // fewer than three repeats: say so
        if (big) repeats_done = rep + 1;
        break;
      }
    }
  }
  for (auto* v : {&pd.small_min, &pd.small_med, &pd.large_min, &pd.large_med}) v->assign(HH, 0.0);
  for (size_t k = 0; k < HH; ++k) {
    if (small_t[k].empty()) continue;
    Measure s = summarize(small_t[k]), l = summarize(large_t[k]);
    const size_t i = k / size_t(H), j = k % size_t(H), kt = j * size_t(H) + i;
    pd.small_min[k] = pd.small_min[kt] = s.min;
    pd.small_med[k] = pd.small_med[kt] = s.median;
    pd.large_min[k] = pd.large_min[kt] = l.min;
    pd.large_med[k] = pd.large_med[kt] = l.median;
  }
  pd.small_min = reduce_to_root(pd.small_min);
  pd.small_med = reduce_to_root(pd.small_med);
  pd.large_min = reduce_to_root(pd.large_min);
  pd.large_med = reduce_to_root(pd.large_med);
}

void Probe::subnets() {
  // 3. Subnets (rank 0), known to every rank.
  bar.phase("subnets", 0.42, 0.44);
  subnet_of.assign(size_t(H), 0);
  if (g_rank == 0) {
    part = significant_subnets(pd.small_min, size_t(H), opt.threshold);
    subnet_of = part.subnet_of;
    ring = ring_order(pd.small_min, size_t(H), subnet_of);
  }
  MPI_Bcast(subnet_of.data(), H, MPI_INT, 0, g_comm);
  S = 0;
  for (int s : subnet_of) S = std::max(S, s + 1);
}

void Probe::alone_pairs() {
  // 4. Alone: one pair per class, by itself (concurrent mode).
  alone.assign(size_t(S) * size_t(S), 0.0);
  alone_both.assign(alone.size(), 0.0);
  alone_same.assign(alone.size(), 0.0);
  if (!opt.sequential && H > 1) {
    bar.phase("alone", 0.44, 0.5);
    std::vector<std::pair<int, int>> reps;
    std::vector<bool> seen(size_t(S) * size_t(S), false);
    for (auto [a, b] : order)
      if (!seen[size_t(class_of(a, b))]) seen[size_t(class_of(a, b))] = true, reps.emplace_back(a, b);
    // A repeat when the last one's cost still fits in 3/4 of the budget.
    std::vector<double> mine(alone.size(), 0.0), mine_both(alone.size(), 0.0), mine_same(alone.size(), 0.0);
    // One pair both ways moves 4x the bandwidth message (at most 16 MiB):
    // at 256 KiB a pair between two subnets of the emulated cluster took
    // turns in 1 of 9 repeats, at 1 MiB in 9 of 9.
    const uint64_t same_bytes = std::min<uint64_t>(large * 4, uint64_t(16) << 20);
    // Rank 0 picks each both-ways experiment's second flow from the pairs' rates.
    std::vector<int> second(2 * reps.size(), -1);
    if (g_rank == 0) {
      std::vector<double> rate(HH, 0.0);
      const double payload = double(large - opt.small);
      for (size_t k = 0; k < HH; ++k)
        if (pd.large_min[k] > pd.small_min[k]) rate[k] = payload / (pd.large_min[k] - pd.small_min[k]);
      for (size_t i = 0; i < reps.size(); ++i) {
        const auto [s2, d2] = second_flow(H, reps[i].first, reps[i].second, subnet_of, rate);
        second[2 * i] = s2, second[2 * i + 1] = d2;
      }
    }
    MPI_Bcast(second.data(), int(second.size()), MPI_INT, 0, g_comm);
    std::vector<char> same_out(static_cast<size_t>(same_bytes), 1), same_in(static_cast<size_t>(same_bytes));
    std::vector<std::vector<double>> ts(alone.size()), tb(alone.size()), tp(alone.size());
    double last = 0;
    for (int rep = 0; rep < std::min(repeats_done, 3); ++rep) {
      if (!affords(last, 0.75)) {
        exhausted = true;
        break;
      }
      const double t0 = elapsed();
      one_pair_at_a_time(hosts, reps, [&](int peer, bool init, int a, int b) {
        double t = pingpong(peer, init, buf, large, 1);
        if (init) ts[size_t(class_of(a, b))].push_back(t);
      });
      quiet_barrier();
      for (size_t i = 0; i < reps.size(); ++i) {
        const auto [a, b] = reps[i];
        const double tw = both_ways(hosts, a, b, second[2 * i], second[2 * i + 1], buf, buf2, large, opt.small);
        if (tw > 0) tb[size_t(class_of(a, b))].push_back(tw);
        const double tt = same_pair(hosts, a, b, same_out, same_in, same_bytes, opt.small);
        if (tt > 0) tp[size_t(class_of(a, b))].push_back(tt);
      }
      last = elapsed() - t0;
    }
    {
      for (size_t c = 0; c < ts.size(); ++c) {
        if (!ts[c].empty()) mine[c] = summarize(ts[c]).min;
        if (!tb[c].empty()) mine_both[c] = summarize(tb[c]).min;
        // The slowest repeat: whether the pair's directions take turns is
        // a race (on the emulated cluster 1 in 9 repeats or so moved both
        // at once even when started as same_pair starts them); once is
        // enough to show that the MPI does it.
        if (!tp[c].empty()) mine_same[c] = *std::max_element(tp[c].begin(), tp[c].end());
      }
      alone = reduce_to_root(mine);
      alone_both = reduce_to_root(mine_both);
      alone_same = reduce_to_root(mine_same);
      same_payload = double(same_bytes);
    }
  }
}

void Probe::backplane() {
  // 4b. Backplane (concurrent mode): every host at once sends a large
  // message (4x the bandwidth message) to the next host of its subnet on
  // the ring — a subnet of two hosts has one flow, of one host none. No
  // interface and no uplink carries two of these flows, so without a
  // capacity they all share each would move at its class's alone rate
  // (compared when the profile is assembled). The best of 3 repeats of the
  // aggregate: all the flows' bytes over the slowest flow's time (from a
  // barrier to its receiver's small answer, less that answer's latency).
  bp_to.assign(size_t(H), -1);
  const uint64_t bp_bytes = std::min<uint64_t>(large * 4, uint64_t(16) << 20);
  if (!opt.sequential && H > 1) {
    if (g_rank == 0) {
      for (int s = 0; s < S; ++s) {
        std::vector<int> hs;
        for (int h : ring.hosts)
          if (subnet_of[size_t(h)] == s) hs.push_back(h);
        if (hs.size() == 2) bp_to[size_t(hs[0])] = hs[1];
        if (hs.size() >= 3)
          for (size_t i = 0; i < hs.size(); ++i) bp_to[size_t(hs[i])] = hs[(i + 1) % hs.size()];
      }
    }
    MPI_Bcast(bp_to.data(), H, MPI_INT, 0, g_comm);
    for (int h = 0; h < H; ++h) bp_flows += bp_to[size_t(h)] >= 0;
    // Rank 0's estimate: the slowest flow's large message alone, scaled to
    // the size, 4x for sharing, 3 repeats.
    double slowest = 0;
    for (int h = 0; h < H && g_rank == 0; ++h)
      if (bp_to[size_t(h)] >= 0)
        slowest = std::max(slowest, pd.large_min[size_t(h) * size_t(H) + size_t(bp_to[size_t(h)])]);
    const double cost = 3 * (4 * slowest * double(bp_bytes) / double(large) + 0.01);
    if (bp_flows < 2) {
      bp_flows = 0;  // one flow shares nothing
    } else if (!affords(cost, 0.8)) {
      bp_flows = 0;
      exhausted = true;
    } else {
      bar.phase("backplane", 0.5, 0.5);
      std::vector<char> out(static_cast<size_t>(bp_bytes), 1), in(static_cast<size_t>(bp_bytes));
      int from = -1;
      for (int h = 0; h < H; ++h)
        if (bp_to[size_t(h)] == hosts.mine) from = h;
      const int to = bp_to[size_t(hosts.mine)];
      auto leader = [&](int host) { return hosts.ranks[size_t(host)][0]; };
      double best = 0;
      for (int rep = 0; rep < 3; ++rep) {
        quiet_barrier();
        MPI_Barrier(g_comm);  // a tight start; the ranks without a flow then sleep in the next one
        double mine = 0;
        if (hosts.leader() && (to >= 0 || from >= 0)) {
          const double t0 = MPI_Wtime();
          MPI_Request rq[2];
          int n = 0;
          if (to >= 0) MPI_Isend(out.data(), count_of(bp_bytes), MPI_BYTE, leader(to), kData, g_comm, &rq[n++]);
          if (from >= 0) MPI_Irecv(in.data(), count_of(bp_bytes), MPI_BYTE, leader(from), kData, g_comm, &rq[n++]);
          MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
          char ack = 0;
          if (from >= 0) MPI_Send(&ack, 1, MPI_BYTE, leader(from), kDone, g_comm);
          if (to >= 0) {
            MPI_Recv(&ack, 1, MPI_BYTE, leader(to), kDone, g_comm, MPI_STATUS_IGNORE);
            mine = MPI_Wtime() - t0;
          }
        }
        double slowest_flow = 0;
        MPI_Reduce(&mine, &slowest_flow, 1, MPI_DOUBLE, MPI_MAX, 0, g_comm);
        if (g_rank == 0) {
          double answer = 0;  // the slowest answer's latency, an upper bound on the one in slowest_flow
          for (int h = 0; h < H; ++h)
            if (bp_to[size_t(h)] >= 0) answer = std::max(answer, pd.small_min[size_t(h) * size_t(H) + size_t(bp_to[size_t(h)])]);
          if (slowest_flow > answer) best = std::max(best, double(bp_flows) * double(bp_bytes) / (slowest_flow - answer));
        }
      }
      quiet_barrier();
      bp_aggregate = best;
    }
  }
}

// Rank 0's estimate of one flow_rates experiment of `bytes` flows (its
// three repeats): each flow at a quarter of the slowest pair's rate, and
// 5 ms of barriers and answers a repeat (0 on the other ranks; the budget's
// decisions are rank 0's).
double Probe::flows_estimate(uint64_t bytes) const {
  double slowest = 0;
  for (size_t k = 0; k < pd.large_min.size() && g_rank == 0; ++k) slowest = std::max(slowest, pd.large_min[k]);
  return 3 * (4 * slowest * double(bytes) / double(large) + 0.005);
}

// Flows at once: every host h with to[h] >= 0 sends a message from its
// leader to to[h]'s (a host receives at most one), each receiver answering
// with a small message; a flow's rate its bytes over (the time from a
// barrier to the answer, less two one-way latencies of the pair). Three
// repeats: all flows `bytes` first; then twice each flow sized to its
// last rate (bytes times its rate over the fastest's, at least 1/16 of
// them), so that the flows end together and each moved at its share of
// what it crossed while all of them ran. Flows of equal bytes do not end
// together where a link gives flows of shorter round trips more (CM02,
// TCP): the first done leave the rest more, and rates summed say more than
// the link moved (5 flows out of a 25 MB/s link summed to 27.5). Per
// sender, the best of the two sized repeats. Rank 0 gets the rates (0
// where no flow); every rank calls it.
std::vector<double> Probe::flow_rates(const std::vector<int>& to, uint64_t bytes) {
  std::vector<int> from(size_t(H), -1);
  for (int h = 0; h < H; ++h)
    if (to[size_t(h)] >= 0) from[size_t(to[size_t(h)])] = h;
  std::vector<char> out(static_cast<size_t>(bytes), 1), in(static_cast<size_t>(bytes));
  auto leader = [&](int host) { return hosts.ranks[size_t(host)][0]; };
  std::vector<double> last(size_t(H), 0.0), best(size_t(H), 0.0), mine(static_cast<size_t>(H)), all(static_cast<size_t>(H));
  std::vector<unsigned long long> size(size_t(H), bytes);
  for (int rep = 0; rep < 3; ++rep) {
    if (rep > 0) {  // rank 0 sizes the flows to the last repeat's rates
      double fastest = 0;
      for (int h = 0; h < H && g_rank == 0; ++h) fastest = std::max(fastest, last[size_t(h)]);
      for (int h = 0; h < H && g_rank == 0; ++h)
        size[size_t(h)] = fastest > 0 && last[size_t(h)] > 0
                              ? std::clamp<unsigned long long>((unsigned long long)(double(bytes) * last[size_t(h)] / fastest),
                                                               std::max<uint64_t>(bytes / 16, 1), bytes)
                              : bytes;
      MPI_Bcast(size.data(), H, MPI_UNSIGNED_LONG_LONG, 0, g_comm);
    }
    std::fill(mine.begin(), mine.end(), 0.0);
    quiet_barrier();
    MPI_Barrier(g_comm);
    const int me = hosts.mine, t = to[size_t(me)], f = from[size_t(me)];
    if (hosts.leader() && (t >= 0 || f >= 0)) {
      // The answer leaves as soon as the receive is in (not after this
      // host's own send: a slow flow out would make the flow in look slow).
      const double t0 = MPI_Wtime();
      MPI_Request send = MPI_REQUEST_NULL, recv = MPI_REQUEST_NULL;
      if (f >= 0) MPI_Irecv(in.data(), count_of(size[size_t(f)]), MPI_BYTE, leader(f), kData, g_comm, &recv);
      if (t >= 0) MPI_Isend(out.data(), count_of(size[size_t(me)]), MPI_BYTE, leader(t), kData, g_comm, &send);
      char ack = 0;
      MPI_Request answer = MPI_REQUEST_NULL;
      if (t >= 0) MPI_Irecv(&ack, 1, MPI_BYTE, leader(t), kDone, g_comm, &answer);
      // Whichever comes first: the flow in (answer it), the answer to the
      // flow out (its time).
      MPI_Request pending[2] = {recv, answer};
      char done = 0;
      for (int left = (f >= 0) + (t >= 0); left > 0; --left) {
        int which = MPI_UNDEFINED;
        MPI_Waitany(2, pending, &which, MPI_STATUS_IGNORE);
        if (which == 0) MPI_Send(&done, 1, MPI_BYTE, leader(f), kDone, g_comm);
        if (which == 1) mine[size_t(me)] = MPI_Wtime() - t0;
      }
      MPI_Wait(&send, MPI_STATUS_IGNORE);
    }
    MPI_Reduce(mine.data(), all.data(), H, MPI_DOUBLE, MPI_MAX, 0, g_comm);
    if (g_rank == 0)
      for (int h = 0; h < H; ++h) {
        last[size_t(h)] = 0;
        if (to[size_t(h)] < 0 || !(all[size_t(h)] > 0)) continue;
        // Less the way there and the answer's way back.
        const double answer = pd.small_min[size_t(h) * size_t(H) + size_t(to[size_t(h)])];
        const double took = all[size_t(h)] - 2 * answer;
        if (took > 0) last[size_t(h)] = double(size[size_t(h)]) / took;
        if (rep == 2) best[size_t(h)] = last[size_t(h)];
      }
  }
  quiet_barrier();
  return best;
}

// Rank 0: per host, the fastest its interface was seen to move — its best
// flow in the racks' shifts, or with any partner in the pairs' rounds
// (pairs share no interface).
std::vector<double> Probe::interface_rates() const {
  std::vector<double> nic(size_t(H), 0.0);
  const double payload = double(large - opt.small);
  for (int h = 0; h < H; ++h) {
    nic[size_t(h)] = h < int(rack_nic.size()) ? rack_nic[size_t(h)] : 0.0;
    for (int o = 0; o < H && pd.large_min.size() == HH; ++o) {
      const size_t k = size_t(h) * size_t(H) + size_t(o);
      if (o != h && pd.large_min[k] > pd.small_min[k])
        nic[size_t(h)] = std::max(nic[size_t(h)], payload / (pd.large_min[k] - pd.small_min[k]));
    }
  }
  return nic;
}

// Groups `which` of g one after another, each to all the other groups of
// its vote at once and all of those to it (its hosts to the others' hosts
// interleaved, one group's in turn, nearest first; as many flows as it has hosts): a link
// out faster than any one group's link in (5 Gbit/s out, 1 Gbit/s into
// each other subnet; a rack of 2.5 Gbit/s beside one of 2) is filled only
// by flows into several. A link gets the sums through it where they are
// more than it had; where every flow moved at its ends' rate, at least its
// hosts' interfaces together (as in group_links). Every rank calls it with
// the same `which`; rank 0 changes `links`.
void Probe::fan_links(const GroupSet& g, const std::vector<int>& which, uint64_t bytes, std::vector<RackProfile>& links) {
  const std::vector<double> nic = g_rank == 0 ? interface_rates() : std::vector<double>(size_t(H), 0.0);
  auto all_free = [&](const std::vector<int>& to, const std::vector<double>& rate) {
    bool any = false;
    for (int h = 0; h < H; ++h) {
      if (to[size_t(h)] < 0) continue;
      const double ends = std::min(nic[size_t(h)], nic[size_t(to[size_t(h)])]);
      if (!(ends > 0) || rate[size_t(h)] < kRackSlow * ends) return false;
      any = true;
    }
    return any;
  };
  const int count = int(g.hosts.size());
  size_t widest = 0;
  for (const auto& m : g.hosts) widest = std::max(widest, m.size());
  for (int r : which) {
    // The other groups' hosts interleaved, the groups nearest in order
    // first, after and before it in turn (r+1, r-1, r+2, …): its neighbours,
    // often under the same switch above, beside groups under others, so
    // that a link of its own faster than the one above it shows (a rack of
    // 937.5 MB/s in a pod whose uplink moves 390: flows into its pod's
    // other rack and out of the pod at once).
    std::vector<int> near;
    for (int o = 1; 2 * o <= count + 1; ++o)
      for (int x : {(r + o) % count, (r - o + count) % count})
        if (x != r && std::find(near.begin(), near.end(), x) == near.end() && g.vote[size_t(x)] == g.vote[size_t(r)])
          near.push_back(x);
    std::vector<int> others;
    for (size_t q = 0; q < widest; ++q)
      for (int x : near)
        if (q < g.hosts[size_t(x)].size()) others.push_back(g.hosts[size_t(x)][q]);

    const auto& mine = g.hosts[size_t(r)];
    std::vector<int> out_to(size_t(H), -1), in_to(size_t(H), -1);
    for (size_t q = 0; q < mine.size() && q < others.size(); ++q) {
      out_to[size_t(mine[q])] = others[q];
      in_to[size_t(others[q])] = mine[q];
    }
    if (others.empty()) continue;  // (the same on every rank)
    const std::vector<double> ro = flow_rates(out_to, bytes), ri = flow_rates(in_to, bytes);
    if (g_rank != 0) continue;
    double fan_out = 0, fan_in = 0, hosts_sum = 0;
    for (int h = 0; h < H; ++h) fan_out += ro[size_t(h)], fan_in += ri[size_t(h)];
    for (int h : mine) hosts_sum += nic[size_t(h)];
    const bool out_free = all_free(out_to, ro), in_free = all_free(in_to, ri);
    RackProfile& l = links[size_t(r)];
    if (l.shared ? out_free && in_free : out_free) fan_out = std::max(fan_out, l.shared ? 2 * hosts_sum : hosts_sum);
    if (l.shared ? out_free && in_free : in_free) fan_in = std::max(fan_in, l.shared ? 2 * hosts_sum : hosts_sum);
    const bool more_out = fan_out > l.up.bandwidth, more_in = fan_in > (l.shared ? l.up : l.down).bandwidth;
    const char* at_least = out_free || in_free ? " (its flows at their hosts' rate: at least)" : "";
    if (l.shared) {
      if (more_out || more_in) {
        l.up.bandwidth = l.down.bandwidth = std::max(fan_out, fan_in);
        l.up.how = l.down.how = l.up.how + "; to and from all the others" + at_least;
      }
      continue;
    }
    if (more_out) l.up.bandwidth = fan_out, l.up.how += cat("; to all the others", out_free ? at_least : "");
    if (more_in) l.down.bandwidth = fan_in, l.down.how += cat("; from all the others", in_free ? at_least : "");
  }
}

// 4e. The subnets' links (concurrent mode, two subnets or more): the
// subnets as groups of group_links — every subnet's hosts to the next
// subnet's at once, and to the one before, and every host to another
// subnet's host — each subnet's link out and in, as its flows summed (or
// "at least" its hosts' interfaces where every flow moved at its ends'
// rate). The pairs' classes alone cannot tell a subnet's link: one pair
// across moves at its NIC where NICs are slower than the uplink (several
// flows fill it), a class is one rate for both directions (an uplink
// faster in than out) and one rate for both subnets. 3–5 experiments of
// at most H flows each, and with three subnets or more 2 per subnet (to
// all the others, from all the others).
void Probe::subnet_links() {
  if (opt.sequential || S < 2 || H < 2) return;
  const uint64_t bytes = std::min<uint64_t>(large * 16, uint64_t(16) << 20);
  std::vector<std::vector<int>> members(static_cast<size_t>(S));
  for (int h = 0; h < H; ++h) members[size_t(subnet_of[size_t(h)])].push_back(h);
  // group_links' 5 experiments, and 2 per subnet with three or more.
  if (!affords((5 + (S >= 3 ? 2 * S : 0)) * flows_estimate(bytes), 0.88)) {
    exhausted = true;
    return;
  }
  bar.phase("subnet links", 0.5, 0.5);
  GroupSet g;
  g.inside = false;  // inside a subnet: the pairs and the racks measured it
  g.symmetric = false;  // uplinks faster one way than the other
  for (int s = 0; s < S; ++s) {
    g.hosts.push_back(members[size_t(s)]);
    g.next.push_back((s + 1) % S);
    g.index.push_back(s);
    g.vote.push_back(0);  // one kind of link for all (as a subnet's racks): some measured out alone
  }
  std::vector<double> inside;
  std::vector<RackProfile> links = group_links(g, bytes, "subnets: subnet to next subnet ", inside);
  // With three subnets or more, each subnet to all the others and back.
  std::vector<int> which;
  for (int s = 0; S >= 3 && s < S; ++s) which.push_back(s);
  fan_links(g, which, bytes, links);
  if (g_rank != 0) return;
  for (int s = 0; s < S; ++s) links[size_t(s)].subnet = s;
  found_subnets = std::move(links);
}

// Names compared with their runs of digits as numbers: r2h9 < r2h10 < r10h0.
bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0, db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      size_t ie = i, je = j;
      while (ie < a.size() && std::isdigit(static_cast<unsigned char>(a[ie]))) ++ie;
      while (je < b.size() && std::isdigit(static_cast<unsigned char>(b[je]))) ++je;
      // Without leading zeros, the longer run is the larger number.
      size_t is = i, js = j;
      while (is + 1 < ie && a[is] == '0') ++is;
      while (js + 1 < je && b[js] == '0') ++js;
      if (ie - is != je - js) return ie - is < je - js;
      const int c = a.compare(is, ie - is, b, js, je - js);
      if (c != 0) return c < 0;
      i = ie, j = je;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i, ++j;
  }
  return a.size() - i < b.size() - j;
}

// 4d. Racks (concurrent mode): inside a subnet (hosts latency does not
// tell apart), the hosts whose messages leave through one shared link —
// a rack of a fat tree whose uplink is oversubscribed. Hosts are taken in
// the ring's order (nearest latency next: racks in runs where latency
// tells them apart at all; else the host order, a hostfile's; else by
// name, numbers by value).
//  1. Shifts: for k = 1, 2, 4, … below the subnet's size, every host i of
//     the subnet sends to host i + k (cyclically), all at once; where no
//     shift had slow and fast flows, the shifts between the last with none
//     slow and the first with all slow (at most 6 more). The rack edges
//     from the rates: model/racks.hpp.
//  2. Checks and capacities, the racks found as racks: inside every rack a
//     shift by one (every flow at its ends' rate, else the racks are
//     dropped); every rack j to rack j + 1 at once, position by position
//     (each rack's link out and in loaded); then only even racks to the
//     next (out alone): a rack's link is one for both ways where its
//     flows out moved 1.5x faster alone, and its capacity the rates
//     through it summed.
// log2(n) + 3 experiments of n flows per subnet: O(p log p) messages.
void Probe::racks() {
  if (opt.sequential || H < 4) return;
  // A subnet's hosts in the probe's ring order (nearest latency next: a
  // rack's hosts together where latency tells them apart at all); where
  // that finds no racks that hold, in the host order (a hostfile's,
  // usually by name: where latency is equal, its differences are noise
  // and the ring's order is theirs), then by name; the same on every rank.
  std::vector<std::vector<int>> orders;
  if (g_rank == 0 && ring.hosts.size() == size_t(H)) orders.push_back(ring.hosts);
  std::vector<int> by_host(static_cast<size_t>(H));
  for (int h = 0; h < H; ++h) by_host[size_t(h)] = h;
  if (orders.empty() || orders[0] != by_host) orders.push_back(by_host);
  // Then by name, numbers by value (r2h10 after r2h9): where a hostfile
  // interleaves or shuffles racks whose names say where they are.
  std::vector<int> by_name = by_host;
  std::stable_sort(by_name.begin(), by_name.end(),
                   [&](int a, int b) { return natural_less(hosts.names[size_t(a)], hosts.names[size_t(b)]); });
  if (g_rank == 0 && std::find(orders.begin(), orders.end(), by_name) == orders.end()) orders.push_back(by_name);
  int tries = int(orders.size());
  MPI_Bcast(&tries, 1, MPI_INT, 0, g_comm);
  orders.resize(size_t(tries), by_host);
  for (auto& o : orders) MPI_Bcast(o.data(), H, MPI_INT, 0, g_comm);
  double took = 0;  // the first order's time: the estimate for the next
  for (const auto& o : orders)
    if (racks_in_order(o, took)) return;
}

// Racks by bandwidth with the hosts in `order`: whether that is settled —
// racks found that hold (found_racks on rank 0), or no flow slowed at all —
// the same on every rank.
bool Probe::racks_in_order(const std::vector<int>& order_of_hosts, double& took) {
  std::vector<std::vector<int>> members(static_cast<size_t>(S));
  for (int h : order_of_hosts) members[size_t(subnet_of[size_t(h)])].push_back(h);
  int widest = 0;
  for (const auto& m : members) widest = std::max(widest, int(m.size()));
  if (widest < 4) return true;  // nothing to find
  // 16x the bandwidth message (at most 16 MiB): a flow's latencies (the
  // way there, a rendezvous, the answer) a few percent of its time even at
  // 100 Gbit/s, or flows of nearer pairs read as faster.
  const uint64_t bytes = std::min<uint64_t>(large * 16, uint64_t(16) << 20);
  // Rank 0's estimate: a shift's flows at a quarter of the slowest pair's
  // rate, 2 repeats, log2 + 4 experiments (and up to 6 between shifts).
  int experiments = 4;
  for (int k = 1; 2 * k <= widest; k *= 2) ++experiments;
  const double estimate = took > 0 ? 1.2 * took : experiments * flows_estimate(bytes);
  if (!affords(estimate, 0.85)) {
    exhausted = true;
    return true;
  }
  const double start = MPI_Wtime();
  struct Took {
    double& took;
    double start;
    ~Took() { took = MPI_Wtime() - start; }
  } timing{took, start};
  bar.phase("racks", 0.5, 0.5);
  ShiftRates sh;
  sh.members = members;
  for (int k = 1; 2 * k <= widest; k *= 2) {  // at most half a subnet (model/racks.cpp)
    sh.rates.push_back(flow_rates(shift_targets(members, H, k), bytes));
    sh.ks.push_back(k);
  }
  // Where no shift had slow and fast flows, the shifts between the last
  // with none slow and the first with all slow, halving (rank 0 decides).
  for (int more = 0; more < 6; ++more) {
    int k = g_rank == 0 ? next_shift(sh, H) : 0;
    MPI_Bcast(&k, 1, MPI_INT, 0, g_comm);
    if (k == 0) break;
    sh.rates.push_back(flow_rates(shift_targets(members, H, k), bytes));
    sh.ks.push_back(k);
  }
  // Rank 0: the rack edges per subnet, the racks between them.
  int racks_count = 0;
  std::vector<int> rack_of(size_t(H), -1);  // per host, a rack number (global), -1: none
  if (g_rank == 0) rack_of = racks_from_shifts(sh, H, racks_count);
  if (g_rank == 0) {
    const std::vector<double> best = best_rates(sh, H);
    rack_nic.resize(size_t(H), 0.0);
    for (int h = 0; h < H; ++h) rack_nic[size_t(h)] = std::max(rack_nic[size_t(h)], best[size_t(h)]);
  }
  // No racks and no slow flow: no structure another order would show.
  int slowed = g_rank == 0 && any_slow_flow(sh, H);
  MPI_Bcast(&slowed, 1, MPI_INT, 0, g_comm);
  MPI_Bcast(&racks_count, 1, MPI_INT, 0, g_comm);
  if (racks_count == 0) return !slowed;
  MPI_Bcast(rack_of.data(), H, MPI_INT, 0, g_comm);
  // The racks' hosts in host order, and each rack's next in its subnet.
  std::vector<std::vector<int>> rack(static_cast<size_t>(racks_count));
  std::vector<int> subnet_of_rack(size_t(racks_count), -1);
  for (int h = 0; h < H; ++h)
    if (rack_of[size_t(h)] >= 0) {
      rack[size_t(rack_of[size_t(h)])].push_back(h);
      subnet_of_rack[size_t(rack_of[size_t(h)])] = subnet_of[size_t(h)];
    }
  std::vector<int> next(size_t(racks_count), -1), index_in_subnet(size_t(racks_count), 0);
  for (int s = 0; s < S; ++s) {
    std::vector<int> rs;
    for (int r = 0; r < racks_count; ++r)
      if (subnet_of_rack[size_t(r)] == s) rs.push_back(r);
    for (size_t j = 0; j < rs.size(); ++j) {
      next[size_t(rs[j])] = rs[(j + 1) % rs.size()];
      index_in_subnet[size_t(rs[j])] = int(j);
    }
  }
  GroupSet g;
  g.hosts = rack;
  g.next = next;
  g.index = index_in_subnet;
  g.vote = subnet_of_rack;
  std::vector<double> inside_ratio;
  std::vector<RackProfile> links =
      group_links(g, bytes, cat("racks by bandwidth: ", sh.ks.size(), " shifts, rack to next rack "), inside_ratio);
  // Every rack of a subnet of three racks or more to all the others and
  // back, where the budget affords it: a rack's link faster than the next
  // rack's reads as the next's (2.5 Gbit/s beside 2).
  std::vector<int> which;
  for (int r = 0; r < racks_count; ++r)
    if (std::count(subnet_of_rack.begin(), subnet_of_rack.end(), subnet_of_rack[size_t(r)]) >= 3) which.push_back(r);
  if (!which.empty() && affords(double(which.size()) * 2 * flows_estimate(bytes), 0.85))
    fan_links(g, which, bytes, links);
  // Inside a rack every flow at its ends' rate, or the racks are not racks.
  int held = 1;
  for (int r = 0; r < racks_count && g_rank == 0 && held; ++r)
    if (inside_ratio[size_t(r)] < kRackSlow) {
      std::fprintf(stderr, "hetcoll-probe: racks by bandwidth dropped: inside the rack of %s … %s (%zu hosts) a flow moved %.0f %% "
                   "of the best inside one\n", hosts.names[size_t(rack[size_t(r)].front())].c_str(),
                   hosts.names[size_t(rack[size_t(r)].back())].c_str(), rack[size_t(r)].size(), 100 * inside_ratio[size_t(r)]);
      held = 0;
    }
  // Racks of one host each are no structure (nothing inside to check):
  // the order's noise cut every edge.
  if (g_rank == 0 && held && std::all_of(rack.begin(), rack.end(), [](const auto& r) { return r.size() == 1; })) {
    std::fprintf(stderr, "hetcoll-probe: racks by bandwidth dropped: %d racks of one host each\n", racks_count);
    held = 0;
  }
  MPI_Bcast(&held, 1, MPI_INT, 0, g_comm);
  if (!held) return false;
  std::vector<RackProfile> pod_links = pods(rack, subnet_of_rack, bytes);
  if (g_rank != 0) return true;
  for (int r = 0; r < racks_count; ++r) links[size_t(r)].subnet = subnet_of_rack[size_t(r)];
  // Pods first, each rack after them within its pod (network_from_classes
  // nests a rack under one listed before it).
  for (RackProfile& l : links) {
    for (size_t q = 0; q < pod_links.size(); ++q)
      if (std::includes(pod_links[q].hosts.begin(), pod_links[q].hosts.end(), l.hosts.begin(), l.hosts.end()))
        l.within = int(q);
  }
  found_racks = std::move(pod_links);
  found_racks.insert(found_racks.end(), links.begin(), links.end());
  return true;
}

// Pods by bandwidth (concurrent mode, after racks that held): the racks of
// a subnet as the hosts were — for k = 1, 2, 4, … below half their count,
// every rack j sends to rack j + k at once (host q to host q), a rack's
// rate the rates of its flows summed; where racks share a link above them
// (a pod of a 3-level fat tree whose uplink is oversubscribed), the racks
// whose flows cross a pod's edge are slow (model/racks.hpp, racks as
// hosts). Pods of one rack each are none. Each pod's links then as the
// racks' (group_links, and to and from all the others with 3 pods or
// more). Every rank calls it; rank 0 gets the pods (hosts ascending,
// within -1), none where there are none.
std::vector<RackProfile> Probe::pods(const std::vector<std::vector<int>>& rack, const std::vector<int>& subnet_of_rack,
                                     uint64_t bytes) {
  const int R = int(rack.size());
  std::vector<std::vector<int>> members(static_cast<size_t>(S));  // per subnet, its racks in order
  for (int r = 0; r < R; ++r) members[size_t(subnet_of_rack[size_t(r)])].push_back(r);
  int widest = 0;
  for (const auto& m : members) widest = std::max(widest, int(m.size()));
  if (widest < 4) return {};
  int experiments = 6 + 5 + 2 * widest;  // shifts (and up to 6 more), group_links, fans
  for (int k = 1; 2 * k <= widest; k *= 2) ++experiments;
  if (!affords(experiments * flows_estimate(bytes), 0.85)) {
    exhausted = true;
    return {};
  }
  bar.phase("pods", 0.5, 0.5);
  // A shift of the racks: the flows of the hosts, and per rack the rates
  // of its flows summed.
  auto rack_shift = [&](int k) {
    const std::vector<int> rack_to = shift_targets(members, R, k);
    std::vector<int> to(size_t(H), -1);
    for (int r = 0; r < R; ++r)
      if (rack_to[size_t(r)] >= 0)
        for (size_t q = 0; q < std::min(rack[size_t(r)].size(), rack[size_t(rack_to[size_t(r)])].size()); ++q)
          to[size_t(rack[size_t(r)][q])] = rack[size_t(rack_to[size_t(r)])][q];
    const std::vector<double> rate = flow_rates(to, bytes);
    std::vector<double> per_rack(size_t(R), 0.0);
    for (int r = 0; r < R; ++r)
      for (int h : rack[size_t(r)])
        if (to[size_t(h)] >= 0) per_rack[size_t(r)] += rate[size_t(h)];
    return per_rack;
  };
  ShiftRates sh;
  sh.members = members;
  for (int k = 1; 2 * k <= widest; k *= 2) sh.rates.push_back(rack_shift(k)), sh.ks.push_back(k);
  for (int more = 0; more < 6; ++more) {
    int k = g_rank == 0 ? next_shift(sh, R) : 0;
    MPI_Bcast(&k, 1, MPI_INT, 0, g_comm);
    if (k == 0) break;
    sh.rates.push_back(rack_shift(k)), sh.ks.push_back(k);
  }
  int count = 0;
  std::vector<int> pod_of(size_t(R), -1);
  if (g_rank == 0) pod_of = racks_from_shifts(sh, R, count);
  // Pods of one rack each are no structure; a pod of every rack of its
  // subnet neither.
  if (g_rank == 0) {
    std::vector<int> size(size_t(count), 0);
    for (int r = 0; r < R; ++r)
      if (pod_of[size_t(r)] >= 0) ++size[size_t(pod_of[size_t(r)])];
    if (std::all_of(size.begin(), size.end(), [](int n) { return n <= 1; })) count = 0;
  }
  MPI_Bcast(&count, 1, MPI_INT, 0, g_comm);
  if (count == 0) return {};
  MPI_Bcast(pod_of.data(), R, MPI_INT, 0, g_comm);
  GroupSet g;
  g.inside = false;  // inside a pod: its racks' links measured
  std::vector<int> subnet_of_pod(size_t(count), -1);
  g.hosts.assign(size_t(count), {});
  for (int r = 0; r < R; ++r)
    if (pod_of[size_t(r)] >= 0) {
      auto& hs = g.hosts[size_t(pod_of[size_t(r)])];
      hs.insert(hs.end(), rack[size_t(r)].begin(), rack[size_t(r)].end());
      subnet_of_pod[size_t(pod_of[size_t(r)])] = subnet_of_rack[size_t(r)];
    }
  for (auto& hs : g.hosts) std::sort(hs.begin(), hs.end());
  g.next.assign(size_t(count), -1);
  g.index.assign(size_t(count), 0);
  for (int sn = 0; sn < S; ++sn) {
    std::vector<int> ps;
    for (int q = 0; q < count; ++q)
      if (subnet_of_pod[size_t(q)] == sn) ps.push_back(q);
    for (size_t j = 0; j < ps.size(); ++j) g.next[size_t(ps[j])] = ps[(j + 1) % ps.size()], g.index[size_t(ps[j])] = int(j);
  }
  g.vote = subnet_of_pod;
  std::vector<double> inside;
  std::vector<RackProfile> links = group_links(g, bytes, cat("pods by bandwidth: ", sh.ks.size(), " shifts of racks, pod to next pod "), inside);
  std::vector<int> which;
  for (int q = 0; q < count; ++q)
    if (std::count(subnet_of_pod.begin(), subnet_of_pod.end(), subnet_of_pod[size_t(q)]) >= 3) which.push_back(q);
  fan_links(g, which, bytes, links);
  if (g_rank != 0) return {};
  for (int q = 0; q < count; ++q) links[size_t(q)].subnet = subnet_of_pod[size_t(q)];
  return links;
}

// The links of groups of hosts (racks; a declared level's switches): inside
// every group a shift by one (every flow at its ends' rate, else the
// group is not one: inside_ratio, the worst flow inside over the best
// inside any group); every group j to its next at once, position by
// position (each group's link out and in loaded), and again to the group
// before it (a link out measured into two different links in: the
// faster, where the first one's link in was the narrower); then only the
// groups of even index to a next of odd index, and of odd index to a next
// of even index (out alone): a group's link
// is one for both ways where its flows out moved 1.5x faster alone (the
// groups of one vote decide together), its capacity the rates through it
// summed. Where every flow through a link moved at its hosts' rate, the
// link did not limit them: at least its hosts' interfaces together (a
// group sends only as many flows as the group it sends to has hosts).
// And every host of a cycle of groups at once to a host of another group
// (spread_flows): a group larger than the one after it loads its own links
// with all its hosts (a rack of 4 beside racks of 3 read 1.88 of its
// 2.5 GB/s through the 3 flows its next could take).
// Every rank calls it; rank 0 gets the links (subnet and within left to
// the caller).
std::vector<int> Probe::spread_flows(const GroupSet& g) const {
  std::vector<int> to(size_t(H), -1);
  std::vector<bool> seen(g.hosts.size(), false);
  for (size_t first = 0; first < g.hosts.size(); ++first) {
    if (seen[first] || g.next[first] < 0 || g.next[first] == int(first)) continue;
    // The cycle through `first`: its groups' hosts one after another.
    std::vector<int> order, group;
    size_t most = 0;
    for (int r = int(first); r >= 0 && !seen[size_t(r)]; r = g.next[size_t(r)]) {
      seen[size_t(r)] = true;
      for (int h : g.hosts[size_t(r)]) order.push_back(h), group.push_back(r);
      most = std::max(most, g.hosts[size_t(r)].size());
    }
    const size_t T = order.size();
    size_t shift = most;
    if (2 * shift == T) ++shift;  // no pair both ways at once
    if (shift >= T) continue;
    for (size_t i = 0; i < T; ++i) {
      const size_t j = (i + shift) % T;
      if (group[j] != group[i]) to[size_t(order[i])] = order[j];  // (two groups: the wrap lands inside)
    }
  }
  return to;
}

std::vector<RackProfile> Probe::group_links(const GroupSet& g, uint64_t bytes, const std::string& how_first,
                                            std::vector<double>& inside_ratio) {
  const int count = int(g.hosts.size());
  std::vector<int> group_of(size_t(H), -1), prev(size_t(count), -1);
  for (int r = 0; r < count; ++r)
    for (int h : g.hosts[size_t(r)]) group_of[size_t(h)] = r;
  for (int r = 0; r < count; ++r)
    if (g.next[size_t(r)] >= 0 && g.next[size_t(r)] != r) prev[size_t(g.next[size_t(r)])] = r;
  std::vector<int> inside(size_t(H), -1), across(size_t(H), -1), back(size_t(H), -1), one_way(size_t(H), -1),
      one_way_odd(size_t(H), -1);
  for (int r = 0; r < count; ++r) {
    const auto& a = g.hosts[size_t(r)];
    // No pair both ways at once (over TCP its two directions may take
    // turns on one connection): a rack of 2 sends one way inside.
    if (a.size() >= 2 && g.inside)
      for (size_t q = 0; q < (a.size() == 2 ? 1 : a.size()); ++q) inside[size_t(a[q])] = a[(q + 1) % a.size()];
    // Host q of a group receives from host q of the group before it only
    // (after it, going back); in a cycle of two groups, the second sends to
    // host q + 1 (no pair both ways).
    const int nx = g.next[size_t(r)], pv = prev[size_t(r)];
    if (nx >= 0 && nx != r) {
      const auto& b = g.hosts[size_t(nx)];
      const size_t turn = g.next[size_t(nx)] == r && g.index[size_t(r)] % 2 == 1 && b.size() > 1 ? 1 : 0;
      for (size_t q = 0; q < std::min(a.size(), b.size()); ++q) {
        across[size_t(a[q])] = b[(q + turn) % b.size()];
        if (g.index[size_t(r)] % 2 == 0 && g.index[size_t(nx)] % 2 == 1) one_way[size_t(a[q])] = b[q];
        if (g.index[size_t(r)] % 2 == 1 && g.index[size_t(nx)] % 2 == 0 && g.next[size_t(nx)] != r)
          one_way_odd[size_t(a[q])] = b[q];
      }
    }
    if (pv >= 0 && pv != nx)
      for (size_t q = 0; q < std::min(a.size(), g.hosts[size_t(pv)].size()); ++q) back[size_t(a[q])] = g.hosts[size_t(pv)][q];
  }
  const std::vector<int> spread = spread_flows(g);
  const bool any_back = std::any_of(back.begin(), back.end(), [](int t) { return t >= 0; });
  const bool any_spread = std::any_of(spread.begin(), spread.end(), [](int t) { return t >= 0; });
  const std::vector<double> rin = g.inside ? flow_rates(inside, bytes) : std::vector<double>(size_t(H), 0.0),
                            racr = flow_rates(across, bytes),
                            rback = any_back ? flow_rates(back, bytes) : std::vector<double>(size_t(H), 0.0),
                            rone = flow_rates(one_way, bytes),
                            rodd = std::any_of(one_way_odd.begin(), one_way_odd.end(), [](int t) { return t >= 0; })
                                       ? flow_rates(one_way_odd, bytes)
                                       : std::vector<double>(size_t(H), 0.0),
                            rspread = any_spread ? flow_rates(spread, bytes) : std::vector<double>(size_t(H), 0.0);
  std::vector<RackProfile> out;
  inside_ratio.assign(size_t(count), 1.0);
  if (g_rank != 0) return out;
  double best_inside = 0;
  for (int h = 0; h < H; ++h) best_inside = std::max(best_inside, rin[size_t(h)]);
  for (int h = 0; h < H; ++h)
    if (inside[size_t(h)] >= 0 && best_inside > 0)
      inside_ratio[size_t(group_of[size_t(h)])] = std::min(inside_ratio[size_t(group_of[size_t(h)])], rin[size_t(h)] / best_inside);
  // A host's interface: at least its best flow so far, or inside its group.
  std::vector<double> nic = interface_rates();
  for (int h = 0; h < H; ++h) {
    if (inside[size_t(h)] >= 0) {
      nic[size_t(h)] = std::max(nic[size_t(h)], rin[size_t(h)]);
      nic[size_t(inside[size_t(h)])] = std::max(nic[size_t(inside[size_t(h)])], rin[size_t(h)]);
    }
  }
  // Per group and experiment (0 next, 1 back): the rates out of it and into
  // it summed, and whether every such flow moved at its ends' rate.
  struct Through {
    double out = 0, in = 0;
    bool out_free = true, in_free = true;
  };
  std::vector<std::array<Through, 3>> th(static_cast<size_t>(count));
  for (int e = 0; e < 3; ++e) {
    const std::vector<int>& to = e == 0 ? across : e == 1 ? back : spread;
    const std::vector<double>& rate = e == 0 ? racr : e == 1 ? rback : rspread;
    for (int h = 0; h < H; ++h) {
      const int t = to[size_t(h)];
      if (t < 0) continue;
      const double ends = std::min(nic[size_t(h)], nic[size_t(t)]);
      const bool free = ends > 0 && rate[size_t(h)] >= kRackSlow * ends;
      Through& a = th[size_t(group_of[size_t(h)])][size_t(e)];
      Through& b = th[size_t(group_of[size_t(t)])][size_t(e)];
      a.out += rate[size_t(h)], a.out_free = a.out_free && free;
      b.in += rate[size_t(h)], b.in_free = b.in_free && free;
    }
  }
  // Per vote, whether its groups' links carry both ways on one (from the
  // groups whose flows out were measured alone too).
  std::map<int, int> shared_votes, votes, clear_votes;
  std::vector<double> alone_out(size_t(count), 0.0);
  for (int h = 0; h < H; ++h)
    if (group_of[size_t(h)] >= 0)
      alone_out[size_t(group_of[size_t(h)])] += (one_way[size_t(h)] >= 0 ? rone[size_t(h)] : 0.0) +
                                                (one_way_odd[size_t(h)] >= 0 ? rodd[size_t(h)] : 0.0);
  for (int r = 0; r < count; ++r)
    if (alone_out[size_t(r)] > 0 && th[size_t(r)][0].out > 0) {
      ++votes[g.vote[size_t(r)]];
      // Its flows out 1.5x faster alone; or 1.2x faster alone and, both
      // ways, out and in together no more than alone (one link whose
      // share each way follows the flows' latencies, as CM02's and TCP's
      // do: 17 out and 8 in of 25 alone).
      const double a = alone_out[size_t(r)], o = th[size_t(r)][0].out, i = th[size_t(r)][0].in;
      shared_votes[g.vote[size_t(r)]] += a > 1.5 * o || (a > 1.2 * o && o + i <= 1.2 * a);
      clear_votes[g.vote[size_t(r)]] += a > 1.5 * o;
    }
  for (int r = 0; r < count; ++r) {
    const Through& f = th[size_t(r)][0];
    const Through& b = th[size_t(r)][1];
    const Through& sp = th[size_t(r)][2];
    RackProfile x;
    x.hosts = g.hosts[size_t(r)];
    const int v = g.vote[size_t(r)];
    // A tie goes to one link where some group's flows out moved 1.5x
    // faster alone (the links of a full duplex path never slow each other).
    x.shared = votes[v] > 0 && (2 * shared_votes[v] > votes[v] || (2 * shared_votes[v] == votes[v] && clear_votes[v] > 0));
    std::string how = how_first + (any_back ? "and back, " : "") + (any_spread ? "every host to another group's, " : "") +
                      (alone_out[size_t(r)] > 0 ? "both ways and out alone" : "both ways");
    double hosts_sum = 0;
    for (int h : x.hosts) hosts_sum += nic[size_t(h)];
    if (f.out <= 0 && f.in <= 0 && b.out <= 0 && b.in <= 0 && sp.out <= 0 && sp.in <= 0) {
      // No flow through it (no next): its hosts' interfaces together, not a limit.
      x.up = x.down = {hosts_sum, 0, how_first + "not measured (nothing to send to beside it): its hosts' interfaces"};
      out.push_back(std::move(x));
      continue;
    }
    // Flows at their hosts' rate: the link did not limit them.
    const bool out_free = (f.out > 0 && f.out_free) || (b.out > 0 && b.out_free) || (sp.out > 0 && sp.out_free);
    const bool in_free = (f.in > 0 && f.in_free) || (b.in > 0 && b.in_free) || (sp.in > 0 && sp.in_free);
    if (x.shared) {
      double both = std::max({f.out + f.in, b.out + b.in, sp.out + sp.in, alone_out[size_t(r)]});
      if (out_free && in_free) both = std::max(both, 2 * hosts_sum), how += "; its flows at their hosts' rate: at least";
      x.up = x.down = {both, 0, how};
    } else {
      double up = std::max({f.out, b.out, sp.out, alone_out[size_t(r)]});
      // What came in was held to what the group before sent out (its link
      // out full): a bound from below; the link in at least as fast as
      // this group's own link out then.
      double prev_out = 0;
      if (prev[size_t(r)] >= 0) prev_out = th[size_t(prev[size_t(r)])][0].out;
      // (Not where links may differ by direction: subnets' uplinks.)
      const bool held = g.symmetric && f.in > 0 && prev_out > 0 && f.in >= 0.95 * prev_out;
      double down = std::max({f.in > 0 ? (held ? std::max(f.in, up) : f.in) : up, b.in, sp.in});
      if (out_free) up = std::max(up, hosts_sum);
      if (in_free) down = std::max(down, hosts_sum);
      if (out_free || in_free) how += "; its flows at their hosts' rate: at least";
      x.up = {up, 0, how};
      x.down = {down, 0, how};
    }
    out.push_back(std::move(x));
  }
  return out;
}

// A rate for the topology's lines; one of them.
std::string rate_text(double bytes_per_s) {
  char b[32];
  if (bytes_per_s >= 1e9) std::snprintf(b, sizeof b, "%.3g GB/s", bytes_per_s / 1e9);
  else std::snprintf(b, sizeof b, "%.3g MB/s", bytes_per_s / 1e6);
  return b;
}
void say(bool disagrees, const std::string& text) {
  std::printf("hetcoll-probe: topology: %s%s\n", disagrees ? "DISAGREES: " : "", text.c_str());
}

// 4e. A declared topology (--topology FILE, topology.conf's form:
// model/declared_topology.hpp) as a start: laid over the job's hosts and
// the subnets latency found, then each level's switches measured like
// racks (group_links), from the bottom level up, each switch against its
// next sibling (same switch above, same subnet). Rank 0 says, line by
// line, each switch's links, and where measurement and declaration
// disagree: hosts in no switch, a switch across subnets latency tells
// apart, a switch whose hosts' flows inside are not one switch's, racks
// the shifts found that the declaration does not hold. What holds becomes
// the profile's racks (nested: the declared levels), in place of the
// racks the shifts found.
void Probe::declared() {
  if (opt.topology.empty()) return;
  DeclaredTopology t;
  DeclaredLayout lay;
  int ok = 1;
  if (g_rank == 0) {
    try {
      t = read_declared_topology(opt.topology);
      lay = place_declared(t, hosts.names, subnet_of);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "hetcoll-probe: --topology: %s (not used)\n", e.what());
      ok = 0;
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, g_comm);
  if (!ok) return;
  if (g_rank == 0) {
    int levels_declared = 0;
    for (size_t s = 0; s < t.switches.size(); ++s) levels_declared = std::max(levels_declared, t.level(int(s)) + 1);
    say(false, cat(opt.topology, ": ", t.switches.size(), " switches in ", levels_declared, " level",
                   levels_declared == 1 ? "" : "s", "; ", lay.groups.size(), " of them inside this job's ", S,
                   " subnet", S == 1 ? "" : "s", " (", lay.levels(), " level", lay.levels() == 1 ? "" : "s", ")"));
    for (const DeclaredNote& n : lay.notes) say(n.disagrees, n.text);
  }
  // Every rank: the groups (level, within, subnet, hosts).
  std::vector<int> flat;
  if (g_rank == 0)
    for (const DeclaredGroup& g : lay.groups) {
      flat.insert(flat.end(), {g.level, g.within, g.subnet, int(g.hosts.size())});
      flat.insert(flat.end(), g.hosts.begin(), g.hosts.end());
    }
  int words = int(flat.size());
  MPI_Bcast(&words, 1, MPI_INT, 0, g_comm);
  flat.resize(size_t(words));
  MPI_Bcast(flat.data(), words, MPI_INT, 0, g_comm);
  std::vector<DeclaredGroup> groups;
  for (size_t i = 0; i < flat.size();) {
    DeclaredGroup g;
    g.level = flat[i], g.within = flat[i + 1], g.subnet = flat[i + 2];
    g.hosts.assign(flat.begin() + long(i) + 4, flat.begin() + long(i) + 4 + flat[i + 3]);
    i += 4 + size_t(flat[i + 3]);
    groups.push_back(std::move(g));
  }
  if (groups.empty()) return;
  if (opt.sequential) {
    if (g_rank == 0) say(false, "sequential mode measures one pair at a time: the declared switches' links not measured");
    return;
  }
  int levels = 0;
  for (const DeclaredGroup& g : groups) levels = std::max(levels, g.level + 1);
  const uint64_t bytes = std::min<uint64_t>(large * 16, uint64_t(16) << 20);
  if (!affords(levels * 5 * flows_estimate(bytes), 0.87)) {
    exhausted = true;
    if (g_rank == 0) say(false, "the budget does not pay for the declared switches' links: not measured");
    return;
  }
  bar.phase("declared", 0.5, 0.5);
  std::vector<RackProfile> links(groups.size());
  std::vector<double> ratio(groups.size(), 1.0);
  for (int level = 0; level < levels; ++level) {
    std::vector<int> ids;
    for (size_t i = 0; i < groups.size(); ++i)
      if (groups[i].level == level) ids.push_back(int(i));
    GroupSet g;
    g.inside = level == 0;  // flows inside an upper switch cross the links of those it holds
    for (int id : ids) {
      std::vector<int> sib;  // the same switch above, the same subnet, the same level
      for (int o : ids)
        if (groups[size_t(o)].within == groups[size_t(id)].within && groups[size_t(o)].subnet == groups[size_t(id)].subnet)
          sib.push_back(o);
      const size_t at = size_t(std::find(sib.begin(), sib.end(), id) - sib.begin());
      const int nx = sib.size() >= 2 ? sib[(at + 1) % sib.size()] : -1;
      g.hosts.push_back(groups[size_t(id)].hosts);
      g.next.push_back(nx < 0 ? -1 : int(std::find(ids.begin(), ids.end(), nx) - ids.begin()));
      g.index.push_back(int(at));
      g.vote.push_back(groups[size_t(id)].subnet);
    }
    std::vector<double> inside;
    std::vector<RackProfile> l = group_links(g, bytes, cat("declared (", opt.topology, "), level ", level, ": switch to next switch "), inside);
    // Each switch of three or more of its subnet's at this level to all
    // the others and back (a switch's link faster than the next one's
    // reads as the next's), where the budget affords it.
    std::vector<int> which;
    for (size_t k = 0; k < ids.size(); ++k)
      if (std::count(g.vote.begin(), g.vote.end(), g.vote[k]) >= 3) which.push_back(int(k));
    if (!which.empty() && affords(double(which.size()) * 2 * flows_estimate(bytes), 0.87))
      fan_links(g, which, bytes, l);
    if (g_rank == 0)
      for (size_t k = 0; k < ids.size(); ++k) links[size_t(ids[k])] = l[k], ratio[size_t(ids[k])] = inside[k];
  }
  if (g_rank == 0) hold_declared(t, lay, links, ratio);
}

// Rank 0: what of a declared topology held, line by line (each switch's
// links; where measurement disagrees), and the profile's racks from it.
void Probe::hold_declared(const DeclaredTopology& t, const DeclaredLayout& lay, const std::vector<RackProfile>& links,
                          const std::vector<double>& ratio) {
  const std::vector<DeclaredGroup>& groups = lay.groups;
  auto nic = [&](int h) { return h < int(rack_nic.size()) && rack_nic[size_t(h)] > 0 ? rack_nic[size_t(h)] : 0.0; };
  std::vector<int> kept(groups.size(), -1);
  std::vector<RackProfile> declared_racks;
  for (size_t i = 0; i < groups.size(); ++i) {
    const DeclaredGroup& g = groups[i];
    const std::string name = t.switches[size_t(g.sw)].name;
    if (g.level == 0 && g.hosts.size() >= 2 && ratio[i] < kRackSlow) {
      say(true, cat("switch ", name, ": a flow between two of its hosts moved ", int(100 * ratio[i]),
                    " % of the best such flow: not one switch's hosts by bandwidth, left out"));
      continue;
    }
    RackProfile r = links[i];
    r.subnet = g.subnet;
    r.name = name;
    int w = g.within;
    while (w >= 0 && kept[size_t(w)] < 0) w = lay.groups[size_t(w)].within;
    r.within = w >= 0 ? kept[size_t(w)] : -1;
    double hosts_sum = 0;
    for (int h : g.hosts) hosts_sum += nic(h);
    const bool measured = r.up.how.find("not measured") == std::string::npos;
    std::string line = cat("switch ", name, " (", g.hosts.size(), " host", g.hosts.size() == 1 ? "" : "s", ", level ", g.level, "): ");
    if (!measured) line += "no switch beside it in this job to measure against";
    else
      line += cat("link out ", rate_text(r.up.bandwidth), ", in ", rate_text(r.down.bandwidth), r.shared ? " (one link both ways)" : "",
                  hosts_sum > 0 ? cat("; its hosts ", rate_text(hosts_sum), " together (",
                                      int(10 * hosts_sum / std::max(r.up.bandwidth, 1.0) + 0.5) / 10.0, ":1)")
                                : std::string());
    // An upper switch as fast as the switches below it together: no limit of its own.
    double below = 0;
    for (size_t j = i + 1; j < groups.size(); ++j)
      if (groups[j].within == int(i) && (groups[j].level > 0 || ratio[j] >= kRackSlow)) below += links[j].up.bandwidth;
    if (measured && g.level > 0 && below > 0 && r.up.bandwidth >= 0.9 * below)
      line += cat("; as fast as the links of the switches it holds together (", rate_text(below), "): no limit of its own");
    say(false, line);
    kept[i] = int(declared_racks.size());
    declared_racks.push_back(std::move(r));
  }
  // The racks the shifts found against the declared switches: one no
  // switch that held holds alone is said; where it overlaps none of them,
  // it stays (measurement where the declaration did not hold).
  const size_t held = declared_racks.size();
  for (const RackProfile& f : found_racks) {
    bool same = false, overlaps = false;
    int within = -1;  // the innermost switch that held holding all of it
    for (size_t i = 0; i < groups.size(); ++i) {
      if (kept[i] < 0) continue;
      same = same || groups[i].hosts == f.hosts;
      int in = 0;
      for (int h : f.hosts) in += std::binary_search(groups[i].hosts.begin(), groups[i].hosts.end(), h);
      if (groups[i].level == 0) overlaps = overlaps || in > 0;
      if (in == int(f.hosts.size()) && groups[i].level > 0) within = kept[i];
    }
    if (same) continue;
    say(true, cat("the shifts measured a rack of ", f.hosts.size(), " hosts (", hosts.names[size_t(f.hosts.front())], " ... ",
                  hosts.names[size_t(f.hosts.back())], ", its link ", rate_text(f.up.bandwidth),
                  ") that no declared switch holds alone", overlaps ? "" : ": kept, as measured"));
    if (!overlaps) {
      declared_racks.push_back(f);
      declared_racks.back().within = within;
    }
  }
  if (!declared_racks.empty())
    say(false, cat("the profile's racks: ", held, " declared switch", held == 1 ? "" : "es", " that held, ",
                   declared_racks.size() - held, " rack", declared_racks.size() - held == 1 ? "" : "s", " measured alone"));
  found_racks = std::move(declared_racks);
}

// One far message into host r's leader from host f's leader (`bytes`),
// alone or (stream) beside a stream of large messages from host n's
// leader (4x the bandwidth message each), one after another (one flow, as
// one connection over TCP is),
// that runs until the far message is in: r's time from its go to the far
// message's arrival (0 on the other ranks). The stream's sender learns of
// the end by a stop and answers with an empty message, which takes r's
// receive still posted. Every rank calls it.
double Probe::far_message(int r, int n, int f, bool stream, uint64_t bytes) {
  // The stream's messages: 4x the bandwidth message (at most 16 MiB), so
  // that the gaps between them (a rendezvous each) are a few percent.
  const uint64_t chunk_bytes = std::min<uint64_t>(large * 4, uint64_t(16) << 20);
  auto leader = [&](int host) { return hosts.ranks[size_t(host)][0]; };
  const int rr = leader(r), rn = leader(n), rf = leader(f), me = g_rank;
  quiet_barrier();
  if (me != rr && me != rf && !(stream && me == rn)) return 0;
  char go = 0;
  if (me == rr) {
    pingpong(rf, true, buf, opt.small, 1);  // both ends in place
    if (stream) pingpong(rn, true, buf, opt.small, 1);
    MPI_Request far, chunk = MPI_REQUEST_NULL, gos[2];
    MPI_Irecv(buf2.data(), count_of(bytes), MPI_BYTE, rf, kData, g_comm, &far);
    std::vector<char> in(stream ? chunk_bytes : 0);
    if (stream) MPI_Irecv(in.data(), count_of(chunk_bytes), MPI_BYTE, rn, kStream, g_comm, &chunk);
    const double t0 = MPI_Wtime();
    int ngo = 0;
    if (stream) MPI_Isend(&go, 1, MPI_BYTE, rn, kData, g_comm, &gos[ngo++]);
    MPI_Isend(&go, 1, MPI_BYTE, rf, kData, g_comm, &gos[ngo++]);
    double t_far = 0;
    if (!stream) {
      MPI_Wait(&far, MPI_STATUS_IGNORE);
      t_far = MPI_Wtime() - t0;
    } else {
      // The stream's receive stays posted until its empty message.
      bool far_in = false, ended = false;
      MPI_Request stop = MPI_REQUEST_NULL;
      while (!far_in || !ended) {
        MPI_Request two[2] = {far_in ? MPI_REQUEST_NULL : far, chunk};
        int idx = MPI_UNDEFINED;
        MPI_Status st;
        MPI_Waitany(2, two, &idx, &st);
        if (idx == MPI_UNDEFINED) break;
        if (idx == 0) {
          far_in = true;
          t_far = MPI_Wtime() - t0;
          MPI_Isend(&go, 1, MPI_BYTE, rn, kStop, g_comm, &stop);
          continue;
        }
        chunk = MPI_REQUEST_NULL;
        int got = 0;
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (got == 0) ended = true;
        else MPI_Irecv(in.data(), count_of(chunk_bytes), MPI_BYTE, rn, kStream, g_comm, &chunk);
      }
      MPI_Wait(&stop, MPI_STATUS_IGNORE);
    }
    MPI_Waitall(ngo, gos, MPI_STATUSES_IGNORE);
    return t_far;
  }
  pingpong(rr, false, buf, opt.small, 1);
  MPI_Recv(&go, 1, MPI_BYTE, rr, kData, g_comm, MPI_STATUS_IGNORE);
  if (me == rf) {
    MPI_Send(buf.data(), count_of(bytes), MPI_BYTE, rr, kData, g_comm);
    return 0;
  }
  // The near stream: one large message after another until the stop.
  std::vector<char> out(static_cast<size_t>(chunk_bytes), 1);
  MPI_Request stop, chunk = MPI_REQUEST_NULL;
  MPI_Irecv(&go, 1, MPI_BYTE, rr, kStop, g_comm, &stop);
  for (;;) {
    MPI_Isend(out.data(), count_of(chunk_bytes), MPI_BYTE, rr, kStream, g_comm, &chunk);
    MPI_Request two[2] = {chunk, stop};
    int idx = 0;
    MPI_Waitany(2, two, &idx, MPI_STATUS_IGNORE);
    if (idx == 1) break;
    chunk = MPI_REQUEST_NULL;
    int stopped = 0;
    MPI_Test(&stop, &stopped, MPI_STATUS_IGNORE);
    if (stopped) break;
  }
  MPI_Wait(&chunk, MPI_STATUS_IGNORE);
  MPI_Send(out.data(), 0, MPI_BYTE, rr, kStream, g_comm);
  return 0;
}

void Probe::sharing() {
  // 4c. Sharing (concurrent mode, two subnets or more): host r of a subnet
  // of two or more hosts, n another of them (near), f in another subnet
  // (far: the one of the longest latency to r). The far message alone and
  // beside the near stream (best of 2 each): rates over the time less the
  // go's and the message's latency; the near pair's rate from its large
  // message (pairs phase: pairs of a round share no interface).
  int roles[3] = {-1, -1, -1};
  if (g_rank == 0 && !opt.sequential && S > 1) {
    for (int h : ring.hosts) {
      int n = -1;
      for (int x : ring.hosts)
        if (x != h && subnet_of[size_t(x)] == subnet_of[size_t(h)]) n = x;
      if (n < 0) continue;
      int f = -1;
      for (int x = 0; x < H; ++x)
        if (subnet_of[size_t(x)] != subnet_of[size_t(h)] &&
            (f < 0 || pd.small_min[size_t(x) * size_t(H) + size_t(h)] > pd.small_min[size_t(f) * size_t(H) + size_t(h)]))
          f = x;
      if (f >= 0) {
        roles[0] = h, roles[1] = n, roles[2] = f;
        break;
      }
    }
  }
  MPI_Bcast(roles, 3, MPI_INT, 0, g_comm);
  const int r = roles[0], n = roles[1], f = roles[2];
  if (r < 0) return;
  const size_t rf = size_t(f) * size_t(H) + size_t(r), rn = size_t(n) * size_t(H) + size_t(r);
  // Rank 0's estimate: the far message alone, and 8 times it beside the
  // stream (a far flow with 1/8 of the interface), twice each.
  const double far_t = g_rank == 0 ? pd.large_min[rf] : 0;
  if (!affords(2 * 9 * far_t + 0.05, 0.8)) {
    exhausted = true;
    return;
  }
  bar.phase("sharing", 0.5, 0.5);
  double alone_t = 0, shared_t = 0;
  for (int rep = 0; rep < 2; ++rep) {
    const double a = far_message(r, n, f, false, large), b = far_message(r, n, f, true, large);
    if (a > 0) alone_t = alone_t > 0 ? std::min(alone_t, a) : a;
    if (b > 0) shared_t = shared_t > 0 ? std::min(shared_t, b) : b;
  }
  // r's times to rank 0.
  double times[2] = {alone_t, shared_t}, got[2] = {0, 0};
  const int rr = hosts.ranks[size_t(r)][0];
  if (rr == 0) got[0] = alone_t, got[1] = shared_t;
  else if (g_rank == rr) MPI_Send(times, 2, MPI_DOUBLE, 0, kDone, g_comm);
  else if (g_rank == 0) MPI_Recv(got, 2, MPI_DOUBLE, rr, kDone, g_comm, MPI_STATUS_IGNORE);
  quiet_barrier();
  if (g_rank != 0) return;
  Profile::Sharing& x = shares;
  x.receiver = r, x.near = n, x.far = f;
  x.near_latency = pd.small_min[rn];
  x.far_latency = pd.small_min[rf];
  const double lat = 2 * x.far_latency;  // the go, then the message's own
  x.far_alone = got[0] > lat ? double(large) / (got[0] - lat) : 0;
  x.far_shared = got[1] > lat ? double(large) / (got[1] - lat) : 0;
  x.near_alone = pd.large_min[rn] > x.near_latency ? double(large) / (pd.large_min[rn] - x.near_latency) : 0;
  x.measured = x.far_alone > 0 && x.far_shared > 0 && x.near_alone > 0 ? 1 : 0;
}

void Probe::overheads() {
  // 5. Banikazemi's overheads of each host against its nearest host (or,
  // alone on the machine, against a second rank of its own).
  std::vector<int> nearest(size_t(H), -1);
  if (g_rank == 0)
    for (int a = 0; a < H; ++a)
      for (int b = 0; b < H; ++b)
        if (a != b && (nearest[size_t(a)] < 0 ||
                       pd.small_min[size_t(a) * size_t(H) + size_t(b)] <
                           pd.small_min[size_t(a) * size_t(H) + size_t(nearest[size_t(a)])]))
          nearest[size_t(a)] = b;
  MPI_Bcast(nearest.data(), H, MPI_INT, 0, g_comm);
  const int K = 16;
  const uint64_t eager = 2048, sm_bytes = std::max<uint64_t>(large / 4, 4096);
  bar.phase("overheads", 0.5, 0.65);
  double overhead_cost = 0;
  for (int a = 0; a < H && g_rank == 0; ++a) {
    const int b = nearest[size_t(a)];
    if (b < 0) continue;
    const size_t k = size_t(a) * size_t(H) + size_t(b);
    const double per_byte = pd.large_min[k] > pd.small_min[k] ? (pd.large_min[k] - pd.small_min[k]) / double(large) : 0;
    overhead_cost += std::max(1, repeats_done) * (10 * pd.small_min[k] + (4 * K + 4) * pd.small_min[k] +
                                                   (4.0 * sm_bytes + 2.0 * K * eager) * per_byte) +
                     2 * std::log2(double(g_size) + 1) * pd.small_min[k];  // the barrier
  }
  const bool overheads = affords(overhead_cost, 0.85);
  exhausted |= !overheads;
  if (overheads) {
    // The pairs (host, partner rank): by host, one at a time.
    std::vector<int> partner_rank(size_t(H), -1);
    for (int a = 0; a < H; ++a) {
      if (nearest[size_t(a)] >= 0) partner_rank[size_t(a)] = hosts.ranks[size_t(nearest[size_t(a)])][0];
      else if (hosts.ranks[size_t(a)].size() > 1) partner_rank[size_t(a)] = hosts.ranks[size_t(a)][1];
    }
    std::vector<double> sc, sm, rc, rm;
    for (int a = 0; a < H; ++a) {
      const int lead = hosts.ranks[size_t(a)][0], peer = partner_rank[size_t(a)];
      bar.update(double(a) / H);
      quiet_barrier();  // one host at a time
      if (peer < 0 || (g_rank != lead && g_rank != peer)) continue;
      const bool me = g_rank == lead;
      const int other = me ? peer : lead;
      for (int rep = 0; rep < std::max(1, std::min(repeats_done, opt.repeats)); ++rep) {
        int ack = 0;
        // S_c: K consecutive small sends, timed at the sender.
        if (me) {
          double t0 = MPI_Wtime();
          for (int i = 0; i < K; ++i) MPI_Send(buf.data(), count_of(opt.small), MPI_BYTE, other, kData, g_comm);
          const double per = (MPI_Wtime() - t0) / K;
          MPI_Recv(&ack, 1, MPI_INT, other, kDone, g_comm, MPI_STATUS_IGNORE);
          sc.push_back(per);
        } else {
          for (int i = 0; i < K; ++i)
            MPI_Recv(buf.data(), count_of(opt.small), MPI_BYTE, other, kData, g_comm, MPI_STATUS_IGNORE);
          MPI_Send(&ack, 1, MPI_INT, other, kDone, g_comm);
        }
        // S_m: 4 consecutive large sends (non-blocking, back to back).
        const int L = 4;
        std::vector<MPI_Request> req(L);
        if (me) {
          double t0 = MPI_Wtime();
          for (int i = 0; i < L; ++i)
            MPI_Isend(buf.data(), count_of(sm_bytes), MPI_BYTE, other, kData, g_comm, &req[size_t(i)]);
          MPI_Waitall(L, req.data(), MPI_STATUSES_IGNORE);
          MPI_Recv(&ack, 1, MPI_INT, other, kDone, g_comm, MPI_STATUS_IGNORE);
          const double per = (MPI_Wtime() - t0) / L;
          sm.push_back(std::max(0.0, (per - sc.back()) / double(sm_bytes)));
        } else {
          std::vector<char> big(size_t(sm_bytes) * L);
          for (int i = 0; i < L; ++i)
            MPI_Irecv(big.data() + size_t(i) * sm_bytes, count_of(sm_bytes), MPI_BYTE, other, kData, g_comm,
                      &req[size_t(i)]);
          MPI_Waitall(L, req.data(), MPI_STATUSES_IGNORE);
          MPI_Send(&ack, 1, MPI_INT, other, kDone, g_comm);
        }
        // R_c, R_m: the partner sends K messages, then a token; the host
        // receives the token, then times K receives of messages already
        // there — taken from the unexpected queue, and (second way) K
        // receives posted before the messages were sent, completed by then.
        // The cheaper of the two: where an MPI delivers a message only once
        // its receive is posted (SimGrid), the first includes the transfer.
        for (uint64_t bytes : {opt.small, eager}) {
          double best = 0;
          for (int way = 0; way < 2; ++way) {
            if (me) {
              double per;
              if (way == 0) {
                MPI_Recv(&ack, 1, MPI_INT, other, kDone, g_comm, MPI_STATUS_IGNORE);
                double t0 = MPI_Wtime();
                for (int i = 0; i < K; ++i)
                  MPI_Recv(buf.data(), count_of(bytes), MPI_BYTE, other, kData, g_comm,
                           MPI_STATUS_IGNORE);
                per = (MPI_Wtime() - t0) / K;
              } else {
                std::vector<char> in(size_t(bytes) * K + 1);
                std::vector<MPI_Request> rq(static_cast<size_t>(K) + 1);
                for (int i = 0; i < K; ++i)
                  MPI_Irecv(in.data() + size_t(i) * bytes, count_of(bytes), MPI_BYTE, other, kData, g_comm, &rq[size_t(i)]);
                int token = 0;
                MPI_Irecv(&token, 1, MPI_INT, other, kDone, g_comm, &rq[size_t(K)]);
                MPI_Send(&ack, 1, MPI_INT, other, kToken, g_comm);  // go
                MPI_Wait(&rq[size_t(K)], MPI_STATUS_IGNORE);
                double t0 = MPI_Wtime();
                MPI_Waitall(K, rq.data(), MPI_STATUSES_IGNORE);
                per = (MPI_Wtime() - t0) / K;
              }
              best = way == 0 ? per : std::min(best, per);
            } else {
              if (way == 1) MPI_Recv(&ack, 1, MPI_INT, other, kToken, g_comm, MPI_STATUS_IGNORE);
              for (int i = 0; i < K; ++i) MPI_Send(buf2.data(), count_of(bytes), MPI_BYTE, other, kData, g_comm);
              MPI_Send(&ack, 1, MPI_INT, other, kDone, g_comm);
            }
          }
          if (me) {
            if (bytes == opt.small) rc.push_back(best);
            else rm.push_back(std::max(0.0, (best - rc.back()) / double(bytes - opt.small)));
          }
        }
      }
      if (me) {
        double* row = &hostv[size_t(a) * kHostFields];
        Measure s = summarize(sc), r = summarize(rc);
        row[0] = s.min, row[1] = s.median, row[2] = median(sm), row[3] = r.min, row[4] = r.median, row[5] = median(rm);
      }
    }
  }
}

void Probe::shared_memory() {
  // 6. Shared memory: a host's first two ranks, all hosts at once. Not cut
  // by the budget: a profile with a host of several ranks needs it (the
  // reader refuses one without), and it is a few round trips.
  bar.phase("shared", 0.65, 0.7);
  bool any_shm = false;
  for (auto& r : hosts.ranks) any_shm |= r.size() > 1;
  if (any_shm) {
    quiet_barrier();
    const auto& mine = hosts.ranks[size_t(hosts.mine)];
    if (mine.size() > 1 && (g_rank == mine[0] || g_rank == mine[1])) {
      const bool init = g_rank == mine[0];
      const int peer = init ? mine[1] : mine[0];
      std::vector<double> s, l;
      for (int rep = 0; rep < std::max(1, repeats_done); ++rep) {
        s.push_back(pingpong(peer, init, buf, opt.small, 0));
        l.push_back(pingpong(peer, init, buf, large, 1));
      }
      if (init) shm[size_t(hosts.mine) * 2] = summarize(s).min, shm[size_t(hosts.mine) * 2 + 1] = summarize(l).min;
    }
    quiet_barrier();
    shm = reduce_to_root(shm);
  }
}

void Probe::kernels() {
  // 7. Kernels: γ with hetcoll's reductions, and memcpy, on each leader.
  bar.phase("kernels", 0.7, 0.75);
  const size_t nk = sizeof kKernels / sizeof kKernels[0];
  kern_min.assign(nk, 0.0);
  kern_med.assign(nk, 0.0);
  if (within(0.9) && hosts.leader()) {
    const size_t bytes = size_t(1) << 20;
    std::vector<char> x(bytes), y(bytes);
    for (size_t i = 0; i < bytes; ++i) x[i] = char(i * 7 + 1), y[i] = char(i * 3 + 2);
    for (size_t k = 0; k < nk; ++k) {
      ReduceFn fn = reduce_kernel(kKernels[k].op, kKernels[k].type);
      const size_t n = bytes / elem_bytes(kKernels[k].type);
      std::vector<double> t;
      for (int rep = 0; rep < std::max(3, repeats_done); ++rep) {
        double t0 = MPI_Wtime();
        fn(y.data(), x.data(), n);
        t.push_back((MPI_Wtime() - t0) / double(bytes));
      }
      Measure m = summarize(t);
      kern_min[k] = m.min, kern_med[k] = m.median;
      if (k == 0) hostv[size_t(hosts.mine) * kHostFields + 6] = m.median;
    }
    std::vector<double> t;
    for (int rep = 0; rep < std::max(3, repeats_done); ++rep) {
      double t0 = MPI_Wtime();
      std::memcpy(y.data(), x.data(), bytes);
      t.push_back((MPI_Wtime() - t0) / double(bytes));
    }
    hostv[size_t(hosts.mine) * kHostFields + 7] = median(t);
  }
  hostv = reduce_to_root(hostv);
}

void Probe::lambda_experiments() {
  // 8. Bruck's two experiments on ranks 0 … K (distinct hosts first).
  {
    bar.phase("lambda", 0.75, 1.0);
    // P1 … Pk: Bruck's λ describes a homogeneous machine, so the leaders
    // of other hosts of rank 0's subnet first, then other ranks of its
    // host, then the rest.
    std::vector<int> members{0};
    const int home = hosts.host_of[0];
    for (int h = 0; h < H; ++h)
      if (h != home && subnet_of[size_t(h)] == subnet_of[size_t(home)]) members.push_back(hosts.ranks[size_t(h)][0]);
    for (int r : hosts.ranks[size_t(home)])
      if (r != 0) members.push_back(r);
    for (int h = 0; h < H; ++h)
      if (h != home && subnet_of[size_t(h)] != subnet_of[size_t(home)]) members.push_back(hosts.ranks[size_t(h)][0]);
    for (int r = 1; r < g_size; ++r)
      if (std::find(members.begin(), members.end(), r) == members.end()) members.push_back(r);
    const int Kmax = std::min<int>(opt.lambda_k, int(members.size()) - 1);
    const int pos = int(std::find(members.begin(), members.end(), g_rank) - members.begin());
    const bool in = pos <= Kmax;
    MPI_Comm lc;
    MPI_Comm_split(g_comm, in ? 0 : MPI_UNDEFINED, pos, &lc);
    std::vector<uint64_t> sizes;
    for (uint64_t m = 8; m <= opt.lambda_max; m *= 8) sizes.push_back(m);
    if (sizes.back() != opt.lambda_max && opt.lambda_max > 8) sizes.push_back(opt.lambda_max);
    std::vector<char> lbuf(size_t(opt.lambda_max) + 8);
    bool go = opt.lambda && Kmax >= 2;
    double last_size_cost = 0;
    for (size_t si = 0; si < sizes.size() && go; ++si) {
      // Stop before a size the budget cannot pay for (rank 0 decides, all
      // follow): sizes grow 8-fold, so does their cost, roughly.
      if (!agree(budget <= 0 || elapsed() + 8.0 * last_size_cost < budget)) {
        exhausted = true;
        break;
      }
      const double size_start = elapsed();
      const uint64_t m = sizes[si];
      for (int nb = 0; nb < 2; ++nb) {
        LambdaPoint lp;
        lp.bytes = m;
        lp.nonblocking = nb == 1;
        for (int k = 1; k <= Kmax; ++k) {
          std::vector<double> t1, t2;
          // Transfers of a MiB or more vary little: one repeat there.
          const int lambda_reps = m >= (uint64_t(1) << 20) ? 1 : std::max(1, std::min(repeats_done, 3));
          for (int rep = 0; rep < lambda_reps; ++rep)
            for (int ex = 1; ex <= 2; ++ex) {
              if (!in) continue;
              MPI_Barrier(lc);
              // Ranks of lc: 0 = P0, i = Pi. Small messages: several
              // experiments back to back per timing (the clock's grain).
              const int me = pos;
              const int iters = m <= 4096 ? 16 : 1;
              double t0 = MPI_Wtime();
              for (int it = 0; it < iters; ++it) {
              if (me == 0) {
                std::vector<MPI_Request> rq(static_cast<size_t>(k));
                for (int i = 1; i <= k; ++i) {
                  if (nb) MPI_Isend(lbuf.data(), count_of(m), MPI_BYTE, i, kLambda, lc, &rq[size_t(i - 1)]);
                  else MPI_Send(lbuf.data(), count_of(m), MPI_BYTE, i, kLambda, lc);
                }
                if (nb) MPI_Waitall(k, rq.data(), MPI_STATUSES_IGNORE);
                MPI_Recv(lbuf.data(), count_of(m), MPI_BYTE, k, kLambdaBack, lc, MPI_STATUS_IGNORE);
                if (it + 1 == iters) (ex == 1 ? t1 : t2).push_back((MPI_Wtime() - t0) / iters);
              } else if (me <= k) {
                std::vector<char> rb(size_t(m) + 1);
                MPI_Recv(rb.data(), count_of(m), MPI_BYTE, 0, kLambda, lc, MPI_STATUS_IGNORE);
                if (me == k) {
                  if (ex == 1) {
                    MPI_Send(rb.data(), count_of(m), MPI_BYTE, 0, kLambdaBack, lc);
                  } else {
                    std::vector<MPI_Request> rq;
                    for (int i = k - 1; i >= 0; --i) {
                      const int tag = i == 0 ? kLambdaBack : kLambda + 100;
                      if (nb) {
                        rq.emplace_back();
                        MPI_Isend(rb.data(), count_of(m), MPI_BYTE, i, tag, lc, &rq.back());
                      } else {
                        MPI_Send(rb.data(), count_of(m), MPI_BYTE, i, tag, lc);
                      }
                    }
                    if (nb) MPI_Waitall(int(rq.size()), rq.data(), MPI_STATUSES_IGNORE);
                  }
                } else if (ex == 2) {
                  MPI_Recv(rb.data(), count_of(m), MPI_BYTE, k, kLambda + 100, lc, MPI_STATUS_IGNORE);
                }
              }
              }
            }
          lp.ks.push_back(k);
          lp.exp1.push_back(summarize(t1));
          lp.exp2.push_back(summarize(t2));
        }
        if (g_rank == 0) {
          std::vector<double> ks, a, b;
          for (size_t q = 0; q < lp.ks.size(); ++q)
            ks.push_back(lp.ks[q]), a.push_back(lp.exp1[q].min), b.push_back(lp.exp2[q].min);
          lp.fit1 = fit_bruck(1, ks, a);
          lp.fit2 = fit_bruck(2, ks, b);
        }
        lambda.push_back(std::move(lp));
      }
      last_size_cost = elapsed() - size_start;
      bar.update(double(si + 1) / sizes.size());
    }
    if (lc != MPI_COMM_NULL) MPI_Comm_free(&lc);
  }
}

// Per host: its names, ranks, subnet and overheads, receive overheads
// capped so that S + R never exceeds a measured one-way time.
void Probe::host_rows(Profile& p) {
  for (int h = 0; h < H; ++h) {
    HostProfile x;
    x.name = hosts.names[size_t(h)];
    x.ranks = hosts.ranks[size_t(h)];
    x.subnet = subnet_of[size_t(h)];
    const double* row = &hostv[size_t(h) * kHostFields];
    x.Sc = {row[0], row[1]};
    x.Sm = row[2];
    x.Rc = {row[3], row[4]};
    x.Rm = row[5];
    x.gamma = row[6];
    x.copy = row[7];
    p.hosts.push_back(x);
  }
  // S + R never exceeds a measured one-way time: receive overheads are
  // capped by the host's fastest pair (shared memory included).
  for (int j = 0; j < H; ++j) {
    HostProfile& x = p.hosts[size_t(j)];
    auto cap = [&](double one_way_small, double one_way_large, double Sc, double Sm) {
      if (one_way_small <= 0) return;
      const double rc = std::max(0.0, one_way_small - Sc);
      x.Rc.min = std::min(x.Rc.min, rc);
      x.Rc.median = std::min(x.Rc.median, rc);
      if (one_way_large > one_way_small)
        x.Rm = std::min(x.Rm, std::max(0.0, (one_way_large - one_way_small) / double(large - opt.small) - Sm));
    };
    for (int i = 0; i < H; ++i)
      if (i != j)
        cap(pd.small_min[size_t(i) * size_t(H) + size_t(j)], pd.large_min[size_t(i) * size_t(H) + size_t(j)],
            p.hosts[size_t(i)].Sc.median, p.hosts[size_t(i)].Sm);
    cap(shm[size_t(j) * 2], shm[size_t(j) * 2 + 1], x.Sc.median, x.Sm);
  }
}

// Classes of host pairs (and shared memory): latency, bandwidth alone, both
// ways and one pair both ways, Banikazemi's X.
void Probe::pair_classes(Profile& p, std::string& unmeasured) {
  const double payload = double(large - opt.small);
  // Classes of host pairs.
  for (int a = 0; a < S; ++a)
    for (int b = a; b < S; ++b) {
      std::vector<double> lat, bw, xc, xm;
      for (int i = 0; i < H; ++i)
        for (int j = i + 1; j < H; ++j) {
          if (std::min(subnet_of[size_t(i)], subnet_of[size_t(j)]) != a ||
              std::max(subnet_of[size_t(i)], subnet_of[size_t(j)]) != b)
            continue;
          const size_t k = size_t(i) * size_t(H) + size_t(j);
          const double l = pd.small_min[k], big = pd.large_min[k];
          const double bwp = big > l ? payload / (big - l) : 0;
          lat.push_back(l);
          bw.push_back(bwp);
          for (auto [s, r] : {std::pair<int, int>{i, j}, {j, i}}) {
            const HostProfile& hs = p.hosts[size_t(s)];
            const HostProfile& hr = p.hosts[size_t(r)];
            xc.push_back(std::max(0.0, l - hs.Sc.median - hr.Rc.median));
            xm.push_back(bwp > 0 ? std::max(0.0, 1.0 / bwp - hs.Sm - hr.Rm) : 0.0);
          }
        }
      if (lat.empty()) continue;
      PairClass c;
      c.a = a, c.b = b;
      c.name = a == b ? "subnet " + std::to_string(a) : "subnets " + std::to_string(a) + "-" + std::to_string(b);
      c.pairs = int(lat.size());
      c.latency = median(lat);
      c.bandwidth = bandwidth_of(bw, c.name, unmeasured);
      const double al = alone[size_t(a) * size_t(S) + size_t(b)];
      c.bandwidth_alone = opt.sequential ? c.bandwidth : (al > c.latency ? payload / (al - c.latency) : 0);
      c.slowdown = c.bandwidth_alone > 0 ? c.bandwidth_alone / c.bandwidth : 1;
      // both ways: a large one-way time and a small answer's latency.
      const double bt = alone_both[size_t(a) * size_t(S) + size_t(b)] - c.latency;
      c.bandwidth_both_ways = opt.sequential || !(bt > c.latency) ? 0 : payload / (bt - c.latency);
      // one pair both ways (same_pair): a ping, its answer, the large
      // message's latency and the last answer's.
      const double st = alone_same[size_t(a) * size_t(S) + size_t(b)] - 4 * c.latency;
      c.bandwidth_same_pair = opt.sequential || !(st > 0) ? 0 : same_payload / st;
      c.beta = 1.0 / c.bandwidth;
      c.alpha = std::max(0.0, c.latency - double(opt.small) * c.beta);
      c.Xc = median(xc);
      c.Xm = median(xm);
      p.classes.push_back(c);
    }
  {
    std::vector<double> lat, bw, xc, xm;
    for (int h = 0; h < H; ++h) {
      const double l = shm[size_t(h) * 2], big = shm[size_t(h) * 2 + 1];
      if (l <= 0) continue;
      const double bwp = big > l ? payload / (big - l) : 0;
      const HostProfile& x = p.hosts[size_t(h)];
      lat.push_back(l);
      bw.push_back(bwp);
      xc.push_back(std::max(0.0, l - x.Sc.median - x.Rc.median));
      xm.push_back(bwp > 0 ? std::max(0.0, 1.0 / bwp - x.Sm - x.Rm) : 0.0);
    }
    if (!lat.empty()) {
      PairClass c;
      c.name = "shared memory";
      c.pairs = int(lat.size());
      c.latency = median(lat);
      c.bandwidth = bandwidth_of(bw, c.name, unmeasured);
      c.bandwidth_alone = 0;
      c.beta = 1.0 / c.bandwidth;
      c.alpha = std::max(0.0, c.latency - double(opt.small) * c.beta);
      c.Xc = median(xc);
      c.Xm = median(xm);
      p.classes.insert(p.classes.begin(), c);
    }
  }
}

// Each host's interface, out and in: the fastest of its pairs (concurrent
// rounds pair disjoint hosts, so a pair shares neither interface; across
// subnets an uplink may limit it more, but it is still at most the host's
// own rate: a fast host among slow ones shows its rate only across). A
// pair moves at its slower end, so one fast partner shows the host's own
// rate — where a class mixes fast and slow interfaces, its median
// describes neither.
// Where the class's pairs were slowed together (a backplane shared by the
// round's pairs) a pair's rate is scaled up by that slowdown, at most to
// the class's one-way rate — never below the rate the pair moved (a class
// of mixed interfaces measured alone on a slow pair had capped every host
// at the slow one's 125 MB/s). The slowdown is the pair measured alone's
// own: alone over its rate in the rounds — not the class's (alone over the
// class's median), which in a subnet of mixed interfaces is a fast pair
// against the slow ones' median (10x: every 1 Gbit/s host drawn at 10).
void Probe::interfaces(Profile& p) {
  const double payload = double(large - opt.small);
  // Per subnet, the slowdown of its pair measured alone (the first pair of
  // its class in the rounds' order, as alone_pairs takes it).
  std::vector<double> slowed(size_t(S), 1.0);
  std::vector<bool> seen(size_t(S), false);
  for (auto [a, b] : order) {
    const int sa = subnet_of[size_t(a)];
    if (sa != subnet_of[size_t(b)] || seen[size_t(sa)]) continue;
    seen[size_t(sa)] = true;
    const size_t k = size_t(a) * size_t(H) + size_t(b);
    const PairClass* c = p.between(sa, sa);
    if (c && pd.large_min[k] > pd.small_min[k] && c->bandwidth_alone > 0)
      slowed[size_t(sa)] = std::max(1.0, c->bandwidth_alone / (payload / (pd.large_min[k] - pd.small_min[k])));
  }
  for (int i = 0; i < H; ++i)
    for (int j = 0; j < H; ++j) {
      if (i == j) continue;
      const size_t k = size_t(i) * size_t(H) + size_t(j);
      const double l = pd.small_min[k], big = pd.large_min[k];
      if (!(big > l)) continue;
      double bw = payload / (big - l);
      const bool inside = subnet_of[size_t(i)] == subnet_of[size_t(j)];
      const double sd = slowed[size_t(subnet_of[size_t(i)])];
      if (const PairClass* c = p.between(subnet_of[size_t(i)], subnet_of[size_t(i)]); inside && c && sd > 1)
        bw = std::max(bw, std::min(bw * sd, one_way_rate(*c)));
      p.hosts[size_t(i)].nic_up = std::max(p.hosts[size_t(i)].nic_up, bw);
      p.hosts[size_t(j)].nic_down = std::max(p.hosts[size_t(j)].nic_down, bw);
    }
}

void Probe::backplane_of(Profile& p) {
  // The backplane: the aggregate against what the flows would move if
  // each moved at its class's alone rate (a host both sending and
  // receiving through a half-duplex interface: half) — measured the same
  // way, all their bytes over the slowest one's time.
  if (bp_flows > 0 && bp_aggregate > 0) {
    // Each flow at its own pair's rate (the pair measured in the bandwidth
    // phase: a slow interface on the ring is a slow flow, not a backplane),
    // at most its class's alone rate.
    const double payload = double(large - opt.small);
    double slowest_rate = 0;
    for (int h = 0; h < H; ++h) {
      if (bp_to[size_t(h)] < 0) continue;
      const int s = subnet_of[size_t(h)];
      const PairClass* c = p.between(s, s);
      if (!c) continue;
      double rate = std::max(c->bandwidth_alone, c->bandwidth);
      const size_t k = size_t(h) * size_t(H) + size_t(bp_to[size_t(h)]);
      if (pd.large_min[k] > pd.small_min[k]) rate = std::min(rate, payload / (pd.large_min[k] - pd.small_min[k]));
      int in_subnet = 0;
      for (int g = 0; g < H; ++g) in_subnet += subnet_of[size_t(g)] == s;
      if (in_subnet >= 3 && c->bandwidth_both_ways > 0 && !full_duplex(*c)) rate /= 2;
      if (rate > 0) slowest_rate = slowest_rate > 0 ? std::min(slowest_rate, rate) : rate;
    }
    const double expected = double(bp_flows) * slowest_rate;
    p.backplane.flows = bp_flows;
    p.backplane.aggregate = bp_aggregate;
    p.backplane.expected = expected;
    p.backplane.bandwidth = bp_aggregate < kBackplaneShare * expected ? bp_aggregate : 0;
  }
}

// The racks' latencies, from the pairs' small-message minima: a rack's
// hosts' edges carry what a pair inside it takes beyond the subnet's X_c
// share (median inside the rack against the subnet class's latency), its
// uplink half the median's step from inside to across.
void Probe::rack_latencies(Profile& p) {
  auto median_of = [](std::vector<double> v) { return v.empty() ? 0.0 : summarize(std::move(v)).median; };
  for (size_t i = 0; i < p.network.size(); ++i) {
    NodeProfile& rack = p.network[i];
    if (rack.host >= 0 || rack.parent <= 0) continue;
    std::vector<int> members;
    for (const NodeProfile& n : p.network)
      if (n.parent == int(i) && n.host >= 0) members.push_back(n.host);
    if (members.size() < 2) continue;
    const int sn = p.hosts[size_t(members[0])].subnet;
    const PairClass* c = p.between(sn, sn);
    if (!c) continue;
    std::vector<double> in, across;
    for (int a : members)
      for (int b = 0; b < H; ++b) {
        if (b == a || p.hosts[size_t(b)].subnet != sn) continue;
        const double l = pd.small_min[size_t(a) * size_t(H) + size_t(b)];
        const bool same = std::find(members.begin(), members.end(), b) != members.end();
        (same ? in : across).push_back(l);
      }
    if (in.empty() || across.empty()) continue;
    const double l_in = median_of(in), l_across = median_of(across);
    const double edge = std::max(0.0, (std::max(0.0, c->Xc) - (c->latency - l_in)) / 2);
    const double step = std::max(0.0, (l_across - l_in) / 2);
    rack.up.latency = rack.down.latency = step;
    for (NodeProfile& n : p.network)
      if (n.parent == int(i) && n.host >= 0) n.up.latency = n.down.latency = edge;
  }
}

// A host's interface from its pairs' best rate and its best flow of the
// racks' shifts (0: none): the flow's where the pairs read at most 25 %
// more (write_profile), else the larger.
double interface(double pairs, double flow) { return flow > 0 && pairs <= 1.25 * flow ? flow : std::max(pairs, flow); }

// Rank 0: the profile assembled from every phase, checked and written.
int Probe::write_profile() {
  int rc = 0;
  Profile p;
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  p.created = date;
  p.tool = std::string("hetcoll-probe ") + HETCOLL_VERSION_STRING;
  char lib[MPI_MAX_LIBRARY_VERSION_STRING + 1] = {0};
  int len = 0;
  MPI_Get_library_version(lib, &len);
  p.mpi = std::string(lib, strnlen(lib, sizeof lib));
  if (auto nl = p.mpi.find('\n'); nl != std::string::npos) p.mpi.resize(nl);
  p.mode = opt.sequential ? "sequential" : "concurrent";
  p.ranks = g_size;
  p.repeats = repeats_done;
  p.budget = budget;
  p.seconds = probe_seconds;
  for (const auto& [name, t] : bar.times) {
    bool merged = false;
    for (auto& q : p.phases)
      if (q.first == name) q.second += t, merged = true;
    if (!merged) p.phases.emplace_back(name, t);
  }
  p.budget_exhausted = exhausted;
  p.small_bytes = opt.small;
  p.large_bytes = large;
  host_rows(p);
  p.small.resize(HH);
  p.large.resize(HH);
  for (size_t k = 0; k < HH; ++k) {
    p.small[k] = {pd.small_min[k], pd.small_med[k]};
    p.large[k] = {pd.large_min[k], pd.large_med[k]};
  }
  p.subnet_threshold = part.threshold;
  p.subnet_count = std::max(1, part.count());
  p.subnet_gap = part.gap;
  p.ring = ring.hosts;
  p.ring_crossings = ring.crossings;
  std::string unmeasured;
  pair_classes(p, unmeasured);
  interfaces(p);
  backplane_of(p);
  p.sharing = shares;
  // A host's interface: at least its best flow in the racks' shifts (the
  // class's pair alone may have crossed an oversubscribed rack link). Where
  // its pairs read at most 25 % more, the flow's (16x the bytes) is the
  // rate: a pair's message over its small one's time can read a latency
  // that grows with the size as bandwidth (SMPI's factors: 13.8 and 15.1
  // GB/s for 12.5 GB/s NICs).
  for (size_t h = 0; h < rack_nic.size() && h < p.hosts.size(); ++h) {
    p.hosts[h].nic_up = interface(p.hosts[h].nic_up, rack_nic[h]);
    p.hosts[h].nic_down = interface(p.hosts[h].nic_down, rack_nic[h]);
  }
  if (!found_racks.empty()) {
    // The racks explain the slowed flows the backplane experiment saw (its
    // ring crosses their links): no backplane beside them.
    p.backplane.bandwidth = 0;
    p.network = network_from_classes(p, found_racks);
    rack_latencies(p);
    // Its leaf's links: the host's interface (below).
    for (NodeProfile& n : p.network)
      if (n.host >= 0 && size_t(n.host) < rack_nic.size() && rack_nic[size_t(n.host)] > 0) {
        n.up.bandwidth = interface(n.up.bandwidth, rack_nic[size_t(n.host)]);
        n.down.bandwidth = interface(n.down.bandwidth, rack_nic[size_t(n.host)]);
      }
  }
  // The subnets' links as measured (subnet_links): the tree with them, the
  // uplinks' latencies as the classes give them.
  if (found_subnets.size() == size_t(S) && S >= 2) {
    if (p.network.empty()) p.network = network_from_classes(p, found_racks);
    int a = 0;
    for (size_t i = 1; i < p.network.size() && a < S; ++i) {
      NodeProfile& n = p.network[i];
      if (n.parent != 0 || n.host >= 0) continue;
      const RackProfile& m = found_subnets[size_t(a++)];
      if (!(m.up.bandwidth > 0) || !(m.down.bandwidth > 0)) continue;
      n.shared = m.shared;
      n.up = {m.up.bandwidth, n.up.latency, m.up.how};
      n.down = {m.shared ? m.up.bandwidth : m.down.bandwidth, n.down.latency, m.shared ? m.up.how : m.down.how};
    }
  }
  for (size_t k = 0; k < kern_med.size(); ++k)
    if (kern_med[k] > 0 || kern_min[k] > 0)
      p.reductions.push_back({reduce_op_name(kKernels[k].op), kKernels[k].type_name, {kern_min[k], kern_med[k]}});
  p.lambda = std::move(lambda);
  p.receives_use_cpu = H == 1;
  try {
    if (!unmeasured.empty())
      throw std::runtime_error("no bandwidth measured for " + unmeasured + ": no pair's " + std::to_string(large) +
                               "-byte message took longer than its " + std::to_string(opt.small) +
                               "-byte one (a machine this loaded measures noise; a larger --large may help); "
                               "no profile written");
    const std::string text = profile_to_json(p);
    parse_profile(text);  // what we write, we can read
    std::ofstream out(opt.out, std::ios::binary);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + opt.out);
    std::printf("hetcoll-probe: %d ranks on %d hosts in %d subnet%s (gap %.2fx); %.2f s%s; wrote %s\n", g_size, H,
                p.subnet_count, p.subnet_count == 1 ? "" : "s", p.subnet_gap, probe_seconds,
                exhausted ? " (budget reached: fewer repeats or phases)" : "", opt.out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetcoll-probe: %s\n", e.what());
    rc = 1;
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  program::name() = "hetcoll-probe";
  if (program::checking(argc, argv)) {
    const Options o = parse_args(argc, argv);
    program::check_writable(o.out, "-o");
    if (!o.topology.empty()) try {
        (void)read_declared_topology(o.topology);
      } catch (const std::exception& e) {
        program::fail(cat("--topology: ", e.what()));
      }
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_dup(MPI_COMM_WORLD, &g_comm);
  MPI_Comm_rank(g_comm, &g_rank);
  MPI_Comm_size(g_comm, &g_size);
  const Options opt = parse_args(argc, argv);
  MPI_Barrier(g_comm);
  g_start = MPI_Wtime();
  const int rc = Probe(opt).run();
  MPI_Comm_free(&g_comm);
  MPI_Finalize();
  return rc;
}
