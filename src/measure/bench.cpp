// hetcoll-bench: measured against predicted, for every collective and a
// range of sizes — hetcoll's choice, any forced algorithms and the native
// MPI, in the same run, candidates interleaved within each repeat, each
// repeat starting one variant later.
//
// Timing: Banikazemi et al. Fig. 2 (measure/fig2_timing.hpp: barrier-
// subtracted loops, the slowest rank, minimum and median over repeats);
// beside it, for latency-bound calls (Fig. 2 below three barrier times:
// the barrier may hide part of them), the makespan from a synchronized start (measure/sync_timing.hpp:
// clocks offset to rank 0's, every rank starting each call at the same
// instant) — what the prediction is.
// Prediction: the schedule that ran, simulated on the model the MPI layer
// plans with (HETCOLL_PROFILE, or --model) for the job's layout — the same
// number hetcoll's decision used. A variant that could not run (an
// algorithm that does not implement the collective) is reported as such.
//
//   mpirun -n K hetcoll-bench [-o OUT.json] [--csv OUT.csv] [--ops LIST]
//                             [--sizes 1k,64k,1M | --min 8 --max 1M]
//                             [--algorithms A,B,...] [--repeats 7]
//                             [--target-ms 5] [--model SPEC|PROFILE]
//                             [--no-native] [--no-progress]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "plan/build_schedule.hpp"
#include "algorithms/registry.hpp"
#include "measure/collective_calls.hpp"
#include "config/settings.hpp"
#include "hetcoll.h"
#include "measure/fig2_timing.hpp"
#include "measure/program_args.hpp"
#include "measure/sync_timing.hpp"
#include "model/bound.hpp"
#include "model/units.hpp"
#include "model/machine_model.hpp"
#include "model/profile_model.hpp"
#include "sim/simulator.hpp"
#include "util/json.hpp"

using namespace hetcoll;

namespace {

int g_rank = 0, g_size = 1;

using program::fail;
using program::split;

// A row's extra repeats (--max-repeats): until every variant's median is
// known to within this fraction, for at most this long.
constexpr double kKnownMedian = 0.05;
constexpr double kRowSeconds = 20;

struct Options {
  std::string out, csv, model;
  std::vector<std::string> ops = hetcoll::bench::collective_names();
  std::vector<uint64_t> sizes;
  uint64_t min_bytes = 8, max_bytes = uint64_t(1) << 20;
  std::vector<std::string> algorithms;
  int repeats = 7;
  // Beyond `repeats`, up to this many while some variant's median is not
  // known to within kKnownMedian (its 95 % interval) and the row has run
  // less than kRowSeconds.
  int max_repeats = 0;  // 0: repeats
  double target = 5e-3;  // s per measurement
  bool native = true, progress = true;
  // --overlap: the non-blocking forms, OSU's overlap method (run_overlap);
  // --test-every: the compute loop calls MPI_Test this often (0: never, as OSU).
  bool overlap = false;
  double test_every = 0;  // s
};

uint64_t parse_bytes(const std::string& v, const std::string& what) { return program::parse_size(v, what); }

Options parse_args(int argc, char** argv) {
  Options o;
  std::string sizes;
  for (program::ArgWalk w(argc, argv); w.next();) {
    const std::string& a = w.arg;
    if (a == "-o" || a == "--output") o.out = w.value();
    else if (a == "--csv") o.csv = w.value();
    else if (a == "--ops") o.ops = split(w.value());
    else if (a == "--sizes") sizes = w.value();
    else if (a == "--min") o.min_bytes = parse_bytes(w.value(), "--min");
    else if (a == "--max") o.max_bytes = parse_bytes(w.value(), "--max");
    else if (a == "--algorithms") o.algorithms = split(w.value());
    else if (a == "--model") o.model = w.value();
    else if (a == "--repeats") {
      o.repeats = program::parse_int(w.value(), "--repeats", 1, 1000);
    } else if (a == "--max-repeats") {
      o.max_repeats = program::parse_int(w.value(), "--max-repeats", 1, 1000);
    } else if (a == "--target-ms") {
      o.target = program::parse_real(w.value(), "--target-ms", 0.1, 10000, "0.1 to 10000") * 1e-3;
    } else if (a == "--no-native") o.native = false;
    else if (a == "--overlap") o.overlap = true;
    else if (a == "--test-every") {
      o.test_every = program::parse_real(w.value(), "--test-every", 0, 1e6, "0 to 1e6 (us)") * 1e-6;
    }
    else if (a == "--no-progress") o.progress = false;
    else if (a == "-h" || a == "--help") {
      if (g_rank == 0)
        std::printf("usage: hetcoll-bench [-o OUT.json] [--csv OUT.csv] [--ops LIST] [--sizes 1k,64k,1M | --min 8 --max 1M]\n"
                    "                     [--algorithms A,B,...] [--repeats 7] [--max-repeats N] [--target-ms 5]\n"
                    "                     [--model SPEC|PROFILE] [--no-native] [--no-progress]\n"
                    "                     [--overlap [--test-every US]]\n"
                    "--overlap: the non-blocking forms, OSU's method: the call alone, a compute loop alone, both\n"
                    "overlapped; overlap = 1 - (overlapped - compute) / call (--test-every: MPI_Test in the loop)\n"
                    "--max-repeats: beyond --repeats, repeat a row (up to N, within 20 s) while some variant's\n"
                    "median is not known to within 5 %% (its distribution-free 95 %% confidence interval)\n"
                    "--check: check the arguments and the output files, run nothing\n");
      program::done();
    } else if (a == "--check") {
    } else fail("unknown argument '" + a + "' (--help lists them)");
  }
  o.max_repeats = std::max(o.max_repeats, o.repeats);
  const auto& known = hetcoll::bench::collective_names();
  for (const std::string& op : o.ops)
    if (std::find(known.begin(), known.end(), op) == known.end()) {
      std::string list;
      for (auto& k : known) list += " " + k;
      fail("--ops: '" + op + "' is not one of" + list);
    }
  if (!sizes.empty()) {
    for (const std::string& s : split(sizes)) o.sizes.push_back(parse_bytes(s, "--sizes"));
  } else {
    if (o.min_bytes > o.max_bytes) fail("--min is above --max");
    for (uint64_t b = o.min_bytes; b <= o.max_bytes; b *= 8) o.sizes.push_back(b);
  }
  std::sort(o.sizes.begin(), o.sizes.end());
  o.sizes.erase(std::unique(o.sizes.begin(), o.sizes.end()), o.sizes.end());
  for (const std::string& a : o.algorithms) {
    try {
      choose_algorithm(a);
    } catch (const std::exception& e) {
      fail(std::string("--algorithms: ") + e.what());
    }
  }
  return o;
}

// The call hetcoll's planner sees for `op` with n doubles a rank (MPI_SUM).
Collective describe(const std::string& name, uint64_t n) {
  const CollOp op = coll_op_from_name(name);
  Collective c;
  if (op == CollOp::gatherv || op == CollOp::scatterv || op == CollOp::allgatherv || op == CollOp::reduce_scatter)
    c = Collective::make_v(op, std::vector<uint64_t>(size_t(g_size), n), 0, 8);
  else if (op == CollOp::alltoallv)
    c = Collective::make_alltoallv(g_size, std::vector<uint64_t>(size_t(g_size) * size_t(g_size), n), 8);
  else
    c = Collective::make(op, g_size, op == CollOp::barrier ? 0 : n, 0, 8);
  c.order_free = false;  // MPI_DOUBLE with MPI_SUM
  return c;
}

struct Row {
  std::string op, variant, algorithm;  // variant: hetcoll, native or the forced spec
  uint64_t bytes = 0;
  std::vector<double> times, sync;  // Fig. 2; from a synchronized start (latency-bound calls)
  double predicted = NAN, barrier = 0;
  double bound = NAN;  // the physical bound on the model (model/bound.hpp)
  std::string note;
  // hetcoll's row where its decision is native: its call is PMPI's, so the
  // native row's times are its times (timed once; two timings of one call
  // would differ by noise alone).
  bool native_call = false;
};

std::string json_str(const std::string& s) { return json::Value(s).dump(); }

std::string num(double x) {
  if (!std::isfinite(x)) return "null";
  char b[40];
  std::snprintf(b, sizeof b, "%.6g", x);
  return b;
}

void progress_line(size_t done, size_t total, const std::string& what) {
  if (g_rank != 0) return;
  const int width = 30;
  const int filled = total ? int(double(done) / double(total) * width) : width;
  std::fprintf(stderr, "%shetcoll-bench: [%s%s] %zu/%zu %s%s", isatty(2) ? "\r" : "",
               std::string(size_t(filled), '#').c_str(), std::string(size_t(width - filled), '.').c_str(), done, total,
               what.c_str(), isatty(2) ? "\033[K" : "\n");
  if (isatty(2) && done == total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

}  // namespace

// The model the MPI layer plans with, the job's hosts, and the model seen
// through the job's layout (none, with a note, where it cannot predict).
struct Machine {
  std::string spec;
  std::vector<std::string> hosts;  // per rank
  ModelPtr gm;                     // the job's ranks as model ranks; null: no predictions
  std::string layout_note;
};

Machine machine_of(const Options& opt) {
  Machine mc;
  std::vector<std::string> said_by_the_library;  // the MPI layer reads the settings too, and says their problems
  const std::string profile = read_settings(said_by_the_library).profile;
  mc.spec = !opt.model.empty() ? opt.model : !profile.empty() ? profile : default_settings().profile;
  const std::string& spec = mc.spec;
  if (!opt.model.empty() && hetcoll_set_model(opt.model.c_str()) != 0)
    fail(std::string("--model: ") + hetcoll_last_error());
  ModelPtr model;
  try {
    model = load_model(spec);
  } catch (const std::exception& e) {
    fail(std::string("the model '") + spec + "': " + e.what());
  }
  char name[MPI_MAX_PROCESSOR_NAME + 1] = {0};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> names(size_t(g_size) * (MPI_MAX_PROCESSOR_NAME + 1), 0);
  PMPI_Allgather(name, MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME + 1, MPI_CHAR,
                 MPI_COMM_WORLD);
  std::vector<std::string>& hosts = mc.hosts;
  for (int r = 0; r < g_size; ++r) hosts.emplace_back(&names[size_t(r) * (MPI_MAX_PROCESSOR_NAME + 1)]);
  std::vector<int> layout;
  std::string& layout_note = mc.layout_note;
  if (auto* pm = dynamic_cast<const ProfileModel*>(model.get())) {
    for (const std::string& h : hosts) layout.push_back(pm->host_index(h));
    if (std::any_of(layout.begin(), layout.end(), [](int h) { return h < 0; })) {
      layout_note = "the profile does not describe every host: no predictions";
      model = nullptr;
    }
  }
  ModelPtr& gm = mc.gm;
  if (model) {
    try {
      gm = layout.empty() ? model : group_model(model, layout, g_size);
    } catch (const std::exception& e) {
      layout_note = std::string("no predictions: ") + e.what();
    }
  }
  return mc;
}

// The predicted time of `algorithm` for the call (NaN: none).
double predict(const Machine& mc, const std::string& algorithm, const Collective& c) {
  if (!mc.gm || algorithm.empty() || algorithm == "native") return NAN;
  try {
    return simulate(build_schedule(algorithm, c, *mc.gm), *mc.gm).makespan;
  } catch (const std::exception&) {
    return NAN;
  }
}

// One row of the benchmark: every variant of one call (hetcoll's choice,
// native, each forced algorithm), timed interleaved.
class RowTiming {
 public:
  RowTiming(const std::string& op, uint64_t bytes, const Collective& call, const Options& opt,
            hetcoll::bench::Call& f)
      : op_(op), opt_(opt), f_(f) {
    add_variants(bytes, call);
  }
  std::vector<Row> run(sync_start::SharedClock& clock);

 private:
  void add_variants(uint64_t bytes, const Collective& call);
  bool select(Row& r);
  bool unknown(int done, double since, std::vector<double> Row::*times);
  void fig2_rounds();
  void synchronized_rounds(sync_start::SharedClock& clock);

  const std::string& op_;
  const Options& opt_;
  hetcoll::bench::Call& f_;
  std::vector<Row> vr;
  std::string current_rule;
  int iters = 1;
  double barrier = 0;
};

void RowTiming::add_variants(uint64_t bytes, const Collective& call) {
  const std::string& op = op_;
  const Options& opt = opt_;
  auto add = [&](const std::string& variant) {
    Row r;
    r.op = op;
    r.bytes = op == "barrier" ? 0 : bytes;
    r.variant = variant;
    vr.push_back(r);
  };
  add("hetcoll");
  if (opt.native) add("native");
  for (const std::string& spec_a : opt.algorithms) {
    add(spec_a);
    try {
      choose_algorithm(spec_a, call.op);
    } catch (const std::exception&) {
      vr.back().note = "does not implement " + op;
    }
  }
}

// Sets the rule that runs r's variant (false: it cannot run, noted). A new
// rule drops hetcoll's cached decisions: the next call plans and compiles
// again, which must not be timed.
bool RowTiming::select(Row& r) {
  if (r.variant == "native") return true;
  const std::string rule = r.variant == "hetcoll" ? "" : op_ + ":@" + r.variant;
  if (rule != current_rule) {
    if (hetcoll_set_algorithm(rule.c_str()) != 0) {
      r.note = hetcoll_last_error();
      return false;
    }
    current_rule = rule;
    f_(false);
  }
  return true;
}

// Rank 0's rule for one more round of a row's times (Fig. 2's, or the
// synchronized start's): within --max-repeats and kRowSeconds since
// `since`, while some variant's median is not yet known to within
// kKnownMedian — two variants' medians that differ by less than the noise
// would otherwise be ranked by it.
bool RowTiming::unknown(int done, double since, std::vector<double> Row::*times) {
  if (done >= opt_.max_repeats || MPI_Wtime() - since >= kRowSeconds) return false;
  for (const Row& r : vr)
    if (r.note.empty() && !r.native_call && !fig2::median_known(r.*times, kKnownMedian)) return true;
  return false;
}

// Banikazemi's Fig. 2 timing, --repeats rounds and more while unknown().
// Each repeat starts one variant later (rotated order): whatever the first
// call after another collective pays, every variant pays it as often.
void RowTiming::fig2_rounds() {
  const Options& opt = opt_;
  auto& f = f_;
  const double row_start = MPI_Wtime();
  auto more = [&](int done) {
    if (done < opt.repeats) return true;
    int go = g_rank == 0 && unknown(done, row_start, &Row::times);
    PMPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return go != 0;
  };
  for (int rep = 0; more(rep); ++rep)
    for (size_t j = 0; j < vr.size(); ++j) {
      Row& r = vr[(j + size_t(rep)) % vr.size()];
      if (!r.note.empty() || r.native_call || !select(r)) continue;
      const bool native = r.variant == "native";
      if (rep == 0) {
        char ran[256] = {0};
        if (!native) hetcoll_last_algorithm(MPI_COMM_WORLD, ran, sizeof ran);
        r.algorithm = ran[0] ? ran : "native";
      }
      r.times.push_back(fig2::timed([&] { f(native); }, iters, barrier));
      r.barrier = barrier;
    }
}

void RowTiming::synchronized_rounds(sync_start::SharedClock& clock) {
  const Options& opt = opt_;
  auto& f = f_;
  // Where some variant's call is latency-bound (sync_start::latency_bound:
  // the barrier may hide part of it), every variant is timed again from
  // a synchronized start (rank 0 decides).
  int hidden = 0;
  if (g_rank == 0)
    for (const Row& r : vr)
      if (!r.times.empty() && sync_start::latency_bound(fig2::summarize(r.times).median, barrier)) hidden = 1;
  PMPI_Bcast(&hidden, 1, MPI_INT, 0, MPI_COMM_WORLD);
  // Rounds as the Fig. 2 repeats: --repeats, then one at a time (up to
  // --max-repeats, within kRowSeconds) while some variant's median is
  // not known to within kKnownMedian.
  if (hidden) {
    const double sync_start_at = MPI_Wtime();
    int done = 0;
    for (int go = 1; go;) {
      const int rounds = done == 0 ? opt.repeats : 1;
      const auto medians = sync_start::time_variants(
          vr.size(), rounds, std::min(iters, sync_start::kCalls), clock.fresh(),
          [&](size_t v) { return vr[v].note.empty() && !vr[v].native_call && select(vr[v]); },
          [&](size_t v) { f(vr[v].variant == "native"); }, MPI_COMM_WORLD, done);
      done += rounds;
      go = 0;
      if (g_rank == 0) {
        for (size_t v = 0; v < vr.size(); ++v)
          for (double x : medians[v])
            if (std::isfinite(x)) vr[v].sync.push_back(x);
        go = unknown(done, sync_start_at, &Row::sync);
      }
      PMPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
  }
}

std::vector<Row> RowTiming::run(sync_start::SharedClock& clock) {
  const Options& opt = opt_;
  auto& f = f_;
  hetcoll_set_algorithm("");
  f(false);  // hetcoll's decision for this call, made outside the timing
  if (opt.native) {
    char decided[256] = {0};
    hetcoll_last_algorithm(MPI_COMM_WORLD, decided, sizeof decided);
    int native_call = g_rank == 0 && (!decided[0] || std::string(decided) == "native");
    PMPI_Bcast(&native_call, 1, MPI_INT, 0, MPI_COMM_WORLD);
    vr[0].native_call = native_call != 0;
  }
  iters = fig2::iterations_for([&] { f(true); }, opt.target);
  barrier = fig2::barrier_time(iters);
  fig2_rounds();
  synchronized_rounds(clock);
  hetcoll_set_algorithm("");
  if (vr[0].native_call) {
    vr[0].algorithm = "native";
    vr[0].times = vr[1].times;
    vr[0].sync = vr[1].sync;
    vr[0].barrier = vr[1].barrier;
  }
  return vr;
}

// Writes text to path ("" or "-": standard output); false if it could not.
bool write_text(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fputs(text.c_str(), stdout);
    return true;
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  return bool(out);
}

// Rank 0: the rows as JSON (-o) and CSV (--csv). Returns the exit code.
int write_results(const Options& opt, const Machine& mc, const std::vector<Row>& rows, double start) {
  int rc = 0;
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::ostringstream js;
  js << "{\n \"tool\": " << json_str(std::string("hetcoll-bench ") + hetcoll_version()) << ",\n \"created\": \"" << date
     << "\",\n \"ranks\": " << g_size << ",\n \"hosts\": [";
  for (int r = 0; r < g_size; ++r) js << (r ? ", " : "") << json_str(mc.hosts[size_t(r)]);
  js << "],\n \"model\": " << json_str(mc.spec) << ",\n \"predictions\": " << (mc.gm ? "true" : "false");
  if (!mc.layout_note.empty()) js << ",\n \"note\": " << json_str(mc.layout_note);
  js << ",\n \"procedure\": \"Banikazemi et al. 1999 Fig. 2: barrier-subtracted loops, the slowest rank; min and "
        "median over repeats, variants interleaved; calls the barrier hides also from a synchronized start "
        "(SKaMPI/ReproMPI windows: the slowest rank's end, median over calls and repeats); where hetcoll's "
        "decision is native (its call is PMPI's) its row has the native row's times (timed_as); beyond the "
        "repeats, "
        "more (up to max_repeats, 20 s a row) while some variant's median was not known to within 5 % (its "
        "distribution-free 95 % interval)\",\n \"repeats\": "
     << opt.repeats << ",\n \"max_repeats\": " << opt.max_repeats << ",\n \"rows\": [";
  std::ostringstream csv;
  csv << "op,bytes,variant,algorithm,min_us,median_us,sync_median_us,predicted_us,bound_us,note\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    const fig2::Summary s = fig2::summarize(r.times);
    const bool ran = !r.times.empty();
    js << (i ? ",\n" : "\n") << "  {\"op\": " << json_str(r.op) << ", \"bytes\": " << r.bytes
       << ", \"variant\": " << json_str(r.variant) << ", \"algorithm\": " << json_str(r.algorithm)
       << ", \"min_s\": " << (ran ? num(s.min) : "null") << ", \"median_s\": " << (ran ? num(s.median) : "null")
       << ", \"predicted_s\": " << num(r.predicted) << ", \"bound_s\": " << num(r.bound) << ", \"times_s\": [";
    for (size_t k = 0; k < r.times.size(); ++k) js << (k ? ", " : "") << num(r.times[k]);
    js << "], \"sync_median_s\": " << (!r.sync.empty() ? num(fig2::summarize(r.sync).median) : "null")
       << ", \"barrier_s\": " << num(r.barrier);
    if (!r.note.empty()) js << ", \"note\": " << json_str(r.note);
    if (r.native_call) js << ", \"timed_as\": \"native\"";
    js << "}";
    csv << r.op << ',' << r.bytes << ',' << r.variant << ',' << r.algorithm << ',' << (ran ? num(s.min * 1e6) : "")
        << ',' << (ran ? num(s.median * 1e6) : "") << ',' << (!r.sync.empty() ? num(fig2::summarize(r.sync).median * 1e6) : "")
        << ',' << (std::isfinite(r.predicted) ? num(r.predicted * 1e6) : "")
        << ',' << (std::isfinite(r.bound) ? num(r.bound * 1e6) : "")
        << ',' << '"' << r.note << '"' << '\n';
  }
  js << "\n ]\n}\n";
  if (!write_text(opt.out, js.str())) {
    std::fprintf(stderr, "hetcoll-bench: cannot write %s\n", opt.out.c_str());
    rc = 1;
  }
  if (!opt.csv.empty() && !write_text(opt.csv, csv.str())) {
    std::fprintf(stderr, "hetcoll-bench: cannot write %s\n", opt.csv.c_str());
    rc = 1;
  }
  if (!opt.out.empty() && opt.out != "-")
    std::fprintf(stderr, "hetcoll-bench: %zu rows, %d ranks, %.1f s; wrote %s%s%s\n", rows.size(), g_size,
                 MPI_Wtime() - start, opt.out.c_str(), opt.csv.empty() ? "" : " and ", opt.csv.c_str());
  return rc;
}

// ------------------------------------------------------------------ --overlap

// A compute loop of `seconds` (a dependent floating-point chain, the clock
// read every 256 steps), calling MPI_Test on `req` every `test_every`
// seconds when that is not 0 — what an application computing beside a
// non-blocking collective does.
volatile double g_compute_sink = 0;  // keeps the loop's arithmetic

double compute_for(double seconds, MPI_Request* req, double test_every) {
  double x = 1.0;
  const double t0 = MPI_Wtime();
  double next_test = t0 + test_every;
  for (;;) {
    for (int i = 0; i < 256; ++i) x = x * 1.0000001 + 1e-9;
    const double now = MPI_Wtime();
    if (now - t0 >= seconds) break;
    if (test_every > 0 && req && now >= next_test) {
      int flag = 0;
      MPI_Test(req, &flag, MPI_STATUS_IGNORE);
      next_test = now + test_every;
    }
  }
  g_compute_sink = x;
  return x;
}

struct OverlapRow {
  std::string op, variant, algorithm;
  uint64_t bytes = 0;
  std::vector<double> call, compute, overlapped;  // s, per repeat (the slowest rank)
};

// OSU's method (osu_iallreduce and the others): for each non-blocking
// collective, size and variant (hetcoll's MPI_I<coll>, the native
// PMPI_I<coll>), the mean time of the call and its wait alone, of a
// compute loop alone, and of the call, the compute loop and the wait —
// every iteration timed on its own between barriers, the slowest rank,
// the median over repeats. The compute loop lasts as long as the slower
// variant's call, so that every variant overlaps the same work; overlap =
// 1 - (overlapped - compute) / call, within 0 and 1.
std::vector<OverlapRow> run_overlap(const Options& opt) {
  std::vector<OverlapRow> rows;
  uint64_t largest = 8;
  for (uint64_t x : opt.sizes) largest = std::max(largest, x);
  std::vector<char> a(size_t(largest) * size_t(g_size) + 64, 1), b(a.size(), 2);
  size_t steps = 0, step = 0;
  for (const std::string& op : opt.ops) steps += op == "barrier" ? 1 : opt.sizes.size();
  for (const std::string& op : opt.ops)
    for (uint64_t bytes : opt.sizes) {
      if (op == "barrier" && bytes != opt.sizes.front()) break;
      const int n = op == "barrier" ? 0 : int(bytes / 8);
      hetcoll::bench::NonBlockingCall f = hetcoll::bench::nonblocking_call(op, n, a, b);
      std::vector<OverlapRow> vr(opt.native ? 2 : 1);
      for (size_t v = 0; v < vr.size(); ++v) {
        vr[v].op = op;
        vr[v].bytes = op == "barrier" ? 0 : bytes;
        vr[v].variant = v == 0 ? "hetcoll" : "native";
      }
      auto call = [&](bool native) {
        MPI_Request r;
        f(native, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      };
      call(false);  // hetcoll plans outside the timing
      char ran[256] = {0};
      hetcoll_last_algorithm(MPI_COMM_WORLD, ran, sizeof ran);
      vr[0].algorithm = ran[0] ? ran : "native";
      if (opt.native) {
        vr[1].algorithm = "native";
        call(true);
      }
      const int iters = fig2::iterations_for([&] { call(opt.native); }, opt.target);
      for (int rep = 0; rep < opt.repeats; ++rep) {
        std::vector<double> t_call(vr.size());
        for (size_t j = 0; j < vr.size(); ++j) {
          const size_t v = (j + size_t(rep)) % vr.size();
          t_call[v] = fig2::timed_alone([&] { call(v == 1); }, iters);
        }
        double compute = *std::max_element(t_call.begin(), t_call.end());
        PMPI_Bcast(&compute, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        const double t_comp = fig2::timed_alone([&] { compute_for(compute, nullptr, 0); }, iters);
        for (size_t j = 0; j < vr.size(); ++j) {
          const size_t v = (j + size_t(rep)) % vr.size();
          const double t_ovl = fig2::timed_alone(
              [&] {
                MPI_Request r;
                f(v == 1, &r);
                compute_for(compute, &r, opt.test_every);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
              },
              iters);
          vr[v].call.push_back(t_call[v]);
          vr[v].compute.push_back(t_comp);
          vr[v].overlapped.push_back(t_ovl);
        }
      }
      ++step;
      if (opt.progress && g_rank == 0) {
        std::string what = op + " " + std::to_string(vr[0].bytes) + " B:";
        for (const OverlapRow& r : vr) {
          const double c = fig2::summarize(r.call).median, o = fig2::summarize(r.overlapped).median,
                       k = fig2::summarize(r.compute).median;
          what += " " + r.variant + " " + format_time(o) + " overlapped (" +
                  std::to_string(std::lround(100 * std::clamp(1 - (o - k) / std::max(c, 1e-12), 0.0, 1.0))) + " %)";
        }
        progress_line(step, steps, what);
      }
      for (OverlapRow& r : vr) rows.push_back(std::move(r));
    }
  return rows;
}

int write_overlap(const Options& opt, const std::vector<OverlapRow>& rows, double start) {
  char date[32];
  std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  std::vector<std::string> said_by_the_library;
  const bool thread = read_settings(said_by_the_library).progress_thread;
  std::ostringstream js, csv;
  js << "{\n \"tool\": " << json_str(std::string("hetcoll-bench ") + hetcoll_version()) << ",\n \"created\": \"" << date
     << "\",\n \"ranks\": " << g_size << ",\n \"mode\": \"overlap\",\n \"progress_thread\": "
     << json_str(thread ? "1" : "0")
     << ",\n \"test_every_s\": " << num(opt.test_every)
     << ",\n \"procedure\": \"OSU Micro-Benchmarks' non-blocking method: each iteration timed alone between "
        "barriers (the slowest rank's mean), the call and its wait alone, a compute loop alone (as long as the "
        "slower variant's call), the call, the loop and the wait; median over repeats; overlap = 1 - "
        "(overlapped - compute) / call, within 0 and 1\",\n \"repeats\": "
     << opt.repeats << ",\n \"rows\": [";
  csv << "op,bytes,variant,algorithm,call_us,compute_us,overlapped_us,overlap_percent\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const OverlapRow& r = rows[i];
    const double c = fig2::summarize(r.call).median, k = fig2::summarize(r.compute).median,
                 o = fig2::summarize(r.overlapped).median;
    const double ov = std::clamp(1 - (o - k) / std::max(c, 1e-12), 0.0, 1.0);
    js << (i ? ",\n" : "\n") << "  {\"op\": " << json_str(r.op) << ", \"bytes\": " << r.bytes
       << ", \"variant\": " << json_str(r.variant) << ", \"algorithm\": " << json_str(r.algorithm)
       << ", \"call_s\": " << num(c) << ", \"compute_s\": " << num(k) << ", \"overlapped_s\": " << num(o)
       << ", \"overlap\": " << num(ov) << ", \"overlapped_times_s\": [";
    for (size_t j = 0; j < r.overlapped.size(); ++j) js << (j ? ", " : "") << num(r.overlapped[j]);
    js << "]}";
    csv << r.op << ',' << r.bytes << ',' << r.variant << ',' << r.algorithm << ',' << num(c * 1e6) << ','
        << num(k * 1e6) << ',' << num(o * 1e6) << ',' << num(100 * ov) << '\n';
  }
  js << "\n ]\n}\n";
  int rc = 0;
  if (!write_text(opt.out, js.str())) rc = 1;
  if (!opt.csv.empty() && !write_text(opt.csv, csv.str())) rc = 1;
  if (rc) std::fprintf(stderr, "hetcoll-bench: cannot write the results\n");
  else if (!opt.out.empty() && opt.out != "-")
    std::fprintf(stderr, "hetcoll-bench: %zu overlap rows, %d ranks, %.1f s; wrote %s\n", rows.size(), g_size,
                 MPI_Wtime() - start, opt.out.c_str());
  return rc;
}

int main(int argc, char** argv) {
  program::name() = "hetcoll-bench";
  if (program::checking(argc, argv)) {
    const Options o = parse_args(argc, argv);
    if (!o.out.empty()) program::check_writable(o.out, "-o");
    if (!o.csv.empty()) program::check_writable(o.csv, "--csv");
    if (!o.model.empty()) {
      try {
        load_model(o.model);
      } catch (const std::exception& e) {
        fail(std::string("--model: ") + e.what());
      }
    }
    return 0;
  }
  hetcoll::bench::time_decisions_not_learning();
  program::start_mpi(&argc, &argv, g_rank, g_size);
  const Options opt = parse_args(argc, argv);
  const double start = MPI_Wtime();

  if (opt.overlap) {
    const std::vector<OverlapRow> rows = run_overlap(opt);
    int rc = g_rank == 0 ? write_overlap(opt, rows, start) : 0;
    PMPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
  }
  const Machine mc = machine_of(opt);

  uint64_t largest = 8;
  for (uint64_t s : opt.sizes) largest = std::max(largest, s);
  std::vector<char> a(size_t(largest) * size_t(g_size) + 64, 1), b(a.size(), 2);
  std::vector<Row> rows;
  sync_start::SharedClock clock;  // synchronized when a row first needs it, again after a minute
  size_t steps = 0, step = 0;
  for (const std::string& op : opt.ops) steps += op == "barrier" ? 1 : opt.sizes.size();
  for (const std::string& op : opt.ops) {
    for (uint64_t bytes : opt.sizes) {
      if (op == "barrier" && bytes != opt.sizes.front()) break;
      const uint64_t n = op == "barrier" ? 0 : bytes / 8;
      const Collective call = describe(op, n);
      hetcoll::bench::Call f = hetcoll::bench::collective_call(op, int(n), a, b);
      std::vector<Row> vr = RowTiming(op, bytes, call, opt, f).run(clock);
      double lb = NAN;
      if (mc.gm) {
        try {
          lb = lower_bound(call, *mc.gm).time;
        } catch (const std::exception&) {
        }
      }
      for (Row& r : vr) {
        r.predicted = predict(mc, r.algorithm, call);
        r.bound = lb;
        rows.push_back(r);
      }
      ++step;
      if (opt.progress && g_rank == 0) {
        const fig2::Summary h = fig2::summarize(vr[0].times);
        std::string what = op + " " + std::to_string(op == "barrier" ? 0 : bytes) + " B: " + vr[0].algorithm + " " +
                           format_time(h.median);
        if (opt.native && vr.size() > 1) what += ", native " + format_time(fig2::summarize(vr[1].times).median);
        progress_line(step, steps, what);
      }
    }
  }

  int rc = g_rank == 0 ? write_results(opt, mc, rows, start) : 0;
  PMPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
