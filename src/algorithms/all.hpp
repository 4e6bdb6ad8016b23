// The declaration of every algorithm's registry entry (one line each in
// algorithms/all.def; all.cpp makes the registry of them). A generator file
// includes this and defines its `Algorithm x_algorithm()`.
#pragma once
#include "algorithms/registry.hpp"

namespace hetcoll {

#define ALGORITHM_ENTRY(x) Algorithm x##_algorithm();
#include "algorithms/all.def"
#undef ALGORITHM_ENTRY

}  // namespace hetcoll
