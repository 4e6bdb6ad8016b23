// One declaration per algorithm; registry.cpp lists them. Adding an
// algorithm: a generator file, a line here, a line in registry.cpp.
#pragma once
#include "algorithms/registry.hpp"

namespace hetcoll {

Algorithm binomial_tree_algorithm();
Algorithm lambda_tree_algorithm();
Algorithm alpha_partition_algorithm();
Algorithm bks_combine_algorithm();
Algorithm bks_delay_receive_algorithm();
Algorithm bks_delay_send_algorithm();

}  // namespace hetcoll
