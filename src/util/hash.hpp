// FNV-1a, 64 bits: the digest of a text or a byte string, the same on every
// machine (profile contents, configuration fingerprints, host names).
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>

namespace hetcoll {

constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

inline uint64_t fnv1a(std::string_view bytes, uint64_t h = kFnvOffset) {
  for (unsigned char c : bytes) h = (h ^ c) * kFnvPrime;
  return h;
}

// A value of `bytes` bytes folded into a digest, byte by byte (little end
// first): the same on every machine whatever its byte order.
inline uint64_t fnv1a_word(uint64_t x, int bytes, uint64_t h = kFnvOffset) {
  for (int k = 0; k < bytes; ++k) h = (h ^ ((x >> (8 * k)) & 0xff)) * kFnvPrime;
  return h;
}
inline uint64_t fnv1a_u64(uint64_t x, uint64_t h = kFnvOffset) { return fnv1a_word(x, 8, h); }
inline uint64_t fnv1a_u32(uint32_t x, uint64_t h = kFnvOffset) { return fnv1a_word(x, 4, h); }

// A 64-bit word folded into an in-process key in one step (a cache key
// computed on every call: one multiply a word, not eight; not a digest to
// compare across machines — use fnv1a_u64 for that).
inline uint64_t mix_word(uint64_t h, uint64_t x) { return (h ^ x) * kFnvPrime + (h >> 31); }

// A digest built by parts.
struct Fnv {
  uint64_t h = kFnvOffset;
  void add(std::string_view bytes) { h = fnv1a(bytes, h); }
  void add(uint64_t x) { h = fnv1a_u64(x, h); }
  void add(int64_t x) { h = fnv1a_u64(uint64_t(x), h); }
  void add(double x) {
    uint64_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    h = fnv1a_u64(bits, h);
  }
};

}  // namespace hetcoll
