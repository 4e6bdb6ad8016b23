// Decisions computed ahead of time (`hetcoll plan --table`), as NCCL's and
// Open MPI's rules files are: the planner's decisions for a set of group
// sizes, every collective (root 0) and every size class up to a size, on one
// model. The MPI layer loads one (HETCOLL_TABLE) into its planner's cache,
// so a first call of a covered class costs a lookup. A table is used only
// with the model it was built for, by the hetcoll version that built it and
// without overrides (HETCOLL_ALGO): then its entries are exactly what the
// planner would decide, and ranks with and without a hit agree.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "model/machine_model.hpp"
#include "schedule/collective.hpp"
#include "util/json.hpp"

namespace hetcoll {

struct TableEntry {
  CollOp op = CollOp::bcast;
  bool order_free = false;
  int nranks = 1, root = 0;
  uint32_t elem = 1;
  int cls = -1;                // size class (-1: counts not known everywhere)
  std::string algorithm;       // a spec, or "native"
  double predicted = 0;
  std::string runner_up;
  double runner_up_predicted = 0;
  std::string note;
};

struct DecisionTable {
  static constexpr int kFormat = 1;
  std::string version;  // hetcoll's, when built
  std::string model;    // the model's canonical spec
  std::vector<TableEntry> entries;
  json::Value to_json() const;
  // Checks everything (format, names, ranges); throws InputError.
  static DecisionTable from_json(const json::Value& v);
};

// Reads a table file (a regular file of at most 64 MiB). Throws InputError.
DecisionTable load_decision_table(const std::string& path);

// Why `table` cannot serve a planner of this model with these many override
// rules (another model, another hetcoll version, overrides); "" if it can.
std::string table_mismatch(const DecisionTable& table, const MachineModel& model, size_t override_rules);

}  // namespace hetcoll
