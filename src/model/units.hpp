// Parsing of numbers with units in model specs: durations ("20us", "1.5ms",
// "2e-6" seconds), sizes ("64k", "1M", "4096"), bandwidths ("10GB/s").
#pragma once
#include <cstdint>
#include <string>

namespace hetcoll {

double parse_number(const std::string& text);      // plain real number
double parse_duration(const std::string& text);    // seconds
// The one size grammar (model specs, algorithm parameters, the CLI through
// the bindings, the programs): a number and k, M or G (= 1024, 1024^2,
// 1024^3; any case, also kB/KiB, MB/MiB, GB/GiB), or B or nothing.
uint64_t parse_bytes(const std::string& text);
// parse_bytes within [lo, hi] and a multiple of `multiple`, else one
// InputError: "WHAT 'TEXT': a size from LO to HI, a multiple of M B (e.g. …)".
uint64_t parse_size_in(const std::string& text, const std::string& what, uint64_t lo, uint64_t hi,
                       uint64_t multiple = 1);
std::string format_bytes(uint64_t bytes);          // "64 KiB", "1 MiB", "12 B"
// A time as hetcoll writes one, everywhere: three significant digits and a
// unit ("64.8 us", "1.96 ms", "0 s").
std::string format_time(double seconds);
double parse_bandwidth(const std::string& text);   // bytes per second

}  // namespace hetcoll
