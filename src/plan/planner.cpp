#include "plan/planner.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/hybrid_mesh.hpp"
#include "model/hockney_model.hpp"
#include "util/error.hpp"

namespace hetcoll {

namespace {

bool tied(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1e-30, std::fabs(a), std::fabs(b)}); }

// The parameter settings of `a` to evaluate for this call.
std::vector<std::string> specs_of(const Algorithm& a, const Collective& c, const MachineModel& m) {
  std::vector<std::string> v;
  if (a.variants) v = a.variants(c, m);
  if (v.empty()) v.push_back(a.name);
  return v;
}

Candidate simulate_candidate(const std::string& spec, const Collective& c, const MachineModel& m,
                             const PlanOptions& opt) {
  Schedule s = generate(spec, c, m, -1, opt.op_limit);
  SimOptions so;
  so.timeline = false;
  so.critical_path = opt.explain;
  so.rank_map = opt.rank_map;
  SimResult r = simulate(s, m, so);
  Candidate cand;
  cand.algorithm = s.algorithm;
  cand.predicted = r.makespan;
  cand.split = r.path;
  cand.messages = s.message_count();
  if (auto* h = dynamic_cast<const HockneyModel*>(&m); h && opt.explain) {
    cand.has_terms = true;
    cand.terms = {h->alpha() > 0 ? r.path.latency / h->alpha() : 0, h->beta() > 0 ? r.path.bandwidth / h->beta() : 0,
                  h->gamma() > 0 ? r.path.compute / h->gamma() : 0};
  }
  return cand;
}

}  // namespace

PlanResult plan(const Collective& coll, const MachineModel& model, const PlanOptions& opt) {
  coll.check();
  PlanResult res;
  res.unit = model.unit();
  auto* hockney = dynamic_cast<const HockneyModel*>(&model);
  const bool use_closed = hockney && opt.rank_map.empty();
  std::vector<size_t> registry_index;
  struct Pending {
    const Algorithm* a;
    std::string spec;
    double estimate;  // INFINITY: unknown
  };
  std::vector<Pending> to_simulate;
  for (const Algorithm* a : algorithms_for(coll.op)) {
    if (a->distinct && !a->distinct(coll, model)) continue;
    if (coll.op == CollOp::allreduce && !coll.order_free && !a->rank_consistent) continue;
    std::vector<std::string> exact, others;
    std::vector<Terms> exact_terms;
    const bool zero = moves_no_data(coll);
    for (auto& spec : specs_of(*a, coll, model)) {
      std::optional<Terms> cf;
      if (use_closed && a->closed_form && hockney->copy() == 0 && hockney->overlap()) {
        AlgorithmSpec as = parse_algorithm_spec(spec);
        GenContext ctx{coll, model, as.params, -1};
        reject_unknown_params(ctx, *a);
        cf = zero ? Terms{} : a->closed_form(ctx, {hockney->alpha(), hockney->beta(), hockney->gamma()});
      }
      if (cf) {
        exact.push_back(spec);
        exact_terms.push_back(*cf);
      } else {
        others.push_back(spec);
      }
    }
    // Settings without an exact closed form are simulated; with many of
    // them only the best few by the estimate (or closed form) on the model's
    // α-β-γ view.
    std::vector<std::pair<double, std::string>> ranked;
    ClosedForm rank = a->estimate ? a->estimate : a->closed_form;
    HockneyParams est = hockney_estimate(model, coll.size_bytes());
    for (auto& s : others) {
      double e = INFINITY;
      if (rank) {
        AlgorithmSpec as = parse_algorithm_spec(s);
        GenContext ctx{coll, model, as.params, -1};
        if (auto t = rank(ctx, est)) e = est.time(*t);
      }
      ranked.emplace_back(e, s);
    }
    if (ranked.size() > opt.max_simulated_variants && rank) {
      std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
      ranked.resize(opt.max_simulated_variants);
    }
    for (auto& r : ranked) to_simulate.push_back({a, r.second, r.first});
    for (size_t i = 0; i < exact.size(); ++i) {
      const Terms& t = exact_terms[i];
      Candidate cand;
      cand.algorithm = exact[i];
      cand.closed_form = true;
      cand.has_terms = true;
      cand.terms = t;
      cand.predicted = t.alpha * hockney->alpha() + t.beta * hockney->beta() + t.gamma * hockney->gamma();
      cand.split = {t.alpha * hockney->alpha(), t.beta * hockney->beta(), t.gamma * hockney->gamma(), 0};
      cand.messages = t.messages;
      if (opt.explain && !cand.messages) cand.messages = generate(exact[i], coll, model).message_count();
      res.candidates.push_back(std::move(cand));
      registry_index.push_back(size_t(a - registry().data()));
    }
  }
  // Simulate, skipping (unless explaining) settings whose estimate is 1.5×
  // the best time known so far or more: they are not going to win.
  // Candidates without an estimate go first (they must be simulated anyway).
  double best = INFINITY;
  for (auto& c : res.candidates) best = std::min(best, c.predicted);
  std::stable_sort(to_simulate.begin(), to_simulate.end(), [](const Pending& x, const Pending& y) {
    return std::isinf(x.estimate) > std::isinf(y.estimate);
  });
  for (auto& pnd : to_simulate) {
    if (!opt.explain && std::isfinite(pnd.estimate) && pnd.estimate > 1.5 * best) continue;
    try {
      res.candidates.push_back(simulate_candidate(pnd.spec, coll, model, opt));
    } catch (const TooLarge&) {
      res.skipped.push_back(pnd.spec);
      continue;
    }
    best = std::min(best, res.candidates.back().predicted);
    registry_index.push_back(size_t(pnd.a - registry().data()));
  }
  if (res.candidates.empty())
    throw InputError(cat("no algorithm implements ", coll_op_name(coll.op),
                         res.skipped.empty() ? std::string() : " within the simulation budget"));
  // Sort by time; among ties by messages (built on demand), then registry order.
  std::vector<size_t> order(res.candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return res.candidates[x].predicted < res.candidates[y].predicted &&
           !tied(res.candidates[x].predicted, res.candidates[y].predicted);
  });
  size_t ties = 1;
  while (ties < order.size() && tied(res.candidates[order[ties]].predicted, res.candidates[order[0]].predicted)) ++ties;
  if (ties > 1) {
    for (size_t i = 0; i < ties; ++i) {
      Candidate& c = res.candidates[order[i]];
      if (c.messages == 0) c.messages = generate(c.algorithm, coll, model).message_count();
    }
    std::stable_sort(order.begin(), order.begin() + long(ties), [&](size_t x, size_t y) {
      if (res.candidates[x].messages != res.candidates[y].messages)
        return res.candidates[x].messages < res.candidates[y].messages;
      return registry_index[x] < registry_index[y];
    });
  }
  std::vector<Candidate> sorted;
  for (size_t i : order) sorted.push_back(std::move(res.candidates[i]));
  res.candidates = std::move(sorted);
  return res;
}

int size_bin(uint64_t bytes) {
  if (bytes == 0) return 0;
  return 1 + int(std::floor(4.0 * std::log2(double(bytes)) + 1e-9));
}

Planner::Planner(ModelPtr model, Overrides overrides) : model_(std::move(model)), overrides_(std::move(overrides)) {
  if (!model_) throw InputError("planner needs a machine model");
}

size_t Planner::KeyHash::operator()(const Key& k) const {
  uint64_t h = uint64_t(k.op) * 2 + k.order_free;
  for (uint64_t x : {uint64_t(uint32_t(k.nranks)), uint64_t(uint32_t(k.root)), uint64_t(k.elem),
                     uint64_t(uint32_t(k.bin)), k.group})
    h = (h ^ x) * 0x100000001B3ull + (h >> 29);
  return size_t(h);
}

size_t Planner::cached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cache_.size();
}

Decision Planner::decide(const Collective& c, uint64_t group_key, const std::vector<int>& rank_map) {
  Key key{uint8_t(c.op), c.order_free, c.nranks, has_root(c.op) ? c.root : 0, c.elem_size, size_bin(c.size_bytes()), group_key};
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = cache_.find(key);
    if (it != cache_.end()) {
      Decision cached = it->second;
      cached.fresh = false;
      return cached;
    }
  }
  Decision d;
  d.fresh = true;
  if (auto forced = overrides_.match(c)) {
    d.algorithm = *forced;
    d.forced = true;
  } else {
    PlanOptions opt;
    opt.rank_map = rank_map;
    PlanResult r = plan(c, *model_, opt);
    d.algorithm = r.best().algorithm;
    d.predicted = r.best().predicted;
    if (r.candidates.size() > 1) {
      d.runner_up = r.candidates[1].algorithm;
      d.runner_up_predicted = r.candidates[1].predicted;
    }
  }
  Decision stored = d;
  stored.fresh = false;
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = cache_.emplace(key, stored);
  return inserted ? d : it->second;  // another thread may have decided meanwhile
}

}  // namespace hetcoll
