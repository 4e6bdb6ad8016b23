// Benchmark (SMPI): one collective at several sizes, the MPI library's own
// algorithm (whatever --cfg=smpi/OP:NAME selects, called through PMPI_*)
// and, with --hetcoll, hetcoll's choice (MPI_*, interposed, planned on
// HETCOLL_PROFILE) with its prediction, in simulated time. Every result is
// checked against the exact answer (doubles holding small integers, so any
// order of combining gives the same bits). testbed/smpi/harness.py runs it.
//
//   smpi_bench OP SIZE[,SIZE...] [--hetcoll] [--calls N [--no-native]]
//
// --calls N: a job's view instead — N calls in a row of each (native, then
// hetcoll's; --no-native: hetcoll's only), each timed from a common start,
// and the algorithm each hetcoll call ran: what HETCOLL_LEARN learns from
// (testbed/smpi/learning.py).
//
// OP: bcast reduce allreduce allgather gather scatter alltoall
// reduce_scatter_block barrier. SIZE: bytes of the vector (bcast, reduce,
// allreduce) or of a rank's whole buffer (allgather, gather, scatter,
// alltoall, reduce_scatter_block: p blocks of SIZE/p, at least one double
// each). A time runs from an instant all ranks start at together (SimGrid's
// clock is global) to the last rank's end, the minimum of two calls after a
// first untimed one (simulated time does not vary; the first hetcoll call
// plans). One JSON object per size on rank 0's stdout.
#include <mpi.h>
#include <smpi/smpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plan/build_schedule.hpp"
#include "algorithms/registry.hpp"
#include "hetcoll.h"
#include "model/machine_model.hpp"
#include "model/profile_model.hpp"
#include "sim/simulator.hpp"

namespace {

struct Call {
  std::string op;
  int p = 1, rank = 0, root = 0;
  size_t count = 0;  // vector (bcast/reduce/allreduce) or block elements
  std::vector<double> in, out;

  size_t in_len() const {
    if (op == "bcast") return count;
    if (op == "scatter") return rank == root ? count * size_t(p) : 0;
    if (op == "alltoall" || op == "reduce_scatter_block") return count * size_t(p);
    if (op == "barrier") return 0;
    return count;
  }
  size_t out_len() const {
    if (op == "bcast" || op == "reduce" || op == "allreduce" || op == "scatter" || op == "reduce_scatter_block")
      return op == "reduce" && rank != root ? 0 : count;
    if (op == "allgather" || op == "alltoall") return count * size_t(p);
    if (op == "gather") return rank == root ? count * size_t(p) : 0;
    return 0;
  }
  // Input element i of rank r (small integers: exact sums).
  static double value(int r, size_t i) { return double(r * 7 + int(i % 1000)); }
  void fill() {
    in.assign(in_len() + 1, 0);
    out.assign(out_len() + 1, -1);
    for (size_t i = 0; i < in_len(); ++i) in[i] = value(rank, i);
    if (op == "bcast") {
      out = in;
      if (rank != root) std::fill(out.begin(), out.end(), -1.0);
    }
  }
  std::vector<double> expected() const {
    std::vector<double> e(out_len());
    auto sum = [&](size_t i) {
      double s = 0;
      for (int r = 0; r < p; ++r) s += value(r, i);
      return s;
    };
    for (size_t i = 0; i < e.size(); ++i) {
      if (op == "bcast") e[i] = value(root, i);
      else if (op == "reduce" || op == "allreduce") e[i] = sum(i);
      else if (op == "reduce_scatter_block") e[i] = sum(size_t(rank) * count + i);
      else if (op == "allgather" || op == "gather") e[i] = value(int(i / count), i % count);
      else if (op == "scatter") e[i] = value(root, size_t(rank) * count + i);
      else if (op == "alltoall") e[i] = value(int(i / count), size_t(rank) * count + i % count);
    }
    return e;
  }
  void run(bool native) {
    MPI_Comm w = MPI_COMM_WORLD;
    const int n = int(count);
    double* buf = op == "bcast" ? out.data() : in.data();
    if (op == "bcast") native ? PMPI_Bcast(buf, n, MPI_DOUBLE, root, w) : MPI_Bcast(buf, n, MPI_DOUBLE, root, w);
    else if (op == "reduce")
      native ? PMPI_Reduce(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, root, w)
             : MPI_Reduce(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, root, w);
    else if (op == "allreduce")
      native ? PMPI_Allreduce(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, w)
             : MPI_Allreduce(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, w);
    else if (op == "allgather")
      native ? PMPI_Allgather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, w)
             : MPI_Allgather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, w);
    else if (op == "gather")
      native ? PMPI_Gather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, root, w)
             : MPI_Gather(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, root, w);
    else if (op == "scatter")
      native ? PMPI_Scatter(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, root, w)
             : MPI_Scatter(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, root, w);
    else if (op == "alltoall")
      native ? PMPI_Alltoall(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, w)
             : MPI_Alltoall(in.data(), n, MPI_DOUBLE, out.data(), n, MPI_DOUBLE, w);
    else if (op == "reduce_scatter_block")
      native ? PMPI_Reduce_scatter_block(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, w)
             : MPI_Reduce_scatter_block(in.data(), out.data(), n, MPI_DOUBLE, MPI_SUM, w);
    else if (op == "barrier") native ? PMPI_Barrier(w) : MPI_Barrier(w);
  }
  // One call from a common start to the last rank's end; ok is false when
  // some rank's result was wrong. SimGrid's clock is global: every rank
  // sleeps until the same instant, past the latest exit from the barrier,
  // so no rank starts late (what the simulator prices: all ranks start at 0).
  double started = 0;  // the last call's common start (simulated seconds)
  double once(bool native, bool& ok) {
    fill();
    PMPI_Barrier(MPI_COMM_WORLD);
    double now = MPI_Wtime(), start = 0;
    PMPI_Allreduce(&now, &start, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    start += 0.5;  // past the allreduce's own end on every rank
    smpi_usleep(useconds_t((start - MPI_Wtime()) * 1e6));
    while (MPI_Wtime() < start) smpi_usleep(1);
    started = start;
    run(native);
    const double local = MPI_Wtime() - start;
    double slowest = 0;
    PMPI_Allreduce(&local, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const std::vector<double> e = expected();
    int mine = std::equal(e.begin(), e.end(), out.begin()), all = 0;
    PMPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    ok = ok && all;
    return slowest;
  }
  // The minimum of two calls after an untimed one.
  double timed(bool native, bool& ok) {
    double best = 1e300;
    ok = true;
    for (int rep = 0; rep < 3; ++rep) {
      const double t = once(native, ok);
      if (rep > 0) best = std::min(best, t);
    }
    return best;
  }
  hetcoll::Collective collective() const {
    using namespace hetcoll;
    CollOp o = coll_op_from_name(op);
    return Collective::make(o, p, o == CollOp::barrier ? 0 : count, root, 8);
  }
};

std::vector<size_t> parse_sizes(const char* s) {
  std::vector<size_t> v;
  for (const char* q = s; *q;) {
    char* end = nullptr;
    v.push_back(size_t(std::strtoull(q, &end, 10)));
    q = *end == ',' ? end + 1 : end;
    if (end == q && *q) break;
  }
  return v;
}

// hetcoll's prediction for the algorithm it ran: the profile's model mapped
// to the hosts of the ranks, as the MPI layer maps them (rank 0 only).
double predict(const std::string& algo, const hetcoll::Collective& c, const std::vector<std::string>& hosts) {
  using namespace hetcoll;
  const char* profile = std::getenv("HETCOLL_PROFILE");
  if (!profile || algo.empty() || algo == "native") return 0;
  try {
    ModelPtr m = load_model(profile);
    std::vector<int> map;
    if (auto* pm = dynamic_cast<const ProfileModel*>(m.get()))
      for (const std::string& h : hosts) map.push_back(pm->host_index(h));
    if (std::find(map.begin(), map.end(), -1) != map.end()) return 0;
    ModelPtr gm = group_model(m, map, c.nranks);
    return simulate(build_schedule(algo, c, *gm), *gm, {false}).makespan;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smpi_bench: no prediction: %s\n", e.what());
    return 0;
  }
}

// --calls: N calls of each in a row (native's unless --no-native, then
// hetcoll's), every time, start (simulated seconds: a platform's links may
// change with time) and hetcoll's algorithm; one JSON object on rank 0.
// Returns 1 when a result was wrong.
int job_view(Call& call, size_t bytes, int calls, bool with_native, bool with_hetcoll) {
  bool ok = true;
  std::vector<double> native, native_at, mine, mine_at;
  std::vector<std::string> used;
  for (int i = 0; with_native && i < calls; ++i) {
    native.push_back(call.once(true, ok));
    native_at.push_back(call.started);
  }
  for (int i = 0; with_hetcoll && i < calls; ++i) {
    mine.push_back(call.once(false, ok));
    mine_at.push_back(call.started);
    char name[256] = "";
    hetcoll_last_algorithm(MPI_COMM_WORLD, name, sizeof name);
    used.emplace_back(*name ? name : "native");
  }
  if (call.rank == 0) {
    auto list = [](const std::vector<double>& v) {
      std::string s;
      char b[32];
      for (double x : v) std::snprintf(b, sizeof b, "%.9g", x), s += (s.empty() ? "" : ", ") + std::string(b);
      return s;
    };
    std::string names;
    for (const std::string& u : used) names += (names.empty() ? "\"" : ", \"") + u + "\"";
    std::printf("{\"op\": \"%s\", \"bytes\": %zu, \"count\": %zu, \"ranks\": %d, \"ok\": %s, \"native_calls\": [%s], "
                "\"native_starts\": [%s], \"hetcoll_calls\": [%s], \"hetcoll_starts\": [%s], \"algorithms\": [%s]}\n",
                call.op.c_str(), bytes, call.count, call.p, ok ? "true" : "false", list(native).c_str(),
                list(native_at).c_str(), list(mine).c_str(), list(mine_at).c_str(), names.c_str());
    std::fflush(stdout);
  }
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Call call;
  MPI_Comm_rank(MPI_COMM_WORLD, &call.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &call.p);
  const char* ops[] = {"bcast", "reduce", "allreduce", "allgather", "gather", "scatter", "alltoall",
                       "reduce_scatter_block", "barrier"};
  const bool known = argc >= 3 && std::any_of(std::begin(ops), std::end(ops), [&](const char* o) { return argv[1] == std::string(o); });
  if (!known) {
    if (call.rank == 0) std::fprintf(stderr, "usage: smpi_bench OP SIZE[,SIZE...] [--hetcoll]\n");
    MPI_Finalize();
    return 2;
  }
  call.op = argv[1];
  bool with_hetcoll = false, with_native = true;
  int calls = 0;
  for (int a = 3; a < argc; ++a) {
    if (std::string(argv[a]) == "--hetcoll") with_hetcoll = true;
    else if (std::string(argv[a]) == "--no-native") with_native = false;
    else if (std::string(argv[a]) == "--calls" && a + 1 < argc) calls = std::atoi(argv[++a]);
  }
  // Host names, for the prediction.
  char name[MPI_MAX_PROCESSOR_NAME] = "";
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(size_t(call.p) * MPI_MAX_PROCESSOR_NAME);
  PMPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  for (int r = 0; r < call.p; ++r) hosts.emplace_back(&all[size_t(r) * MPI_MAX_PROCESSOR_NAME]);
  int failed = 0;
  for (size_t bytes : parse_sizes(argv[2])) {
    const bool per_vector = call.op == "bcast" || call.op == "reduce" || call.op == "allreduce";
    call.count = call.op == "barrier" ? 0 : std::max<size_t>(1, per_vector ? bytes / 8 : bytes / 8 / size_t(call.p));
    if (calls > 0) {
      failed += job_view(call, bytes, calls, with_native, with_hetcoll);
      continue;
    }
    bool nok = true, hok = true;
    const double native = call.timed(true, nok);
    double mine = 0, predicted = 0;
    char used[256] = "";
    if (with_hetcoll) {
      mine = call.timed(false, hok);
      hetcoll_last_algorithm(MPI_COMM_WORLD, used, sizeof used);
      if (call.rank == 0) predicted = predict(used, call.collective(), hosts);
    }
    failed += !nok || !hok;
    if (call.rank == 0) {
      std::printf("{\"op\": \"%s\", \"bytes\": %zu, \"count\": %zu, \"ranks\": %d, \"native_s\": %.9g, \"native_ok\": %s",
                  call.op.c_str(), bytes, call.count, call.p, native, nok ? "true" : "false");
      if (with_hetcoll)
        std::printf(", \"hetcoll_s\": %.9g, \"hetcoll_ok\": %s, \"algorithm\": \"%s\", \"predicted_s\": %.9g", mine,
                    hok ? "true" : "false", used, predicted);
      std::printf("}\n");
      std::fflush(stdout);
    }
  }
  MPI_Finalize();
  return failed ? 1 : 0;
}
