// What flows at once share: phase 4b, the backplane (every host to the next
// of its subnet at once), and 4c, one host's interface between a near and a far flow.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "measure/probe/probe.hpp"

namespace hetcoll::probe {

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

}  // namespace hetcoll::probe
