// The registry: every algorithm of algorithms/all.def, in its order, made
// once, each with its row's name and text (registry.hpp declares registry(); the rest of registry.cpp reads it).
#include "algorithms/all.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace hetcoll {
namespace {
// A generator file's entry with its row's name and text.
Algorithm described(Algorithm a, const char* name, const char* description, const char* steps, const char* bytes,
                    const char* cost, const char* source) {
  a.name = name;
  a.description = description;
  a.steps = steps;
  a.bytes = bytes;
  a.cost = cost;
  a.source = source;
  return a;
}
}  // namespace

const std::vector<Algorithm>& registry() {
  static const std::vector<Algorithm> algorithms = [] {
    std::vector<Algorithm> v{
#define ALGORITHM(x, description, steps, bytes, cost, source) \
  described(x##_algorithm(), #x, description, steps, bytes, cost, source),
#include "algorithms/all.def"
#undef ALGORITHM
    };
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (v[i].name == v[j].name) throw std::logic_error("algorithm registered twice: " + v[i].name);
    return v;
  }();
  return algorithms;
}

}  // namespace hetcoll
