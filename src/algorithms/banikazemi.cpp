#include "algorithms/banikazemi.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace hetcoll {

AnalyticResult banikazemi_bcast(const MachineModel& m, const Tree& t, int root, uint64_t bytes) {
  const int n = t.size();
  if (n < 1 || root < 0 || root >= n) throw InputError(cat("broadcast model: root ", root, " of ", n, " ranks"));
  auto rank = [&](int v) { return (v + root) % n; };
  AnalyticResult r;
  r.per_rank.assign(size_t(n), 0);
  // Nodes in breadth-first order, so a parent's time is known first.
  std::vector<int> order{0};
  for (size_t k = 0; k < order.size(); ++k) {
    const int u = order[k];
    double busy = 0;  // Σ send of the children so far (childrank · S in eq. 7)
    for (uint32_t c = t.child_begin[size_t(u)]; c < t.child_begin[size_t(u) + 1]; ++c) {
      const int v = t.children[c];
      const MessageCost mc = m.message(rank(u), rank(v), bytes);
      busy += mc.send;
      r.per_rank[size_t(rank(v))] = r.per_rank[size_t(rank(u))] + busy + (mc.arrive - mc.send) + mc.recv;
      order.push_back(v);
    }
  }
  if (int(order.size()) != n) throw InputError("broadcast model: the tree does not reach every node");
  r.time = *std::max_element(r.per_rank.begin(), r.per_rank.end());
  return r;
}

AnalyticResult banikazemi_scatter(const MachineModel& m, int n, int root, uint64_t block) {
  return banikazemi_bcast(m, star_tree(n), root, block);
}

AnalyticResult banikazemi_gather(const MachineModel& m, int n, int root, uint64_t block) {
  if (n < 1 || root < 0 || root >= n) throw InputError(cat("gather model: root ", root, " of ", n, " ranks"));
  struct Sender {
    double send, transmit, recv;
  };
  std::vector<Sender> s;
  for (int j = 0; j < n; ++j) {
    if (j == root) continue;
    const MessageCost mc = m.message(j, root, block);
    s.push_back({mc.send, mc.arrive - mc.send, mc.recv});
  }
  std::stable_sort(s.begin(), s.end(), [](const Sender& a, const Sender& b) { return a.send < b.send; });
  AnalyticResult r;
  double done = 0, transmitted = 0;
  for (size_t k = 0; k < s.size(); ++k) {
    transmitted += s[k].transmit;  // k·(X_m·m + X_c): one after another on the root's link
    const double arrive = s[k].send + transmitted;
    done = std::max(done, arrive) + s[k].recv;
    r.per_rank.push_back(done);
  }
  r.time = done;
  return r;
}

}  // namespace hetcoll
