// Phases 5-8, each host by itself: Banikazemi's overheads, shared memory,
// the reduction kernels and memcpy, Bruck's λ experiments.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "measure/probe/probe.hpp"

namespace hetcoll::probe {

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

}  // namespace hetcoll::probe
