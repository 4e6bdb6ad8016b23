// hetcoll-tune: measured decisions for a probed machine. For each collective
// and message size it times the native MPI collective (PMPI_*) and the
// planner's best predicted candidates on the profile's model, run by
// hetcoll (MPI_* with the algorithm forced), and stores the winners in the
// profile (model/profile.hpp: TunedLayout). The planner then decides by
// measurement where the profile has one for the job's layout and the call's
// size class, and by the model elsewhere.
//
// Timing (Banikazemi et al. Fig. 2): after a barrier, `iters` calls each
// followed by a barrier; the barrier's own time (measured the same way) is
// subtracted; the slowest rank's time counts; minimum and median over the
// repeats, candidates interleaved within each repeat (in rotated order). Where some candidate
// is latency-bound (the barrier may hide part of it), all are timed again
// from a synchronized start (measure/sync_timing.hpp) and that decides.
// The winner: plan/planner.hpp measured_winner (the smallest median; native
// unless that candidate's median and minimum are both kNativeMargin below
// native's). Every decision is
// rank 0's, broadcast. Decisions accumulate in the profile: a run replaces
// the (collective, size) pairs it measures for the job's layout and keeps
// the others (the size classes recomputed over all of them).
//
//   mpirun -n K hetcoll-tune PROFILE [-o OUT] [--ops bcast,allreduce,...]
//                            [--max 1M | --sizes 1k,64k] [--repeats 7] [--candidates 3]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "measure/collective_calls.hpp"
#include "hetcoll.h"
#include "measure/fig2_timing.hpp"
#include "model/tuned_decisions.hpp"
#include "measure/sync_timing.hpp"
#include "measure/program_args.hpp"
#include "model/units.hpp"
#include "model/profile.hpp"
#include "model/profile_model.hpp"
#include "plan/planner.hpp"

using namespace hetcoll;

namespace {

int g_rank = 0, g_size = 1;

using program::fail;

struct Options {
  std::string profile, out;
  std::vector<std::string> ops = hetcoll::bench::regular_collective_names();
  uint64_t max_bytes = uint64_t(1) << 20;
  std::vector<uint64_t> sizes;  // --sizes; empty: 8, 64, … up to max_bytes
  int repeats = 7;
  int candidates = 3;
  double target = 2e-3;  // s per measurement
  bool progress = true;
};

uint64_t parse_bytes(const std::string& v) { return program::parse_size(v, "--max/--sizes", uint64_t(64) << 20); }

Options parse_args(int argc, char** argv) {
  Options o;
  for (program::ArgWalk w(argc, argv); w.next();) {
    const std::string& a = w.arg;
    if (a == "-o" || a == "--output") o.out = w.value();
    else if (a == "--ops") o.ops = program::split(w.value());
    else if (a == "--max") o.max_bytes = parse_bytes(w.value());
    else if (a == "--sizes") {
      for (const std::string& x : program::split(w.value())) o.sizes.push_back(parse_bytes(x));
      if (o.sizes.empty()) fail("--sizes: a list such as 1k,64k");
      std::sort(o.sizes.begin(), o.sizes.end());
      o.sizes.erase(std::unique(o.sizes.begin(), o.sizes.end()), o.sizes.end());
      o.max_bytes = o.sizes.back();
    }
    else if (a == "--repeats") {
      o.repeats = program::parse_int(w.value(), "--repeats", 1, 1000);
    } else if (a == "--candidates") {
      o.candidates = program::parse_int(w.value(), "--candidates", 1, 8);
    } else if (a == "--no-progress") o.progress = false;
    else if (a == "-h" || a == "--help") {
      if (g_rank == 0)
        std::printf("usage: hetcoll-tune PROFILE [-o OUT] [--ops bcast,allreduce,...] [--max 1M] [--repeats 7] "
                    "[--candidates 3] [--sizes 1k,64k] [--no-progress] [--check]\n");
      program::done();
    } else if (a == "--check") {
    } else if (!a.empty() && a[0] == '-') fail("unknown argument '" + a + "' (--help lists them)");
    else if (o.profile.empty()) o.profile = a;
    else fail("one profile, please ('" + a + "' is a second)");
  }
  if (o.profile.empty()) fail("which profile? hetcoll-tune PROFILE (written by hetcoll probe)");
  if (o.out.empty()) o.out = o.profile;
  // Every collective whose counts every rank has: a measured decision is
  // one per size class, which the ranks of a v-call whose counts only the
  // root or each rank knows could not look up alike.
  std::string tunable;
  for (CollOp op : all_coll_ops())
    if (counts_known_everywhere(op)) tunable += std::string(" ") + coll_op_name(op);
  for (const std::string& op : o.ops) {
    bool ok = false;
    for (CollOp c : all_coll_ops()) ok = ok || (op == coll_op_name(c) && counts_known_everywhere(c));
    if (!ok) fail("--ops: '" + op + "' is not one of" + tunable);
  }
  return o;
}

using hetcoll::bench::Call;

// The call hetcoll's planner sees (as the MPI layer describes it).
Collective describe(const std::string& name, int n) {
  const CollOp op = coll_op_from_name(name);
  Collective c = Collective::make(op, g_size, op == CollOp::barrier ? 0 : uint64_t(n), 0, 8);
  c.order_free = false;  // MPI_DOUBLE with MPI_SUM
  return c;
}

Measure summarize(const std::vector<double>& v) {
  const fig2::Summary s = fig2::summarize(v);
  return {s.min, s.median};
}

}  // namespace

// The profile's model, on every rank (the file is where HETCOLL_PROFILE
// would read it), and hetcoll's model set to it.
std::shared_ptr<ProfileModel> load_everywhere(const Options& opt) {
  std::shared_ptr<ProfileModel> model;
  std::string error;
  try {
    model = ProfileModel::load(opt.profile);
  } catch (const std::exception& e) {
    error = e.what();
  }
  int bad = error.empty() ? 0 : 1, any_bad = 0;
  PMPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_bad) fail(error.empty() ? "the profile could not be read on every rank" : error);
  if (hetcoll_set_model(opt.profile.c_str()) != 0) fail(std::string("hetcoll_set_model: ") + hetcoll_last_error());

  return model;
}

// The job's layout: each rank's host in the profile; empty (said by the
// rank concerned) when a rank's host is not in it.
std::vector<int> job_layout(const ProfileModel& model) {
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  int mine = model.host_index(std::string(name, size_t(std::max(len, 0))));
  std::vector<int> layout(static_cast<size_t>(g_size));
  PMPI_Allgather(&mine, 1, MPI_INT, layout.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int r = 0; r < g_size; ++r)
    if (layout[size_t(r)] < 0) {
      if (r == g_rank) std::fprintf(stderr, "hetcoll-tune: the profile does not describe host '%s' (rank %d): probe it\n", name, r);
      return {};
    }

  return layout;
}

// Candidates: native, then the planner's best predicted on the profile for
// this layout (rank 0's list, the same everywhere), with their predictions.
void candidates_for(const Collective& call, const ProfileModel& model, const std::vector<int>& layout,
                    const Options& opt, std::vector<std::string>& names, std::vector<double>& predicted) {
  names = {"native"};
  predicted = {0};
  if (g_rank == 0) {
    PlanOptions po;
    po.rank_map = layout;
    const PlanResult pr = plan(representative(call), model, po);
    for (const Candidate& c : pr.candidates) {
      if (int(names.size()) > opt.candidates) break;
      names.push_back(c.algorithm);
      predicted.push_back(c.predicted);
    }
  }
  std::string joined;
  for (const std::string& s : names) joined += s + "\n";
  int jl = int(joined.size());
  PMPI_Bcast(&jl, 1, MPI_INT, 0, MPI_COMM_WORLD);
  joined.resize(size_t(jl));
  PMPI_Bcast(joined.data(), jl, MPI_CHAR, 0, MPI_COMM_WORLD);
  names.clear();
  {
    std::stringstream ss(joined);
    std::string s;
    while (std::getline(ss, s)) names.push_back(s);
  }
  predicted.resize(names.size(), 0);
}

// Every candidate timed (Banikazemi's Fig. 2, repeats in rotated order);
// `hidden`: some call was latency-bound, so all were timed again from a
// synchronized start, and those times are returned.
std::vector<std::vector<double>> time_candidates(const std::string& op, uint64_t bytes,
                                                 const std::vector<std::string>& names, Call& f, const Options& opt,
                                                 sync_start::SharedClock& clock, int& hidden) {
  // Iterations for ~target per measurement, from native (rank 0 decides).
  const int iters = fig2::iterations_for([&] { f(true); }, opt.target);
  const double barrier = fig2::barrier_time(iters);
  std::vector<std::vector<double>> t(names.size());
  // Each repeat starts one candidate later (rotated order): whatever the
  // first call after another collective pays, every candidate pays it
  // as often.
  for (int rep = 0; rep < opt.repeats; ++rep)
    for (size_t j = 0; j < names.size(); ++j) {
      const size_t c = (j + size_t(rep)) % names.size();
      const bool native = names[c] == "native";
      if (!native) {
        const std::string rule = op + ":@" + names[c];
        if (hetcoll_set_algorithm(rule.c_str()) != 0)
          fail("cannot force " + rule + ": " + hetcoll_last_error());
        f(false);  // planned and compiled outside the timing
        char ran[256];
        hetcoll_last_algorithm(MPI_COMM_WORLD, ran, sizeof ran);
        if (g_rank == 0 && rep == 0 && names[c] != ran)
          std::fprintf(stderr, "hetcoll-tune: %s %llu B: forced %s, ran %s\n", op.c_str(),
                       static_cast<unsigned long long>(bytes), names[c].c_str(), ran);
      }
      t[c].push_back(fig2::timed([&] { f(native); }, iters, barrier));
    }
  // Where some candidate's call is latency-bound (the barrier may hide
  // part of it: sync_start::latency_bound), Fig. 2 cannot tell them
  // apart: all are timed again from a synchronized start, and that decides.
  hidden = 0;
  if (g_rank == 0)
    for (const auto& v : t) hidden |= sync_start::latency_bound(fig2::summarize(v).median, barrier);
  PMPI_Bcast(&hidden, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (hidden) {
    const auto medians = sync_start::time_variants(
        names.size(), opt.repeats, std::min(iters, sync_start::kCalls), clock.fresh(),
        [&](size_t c) {
          if (names[c] != "native") {
            hetcoll_set_algorithm((op + ":@" + names[c]).c_str());
            f(false);  // planned and compiled outside the timing
          }
          return true;
        },
        [&](size_t c) { f(names[c] == "native"); });
    // A candidate no call of which kept to its slot cannot be compared:
    // it loses.
    for (size_t c = 0; c < names.size(); ++c) {
      t[c].clear();
      for (double x : medians[c]) t[c].push_back(std::isfinite(x) ? x : 3600.0);
    }
  }
  return t;
}

// Rank 0: the decisions into the profile (an earlier run's for this layout
// kept where not measured again), written atomically. Returns the exit code.
int write_tuned(const Options& opt, TunedLayout tuned, double start) {
  int rc = 0;
  try {
    Profile p = load_profile(opt.profile);
    tuned.created = utc_now();
    const size_t kept = merge_tuned(p, std::move(tuned));
    write_profile_file(p, opt.out);
    const TunedLayout& now = p.tuned.back();
    int native_wins = 0;
    for (const TunedEntry& e : now.entries) native_wins += e.winner == "native";
    std::printf("hetcoll-tune: %zu measured decisions for %d ranks on %s (native won %d%s) in %.1f s; wrote %s\n",
                now.entries.size(), g_size, opt.profile.c_str(), native_wins,
                kept ? (", " + std::to_string(kept) + " kept from an earlier run").c_str() : "",
                MPI_Wtime() - start, opt.out.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hetcoll-tune: %s\n", e.what());
    rc = 1;
  }
  return rc;
}

int main(int argc, char** argv) {
  program::name() = "hetcoll-tune";
  if (program::checking(argc, argv)) {
    const Options o = parse_args(argc, argv);
    try {
      ProfileModel::load(o.profile);
    } catch (const std::exception& e) {
      fail(e.what());
    }
    program::check_writable(o.out, "-o");
    return 0;
  }
  hetcoll::bench::time_decisions_not_learning();
  program::start_mpi(&argc, &argv, g_rank, g_size);
  const Options opt = parse_args(argc, argv);
  const double start = MPI_Wtime();
  const std::shared_ptr<ProfileModel> model = load_everywhere(opt);
  const std::vector<int> layout = job_layout(*model);
  if (layout.empty()) {
    MPI_Finalize();
    return 2;
  }

  std::vector<uint64_t> sizes = opt.sizes;
  if (sizes.empty())
    for (uint64_t b = 8; b <= opt.max_bytes; b *= 8) sizes.push_back(b);
  std::vector<char> a(size_t(opt.max_bytes) * size_t(g_size) + 64, 1), b(a.size(), 2);
  TunedLayout tuned;
  tuned.hosts = layout;
  tuned.repeats = opt.repeats;
  size_t step = 0, steps = 0;
  for (const std::string& op : opt.ops) steps += op == "barrier" ? 1 : sizes.size();

  sync_start::SharedClock clock;  // for latency-bound calls; again after a minute
  for (const std::string& op : opt.ops) {
    std::vector<TunedEntry> entries;
    for (uint64_t bytes : sizes) {
      if (op == "barrier" && bytes > 8) break;
      const int n = int(bytes / 8);
      const Collective call = describe(op, n);
      Call f = hetcoll::bench::collective_call(op, n, a, b);
      std::vector<std::string> names;
      std::vector<double> predicted;
      candidates_for(call, *model, layout, opt, names, predicted);
      int hidden = 0;
      const std::vector<std::vector<double>> t = time_candidates(op, bytes, names, f, opt, clock, hidden);
      hetcoll_set_algorithm("");
      if (g_rank == 0) {
        TunedEntry e;
        e.op = op;
        e.bytes = call.size_bytes();
        for (size_t c = 0; c < names.size(); ++c) e.times.push_back({names[c], summarize(t[c]), predicted[c]});
        e.winner = names[measured_winner(e.times)];  // names[0] is native
        if (hidden) e.timing = kTimingSynchronized;
        entries.push_back(e);
        ++step;
        if (opt.progress)
          std::fprintf(stderr, "hetcoll-tune: [%3zu/%zu] %-20s %8llu B: %s (native %s, %s %s)\n", step, steps,
                       op.c_str(), static_cast<unsigned long long>(bytes), e.winner.c_str(),
                       format_time(e.times[0].time.median).c_str(),
                       e.times.size() > 1 ? e.times[1].algorithm.c_str() : "-",
                       e.times.size() > 1 ? format_time(e.times[1].time.median).c_str() : "-");
      }
    }
    if (g_rank == 0)
      for (TunedEntry& e : entries) tuned.entries.push_back(std::move(e));
  }

  int rc = g_rank == 0 ? write_tuned(opt, std::move(tuned), start) : 0;
  PMPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
