#include "plan/decision_table.hpp"

#include <cmath>
#include <map>
#include <tuple>

#include "algorithms/registry.hpp"
#include "config/settings.hpp"
#include "plan/planner.hpp"
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

DecisionTable build_decision_table(const ModelPtr& model, const std::vector<int>& ranks,
                                   const std::vector<CollOp>& ops, uint64_t max_bytes,
                                   const std::vector<uint32_t>& elems) {
  DecisionTable t;
  t.version = version();
  t.model = model->spec();
  Planner planner(model);
  // (op, order_free, p, elem, class) already decided: classes of counts
  // rounded to whole elements repeat.
  std::map<std::tuple<int, bool, int, uint32_t, int>, bool> seen;
  auto add = [&](const Collective& call) {
    const bool sized = counts_known_everywhere(call.op);
    const int cls = sized ? size_class(call.size_bytes()) : -1;
    if (!seen.emplace(std::make_tuple(int(call.op), call.order_free, call.nranks, call.elem_size, cls), true).second)
      return;
    Decision d = planner.decide(call);
    TableEntry e;
    e.op = call.op;
    e.order_free = call.order_free;
    e.nranks = call.nranks;
    e.root = 0;
    e.elem = call.elem_size;
    e.cls = cls;
    e.algorithm = d.algorithm;
    e.predicted = d.predicted;
    e.runner_up = d.runner_up;
    e.runner_up_predicted = d.runner_up_predicted;
    e.note = d.note;
    t.entries.push_back(std::move(e));
  };
  for (int p : ranks) {
    if (p < 1 || p > kMaxRanks) throw InputError(cat("table: ", p, " ranks is not 1 to ", kMaxRanks));
    for (CollOp op : ops) {
      if (op == CollOp::alltoallv && p > kMaxDenseRanks) continue;  // the MPI layer leaves these to MPI
      for (uint32_t elem : elems) {
        for (bool order_free : {false, true}) {
          if (order_free && !is_reduction(op)) continue;
          if (op == CollOp::barrier) {
            add(Collective::make(op, p, 0));
            continue;
          }
          if (!counts_known_everywhere(op)) {  // decided on nominal blocks: one entry
            const size_t n = size_t(p);
            add(op == CollOp::alltoallv ? Collective::make_alltoallv(p, std::vector<uint64_t>(n * n, 1), elem)
                                        : Collective::make_v(op, std::vector<uint64_t>(n, 1), 0, elem));
            continue;
          }
          for (int cls = 0; cls <= size_class(max_bytes); ++cls) {
            const uint64_t count = (size_class_floor(cls) + elem - 1) / elem;
            Collective c = op == CollOp::allgatherv || op == CollOp::reduce_scatter
                               ? Collective::make_v(op, std::vector<uint64_t>(size_t(p), count), 0, elem)
                               : Collective::make(op, p, count, 0, elem);
            c.order_free = order_free;
            add(c);
          }
        }
      }
    }
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
