#include "plan/table_builder.hpp"

#include <map>
#include <tuple>

#include "config/settings.hpp"
#include "plan/planner.hpp"
#include "util/error.hpp"

namespace hetcoll {

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

}  // namespace hetcoll
