#include "plan/decision_table.hpp"

#include <cmath>

#include "algorithms/registry.hpp"
#include "config/settings.hpp"
#include "util/error.hpp"

namespace hetcoll {

namespace {
const char* const kColumns[] = {"op",        "order_free", "ranks",   "root",      "elem_size",
                                "size_class", "algorithm",  "predicted", "runner_up", "runner_up_predicted",
                                "note"};
constexpr size_t kNumColumns = sizeof(kColumns) / sizeof(kColumns[0]);
}  // namespace

json::Value DecisionTable::to_json() const {
  json::Value v = json::Value::object();
  v["hetcoll_decision_table"] = kFormat;
  v["version"] = version;
  v["model"] = model;
  json::Value cols = json::Value::array();
  for (const char* c : kColumns) cols.push_back(c);
  v["columns"] = cols;
  json::Value rows = json::Value::array();
  for (const TableEntry& e : entries) {
    json::Value r = json::Value::array();
    r.push_back(coll_op_name(e.op));
    r.push_back(e.order_free);
    r.push_back(e.nranks);
    r.push_back(e.root);
    r.push_back(uint64_t(e.elem));
    r.push_back(e.cls);
    r.push_back(e.algorithm);
    r.push_back(e.predicted);
    r.push_back(e.runner_up);
    r.push_back(e.runner_up_predicted);
    r.push_back(e.note);
    rows.push_back(r);
  }
  v["entries"] = rows;
  return v;
}

DecisionTable DecisionTable::from_json(const json::Value& v) {
  if (!v.is_object() || !json::find(v, "hetcoll_decision_table"))
    throw InputError("not a hetcoll decision table (no \"hetcoll_decision_table\" field)");
  if (json::as_int(json::at(v, "hetcoll_decision_table"), "hetcoll_decision_table") != kFormat)
    throw InputError(cat("decision table format ", json::at(v, "hetcoll_decision_table").dump(), " is not ", kFormat));
  DecisionTable t;
  t.version = json::as_string(json::at(v, "version"), "version");
  t.model = json::as_string(json::at(v, "model"), "model");
  const auto& cols = json::as_array(json::at(v, "columns"), "columns");
  if (cols.size() != kNumColumns) throw InputError(cat("decision table: ", cols.size(), " columns, expected ", kNumColumns));
  for (size_t i = 0; i < kNumColumns; ++i)
    if (json::as_string(cols[i], "column") != kColumns[i])
      throw InputError(cat("decision table: column ", i + 1, " is '", json::as_string(cols[i], "column"), "', expected '",
                           kColumns[i], "'"));
  const auto& rows = json::as_array(json::at(v, "entries"), "entries");
  t.entries.reserve(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    const auto& r = json::as_array(rows[k], "entry");
    auto where = [&] { return cat("decision table entry ", k + 1); };
    if (r.size() != kNumColumns) throw InputError(cat(where(), ": ", r.size(), " fields, expected ", kNumColumns));
    TableEntry e;
    e.op = coll_op_from_name(json::as_string(r[0], "op"));
    e.order_free = json::as_bool(r[1], "order_free");
    const int64_t p = json::as_int(r[2], "ranks"), root = json::as_int(r[3], "root"), elem = json::as_int(r[4], "elem_size"),
                  cls = json::as_int(r[5], "size_class");
    if (p < 1 || p > kMaxRanks) throw InputError(cat(where(), ": ranks ", p, " is not 1 to ", kMaxRanks));
    if (root < 0 || root >= p) throw InputError(cat(where(), ": root ", root, " is not a rank of ", p));
    if (elem < 1 || elem > (int64_t(1) << 30)) throw InputError(cat(where(), ": element size ", elem, " out of range"));
    if (cls < -1 || cls > 4 * 64) throw InputError(cat(where(), ": size class ", cls, " out of range"));
    e.nranks = int(p);
    e.root = int(root);
    e.elem = uint32_t(elem);
    e.cls = int(cls);
    e.algorithm = json::as_string(r[6], "algorithm");
    e.predicted = json::as_double(r[7], "predicted");
    e.runner_up = json::as_string(r[8], "runner_up");
    e.runner_up_predicted = json::as_double(r[9], "runner_up_predicted");
    e.note = json::as_string(r[10], "note");
    if (!std::isfinite(e.predicted) || !std::isfinite(e.runner_up_predicted) || e.predicted < 0)
      throw InputError(cat(where(), ": predicted times must be finite"));
    if (e.algorithm != "native") {
      try {
        choose_algorithm(e.algorithm, e.op);
      } catch (const InputError& err) {
        throw InputError(cat(where(), ": ", err.what()));
      }
    }
    t.entries.push_back(std::move(e));
  }
  return t;
}

std::string table_mismatch(const DecisionTable& table, const MachineModel& model, size_t override_rules) {
  if (table.version != version())
    return cat("it was built by hetcoll ", table.version, ", this is ", version(), " (rebuild it with hetcoll plan --table)");
  if (table.model != model.spec()) return cat("it was built for the model ", table.model, ", not ", model.spec());
  if (override_rules) return "overrides (HETCOLL_ALGO) are in effect";
  return "";
}

DecisionTable load_decision_table(const std::string& path) {
  const std::string text = read_model_file(path, "decision table");  // its errors name the file
  try {
    return DecisionTable::from_json(json::parse(text));
  } catch (const InputError& e) {
    throw InputError(cat(path, ": ", e.what()));
  }
}

}  // namespace hetcoll
