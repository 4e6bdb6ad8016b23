// Every decision over a matrix — six models (Hockney, postal, LogGP, two
// clusters, the default) × group sizes × every collective whose counts all
// ranks know × element sizes 1 and 8 × every size class to 1 MiB — as
// decision tables on stdout: scripts/compare_decisions.sh links it against
// two versions of hetcoll_core and compares what they choose.
#include <cstdio>
#include "plan/decision_table.hpp"
#if __has_include("plan/table_builder.hpp")  // since 2026-11-27; before, plan/decision_table.hpp declared it
#include "plan/table_builder.hpp"
#endif
#include "model/machine_model.hpp"
#include "schedule/collective.hpp"
using namespace hetcoll;
int main() {
  const char* models[] = {"hockney:alpha=2us,beta=0.1ns,gamma=0.05ns", "postal:lambda=1.8",
                          "loggp:L=5us,o=1us,g=2us,G=0.1ns", "cluster:subnets=8+4+4",
                          "cluster:subnets=6+6+6,ranks=2", "hockney:alpha=3us,beta=0.1ns,gamma=0.1ns,overlap=0"};
  std::vector<CollOp> ops = all_coll_ops();
  for (const char* spec : models) {
    ModelPtr m = parse_model(spec);
    std::vector<int> ranks = m->ranks() ? std::vector<int>{m->ranks()} : std::vector<int>{3, 8, 13, 48};
    std::vector<CollOp> cops;
    for (CollOp o : ops) if (counts_known_everywhere(o)) cops.push_back(o);
    std::printf("%s\n", spec);
    // One line a decision, written here (not by the JSON writer, which may differ between versions).
    for (const TableEntry& e : build_decision_table(m, ranks, cops, uint64_t(1) << 20, {1, 8}).entries)
      std::printf("  [%s %d %d %d %u %d] %s %.17g | %s %.17g | %s\n", coll_op_name(e.op), int(e.order_free), e.nranks,
                  e.root, e.elem, e.cls, e.algorithm.c_str(), e.predicted, e.runner_up.c_str(), e.runner_up_predicted,
                  e.note.c_str());
  }
}
