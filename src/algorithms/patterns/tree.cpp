#include "algorithms/patterns/tree.hpp"

#include <algorithm>

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

Tree knomial_tree(int n, int k) {
  if (k < 2) throw InputError(cat("k-nomial tree: radix k = ", k, " must be at least 2"));
  std::vector<std::pair<int32_t, int32_t>> edges;
  int64_t top = 1;
  while (top * k < n) top *= k;  // largest power of k below n
  for (int64_t mask = top; mask >= 1; mask /= k)
    for (int64_t v = 0; v < n; v += mask * k)
      for (int64_t j = 1; j < k && v + j * mask < n; ++j) edges.emplace_back(int32_t(v), int32_t(v + j * mask));
  std::stable_sort(edges.begin(), edges.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return Tree::from_edges(n, edges);
}

Tree kary_tree(int n, int k) {
  if (k < 1) throw InputError(cat("k-ary tree: k = ", k, " must be at least 1"));
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (int64_t v = 1; v < n; ++v) edges.emplace_back(int32_t((v - 1) / k), int32_t(v));
  return Tree::from_edges(n, edges);
}

Tree star_tree(int n) { return kary_tree(n, std::max(n - 1, 1)); }

Tree chain_tree(int n) { return kary_tree(n, 1); }

}  // namespace hetcoll
