// FNV-1a, 64 bits: the digest of a text or a byte string, the same on every
// machine (profile contents, configuration fingerprints, host names).
#pragma once
#include <cstdint>
#include <string_view>

namespace hetcoll {

constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

inline uint64_t fnv1a(std::string_view bytes, uint64_t h = kFnvOffset) {
  for (unsigned char c : bytes) h = (h ^ c) * kFnvPrime;
  return h;
}

// A 64-bit value folded into a digest, byte by byte (little end first).
inline uint64_t fnv1a_u64(uint64_t x, uint64_t h = kFnvOffset) {
  for (int k = 0; k < 8; ++k) h = (h ^ ((x >> (8 * k)) & 0xff)) * kFnvPrime;
  return h;
}

}  // namespace hetcoll
