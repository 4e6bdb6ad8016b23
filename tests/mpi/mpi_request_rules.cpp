// MPI's rules for non-blocking and persistent collectives that a library
// placed between a program and MPI can break, each checked against the
// native library (PMPI_*, blocking) in the same run. docs/mpi.md ("MPI's
// rules for non-blocking and persistent collectives") names the section
// that holds each rule.
//   freed    every collective, non-blocking and persistent, with a
//            predefined, contiguous, vector, resized, indexed and struct
//            datatype and a duplicate of a resized vector, on a duplicate
//            communicator: the datatypes and the communicator freed right
//            after the call (MPI_Type_free and MPI_Comm_free only mark
//            them), a persistent one then started three times with new
//            data, its datatypes and communicator long gone; the v-forms'
//            arrays overwritten after the call where hetcoll runs it (it
//            keeps copies)
//   order    persistent collectives started in a different order on every
//            rank: MPICH's p_order; several persistent and non-blocking
//            collectives outstanding on one communicator, blocking ones
//            between a rank's starts; more collectives between an
//            initialization and its start than tag epochs; initializations
//            after one rank freed an earlier request; more persistent
//            requests alive than hetcoll has tag slots
//   errors   a collective that fails after its communicator was freed
//            raises under the handler the communicator had; MPI_Start on
//            an active persistent collective is MPI_ERR_REQUEST
//   explain  one call of each form (for HETCOLL_DEBUG=explain: the lines
//            name MPI_Ibcast and MPI_Bcast_init; tests/mpi/explain_forms.cmake)
//   mpirun -n K mpi_request_rules [SECTION...]
#include <mpi.h>
#if defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "hetcoll.h"
#include "persistent_form.hpp"

namespace {

int world_rank = 0, world_size = 1;
long failures = 0, checks = 0;


void fail(const std::string& what) {
  if (failures++ < 30) std::fprintf(stderr, "rank %d: FAIL %s\n", world_rank, what.c_str());
}

enum class Kind { bcast, reduce, allreduce, gather, gatherv, scatter, scatterv, allgather, allgatherv,
                  reduce_scatter_block, reduce_scatter, alltoall, alltoallv, barrier, scan, exscan };
const Kind kAll[] = {Kind::bcast, Kind::reduce, Kind::allreduce, Kind::gather, Kind::gatherv, Kind::scatter,
                     Kind::scatterv, Kind::allgather, Kind::allgatherv, Kind::reduce_scatter_block,
                     Kind::reduce_scatter, Kind::alltoall, Kind::alltoallv, Kind::barrier, Kind::scan, Kind::exscan};
const char* kind_name(Kind k) {
  static const char* names[] = {"bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv",
                                "allgather", "allgatherv", "reduce_scatter_block", "reduce_scatter", "alltoall",
                                "alltoallv", "barrier", "scan", "exscan"};
  return names[int(k)];
}
bool is_reduction(Kind k) {
  return k == Kind::reduce || k == Kind::allreduce || k == Kind::reduce_scatter_block || k == Kind::reduce_scatter ||
         k == Kind::scan || k == Kind::exscan;
}
bool is_v(Kind k) {
  return k == Kind::gatherv || k == Kind::scatterv || k == Kind::allgatherv || k == Kind::alltoallv ||
         k == Kind::reduce_scatter;
}

// ---------------------------------------------------------------- datatypes

// The element types of a case. Reductions: MPI_INT (MPI defines its
// operations on predefined types only).
enum class Shape { predefined, contiguous, vector, resized, indexed, structure, dup_resized };
const Shape kShapes[] = {Shape::predefined, Shape::contiguous, Shape::vector, Shape::resized,
                         Shape::indexed,    Shape::structure,  Shape::dup_resized};
const char* shape_name(Shape s) {
  static const char* names[] = {"MPI_INT", "contiguous", "vector", "resized vector", "indexed", "struct",
                                "dup of a resized vector"};
  return names[int(s)];
}

// A new handle of the shape (committed); free_type() frees what make_type made.
MPI_Datatype make_type(Shape s) {
  MPI_Datatype t = MPI_INT, v;
  switch (s) {
    case Shape::predefined: return MPI_INT;
    case Shape::contiguous: MPI_Type_contiguous(3, MPI_INT, &t); break;
    case Shape::vector: MPI_Type_vector(2, 1, 2, MPI_INT, &t); break;  // ints 0 and 2, extent 3 ints
    case Shape::resized:
    case Shape::dup_resized:
      MPI_Type_vector(2, 1, 2, MPI_INT, &v);
      MPI_Type_create_resized(v, 0, 16, &t);  // a gap after: extent 4 ints
      MPI_Type_free(&v);
      if (s == Shape::dup_resized) {  // MPICH's nonblocking2: the receive type is a duplicate of it
        MPI_Type_commit(&t);
        MPI_Datatype d;
        MPI_Type_dup(t, &d);
        MPI_Type_free(&t);
        t = d;
      }
      break;
    case Shape::indexed: {
      int lens[2] = {2, 1}, disps[2] = {0, 3};  // ints 0, 1 and 3: extent 4 ints
      MPI_Type_indexed(2, lens, disps, MPI_INT, &t);
      break;
    }
    case Shape::structure: {
      int lens[2] = {1, 1};
      MPI_Aint disps[2] = {0, 8};  // an int, a gap, a double: extent 16
      MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
      MPI_Type_create_struct(2, lens, disps, types, &t);
      break;
    }
  }
  MPI_Type_commit(&t);
  return t;
}

void free_type(MPI_Datatype& t) {
  if (t == MPI_DATATYPE_NULL) return;
  int ni, na, nd, comb;
  MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
  if (comb != MPI_COMBINER_NAMED) MPI_Type_free(&t);
}

// Frees a type a collective in flight uses — but under SimGrid, whose
// MPI_Type_dup is wrong, hetcoll cannot hold one (mpi_types.hpp): there
// the type is freed after the wait (free_type), this does nothing.
void free_type_in_flight(MPI_Datatype& t) {
#ifndef SMPI_H
  free_type(t);
#else
  (void)t;
#endif
}

size_t extent_of(MPI_Datatype t) {
  MPI_Aint lb, extent;
  MPI_Type_get_extent(t, &lb, &extent);
  return size_t(extent);
}

// ---------------------------------------------------------------- cases

// One collective's arguments on this rank: buffers in bytes (elements of
// `extent` bytes), counts in elements.
struct Case {
  Kind kind = Kind::bcast;
  Shape shape = Shape::predefined;
  int p = 1, me = 0, root = 0, count = 0;
  size_t extent = 4;
  std::vector<char> send, recv;
  std::vector<int> counts, displs, scounts, sdispls;
  std::string label;
};

size_t span(const std::vector<int>& counts, const std::vector<int>& displs) {
  size_t n = 0;
  for (size_t i = 0; i < counts.size(); ++i) n = std::max(n, size_t(displs[i] + counts[i]));
  return n;
}

// Buffers and counts for `kind` with `count` elements a block; data from
// `seed` (every rank's contribution its own). Receive buffers start with a
// pattern that gaps in the type map must keep.
Case make_case(Kind kind, Shape shape, MPI_Comm comm, int count, int root, uint64_t seed) {
  Case c;
  c.kind = kind;
  c.shape = shape;
  MPI_Comm_size(comm, &c.p);
  MPI_Comm_rank(comm, &c.me);
  c.root = root % c.p;
  c.count = kind == Kind::barrier ? 0 : count;
  MPI_Datatype t = make_type(shape);
  c.extent = extent_of(t);
  free_type(t);
  const int P = c.p;
  size_t send_elems = size_t(c.count), recv_elems = size_t(c.count);
  if (is_v(kind)) {
    int at = 1;  // a gap first, then blocks in reverse rank order with gaps
    c.counts.assign(size_t(P), 0);
    c.displs.assign(size_t(P), 0);
    for (int i = P - 1; i >= 0; --i) {
      c.counts[size_t(i)] = std::max(0, count + i % 3 - 1);
      c.displs[size_t(i)] = kind == Kind::reduce_scatter ? 0 : at;
      at += c.counts[size_t(i)] + 1;
    }
    c.scounts = c.counts;
    c.sdispls = c.displs;
    if (kind == Kind::alltoallv) {  // me sends amount(me, j) to j; receives amount(j, me)
      auto amount = [&](int from, int to) { return std::max(0, count + (from + 2 * to) % 3 - 1); };
      int sa = 0, ra = 2;
      for (int j = 0; j < P; ++j) {
        c.scounts[size_t(j)] = amount(c.me, j);
        c.sdispls[size_t(j)] = sa;
        sa += c.scounts[size_t(j)] + 1;
        c.counts[size_t(j)] = amount(j, c.me);
        c.displs[size_t(j)] = ra;
        ra += c.counts[size_t(j)] + 2;
      }
    }
  }
  switch (kind) {
    case Kind::gather: case Kind::allgather: recv_elems = size_t(count) * size_t(P); break;
    case Kind::scatter: send_elems = size_t(count) * size_t(P); break;
    case Kind::alltoall: case Kind::reduce_scatter_block:
      send_elems = size_t(count) * size_t(P);
      if (kind == Kind::alltoall) recv_elems = send_elems;
      break;
    case Kind::gatherv: case Kind::allgatherv:
      send_elems = size_t(c.counts[size_t(c.me)]);
      recv_elems = span(c.counts, c.displs);
      break;
    case Kind::scatterv:
      send_elems = span(c.scounts, c.sdispls);
      recv_elems = size_t(c.counts[size_t(c.me)]);
      break;
    case Kind::alltoallv:
      send_elems = span(c.scounts, c.sdispls);
      recv_elems = span(c.counts, c.displs);
      break;
    case Kind::reduce_scatter:
      send_elems = size_t(std::accumulate(c.counts.begin(), c.counts.end(), 0));
      recv_elems = size_t(c.counts[size_t(c.me)]);
      break;
    default: break;
  }
  c.send.assign(std::max<size_t>(1, send_elems) * c.extent, 0);
  c.recv.assign(std::max<size_t>(1, recv_elems) * c.extent, char(0x5A));
  std::mt19937_64 rng(seed * 1000003 + uint64_t(c.me) * 7919);
  // Reductions add ints: small values. Elsewhere any bytes (a struct's
  // double included: only moved).
  if (is_reduction(kind)) {
    for (size_t i = 0; i + 4 <= c.send.size(); i += 4) {
      const int v = int(rng() % 2001) - 1000;
      std::memcpy(&c.send[i], &v, 4);
    }
  } else {
    for (char& b : c.send) b = char(rng());
  }
  if (kind == Kind::bcast && c.me == c.root) c.recv = c.send;  // the root's buffer is the data
  c.label = std::string(kind_name(kind)) + " of " + shape_name(shape) + " count=" + std::to_string(count) +
            " root=" + std::to_string(c.root) + " p=" + std::to_string(P);
  return c;
}

enum class Form { reference, nonblocking, persistent };

// The collective of `c` with datatype `t` on `comm`, in `form`, into `out`.
int invoke(const Case& c, Form form, MPI_Datatype t, MPI_Comm comm, std::vector<char>& out, MPI_Request* req) {
  const void* sb = c.send.data();
  void* rb = out.data();
  const int n = c.count, root = c.root;
  const int* cn = c.counts.data();
  const int* ds = c.displs.data();
  const int* scn = c.scounts.data();
  const int* sds = c.sdispls.data();
  const MPI_Op op = MPI_SUM;
  MPI_Info info = MPI_INFO_NULL;
  (void)info;
#if HAVE_PERSISTENT
#define FORMS(Name, name, ...)                                              \
  return form == Form::reference     ? PMPI_##Name(__VA_ARGS__)             \
         : form == Form::nonblocking ? MPI_I##name(__VA_ARGS__, req)        \
                                     : PINIT(Name)(__VA_ARGS__, info, req)
#else
#define FORMS(Name, name, ...) \
  return form == Form::reference ? PMPI_##Name(__VA_ARGS__) : MPI_I##name(__VA_ARGS__, req)
#endif
  switch (c.kind) {
    case Kind::bcast: FORMS(Bcast, bcast, rb, n, t, root, comm);
    case Kind::reduce: FORMS(Reduce, reduce, sb, rb, n, t, op, root, comm);
    case Kind::allreduce: FORMS(Allreduce, allreduce, sb, rb, n, t, op, comm);
    case Kind::scan: FORMS(Scan, scan, sb, rb, n, t, op, comm);
    case Kind::exscan: FORMS(Exscan, exscan, sb, rb, n, t, op, comm);
    case Kind::reduce_scatter_block: FORMS(Reduce_scatter_block, reduce_scatter_block, sb, rb, n, t, op, comm);
    case Kind::reduce_scatter: FORMS(Reduce_scatter, reduce_scatter, sb, rb, cn, t, op, comm);
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

// The native result of c (a type of its shape made for the occasion), on
// `comm` (whose errors return). Empty when the native library fails it:
// MPICH 4.0.2's own scatter of 1000 elements of the struct type reports a
// truncation (without hetcoll too) — skipped and counted there, a failure
// elsewhere.
long native_failures = 0;
std::vector<char> reference(const Case& c, MPI_Comm comm) {
  std::vector<char> out = c.recv;
  MPI_Datatype t = make_type(c.shape);
  const int rc = invoke(c, Form::reference, t, comm, out, nullptr);
  free_type(t);
  int failed = rc != MPI_SUCCESS;
  PMPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, comm);
  if (!failed) return out;
#ifdef MPICH_VERSION
  ++native_failures;
#else
  fail(c.label + ": the native reference failed");
#endif
  return {};
}

MPI_Comm dup_returning_errors() {
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  return c;
}

void compare(const Case& c, const std::vector<char>& got, const std::vector<char>& want, const std::string& how) {
  ++checks;
  if (c.kind == Kind::barrier) return;
  if (c.kind == Kind::exscan && c.me == 0) return;                 // undefined on rank 0
  if (c.kind == Kind::reduce && c.me != c.root) return;             // not significant
  if (got == want) return;
  size_t first = 0;
  while (first < std::min(got.size(), want.size()) && got[first] == want[first]) ++first;
  fail(c.label + " " + how + ": differs from the native result at byte " + std::to_string(first) + " of " +
       std::to_string(got.size()));
}

// The v-forms' arrays, overwritten as a program that reuses them would
// (hetcoll keeps copies; MPI itself asks programs not to).
void scribble(Case& c) {
  for (auto* v : {&c.counts, &c.displs, &c.scounts, &c.sdispls})
    for (int& x : *v) x = -77777;
}

bool hetcoll_ran(MPI_Comm comm) {
  char algo[256] = {0};
  hetcoll_last_algorithm(comm, algo, sizeof algo);
  return algo[0] != 0;
}

// ---------------------------------------------------------------- freed

void freed_nonblocking(Kind k, Shape s, int count, uint64_t seed) {
  MPI_Comm comm = dup_returning_errors();
  Case c = make_case(k, s, comm, count, int(seed), seed);
  const std::vector<char> want = reference(c, comm);
  if (want.empty()) {
    MPI_Comm_free(&comm);
    return;
  }
  std::vector<char> out = c.recv;
  MPI_Datatype t = make_type(s);
  MPI_Request r = MPI_REQUEST_NULL;
  if (invoke(c, Form::nonblocking, t, comm, out, &r) != MPI_SUCCESS) fail(c.label + ": MPI_I… failed");
  const bool ours = hetcoll_ran(comm);
  free_type_in_flight(t);
  MPI_Comm_free(&comm);
  const Case kept = c;
  if (ours) scribble(c);
  if (MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS) fail(c.label + ": MPI_Wait failed");
  free_type(t);
  compare(kept, out, want, "non-blocking, its datatype and communicator freed before MPI_Wait");
}

void freed_persistent(Kind k, Shape s, int count, uint64_t seed, MPI_Comm ref) {
#if HAVE_PERSISTENT
  {  // what the native library cannot do is not asked of hetcoll
    MPI_Comm probe = dup_returning_errors();
    const bool native_fails = reference(make_case(k, s, probe, count, int(seed), seed), probe).empty();
    MPI_Comm_free(&probe);
    if (native_fails) return;
  }
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  Case c = make_case(k, s, comm, count, int(seed), seed);
  std::vector<char> out = c.recv;  // its address is the request's
  MPI_Datatype t = make_type(s);
  MPI_Request r = MPI_REQUEST_NULL;
  if (invoke(c, Form::persistent, t, comm, out, &r) != MPI_SUCCESS) fail(c.label + ": the persistent init failed");
  const bool ours = hetcoll_ran(comm);
  free_type_in_flight(t);
  MPI_Comm_free(&comm);
  Case kept = c;
  if (ours) scribble(c);
  for (int start = 0; start < 3; ++start) {
    // New data in the request's buffers; the reference on a live communicator.
    const Case fresh = make_case(k, s, ref, count, int(seed), seed * 10 + uint64_t(start) + 1);
    std::memcpy(c.send.data(), fresh.send.data(), c.send.size());
    std::memcpy(out.data(), fresh.recv.data(), out.size());
    kept.send = fresh.send;
    kept.recv = fresh.recv;
    const std::vector<char> want = reference(kept, ref);
    if (MPI_Start(&r) != MPI_SUCCESS) fail(c.label + ": MPI_Start failed");
    if (MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS) fail(c.label + ": MPI_Wait failed");
    compare(kept, out, want,
            "persistent start " + std::to_string(start) + ", its datatype and communicator freed after the init");
  }
  if (MPI_Request_free(&r) != MPI_SUCCESS) fail(c.label + ": MPI_Request_free failed");
  free_type(t);
#else
  (void)k, (void)s, (void)count, (void)seed, (void)ref;
#endif
}

void freed() {
  MPI_Comm ref = dup_returning_errors();
  uint64_t seed = 1;
  for (Kind k : kAll)
    for (Shape s : kShapes) {
      if ((is_reduction(k) || k == Kind::barrier) && s != Shape::predefined) continue;
      for (int count : {0, 3, 1000}) {
        freed_nonblocking(k, s, count, ++seed);
        freed_persistent(k, s, count, ++seed, ref);
      }
    }
#if !HAVE_PERSISTENT
  if (world_rank == 0) std::printf("freed: persistent forms SKIPPED (this MPI has no persistent collectives)\n");
#endif
  if (world_rank == 0 && native_failures)
    std::printf("freed: %ld cases SKIPPED: the native library failed them itself\n", native_failures);
  MPI_Comm_free(&ref);
}

// ---------------------------------------------------------------- order

#if HAVE_PERSISTENT
// A persistent collective of MPI_INT with its buffer and expected result.
struct Standing {
  Case c;
  std::vector<char> out, want;
  MPI_Request r = MPI_REQUEST_NULL;
};

std::unique_ptr<Standing> standing(Kind k, MPI_Comm comm, int count, uint64_t seed) {
  auto s = std::make_unique<Standing>();
  s->c = make_case(k, Shape::predefined, comm, count, int(seed), seed);
  s->out = s->c.recv;
  if (invoke(s->c, Form::persistent, MPI_INT, comm, s->out, &s->r) != MPI_SUCCESS)
    fail(s->c.label + ": the persistent init failed");
  return s;
}

// Before a start: the reference (blocking, on `ref`) and the buffer reset.
void arm(Standing& s, MPI_Comm ref) {
  s.want = reference(s.c, ref);
  std::memcpy(s.out.data(), s.c.recv.data(), s.out.size());
}
#endif

void order() {
#if HAVE_PERSISTENT
  std::mt19937 mine(uint32_t(world_rank) * 7919 + 5);  // this rank's own orders
  // MPICH's p_order: a bcast and a barrier, started in opposite orders.
  for (int round = 0; round < 3; ++round) {
    int a = -1;
    MPI_Request rs[2];
    PINIT(Bcast)(&a, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rs[0]);
    PINIT(Barrier)(MPI_COMM_WORLD, MPI_INFO_NULL, &rs[1]);
    if (world_rank == 0) a = 42 + round;
    if (world_rank == 0) {
      MPI_Start(&rs[0]);
      MPI_Start(&rs[1]);
    } else {
      MPI_Start(&rs[1]);
      MPI_Start(&rs[0]);
    }
    if (MPI_Waitall(2, rs, MPI_STATUSES_IGNORE) != MPI_SUCCESS) fail("p_order: MPI_Waitall");
    ++checks;
    if (a != 42 + round) fail("p_order: a = " + std::to_string(a) + ", not " + std::to_string(42 + round));
    MPI_Request_free(&rs[0]);
    MPI_Request_free(&rs[1]);
  }
  MPI_Comm comm, ref;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &ref);
  // Six persistent collectives and non-blocking ones outstanding at once:
  // each rank starts the persistent ones in its own order, the
  // non-blocking and blocking ones (ordered by their calls) between them.
  {
    const Kind kinds[] = {Kind::alltoall, Kind::allreduce, Kind::bcast, Kind::gatherv, Kind::scan, Kind::allgather};
    std::vector<std::unique_ptr<Standing>> ps;
    for (int i = 0; i < 6; ++i) ps.push_back(standing(kinds[i], comm, i % 2 ? 20000 : 5, uint64_t(100 + i)));
    for (int round = 0; round < 6; ++round) {
      for (auto& s : ps) arm(*s, ref);
      std::vector<int> at(ps.size());
      std::iota(at.begin(), at.end(), 0);
      std::shuffle(at.begin(), at.end(), mine);
      Case nb1 = make_case(Kind::allreduce, Shape::predefined, comm, 3000, 0, uint64_t(round) + 7);
      Case nb2 = make_case(Kind::alltoallv, Shape::predefined, comm, 40, 0, uint64_t(round) + 9);
      const std::vector<char> w1 = reference(nb1, ref), w2 = reference(nb2, ref);
      std::vector<char> o1 = nb1.recv, o2 = nb2.recv;
      MPI_Request n1, n2;
      std::vector<MPI_Request> all;
      for (size_t j = 0; j < at.size(); ++j) {
        if (j == 1) invoke(nb1, Form::nonblocking, MPI_INT, comm, o1, &n1);
        if (j == 3) {  // a blocking collective while persistent ones run
          int one = 1, sum = 0;
          MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
          ++checks;
          if (sum != world_size) fail("a blocking allreduce between starts");
        }
        if (j == 4) invoke(nb2, Form::nonblocking, MPI_INT, comm, o2, &n2);
        if (MPI_Start(&ps[size_t(at[j])]->r) != MPI_SUCCESS) fail("MPI_Start");
      }
      for (int i : at) all.push_back(ps[size_t(i)]->r);
      all.push_back(n1);
      all.push_back(n2);
      std::shuffle(all.begin(), all.end(), mine);
      if (MPI_Waitall(int(all.size()), all.data(), MPI_STATUSES_IGNORE) != MPI_SUCCESS) fail("MPI_Waitall");
      for (auto& s : ps) compare(s->c, s->out, s->want, "persistent, started in each rank's own order");
      compare(nb1, o1, w1, "non-blocking between persistent starts");
      compare(nb2, o2, w2, "non-blocking between persistent starts");
    }
    for (auto& s : ps) MPI_Request_free(&s->r);
  }
  // More collectives between an initialization and its start than tag
  // epochs; then rank 0 starts it before a blocking barrier, the others after.
  {
    auto s = standing(Kind::allreduce, comm, 1000, 300);
    for (int i = 0; i < 300; ++i) {
      int one = 1, sum = 0;
      MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm);
    }
    for (int round = 0; round < 3; ++round) {
      arm(*s, ref);
      if (world_rank == 0) {
        MPI_Start(&s->r);
        MPI_Barrier(comm);
      } else {
        MPI_Barrier(comm);
        MPI_Start(&s->r);
      }
      MPI_Wait(&s->r, MPI_STATUS_IGNORE);
      compare(s->c, s->out, s->want, "persistent, started before a barrier on rank 0 and after it elsewhere");
    }
    MPI_Request_free(&s->r);
  }
  // Rank 0 frees a request the others still hold, then all initialize more.
  {
    auto a = standing(Kind::bcast, comm, 100, 400);
    auto b = standing(Kind::allreduce, comm, 100, 401);
    if (world_rank == 0) MPI_Request_free(&a->r);
    auto c = standing(Kind::allgather, comm, 100, 402);
    for (int round = 0; round < 2; ++round) {
      arm(*b, ref);
      arm(*c, ref);
      MPI_Request both[2] = {b->r, c->r};
      if (world_rank % 2) std::swap(both[0], both[1]);
      MPI_Startall(2, both);
      MPI_Waitall(2, both, MPI_STATUSES_IGNORE);
      compare(b->c, b->out, b->want, "persistent, after rank 0 freed an earlier one");
      compare(c->c, c->out, c->want, "persistent, initialized after rank 0 freed an earlier one");
    }
    if (world_rank != 0) MPI_Request_free(&a->r);
    auto d = standing(Kind::alltoall, comm, 100, 403);
    arm(*b, ref);
    arm(*c, ref);
    arm(*d, ref);
    MPI_Request three[3] = {d->r, b->r, c->r};
    std::shuffle(three, three + 3, mine);
    MPI_Startall(3, three);
    MPI_Waitall(3, three, MPI_STATUSES_IGNORE);
    compare(b->c, b->out, b->want, "persistent, after every rank freed an earlier one");
    compare(c->c, c->out, c->want, "persistent, after every rank freed an earlier one");
    compare(d->c, d->out, d->want, "persistent, after every rank freed an earlier one");
    for (auto* s : {&b, &c, &d}) MPI_Request_free(&(*s)->r);
  }
  // More persistent requests alive than tag slots (64 at most: the rest
  // run on communicators of their own); then rank 0 frees two the others
  // still hold and all initialize more (the ranks' slots in use differ when
  // they agree again), then the others free them too and all initialize more.
  {
    std::vector<std::unique_ptr<Standing>> many;
    for (int i = 0; i < 70; ++i) many.push_back(standing(Kind::allreduce, comm, 1 + i, uint64_t(500 + i)));
    const int gone[2] = {5, 7};
    if (world_rank == 0)
      for (int g : gone) MPI_Request_free(&many[size_t(g)]->r);
    for (int i = 0; i < 3; ++i) many.push_back(standing(Kind::allgather, comm, 10 + i, uint64_t(600 + i)));
    if (world_rank != 0)
      for (int g : gone) MPI_Request_free(&many[size_t(g)]->r);
    for (int g : gone) many[size_t(g)].reset();
    for (int i = 0; i < 3; ++i) many.push_back(standing(Kind::alltoall, comm, 10 + i, uint64_t(700 + i)));
    many.erase(std::remove(many.begin(), many.end(), nullptr), many.end());
    for (int round = 0; round < 2; ++round) {
      std::vector<MPI_Request> rs;
      for (auto& s : many) {
        arm(*s, ref);
        rs.push_back(s->r);
      }
      std::shuffle(rs.begin(), rs.end(), mine);
      MPI_Startall(int(rs.size()), rs.data());
      MPI_Waitall(int(rs.size()), rs.data(), MPI_STATUSES_IGNORE);
      for (auto& s : many) compare(s->c, s->out, s->want, "one of 74 persistent requests alive at once");
    }
    for (auto& s : many) MPI_Request_free(&s->r);
  }
  MPI_Comm_free(&comm);
  MPI_Comm_free(&ref);
#else
  if (world_rank == 0) std::printf("order: SKIPPED (this MPI has no persistent collectives)\n");
#endif
}

// ---------------------------------------------------------------- errors

int handled = 0, handled_class = MPI_SUCCESS;
void count_errors(MPI_Comm*, int* code, ...) {
  ++handled;
  MPI_Error_class(*code, &handled_class);
}

void errors() {
#ifdef SMPI_H
  if (world_rank == 0) std::printf("errors: SKIPPED (SimGrid does not report a truncated receive)\n");
#else
  if (world_size < 2) return;
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(count_errors, &eh);
  for (int variant = 0; variant < 2; ++variant) {
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, variant == 0 ? MPI_ERRORS_RETURN : eh);
    hetcoll_set_algorithm("bcast:@star_bcast");
    std::vector<int> buf(100, world_rank == 0 ? 7 : -1);
    MPI_Request r;
    handled = 0;
    if (MPI_Ibcast(buf.data(), world_rank == 0 ? 100 : 50, MPI_INT, 0, c, &r) != MPI_SUCCESS)
      fail("a mismatched MPI_Ibcast failed to start");
    MPI_Comm_free(&c);
    const int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    hetcoll_set_algorithm("");
    int cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    ++checks;
    if (world_rank != 0 && cls != MPI_ERR_TRUNCATE)
      fail("a truncated MPI_Ibcast on a freed communicator: class " + std::to_string(cls));
    if (world_rank != 0 && variant == 1 && (handled != 1 || handled_class != MPI_ERR_TRUNCATE))
      fail("the freed communicator's handler was called " + std::to_string(handled) + " times");
    if (variant == 0 && handled != 0) fail("a handler was called under MPI_ERRORS_RETURN");
  }
  MPI_Errhandler_free(&eh);
#endif
#if HAVE_PERSISTENT
  // MPI_Start on a persistent collective still active is erroneous: said,
  // MPI_ERR_REQUEST, and the request goes on to complete right.
  MPI_Comm c;
  MPI_Comm_dup(MPI_COMM_WORLD, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  std::vector<int> in(50000, world_rank + 1), out(in.size(), 0);
  MPI_Request r;
  PINIT(Allreduce)(in.data(), out.data(), int(in.size()), MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r);
  MPI_Start(&r);
  const bool ours = hetcoll_ran(c);
  int cls = MPI_SUCCESS;
  MPI_Error_class(MPI_Start(&r), &cls);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  ++checks;
  if (ours && cls != MPI_ERR_REQUEST) fail("MPI_Start on an active persistent collective: class " + std::to_string(cls));
  if (out[777] != world_size * (world_size + 1) / 2) fail("the persistent allreduce after an erroneous MPI_Start");
  MPI_Request_free(&r);
  MPI_Comm_free(&c);
#endif
}

// ---------------------------------------------------------------- explain

void explain() {
  std::vector<int> v(1000, world_rank);
  MPI_Request r;
  MPI_Bcast(v.data(), 1000, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Ibcast(v.data(), 1000, MPI_INT, 0, MPI_COMM_WORLD, &r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
#if HAVE_PERSISTENT
  PINIT(Bcast)(v.data(), 1000, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
  MPI_Start(&r);
  MPI_Wait(&r, MPI_STATUS_IGNORE);
  MPI_Request_free(&r);
  if (world_rank == 0) std::printf("explain: the persistent form was called\n");
#endif
  ++checks;
  if (v[999] != 0) fail("explain: the bcasts");
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  std::vector<std::string> sections;
  for (int i = 1; i < argc; ++i) sections.push_back(argv[i]);
  if (sections.empty()) sections = {"freed", "order", "errors"};
  for (const std::string& s : sections) {
    const long before = failures;
    if (s == "freed") freed();
    else if (s == "order") order();
    else if (s == "errors") errors();
    else if (s == "explain") explain();
    else {
      if (world_rank == 0) std::fprintf(stderr, "unknown section %s\n", s.c_str());
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (world_rank == 0) std::printf("%s: %s\n", s.c_str(), failures == before ? "ok" : "FAILED");
  }
  long mine[2] = {failures, checks}, sum[2];
  PMPI_Allreduce(mine, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0) std::printf("%ld checks, %ld failures\n", sum[1], sum[0]);
  MPI_Finalize();
  return sum[0] == 0 ? 0 : 1;
}
