// Reduction kernels for every predefined MPI operation on every predefined
// type it is defined for (MPI-3.1 §5.9.2): inout[i] = inout[i] ⊕ in[i].
//
//   max, min        integers, floating point
//   sum, prod       integers, floating point, complex
//   land, lor, lxor integers, bool
//   band, bor, bxor integers, byte
//   maxloc, minloc  the pair types (value, int): on equal values the smaller
//                   index wins, so both are commutative
//
// No MPI here: the interpose layer maps MPI handles to these enums.
#pragma once
#include <cstddef>
#include <cstdint>

namespace hetcoll {

enum class ReduceOp : uint8_t { max, min, sum, prod, land, lor, lxor, band, bor, bxor, maxloc, minloc };
constexpr int kNumReduceOps = 12;

enum class ElemType : uint8_t {
  i8, u8, i16, u16, i32, u32, i64, u64,  // C integers (char, short, int, long, long long, fixed width)
  f32, f64, f80,                         // float, double, long double
  c32, c64, c80,                         // float/double/long double complex
  boolean,                               // C _Bool / C++ bool
  byte,                                  // MPI_BYTE: bitwise ops only
  float_int, double_int, long_int, int_int, short_int, long_double_int,  // MINLOC/MAXLOC pairs
};
constexpr int kNumElemTypes = 22;

using ReduceFn = void (*)(void* inout, const void* in, size_t n);

// nullptr when MPI does not define the operation on the type.
ReduceFn reduce_kernel(ReduceOp op, ElemType type);
// Size of one element (the extent: pair types include their padding).
size_t elem_bytes(ElemType type);
// Pair types whose elements have holes (MPI_DOUBLE_INT: a double and an
// int, 12 bytes of data in 16) are reduced as dense records — the data
// bytes only, value then index — so that no byte outside the type map is
// ever written. dense_bytes is the record's size (elem_bytes for types
// without holes); to_dense / from_dense convert n elements, from_dense
// writing the data bytes only.
size_t dense_bytes(ElemType type);
ReduceFn dense_reduce_kernel(ReduceOp op, ElemType type);
void to_dense(ElemType type, const void* elements, void* records, size_t n);
void from_dense(ElemType type, const void* records, void* elements, size_t n);

// Does combining in any order give the same bits? (integers, bool, byte
// and pairs of integers: yes; floating point: no.)
bool order_free(ReduceOp op, ElemType type);

const char* reduce_op_name(ReduceOp op);
const char* elem_type_name(ElemType type);

}  // namespace hetcoll
