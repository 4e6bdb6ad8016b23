#include "interpose/learning.hpp"

#include <algorithm>
#include <unordered_map>

#include "algorithms/registry.hpp"
#include "interpose/compile.hpp"
#include "interpose/engine.hpp"
#include "interpose/runtime.hpp"
#include "interpose/tls.hpp"
#include "interpose/watchdog.hpp"
#include "model/profile_model.hpp"
#include "model/tuned_decisions.hpp"
#include "model/units.hpp"
#include "plan/learning.hpp"
#include "plan/planner.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll::mpi {

// One site: the rule, its candidates (0: the decision) and, for messages,
// what each is.
struct LearnedSite {
  Collective rep;                  // the representative call (the key's)
  std::vector<std::string> specs;  // candidate c's algorithm; "" for the native MPI
  std::vector<double> predicted;   // the model's price (0: none, the native MPI)
  LearnedChoice rule;
  std::shared_ptr<Compiled> native = std::make_shared<Compiled>();  // what learned_for returns for the native MPI
  std::string label;  // "MPI_Allreduce p=4 size~1048576B"
  int said_best = -1;  // the choice explain said last
  // What the rule measured when it last settled (its best: said_best):
  // what HETCOLL_LEARN_SAVE writes, even while the site explores again.
  std::vector<LearnedChoice::Measured> settled;
  LearnedSite(Collective r, std::vector<std::string> s, std::vector<double> p)
      : rep(std::move(r)), specs(std::move(s)), predicted(std::move(p)), rule(int(specs.size())) {}
};

struct LearnedSites {
  uint64_t generation = 0;
  bool off = false;  // an exchange failed: no more learning here
  std::unordered_map<uint64_t, std::unique_ptr<LearnedSite>> sites;
  // The last call shape's program (CommState::recent, held: its address is
  // never another shape's) and its site: the next call of the same shape
  // skips the representative and the lookup.
  std::shared_ptr<const Compiled> recent;
  LearnedSite* recent_site = nullptr;
};

namespace {

// Whether HETCOLL_LEARN learns this call: not a call whose counts no rank
// knows in full; under 'exact', only where every candidate gives the same
// bits (the same site keeps both kinds apart: order_free is in its key).
enum class Learns { yes, no, not_these_bits };
Learns learns(LearnMode mode, const Collective& coll) {
  if (mode == LearnMode::off || !counts_known_everywhere(coll.op)) return Learns::no;
  if (mode == LearnMode::all || !is_reduction(coll.op) || coll.order_free) return Learns::yes;
  return Learns::not_these_bits;
}

// The model's next candidates a site times beside the decision and native.
constexpr size_t kRunnersUp = 2;

// A blocking call timed: its site, from when.
struct Timed {
  CommState* st = nullptr;
  LearnedSite* site = nullptr;
  double start = 0;  // MPI_Wtime (SimGrid's simulated clock under SMPI)
  bool exchange = false;
};
HETCOLL_TLS Timed t_timed;
HETCOLL_TLS bool t_in_scope = false;

uint64_t site_key(const Collective& r) {
  uint64_t h = kFnvOffset;
  for (uint64_t x : {uint64_t(r.op), uint64_t(uint32_t(r.nranks)), uint64_t(uint32_t(r.root)), r.count,
                     uint64_t(r.elem_size), uint64_t(r.order_free), r.counts.empty() ? 0 : r.counts[0]})
    h = mix_word(h, x);
  return h;
}

bool same_site(const Collective& a, const Collective& b) {
  return a.op == b.op && a.nranks == b.nranks && a.root == b.root && a.count == b.count &&
         a.elem_size == b.elem_size && a.order_free == b.order_free && a.counts == b.counts;
}

// The algorithm's name in a spec ("ring_allreduce[seg=64k]" -> "ring_allreduce").
std::string algorithm_of(const std::string& spec) { return spec.substr(0, spec.find('[')); }

// A new site's candidates: the decision, the native MPI, then the model's
// best candidates of other algorithms. Empty: nothing to learn (the choice
// was forced, or taken from a table).
std::unique_ptr<LearnedSite> new_site(const Collective& rep, const Decision& d, const char* name,
                                      const std::string& comm) {
  if (d.forced || d.from_table) return nullptr;
  std::vector<std::string> specs{d.native() ? "" : d.algorithm};
  std::vector<double> predicted{d.native() ? 0 : d.predicted};
  if (!d.native()) specs.push_back(""), predicted.push_back(0);
  if (d.weighed) {
    size_t added = 0;
    for (const Candidate& c : d.weighed->candidates) {
      if (added == kRunnersUp) break;
      bool seen = false;
      for (const std::string& s : specs) seen = seen || (!s.empty() && algorithm_of(s) == algorithm_of(c.algorithm));
      if (seen) continue;
      specs.push_back(c.algorithm);
      predicted.push_back(c.predicted);
      ++added;
    }
  }
  auto site = std::make_unique<LearnedSite>(rep, std::move(specs), std::move(predicted));
  site->native->native = true;
  site->native->why = "learned in the job (HETCOLL_LEARN): the native collective is the fastest measured";
  site->label = cat(name, " p=", rep.nranks);
  if (has_root(rep.op)) site->label += cat(" root=", rep.root);
  if (rep.op != CollOp::barrier) site->label += cat(" size~", rep.size_bytes(), "B");
  if (!comm.empty()) site->label += cat(" on ", comm);
  return site;
}

std::string candidate_name(const LearnedSite& s, int c) { return s.specs[size_t(c)].empty() ? "native" : s.specs[size_t(c)]; }

// What HETCOLL_DEBUG=explain says when a site settles or opens again.
std::string told(const LearnedSite& s, LearnedChoice::Change change, int was_running) {
  const LearnedChoice& r = s.rule;
  if (change == LearnedChoice::Change::reopened)
    return cat(s.label, ": ", candidate_name(s, was_running), " no longer takes its measured time: measuring ",
               s.specs.size(), " candidates again (HETCOLL_LEARN)");
  std::string line = cat(s.label, ": learned ", candidate_name(s, r.best()), " ",
                         format_time(r.measured()[size_t(r.best())].mean()), " (the slowest rank's mean)");
  for (size_t c = 0; c < s.specs.size(); ++c) {
    if (int(c) == r.best()) continue;
    const LearnedChoice::Measured& m = r.measured()[c];
    line += cat("; ", candidate_name(s, int(c)), " ", m.calls ? format_time(m.mean()) : std::string("not run"));
    if (m.dropped) line += " (dropped)";
    if (s.predicted[c] > 0) line += cat(" [predicted ", format_time(s.predicted[c]), "]");
  }
  line += cat("; after ", r.calls(), " calls, exploring lost ",
              int(1000.0 * r.lost() / std::max(r.total(), 1e-30)) / 10.0, " % of their time");
  return line;
}

// The call's representative (in place or not: the root's affair) and its key.
Collective representative_of(const Collective& coll) {
  Collective call = coll;
  call.in_place = false;
  return representative(call);
}

// The site of this call's representative, made when it has none.
LearnedSite* find_or_make_site(LearnedSites& all, const Collective& coll, const Compiled& decided, const char* name,
                               const std::string& comm) {
  const Collective rep = representative_of(coll);
  const uint64_t key = site_key(rep);
  auto it = all.sites.find(key);
  if (it != all.sites.end()) return it->second && same_site(it->second->rep, rep) ? it->second.get() : nullptr;
  // Only the blocking form makes a site (the others are not timed); the
  // decision names the candidates. A call that moves no data has nothing to
  // learn (its site is kept empty).
  std::unique_ptr<LearnedSite> none;
  if (!decided.decision || (rep.op != CollOp::barrier && rep.total_bytes() == 0))
    return all.sites.emplace(key, std::move(none)).first->second.get();
  const Decision& d = *std::static_pointer_cast<const Decision>(decided.decision);
  std::unique_ptr<LearnedSite> site = new_site(rep, d, name, comm);
  LearnedSite* s = site.get();
  all.sites.emplace(key, std::move(site));  // nullptr too: nothing to learn there
  return s;
}

// A new configuration (hetcoll_set_*, agreed on MPI_COMM_WORLD): learned anew.
void forget_if_reconfigured(LearnedSites& all) {
  const uint64_t gen = runtime().generation.load(std::memory_order_acquire);
  if (all.generation == gen) return;
  all.sites.clear();
  all.recent = nullptr;
  all.recent_site = nullptr;
  all.generation = gen;
}

// The site of a blocking call (made by its first call; nullptr: not learned).
LearnedSite* site_for(CommState& st, const Collective& coll, const std::shared_ptr<const Compiled>& decided,
                      const char* name) {
  if (!st.learned) st.learned = std::make_shared<LearnedSites>();
  LearnedSites& all = *st.learned;
  if (all.off) return nullptr;
  forget_if_reconfigured(all);
  if (all.recent == decided) return all.recent_site;
  LearnedSite* s = find_or_make_site(all, coll, *decided, name, st.comm_name);
  all.recent = decided;
  all.recent_site = s;
  return s;
}
std::shared_ptr<const Compiled> program_of(CommState& st, const LearnedSite& s, int c,
                                           const std::shared_ptr<const Compiled>& decided, const Collective& coll) {
  if (c == 0) return decided;
  if (s.specs[size_t(c)].empty()) return s.native;
  return compiled_as(st, coll, s.specs[size_t(c)]);
}

// hetcoll_last_algorithm's answer: what runs ("" the native MPI), copied
// only when it changes (a compare, no allocation, on every call).
void name_last(CommState& st, const Compiled& cc) {
  static const std::string kNative;
  const std::string& now = cc.native ? kNative : cc.prog.algorithm;
  if (st.last != now) st.last = now;
}

}  // namespace

std::shared_ptr<const Compiled> learned_for(CommState& st, const std::shared_ptr<const Compiled>& decided,
                                            const Collective& coll, Form form, const char* name) {
  t_timed = Timed{};
  switch (learns(runtime().learn, coll)) {
    case Learns::yes: break;
    case Learns::no: return decided;
    case Learns::not_these_bits:  // said once per collective and communicator, under explain
      if (form == Form::blocking && t_in_scope && runtime().explain && st.info.rank == 0)
        say_once(cat(name, st.comm_name.empty() ? std::string() : cat(" on ", st.comm_name),
                     ": floating-point reductions are not learned under HETCOLL_LEARN=exact (their last bits "
                     "would follow what the job measured); HETCOLL_LEARN=1, the default, learns them"));
      return decided;
  }
  LearnedSite* s = nullptr;
  if (form == Form::blocking) {
    if (!t_in_scope) return decided;  // the C API: no native MPI to hand the call to
    s = site_for(st, coll, decided, name);
  } else if (st.learned && !st.learned->off) {  // the site its blocking calls made, if any (never made here)
    LearnedSites& all = *st.learned;
    forget_if_reconfigured(all);
    if (all.recent == decided) {
      s = all.recent_site;
    } else {
      const Collective rep = representative_of(coll);
      auto it = all.sites.find(site_key(rep));
      if (it != all.sites.end() && it->second && same_site(it->second->rep, rep)) s = it->second.get();
    }
  }
  if (!s) return decided;
  if (form != Form::blocking) {
    const int best = s->rule.best();
    if (best != 0 && runtime().explain && st.info.rank == 0)
      say_once(cat(name, s->label.substr(s->label.find(' ')), ": runs ", candidate_name(*s, best),
                   ", the fastest its blocking calls measured so far (HETCOLL_LEARN)"));
    std::shared_ptr<const Compiled> cc = program_of(st, *s, best, decided, coll);
    name_last(st, *cc);
    return cc;
  }
  const LearnedChoice::Step step = s->rule.next();
  std::shared_ptr<const Compiled> cc = program_of(st, *s, step.candidate, decided, coll);
  name_last(st, *cc);
  t_timed = Timed{&st, s, PMPI_Wtime(), step.exchange_after};
  return cc;
}

namespace {
void after_blocking_call() noexcept {
  if (!t_timed.site) return;
  const Timed t = t_timed;
  t_timed = Timed{};
  const double seconds = PMPI_Wtime() - t.start;
  CommState& st = *t.st;
  LearnedSite& s = *t.site;
  {
    std::unique_lock<std::mutex> lock(st.mu, std::defer_lock);
    if (st.multiple) lock.lock();
    s.rule.record(seconds);
  }
  if (!t.exchange) return;
  try {
    // The slowest rank's sum: every rank gets the same, the rule moves on it.
    double mine = s.rule.pending(), slowest = 0;
    static const char* const kWhat = "hetcoll's learning exchange (MPI_Allreduce on the private duplicate)";
    WatchedCall watch(kWhat, &st.name, false);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = PMPI_Iallreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, st.dup, &r);
    if (rc == MPI_SUCCESS) rc = wait_native(&r);
    check_mpi(rc, "MPI_Allreduce (HETCOLL_LEARN's exchange)");
    std::unique_lock<std::mutex> lock(st.mu, std::defer_lock);
    if (st.multiple) lock.lock();
    const int was_running = s.rule.running();
    const LearnedChoice::Change change = s.rule.agreed(slowest);
    const bool news = change == LearnedChoice::Change::reopened ||
                      (change == LearnedChoice::Change::settled && s.rule.best() != s.said_best);
    if (change == LearnedChoice::Change::settled) s.said_best = s.rule.best(), s.settled = s.rule.measured();
    if (news && runtime().explain && st.info.rank == 0) say(told(s, change, was_running));
  } catch (const std::exception& e) {
    if (st.learned) st.learned->off = true;
    say_once(cat("HETCOLL_LEARN: ", e.what(), ": no more learning on ", st.name), true);
  }
}
}  // namespace

LearningScope::LearningScope() noexcept {
  t_timed = Timed{};
  t_in_scope = true;
}

LearningScope::~LearningScope() {
  t_in_scope = false;
  after_blocking_call();
}

namespace {

// A settled site as a measured decision: its representative's collective
// and size, the best as winner, every candidate it ran with its mean (the
// slowest rank's, as min and median: the rule keeps means only) — as of
// its last settling (exploring again, some candidates are not yet run).
TunedEntry learned_entry(const LearnedSite& s) {
  TunedEntry e;
  e.op = coll_op_name(s.rep.op);
  e.bytes = s.rep.size_bytes();
  e.winner = candidate_name(s, s.said_best);
  e.timing = kTimingLearned;
  for (size_t c = 0; c < s.specs.size(); ++c) {
    const LearnedChoice::Measured& m = s.settled[c];
    if (m.calls == 0) continue;
    e.times.push_back({candidate_name(s, int(c)), Measure{m.mean(), m.mean()}, s.predicted[c]});
  }
  return e;
}

// The profile file the model was read from: its spec is "profile:PATH@digest".
std::string profile_path(const MachineModel& m) {
  const std::string spec = m.spec();
  const size_t at = spec.rfind('@');
  return spec.compare(0, 8, "profile:") == 0 && at != std::string::npos ? spec.substr(8, at - 8) : "";
}

// What save_learned writes; throws InputError saying why it cannot.
std::string write_learned(CommState& st, const std::string& out) {
  std::shared_ptr<Planner> pl = current_planner();
  const auto* pm = dynamic_cast<const ProfileModel*>(&pl->model());
  if (!pm) throw InputError(cat("the model is not a profile (", pl->model().spec(), "): nothing to write"));
  const std::string path = profile_path(*pm);
  const std::string text = read_model_file(path, "profile");
  if (fnv1a(text) != pm->content_digest())
    throw InputError(cat(path, " changed on disk since the job read it: not written"));
  if (st.host_map.empty() || std::count(st.host_map.begin(), st.host_map.end(), -1))
    throw InputError("the profile does not describe every host of MPI_COMM_WORLD: not written");
  check_profile_writable(out);  // said whether or not anything settled
  TunedLayout layout;
  layout.hosts = st.host_map;
  layout.created = utc_now();
  for (const auto& kv : st.learned->sites) {
    const LearnedSite* s = kv.second.get();
    if (!s || s->said_best < 0) continue;  // never settled
    layout.entries.push_back(learned_entry(*s));
    // The most calls a site learned from (the field's range: up to 2^20).
    layout.repeats = std::max(layout.repeats, int(std::min<uint64_t>(s->rule.calls(), 1 << 20)));
  }
  if (layout.entries.empty()) return cat("no collective of MPI_COMM_WORLD settled: ", out, " not written");
  const size_t learned = layout.entries.size();
  Profile p = parse_profile(text);
  const size_t kept = merge_tuned(p, std::move(layout));
  write_profile_file(p, out);
  return cat(learned, " learned decisions of MPI_COMM_WORLD (", st.info.size, " ranks) written to ", out,
             kept ? cat(", ", kept, " earlier measured decisions kept") : std::string(),
             ": HETCOLL_PROFILE=", out, " decides by them");
}
}  // namespace

void save_learned() noexcept {
  const SettingValues& v = runtime().settings;
  if (v.learn_save.empty()) return;
  try {
    CommState* st = find_state(MPI_COMM_WORLD);
    if (runtime().learn == LearnMode::off) throw InputError("HETCOLL_LEARN is off: nothing learned");
    if (!st || !st->learned)
      throw InputError(cat("no collective of MPI_COMM_WORLD was learned",
                           runtime().learn == LearnMode::exact
                               ? " (HETCOLL_LEARN=exact learns no floating-point reduction)"
                               : "",
                           ": nothing written"));
    if (st->info.rank != 0) return;
    std::unique_lock<std::mutex> lock(st->mu, std::defer_lock);
    if (st->multiple) lock.lock();
    say(cat("HETCOLL_LEARN_SAVE: ", write_learned(*st, v.learn_save)));
  } catch (const std::exception& e) {
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) say(cat("HETCOLL_LEARN_SAVE: ", e.what()));
  }
}

}  // namespace hetcoll::mpi
