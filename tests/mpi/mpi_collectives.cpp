// Correctness under MPI: every collective × every algorithm (forced with
// hetcoll_set_algorithm, the HETCOLL_ALGO grammar) × sizes {0, 1, 3, 1000,
// 65537, 2^20 bytes} × roots × datatypes and operations × in place or not ×
// communicators (world, split halves, odd/even, reversed order), compared
// with the native result (PMPI_*): bit for bit for integer types, to 1e-12
// relative for floating point, and identical bits on every rank for a
// floating-point allreduce with a rank-consistent algorithm. Also checks
// that hetcoll (not the native library) ran each call.
// With --soak N: N collectives chosen at random (operation, size, root,
// datatype, in place, communicator) as the planner decides, each wrapped in
// the user's own point-to-point traffic on the same communicator (a
// wildcard receive included), all verified. With --comms A,B: only the
// communicators named (world, halves, odd/even, reversed).
//   mpirun -n K mpi_collectives [--quick | --soak N] [--comms A,B]
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "hetcoll.h"

using namespace hetcoll;

namespace {

int world_rank = 0;
long failures = 0, checks = 0;

struct TypeCase {
  MPI_Datatype type;
  MPI_Op op;
  const char* name;
  enum Kind { Int, Float, Complex, FloatPair, IntPair, Bool } kind;
};

std::vector<TypeCase> reduction_cases() {
  return {
      {MPI_INT, MPI_SUM, "int sum", TypeCase::Int},
      {MPI_LONG, MPI_MAX, "long max", TypeCase::Int},
      {MPI_UNSIGNED_CHAR, MPI_BXOR, "uchar bxor", TypeCase::Int},
      {MPI_SHORT, MPI_BAND, "short band", TypeCase::Int},
      {MPI_INT64_T, MPI_PROD, "int64 prod", TypeCase::Int},
      {MPI_UINT8_T, MPI_LXOR, "uint8 lxor", TypeCase::Int},
      {MPI_UNSIGNED, MPI_BOR, "unsigned bor", TypeCase::Int},
      {MPI_LONG_LONG, MPI_MIN, "long long min", TypeCase::Int},
      {MPI_INT, MPI_LAND, "int land", TypeCase::Int},
      {MPI_C_BOOL, MPI_LOR, "bool lor", TypeCase::Bool},
      {MPI_BYTE, MPI_BOR, "byte bor", TypeCase::Int},
      {MPI_DOUBLE, MPI_SUM, "double sum", TypeCase::Float},
      {MPI_FLOAT, MPI_MIN, "float min", TypeCase::Float},
      {MPI_DOUBLE, MPI_PROD, "double prod", TypeCase::Float},
      {MPI_C_DOUBLE_COMPLEX, MPI_SUM, "double complex sum", TypeCase::Complex},
      {MPI_C_FLOAT_COMPLEX, MPI_PROD, "float complex prod", TypeCase::Complex},
      {MPI_DOUBLE_INT, MPI_MINLOC, "double_int minloc", TypeCase::FloatPair},
      {MPI_2INT, MPI_MAXLOC, "2int maxloc", TypeCase::IntPair},
      {MPI_SHORT_INT, MPI_MINLOC, "short_int minloc", TypeCase::IntPair},
      {MPI_LONG_DOUBLE, MPI_MAX, "long double max", TypeCase::Float},
  };
}

MPI_Aint extent_of(MPI_Datatype t) {
  MPI_Aint lb, ext;
  MPI_Type_get_extent(t, &lb, &ext);
  return ext;
}
int size_of(MPI_Datatype t) {
  int s;
  MPI_Type_size(t, &s);
  return s;
}

// Fill `count` elements of type t at buf with values that stay exact.
void fill(void* buf, int count, const TypeCase& tc, std::mt19937& rng) {
  char* p = static_cast<char*>(buf);
  MPI_Aint ext = extent_of(tc.type);
  std::uniform_int_distribution<int> small(0, 9);
  for (int i = 0; i < count; ++i, p += ext) {
    if (tc.type == MPI_INT || tc.type == MPI_UNSIGNED) { int v = small(rng) - (tc.type == MPI_INT ? 3 : 0); std::memcpy(p, &v, 4); }
    else if (tc.type == MPI_LONG) { long v = small(rng) * 1000 - 4000; std::memcpy(p, &v, sizeof v); }
    else if (tc.type == MPI_LONG_LONG) { long long v = small(rng) - 5; std::memcpy(p, &v, sizeof v); }
    else if (tc.type == MPI_INT64_T) { int64_t v = small(rng) % 3 + 1; std::memcpy(p, &v, 8); }
    else if (tc.type == MPI_SHORT) { short v = short(rng()); std::memcpy(p, &v, 2); }
    else if (tc.type == MPI_UNSIGNED_CHAR || tc.type == MPI_UINT8_T || tc.type == MPI_BYTE) { *p = char(rng() % 4); }
    else if (tc.type == MPI_C_BOOL) { bool v = rng() % 3 == 0; std::memcpy(p, &v, sizeof v); }
    else if (tc.type == MPI_DOUBLE) { double v = std::uniform_real_distribution<double>(0.5, 1.5)(rng); std::memcpy(p, &v, 8); }
    else if (tc.type == MPI_FLOAT) { float v = std::uniform_real_distribution<float>(-1, 1)(rng); std::memcpy(p, &v, 4); }
    else if (tc.type == MPI_LONG_DOUBLE) { long double v = small(rng) * 0.25L; std::memcpy(p, &v, sizeof v); }
    else if (tc.type == MPI_C_DOUBLE_COMPLEX) { std::complex<double> v(small(rng) * 0.5, small(rng) - 4.0); std::memcpy(p, &v, sizeof v); }
    else if (tc.type == MPI_C_FLOAT_COMPLEX) { std::complex<float> v(std::uniform_real_distribution<float>(0.5f, 1.0f)(rng), 0.1f); std::memcpy(p, &v, sizeof v); }
    else if (tc.type == MPI_DOUBLE_INT) { struct { double v; int i; } x{double(small(rng) % 4), int(rng() % 8)}; std::memcpy(p, &x, sizeof x); }
    else if (tc.type == MPI_2INT) { int x[2] = {small(rng) % 4, int(rng() % 8)}; std::memcpy(p, x, 8); }
    else if (tc.type == MPI_SHORT_INT) { struct { short v; int i; } x{short(small(rng) % 4), int(rng() % 8)}; std::memcpy(p, &x, sizeof x); }
    else { for (MPI_Aint b = 0; b < ext; ++b) p[b] = char(rng()); }
  }
}

bool close(double a, double b) { return a == b || std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b)) + 1e-300; }

// Compare count elements (the data, not gaps inside an element).
bool equal(const void* x, const void* y, int count, const TypeCase& tc) {
  const char *a = static_cast<const char*>(x), *b = static_cast<const char*>(y);
  MPI_Aint ext = extent_of(tc.type);
  for (int i = 0; i < count; ++i, a += ext, b += ext) {
    switch (tc.kind) {
      case TypeCase::Float:
        if (tc.type == MPI_DOUBLE) { double u, v; std::memcpy(&u, a, 8); std::memcpy(&v, b, 8); if (!close(u, v)) return false; }
        else if (tc.type == MPI_FLOAT) { float u, v; std::memcpy(&u, a, 4); std::memcpy(&v, b, 4); if (!close(u, v)) return false; }
        else { long double u, v; std::memcpy(&u, a, sizeof u); std::memcpy(&v, b, sizeof v); if (!close(double(u), double(v))) return false; }
        break;
      case TypeCase::Complex:
        if (tc.type == MPI_C_DOUBLE_COMPLEX) { std::complex<double> u, v; std::memcpy(&u, a, 16); std::memcpy(&v, b, 16);
          if (!close(u.real(), v.real()) || !close(u.imag(), v.imag())) return false; }
        else { std::complex<float> u, v; std::memcpy(&u, a, 8); std::memcpy(&v, b, 8);
          if (std::abs(u - v) > 1e-5f * std::max(1.0f, std::abs(u))) return false; }
        break;
      case TypeCase::FloatPair: {
        double u, v;
        int i, j;
        std::memcpy(&u, a, 8);
        std::memcpy(&v, b, 8);
        std::memcpy(&i, a + 8, 4);
        std::memcpy(&j, b + 8, 4);
        if (u != v || i != j) return false;
        break;
      }
      case TypeCase::IntPair:
        if (tc.type == MPI_SHORT_INT) { short u, v; int i, j; std::memcpy(&u, a, 2); std::memcpy(&v, b, 2); std::memcpy(&i, a + 4, 4); std::memcpy(&j, b + 4, 4);
          if (u != v || i != j) return false; }
        else if (std::memcmp(a, b, 8)) return false;
        break;
      default:
        if (std::memcmp(a, b, size_t(size_of(tc.type)))) return false;
    }
  }
  return true;
}

void report(bool ok, const std::string& what) {
  ++checks;
  if (ok) return;
  if (++failures <= 2000) std::fprintf(stderr, "[world rank %d] FAIL %s\n", world_rank, what.c_str());
}

// Did hetcoll run the last call on comm with this algorithm family?
void check_ran(MPI_Comm comm, const std::string& algo, const std::string& what) {
  char buf[256];
  hetcoll_last_algorithm(comm, buf, sizeof buf);
  std::string got = buf;
  report(got.rfind(algo, 0) == 0, what + ": expected hetcoll's " + algo + ", last ran '" + got + "'");
}

struct Ctx {
  MPI_Comm comm;
  std::string comm_name;
  int rank, p;
  std::mt19937 rng;
};

std::string label(const Ctx& c, const std::string& algo, const char* op, size_t bytes, int root, const char* type, bool ip) {
  char s[400];
  std::snprintf(s, sizeof s, "%s %s on %s (p=%d) bytes=%zu root=%d %s%s", op, algo.c_str(), c.comm_name.c_str(), c.p, bytes,
                root, type, ip ? " in-place" : "");
  return s;
}

// ---------------------------------------------------------------- reductions

void test_reduction(Ctx& c, CollOp op, const std::string& algo, size_t bytes, int root, const TypeCase& tc, bool ip,
                    bool consistent) {
  const MPI_Aint ext = extent_of(tc.type);
  const int count = int(bytes / size_t(size_of(tc.type)));
  const int p = c.p;
  // reduce_scatter_block: count per rank; reduce_scatter: uneven counts.
  std::vector<int> rcounts(static_cast<size_t>(p));
  for (int i = 0; i < p; ++i) rcounts[size_t(i)] = std::max(0, count + (i % 3) - 1);
  int total = op == CollOp::reduce_scatter_block ? count * p
              : op == CollOp::reduce_scatter     ? [&] { int t = 0; for (int x : rcounts) t += x; return t; }()
                                                 : count;
  int out_count = op == CollOp::reduce_scatter_block ? count : op == CollOp::reduce_scatter ? rcounts[size_t(c.rank)] : count;
  std::vector<char> in(size_t(std::max(total, 1)) * size_t(ext)), h_out(in.size() + size_t(ext), char(0x5a)), n_out = h_out;
  fill(in.data(), total, tc, c.rng);
  std::vector<char> h_in = in, n_in = in;
  const bool at_root = op != CollOp::reduce || c.rank == root;
  if (ip && at_root) {  // the input sits in the output buffer
    std::memcpy(h_out.data(), in.data(), size_t(total) * size_t(ext));
    std::memcpy(n_out.data(), in.data(), size_t(total) * size_t(ext));
  }
  const void* hs = ip && at_root ? MPI_IN_PLACE : h_in.data();
  const void* ns = ip && at_root ? MPI_IN_PLACE : n_in.data();
  const char* name = coll_op_name(op);
  if (std::getenv("HETCOLL_TEST_TRACE"))  // which case a crash happened in
    std::fprintf(stderr, "[%d] %s\n", c.rank, label(c, algo, name, bytes, root, tc.name, ip).c_str());
  switch (op) {
    case CollOp::reduce:
      MPI_Reduce(hs, h_out.data(), count, tc.type, tc.op, root, c.comm);
      PMPI_Reduce(ns, n_out.data(), count, tc.type, tc.op, root, c.comm);
      break;
    case CollOp::allreduce:
      MPI_Allreduce(hs, h_out.data(), count, tc.type, tc.op, c.comm);
      PMPI_Allreduce(ns, n_out.data(), count, tc.type, tc.op, c.comm);
      break;
    case CollOp::scan:
      MPI_Scan(hs, h_out.data(), count, tc.type, tc.op, c.comm);
      PMPI_Scan(ns, n_out.data(), count, tc.type, tc.op, c.comm);
      break;
    case CollOp::exscan:
      MPI_Exscan(hs, h_out.data(), count, tc.type, tc.op, c.comm);
      PMPI_Exscan(ns, n_out.data(), count, tc.type, tc.op, c.comm);
      break;
    case CollOp::reduce_scatter_block:
      MPI_Reduce_scatter_block(hs, h_out.data(), count, tc.type, tc.op, c.comm);
      PMPI_Reduce_scatter_block(ns, n_out.data(), count, tc.type, tc.op, c.comm);
      break;
    case CollOp::reduce_scatter:
      MPI_Reduce_scatter(hs, h_out.data(), rcounts.data(), tc.type, tc.op, c.comm);
      PMPI_Reduce_scatter(ns, n_out.data(), rcounts.data(), tc.type, tc.op, c.comm);
      break;
    default:
      break;
  }
  std::string what = label(c, algo, name, bytes, root, tc.name, ip);
  if (count || op == CollOp::reduce_scatter) check_ran(c.comm, algo, what);
  bool significant = (op != CollOp::reduce || c.rank == root) && !(op == CollOp::exscan && c.rank == 0);
  if (significant) report(equal(h_out.data(), n_out.data(), out_count, tc), what);
  // Bytes past the result are untouched (not in place: in place they hold input).
  if (!ip) report(std::memcmp(h_out.data() + size_t(out_count) * size_t(ext), n_out.data() + size_t(out_count) * size_t(ext),
                              h_out.size() - size_t(out_count) * size_t(ext)) == 0, what + " (bytes past the result)");
  // Floating-point allreduce: the same bits everywhere (data types without
  // padding, so that every byte is a result byte).
  if (op == CollOp::allreduce && consistent && count && (tc.kind == TypeCase::Float || tc.kind == TypeCase::Complex) &&
      extent_of(tc.type) == size_of(tc.type)) {
    // x86's long double holds 10 bytes in a 16-byte slot: the other 6 are
    // padding no operation defines (a kernel's store leaves them as they
    // were), so only the value bytes count.
    const size_t value_bytes = tc.type == MPI_LONG_DOUBLE && std::numeric_limits<long double>::digits == 64 ? 10 : size_t(ext);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < size_t(count) * size_t(ext); ++i)
      if (i % size_t(ext) < value_bytes) h = (h ^ uint8_t(h_out[i])) * 1099511628211ull;
    uint64_t lo = h, hi = h;
    PMPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, c.comm);
    PMPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, c.comm);
    report(lo == hi, what + " (identical on all ranks)");
  }
}

// Floating-point allreduce on special values (±0, NaNs of either sign,
// ±inf): every rank must get the same bits whatever order its algorithm
// combines in (the kernels are commutative bit for bit), and the results
// must be what the values say (a NaN where any input is NaN or inf meets
// -inf in a sum; max never below any input).
void test_special_values(Ctx& c, const std::string& algo) {
  const double specials[] = {0.0, -0.0, std::nan(""), -std::nan(""), HUGE_VAL, -HUGE_VAL, 1.0, -1.0};
  const int n = 512;
  std::vector<double> in(n);
  for (int i = 0; i < n; ++i) in[size_t(i)] = specials[(i / (c.rank % 3 + 1) + c.rank * 5 + i) % 8];
  for (MPI_Op op : {MPI_SUM, MPI_MAX, MPI_MIN}) {
    std::vector<double> out(n, 7.0);
    MPI_Allreduce(in.data(), out.data(), n, MPI_DOUBLE, op, c.comm);
    std::string what = label(c, algo, "allreduce", n * 8, 0, op == MPI_SUM ? "special sum" : op == MPI_MAX ? "special max" : "special min", false);
    uint64_t h = 1469598103934665603ull;
    for (double v : out) {
      uint64_t b;
      std::memcpy(&b, &v, 8);
      h = (h ^ b) * 1099511628211ull;
    }
    uint64_t lo = h, hi = h;
    PMPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_UINT64_T, MPI_MIN, c.comm);
    PMPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_UINT64_T, MPI_MAX, c.comm);
    report(lo == hi, what + " (identical on all ranks)");
    // What the values say, element by element (native results as the truth
    // for which elements are NaN).
    std::vector<double> ref(n);
    PMPI_Allreduce(in.data(), ref.data(), n, MPI_DOUBLE, op, c.comm);
    bool ok = true;
    for (int i = 0; i < n; ++i) {
      double v = out[size_t(i)], r = ref[size_t(i)];
      if (op == MPI_SUM) ok &= std::isnan(v) == std::isnan(r) && (std::isnan(v) || v == r);
      else ok &= std::isnan(v) || std::isnan(r) || v == r;  // MPI leaves NaN in min/max unspecified
    }
    report(ok, what);
  }
}

// ---------------------------------------------------------------- data movement

struct DataType {
  MPI_Datatype type;
  const char* name;
};

// Element counts for `bytes` of t (at least one element when bytes > 0).
int elems(size_t bytes, MPI_Datatype t) { return bytes ? int(std::max<size_t>(1, bytes / size_t(size_of(t)))) : 0; }

void fill_bytes(std::vector<char>& v, std::mt19937& rng) {
  for (auto& x : v) x = char(rng());
}

void test_movement(Ctx& c, CollOp op, const std::string& algo, size_t bytes, int root, const DataType& dt, bool ip) {
  const int p = c.p, r = c.rank;
  const MPI_Datatype t = dt.type;
  const MPI_Aint ext = extent_of(t);
  const int n = elems(bytes, t);
  auto sized = [&](size_t elements) { return std::vector<char>(elements * size_t(ext) + 16, char(0x33)); };
  std::string what = label(c, algo, coll_op_name(op), bytes, root, dt.name, ip);
  // v-collectives: uneven counts with zeros, displacements reversed with gaps.
  std::vector<int> counts(static_cast<size_t>(p)), displs(static_cast<size_t>(p));
  int span = 0;
  for (int i = p - 1; i >= 0; --i) {
    counts[size_t(i)] = i % 4 == 3 ? 0 : n + (i % 3);
    displs[size_t(i)] = span + 1;
    span += counts[size_t(i)] + 2;
  }
  span += 1;
  bool ran = true;  // zero-byte calls may skip hetcoll's bookkeeping
  std::vector<char> hs, hr, ns, nr;
  auto prepare = [&](size_t send_elems, size_t recv_elems) {
    hs = sized(send_elems);
    fill_bytes(hs, c.rng);
    ns = hs;
    hr = sized(recv_elems);
    nr = hr;
  };
  switch (op) {
    case CollOp::bcast: {
      prepare(0, size_t(n));
      if (r == root) fill_bytes(hr, c.rng);
      nr = hr;
      MPI_Bcast(hr.data(), n, t, root, c.comm);
      PMPI_Bcast(nr.data(), n, t, root, c.comm);
      ran = n > 0;
      break;
    }
    case CollOp::gather:
    case CollOp::allgather: {
      prepare(size_t(n), size_t(n) * size_t(p));
      const bool in_place = ip && (op == CollOp::allgather || r == root);
      if (in_place) {  // own block already in place
        std::memcpy(hr.data() + size_t(r) * size_t(n) * size_t(ext), hs.data(), size_t(n) * size_t(ext));
        nr = hr;
      }
      const void* h_src = in_place ? MPI_IN_PLACE : hs.data();
      const void* n_src = in_place ? MPI_IN_PLACE : ns.data();
      if (op == CollOp::gather) {
        MPI_Gather(h_src, n, t, hr.data(), n, t, root, c.comm);
        PMPI_Gather(n_src, n, t, nr.data(), n, t, root, c.comm);
      } else {
        MPI_Allgather(h_src, n, t, hr.data(), n, t, c.comm);
        PMPI_Allgather(n_src, n, t, nr.data(), n, t, c.comm);
      }
      ran = n > 0;
      break;
    }
    case CollOp::scatter: {
      prepare(size_t(n) * size_t(p), size_t(n));
      const bool in_place = ip && r == root;
      MPI_Scatter(hs.data(), n, t, in_place ? MPI_IN_PLACE : hr.data(), n, t, root, c.comm);
      PMPI_Scatter(ns.data(), n, t, in_place ? MPI_IN_PLACE : nr.data(), n, t, root, c.comm);
      ran = n > 0;
      break;
    }
    case CollOp::alltoall: {
      prepare(size_t(n) * size_t(p), size_t(n) * size_t(p));
      if (ip) {
        fill_bytes(hr, c.rng);
        nr = hr;
      }
      MPI_Alltoall(ip ? MPI_IN_PLACE : hs.data(), n, t, hr.data(), n, t, c.comm);
      PMPI_Alltoall(ip ? MPI_IN_PLACE : ns.data(), n, t, nr.data(), n, t, c.comm);
      ran = n > 0;
      break;
    }
    case CollOp::gatherv:
    case CollOp::allgatherv: {
      prepare(size_t(counts[size_t(r)]), size_t(span));
      const bool in_place = ip && (op == CollOp::allgatherv || r == root);
      if (in_place) {
        std::memcpy(hr.data() + size_t(displs[size_t(r)]) * size_t(ext), hs.data(), size_t(counts[size_t(r)]) * size_t(ext));
        nr = hr;
      }
      const void* h_src = in_place ? MPI_IN_PLACE : hs.data();
      const void* n_src = in_place ? MPI_IN_PLACE : ns.data();
      if (op == CollOp::gatherv) {
        MPI_Gatherv(h_src, counts[size_t(r)], t, hr.data(), counts.data(), displs.data(), t, root, c.comm);
        PMPI_Gatherv(n_src, counts[size_t(r)], t, nr.data(), counts.data(), displs.data(), t, root, c.comm);
      } else {
        MPI_Allgatherv(h_src, counts[size_t(r)], t, hr.data(), counts.data(), displs.data(), t, c.comm);
        PMPI_Allgatherv(n_src, counts[size_t(r)], t, nr.data(), counts.data(), displs.data(), t, c.comm);
      }
      ran = n > 0;
      break;
    }
    case CollOp::scatterv: {
      prepare(size_t(span), size_t(counts[size_t(r)]));
      const bool in_place = ip && r == root;
      MPI_Scatterv(hs.data(), counts.data(), displs.data(), t, in_place ? MPI_IN_PLACE : hr.data(), counts[size_t(r)], t,
                   root, c.comm);
      PMPI_Scatterv(ns.data(), counts.data(), displs.data(), t, in_place ? MPI_IN_PLACE : nr.data(), counts[size_t(r)], t,
                    root, c.comm);
      ran = n > 0;
      break;
    }
    case CollOp::alltoallv: {
      // f(i, j) elements from i to j, symmetric so in place works too.
      auto f = [&](int i, int j) { return n == 0 ? 0 : (n + i + j) % (n + 2); };
      std::vector<int> sc(static_cast<size_t>(p)), sd(static_cast<size_t>(p)), rc(static_cast<size_t>(p)), rd(static_cast<size_t>(p));
      int s_at = 0, r_at = 0;
      for (int j = 0; j < p; ++j) {
        sc[size_t(j)] = f(r, j);
        sd[size_t(j)] = s_at;
        s_at += sc[size_t(j)] + 1;
      }
      for (int j = p - 1; j >= 0; --j) {  // receive blocks in reverse order
        rc[size_t(j)] = f(j, r);
        rd[size_t(j)] = r_at;
        r_at += rc[size_t(j)] + 1;
      }
      prepare(size_t(s_at), size_t(r_at));
      if (ip) {
        fill_bytes(hr, c.rng);
        nr = hr;
      }
      MPI_Alltoallv(ip ? MPI_IN_PLACE : hs.data(), sc.data(), sd.data(), t, hr.data(), rc.data(), rd.data(), t, c.comm);
      PMPI_Alltoallv(ip ? MPI_IN_PLACE : ns.data(), sc.data(), sd.data(), t, nr.data(), rc.data(), rd.data(), t, c.comm);
      ran = n > 0;
      break;
    }
    default:
      break;
  }
  if (ran) check_ran(c.comm, algo, what);
  bool significant = !((op == CollOp::gather || op == CollOp::gatherv) && r != root);
#ifdef MPICH_VERSION
  // MPICH 4.0.2's MPI_Allgatherv on one rank ignores the displacement (it
  // writes the block at offset 0): the reference is wrong there, not hetcoll.
  if (op == CollOp::allgatherv && p == 1) significant = false;
#endif
  if (significant && hr != nr) {
    size_t at = 0;
    while (at < hr.size() && hr[at] == nr[at]) ++at;
    what += " (first difference at byte " + std::to_string(at) + " of " + std::to_string(hr.size()) + ": " +
            std::to_string(int(static_cast<unsigned char>(hr[at]))) + " vs native " +
            std::to_string(int(static_cast<unsigned char>(nr[at]))) + ")";
  }
  if (significant) report(hr == nr, what);
  report(hs == ns, what + " (send buffer unchanged)");
}

// ---------------------------------------------------------------- driver

std::string runtime_algorithm(CollOp op, const Algorithm& a) {
  // gatherv/scatterv/alltoallv: only the local-count algorithms run (the
  // others need counts ranks do not have); the runtime keeps its default.
  if ((op == CollOp::gatherv || op == CollOp::scatterv || op == CollOp::alltoallv) && !a.local_counts)
    return op == CollOp::gatherv ? "star_gather" : op == CollOp::scatterv ? "star_scatter" : "pairwise_exchange";
  return a.name;
}

bool in_place_applies(CollOp op) { return op != CollOp::bcast && op != CollOp::barrier; }

void run_all(Ctx& c, bool quick) {
  std::vector<size_t> sizes = {0, 1, 3, 1000, 65537, size_t(1) << 20};
  if (quick) sizes = {0, 3, 1000, 65537};
  const auto reds = reduction_cases();
  std::vector<DataType> datas = {{MPI_BYTE, "byte"}, {MPI_INT, "int"}, {MPI_DOUBLE, "double"}};
  MPI_Datatype strided;  // 2 ints out of 3: not contiguous, packed by hetcoll
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  datas.push_back({strided, "strided int pair"});
  size_t rotate = 0;
  for (CollOp op : all_coll_ops()) {
    for (const Algorithm* a : algorithms_for(op)) {
      std::string algo = runtime_algorithm(op, *a);
      if (algo != a->name) continue;  // already covered by the local algorithm's own loop
      std::string rule = std::string(coll_op_name(op)) + ":@" + a->name;
      hetcoll_set_algorithm(rule.c_str());
      if (op == CollOp::barrier) {
        for (int k = 0; k < 3; ++k) MPI_Barrier(c.comm);
        check_ran(c.comm, a->name, label(c, a->name, "barrier", 0, 0, "-", false));
        continue;
      }
      for (size_t bytes : sizes) {
        std::vector<int> roots = has_root(op) ? std::vector<int>{0, c.p - 1, c.p / 2} : std::vector<int>{0};
        if (c.p == 1) roots = {0};
        for (int root : roots)
          for (bool ip : {false, true}) {
            if (ip && !in_place_applies(op)) continue;
            ++rotate;
            if (is_reduction(op)) {
              const TypeCase& tc = reds[rotate % reds.size()];
              // Integer data for the algorithms whose ranks combine in
              // different orders; floating point only where rank-consistent.
              const TypeCase& use = (!a->rank_consistent && tc.kind != TypeCase::Int) ? reds[0] : tc;
              test_reduction(c, op, a->name, bytes, root, use, ip, a->rank_consistent);
              if (op == CollOp::allreduce && a->rank_consistent && bytes == 1000 && !ip) test_special_values(c, a->name);
            } else {
              test_movement(c, op, a->name, bytes, root, datas[rotate % datas.size()], ip);
            }
          }
      }
    }
  }
  hetcoll_set_algorithm("");
  MPI_Type_free(&strided);
}

// One random collective inside user traffic: an Isend to the right and a
// wildcard Irecv posted before, completed and checked after.
void soak(std::vector<Ctx>& comms, long n) {
  const auto reds = reduction_cases();
  const std::vector<DataType> datas = {{MPI_BYTE, "byte"}, {MPI_INT, "int"}, {MPI_DOUBLE, "double"}};
  const std::vector<CollOp> ops = all_coll_ops();
  std::mt19937 pick(99);  // the same choices on every rank
  hetcoll_set_algorithm("");
  for (long it = 0; it < n; ++it) {
    Ctx& c = comms[pick() % comms.size()];
    CollOp op = ops[pick() % ops.size()];
    size_t bytes = pick() % 8 == 0 ? size_t(pick() % 70000) : size_t(pick() % 600);
    int root = int(pick() % unsigned(c.p));
    bool ip = in_place_applies(op) && pick() % 4 == 0;
    const TypeCase& tc = reds[pick() % reds.size()];
    const DataType& dt = datas[pick() % datas.size()];
    long token = it * 1000 + c.rank, got = -1;
    MPI_Request rq[2];
    MPI_Irecv(&got, 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, c.comm, &rq[0]);
    MPI_Isend(&token, 1, MPI_LONG, (c.rank + 1) % c.p, 77, c.comm, &rq[1]);
    if (op == CollOp::barrier) MPI_Barrier(c.comm);
    else if (is_reduction(op)) test_reduction(c, op, "", bytes, root, tc.kind == TypeCase::Int ? tc : reds[0], ip, true);
    else test_movement(c, op, "", bytes, root, dt, ip);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    report(got == it * 1000 + (c.rank - 1 + c.p) % c.p, "user message around a " + std::string(coll_op_name(op)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  bool quick = false;
  long soak_n = 0;
  std::string only;  // --comms: the communicators to test, comma-separated (all when empty)
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--quick") {
      quick = true;
    } else if (arg == "--soak" && i + 1 < argc) {
      soak_n = std::atol(argv[++i]);
    } else if (arg == "--comms" && i + 1 < argc) {
      only = "," + std::string(argv[++i]) + ",";
    } else {
      std::fprintf(stderr, "mpi_collectives: unknown argument '%s' (--quick, --soak N, --comms A,B)\n", argv[i]);
      MPI_Finalize();
      return 2;
    }
  }
  int wr, wp;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &wp);
  world_rank = wr;
  struct Split {
    const char* name;
    int color, key;
  };
  const Split splits[] = {{"world", 0, wr}, {"halves", wr < wp / 2, wr}, {"odd/even", wr % 2, wr}, {"reversed", 0, wp - wr}};
  // --comms names only these communicators: a name that is none of them is refused
  // (a run that tests nothing must not pass).
  for (size_t at = 1; at < only.size();) {
    const size_t end = only.find(',', at);
    const std::string name = only.substr(at, end - at);
    at = end + 1;
    if (std::none_of(std::begin(splits), std::end(splits), [&](const Split& s) { return name == s.name; })) {
      if (wr == 0) std::fprintf(stderr, "mpi_collectives: --comms: no communicator '%s' (world, halves, odd/even, reversed)\n", name.c_str());
      MPI_Finalize();
      return 2;
    }
  }
  std::vector<Ctx> comms;
  for (const Split& s : splits) {
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, s.color, s.key, &comm);
    Ctx c{comm, s.name, 0, 0, std::mt19937(unsigned(1234 + wr))};
    MPI_Comm_rank(comm, &c.rank);
    MPI_Comm_size(comm, &c.p);
    comms.push_back(c);
  }
  if (soak_n) {
    // Communicators every rank belongs to in the same way: world and reversed.
    std::vector<Ctx> both{comms[0], comms[3]};
    soak(both, soak_n);
  } else {
    for (Ctx& c : comms)
      if (only.empty() || only.find("," + c.comm_name + ",") != std::string::npos)
        run_all(c, quick || c.comm_name != "world");
  }
  for (Ctx& c : comms) MPI_Comm_free(&c.comm);
  long totals[2] = {failures, checks};
  PMPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (wr == 0)
    std::printf("mpi_collectives%s p=%d: %ld checks, %ld failures\n", soak_n ? " --soak" : "", wp, totals[1], totals[0]);
  MPI_Finalize();
  return totals[0] ? 1 : 0;
}
