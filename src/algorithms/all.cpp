// The registry: every algorithm of algorithms/all.def, in its order, made
// once (registry.hpp declares registry(); the rest of registry.cpp reads it).
#include "algorithms/all.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace hetcoll {

const std::vector<Algorithm>& registry() {
  static const std::vector<Algorithm> algorithms = [] {
    std::vector<Algorithm> v{
#define ALGORITHM_ENTRY(x) x##_algorithm(),
#include "algorithms/all.def"
#undef ALGORITHM_ENTRY
    };
    for (size_t i = 0; i < v.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (v[i].name == v[j].name) throw std::logic_error("algorithm registered twice: " + v[i].name);
    return v;
  }();
  return algorithms;
}

}  // namespace hetcoll
