// The cases of mpi_nonblocking.cpp: a collective call with its arguments,
// data and datatype (Case), how it is made in each form (call), and the
// native library's answer it is held to (compute_reference, compare).
// Included by mpi_nonblocking.cpp alone.
#pragma once
#include <mpi.h>

#include "persistent_form.hpp"
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace nb_cases {


// static, not inline: SMPI runs the ranks as threads of one process, each
// with its own copy of the program's globals, and an inline variable is one
// object for them all (a unique symbol, bound once).
static int world_rank = 0, world_size = 1;
static std::atomic<long> failures{0}, checks{0}, hetcoll_ran{0};


inline void fail(const std::string& what) {
  if (failures++ < 20) std::fprintf(stderr, "rank %d: FAIL %s\n", world_rank, what.c_str());
}

// A user-defined op (hetcoll declines it: the native library runs it).
inline void user_sum(void* in, void* inout, int* len, MPI_Datatype*) {
  for (int i = 0; i < *len; ++i) static_cast<int*>(inout)[i] += static_cast<int*>(in)[i];
}
static MPI_Op g_user_op = MPI_OP_NULL;
static MPI_Datatype g_gapped = MPI_DATATYPE_NULL;  // 2 ints of every 3 (the middle one is a gap)

enum class Kind { bcast, reduce, allreduce, gather, gatherv, scatter, scatterv, allgather, allgatherv,
                  reduce_scatter_block, reduce_scatter, alltoall, alltoallv, barrier, scan, exscan };
inline const char* kind_name(Kind k) {
  static const char* names[] = {"bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
                                "allgather", "allgatherv", "reduce_scatter_block", "reduce_scatter", "alltoall",
                                "alltoallv", "barrier", "scan", "exscan"};
  return names[int(k)];
}
inline bool is_reduction(Kind k) {
  return k == Kind::reduce || k == Kind::allreduce || k == Kind::reduce_scatter_block || k == Kind::reduce_scatter ||
         k == Kind::scan || k == Kind::exscan;
}
inline bool has_root(Kind k) {
  return k == Kind::bcast || k == Kind::reduce || k == Kind::gather || k == Kind::gatherv || k == Kind::scatter ||
         k == Kind::scatterv;
}
inline bool in_place_allowed(Kind k) { return k != Kind::bcast && k != Kind::barrier; }

// The datatype (and op) of a case.
enum class Type { int_sum, double_max, twoint_maxloc, user_op, gapped };

struct Case {
  Kind kind;
  MPI_Comm comm;
  int root = 0, count = 0;
  Type type = Type::int_sum;
  bool in_place = false;
  int p = 0, me = 0;
  MPI_Datatype dt = MPI_INT;
  MPI_Op op = MPI_SUM;
  size_t extent = 4;  // bytes per element in the buffers
  std::vector<char> send, recv, expect;
  std::vector<int> counts, displs, scounts, sdispls;  // v-collectives (elements)
  std::string label;

  size_t recv_elems() const {
    switch (kind) {
      case Kind::gather: case Kind::allgather: case Kind::alltoall: return size_t(count) * size_t(p);
      case Kind::gatherv: case Kind::allgatherv: case Kind::alltoallv: {
        size_t n = 0;
        for (int i = 0; i < p; ++i) n = std::max(n, size_t(displs[size_t(i)] + counts[size_t(i)]));
        return n;
      }
      case Kind::reduce_scatter_block: case Kind::scatter: return size_t(count);
      case Kind::scatterv: return size_t(counts[size_t(me)]);
      case Kind::reduce_scatter: return size_t(counts[size_t(me)]);
      case Kind::barrier: return 0;
      default: return size_t(count);
    }
  }
  size_t send_elems() const {
    switch (kind) {
      case Kind::scatter: case Kind::alltoall: case Kind::reduce_scatter_block: return size_t(count) * size_t(p);
      case Kind::scatterv: case Kind::alltoallv: {
        size_t n = 0;
        for (int i = 0; i < p; ++i) n = std::max(n, size_t(sdispls[size_t(i)] + scounts[size_t(i)]));
        return n;
      }
      case Kind::reduce_scatter: {
        size_t n = 0;
        for (int c : counts) n += size_t(c);
        return n;
      }
      case Kind::gatherv: case Kind::allgatherv: return size_t(counts[size_t(me)]);
      case Kind::barrier: return 0;
      default: return size_t(count);
    }
  }
};

// Fills a case's buffers from a seed (the same seed gives the same data on
// every rank's view of the case; each rank's contribution differs).
inline void fill_values(char* buf, size_t elems, const Case& c, uint64_t seed) {
  std::mt19937_64 rng(seed * 1000003 + uint64_t(c.me) * 7919);
  for (size_t i = 0; i < elems; ++i) {
    char* e = buf + i * c.extent;
    switch (c.type) {
      case Type::int_sum: case Type::user_op: { int v = int(rng() % 2001) - 1000; std::memcpy(e, &v, 4); break; }
      case Type::double_max: { double v = double(int64_t(rng() % 100000)) / 8.0; std::memcpy(e, &v, 8); break; }
      case Type::twoint_maxloc: { int v[2] = {int(rng() % 50), int(rng() % 1000)}; std::memcpy(e, v, 8); break; }
      case Type::gapped: { int v[3] = {int(rng()), int(0x5A5A5A5A), int(rng())}; std::memcpy(e, v, 12); break; }
    }
  }
}

inline void setup_type(Case& c) {
  switch (c.type) {
    case Type::int_sum: c.dt = MPI_INT; c.op = MPI_SUM; c.extent = 4; break;
    case Type::double_max: c.dt = MPI_DOUBLE; c.op = MPI_MAX; c.extent = 8; break;
    case Type::twoint_maxloc: c.dt = MPI_2INT; c.op = MPI_MAXLOC; c.extent = 8; break;
    case Type::user_op: c.dt = MPI_INT; c.op = g_user_op; c.extent = 4; break;
    case Type::gapped: c.dt = g_gapped; c.op = MPI_OP_NULL; c.extent = 12; break;
  }
}

// A case of `kind` on comm; its data from `seed`.
inline Case make_case(Kind kind, MPI_Comm comm, int root, int count, Type type, bool in_place, uint64_t seed) {
  Case c;
  c.kind = kind;
  c.comm = comm;
  MPI_Comm_size(comm, &c.p);
  MPI_Comm_rank(comm, &c.me);
  c.root = has_root(kind) ? root % c.p : 0;
  c.count = kind == Kind::barrier ? 0 : count;
  c.type = type;
  c.in_place = in_place;
  setup_type(c);
  // v-collectives: uneven counts (rank i gets count + i % 3 - 1, at least 0), gaps between blocks.
  const int P = c.p;
  if (kind == Kind::gatherv || kind == Kind::allgatherv || kind == Kind::scatterv || kind == Kind::reduce_scatter ||
      kind == Kind::alltoallv) {
    int at = 0;
    for (int i = 0; i < P; ++i) {
      const int n = std::max(0, count + (i % 3) - 1);
      c.counts.push_back(n);
      c.displs.push_back(at);
      at += n + (kind == Kind::reduce_scatter ? 0 : 1);
    }
    c.scounts = c.counts;
    c.sdispls = c.displs;
    if (kind == Kind::alltoallv) {  // rank me sends counts[(i + me) % P] to i: both sides agree
      c.scounts.assign(size_t(P), 0);
      c.counts.assign(size_t(P), 0);
      // In place both sides use one layout: what j sends to i is what i sends to j.
      auto amount = [&](int from, int to) {
        return std::max(0, count + ((in_place ? from + to : from + 2 * to) % 3) - 1);
      };
      int sa = 0, ra = 0;
      c.sdispls.assign(size_t(P), 0);
      c.displs.assign(size_t(P), 0);
      for (int i = P - 1; i >= 0; --i) {  // reversed placement: not the canonical layout
        c.scounts[size_t(i)] = amount(c.me, i);
        c.sdispls[size_t(i)] = sa;
        sa += c.scounts[size_t(i)] + 1;
        c.counts[size_t(i)] = amount(i, c.me);
        c.displs[size_t(i)] = ra;
        ra += c.counts[size_t(i)] + 2;
      }
    }
  }
  if (kind == Kind::scatterv) {  // the root's send layout is (scounts, sdispls); each receives counts[me]
    c.scounts = c.counts;
    c.sdispls = c.displs;
  }
  c.send.assign(std::max<size_t>(1, c.send_elems()) * c.extent, 0);
  c.recv.assign(std::max<size_t>(1, c.recv_elems()) * c.extent, char(0x33));
  fill_values(c.send.data(), c.send_elems(), c, seed);
  // recv too: in place reads it, and bytes that are not written must stay.
  std::vector<char> r(c.recv.size());
  fill_values(r.data(), c.recv_elems(), c, seed + 17);
  if (in_place) c.recv = r;
  c.label = std::string(kind_name(kind)) + " count=" + std::to_string(count) + " root=" + std::to_string(c.root) +
            " type=" + std::to_string(int(type)) + (in_place ? " in-place" : "") + " p=" + std::to_string(P);
  return c;
}

// In place for this rank: the send argument is MPI_IN_PLACE (where MPI
// allows it on this rank).
inline bool place_here(const Case& c) {
  if (!c.in_place) return false;
  switch (c.kind) {
    case Kind::reduce: case Kind::gather: case Kind::gatherv: case Kind::scatter: case Kind::scatterv:
      return c.me == c.root;
    default: return true;
  }
}

// The call, as `which`: blocking PMPI (the reference), MPI_I…, or the persistent init.
enum class Form { reference, nonblocking, persistent };

inline int call(Case& c, Form form, std::vector<char>& out, MPI_Request* req) {
  const bool ip = place_here(c);
  const void* sb = c.send.data();
  void* rb = out.data();
  if (ip && (c.kind == Kind::scatter || c.kind == Kind::scatterv)) {
    sb = c.send.data();
    rb = MPI_IN_PLACE;  // scatter: the root's receive buffer is MPI_IN_PLACE
  } else if (ip) {
    sb = MPI_IN_PLACE;
  }
  MPI_Info info = MPI_INFO_NULL;
  (void)info;
  (void)req;
  const int n = c.count;
  MPI_Datatype t = c.dt;
  MPI_Comm comm = c.comm;
  const int root = c.root;
  const int* cn = c.counts.data();
  const int* ds = c.displs.data();
  const int* scn = c.scounts.data();
  const int* sds = c.sdispls.data();
#if HAVE_PERSISTENT
#define FORMS(Name, name, ...)                                                                   \
  return form == Form::reference     ? PMPI_##Name(__VA_ARGS__)                                  \
         : form == Form::nonblocking ? MPI_I##name(__VA_ARGS__, req)                             \
                                     : PINIT(Name)(__VA_ARGS__, info, req)
#else
#define FORMS(Name, name, ...) \
  return form == Form::reference ? PMPI_##Name(__VA_ARGS__) : MPI_I##name(__VA_ARGS__, req)
#endif
  switch (c.kind) {
    case Kind::bcast:
      FORMS(Bcast, bcast, out.data(), n, t, root, comm);
    case Kind::reduce: FORMS(Reduce, reduce, sb, rb, n, t, c.op, root, comm);
    case Kind::allreduce: FORMS(Allreduce, allreduce, sb, rb, n, t, c.op, comm);
    case Kind::scan: FORMS(Scan, scan, sb, rb, n, t, c.op, comm);
    case Kind::exscan: FORMS(Exscan, exscan, sb, rb, n, t, c.op, comm);
    case Kind::reduce_scatter_block: FORMS(Reduce_scatter_block, reduce_scatter_block, sb, rb, n, t, c.op, comm);
    case Kind::reduce_scatter: FORMS(Reduce_scatter, reduce_scatter, sb, rb, cn, t, c.op, comm);
    case Kind::gather: FORMS(Gather, gather, sb, n, t, rb, n, t, root, comm);
    case Kind::gatherv: FORMS(Gatherv, gatherv, sb, cn[c.me], t, rb, cn, ds, t, root, comm);
    case Kind::scatter: FORMS(Scatter, scatter, sb, n, t, rb, n, t, root, comm);
    case Kind::scatterv: FORMS(Scatterv, scatterv, sb, scn, sds, t, rb, cn[c.me], t, root, comm);
    case Kind::allgather: FORMS(Allgather, allgather, sb, n, t, rb, n, t, comm);
    case Kind::allgatherv: FORMS(Allgatherv, allgatherv, sb, cn[c.me], t, rb, cn, ds, t, comm);
    case Kind::alltoall: FORMS(Alltoall, alltoall, sb, n, t, rb, n, t, comm);
    case Kind::alltoallv: FORMS(Alltoallv, alltoallv, sb, scn, sds, t, rb, cn, ds, t, comm);
    case Kind::barrier: FORMS(Barrier, barrier, comm);
  }
#undef FORMS
  return MPI_ERR_OTHER;
}

// In-place cases: MPI reads the input from the receive buffer.
inline void stage_in_place(Case& c, std::vector<char>& out) {
  if (!place_here(c)) return;
  const size_t e = c.extent;
  switch (c.kind) {
    case Kind::gather: case Kind::allgather:
      std::memcpy(out.data() + size_t(c.me) * size_t(c.count) * e, c.send.data(), size_t(c.count) * e);
      break;
    case Kind::gatherv: case Kind::allgatherv:
      std::memcpy(out.data() + size_t(c.displs[size_t(c.me)]) * e, c.send.data(), size_t(c.counts[size_t(c.me)]) * e);
      break;
    case Kind::scatter: case Kind::scatterv: break;  // the root keeps its block where it is
    case Kind::alltoall: case Kind::alltoallv: break;  // recv is the input as filled
    case Kind::reduce_scatter_block: case Kind::reduce_scatter:
      out.assign(std::max<size_t>(out.size(), c.send.size()), 0);
      std::memcpy(out.data(), c.send.data(), c.send.size());
      break;
    default: std::memcpy(out.data(), c.send.data(), std::min(out.size(), c.send.size())); break;
  }
}

// alltoall(v) in place: both sides use the receive layout.
inline void in_place_layout(Case& c) {
  if (c.in_place && c.kind == Kind::alltoallv) {
    c.scounts = c.counts;
    c.sdispls = c.displs;
  }
}

inline std::vector<char> initial_out(Case& c) {
  std::vector<char> out = c.recv;
  stage_in_place(c, out);
  if (c.kind == Kind::bcast && c.me == c.root) std::memcpy(out.data(), c.send.data(), std::min(out.size(), c.send.size()));
  return out;
}

inline void compute_reference(Case& c) {
  c.expect = initial_out(c);
  if (call(c, Form::reference, c.expect, nullptr) != MPI_SUCCESS) fail(c.label + ": the native reference failed");
}

inline bool compare(const Case& c, const std::vector<char>& got, const std::string& how) {
  ++checks;
  if (c.kind == Kind::exscan && c.me == 0) return true;  // undefined on rank 0
  if (c.kind == Kind::barrier) return true;
  // Reductions of doubles: max is exact. Everything else is exact too.
  size_t n = got.size();
  if (c.kind == Kind::reduce && c.me != c.root) return true;  // the receive buffer is not significant
  // In place, a reduce-scatter's result is the start of the buffer; MPI
  // leaves the rest to the implementation.
  if (c.in_place && (c.kind == Kind::reduce_scatter || c.kind == Kind::reduce_scatter_block))
    n = std::min(n, c.recv_elems() * c.extent);
  if (got.size() == c.expect.size() && std::memcmp(got.data(), c.expect.data(), n) == 0) return true;
  if (got.size() != c.expect.size() || std::memcmp(got.data(), c.expect.data(), n) != 0) {
    size_t first = 0;
    while (first < std::min(got.size(), c.expect.size()) && got[first] == c.expect[first]) ++first;
    size_t last = std::min(got.size(), c.expect.size()), ndiff = 0;
    for (size_t i = first; i < last; ++i) ndiff += got[i] != c.expect[i];
    char detail[160];
    std::snprintf(detail, sizeof detail, " (%zu bytes differ; got %02x, want %02x)", ndiff,
                  first < got.size() ? unsigned(uint8_t(got[first])) : 0u,
                  first < c.expect.size() ? unsigned(uint8_t(c.expect[first])) : 0u);
    fail(c.label + " " + how + ": differs from the native result at byte " + std::to_string(first) + " of " +
         std::to_string(got.size()) + detail);
    return false;
  }
  return true;
}

// ---------------------------------------------------------------- completion

// The application's own traffic in the arrays: a ring exchange on world.
struct Ring {
  int out = 0, in = -1;
  MPI_Request r[2];
  void post(int tag) {
    out = world_rank * 1000 + tag;
    in = -1;
    MPI_Irecv(&in, 1, MPI_INT, (world_rank + world_size - 1) % world_size, tag, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(&out, 1, MPI_INT, (world_rank + 1) % world_size, tag, MPI_COMM_WORLD, &r[1]);
  }
  void check(int tag) {
    ++checks;
    const int want = ((world_rank + world_size - 1) % world_size) * 1000 + tag;
    if (in != want) fail("the application's own message next to the collectives: got " + std::to_string(in));
  }
};

}  // namespace nb_cases
