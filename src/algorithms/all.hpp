// The declaration of every algorithm's registry entry (one row each in
// algorithms/all.def; all.cpp makes the registry of them). A generator file
// includes this and defines its `Algorithm x_algorithm()`: its collectives
// and code (the row gives its name and text).
#pragma once
#include "algorithms/registry.hpp"

namespace hetcoll {

#define ALGORITHM(x, description, steps, bytes, cost, source) Algorithm x##_algorithm();
#include "algorithms/all.def"
#undef ALGORITHM

}  // namespace hetcoll
