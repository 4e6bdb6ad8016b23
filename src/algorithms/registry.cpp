#include "algorithms/registry.hpp"

#include <algorithm>
#include <cmath>

#include "algorithms/all.hpp"
#include "model/hockney_model.hpp"
#include "model/units.hpp"
#include "schedule/builder.hpp"
#include "util/error.hpp"

namespace hetcoll {

bool Algorithm::supports(CollOp op) const { return std::find(ops.begin(), ops.end(), op) != ops.end(); }

const std::vector<Algorithm>& registry() {
  static const std::vector<Algorithm> algorithms = [] {
    std::vector<Algorithm> v{
        binomial_tree_algorithm(),
        lambda_tree_algorithm(),
        alpha_partition_algorithm(),
        knomial_bcast_algorithm(),
        kary_bcast_algorithm(),
        star_bcast_algorithm(),
        chain_bcast_algorithm(),
        scatter_collect_algorithm(),
        hybrid_bcast_algorithm(),
        binomial_reduce_algorithm(),
        knomial_reduce_algorithm(),
        kary_reduce_algorithm(),
        star_reduce_algorithm(),
        chain_reduce_algorithm(),
        distributed_combine_gather_algorithm(),
        rabenseifner_reduce_algorithm(),
        reduce_bcast_algorithm(),
        recursive_doubling_allreduce_algorithm(),
        rabenseifner_allreduce_algorithm(),
        ring_allreduce_algorithm(),
        hybrid_allreduce_algorithm(),
        bks_combine_algorithm(),
        bks_delay_receive_algorithm(),
        bks_delay_send_algorithm(),
        binomial_gather_algorithm(),
        star_gather_algorithm(),
        binomial_scatter_algorithm(),
        star_scatter_algorithm(),
        bucket_collect_algorithm(),
        gather_bcast_algorithm(),
        recursive_doubling_allgather_algorithm(),
        bruck_allgather_algorithm(),
        hybrid_allgather_algorithm(),
        bucket_distributed_combine_algorithm(),
        reduce_then_scatter_algorithm(),
        recursive_halving_reduce_scatter_algorithm(),
        pairwise_exchange_algorithm(),
        spread_alltoall_algorithm(),
        bruck_alltoall_algorithm(),
        dissemination_barrier_algorithm(),
        tree_barrier_algorithm(),
        linear_scan_algorithm(),
        recursive_doubling_scan_algorithm(),
        tree_scan_algorithm(),
    };
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (v[i].name == v[j].name) throw std::logic_error("algorithm registered twice: " + v[i].name);
    return v;
  }();
  return algorithms;
}

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
    out.params[item.substr(0, eq)] = item.substr(eq + 1);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

double param_double(const GenContext& ctx, const char* algo, const char* key, double fallback) {
  auto it = ctx.params.find(key);
  if (it == ctx.params.end()) return fallback;
  char* end = nullptr;
  double v = std::strtod(it->second.c_str(), &end);
  if (end == it->second.c_str() || *end != 0 || !std::isfinite(v))
    throw InputError(cat(algo, ": parameter ", key, "='", it->second, "' is not a number"));
  return v;
}

int param_int(const GenContext& ctx, const char* algo, const char* key, int fallback, int min_value) {
  auto it = ctx.params.find(key);
  if (it == ctx.params.end()) return fallback;
  char* end = nullptr;
  long v = std::strtol(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != 0 || v < min_value || v > 1 << 30)
    throw InputError(cat(algo, ": parameter ", key, "='", it->second, "' must be an integer >= ", min_value));
  return int(v);
}

uint64_t param_bytes(const GenContext& ctx, const char* algo, const char* key, uint64_t fallback) {
  auto it = ctx.params.find(key);
  if (it == ctx.params.end()) return fallback;
  try {
    uint64_t v = parse_bytes(it->second);
    if (v == 0) throw InputError("zero");
    return v;
  } catch (const InputError&) {
    throw InputError(cat(algo, ": parameter ", key, "='", it->second, "' must be a positive size (4096, 64k)"));
  }
}

void reject_unknown_params(const GenContext& ctx, const Algorithm& a) {
  for (auto& kv : ctx.params)
    if (std::find(a.params.begin(), a.params.end(), kv.first) == a.params.end()) {
      std::string known;
      for (auto& p : a.params) known += (known.empty() ? "" : ", ") + p;
      throw InputError(cat("algorithm ", a.name, " has no parameter '", kv.first, "'",
                           known.empty() ? std::string(" (it takes none)") : " (known: " + known + ")"));
    }
}

bool moves_no_data(const Collective& c) {
  if (c.op == CollOp::barrier) return false;
  for (int r = 0; r < c.nranks; ++r)
    if (c.in_bytes(r) || c.out_bytes(r)) return false;
  return true;
}

Schedule generate(const std::string& spec, const Collective& coll, const MachineModel& model, int only_rank,
                  size_t op_limit) {
  AlgorithmSpec as = parse_algorithm_spec(spec);
  const Algorithm& a = find_algorithm(as.name);
  if (!a.supports(coll.op)) {
    std::string list;
    for (auto* x : algorithms_for(coll.op)) list += (list.empty() ? "" : ", ") + x->name;
    throw InputError(cat("algorithm ", a.name, " does not implement ", coll_op_name(coll.op),
                         list.empty() ? std::string() : " (algorithms for it: " + list + ")"));
  }
  coll.check();
  GenContext ctx{coll, model, as.params, only_rank, op_limit};
  reject_unknown_params(ctx, a);
  if (moves_no_data(coll)) return Builder(coll, as.str()).finish();
  return a.generate(ctx);
}

}  // namespace hetcoll

namespace hetcoll {

std::optional<Terms> closed_form(const std::string& spec, const Collective& coll, const MachineModel& model) {
  auto* h = dynamic_cast<const HockneyModel*>(&model);
  // Closed forms count no copy time and assume receives overlap local work.
  if (!h || h->copy() > 0 || !h->overlap()) return std::nullopt;
  AlgorithmSpec as = parse_algorithm_spec(spec);
  const Algorithm& a = find_algorithm(as.name);
  if (!a.closed_form || !a.supports(coll.op)) return std::nullopt;
  GenContext ctx{coll, model, as.params, -1};
  reject_unknown_params(ctx, a);
  if (moves_no_data(coll)) return Terms{};
  return a.closed_form(ctx, {h->alpha(), h->beta(), h->gamma()});
}

}  // namespace hetcoll
