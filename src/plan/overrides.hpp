// User overrides of the planner's choice (HETCOLL_ALGO, --override):
//
//   rules  := rule ('#' rule)*
//   rule   := [OP ':'] [LO '-' HI ':'] '@' ALGORITHM
//   LO, HI := bytes with k/M/G suffixes; HI may be 'inf'; [LO, HI)
//
// e.g. "bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect" — a rule without
// OP applies to the OP of the rule before it; without a range, to all sizes.
// The size is Collective::size_bytes() of the call itself (every rank of the
// call knows it). gatherv, scatterv and alltoallv take no ranges: no rank
// knows every count, so their rules apply to all sizes. The first matching
// rule wins.
//
// Everything about a rule that does not depend on the call is checked when
// it is parsed: the collective, the range, the algorithm (it must implement
// the collective, and for gatherv/scatterv/alltoallv need only a rank's own
// counts), its parameters and their values. Whether a rule fits a call (a
// mesh for another group size, a schedule too large to build) is the
// planner's to decide: it then plans instead and says why.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "schedule/collective.hpp"

namespace hetcoll {

struct OverrideRule {
  CollOp op;
  uint64_t lo = 0, hi = UINT64_MAX;  // [lo, hi)
  AlgorithmChoice algorithm;
  std::string text;  // the rule as written
};

class Overrides {
 public:
  Overrides() = default;
  // Throws InputError naming the bad part (and the valid names).
  static Overrides parse(const std::string& text);
  // The index of the first rule for `op` whose range holds `size`; size
  // nullopt (not known to every rank) matches only rules for all sizes.
  std::optional<size_t> match(CollOp op, std::optional<uint64_t> size) const;
  bool empty() const { return rules_.empty(); }
  const std::vector<OverrideRule>& rules() const { return rules_; }
  std::string str() const;

 private:
  std::vector<OverrideRule> rules_;
};

}  // namespace hetcoll
