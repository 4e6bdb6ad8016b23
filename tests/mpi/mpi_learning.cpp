// Choices learned in the job (HETCOLL_LEARN, docs/learning.md), through
// the MPI entry points: a job that calls collectives often, one rank late
// by a varying amount before its calls (so that every rank's own clock says
// something else), several sites interleaved, two sub-communicators with
// different numbers of calls, then the non-blocking and persistent forms.
// At every call, every result is checked exactly, and every rank must have
// run the same algorithm (hetcoll_last_algorithm, compared across the
// communicator with PMPI_Allgather: never through hetcoll).
//   mpirun -n P mpi_learning [--calls N] [--expect learn|exact|fixed]
//   learn: a floating-point allreduce ran more than one algorithm (it
//          explored: HETCOLL_LEARN=1, the default);
//   exact: the integer allreduce explored, and every floating-point
//          allreduce ran one algorithm (HETCOLL_LEARN=exact);
//   fixed: every site ran one (HETCOLL_LEARN=0, or a forced choice).
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "hetcoll.h"
#include "persistent_form.hpp"

namespace {

// static: SMPI runs ranks as threads, each with its own copy of these.
static long failures = 0, checks = 0;
static int world_rank = 0;

void fail(const std::string& what) {
  if (++failures <= 10) std::fprintf(stderr, "rank %d: FAIL %s\n", world_rank, what.c_str());
}

uint64_t hash_of(const char* s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; ++s) h = (h ^ uint8_t(*s)) * 1099511628211ull;
  return h;
}

// Every rank of comm ran the same algorithm in its last call; returns it.
std::string same_everywhere(MPI_Comm comm, const std::string& site, int call) {
  char name[256] = {0};
  hetcoll_last_algorithm(comm, name, sizeof name);
  int p = 0;
  PMPI_Comm_size(comm, &p);
  const uint64_t mine = hash_of(name);
  std::vector<uint64_t> all(static_cast<size_t>(p));
  PMPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, comm);
  ++checks;
  for (uint64_t h : all)
    if (h != mine) {
      fail(site + " call " + std::to_string(call) + ": ranks ran different algorithms (this one: '" + name + "')");
      break;
    }
  return name;
}

struct Sites {
  std::map<std::string, std::set<std::string>> ran;  // site: the algorithms it ran ("" native)
};

void check_doubles(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ++checks;
  for (size_t k = 0; k < want.size(); ++k)
    if (got[k] != want[k]) {
      fail(what + ": element " + std::to_string(k) + " is " + std::to_string(got[k]) + ", expected " +
           std::to_string(want[k]));
      return;
    }
}

// One call of each site, call i, on comm.
void one_round(MPI_Comm comm, int i, int late_rank, Sites& sites, const std::string& tag) {
  int r = 0, p = 0;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  // Rank late_rank arrives late by 0, 150 or 300 us: the others' own time of
  // the call includes waiting for it, its own does not.
  auto arrive = [&] {
    if (r == late_rank) usleep(useconds_t(150 * (i % 3)));
  };
  for (int n : {1, 8192, 131072}) {  // allreduce of 8 B, 64 KiB, 1 MiB
    std::vector<double> a(static_cast<size_t>(n)), b(a.size()), want(a.size());
    for (int k = 0; k < n; ++k) {
      a[size_t(k)] = r + i + k % 7;
      want[size_t(k)] = double(p) * (p - 1) / 2 + double(p) * (i + k % 7);
    }
    arrive();
    MPI_Allreduce(a.data(), b.data(), n, MPI_DOUBLE, MPI_SUM, comm);
    const std::string site = tag + " allreduce " + std::to_string(8 * n) + "B";
    check_doubles(b, want, site + " call " + std::to_string(i));
    sites.ran[site].insert(same_everywhere(comm, site, i));
  }
  {  // allreduce of 64 KiB of int: the same bits whichever algorithm runs
    const int n = 16384;
    std::vector<int> a(static_cast<size_t>(n)), b(a.size());
    for (int k = 0; k < n; ++k) a[size_t(k)] = (r + 1) * (k % 1000) - i;
    arrive();
    MPI_Allreduce(a.data(), b.data(), n, MPI_INT, MPI_SUM, comm);
    ++checks;
    for (int k = 0; k < n; ++k)
      if (b[size_t(k)] != p * (p + 1) / 2 * (k % 1000) - p * i) {
        fail(tag + " int allreduce call " + std::to_string(i) + ": element " + std::to_string(k));
        break;
      }
    sites.ran[tag + " int allreduce"].insert(same_everywhere(comm, tag + " int allreduce", i));
  }
  {  // bcast of 256 KiB from the last rank
    const int n = 262144, root = p - 1;
    std::vector<unsigned char> buf(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) buf[size_t(k)] = r == root ? uint8_t(i * 31 + k) : 0;
    arrive();
    MPI_Bcast(buf.data(), n, MPI_BYTE, root, comm);
    ++checks;
    for (int k = 0; k < n; ++k)
      if (buf[size_t(k)] != uint8_t(i * 31 + k)) {
        fail(tag + " bcast call " + std::to_string(i) + ": byte " + std::to_string(k));
        break;
      }
    sites.ran[tag + " bcast"].insert(same_everywhere(comm, tag + " bcast", i));
  }
  {  // allgather of 16 KiB a rank
    const int n = 16384;
    std::vector<unsigned char> mine(static_cast<size_t>(n)), all(mine.size() * static_cast<size_t>(p));
    for (int k = 0; k < n; ++k) mine[size_t(k)] = uint8_t(r * 13 + i + k);
    arrive();
    MPI_Allgather(mine.data(), n, MPI_BYTE, all.data(), n, MPI_BYTE, comm);
    ++checks;
    for (int q = 0; q < p; ++q)
      for (int k = 0; k < n; ++k)
        if (all[size_t(q) * n + size_t(k)] != uint8_t(q * 13 + i + k)) {
          fail(tag + " allgather call " + std::to_string(i) + ": rank " + std::to_string(q) + "'s byte " +
               std::to_string(k));
          q = p;
          break;
        }
    sites.ran[tag + " allgather"].insert(same_everywhere(comm, tag + " allgather", i));
  }
  arrive();
  MPI_Barrier(comm);
  sites.ran[tag + " barrier"].insert(same_everywhere(comm, tag + " barrier", i));
}

// The non-blocking and persistent forms of the 1 MiB allreduce, after the
// blocking calls have learned: right results, the same algorithm everywhere.
void other_forms(MPI_Comm comm, Sites& sites) {
  int r = 0, p = 0;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  const int n = 131072;
  std::vector<double> a(static_cast<size_t>(n)), b(a.size()), want(a.size());
  for (int i = 0; i < 8; ++i) {
    for (int k = 0; k < n; ++k) {
      a[size_t(k)] = r * 3 + i + k % 5;
      want[size_t(k)] = 3.0 * p * (p - 1) / 2 + double(p) * (i + k % 5);
    }
    MPI_Request req;
    MPI_Iallreduce(a.data(), b.data(), n, MPI_DOUBLE, MPI_SUM, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_doubles(b, want, "MPI_Iallreduce call " + std::to_string(i));
    sites.ran["world iallreduce"].insert(same_everywhere(comm, "MPI_Iallreduce", i));
  }
#if HAVE_PERSISTENT
  MPI_Request req;
  PINIT(Allreduce)(a.data(), b.data(), n, MPI_DOUBLE, MPI_SUM, comm, MPI_INFO_NULL, &req);
  sites.ran["world allreduce_init"].insert(same_everywhere(comm, "MPI_Allreduce_init", 0));
  for (int i = 0; i < 8; ++i) {
    for (int k = 0; k < n; ++k) {
      a[size_t(k)] = r + 2 * i + k % 3;
      want[size_t(k)] = double(p) * (p - 1) / 2 + double(p) * (2 * i + k % 3);
    }
    MPI_Start(&req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_doubles(b, want, "persistent allreduce start " + std::to_string(i));
  }
  MPI_Request_free(&req);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int calls = 120;
  std::string expect = "learn";
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--calls")) calls = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--expect")) expect = argv[a + 1];
  }
  Sites sites;
  const int late = p > 1 ? 1 : 0;
  for (int i = 0; i < calls; ++i) one_round(MPI_COMM_WORLD, i, late, sites, "world");
  // Halves with different numbers of calls: each learns on its own.
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, world_rank, &half);
  const int half_calls = world_rank % 2 ? calls / 2 : calls;
  for (int i = 0; i < half_calls; ++i) one_round(half, i, 0, sites, world_rank % 2 ? "odd" : "even");
  MPI_Comm_free(&half);
  other_forms(MPI_COMM_WORLD, sites);
  // What the sites ran, and whether that is what was expected.
  size_t explored = 0, floating_explored = 0;
  for (const auto& [site, algs] : sites.ran) {
    if (algs.size() > 1) ++explored;
    const bool floating = site.find("allreduce") != std::string::npos && site.find("int ") == std::string::npos;
    if (floating && algs.size() > 1) ++floating_explored;
    if ((expect == "fixed" || (expect == "exact" && floating)) && algs.size() > 1)
      fail(site + " ran " + std::to_string(algs.size()) + " algorithms");
  }
  if (expect == "learn" && floating_explored == 0)
    fail("no floating-point allreduce ran more than one algorithm: nothing was learned where bits follow the choice");
  if (expect == "exact" && sites.ran["world int allreduce"].size() < 2)
    fail("the integer allreduce of MPI_COMM_WORLD ran one algorithm: nothing was learned where bits cannot differ");
  long all_failures = 0, all_checks = 0;
  PMPI_Allreduce(&failures, &all_failures, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  PMPI_Allreduce(&checks, &all_checks, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0) {
    for (const auto& [site, algs] : sites.ran) {
      std::string names;
      for (const std::string& a : algs) names += (names.empty() ? "" : ", ") + (a.empty() ? "native" : a);
      std::printf("%s: %s\n", site.c_str(), names.c_str());
    }
    std::printf("%s: %ld checks, %ld failures, %zu of %zu sites on rank 0 ran more than one algorithm\n",
                all_failures ? "FAILED" : "PASSED", all_checks, all_failures, explored, sites.ran.size());
  }
  MPI_Finalize();
  return all_failures ? 1 : 0;
}
