#include "algorithms/registry.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "model/hockney_model.hpp"
#include "model/units.hpp"
#include "schedule/builder.hpp"
#include "util/error.hpp"

namespace hetcoll {

bool Algorithm::supports(CollOp op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

const Algorithm& find_algorithm(const std::string& name) {
  for (auto& a : registry())
    if (a.name == name) return a;
  std::string list;
  for (auto& a : registry()) list += (list.empty() ? "" : ", ") + a.name;
  throw InputError(cat("unknown algorithm '", name, "' (known: ", list, ")"));
}

std::vector<const Algorithm*> algorithms_for(CollOp op) {
  std::vector<const Algorithm*> v;
  for (auto& a : registry())
    if (a.supports(op)) v.push_back(&a);
  return v;
}

std::string AlgorithmSpec::str() const {
  if (params.empty()) return name;
  std::string s = name + "[";
  bool first = true;
  for (auto& kv : params) {
    s += (first ? "" : ",") + kv.first + "=" + kv.second;
    first = false;
  }
  return s + "]";
}

AlgorithmSpec parse_algorithm_spec(const std::string& spec) {
  AlgorithmSpec out;
  auto lb = spec.find('[');
  out.name = spec.substr(0, lb);
  if (out.name.empty()) throw InputError(cat("empty algorithm name in '", spec, "'"));
  if (lb == std::string::npos) return out;
  if (spec.back() != ']') throw InputError(cat("algorithm '", spec, "': parameters must end with ']'"));
  std::string inner = spec.substr(lb + 1, spec.size() - lb - 2);
  size_t pos = 0;
  while (pos <= inner.size() && !inner.empty()) {
    size_t comma = inner.find(',', pos);
    std::string item = inner.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw InputError(cat("algorithm '", spec, "': parameter '", item, "' is not KEY=VALUE"));
    if (!out.params.emplace(item.substr(0, eq), item.substr(eq + 1)).second)
      throw InputError(cat("algorithm '", spec, "': parameter '", item.substr(0, eq), "' given twice"));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

namespace {
std::string range_text(const ParamSpec& ps) {
  auto num = [](double v) { return v >= 1e15 ? std::string("inf") : cat(v); };
  switch (ps.kind) {
    case ParamKind::integer: return cat("an integer from ", num(ps.lo), " to ", num(ps.hi));
    case ParamKind::real:
      return ps.open ? cat("a number strictly between ", num(ps.lo), " and ", num(ps.hi))
                     : cat("a number from ", num(ps.lo), " to ", num(ps.hi));
    case ParamKind::bytes: return cat("a size from ", num(ps.lo), " bytes up (e.g. 4096, 64k, 1M)");
    case ParamKind::mesh: return "a mesh DIMSxDIMS:STRATEGY (e.g. 2x3x5:SSMCC)";
  }
  return "";
}

void check_value(const Algorithm& a, const ParamSpec& ps, const std::string& value) {
  auto bad = [&] {
    throw InputError(cat(a.name, ": parameter ", ps.name, "='", value, "' must be ", range_text(ps)));
  };
  switch (ps.kind) {
    case ParamKind::integer: {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end || errno || double(v) < ps.lo || double(v) > ps.hi) bad();
      return;
    }
    case ParamKind::real: {
      char* end = nullptr;
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end || !std::isfinite(v)) bad();
      if (ps.open ? !(v > ps.lo && v < ps.hi) : !(v >= ps.lo && v <= ps.hi)) bad();
      return;
    }
    case ParamKind::bytes: {
      uint64_t v = 0;
      try {
        v = parse_bytes(value);
      } catch (const InputError&) {
        bad();
      }
      if (double(v) < ps.lo || double(v) > ps.hi) bad();
      return;
    }
    case ParamKind::mesh: {
      // The form only; whether it fits the group is known when it is built.
      auto colon = value.find(':');
      if (colon == std::string::npos || colon == 0 || colon + 1 == value.size() || value.size() > 1024) bad();
      for (size_t i = 0; i < colon; ++i)
        if (!std::isdigit(static_cast<unsigned char>(value[i])) && value[i] != 'x') bad();
      for (size_t i = colon + 1; i < value.size(); ++i)
        if (value[i] != 'S' && value[i] != 'M' && value[i] != 'C') bad();
      return;
    }
  }
}
}  // namespace

void check_params(const Algorithm& a, const Params& params) {
  for (auto& kv : params) {
    const ParamSpec* ps = nullptr;
    for (auto& p : a.params)
      if (p.name == kv.first) ps = &p;
    if (!ps) {
      std::string known;
      for (auto& p : a.params) known += (known.empty() ? "" : ", ") + p.name;
      throw InputError(cat("algorithm ", a.name, " has no parameter '", kv.first, "'",
                           known.empty() ? std::string(" (it takes none)") : " (known: " + known + ")"));
    }
    check_value(a, *ps, kv.second);
  }
}

std::string AlgorithmChoice::spec() const { return AlgorithmSpec{algorithm ? algorithm->name : "", params}.str(); }

AlgorithmChoice choose_algorithm(const std::string& spec, std::optional<CollOp> op) {
  AlgorithmSpec as = parse_algorithm_spec(spec);
  const Algorithm& a = find_algorithm(as.name);
  if (op && !a.supports(*op)) {
    std::string list;
    for (auto* x : algorithms_for(*op)) list += (list.empty() ? "" : ", ") + x->name;
    throw InputError(cat("algorithm ", a.name, " does not implement ", coll_op_name(*op),
                         list.empty() ? std::string() : " (algorithms for it: " + list + ")"));
  }
  check_params(a, as.params);
  return {&a, std::move(as.params)};
}

double param_real(const GenContext& ctx, const char* key, double fallback) {
  auto it = ctx.params.find(key);
  return it == ctx.params.end() ? fallback : std::strtod(it->second.c_str(), nullptr);
}

int param_int(const GenContext& ctx, const char* key, int fallback) {
  auto it = ctx.params.find(key);
  return it == ctx.params.end() ? fallback : int(std::strtol(it->second.c_str(), nullptr, 10));
}

uint64_t param_bytes(const GenContext& ctx, const char* key, uint64_t fallback) {
  auto it = ctx.params.find(key);
  return it == ctx.params.end() ? fallback : parse_bytes(it->second);
}

bool moves_no_data(const Collective& c) {
  if (c.op == CollOp::barrier) return false;
  for (int r = 0; r < c.nranks; ++r)
    if (c.in_bytes(r) || c.out_bytes(r)) return false;
  return true;
}

void check_model_fits(const Collective& coll, const MachineModel& model) {
  if (model.ranks() > 0 && coll.nranks > model.ranks())
    throw InputError(cat("the model describes ", model.ranks(), model.maps_hosts() ? " hosts" : " ranks", "; a call on ",
                         coll.nranks, " ranks needs ", model.maps_hosts() ? "them placed on its hosts (group_model)" : "a model of as many"));
}

Schedule generate(const AlgorithmChoice& choice, const Collective& coll, const MachineModel& model, int only_rank,
                  size_t op_limit, const PhaseChooser* phases) {
  const Algorithm& a = *choice.algorithm;
  if (!a.supports(coll.op)) choose_algorithm(a.name, coll.op);  // throws the error that lists the valid ones
  coll.check();
  check_model_fits(coll, model);
  GenContext ctx{coll, model, choice.params, only_rank, op_limit, phases};
  if (moves_no_data(coll)) return Builder(coll, choice.spec()).finish();
  if (a.composite && !phases)
    throw InputError(cat(a.name, " composes phases whose algorithms the planner picks: build it through "
                                 "plan/build_schedule.hpp, not generate() alone"));
  return a.generate(ctx);
}

Schedule generate(const std::string& spec, const Collective& coll, const MachineModel& model, int only_rank,
                  size_t op_limit, const PhaseChooser* phases) {
  return generate(choose_algorithm(spec, coll.op), coll, model, only_rank, op_limit, phases);
}

std::optional<HockneyParams> closed_form_model(const MachineModel& model) {
  auto* h = dynamic_cast<const HockneyModel*>(&model);
  if (!h || h->copy() > 0 || !h->overlap()) return std::nullopt;
  return HockneyParams{h->alpha(), h->beta(), h->gamma()};
}

std::optional<Terms> closed_form(const AlgorithmChoice& choice, const Collective& coll, const MachineModel& model) {
  auto h = closed_form_model(model);
  const Algorithm& a = *choice.algorithm;
  if (!h || !a.closed_form || !a.supports(coll.op)) return std::nullopt;
  if (moves_no_data(coll)) return Terms{};
  GenContext ctx{coll, model, choice.params, -1};
  return a.closed_form(ctx, *h);
}

std::optional<Terms> closed_form(const std::string& spec, const Collective& coll, const MachineModel& model) {
  return closed_form(choose_algorithm(spec, coll.op), coll, model);
}

}  // namespace hetcoll
