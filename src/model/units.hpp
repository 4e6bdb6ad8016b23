// Parsing of numbers with units in model specs: durations ("20us", "1.5ms",
// "2e-6" seconds), sizes ("64k", "1M", "4096"), bandwidths ("10GB/s").
#pragma once
#include <cstdint>
#include <string>

namespace hetcoll {

double parse_number(const std::string& text);      // plain real number
double parse_duration(const std::string& text);    // seconds
uint64_t parse_bytes(const std::string& text);     // k = 1024, M = 1024^2, G = 1024^3
double parse_bandwidth(const std::string& text);   // bytes per second
std::string format_duration(double seconds);       // "20us", "1.5ms"

}  // namespace hetcoll
