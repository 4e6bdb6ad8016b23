#include "plan/planner.hpp"

#include <algorithm>
#include <cmath>

#include "model/hockney_model.hpp"
#include "model/units.hpp"
#include "model/profile_model.hpp"
#include "plan/build_schedule.hpp"
#include "util/error.hpp"

namespace hetcoll {

size_t measured_winner(const std::vector<TunedTime>& times) {
  size_t best = 0;
  for (size_t c = 1; c < times.size(); ++c)
    if (times[c].time.median < times[best].time.median) best = c;
  const Measure& w = times[best].time;
  const Measure& nat = times[0].time;
  if (best != 0 && !(w.median < (1 - kNativeMargin) * nat.median && w.min < (1 - kNativeMargin) * nat.min)) best = 0;
  return best;
}

Planner::Planner(ModelPtr model, Overrides overrides, std::shared_ptr<const DecisionTable> table)
    : model_(std::move(model)), overrides_(std::move(overrides)) {
  if (!model_) throw InputError("planner needs a machine model");
  if (!table || !table_mismatch(*table, *model_, overrides_.rules().size()).empty()) return;
  for (const TableEntry& e : table->entries) {
    auto d = std::make_shared<Decision>();
    if (e.algorithm == "native") {
      d->algorithm = "native";
    } else {
      d->choice = choose_algorithm(e.algorithm, e.op);
      d->algorithm = d->choice.spec();
    }
    d->predicted = e.predicted;
    d->runner_up = e.runner_up;
    d->runner_up_predicted = e.runner_up_predicted;
    d->note = e.note;
    d->from_table = true;
    d->checked = d->native();
    Key key{uint8_t(e.op), e.order_free, e.nranks, has_root(e.op) ? e.root : 0, e.elem, e.cls, -1, 0};
    preloaded_ += cache_.emplace(key, std::move(d)).second;
  }
}

size_t Planner::KeyHash::operator()(const Key& k) const {
  uint64_t h = uint64_t(k.op) * 2 + k.order_free;
  for (uint64_t x : {uint64_t(uint32_t(k.nranks)), uint64_t(uint32_t(k.root)), uint64_t(k.elem),
                     uint64_t(uint32_t(k.cls)), uint64_t(uint32_t(k.rule)), k.group})
    h = (h ^ x) * 0x100000001B3ull + (h >> 29);
  return size_t(h);
}

ModelPtr Planner::model_for(const std::vector<int>& rank_map, int n) const {
  return group_model(model_, rank_map, n);
}

size_t Planner::cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

Decision Planner::planned(const Collective& rep, const std::vector<int>& rank_map) const {
  PlanOptions opt;
  opt.rank_map = rank_map;
  PlanResult r;
  try {
    r = plan(rep, *model_, opt);
  } catch (const TooLarge& e) {
    Decision native;  // the same on every rank: it depends on the call's class only
    native.algorithm = "native";
    native.note = e.what();
    return native;
  }
  Decision d;
  auto weighed = std::make_shared<PlanResult>(std::move(r));
  const PlanResult& r2 = *weighed;
  d.weighed = weighed;
  d.choice = choose_algorithm(r2.best().algorithm, rep.op);
  d.algorithm = d.choice.spec();
  d.predicted = r2.best().predicted;
  if (r2.candidates.size() > 1) {
    d.runner_up = r2.candidates[1].algorithm;
    d.runner_up_predicted = r2.candidates[1].predicted;
  }
  return d;
}

std::string Planner::unfit(const AlgorithmChoice& choice, const Collective& rep, const std::vector<int>& rank_map) const {
  if (auto no = disqualified(*choice.algorithm, rep)) return *no;
  try {
    check_params(*choice.algorithm, choice.params);
    build_schedule(choice, rep, *model_for(rank_map, rep.nranks), -1, kMaxScheduleOps);
  } catch (const TooLarge&) {
    return cat("its schedule would exceed ", kMaxScheduleOps, " operations");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool Planner::measured(const Collective& rep, const std::vector<int>& rank_map, int cls, Decision& d) const {
  const auto* pm = dynamic_cast<const ProfileModel*>(model_.get());
  if (!pm || !pm->has_measured() || cls < 0) return false;
  const TunedEntry* e =
      pm->measured(coll_op_name(rep.op), rank_map.empty() ? pm->default_rank_map(rep.nranks) : rank_map, cls);
  if (!e) return false;
  double native = 0, best_other = 0;
  std::string other;
  for (const TunedTime& t : e->times) {
    if (t.algorithm == "native") native = t.time.median;
    else if (t.algorithm != e->winner && (other.empty() || t.time.median < best_other))
      other = t.algorithm, best_other = t.time.median;
  }
  const auto us = [](double s) { return format_time(s); };
  if (e->winner == "native") {
    d = Decision{};
    d.algorithm = "native";
    d.measured = true;
    d.measured_how = e->timing;
    d.native_time = native;
    d.note = cat("measured: native ", us(native),
                 other.empty() ? std::string() : cat(", hetcoll's best ", other, " ", us(best_other)));
    return true;
  }
  std::string why;
  try {
    AlgorithmChoice choice = choose_algorithm(e->winner, rep.op);
    why = unfit(choice, rep, rank_map);
    if (why.empty()) {
      Decision planned_d = planned(rep, rank_map);  // its prediction, and the runner-up
      d = Decision{};
      d.choice = choice;
      d.algorithm = choice.spec();
      d.measured = true;
      d.measured_how = e->timing;
      d.native_time = native;
      for (const TunedTime& t : e->times)
        if (t.algorithm == e->winner) d.measured_time = t.time.median;
      if (planned_d.weighed)
        for (const Candidate& c : planned_d.weighed->candidates)
          if (c.algorithm == d.algorithm) d.predicted = c.predicted;
      d.weighed = planned_d.weighed;
      d.runner_up = native > 0 ? "native" : other;
      d.runner_up_predicted = 0;
      return true;
    }
  } catch (const std::exception& ex) {  // InputError, TooLarge: the file is the user's
    why = ex.what();
  }
  d = planned(rep, rank_map);
  d.note = cat("the measured winner '", e->winner, "' does not fit this call (", why, "): planned instead");
  return true;
}

Decision Planner::decide(const Collective& call, uint64_t group_key, const std::vector<int>& rank_map) {
  bool fresh = false;
  Decision d = *decide_shared(call, group_key, rank_map, &fresh);
  d.fresh = fresh;
  return d;
}

std::shared_ptr<const Decision> Planner::decide_shared(const Collective& call, uint64_t group_key,
                                                       const std::vector<int>& rank_map, bool* fresh) {
  if (fresh) *fresh = false;
  const bool sized = counts_known_everywhere(call.op);
  const uint64_t bytes = sized ? call.size_bytes() : 0;
  std::optional<size_t> rule = overrides_.match(call.op, sized ? std::optional<uint64_t>(bytes) : std::nullopt);
  Key key{uint8_t(call.op), call.order_free, call.nranks, has_root(call.op) ? call.root : 0, call.elem_size,
          sized ? size_class(bytes) : -1, rule ? int32_t(*rule) : -1, group_key};
  std::shared_ptr<const Decision> unchecked;  // a table's entry, not yet held to the rules
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      if (it->second->checked) return it->second;
      unchecked = it->second;
    }
  }
  // Everything below depends only on the key: the representative, the
  // model, the overrides, the table.
  const Collective rep = representative(call);
  Decision d;
  if (unchecked) {
    d = *unchecked;
    const std::string why = unfit(d.choice, rep, rank_map);
    const bool replanned = !why.empty();
    if (replanned) {
      d = planned(rep, rank_map);
      d.note = cat("HETCOLL_TABLE's ", unchecked->algorithm, " does not fit this call (", why, "): planned instead");
    }
    d.checked = true;
    auto stored = std::make_shared<const Decision>(std::move(d));
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = cache_[key];
    if (slot == unchecked) {  // first here (another thread may have checked it meanwhile)
      slot = stored;
      if (fresh) *fresh = replanned;  // a lookup, unless the entry did not fit
    }
    return slot;
  } else if (rule) {
    const OverrideRule& r = overrides_.rules()[*rule];
    const std::string why = unfit(r.algorithm, rep, rank_map);
    if (why.empty()) {
      d.choice = r.algorithm;
      d.algorithm = d.choice.spec();
      d.forced = true;
    } else {
      d = planned(rep, rank_map);
      d.note = cat("override '", r.text, "' does not fit this call (", why, "): planned instead");
    }
  } else if (!measured(rep, rank_map, sized ? size_class(bytes) : -1, d)) {
    d = planned(rep, rank_map);
  }
  auto stored = std::make_shared<const Decision>(std::move(d));
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = cache_.emplace(key, stored);
  if (fresh) *fresh = inserted;  // another thread may have decided meanwhile
  return it->second;
}

}  // namespace hetcoll
