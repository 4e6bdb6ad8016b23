// Phases 2-4, the pairs of hosts: every pair's latency and bandwidth, the
// subnets they make, and per class one pair alone, both ways, one pair both ways.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "measure/probe/probe.hpp"

namespace hetcoll::probe {

namespace {

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

}  // namespace

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

}  // namespace hetcoll::probe
