#include "plan/overrides.hpp"

#include <algorithm>

#include "algorithms/registry.hpp"
#include "model/units.hpp"
#include "util/error.hpp"

namespace hetcoll {

namespace {
uint64_t bound(const std::string& text, const std::string& rule) {
  if (text == "inf") return UINT64_MAX;
  try {
    return parse_bytes(text);
  } catch (const InputError&) {
    throw InputError(cat("override '", rule, "': '", text, "' is not a size (e.g. 0, 64k, 1M, inf)"));
  }
}

// The algorithms an override may name for `op`.
std::string names_for(CollOp op) {
  std::string list;
  for (auto* a : algorithms_for(op))
    if (counts_known_everywhere(op) || a->local_counts) list += (list.empty() ? "" : ", ") + a->name;
  return list;
}
}  // namespace

Overrides Overrides::parse(const std::string& text) {
  Overrides o;
  if (text.empty()) return o;
  std::optional<CollOp> current;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t hash = text.find('#', pos);
    std::string rule = text.substr(pos, hash == std::string::npos ? std::string::npos : hash - pos);
    pos = hash == std::string::npos ? text.size() + 1 : hash + 1;
    if (rule.empty()) throw InputError(cat("override '", text, "': empty rule (two '#' in a row?)"));
    size_t at = rule.find('@');
    if (at == std::string::npos)
      throw InputError(cat("override '", rule, "': no '@ALGORITHM' (grammar: [op:][lo-hi:]@algorithm)"));
    std::string head = rule.substr(0, at), spec = rule.substr(at + 1);
    if (!head.empty() && head.back() != ':')
      throw InputError(cat("override '", rule, "': expected ':' before '@'"));
    if (!head.empty()) head.pop_back();
    OverrideRule r;
    std::string range;
    // head is "", "op", "lo-hi" or "op:lo-hi".
    size_t colon = head.find(':');
    std::string first = head.substr(0, colon);
    bool first_is_range = first.find('-') != std::string::npos;
    if (colon != std::string::npos) {
      current = coll_op_from_name(first);
      range = head.substr(colon + 1);
      if (range.empty()) throw InputError(cat("override '", rule, "': empty range between ':' and ':'"));
    } else if (!head.empty() && !first_is_range) {
      current = coll_op_from_name(first);
    } else {
      range = head;
    }
    if (!current) throw InputError(cat("override '", rule, "': which collective? start with e.g. 'bcast:'"));
    r.op = *current;
    if (!range.empty()) {
      size_t dash = range.find('-');
      if (dash == std::string::npos)
        throw InputError(cat("override '", rule, "': range '", range, "' is not LO-HI (e.g. 0-64k, 64k-inf)"));
      r.lo = bound(range.substr(0, dash), rule);
      r.hi = bound(range.substr(dash + 1), rule);
      if (r.lo >= r.hi) throw InputError(cat("override '", rule, "': empty range ", range));
    }
    if (!counts_known_everywhere(r.op) && (r.lo != 0 || r.hi != UINT64_MAX))
      throw InputError(cat("override '", rule, "': ", coll_op_name(r.op),
                           " takes no size range (no rank knows every count): use '", coll_op_name(r.op), ":@ALGORITHM'"));
    if (spec.empty()) throw InputError(cat("override '", rule, "': no algorithm after '@'"));
    AlgorithmSpec as = parse_algorithm_spec(spec);
    const Algorithm* a = nullptr;
    for (auto& x : registry())
      if (x.name == as.name) a = &x;
    if (!a || !a->supports(r.op))
      throw InputError(cat("override '", rule, "': ", a ? as.name + " does not implement " : "unknown algorithm '" + as.name + "' for ",
                           coll_op_name(r.op), " (valid: ", names_for(r.op), ")"));
    if (!counts_known_everywhere(r.op) && !a->local_counts)
      throw InputError(cat("override '", rule, "': ", a->name, " needs every rank's counts, which ", coll_op_name(r.op),
                           " does not give every rank (valid: ", names_for(r.op), ")"));
    try {
      check_params(*a, as.params);
    } catch (const InputError& e) {
      throw InputError(cat("override '", rule, "': ", e.what()));
    }
    r.algorithm = {a, as.params};
    r.text = rule;
    o.rules_.push_back(r);
  }
  return o;
}

std::optional<size_t> Overrides::match(CollOp op, std::optional<uint64_t> size) const {
  for (size_t i = 0; i < rules_.size(); ++i) {
    const OverrideRule& r = rules_[i];
    if (r.op != op) continue;
    if (size ? (*size >= r.lo && *size < r.hi) : (r.lo == 0 && r.hi == UINT64_MAX)) return i;
  }
  return std::nullopt;
}

std::string Overrides::str() const {
  std::string s;
  for (auto& r : rules_) {
    if (!s.empty()) s += "#";
    s += cat(coll_op_name(r.op), ":", r.lo, "-", r.hi == UINT64_MAX ? std::string("inf") : std::to_string(r.hi), ":@",
             r.algorithm.spec());
  }
  return s;
}

}  // namespace hetcoll
