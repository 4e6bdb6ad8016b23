#include "interpose/compile.hpp"

#include <algorithm>
#include <mutex>
#include <set>

#include "algorithms/registry.hpp"
#include "interpose/errors.hpp"
#include "interpose/runtime.hpp"
#include "model/bound.hpp"
#include "model/profile_model.hpp"
#include "model/units.hpp"
#include "plan/configuration.hpp"
#include "plan/build_schedule.hpp"
#include "schedule/passes.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll::mpi {

namespace {

// "p=4 root=0 size=8B": the call's shape, after its MPI name.
std::string describe_call(const Collective& c) {
  std::string s = cat("p=", c.nranks);
  if (has_root(c.op)) s += cat(" root=", c.root);
  if (c.op != CollOp::barrier && counts_known_everywhere(c.op)) s += cat(" size=", c.size_bytes(), "B");
  return s;
}

// The planner for a call on this communicator. A profile (HETCOLL_PROFILE=
// FILE) describes hosts: the communicator's ranks are mapped to the
// profile's hosts by the host keys every rank gathered when the state was
// made, so all ranks map alike. A communicator with a host the profile does
// not describe runs on the default model (said once, by the lowest such rank).
std::shared_ptr<Planner> planner_for(CommState& st) {
  const uint64_t gen = runtime().generation.load(std::memory_order_acquire);
  std::shared_ptr<Planner> pl = current_planner();
  const auto* pm = dynamic_cast<const ProfileModel*>(&pl->model());
  if (!pm) return pl;
  if (st.host_generation != gen) {
    st.host_map.assign(st.host_keys.size(), -1);
    st.host_group_key = 0x9E3779B97F4A7C15ull;
    int unknown = -1;
    for (size_t r = 0; r < st.host_keys.size(); ++r) {
      const int h = pm->host_of_key(st.host_keys[r]);
      if (h < 0 && unknown < 0) unknown = int(r);
      st.host_map[r] = h;
      st.host_group_key = (st.host_group_key ^ uint64_t(h + 1)) * 0x100000001B3ull;
    }
    if (unknown >= 0) {
      st.host_map.clear();
      if (unknown == st.info.rank)
        say_once(cat("HETCOLL_PROFILE does not describe host '", st.host_name,
                     "': collectives of communicators with ranks on it use the default model ",
                     default_model_spec(), " (probe these hosts: hetcoll probe)"),
                 true);
    }
    st.host_generation = gen;
  }
  return st.host_map.empty() ? fallback_planner() : pl;
}

// What HETCOLL_DEBUG=explain says of a decision, after the call's name
// (explain_once): the choice, its prediction, the runner-up and the bound;
// a note on a line of its own before it.
std::string explanation(const Decision& d, const Collective& call, Planner& pl, const CommState& st) {
  std::string text;
  if (!d.note.empty() && !d.native()) text = cat(describe_call(call), ": ", d.note, "\n");
  std::string line = cat(describe_call(call), ": ", d.algorithm);
  if (d.native()) {
    line += cat(" (", d.note, ")");
  } else if (d.forced) {
    line += " (forced by HETCOLL_ALGO)";
  } else if (d.from_table) {
    line += " (from HETCOLL_TABLE)";
  } else if (d.measured) {
    line += cat(", measured ", format_time(d.measured_time), " vs native ", format_time(d.native_time),
                d.measured_how == kTimingLearned ? " (learned in a job: HETCOLL_LEARN_SAVE; predicted "
                                                 : " (hetcoll tune; predicted ",
                format_time(d.predicted), ")");
  } else {
    line += cat(", predicted ", format_time(d.predicted));
    if (!counts_known_everywhere(call.op))
      line += cat(" for blocks of ", kUnknownBlockBytes, " B (chosen without the counts: no rank knows them all)");
    if (!d.runner_up.empty())
      line += cat("; runner-up ", d.runner_up, " ", format_time(d.runner_up_predicted), " (+",
                  int(100.0 * (d.runner_up_predicted - d.predicted) / std::max(d.predicted, 1e-30)), "%)");
    // The physical bound of this call on the group's machine (docs/bound.md).
    try {
      const std::vector<int> none;
      const bool hosts = pl.model().maps_hosts();
      const bool per_rank = pl.model().ranks() > 0;
      const ModelPtr gm = pl.model_for(hosts ? st.host_map : (per_rank ? st.world_ranks : none), call.nranks);
      const Bound b = lower_bound(call, *gm);
      if (b.time > 0) line += cat("; bound ", format_time(b.time), " (", b.cut, ")");
    } catch (const std::exception&) {  // an explanation only
    }
  }
  return text + line;
}

// Said once per decision and form the program called it in, on rank 0 of
// the communicator: "MPI_Ibcast p=4 root=0 size=8B: binomial_tree, ...".
void explain_once(const Compiled& cc, const char* name) {
  static std::mutex mu;
  static std::set<std::pair<std::shared_ptr<const void>, const char*>> said;  // holds them: no address reused
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!said.insert({cc.decision, name}).second) return;
  }
  size_t at = 0;
  for (size_t nl; (nl = cc.explanation.find('\n', at)) != std::string::npos; at = nl + 1)
    say(cat(name, " ", cc.explanation.substr(at, nl - at)));
  say(cat(name, " ", cc.explanation.substr(at)));
}

// The planner's decision for this call, and its explanation when asked
// for (HETCOLL_DEBUG=explain).
Decision decision_for(const Collective& c, Planner& pl, CommState& st, Compiled& cc) {
  Collective call = c;
  call.in_place = false;  // in-place is the root's affair: decide as everybody does
  const bool hosts = pl.model().maps_hosts();
  const bool per_rank = pl.model().ranks() > 0;
  const std::shared_ptr<const Decision> shared =
      hosts ? pl.decide_shared(call, st.host_group_key, st.host_map)
            : pl.decide_shared(call, per_rank ? st.group_key : 0, per_rank ? st.world_ranks : std::vector<int>{});
  const Decision& d = *shared;
  cc.decision = shared;
  if (runtime().explain && st.info.rank == 0) cc.explanation = explanation(d, call, pl, st);
  return d;
}

uint64_t key_of(const Collective& c) {
  uint64_t h = kFnvOffset;
  auto mix = [&](uint64_t x) { h = mix_word(h, x); };
  mix(uint64_t(c.op));
  mix(uint64_t(uint32_t(c.nranks)));
  mix(uint64_t(uint32_t(c.root)));
  mix(c.count);
  mix(c.elem_size);
  mix(uint64_t(c.in_place) * 2 + c.order_free);
  if (!c.counts.empty() || !c.sendcounts.empty())  // the v-collectives
    for (auto* v : {&c.counts, &c.displs, &c.sendcounts, &c.sdispls, &c.recvcounts, &c.rdispls}) {
      mix(v->size());
      for (uint64_t x : *v) mix(x);
    }
  return h;
}

bool same(const Collective& a, const Collective& b) {
  return a.op == b.op && a.nranks == b.nranks && a.root == b.root && a.count == b.count && a.elem_size == b.elem_size &&
         a.in_place == b.in_place && a.order_free == b.order_free && a.counts == b.counts && a.displs == b.displs &&
         a.sendcounts == b.sendcounts && a.recvcounts == b.recvcounts && a.sdispls == b.sdispls &&
         a.rdispls == b.rdispls;
}

// Generates this rank's program of `choice` for `coll` and compiles it into cc.
void compile_choice(Compiled& cc, const AlgorithmChoice& choice, bool from_table, const Collective& coll,
                    CommState& st, Planner& pl, int rank) {
  const Algorithm& a = *choice.algorithm;
  Collective run_coll = coll;
  if (coll.in_place) {
    // An algorithm that cannot run in place gets the input copied aside.
    cc.aside = std::find(a.copy_in_place.begin(), a.copy_in_place.end(), coll.op) != a.copy_in_place.end();
    run_coll.in_place = !cc.aside;
  }
  // The execution passes (schedule/passes.hpp): sends of the rank's own
  // input read it where the user keeps it; the first contribution received
  // lands in the accumulator. The executor then folds the remaining input
  // copies into reductions.
  Schedule s;
  try {
    // The group's model, mapped as decide() mapped it.
    const bool hosts = pl.model().maps_hosts();
    const bool per_rank = pl.model().ranks() > 0;
    const ModelPtr gm = pl.model_for(hosts ? st.host_map : per_rank ? st.world_ranks : std::vector<int>{}, coll.nranks);
    s = optimize_for_execution(build_schedule(choice, run_coll, *gm, rank));
  } catch (const InputError& e) {
    // A decision table is the user's file: an entry that does not fit the
    // call (edited by hand) sends it to the native MPI, on every rank alike.
    if (from_table) throw Decline{cat("HETCOLL_TABLE's ", choice.spec(), " does not fit this call: ", e.what())};
    // The planner checked this decision on its representative call; a
    // generator refusing the call itself is hetcoll's bug.
    throw std::logic_error(cat(choice.spec(), " could not be built for ", run_coll.describe(), ": ", e.what()));
  }
  cc.prog = compile(s, rank, st.info.tag_limit, pl.model().send_ports());
}

// Decides, generates this rank's program and compiles it.
Compiled compile_call(const Collective& coll, CommState& st, int rank) {
  Compiled cc;
  cc.coll = coll;
  const std::shared_ptr<Planner> pl = planner_for(st);  // model and overrides, consistent
  Decision d = decision_for(coll, *pl, st, cc);
  if (d.native()) {
    cc.native = true;
    cc.why = d.note;  // the call's name is the caller's (guarded): blocking, non-blocking or persistent
    return cc;
  }
  compile_choice(cc, d.choice, d.from_table, coll, st, *pl, rank);
  return cc;
}

}  // namespace

std::shared_ptr<const Compiled> compiled_as(CommState& st, const Collective& coll, const std::string& spec) {
  const uint64_t key = mix_word(key_of(coll), fnv1a(spec));
  auto it = st.compiled.find(key);
  if (it == st.compiled.end() || !same(it->second->coll, coll) || it->second->spec != spec) {
    if (st.compiled.size() >= 256) st.compiled.clear();
    auto cc = std::make_shared<Compiled>();
    cc->coll = coll;
    cc->spec = spec;
    const std::shared_ptr<Planner> pl = planner_for(st);
    compile_choice(*cc, choose_algorithm(spec, coll.op), false, coll, st, *pl, st.info.rank);
    it = st.compiled.insert_or_assign(key, std::move(cc)).first;
  }
  st.last = it->second->prog.algorithm;
  return it->second;
}

const Compiled& compiled_for(CommState& st, const Collective& coll, const char* name) {
  const uint64_t gen = runtime().generation.load(std::memory_order_acquire);
  if (st.generation != gen) {
    st.compiled.clear();
    st.recent = nullptr;
    st.generation = gen;
  }
  const uint64_t key = key_of(coll);
  if (!st.recent || st.recent_key != key || !same(st.recent->coll, coll)) {
    auto it = st.compiled.find(key);
    if (it == st.compiled.end() || !same(it->second->coll, coll) || !it->second->spec.empty()) {
      if (st.compiled.size() >= 256) st.compiled.clear();
      coll.check();
      auto cc = std::make_shared<Compiled>(compile_call(coll, st, st.info.rank));
      it = st.compiled.insert_or_assign(key, std::move(cc)).first;
    }
    st.recent = it->second;
    st.recent_key = key;
    st.last = st.recent->prog.algorithm;
  }
  const Compiled& cc = *st.recent;
  if (!cc.explanation.empty()) explain_once(cc, name);
  return cc;
}

}  // namespace hetcoll::mpi
