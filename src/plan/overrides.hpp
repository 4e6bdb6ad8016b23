// User overrides of the planner's choice (HETCOLL_ALGO, --override):
//
//   rules  := rule ('#' rule)*
//   rule   := [OP ':'] [LO '-' HI ':'] '@' ALGORITHM
//   LO, HI := bytes with k/M/G suffixes; HI may be 'inf'; [LO, HI)
//
// e.g. "bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect" — a rule without
// OP applies to the OP of the rule before it; without a range, to all sizes.
// The size is Collective::size_bytes(). The first matching rule wins.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "schedule/collective.hpp"

namespace hetcoll {

struct OverrideRule {
  CollOp op;
  uint64_t lo = 0, hi = UINT64_MAX;  // [lo, hi)
  std::string algorithm;             // a spec: name or name[k=v,...]
};

class Overrides {
 public:
  Overrides() = default;
  // Throws InputError naming the bad part (and the valid names).
  static Overrides parse(const std::string& text);
  std::optional<std::string> match(const Collective& c) const;
  bool empty() const { return rules_.empty(); }
  const std::vector<OverrideRule>& rules() const { return rules_; }
  std::string str() const;

 private:
  std::vector<OverrideRule> rules_;
};

}  // namespace hetcoll
