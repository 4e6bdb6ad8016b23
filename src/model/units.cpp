#include "model/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "util/error.hpp"

namespace hetcoll {

namespace {
// Splits "20us" into 20 and "us"; throws if there is no leading number.
double leading_number(const std::string& text, std::string& suffix, const char* what) {
  const char* s = text.c_str();
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    throw InputError(cat("'", text, "' is not a valid ", what));
  suffix = end;
  if (!std::isfinite(v)) throw InputError(cat("'", text, "' is not a finite ", what));
  return v;
}
}  // namespace

double parse_number(const std::string& text) {
  std::string suffix;
  double v = leading_number(text, suffix, "number");
  if (!suffix.empty()) throw InputError(cat("'", text, "' is not a number"));
  return v;
}

double parse_duration(const std::string& text) {
  std::string suffix;
  double v = leading_number(text, suffix, "duration");
  if (suffix.empty() || suffix == "s") return v;
  if (suffix == "ms") return v * 1e-3;
  if (suffix == "us" || suffix == "µs") return v * 1e-6;
  if (suffix == "ns") return v * 1e-9;
  if (suffix == "ps") return v * 1e-12;
  throw InputError(cat("'", text, "': unknown time unit '", suffix, "' (use s, ms, us, ns, ps)"));
}

uint64_t parse_bytes(const std::string& text) {
  std::string suffix;
  const double v = leading_number(text, suffix, "size (use e.g. 4096, 64k, 1M)");
  for (auto& ch : suffix) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  double mult = 0;
  if (suffix.empty() || suffix == "b") mult = 1;
  else if (suffix == "k" || suffix == "kb" || suffix == "kib") mult = 1024.0;
  else if (suffix == "m" || suffix == "mb" || suffix == "mib") mult = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gb" || suffix == "gib") mult = 1024.0 * 1024 * 1024;
  else throw InputError(cat("'", text, "': unknown size suffix '", suffix, "' (use k, M, G)"));
  const double b = v * mult;
  if (b > 9.0e18) throw InputError(cat("'", text, "' is more than hetcoll plans for (9e18 bytes)"));
  if (b < 0 || b != std::floor(b)) throw InputError(cat("'", text, "' is not a whole, non-negative number of bytes"));
  return static_cast<uint64_t>(b);
}

std::string format_time(double s) {
  const double a = std::fabs(s);
  if (!(a > 0)) return a == 0 ? "0 s" : "nan";
  char buf[48];
  static const struct {
    const char* name;
    double f;
  } kUnits[] = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}};
  if (a >= 999.5) {  // "1234 s", not "1.23e+03 s"
    std::snprintf(buf, sizeof buf, "%.0f s", s);
    return buf;
  }
  for (const auto& u : kUnits)
    if (a >= u.f * 0.9995) {  // 999.7 us is "1 ms", not "1e+03 us"
      std::snprintf(buf, sizeof buf, "%.3g %s", s / u.f, u.name);
      return buf;
    }
  std::snprintf(buf, sizeof buf, "%.3g ns", s * 1e9);
  return buf;
}

std::string format_bytes(uint64_t b) {
  if (b >= (uint64_t(1) << 30) && b % (uint64_t(1) << 30) == 0) return cat(b >> 30, " GiB");
  if (b >= (uint64_t(1) << 20) && b % (uint64_t(1) << 20) == 0) return cat(b >> 20, " MiB");
  if (b >= 1024 && b % 1024 == 0) return cat(b >> 10, " KiB");
  return cat(b, " B");
}

uint64_t parse_size_in(const std::string& text, const std::string& what, uint64_t lo, uint64_t hi, uint64_t multiple) {
  auto refuse = [&] {
    return InputError(cat(what, " '", text, "': a size from ", format_bytes(lo), " to ", format_bytes(hi),
                          multiple > 1 ? cat(", a multiple of ", multiple, " B") : std::string(), " (e.g. 64k, 1M)"));
  };
  uint64_t b = 0;
  try {
    b = parse_bytes(text);
  } catch (const InputError&) {
    throw refuse();
  }
  if (b < lo || b > hi || (multiple > 1 && b % multiple)) throw refuse();
  return b;
}

double parse_bandwidth(const std::string& text) {
  std::string suffix;
  double v = leading_number(text, suffix, "bandwidth");
  double mult;
  if (suffix == "B/s" || suffix.empty()) mult = 1;
  else if (suffix == "kB/s" || suffix == "KB/s") mult = 1e3;
  else if (suffix == "MB/s") mult = 1e6;
  else if (suffix == "GB/s") mult = 1e9;
  else if (suffix == "Gbit/s" || suffix == "Gb/s") mult = 1e9 / 8;
  else if (suffix == "Mbit/s" || suffix == "Mb/s") mult = 1e6 / 8;
  else throw InputError(cat("'", text, "': unknown bandwidth unit '", suffix, "' (use B/s, MB/s, GB/s, Gbit/s)"));
  if (v <= 0) throw InputError(cat("bandwidth '", text, "' must be positive"));
  return v * mult;
}

}  // namespace hetcoll
