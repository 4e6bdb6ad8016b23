#include "interpose/mpi_types.hpp"

#include <atomic>
#include <utility>

#include "util/error.hpp"

namespace hetcoll::mpi {

std::optional<ReduceOp> reduce_op_of(MPI_Op op) {
  static const std::pair<MPI_Op, ReduceOp> table[] = {
      {MPI_MAX, ReduceOp::max},   {MPI_MIN, ReduceOp::min},   {MPI_SUM, ReduceOp::sum},
      {MPI_PROD, ReduceOp::prod}, {MPI_LAND, ReduceOp::land}, {MPI_LOR, ReduceOp::lor},
      {MPI_LXOR, ReduceOp::lxor}, {MPI_BAND, ReduceOp::band}, {MPI_BOR, ReduceOp::bor},
      {MPI_BXOR, ReduceOp::bxor}, {MPI_MAXLOC, ReduceOp::maxloc}, {MPI_MINLOC, ReduceOp::minloc},
  };
  for (auto& e : table)
    if (e.first == op) return e.second;
  return std::nullopt;
}

namespace {
template <class T>
ElemType int_type() {
  constexpr bool s = std::is_signed<T>::value;
  switch (sizeof(T)) {
    case 1: return s ? ElemType::i8 : ElemType::u8;
    case 2: return s ? ElemType::i16 : ElemType::u16;
    case 4: return s ? ElemType::i32 : ElemType::u32;
    default: return s ? ElemType::i64 : ElemType::u64;
  }
}
}  // namespace

std::optional<ElemType> elem_type_of(MPI_Datatype t) {
  if (t == MPI_DATATYPE_NULL) return std::nullopt;
  // Built on first use, inside MPI (handles may be run-time values); the
  // common types first.
  static const std::pair<MPI_Datatype, ElemType> table[] = {
    {MPI_DOUBLE, ElemType::f64},
    {MPI_FLOAT, ElemType::f32},
    {MPI_INT, int_type<int>()},
    {MPI_LONG, int_type<long>()},
    {MPI_SIGNED_CHAR, int_type<signed char>()},
    {MPI_UNSIGNED_CHAR, int_type<unsigned char>()},
    {MPI_SHORT, int_type<short>()},
    {MPI_UNSIGNED_SHORT, int_type<unsigned short>()},
    {MPI_UNSIGNED, int_type<unsigned>()},
    {MPI_UNSIGNED_LONG, int_type<unsigned long>()},
    {MPI_LONG_LONG_INT, int_type<long long>()},
    {MPI_LONG_LONG, int_type<long long>()},
    {MPI_UNSIGNED_LONG_LONG, int_type<unsigned long long>()},
    {MPI_INT8_T, ElemType::i8},
    {MPI_UINT8_T, ElemType::u8},
    {MPI_INT16_T, ElemType::i16},
    {MPI_UINT16_T, ElemType::u16},
    {MPI_INT32_T, ElemType::i32},
    {MPI_UINT32_T, ElemType::u32},
    {MPI_INT64_T, ElemType::i64},
    {MPI_UINT64_T, ElemType::u64},
    {MPI_AINT, int_type<MPI_Aint>()},
    {MPI_OFFSET, int_type<MPI_Offset>()},
    {MPI_COUNT, int_type<MPI_Count>()},
    {MPI_LONG_DOUBLE, ElemType::f80},
    {MPI_C_COMPLEX, ElemType::c32},
    {MPI_C_FLOAT_COMPLEX, ElemType::c32},
    {MPI_C_DOUBLE_COMPLEX, ElemType::c64},
    {MPI_C_LONG_DOUBLE_COMPLEX, ElemType::c80},
    {MPI_C_BOOL, ElemType::boolean},
    {MPI_BYTE, ElemType::byte},
    {MPI_FLOAT_INT, ElemType::float_int},
    {MPI_DOUBLE_INT, ElemType::double_int},
    {MPI_LONG_INT, ElemType::long_int},
    {MPI_2INT, ElemType::int_int},
    {MPI_SHORT_INT, ElemType::short_int},
    {MPI_LONG_DOUBLE_INT, ElemType::long_double_int},
    {MPI_INTEGER, ElemType::i32},
    {MPI_REAL, ElemType::f32},
    {MPI_DOUBLE_PRECISION, ElemType::f64},
    {MPI_COMPLEX, ElemType::c32},
    {MPI_DOUBLE_COMPLEX, ElemType::c64},
  };
  constexpr size_t n = sizeof(table) / sizeof(table[0]);
  // Whether each type's extent is that of the C type it stands for, checked
  // on first use (predefined handles never change): 0 unknown, 1 yes, 2 no.
  // A Fortran type whose size differs from the C one (e.g.
  // -fdefault-integer-8) is left to the native library.
  static std::atomic<int8_t> usable[n];
  for (size_t i = 0; i < n; ++i) {
    if (table[i].first != t) continue;
    int8_t u = usable[i].load(std::memory_order_relaxed);
    if (u == 0) {
      int size = 0;
      MPI_Aint lb = 0, extent = 0;
      bool ok = PMPI_Type_size(t, &size) == MPI_SUCCESS && PMPI_Type_get_extent(t, &lb, &extent) == MPI_SUCCESS &&
                size_t(extent) == elem_bytes(table[i].second);
      u = ok ? 1 : 2;
      usable[i].store(u, std::memory_order_relaxed);
    }
    return u == 1 ? std::optional<ElemType>(table[i].second) : std::nullopt;
  }
  return std::nullopt;
}

TypeLayout layout_of(MPI_Datatype t) {
  TypeLayout l;
  int size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  if (PMPI_Type_size(t, &size) != MPI_SUCCESS || PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
      PMPI_Type_get_true_extent(t, &tlb, &textent) != MPI_SUCCESS)
    throw ScheduleError("cannot query a datatype");
  l.size = size_t(size);
  l.extent = extent;
  l.contiguous = lb == 0 && tlb == 0 && MPI_Aint(size) == extent && textent == extent;
  return l;
}

}  // namespace hetcoll::mpi
