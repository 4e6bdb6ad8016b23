// An application whose ranks may be configured differently (an MPMD launch
// with another HETCOLL_* environment on some ranks, or a profile rewritten
// on disk between two ranks' reads): it checks every result of bcast,
// allreduce (integers and doubles), allgather, alltoall, reduce_scatter_block,
// reduce_scatter, gather and scan from 8 B to 4 MiB against closed forms, and
// says whether hetcoll or the native MPI ran them. It never hangs silently:
// after --timeout seconds (default 120) a rank aborts the job, saying so.
//
//   mpirun -n 1 env HETCOLL_ALGO=... mpi_config_agreement : -n 2 mpi_config_agreement [options]
//   --expect native|hetcoll|any   on MPI_COMM_WORLD (default any)
//   --others native|hetcoll|any   on a communicator of world ranks 1..p-1
//                                 (rank 0, whose configuration differs, left out)
//   --reread PROFILE NEW          rank 0 reads its configuration first, then
//                                 replaces PROFILE by NEW (a rename, as `hetcoll
//                                 tune` writes), then tells the others to read theirs
//   --max BYTES                   largest message (default 4 MiB)
//   --set-model SPEC_RANK0 SPEC   after a first barrier on MPI_COMM_WORLD (its
//                                 ranks compare the environment's configurations),
//                                 hetcoll_set_model(SPEC_RANK0) on rank 0 and
//                                 (SPEC) on the others, before the calls
//   --write-table FILE EDITED     (one process) the planner's decision table
//                                 for 3 ranks on the default model, and a copy
//                                 whose allreduce entries say ring_allreduce
// Exit 0 when every result is right and every expectation holds.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "hetcoll.h"
#include "plan/decision_table.hpp"
#include "plan/table_builder.hpp"

namespace {

int world_rank = 0, world_size = 1;
long failures = 0, checks = 0;
int timeout_s = 120;

void report(bool ok, const std::string& what) {
  ++checks;
  if (ok) return;
  if (++failures <= 20) std::fprintf(stderr, "[world rank %d] WRONG %s\n", world_rank, what.c_str());
}

void on_alarm(int) {
  static const char msg[] = "mpi_config_agreement: a collective did not finish in time: HUNG\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(3);
}

std::string algo_of(MPI_Comm comm) {
  char buf[256];
  hetcoll_last_algorithm(comm, buf, sizeof buf);
  return buf;
}

// Rank r's element i, exact in a double and in an int64 sum over ranks.
int64_t value(int r, uint64_t i) { return int64_t((uint64_t(r) * 7919 + i * 31) % 100003) - 50000; }

struct Seen {
  long hetcoll = 0, native = 0;
};

// Every collective at every size on `comm`; counts which ran where.
Seen run_all(MPI_Comm comm, uint64_t max_bytes, const std::string& where) {
  Seen seen;
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  auto note = [&](const std::string& what) {
    const std::string a = algo_of(comm);
    (a.empty() ? seen.native : seen.hetcoll)++;
    return where + " " + what + " (" + (a.empty() ? "native" : a) + ")";
  };
  for (uint64_t bytes = 8; bytes <= max_bytes; bytes = bytes * 4 > max_bytes && bytes < max_bytes ? max_bytes : bytes * 4) {
    const uint64_t n = bytes / 8;  // 8-byte elements per rank (per block)
    const std::string sz = std::to_string(bytes) + " B";
    const int root = int(bytes / 8 % uint64_t(p));
    // bcast from a root that moves with the size
    {
      std::vector<int64_t> b(n);
      for (uint64_t i = 0; i < n; ++i) b[i] = r == root ? value(root, i) : -1;
      MPI_Bcast(b.data(), int(n), MPI_INT64_T, root, comm);
      bool ok = true;
      for (uint64_t i = 0; i < n; ++i) ok &= b[i] == value(root, i);
      report(ok, note("bcast " + sz + " root " + std::to_string(root)));
    }
    // allreduce, int64 and double
    {
      std::vector<int64_t> in(n), out(n, -1);
      std::vector<double> din(n), dout(n, -1);
      for (uint64_t i = 0; i < n; ++i) din[i] = double(in[i] = value(r, i));
      MPI_Allreduce(in.data(), out.data(), int(n), MPI_INT64_T, MPI_SUM, comm);
      bool ok = true;
      for (uint64_t i = 0; i < n; ++i) {
        int64_t s = 0;
        for (int k = 0; k < p; ++k) s += value(k, i);
        ok &= out[i] == s;
      }
      report(ok, note("allreduce int64 " + sz));
      MPI_Allreduce(din.data(), dout.data(), int(n), MPI_DOUBLE, MPI_SUM, comm);
      ok = true;
      for (uint64_t i = 0; i < n; ++i) ok &= dout[i] == double(out[i]);
      report(ok, note("allreduce double " + sz));
    }
    // allgather, gather (root moves), alltoall
    {
      std::vector<int64_t> in(n), all(n * uint64_t(p), -1);
      for (uint64_t i = 0; i < n; ++i) in[i] = value(r, i);
      MPI_Allgather(in.data(), int(n), MPI_INT64_T, all.data(), int(n), MPI_INT64_T, comm);
      bool ok = true;
      for (int k = 0; k < p; ++k)
        for (uint64_t i = 0; i < n; ++i) ok &= all[uint64_t(k) * n + i] == value(k, i);
      report(ok, note("allgather " + sz));
      std::fill(all.begin(), all.end(), -1);
      MPI_Gather(in.data(), int(n), MPI_INT64_T, all.data(), int(n), MPI_INT64_T, root, comm);
      ok = true;
      if (r == root)
        for (int k = 0; k < p; ++k)
          for (uint64_t i = 0; i < n; ++i) ok &= all[uint64_t(k) * n + i] == value(k, i);
      report(ok, note("gather " + sz + " root " + std::to_string(root)));
      std::vector<int64_t> blocks(n * uint64_t(p)), got(n * uint64_t(p), -1);
      for (int k = 0; k < p; ++k)  // block for rank k: rank r's values shifted by k
        for (uint64_t i = 0; i < n; ++i) blocks[uint64_t(k) * n + i] = value(r, i + uint64_t(k));
      MPI_Alltoall(blocks.data(), int(n), MPI_INT64_T, got.data(), int(n), MPI_INT64_T, comm);
      ok = true;
      for (int k = 0; k < p; ++k)
        for (uint64_t i = 0; i < n; ++i) ok &= got[uint64_t(k) * n + i] == value(k, i + uint64_t(r));
      report(ok, note("alltoall " + sz));
    }
    // reduce_scatter_block and reduce_scatter (rank k gets block k)
    {
      std::vector<int64_t> in(n * uint64_t(p)), out(n, -1);
      for (uint64_t i = 0; i < in.size(); ++i) in[i] = value(r, i);
      MPI_Reduce_scatter_block(in.data(), out.data(), int(n), MPI_INT64_T, MPI_SUM, comm);
      bool ok = true;
      for (uint64_t i = 0; i < n; ++i) {
        int64_t s = 0;
        for (int k = 0; k < p; ++k) s += value(k, uint64_t(r) * n + i);
        ok &= out[i] == s;
      }
      report(ok, note("reduce_scatter_block " + sz));
      std::vector<int> counts(static_cast<size_t>(p), static_cast<int>(n));
      std::fill(out.begin(), out.end(), -1);
      MPI_Reduce_scatter(in.data(), out.data(), counts.data(), MPI_INT64_T, MPI_SUM, comm);
      ok = true;
      for (uint64_t i = 0; i < n; ++i) {
        int64_t s = 0;
        for (int k = 0; k < p; ++k) s += value(k, uint64_t(r) * n + i);
        ok &= out[i] == s;
      }
      report(ok, note("reduce_scatter " + sz));
    }
    // scan
    {
      std::vector<int64_t> in(n), out(n, -1);
      for (uint64_t i = 0; i < n; ++i) in[i] = value(r, i);
      MPI_Scan(in.data(), out.data(), int(n), MPI_INT64_T, MPI_SUM, comm);
      bool ok = true;
      for (uint64_t i = 0; i < n; ++i) {
        int64_t s = 0;
        for (int k = 0; k <= r; ++k) s += value(k, i);
        ok &= out[i] == s;
      }
      report(ok, note("scan " + sz));
    }
    if (bytes == max_bytes) break;
  }
  return seen;
}

// Whether what ran on every rank meets the expectation ("native": nothing
// by hetcoll on any rank; "hetcoll": hetcoll ran calls on every rank).
void expect(const std::string& want, const Seen& s, MPI_Comm comm, const std::string& where) {
  long mine[2] = {s.hetcoll, s.native}, lo[2], hi[2];
  PMPI_Allreduce(mine, lo, 2, MPI_LONG, MPI_MIN, comm);
  PMPI_Allreduce(mine, hi, 2, MPI_LONG, MPI_MAX, comm);
  int r;
  MPI_Comm_rank(comm, &r);
  if (r == 0)
    std::printf("%s: hetcoll ran %ld-%ld calls per rank, native %ld-%ld\n", where.c_str(), lo[0], hi[0], lo[1], hi[1]);
  if (want == "native") report(hi[0] == 0, where + ": expected the native collectives on every rank");
  if (want == "hetcoll") report(lo[0] > 0, where + ": expected hetcoll to run on every rank");
}

// The table a site would write with `hetcoll plan --table`, and the same
// with one collective's entries edited by hand.
int write_tables(const char* path, const char* edited_path) {
  using namespace hetcoll;
  const DecisionTable t = build_decision_table(
      parse_model(default_settings().profile), {3},
      {CollOp::bcast, CollOp::allreduce, CollOp::allgather, CollOp::alltoall, CollOp::reduce_scatter_block,
       CollOp::reduce_scatter, CollOp::gather, CollOp::scan},
      uint64_t(4) << 20, {8});
  DecisionTable edited = t;
  for (TableEntry& e : edited.entries)
    if (e.op == CollOp::allreduce) e.algorithm = "ring_allreduce";
  for (auto [file, table] : {std::make_pair(path, &t), std::make_pair(edited_path, static_cast<const DecisionTable*>(&edited))}) {
    FILE* f = std::fopen(file, "w");
    if (!f) {
      std::perror(file);
      return 2;
    }
    std::fprintf(f, "%s\n", table->to_json().dump().c_str());
    std::fclose(f);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--write-table") == 0) return write_tables(argv[2], argv[3]);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  std::string want = "any", want_others = "", reread_path, reread_new, model0, model_rest;
  uint64_t max_bytes = uint64_t(4) << 20;
  bool set_model = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--expect" && i + 1 < argc) want = argv[++i];
    else if (a == "--others" && i + 1 < argc) want_others = argv[++i];
    else if (a == "--max" && i + 1 < argc) max_bytes = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--timeout" && i + 1 < argc) timeout_s = std::atoi(argv[++i]);
    else if (a == "--reread" && i + 2 < argc) {
      reread_path = argv[++i];
      reread_new = argv[++i];
    } else if (a == "--set-model" && i + 2 < argc) {
      set_model = true;
      model0 = argv[++i];
      model_rest = argv[++i];
    } else {
      if (world_rank == 0) std::fprintf(stderr, "mpi_config_agreement: unknown argument '%s'\n", a.c_str());
      MPI_Finalize();
      return 2;
    }
  }
  signal(SIGALRM, on_alarm);
  alarm(unsigned(timeout_s));

  if (!reread_path.empty()) {
    // Rank 0 reads its configuration (its first collective, on
    // MPI_COMM_SELF), then the profile changes on disk, then the others read.
    int token = 0;
    if (world_rank == 0) {
      MPI_Barrier(MPI_COMM_SELF);
      if (std::rename(reread_new.c_str(), reread_path.c_str()) != 0) {
        std::perror("rename");
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      for (int k = 1; k < world_size; ++k) MPI_Send(&token, 1, MPI_INT, k, 7, MPI_COMM_WORLD);
    } else {
      MPI_Recv(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Barrier(MPI_COMM_SELF);
    }
  }
  if (set_model) {
    MPI_Barrier(MPI_COMM_WORLD);
    const std::string& spec = world_rank == 0 ? model0 : model_rest;
    if (hetcoll_set_model(spec.c_str()) != HETCOLL_SUCCESS)
      std::fprintf(stderr, "[world rank %d] hetcoll_set_model('%s'): %s\n", world_rank, spec.c_str(), hetcoll_last_error());
  }

  expect(want, run_all(MPI_COMM_WORLD, max_bytes, "MPI_COMM_WORLD"), MPI_COMM_WORLD, "MPI_COMM_WORLD");
  if (!want_others.empty() && world_size > 2) {
    MPI_Comm others;
    MPI_Comm_split(MPI_COMM_WORLD, world_rank == 0 ? MPI_UNDEFINED : 1, world_rank, &others);
    if (others != MPI_COMM_NULL) {
      expect(want_others, run_all(others, max_bytes, "ranks 1.."), others, "ranks 1..");
      MPI_Comm_free(&others);
    }
  }
  long totals[2] = {failures, checks};
  PMPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0)
    std::printf("mpi_config_agreement p=%d: %ld checks, %ld wrong\n", world_size, totals[1], totals[0]);
  MPI_Finalize();
  return totals[0] ? 1 : 0;
}
