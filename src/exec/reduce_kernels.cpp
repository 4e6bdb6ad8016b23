#include "exec/reduce_kernels.hpp"

#include <algorithm>
#include <complex>
#include <type_traits>

namespace hetcoll {

namespace {

template <class V>
struct Pair {
  V value;
  int index;
};

// One elementwise loop per (type, operation).
template <class T, class F>
void apply(void* inout, const void* in, size_t n, F f) {
  T* a = static_cast<T*>(inout);
  const T* b = static_cast<const T*>(in);
  for (size_t i = 0; i < n; ++i) a[i] = f(a[i], b[i]);
}

template <class T>
ReduceFn arithmetic(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return T(x + y); }); };
    case ReduceOp::prod: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return T(x * y); }); };
    default: return nullptr;
  }
}

template <class T>
ReduceFn ordered(ReduceOp op) {
  switch (op) {
    case ReduceOp::max: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return x < y ? y : x; }); };
    case ReduceOp::min: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return y < x ? y : x; }); };
    default: return arithmetic<T>(op);
  }
}

template <class T>
ReduceFn logical(ReduceOp op) {
  switch (op) {
    case ReduceOp::land: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return T(x && y); }); };
    case ReduceOp::lor: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return T(x || y); }); };
    case ReduceOp::lxor: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return T(!x != !y); }); };
    default: return nullptr;
  }
}

template <class T>
ReduceFn bitwise(ReduceOp op) {
  switch (op) {
    case ReduceOp::band: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return T(x & y); }); };
    case ReduceOp::bor: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return T(x | y); }); };
    case ReduceOp::bxor: return [](void* a, const void* b, size_t n) { apply<T>(a, b, n, [](T x, T y) { return T(x ^ y); }); };
    default: return nullptr;
  }
}

template <class T>
ReduceFn integer(ReduceOp op) {
  if (ReduceFn f = ordered<T>(op)) return f;
  if (ReduceFn f = logical<T>(op)) return f;
  return bitwise<T>(op);
}

template <class V>
ReduceFn location(ReduceOp op) {
  using P = Pair<V>;
  switch (op) {
    case ReduceOp::maxloc:
      return [](void* a, const void* b, size_t n) {
        apply<P>(a, b, n, [](P x, P y) {
          if (x.value < y.value) return y;
          if (y.value < x.value) return x;
          return P{x.value, std::min(x.index, y.index)};
        });
      };
    case ReduceOp::minloc:
      return [](void* a, const void* b, size_t n) {
        apply<P>(a, b, n, [](P x, P y) {
          if (y.value < x.value) return y;
          if (x.value < y.value) return x;
          return P{x.value, std::min(x.index, y.index)};
        });
      };
    default:
      return nullptr;
  }
}

}  // namespace

ReduceFn reduce_kernel(ReduceOp op, ElemType type) {
  switch (type) {
    case ElemType::i8: return integer<int8_t>(op);
    case ElemType::u8: return integer<uint8_t>(op);
    case ElemType::i16: return integer<int16_t>(op);
    case ElemType::u16: return integer<uint16_t>(op);
    case ElemType::i32: return integer<int32_t>(op);
    case ElemType::u32: return integer<uint32_t>(op);
    case ElemType::i64: return integer<int64_t>(op);
    case ElemType::u64: return integer<uint64_t>(op);
    case ElemType::f32: return ordered<float>(op);
    case ElemType::f64: return ordered<double>(op);
    case ElemType::f80: return ordered<long double>(op);
    case ElemType::c32: return arithmetic<std::complex<float>>(op);
    case ElemType::c64: return arithmetic<std::complex<double>>(op);
    case ElemType::c80: return arithmetic<std::complex<long double>>(op);
    case ElemType::boolean: return logical<bool>(op);
    case ElemType::byte: return bitwise<uint8_t>(op);
    case ElemType::float_int: return location<float>(op);
    case ElemType::double_int: return location<double>(op);
    case ElemType::long_int: return location<long>(op);
    case ElemType::int_int: return location<int>(op);
    case ElemType::short_int: return location<short>(op);
    case ElemType::long_double_int: return location<long double>(op);
  }
  return nullptr;
}

size_t elem_bytes(ElemType type) {
  switch (type) {
    case ElemType::i8: case ElemType::u8: case ElemType::byte: return 1;
    case ElemType::i16: case ElemType::u16: return 2;
    case ElemType::i32: case ElemType::u32: case ElemType::f32: return 4;
    case ElemType::i64: case ElemType::u64: case ElemType::f64: return 8;
    case ElemType::f80: return sizeof(long double);
    case ElemType::c32: return sizeof(std::complex<float>);
    case ElemType::c64: return sizeof(std::complex<double>);
    case ElemType::c80: return sizeof(std::complex<long double>);
    case ElemType::boolean: return sizeof(bool);
    case ElemType::float_int: return sizeof(Pair<float>);
    case ElemType::double_int: return sizeof(Pair<double>);
    case ElemType::long_int: return sizeof(Pair<long>);
    case ElemType::int_int: return sizeof(Pair<int>);
    case ElemType::short_int: return sizeof(Pair<short>);
    case ElemType::long_double_int: return sizeof(Pair<long double>);
  }
  return 0;
}

bool order_free(ReduceOp op, ElemType type) {
  switch (type) {
    case ElemType::f32: case ElemType::f64: case ElemType::f80:
    case ElemType::c32: case ElemType::c64: case ElemType::c80:
      return false;
    case ElemType::float_int: case ElemType::double_int: case ElemType::long_double_int:
      // Comparisons only: any order picks the same element, NaN aside.
      return false;
    default:
      (void)op;
      return true;
  }
}

const char* reduce_op_name(ReduceOp op) {
  static const char* const names[] = {"max", "min", "sum", "prod", "land", "lor",
                                      "lxor", "band", "bor", "bxor", "maxloc", "minloc"};
  return names[int(op)];
}

const char* elem_type_name(ElemType type) {
  static const char* const names[] = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                                      "float", "double", "long double", "float complex", "double complex",
                                      "long double complex", "bool", "byte", "float_int", "double_int", "long_int",
                                      "2int", "short_int", "long_double_int"};
  return names[int(type)];
}

}  // namespace hetcoll
