// One declaration per algorithm; registry.cpp lists them. Adding an
// algorithm: a generator file, a line here, a line in registry.cpp.
#pragma once
#include "algorithms/registry.hpp"

namespace hetcoll {

Algorithm binomial_tree_algorithm();
Algorithm lambda_tree_algorithm();
Algorithm alpha_partition_algorithm();
Algorithm knomial_bcast_algorithm();
Algorithm kary_bcast_algorithm();
Algorithm star_bcast_algorithm();
Algorithm chain_bcast_algorithm();
Algorithm scatter_collect_algorithm();
Algorithm hybrid_bcast_algorithm();
Algorithm binomial_reduce_algorithm();
Algorithm knomial_reduce_algorithm();
Algorithm kary_reduce_algorithm();
Algorithm star_reduce_algorithm();
Algorithm chain_reduce_algorithm();
Algorithm packed_bcast_algorithm();
Algorithm packed_reduce_algorithm();
Algorithm packed_allreduce_algorithm();
Algorithm packed_allgather_algorithm();
Algorithm packed_reduce_scatter_algorithm();
Algorithm distributed_combine_gather_algorithm();
Algorithm rabenseifner_reduce_algorithm();
Algorithm reduce_bcast_algorithm();
Algorithm recursive_doubling_allreduce_algorithm();
Algorithm rabenseifner_allreduce_algorithm();
Algorithm ring_allreduce_algorithm();
Algorithm hub_allreduce_algorithm();
Algorithm hybrid_allreduce_algorithm();
Algorithm bks_combine_algorithm();
Algorithm bks_delay_receive_algorithm();
Algorithm bks_delay_send_algorithm();
Algorithm binomial_gather_algorithm();
Algorithm star_gather_algorithm();
Algorithm binomial_scatter_algorithm();
Algorithm star_scatter_algorithm();
Algorithm bucket_collect_algorithm();
Algorithm gather_bcast_algorithm();
Algorithm recursive_doubling_allgather_algorithm();
Algorithm bruck_allgather_algorithm();
Algorithm hybrid_allgather_algorithm();
Algorithm bucket_distributed_combine_algorithm();
Algorithm reduce_then_scatter_algorithm();
Algorithm recursive_halving_reduce_scatter_algorithm();
Algorithm pairwise_exchange_algorithm();
Algorithm spread_alltoall_algorithm();
Algorithm bruck_alltoall_algorithm();
Algorithm dissemination_barrier_algorithm();
Algorithm tree_barrier_algorithm();
Algorithm hierarchical_algorithm();
Algorithm fnf_tree_algorithm();
Algorithm direct_allgather_algorithm();
Algorithm linear_scan_algorithm();
Algorithm recursive_doubling_scan_algorithm();
Algorithm tree_scan_algorithm();

}  // namespace hetcoll
