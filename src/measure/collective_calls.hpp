// One MPI collective on MPI_COMM_WORLD with a per-rank message of n doubles
// (MPI_SUM for the reductions, root 0): hetcoll's MPI_* or the native
// PMPI_*. The calls bench_mpi, hetcoll-tune and hetcoll-bench time, made
// from include/hetcoll_collectives.def: each collective's arguments, by
// their MPI names, are the values below.
#pragma once
#include <mpi.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "schedule/collective.hpp"

namespace hetcoll::bench {

using Call = std::function<void(bool native)>;

// These programs time the planner's decisions and forced candidates side by
// side with the native MPI: learning in the job (HETCOLL_LEARN) would run
// other candidates among a decision's calls, with its exchanges between
// them. It is off in them, whatever the environment says; called before
// MPI_Init (the MPI layer reads its settings there).
inline void time_decisions_not_learning() { setenv("HETCOLL_LEARN", "0", 1); }

// Every collective these programs time, in the .def's order.
inline const std::vector<std::string>& collective_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (CollOp op : all_coll_ops()) v.push_back(coll_op_name(op));
    return v;
  }();
  return names;
}

// The collectives in their regular forms (no v-variant, no exscan): what
// the programs time unless told otherwise.
inline std::vector<std::string> regular_collective_names() {
  std::vector<std::string> v;
  for (CollOp op : all_coll_ops())
    if (base_form(op) == op) v.push_back(coll_op_name(op));
  return v;
}

// The same call in its non-blocking form (MPI_I<coll> or PMPI_I<coll>),
// returning its request: what hetcoll-bench --overlap times.
using NonBlockingCall = std::function<void(bool native, MPI_Request* request)>;

// The v-variants with every rank's count n (displacements packed), so that
// they move what their regular forms move; with a request, the
// non-blocking form. Throws InputError for a name that is not a collective.
inline NonBlockingCall nonblocking_call(const std::string& name, int n, std::vector<char>& a, std::vector<char>& b) {
  const CollOp which = coll_op_from_name(name);
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  auto counts = std::make_shared<std::vector<int>>(size_t(p), n);
  auto offsets = std::make_shared<std::vector<int>>(size_t(p));
  for (int i = 0; i < p; ++i) (*offsets)[size_t(i)] = i * n;
  return [&a, &b, which, n, counts, offsets](bool native, MPI_Request* request) {
    // The .def's argument names, each given its value for this call.
    [[maybe_unused]] void* buffer = a.data();
    [[maybe_unused]] const void* sendbuf = a.data();
    [[maybe_unused]] void* recvbuf = b.data();
    [[maybe_unused]] const int count = n, sendcount = n, recvcount = n, root = 0;
    [[maybe_unused]] const int *recvcounts = counts->data(), *sendcounts = counts->data();
    [[maybe_unused]] const int *displs = offsets->data(), *sdispls = offsets->data(), *rdispls = offsets->data();
    [[maybe_unused]] MPI_Datatype datatype = MPI_DOUBLE, sendtype = MPI_DOUBLE, recvtype = MPI_DOUBLE;
    [[maybe_unused]] MPI_Op op = MPI_SUM;
    [[maybe_unused]] MPI_Comm comm = MPI_COMM_WORLD;
    switch (which) {
#define HC_NB_ARGS(...) __VA_ARGS__
#define HETCOLL_COLLECTIVE(name, Name, params, args)                                            \
  case CollOp::name:                                                                            \
    if (request)                                                                                \
      native ? PMPI_I##name(HC_NB_ARGS args, request) : MPI_I##name(HC_NB_ARGS args, request);  \
    else                                                                                        \
      native ? PMPI_##Name args : MPI_##Name args;                                              \
    return;
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE
#undef HC_NB_ARGS
    }
  };
}

// The blocking call.
inline Call collective_call(const std::string& name, int n, std::vector<char>& a, std::vector<char>& b) {
  NonBlockingCall f = nonblocking_call(name, n, a, b);
  return [f](bool native) { f(native, nullptr); };
}

}  // namespace hetcoll::bench
