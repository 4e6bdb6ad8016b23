// Non-blocking and persistent collectives under hetcoll, checked against
// the native library (PMPI_*, blocking) in the same run:
//   matrix      every non-blocking collective × sizes 0 .. 4 MiB × in place
//               × datatypes (int sum, double max, 2int maxloc, a user op —
//               declined, still a request —, a gapped derived type) × roots
//               × communicators (world, halves, reversed), one at a time
//   batches     up to 8 outstanding collectives of mixed kinds on
//               overlapping communicators, with the application's own
//               point-to-point requests in the same arrays, completed by
//               every wait and test variant in random orders (each rank
//               its own order)
//   persistent  MPI_<Coll>_init (MPICH) / MPIX_<Coll>_init (Open MPI),
//               started many times with new data (MPI_Start, MPI_Startall),
//               freed; skipped where the MPI has none
//   progress    a rank blocked in MPI_Recv, MPI_Probe, a blocking
//               collective on another communicator or a declined one while
//               a collective it started is needed by a rank that sends to it
//   errors      a mismatched MPI_Ibcast: MPI_ERR_TRUNCATE in MPI_Wait,
//               MPI_ERR_IN_STATUS and the status in MPI_Waitall, under
//               MPI_ERRORS_RETURN; MPI_Cancel on a collective in progress
//   threads     two threads, each with its own communicator, issuing and
//               completing collectives at once (MPI_THREAD_MULTIPLE)
//   mpirun -n K mpi_nonblocking [SECTION...] [--seed S] [--quick] [--multiple]
// (--multiple: MPI_THREAD_MULTIPLE, as the section threads asks anyway)
#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "hetcoll.h"

#include "nonblocking_cases.hpp"

using namespace nb_cases;

namespace {

// Completes every request of `reqs` with `variant` (0..7), in an order of
// this rank's own.
void complete_all(std::vector<MPI_Request>& reqs, int variant, std::mt19937& rng) {
#ifdef SMPI_H
  // SimGrid: a loop of MPI_Test* advances no simulated time (smpi/test:0),
  // so nothing it waits for ever arrives: the waits only.
  variant %= 4;
#endif
  const int n = int(reqs.size());
  std::vector<int> order(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) order[size_t(i)] = i;
  std::shuffle(order.begin(), order.end(), rng);
  auto all_null = [&] {
    for (auto r : reqs)
      if (r != MPI_REQUEST_NULL) return false;
    return true;
  };
  long guard = 0;
  switch (variant) {
    case 0:  // MPI_Wait, one at a time
      for (int i : order) {
        MPI_Status s;
        if (MPI_Wait(&reqs[size_t(i)], &s) != MPI_SUCCESS) fail("MPI_Wait");
      }
      break;
    case 1: {  // MPI_Waitall
      std::vector<MPI_Status> st(reqs.size());
      if (MPI_Waitall(n, reqs.data(), st.data()) != MPI_SUCCESS) fail("MPI_Waitall");
      break;
    }
    case 2:  // MPI_Waitany until none is left
      for (;;) {
        int idx = 0;
        MPI_Status s;
        if (MPI_Waitany(n, reqs.data(), &idx, &s) != MPI_SUCCESS) fail("MPI_Waitany");
        if (idx == MPI_UNDEFINED) break;
        if (reqs[size_t(idx)] != MPI_REQUEST_NULL) fail("MPI_Waitany left the request it completed");
      }
      break;
    case 3:  // MPI_Waitsome
      for (;;) {
        int out = 0;
        std::vector<int> idx(reqs.size());
        if (MPI_Waitsome(n, reqs.data(), &out, idx.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS) fail("MPI_Waitsome");
        if (out == MPI_UNDEFINED) break;
        if (out == 0) fail("MPI_Waitsome completed nothing");
      }
      break;
    case 4:  // MPI_Test, polling in this rank's order
      while (!all_null() && ++guard < 100000000)
        for (int i : order) {
          int flag = 0;
          if (MPI_Test(&reqs[size_t(i)], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) fail("MPI_Test");
        }
      break;
    case 5:  // MPI_Testall
      for (int flag = 0; !flag && ++guard < 100000000;)
        if (MPI_Testall(n, reqs.data(), &flag, MPI_STATUSES_IGNORE) != MPI_SUCCESS) fail("MPI_Testall");
      if (!all_null()) fail("MPI_Testall said done with requests left");
      break;
    case 6:  // MPI_Testany
      for (;;) {
        int idx = 0, flag = 0;
        if (MPI_Testany(n, reqs.data(), &idx, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS) fail("MPI_Testany");
        if (flag && idx == MPI_UNDEFINED) break;
        if (++guard > 100000000) break;
      }
      break;
    default: {  // MPI_Testsome
      std::vector<int> idx(reqs.size());
      for (;;) {
        int out = 0;
        if (MPI_Testsome(n, reqs.data(), &out, idx.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS) fail("MPI_Testsome");
        if (out == MPI_UNDEFINED) break;
        if (++guard > 100000000) break;
      }
    }
  }
  if (!all_null()) fail("requests left after completion variant " + std::to_string(variant));
}

const Kind kAll[] = {Kind::bcast, Kind::reduce, Kind::allreduce, Kind::gather, Kind::gatherv, Kind::scatter,
                     Kind::scatterv, Kind::allgather, Kind::allgatherv, Kind::reduce_scatter_block,
                     Kind::reduce_scatter, Kind::alltoall, Kind::alltoallv, Kind::barrier, Kind::scan, Kind::exscan};

Type type_for(Kind k, int pick) {
  if (is_reduction(k)) {
    const Type t[] = {Type::int_sum, Type::double_max, Type::twoint_maxloc, Type::user_op};
    return t[pick % 4];
  }
  return pick % 2 ? Type::gapped : Type::int_sum;
}

bool hetcoll_runs(const Case& c) { return c.type != Type::user_op; }

struct Comms {
  std::vector<MPI_Comm> list;  // world, dup of world, my half, world reversed
};

Comms make_comms() {
  Comms c;
  c.list.push_back(MPI_COMM_WORLD);
  MPI_Comm d, h, r;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &h);
  MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &r);
  c.list.push_back(d);
  c.list.push_back(h);
  c.list.push_back(r);
  return c;
}

// ---------------------------------------------------------------- sections

// Every collective × sizes × in place × types × roots × communicators, one at a time.
void matrix(const Comms& comms, std::mt19937& rng, bool quick) {
  const int sizes[] = {0, 1, 3, 1000, 16411};
  uint64_t seed = 1;
  for (Kind k : kAll)
    for (int count : sizes)
      for (int pick = 0; pick < (is_reduction(k) ? 4 : 2); ++pick)
        for (bool ip : {false, true}) {
          if (ip && !in_place_allowed(k)) continue;
          if (ip && type_for(k, pick) == Type::gapped && (k == Kind::alltoall || k == Kind::alltoallv)) continue;
          MPI_Comm comm = comms.list[size_t(seed % comms.list.size())];
          int p = 0;
          MPI_Comm_size(comm, &p);
          const int root = int(seed % uint64_t(p));
          if (quick && count > 1000) continue;
          Case c = make_case(k, comm, root, count, type_for(k, pick), ip, ++seed);
          in_place_layout(c);
          if (std::getenv("NB_VERBOSE") && world_rank == 0) std::fprintf(stderr, "%s\n", c.label.c_str());
          compute_reference(c);
          std::vector<char> out = initial_out(c);
          MPI_Request req = MPI_REQUEST_NULL;
          if (call(c, Form::nonblocking, out, &req) != MPI_SUCCESS) fail(c.label + ": MPI_I… failed");
          if (hetcoll_runs(c)) {
            char algo[256] = {0};
            hetcoll_last_algorithm(c.comm, algo, sizeof algo);
            if (algo[0]) ++hetcoll_ran;
          } else {  // declined: the reason names the call the application made
            const std::string why = hetcoll_last_error();
            if (why.rfind("MPI_I", 0) != 0) fail(c.label + ": the decline names \"" + why + "\", not MPI_I…");
          }
          std::vector<MPI_Request> one{req};
          complete_all(one, int(rng() % 8), rng);
          compare(c, out, "non-blocking");
        }
  // 4 MiB: the large end, on world.
  for (Kind k : {Kind::allreduce, Kind::bcast, Kind::reduce_scatter_block, Kind::allgather}) {
    const int count = k == Kind::allgather || k == Kind::reduce_scatter_block ? (1 << 20) / world_size : 1 << 20;
    Case c = make_case(k, MPI_COMM_WORLD, 0, count, Type::int_sum, false, ++seed);
    compute_reference(c);
    std::vector<char> out = initial_out(c);
    MPI_Request req;
    call(c, Form::nonblocking, out, &req);
    std::vector<MPI_Request> one{req};
    complete_all(one, int(rng() % 8), rng);
    compare(c, out, "non-blocking 4 MiB");
  }
}

// Up to 8 outstanding collectives of mixed kinds on overlapping
// communicators, with point-to-point requests in the same arrays.
void batches(const Comms& comms, std::mt19937& rng, int rounds) {
  std::mt19937 shared(12345);  // the same on every rank: the same collectives in the same order
  for (int round = 0; round < rounds; ++round) {
    const int n = 1 + int(shared() % 8);
    std::vector<std::unique_ptr<Case>> cases;
    std::vector<std::vector<char>> outs;
    for (int i = 0; i < n; ++i) {
      const Kind k = kAll[shared() % 16];
      const int count = int(shared() % 3 == 0 ? shared() % 20000 : shared() % 64);
      const int pick = int(shared() % 4);
      bool ip = in_place_allowed(k) && shared() % 3 == 0;
      const Type t = type_for(k, pick);
      if (t == Type::gapped && (k == Kind::alltoall || k == Kind::alltoallv)) ip = false;
      MPI_Comm comm = comms.list[shared() % comms.list.size()];
      const int root = int(shared() % 64);
      auto c = std::make_unique<Case>(make_case(k, comm, root, count, t, ip, uint64_t(round) * 100 + uint64_t(i)));
      in_place_layout(*c);
      compute_reference(*c);
      cases.push_back(std::move(c));
    }
    for (auto& c : cases) outs.push_back(initial_out(*c));
    std::vector<MPI_Request> reqs;
    Ring ring;
    const bool with_ring = shared() % 2;
    const int variant = int(rng() % 8);  // each rank its own way to complete
    for (int i = 0; i < n; ++i) {
      MPI_Request r;
      if (call(*cases[size_t(i)], Form::nonblocking, outs[size_t(i)], &r) != MPI_SUCCESS)
        fail(cases[size_t(i)]->label + ": MPI_I… failed");
      reqs.push_back(r);
      if (with_ring && i == n / 2) {
        ring.post(round % 1000);
        reqs.push_back(ring.r[0]);
        reqs.push_back(ring.r[1]);
      }
    }
    complete_all(reqs, variant, rng);
    for (int i = 0; i < n; ++i) compare(*cases[size_t(i)], outs[size_t(i)], "in a batch (variant " + std::to_string(variant) + ")");
    if (with_ring) ring.check(round % 1000);
  }
}

void persistent(const Comms& comms, std::mt19937& rng) {
#if HAVE_PERSISTENT
  std::mt19937 shared(777);
  // 12 rounds of mixed small ones, then one of 4 MiB (allreduce in place, bcast, allgather).
  for (int round = 0; round < 13; ++round) {
    const bool large = round == 12;
    const int n = large ? 3 : 1 + int(shared() % 6);
    std::vector<std::unique_ptr<Case>> cases;
    std::vector<std::vector<char>> outs;
    std::vector<MPI_Request> reqs;
    for (int i = 0; i < n; ++i) {
      const Kind big[] = {Kind::allreduce, Kind::bcast, Kind::allgather};
      const Kind k = large ? big[i] : kAll[shared() % 16];
      const int count = large ? (k == Kind::allgather ? (1 << 20) / world_size : 1 << 20) : int(shared() % 2000);
      const Type t = large ? Type::int_sum : type_for(k, int(shared() % 4));
      bool ip = large ? i == 0 : in_place_allowed(k) && shared() % 3 == 0;
      if (t == Type::gapped && (k == Kind::alltoall || k == Kind::alltoallv)) ip = false;
      MPI_Comm comm = large ? MPI_COMM_WORLD : comms.list[shared() % comms.list.size()];
      auto c = std::make_unique<Case>(make_case(k, comm, int(shared() % 64), count, t, ip, uint64_t(round)));
      in_place_layout(*c);
      outs.push_back(initial_out(*c));  // fixed: the persistent request keeps its address
      cases.push_back(std::move(c));
    }
    for (int i = 0; i < n; ++i) {
      MPI_Request r;
      if (call(*cases[size_t(i)], Form::persistent, outs[size_t(i)], &r) != MPI_SUCCESS)
        fail(cases[size_t(i)]->label + ": persistent init failed");
      reqs.push_back(r);
    }
    for (int start = 0; start < 4; ++start) {
      // New data in the same buffers, the reference, then the start.
      for (int i = 0; i < n; ++i) {
        Case& c = *cases[size_t(i)];
        fill_values(c.send.data(), c.send_elems(), c, uint64_t(round * 10 + start + 1000));
        fill_values(c.recv.data(), c.recv_elems(), c, uint64_t(round * 10 + start + 2000));
        compute_reference(c);
        std::vector<char> init = initial_out(c);
        if (init.size() != outs[size_t(i)].size()) fail(c.label + ": the test's buffer changed size");
        std::memcpy(outs[size_t(i)].data(), init.data(), std::min(init.size(), outs[size_t(i)].size()));
      }
      if (start % 2 == 0) {
        if (MPI_Startall(n, reqs.data()) != MPI_SUCCESS) fail("MPI_Startall");
      } else {
        for (auto& r : reqs)
          if (MPI_Start(&r) != MPI_SUCCESS) fail("MPI_Start");
      }
      std::vector<MPI_Request> copy = reqs;
      // Persistent requests stay allocated: complete with a variant, then the handles are the same.
      int variant = int(rng() % 4);
      if (const char* v = std::getenv("NB_VARIANT")) variant = std::atoi(v);
#ifdef MPICH_VERSION
      // MPICH 4.0.2's MPI_Waitany returns a persistent collective request
      // again after it completed (inactive), with HETCOLL_DISABLE=1 too:
      // the loop below would stop early. Not with MPICH.
      if (variant == 3) variant = 1;
#endif
      if (variant == 0) {
        for (auto& r : copy) MPI_Wait(&r, MPI_STATUS_IGNORE);
      } else if (variant == 1) {
        MPI_Waitall(n, copy.data(), MPI_STATUSES_IGNORE);
      } else if (variant == 2) {
        for (int flag = 0; !flag;) MPI_Testall(n, copy.data(), &flag, MPI_STATUSES_IGNORE);
      } else {
        for (int left = n; left > 0;) {
          int idx;
          MPI_Waitany(n, copy.data(), &idx, MPI_STATUS_IGNORE);
          if (idx == MPI_UNDEFINED) break;
          --left;
        }
      }
      for (int i = 0; i < n; ++i) {
        if (copy[size_t(i)] != reqs[size_t(i)]) fail("a persistent request's handle changed when it completed");
        compare(*cases[size_t(i)], outs[size_t(i)],
                "persistent start " + std::to_string(start) + " (completion " + std::to_string(variant) + ")");
      }
      // Inactive now: a wait returns at once.
      MPI_Status s;
      if (MPI_Wait(&copy[0], &s) != MPI_SUCCESS) fail("MPI_Wait on an inactive persistent request");
    }
    for (auto& r : reqs) {
      if (MPI_Request_free(&r) != MPI_SUCCESS) fail("MPI_Request_free");
      if (r != MPI_REQUEST_NULL) fail("MPI_Request_free left the handle");
    }
  }
#else
  (void)comms;
  (void)rng;
  if (world_rank == 0) std::printf("persistent: SKIPPED (this MPI has no persistent collectives)\n");
#endif
}

// Progress while the application blocks elsewhere: the even ranks start a
// collective and block in a call that needs an odd rank to have completed
// it first.
void progress(const Comms& comms) {
  if (world_size < 2) return;
  MPI_Comm half = comms.list[2];
  int level = 0;
  MPI_Query_thread(&level);
  for (int scenario = 0; scenario < 5; ++scenario) {
    // A blocking collective hetcoll leaves to the native library cannot
    // advance hetcoll's collectives itself: the progress thread does,
    // which needs MPI_THREAD_MULTIPLE (progress.hpp).
    if (scenario == 3 && level < MPI_THREAD_MULTIPLE) {
      if (world_rank == 0) std::printf("progress: a native blocking collective meanwhile: SKIPPED (no MPI_THREAD_MULTIPLE)\n");
      continue;
    }
    for (int count : {1, 100000}) {
      std::vector<int> in(size_t(count), world_rank + 1), out(size_t(count), 0);
      MPI_Request r;
      MPI_Iallreduce(in.data(), out.data(), count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
      const int partner = world_rank ^ 1;
      int token = 7;
      const bool even = world_rank % 2 == 0;
      if (partner < world_size) {
        if (even) {  // blocks first, completes later
          switch (scenario) {
            case 0: MPI_Recv(&token, 1, MPI_INT, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break;
            case 1: {
#ifndef SMPI_H  // hetcoll's MPI_Probe polls, which advances no simulated time: SimGrid's own, blocking
              MPI_Status s;
              MPI_Probe(partner, 99, MPI_COMM_WORLD, &s);
#endif
              MPI_Recv(&token, 1, MPI_INT, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
              break;
            }
            case 2: MPI_Sendrecv(&token, 1, MPI_INT, partner, 98, &token, 1, MPI_INT, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE); break;
            case 3: {  // a declined (user-op) blocking collective on another communicator
              int v = 1, sum = 0;
              MPI_Allreduce(&v, &sum, 1, MPI_INT, g_user_op, half);
              MPI_Recv(&token, 1, MPI_INT, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
              break;
            }
            default: {  // a hetcoll blocking collective on another communicator
              int v = 1, sum = 0;
              MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, half);
              MPI_Recv(&token, 1, MPI_INT, partner, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
              break;
            }
          }
          MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {  // completes first, then sends
          MPI_Wait(&r, MPI_STATUS_IGNORE);
          if (scenario == 2) {
            MPI_Sendrecv(&token, 1, MPI_INT, partner, 99, &token, 1, MPI_INT, partner, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          } else {
            if (scenario >= 3) {
              int v = 1, sum = 0;
              MPI_Allreduce(&v, &sum, 1, MPI_INT, scenario == 3 ? g_user_op : MPI_SUM, half);
            }
            MPI_Send(&token, 1, MPI_INT, partner, 99, MPI_COMM_WORLD);
          }
        }
      } else {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (scenario >= 3) {
          int v = 1, sum = 0;
          MPI_Allreduce(&v, &sum, 1, MPI_INT, scenario == 3 ? g_user_op : MPI_SUM, half);
        }
      }
      ++checks;
      const int want = world_size * (world_size + 1) / 2;
      if (out[0] != want || out[size_t(count) - 1] != want)
        fail("progress scenario " + std::to_string(scenario) + ": wrong sum " + std::to_string(out[0]));
    }
  }
}

// Errors reach the request's completion as MPI says: a mismatched Ibcast
// (the root sends 100 ints, the others expect 50; every receiver hears
// from the root, so a truncation and not a hang) under MPI_ERRORS_RETURN
// gives MPI_Wait the MPI_ERR_TRUNCATE class on every receiver, and MPI_Waitall
// MPI_ERR_IN_STATUS with the class in the request's status; the requests
// are freed; the communicator goes on working. MPI_Request_free and
// MPI_Cancel on a collective in progress are MPI_ERR_REQUEST.
void errors() {
  if (world_size < 2) return;
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
#ifdef SMPI_H
  const int variants = 0;  // SimGrid 3.32 does not report a truncated receive
#else
  const int variants = 2;
#endif
  for (int variant = 0; variant < variants; ++variant) {
    std::vector<int> buf(100, world_rank == 0 ? 7 : -1);
    hetcoll_set_algorithm("bcast:@star_bcast");
    MPI_Request r[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (MPI_Ibcast(buf.data(), world_rank == 0 ? 100 : 50, MPI_INT, 0, c, &r[0]) != MPI_SUCCESS)
      fail("a mismatched MPI_Ibcast failed to start");
    MPI_Status st[2];
    int rc = variant == 0 ? MPI_Wait(&r[0], &st[0]) : MPI_Waitall(2, r, st);
    hetcoll_set_algorithm("");
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(variant == 0 ? rc : st[0].MPI_ERROR, &cls);
    ++checks;
    if (world_rank != 0 && cls != MPI_ERR_TRUNCATE)
      fail(std::string(variant ? "MPI_Waitall" : "MPI_Wait") + " on a mismatched MPI_Ibcast: class " + std::to_string(cls) +
           ", not MPI_ERR_TRUNCATE");
    if (variant == 1 && rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) fail("MPI_Waitall's code is not MPI_ERR_IN_STATUS");
    if (r[0] != MPI_REQUEST_NULL) fail("the failed request was not freed");
    // (What a truncated receive leaves in the buffer MPI does not say:
    // MPICH leaves nothing there, Open MPI the bytes that fit.)
  }
  // Erroneous uses of a collective's request.
  {
    std::vector<int> in(1 << 16, 1), out(in.size());
    MPI_Request r;
    MPI_Iallreduce(in.data(), out.data(), int(in.size()), MPI_INT, MPI_SUM, c, &r);
    char algo[64] = {0};
    hetcoll_last_algorithm(c, algo, sizeof algo);
    int flag = 0;
    MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    if (!flag && algo[0]) {  // still in progress, and hetcoll's
      ++checks;
      int cls = MPI_SUCCESS;
      MPI_Error_class(MPI_Cancel(&r), &cls);
      if (cls != MPI_ERR_REQUEST) fail("MPI_Cancel on a collective in progress: not MPI_ERR_REQUEST");
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    ++checks;
    if (out[5] != world_size) fail("the allreduce after the errors");
  }
  // The communicator still works, blocking and not.
  std::vector<int> v(10, world_rank), w(10);
  MPI_Request r;
  int rc = MPI_Iallreduce(v.data(), w.data(), 10, MPI_INT, MPI_SUM, c, &r);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
  ++checks;
  if (rc != MPI_SUCCESS || w[3] != world_size * (world_size - 1) / 2) fail("MPI_Iallreduce after the errors");
  // MPI lets the application free a communicator with collectives in
  // flight on it: they complete normally.
  std::vector<int> big(1 << 17, world_rank + 1), sum(big.size());
  MPI_Iallreduce(big.data(), sum.data(), int(big.size()), MPI_INT, MPI_SUM, c, &r);
  MPI_Comm_free(&c);
  rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
  ++checks;
  if (rc != MPI_SUCCESS || sum[1000] != world_size * (world_size + 1) / 2)
    fail("MPI_Iallreduce on a communicator freed while it ran");
}

void threads(std::mt19937&) {
  int level = 0;
  MPI_Query_thread(&level);
  if (level < MPI_THREAD_MULTIPLE) {
    if (world_rank == 0) std::printf("threads: SKIPPED (MPI_THREAD_MULTIPLE not provided)\n");
    return;
  }
  MPI_Comm c[2];
  MPI_Comm_dup(MPI_COMM_WORLD, &c[0]);
  MPI_Comm_dup(MPI_COMM_WORLD, &c[1]);
  std::vector<std::thread> ts;
  for (int t = 0; t < 2; ++t)
    ts.emplace_back([&, t] {
      std::mt19937 rng(uint32_t(world_rank * 31 + t));
      for (int round = 0; round < 30; ++round) {
        std::vector<std::unique_ptr<Case>> cases;
        std::vector<std::vector<char>> outs;
        std::vector<MPI_Request> reqs;
        for (int i = 0; i < 3; ++i) {
          const Kind k = kAll[(round * 3 + i + t * 5) % 16];
          auto cs = std::make_unique<Case>(make_case(k, c[t], round, 10 + round * 37, type_for(k, round), false, uint64_t(round * 7 + i)));
          compute_reference(*cs);
          outs.push_back(initial_out(*cs));
          cases.push_back(std::move(cs));
        }
        for (int i = 0; i < 3; ++i) {
          MPI_Request r;
          call(*cases[size_t(i)], Form::nonblocking, outs[size_t(i)], &r);
          reqs.push_back(r);
        }
        complete_all(reqs, int(rng() % 8), rng);
        for (int i = 0; i < 3; ++i) compare(*cases[size_t(i)], outs[size_t(i)], "thread " + std::to_string(t));
      }
    });
  for (auto& th : ts) th.join();
  MPI_Comm_free(&c[0]);
  MPI_Comm_free(&c[1]);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> sections;
  uint32_t seed = 1;
  bool quick = false, want_threads = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--seed" && i + 1 < argc) seed = uint32_t(std::atoi(argv[++i]));
    else if (a == "--quick") quick = true;
    else if (a == "--multiple") want_threads = true;
    else sections.push_back(a);
  }
  if (sections.empty()) sections = {"matrix", "batches", "persistent", "progress", "errors"};
  for (auto& s : sections) want_threads |= s == "threads";
  int provided = 0;
  MPI_Init_thread(&argc, &argv, want_threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Op_create(user_sum, 1, &g_user_op);
  MPI_Datatype v;
  MPI_Type_vector(2, 1, 2, MPI_INT, &v);
  MPI_Type_create_resized(v, 0, 12, &g_gapped);
  MPI_Type_commit(&g_gapped);
  MPI_Type_free(&v);
  std::mt19937 rng(seed * 7919 + uint32_t(world_rank));
  Comms comms = make_comms();
  for (const std::string& s : sections) {
    const long before = failures.load();
    if (s == "matrix") matrix(comms, rng, quick);
    else if (s == "batches") batches(comms, rng, quick ? 40 : 200);
    else if (s == "persistent") persistent(comms, rng);
    else if (s == "progress") progress(comms);
    else if (s == "threads") threads(rng);
    else if (s == "errors") errors();
    else {
      if (world_rank == 0) std::fprintf(stderr, "unknown section %s\n", s.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (world_rank == 0) std::printf("%s: %s\n", s.c_str(), failures.load() == before ? "ok" : "FAILED");
  }
  long total[3] = {failures.load(), checks.load(), hetcoll_ran.load()}, sum[3];
  PMPI_Allreduce(total, sum, 3, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0)
    std::printf("%ld checks, %ld failures; hetcoll ran %ld of the non-blocking calls it could\n", sum[1], sum[0], sum[2]);
  for (size_t i = 1; i < comms.list.size(); ++i) MPI_Comm_free(&comms.list[i]);
  MPI_Type_free(&g_gapped);
  MPI_Op_free(&g_user_op);
  MPI_Finalize();
  return sum[0] == 0 ? 0 : 1;
}
