#include "algorithms/tree.hpp"

#include "util/error.hpp"

namespace hetcoll {

Tree Tree::from_edges(int n, const std::vector<std::pair<int32_t, int32_t>>& edges) {
  Tree t;
  t.parent.assign(size_t(n), -1);
  t.child_begin.assign(size_t(n) + 1, 0);
  for (auto& e : edges) {
    t.parent[size_t(e.second)] = e.first;
    ++t.child_begin[size_t(e.first) + 1];
  }
  for (size_t i = 0; i < size_t(n); ++i) t.child_begin[i + 1] += t.child_begin[i];
  t.children.resize(edges.size());
  std::vector<uint32_t> fill(t.child_begin.begin(), t.child_begin.end() - 1);
  for (auto& e : edges) t.children[fill[size_t(e.first)]++] = e.second;
  return t;
}

Tree partition_tree(int n, const std::function<uint64_t(uint64_t)>& split) {
  std::vector<std::pair<int32_t, int32_t>> edges;
  edges.reserve(size_t(n > 0 ? n - 1 : 0));
  struct Task { int32_t lo; uint64_t size; };
  std::vector<Task> stack{{0, uint64_t(n)}};
  while (!stack.empty()) {
    Task task = stack.back();
    stack.pop_back();
    while (task.size > 1) {
      uint64_t keep = split(task.size);
      if (keep < 1 || keep >= task.size)
        throw ScheduleError(cat("partition split of ", task.size, " gave ", keep));
      int32_t leader = task.lo + int32_t(keep);
      edges.emplace_back(task.lo, leader);
      stack.push_back({leader, task.size - keep});
      task.size = keep;
    }
  }
  return Tree::from_edges(n, edges);
}

void emit_tree_bcast(Builder& b, const Tree& t, int root, Slice data) {
  const int n = t.size();
  b.reserve(2 * size_t(n), size_t(n));
  for (int rank = 0; rank < n; ++rank) {  // rank by rank: the builder needs no reordering
    if (!b.wants(rank)) continue;
    int node = (rank - root + n) % n;
    bool has_parent = t.parent[size_t(node)] >= 0;
    if (has_parent) b.recv(rank, (t.parent[size_t(node)] + root) % n, data);
    for (uint32_t k = t.child_begin[size_t(node)]; k < t.child_begin[size_t(node) + 1]; ++k) {
      int child = (t.children[k] + root) % n;
      if (has_parent) b.send(rank, child, data, {0});
      else b.send(rank, child, data);
    }
  }
}

}  // namespace hetcoll
