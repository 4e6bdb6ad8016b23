// Benchmark (not a test): a job's view of its collectives on a real MPI,
// what HETCOLL_LEARN is measured with on the emulated cluster
// (testbed/netns/learning.py). For each OP:SIZE given, CALLS calls in a
// row on MPI_COMM_WORLD, each from a PMPI_Barrier (not interposed: the
// calls start together, as a job's do after its computing step), each
// rank's time of it and the slowest rank's taken; the algorithm each call
// ran (hetcoll_last_algorithm, "native" when hetcoll handed it to the MPI
// or is not loaded); every call's result held to the exact answer (doubles
// holding small integers: any order of combining gives the same bits).
//
//   bench_job CALLS OP:SIZE[,OP:SIZE...]
//
// OP: bcast reduce allreduce allgather alltoall reduce_scatter_block.
// SIZE (k/M suffixes): bytes of the vector (bcast, reduce, allreduce) or of
// a rank's whole buffer (allgather, alltoall, reduce_scatter_block: p
// blocks of SIZE/p, at least one double each). Rank 0 prints a line
// {"started": UNIX_S} when the calls begin, then one JSON object per OP:SIZE:
// {"op", "bytes", "ranks", "ok", "calls": [s…], "starts": [UNIX_S…],
// "algorithms": [name…]}. Exit 1 if any result was wrong.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "hetcoll.h"

namespace {

const char* const kOps[] = {"bcast", "reduce", "allreduce", "allgather", "alltoall", "reduce_scatter_block"};

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Input element i of rank r.
double value(int r, size_t i) { return double(r * 7 + int(i % 1000)); }

struct Site {
  std::string op;
  size_t bytes = 0;
  size_t count = 0;  // the vector's doubles, or a block's
  int p = 1, rank = 0;
  std::vector<double> in, out, expected;

  bool blocks() const { return op == "allgather" || op == "alltoall" || op == "reduce_scatter_block"; }
  void prepare() {
    const size_t n = std::max<size_t>(1, bytes / 8);
    count = blocks() ? std::max<size_t>(1, n / size_t(p)) : n;
    const size_t in_len = op == "alltoall" || op == "reduce_scatter_block" ? count * size_t(p) : count;
    const size_t out_len = op == "allgather" || op == "alltoall" ? count * size_t(p) : count;
    in.resize(in_len);
    for (size_t i = 0; i < in_len; ++i) in[i] = value(rank, i);
    out.assign(out_len, -1);
    expected.assign(out_len, 0);
    auto sum = [&](size_t i) {
      double s = 0;
      for (int r = 0; r < p; ++r) s += value(r, i);
      return s;
    };
    for (size_t i = 0; i < out_len; ++i) {
      if (op == "bcast") expected[i] = value(0, i);
      else if (op == "allgather") expected[i] = value(int(i / count), i % count);
      else if (op == "alltoall") expected[i] = value(int(i / count), size_t(rank) * count + i % count);
      else if (op == "reduce_scatter_block") expected[i] = sum(size_t(rank) * count + i);
      else expected[i] = sum(i);
    }
  }
  void call() {
    const MPI_Comm w = MPI_COMM_WORLD;
    const int n = int(count);
    if (op == "bcast") {
      if (rank == 0) std::copy(in.begin(), in.end(), out.begin());
      MPI_Bcast(out.data(), n, MPI_DOUBLE, 0, w);
    } else if (op == "reduce") {
      MPI_Reduce(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, 0, w);
    } else if (op == "allreduce") {
      MPI_Allreduce(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, w);
    } else if (op == "allgather") {
      MPI_Allgather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, w);
    } else if (op == "alltoall") {
      MPI_Alltoall(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, w);
    } else {
      MPI_Reduce_scatter_block(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, w);
    }
  }
  bool right() const { return (op == "reduce" && rank != 0) || out == expected; }
};

size_t parse_bytes(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end && (*end == 'k' || *end == 'K')) v *= 1024;
  if (end && (*end == 'm' || *end == 'M')) v *= 1024 * 1024;
  return size_t(v);
}

std::vector<Site> parse_sites(const std::string& list, int p, int rank) {
  std::vector<Site> sites;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, comma - at);
    const size_t colon = item.find(':');
    Site s;
    s.op = item.substr(0, colon);
    if (colon == std::string::npos || std::find(std::begin(kOps), std::end(kOps), s.op) == std::end(kOps))
      return {};
    s.bytes = parse_bytes(item.substr(colon + 1));
    s.p = p;
    s.rank = rank;
    sites.push_back(s);
    at = comma + 1;
  }
  return sites;
}

template <class T, class F>
std::string joined(const std::vector<T>& v, F f) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + f(v[i]);
  return s;
}

// CALLS calls of the site; rank 0 prints its line. False if a result was wrong.
bool run_site(Site& s, int calls) {
  s.prepare();
  const size_t n = size_t(calls);
  std::vector<double> mine(n), slowest(n), starts(n);
  std::vector<std::string> used(n);
  int wrong = 0;
  for (int i = 0; i < calls; ++i) {
    std::fill(s.out.begin(), s.out.end(), -1.0);
    PMPI_Barrier(MPI_COMM_WORLD);
    starts[size_t(i)] = unix_now();
    const double t0 = MPI_Wtime();
    s.call();
    mine[size_t(i)] = MPI_Wtime() - t0;
    char name[256] = "";
    hetcoll_last_algorithm(MPI_COMM_WORLD, name, sizeof name);
    used[size_t(i)] = *name ? name : "native";
    wrong += s.right() ? 0 : 1;
  }
  int all_wrong = 0;
  PMPI_Reduce(mine.data(), slowest.data(), calls, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  PMPI_Reduce(&wrong, &all_wrong, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (s.rank == 0) {
    auto num = [](double x) {
      char b[32];
      std::snprintf(b, sizeof b, "%.9g", x);
      return std::string(b);
    };
    auto starts_text = [](double x) {
      char b[32];
      std::snprintf(b, sizeof b, "%.6f", x);
      return std::string(b);
    };
    std::printf("{\"op\": \"%s\", \"bytes\": %zu, \"ranks\": %d, \"ok\": %s, \"calls\": [%s], \"starts\": [%s], "
                "\"algorithms\": [%s]}\n",
                s.op.c_str(), s.bytes, s.p, all_wrong ? "false" : "true", joined(slowest, num).c_str(),
                joined(starts, starts_text).c_str(),
                joined(used, [](const std::string& a) { return "\"" + a + "\""; }).c_str());
    std::fflush(stdout);
  }
  return all_wrong == 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const int calls = argc == 3 ? std::atoi(argv[1]) : 0;
  std::vector<Site> sites = argc == 3 ? parse_sites(argv[2], p, rank) : std::vector<Site>{};
  if (calls < 1 || sites.empty()) {
    if (rank == 0)
      std::fprintf(stderr, "usage: bench_job CALLS OP:SIZE[,OP:SIZE...]  (OP: bcast reduce allreduce allgather "
                           "alltoall reduce_scatter_block; SIZE in bytes, k/M suffixes)\n");
    MPI_Finalize();
    return 2;
  }
  if (rank == 0) {
    std::printf("{\"started\": %.6f}\n", unix_now());
    std::fflush(stdout);
  }
  bool ok = true;
  for (Site& s : sites) ok = run_site(s, calls) && ok;
  MPI_Finalize();
  return ok || rank != 0 ? 0 : 1;
}
