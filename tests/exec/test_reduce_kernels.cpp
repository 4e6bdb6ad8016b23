// Reduction kernels: defined exactly where MPI defines them, with the
// results MPI specifies (including MINLOC/MAXLOC ties and complex products).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <vector>
#include <cstring>

#include "exec/reduce_kernels.hpp"

using namespace hetcoll;

namespace {
bool is_int(ElemType t) { return int(t) <= int(ElemType::u64); }
bool is_float(ElemType t) { return t == ElemType::f32 || t == ElemType::f64 || t == ElemType::f80; }
bool is_complex(ElemType t) { return t == ElemType::c32 || t == ElemType::c64 || t == ElemType::c80; }
bool is_pair(ElemType t) { return int(t) >= int(ElemType::float_int); }
}  // namespace

TEST(ReduceKernels, DefinedExactlyWhereMpiDefinesThem) {
  for (int ti = 0; ti < kNumElemTypes; ++ti)
    for (int oi = 0; oi < kNumReduceOps; ++oi) {
      auto t = ElemType(ti);
      auto o = ReduceOp(oi);
      bool expected;
      switch (o) {
        case ReduceOp::max: case ReduceOp::min: expected = is_int(t) || is_float(t); break;
        case ReduceOp::sum: case ReduceOp::prod: expected = is_int(t) || is_float(t) || is_complex(t); break;
        case ReduceOp::land: case ReduceOp::lor: case ReduceOp::lxor: expected = is_int(t) || t == ElemType::boolean; break;
        case ReduceOp::band: case ReduceOp::bor: case ReduceOp::bxor: expected = is_int(t) || t == ElemType::byte; break;
        case ReduceOp::maxloc: case ReduceOp::minloc: expected = is_pair(t); break;
        default: expected = false;
      }
      EXPECT_EQ(reduce_kernel(o, t) != nullptr, expected) << reduce_op_name(o) << " on " << elem_type_name(t);
    }
}

TEST(ReduceKernels, IntegerResults) {
  int32_t a[5] = {1, -7, 12, 0, 2147483647}, b[5] = {3, 4, 12, -1, 1};
  auto run = [&](ReduceOp o) {
    int32_t x[5];
    std::memcpy(x, a, sizeof x);
    reduce_kernel(o, ElemType::i32)(x, b, 5);
    return std::vector<int32_t>(x, x + 5);
  };
  EXPECT_EQ(run(ReduceOp::sum), (std::vector<int32_t>{4, -3, 24, -1, int32_t(0x80000000u)}));
  EXPECT_EQ(run(ReduceOp::prod), (std::vector<int32_t>{3, -28, 144, 0, 2147483647}));
  EXPECT_EQ(run(ReduceOp::max), (std::vector<int32_t>{3, 4, 12, 0, 2147483647}));
  EXPECT_EQ(run(ReduceOp::min), (std::vector<int32_t>{1, -7, 12, -1, 1}));
  EXPECT_EQ(run(ReduceOp::land), (std::vector<int32_t>{1, 1, 1, 0, 1}));
  EXPECT_EQ(run(ReduceOp::lor), (std::vector<int32_t>{1, 1, 1, 1, 1}));
  EXPECT_EQ(run(ReduceOp::lxor), (std::vector<int32_t>{0, 0, 0, 1, 0}));
  EXPECT_EQ(run(ReduceOp::band), (std::vector<int32_t>{1 & 3, -7 & 4, 12, 0, 1}));
  EXPECT_EQ(run(ReduceOp::bor), (std::vector<int32_t>{3, -7 | 4, 12, -1, 2147483647}));
  EXPECT_EQ(run(ReduceOp::bxor), (std::vector<int32_t>{2, -7 ^ 4, 0, -1, 2147483646}));
}

TEST(ReduceKernels, LocationPairsPreferTheSmallerIndexOnTies) {
  struct DI { double v; int i; };
  DI x[3] = {{1.5, 4}, {2.0, 9}, {-3.0, 2}}, y[3] = {{1.5, 2}, {1.0, 1}, {-3.0, 7}};
  EXPECT_EQ(sizeof(DI), elem_bytes(ElemType::double_int));
  DI a[3];
  std::memcpy(a, x, sizeof a);
  reduce_kernel(ReduceOp::minloc, ElemType::double_int)(a, y, 3);
  EXPECT_EQ(a[0].i, 2);
  EXPECT_EQ(a[1].v, 1.0);
  EXPECT_EQ(a[1].i, 1);
  EXPECT_EQ(a[2].i, 2);
  std::memcpy(a, x, sizeof a);
  reduce_kernel(ReduceOp::maxloc, ElemType::double_int)(a, y, 3);
  EXPECT_EQ(a[0].i, 2);
  EXPECT_EQ(a[1].v, 2.0);
  EXPECT_EQ(a[1].i, 9);
  EXPECT_EQ(a[2].i, 2);
}

TEST(ReduceKernels, ComplexAndFloat) {
  std::complex<double> a[2] = {{1, 2}, {0, 1}}, b[2] = {{3, -1}, {0, 1}};
  reduce_kernel(ReduceOp::prod, ElemType::c64)(a, b, 2);
  EXPECT_EQ(a[0], std::complex<double>(5, 5));
  EXPECT_EQ(a[1], std::complex<double>(-1, 0));
  float f[2] = {1.5f, -2.0f}, g[2] = {0.25f, -3.0f};
  reduce_kernel(ReduceOp::sum, ElemType::f32)(f, g, 2);
  EXPECT_EQ(f[0], 1.75f);
  EXPECT_EQ(f[1], -5.0f);
  bool p[3] = {true, false, true}, q[3] = {true, true, false};
  reduce_kernel(ReduceOp::lxor, ElemType::boolean)(p, q, 3);
  EXPECT_EQ(std::vector<bool>(p, p + 3), (std::vector<bool>{false, true, true}));
}

TEST(ReduceKernels, OrderFreedom) {
  EXPECT_TRUE(order_free(ReduceOp::sum, ElemType::i64));
  EXPECT_TRUE(order_free(ReduceOp::bxor, ElemType::byte));
  EXPECT_FALSE(order_free(ReduceOp::sum, ElemType::f64));
  EXPECT_FALSE(order_free(ReduceOp::prod, ElemType::c32));
}

// a⊕b and b⊕a give the same bits for every op on every type, special
// floating-point values included (±0, NaNs with different payloads, ±inf,
// ties of MINLOC/MAXLOC): ranks that combine the same two values in either
// order agree, which rank-consistent allreduce relies on.
namespace {
template <class T>
std::vector<T> specials() {
  T nan1 = std::numeric_limits<T>::quiet_NaN(), nan2 = -std::numeric_limits<T>::quiet_NaN();
  return {T(0), -T(0), nan1, nan2, std::numeric_limits<T>::infinity(), -std::numeric_limits<T>::infinity(), T(1), T(-1), T(2.5)};
}

// Every ordered pair of values: returns (a, b) as arrays of all pairs.
template <class T>
void all_pairs(const std::vector<T>& v, std::vector<T>& a, std::vector<T>& b) {
  for (const T& x : v)
    for (const T& y : v) {
      a.push_back(x);
      b.push_back(y);
    }
}

// Compares the value bytes (long double has padding the kernels never write).
template <class T>
bool same_bits(const T& x, const T& y, size_t bytes = sizeof(T)) {
  return std::memcmp(&x, &y, bytes) == 0;
}

template <class T>
void check_commutative(ElemType t, size_t value_bytes) {
  std::vector<T> a, b;
  all_pairs(specials<T>(), a, b);
  for (int oi = 0; oi < kNumReduceOps; ++oi) {
    ReduceFn k = reduce_kernel(ReduceOp(oi), t);
    if (!k) continue;
    std::vector<T> ab = a, ba = b;
    k(ab.data(), b.data(), ab.size());
    k(ba.data(), a.data(), ba.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_TRUE(same_bits(ab[i], ba[i], value_bytes))
          << reduce_op_name(ReduceOp(oi)) << " on " << elem_type_name(t) << ": " << a[i] << " and " << b[i];
  }
}

template <class V>
struct LocPair {
  V value;
  int index;
};

template <class V>
void check_location_commutative(ElemType t, size_t value_bytes) {
  std::vector<LocPair<V>> a, b;
  auto vals = specials<V>();
  for (size_t i = 0; i < vals.size(); ++i)
    for (size_t j = 0; j < vals.size(); ++j)
      for (int xi : {3, 7}) {
        a.push_back({vals[i], xi});
        b.push_back({vals[j], 5});
      }
  for (ReduceOp op : {ReduceOp::maxloc, ReduceOp::minloc}) {
    std::vector<LocPair<V>> ab = a, ba = b;
    reduce_kernel(op, t)(ab.data(), b.data(), ab.size());
    reduce_kernel(op, t)(ba.data(), a.data(), ba.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_TRUE(same_bits(ab[i].value, ba[i].value, value_bytes) && ab[i].index == ba[i].index)
          << reduce_op_name(op) << " on " << elem_type_name(t) << ": (" << a[i].value << "," << a[i].index << ") and ("
          << b[i].value << "," << b[i].index << ")";
    }
  }
}
}  // namespace

TEST(ReduceKernels, CommutativeBitForBitIncludingSpecialValues) {
  check_commutative<float>(ElemType::f32, sizeof(float));
  check_commutative<double>(ElemType::f64, sizeof(double));
  check_commutative<long double>(ElemType::f80, std::numeric_limits<long double>::digits == 64 ? 10 : sizeof(long double));
  check_location_commutative<float>(ElemType::float_int, sizeof(float));
  check_location_commutative<double>(ElemType::double_int, sizeof(double));
  // Spot checks of the chosen values: max(+0,-0) = +0, min = -0, NaN wins.
  double x[2] = {0.0, -0.0}, y[2] = {-0.0, std::numeric_limits<double>::quiet_NaN()};
  reduce_kernel(ReduceOp::max, ElemType::f64)(x, y, 2);
  EXPECT_FALSE(std::signbit(x[0]));
  EXPECT_TRUE(std::isnan(x[1]));
  double u[1] = {0.0}, v[1] = {-0.0};
  reduce_kernel(ReduceOp::min, ElemType::f64)(u, v, 1);
  EXPECT_TRUE(std::signbit(u[0]));
}

// Pair types with holes reduce as dense records: the dense kernel on the
// packed data gives, unpacked, the values of the ordinary kernel, and the
// holes of the elements unpacked into are not touched.
TEST(ReduceKernels, DenseRecordsOfPairsWithHoles) {
  struct DI {
    double v;
    int i;
  };
  static_assert(sizeof(DI) == 16, "double_int has a 4-byte hole");
  EXPECT_EQ(dense_bytes(ElemType::double_int), 12u);
  EXPECT_EQ(dense_bytes(ElemType::short_int), sizeof(short) + sizeof(int));
  EXPECT_EQ(dense_bytes(ElemType::int_int), elem_bytes(ElemType::int_int));  // no hole
  const int n = 9;
  std::vector<DI> a(n), b(n);
  for (int k = 0; k < n; ++k) {
    a[size_t(k)] = {double(k % 3), k};
    b[size_t(k)] = {double((k * 2) % 4), 10 - k};
  }
  for (ReduceOp op : {ReduceOp::maxloc, ReduceOp::minloc}) {
    std::vector<DI> expect = a;
    reduce_kernel(op, ElemType::double_int)(expect.data(), b.data(), n);
    std::vector<unsigned char> da(size_t(n) * 12), db(size_t(n) * 12);
    to_dense(ElemType::double_int, a.data(), da.data(), n);
    to_dense(ElemType::double_int, b.data(), db.data(), n);
    dense_reduce_kernel(op, ElemType::double_int)(da.data(), db.data(), n);
    std::vector<unsigned char> out(size_t(n) * sizeof(DI), 0xab);
    from_dense(ElemType::double_int, da.data(), out.data(), n);
    for (int k = 0; k < n; ++k) {
      DI got;
      std::memcpy(&got.v, &out[size_t(k) * 16], 8);
      std::memcpy(&got.i, &out[size_t(k) * 16 + 8], 4);
      EXPECT_EQ(got.v, expect[size_t(k)].v);
      EXPECT_EQ(got.i, expect[size_t(k)].i);
      for (int h = 12; h < 16; ++h) EXPECT_EQ(out[size_t(k) * 16 + size_t(h)], 0xab) << "hole byte " << h;
    }
  }
}
