#include "interpose/mpi_types.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <mutex>
#include <utility>
#include <vector>

#include "exec/mpi_transport.hpp"
#include "interpose/errors.hpp"
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

namespace {

// Is the type map of `t`, read in order, [0, size) once each? (Bounds are
// checked by the caller.) Decoded with MPI_Type_get_envelope/contents;
// combiners it does not know (subarray, darray, ...) answer no, which
// only costs a pack.
bool in_order(MPI_Datatype t, int depth);

struct Contents {
  std::vector<int> ints;
  std::vector<MPI_Aint> addrs;
  std::vector<MPI_Datatype> types;
  ~Contents() {
    for (MPI_Datatype& d : types) {
      int ni, na, nd, comb;
      if (PMPI_Type_get_envelope(d, &ni, &na, &nd, &comb) == MPI_SUCCESS && comb != MPI_COMBINER_NAMED)
        PMPI_Type_free(&d);
    }
  }
};

bool sizes_of(MPI_Datatype t, MPI_Count& size, MPI_Aint& lb, MPI_Aint& extent) {
  return PMPI_Type_size_x(t, &size) == MPI_SUCCESS && PMPI_Type_get_extent(t, &lb, &extent) == MPI_SUCCESS;
}

// `count` blocks of `len` elements of `child`, block i at byte disp(i):
// in order when the child is and each block starts where the last ended.
template <class Disp>
bool blocks_in_order(MPI_Datatype child, int count, const int* lens, Disp disp, int depth) {
  MPI_Count csize;
  MPI_Aint clb, cext;
  if (!sizes_of(child, csize, clb, cext)) return false;
  if (csize == 0) return true;
  // The child must itself be contiguous for blocks of several elements.
  if (!in_order(child, depth + 1) || clb != 0 || MPI_Aint(csize) != cext) return false;
  MPI_Aint at = 0;
  for (int i = 0; i < count; ++i) {
    if (lens[i] == 0) continue;
    if (lens[i] < 0 || disp(i) != at) return false;
    at += MPI_Aint(lens[i]) * cext;
  }
  return true;
}

bool in_order(MPI_Datatype t, int depth) {
  if (depth > 64) return false;
  int ni = 0, na = 0, nd = 0, comb = 0;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) return false;
  if (comb == MPI_COMBINER_NAMED) {
    MPI_Count size;
    MPI_Aint lb, ext, tlb, text;
    return sizes_of(t, size, lb, ext) && PMPI_Type_get_true_extent(t, &tlb, &text) == MPI_SUCCESS && tlb == 0 &&
           MPI_Aint(size) == text;
  }
  Contents c;
  c.ints.resize(size_t(ni));
  c.addrs.resize(size_t(na));
  c.types.resize(size_t(nd));
  if (PMPI_Type_get_contents(t, ni, na, nd, c.ints.data(), c.addrs.data(), c.types.data()) != MPI_SUCCESS) {
    c.types.clear();
    return false;
  }
  const int* I = c.ints.data();
  const MPI_Aint* A = c.addrs.data();
  switch (comb) {
    case MPI_COMBINER_DUP:
      return in_order(c.types[0], depth + 1);
    case MPI_COMBINER_CONTIGUOUS: {
      int len = I[0];
      return blocks_in_order(c.types[0], 1, &len, [](int) { return MPI_Aint(0); }, depth);
    }
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      const int count = I[0], len = I[1];
      MPI_Count cs;
      MPI_Aint clb, cext;
      if (!sizes_of(c.types[0], cs, clb, cext)) return false;
      const MPI_Aint stride = comb == MPI_COMBINER_VECTOR ? MPI_Aint(I[2]) * cext : A[0];
      std::vector<int> lens(size_t(std::max(count, 0)), len);
      return count >= 0 &&
             blocks_in_order(c.types[0], count, lens.data(), [&](int i) { return MPI_Aint(i) * stride; }, depth);
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED: {
      const int count = I[0];
      MPI_Count cs;
      MPI_Aint clb, cext;
      if (!sizes_of(c.types[0], cs, clb, cext)) return false;
      if (comb == MPI_COMBINER_INDEXED)
        return blocks_in_order(c.types[0], count, I + 1, [&](int i) { return MPI_Aint(I[1 + count + i]) * cext; }, depth);
      return blocks_in_order(c.types[0], count, I + 1, [&](int i) { return A[i]; }, depth);
    }
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK: {
      const int count = I[0];
      MPI_Count cs;
      MPI_Aint clb, cext;
      if (count < 0 || !sizes_of(c.types[0], cs, clb, cext)) return false;
      std::vector<int> lens(size_t(count), I[1]);
      if (comb == MPI_COMBINER_INDEXED_BLOCK)
        return blocks_in_order(c.types[0], count, lens.data(), [&](int i) { return MPI_Aint(I[2 + i]) * cext; }, depth);
      return blocks_in_order(c.types[0], count, lens.data(), [&](int i) { return A[i]; }, depth);
    }
    case MPI_COMBINER_STRUCT: {
      const int count = I[0];
      MPI_Aint at = 0;
      for (int i = 0; i < count; ++i) {
        int len = I[1 + i];
        MPI_Count cs;
        MPI_Aint clb, cext;
        if (!sizes_of(c.types[size_t(i)], cs, clb, cext)) return false;
        if (len == 0 || cs == 0) continue;
        if (len < 0 || A[i] != at) return false;
        if (!blocks_in_order(c.types[size_t(i)], 1, &len, [](int) { return MPI_Aint(0); }, depth)) return false;
        at += MPI_Aint(len) * cext;
      }
      return true;
    }
    case MPI_COMBINER_RESIZED:
      // The bounds are the caller's to check; the data is the child's.
      return in_order(c.types[0], depth + 1);
    default:
      return false;
  }
}

TypeLayout compute_layout(MPI_Datatype t) {
  TypeLayout l;
  MPI_Count size = 0;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  check_mpi(PMPI_Type_size_x(t, &size), "MPI_Type_size_x");
  check_mpi(PMPI_Type_get_extent(t, &lb, &extent), "MPI_Type_get_extent");
  check_mpi(PMPI_Type_get_true_extent(t, &tlb, &textent), "MPI_Type_get_true_extent");
  if (size < 0 || size == MPI_UNDEFINED) throw MpiError(MPI_ERR_TYPE, "a datatype of undefined size");
  l.size = uint64_t(size);
  l.extent = extent;
  l.contiguous = lb == 0 && tlb == 0 && MPI_Aint(size) == extent && textent == extent && in_order(t, 0);
  return l;
}

int delete_layout(MPI_Datatype, int, void* value, void*) {
  delete static_cast<TypeLayout*>(value);
  return MPI_SUCCESS;
}

// MPI_Type_dup copies the layout: a duplicate has the same type map (the
// copies a collective in flight holds, hold_type, need no second look).
int copy_layout(MPI_Datatype, int, void*, void* value, void* copy, int* flag) {
  *flag = 0;
  auto* l = new (std::nothrow) TypeLayout(*static_cast<TypeLayout*>(value));
  if (!l) return MPI_SUCCESS;  // not copied: computed again when asked
  *static_cast<void**>(copy) = l;
  *flag = 1;
  return MPI_SUCCESS;
}

int layout_keyval() {
  static int key = [] {
    int k = MPI_KEYVAL_INVALID;
    if (PMPI_Type_create_keyval(copy_layout, delete_layout, &k, nullptr) != MPI_SUCCESS)
      k = MPI_KEYVAL_INVALID;
    return k;
  }();
  return key;
}

// Predefined handles never change: remember their layouts by handle.
struct NamedCache {
  static constexpr int kSlots = 64;
  std::atomic<MPI_Datatype> type[kSlots];
  TypeLayout layout[kSlots];
  std::atomic<int> used{0};
  std::mutex mu;
};
NamedCache& named_cache() {
  static NamedCache* c = new NamedCache;  // lives until exit
  return *c;
}
}  // namespace

// A private MPI_COMM_SELF: hetcoll's messages to itself never meet the user's.
MPI_Comm private_self() {
  static MPI_Comm self = [] {
    MPI_Comm c = MPI_COMM_NULL;
    check_mpi(PMPI_Comm_dup(MPI_COMM_SELF, &c), "MPI_Comm_dup(MPI_COMM_SELF)");
    check_mpi(PMPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    return c;
  }();
  return self;
}

bool predefined_type(MPI_Datatype t) {
  NamedCache& nc = named_cache();
  const int used = nc.used.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i)
    if (nc.type[i].load(std::memory_order_relaxed) == t) return true;
  int ni, na, nd, comb;
  check_mpi(PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb), "MPI_Type_get_envelope");
  return comb == MPI_COMBINER_NAMED;
}

MPI_Datatype hold_type(MPI_Datatype t) {
#ifdef HETCOLL_SMPI
  // SimGrid 3.32's MPI_Type_dup of a vector packs garbage (docs/smpi.md):
  // there the application's handle is used as it is.
  return t;
#endif
  if (predefined_type(t)) return t;
  MPI_Datatype copy = MPI_DATATYPE_NULL;
  check_mpi(PMPI_Type_dup(t, &copy), "MPI_Type_dup (holding a datatype for a collective in flight)");
  return copy;
}

void release_type(MPI_Datatype held) {
  if (held != MPI_DATATYPE_NULL) PMPI_Type_free(&held);
}

TypeLayout layout_of(MPI_Datatype t) {
  NamedCache& nc = named_cache();
  const int used = nc.used.load(std::memory_order_acquire);
  for (int i = 0; i < used; ++i)
    if (nc.type[i].load(std::memory_order_relaxed) == t) return nc.layout[i];
  int ni, na, nd, comb;
  check_mpi(PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb), "MPI_Type_get_envelope");
  if (comb == MPI_COMBINER_NAMED) {
    TypeLayout l = compute_layout(t);
    std::lock_guard<std::mutex> lock(nc.mu);
    int n = nc.used.load(std::memory_order_relaxed);
    if (n < NamedCache::kSlots) {
      nc.layout[n] = l;
      nc.type[n].store(t, std::memory_order_relaxed);
      nc.used.store(n + 1, std::memory_order_release);
    }
    return l;
  }
  const int key = layout_keyval();
  void* value = nullptr;
  int flag = 0;
  if (key != MPI_KEYVAL_INVALID) {
    check_mpi(PMPI_Type_get_attr(t, key, &value, &flag), "MPI_Type_get_attr");
    if (flag) return *static_cast<TypeLayout*>(value);
  }
  // Not seen yet (the layout is cached once the type is known to be
  // committed): an uncommitted type is the user's error, as the native
  // library says (MPI_Pack of nothing checks it).
  char byte = 0;
  int pos = 0;
  if (PMPI_Pack(&byte, 0, t, &byte, 1, &pos, private_self()) != MPI_SUCCESS)
    throw UserError(MPI_ERR_TYPE, "a datatype that is not committed");
  if (key == MPI_KEYVAL_INVALID) return compute_layout(t);
  auto l = std::make_unique<TypeLayout>(compute_layout(t));
  TypeLayout copy = *l;
  if (PMPI_Type_set_attr(t, key, l.get()) == MPI_SUCCESS) l.release();
  return copy;
}

namespace {
// Elements of a type larger than MPI_Pack's int can hold move as one
// message to this rank itself, received as plain bytes.
MPI_Datatype byte_block_type(uint64_t bytes) {
  constexpr uint64_t kGiB = uint64_t(1) << 30;
  MPI_Datatype gib, whole, rest, out;
  check_mpi(PMPI_Type_contiguous(int(kGiB), MPI_BYTE, &gib), "MPI_Type_contiguous");
  check_mpi(PMPI_Type_contiguous(int(bytes / kGiB), gib, &whole), "MPI_Type_contiguous");
  PMPI_Type_free(&gib);
  if (bytes % kGiB == 0) {
    out = whole;
  } else {
    check_mpi(PMPI_Type_contiguous(int(bytes % kGiB), MPI_BYTE, &rest), "MPI_Type_contiguous");
    int lens[2] = {1, 1};
    MPI_Aint disp[2] = {0, MPI_Aint(bytes / kGiB * kGiB)};
    MPI_Datatype types[2] = {whole, rest};
    check_mpi(PMPI_Type_create_struct(2, lens, disp, types, &out), "MPI_Type_create_struct");
    PMPI_Type_free(&whole);
    PMPI_Type_free(&rest);
  }
  check_mpi(PMPI_Type_commit(&out), "MPI_Type_commit");
  return out;
}

void self_copy(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
               MPI_Comm self) {
  // A tag of its own, so that two threads packing at once never swap messages.
  static std::atomic<unsigned> next{0};
  const int tag = int(next.fetch_add(1, std::memory_order_relaxed) % 32767u);
  check_mpi(PMPI_Sendrecv(sbuf, scount, stype, 0, tag, rbuf, rcount, rtype, 0, tag, self, MPI_STATUS_IGNORE),
            "MPI_Sendrecv (packing an element over 2 GiB)");
}

constexpr uint64_t kPackChunk = uint64_t(1) << 30;  // bytes per MPI_Pack call, < INT_MAX
// Elements per MPI_Pack/MPI_Unpack call. SimGrid 3.32 packs and unpacks the
// second and later elements of nested vector types at wrong places (count 2
// of hvector(4,1,8, vector(4,1,4,double)) starts the second element 56 bytes
// in, not 128), so under SMPI each element is its own call.
uint64_t elements_per_call(uint64_t size) {
#ifdef HETCOLL_SMPI
  (void)size;
  return 1;
#else
  return kPackChunk / size;
#endif
}
}  // namespace

void pack(const void* buf, uint64_t count, MPI_Datatype type, const TypeLayout& l, char* bytes) {
  MPI_Comm self = private_self();
  if (count == 0 || l.size == 0) return;
  if (l.contiguous) {
    std::memcpy(bytes, buf, count * l.size);
    return;
  }
  const char* at = static_cast<const char*>(buf);
  if (l.size > kPackChunk) {
    MPI_Datatype block = byte_block_type(l.size);
    for (uint64_t i = 0; i < count; ++i, at += l.extent, bytes += l.size) self_copy(at, 1, type, bytes, 1, block, self);
    PMPI_Type_free(&block);
    return;
  }
  const uint64_t per = elements_per_call(l.size);
  for (uint64_t done = 0; done < count;) {
    const uint64_t n = std::min(per, count - done);
    int pos = 0;
    check_mpi(PMPI_Pack(at, int(n), type, bytes, int(n * l.size), &pos, self), "MPI_Pack");
    at += MPI_Aint(n) * l.extent;
    bytes += n * l.size;
    done += n;
  }
}

void unpack(const char* bytes, uint64_t count, MPI_Datatype type, const TypeLayout& l, void* buf) {
  MPI_Comm self = private_self();
  if (count == 0 || l.size == 0) return;
  if (l.contiguous) {
    std::memcpy(buf, bytes, count * l.size);
    return;
  }
  char* at = static_cast<char*>(buf);
  if (l.size > kPackChunk) {
    MPI_Datatype block = byte_block_type(l.size);
    for (uint64_t i = 0; i < count; ++i, at += l.extent, bytes += l.size) self_copy(bytes, 1, block, at, 1, type, self);
    PMPI_Type_free(&block);
    return;
  }
  const uint64_t per = elements_per_call(l.size);
  for (uint64_t done = 0; done < count;) {
    const uint64_t n = std::min(per, count - done);
    int pos = 0;
    check_mpi(PMPI_Unpack(bytes, int(n * l.size), &pos, at, int(n), type, self), "MPI_Unpack");
    at += MPI_Aint(n) * l.extent;
    bytes += n * l.size;
    done += n;
  }
}

}  // namespace hetcoll::mpi
