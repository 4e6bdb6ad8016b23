// hetcoll-probe's command line: parse_args and the checks of its values.
#include "measure/probe/options.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "measure/probe/exchange.hpp"
#include "measure/program_args.hpp"

namespace hetcoll::probe {

namespace {

[[noreturn]] void usage_error(const std::string& msg) { program::fail(msg); }

double parse_seconds(const std::string& v) {
  char* end = nullptr;
  double x = std::strtod(v.c_str(), &end);
  std::string unit = end ? end : "";
  if (unit == "m" || unit == "min") x *= 60;
  else if (unit == "ms") x *= 1e-3;
  else if (!unit.empty() && unit != "s") usage_error("--budget '" + v + "': a number of seconds (60, 60s, 2m)");
  if (!(x >= 0) || !std::isfinite(x)) usage_error("--budget '" + v + "' is not a duration");
  return x;
}

}  // namespace

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) usage_error(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-o" || a == "--output") o.out = value(i);
    else if (a == "--budget") o.budget = parse_seconds(value(i));
    else if (a == "--sequential") o.sequential = true;
    else if (a == "--repeats") {
      o.repeats = program::parse_int(value(i), "--repeats", 1, 1000);
    } else if (a == "--threshold") {
      o.threshold = program::parse_real(value(i), "--threshold", 0, 10, "0 to 10 (ECO: 0.2)");
    } else if (a == "--large") {
      o.large = program::parse_size(value(i), "--large", uint64_t(1) << 30, 1024);  // the bandwidth is timed on it
    } else if (a == "--lambda-max") o.lambda_max = program::parse_size(value(i), "--lambda-max", uint64_t(1) << 30);
    else if (a == "--lambda-k") {
      o.lambda_k = program::parse_int(value(i), "--lambda-k", 2, 64);
    } else if (a == "--no-lambda") o.lambda = false;
    else if (a == "--no-progress") o.progress = false;
    else if (a == "--topology") o.topology = value(i);
    else if (a == "-h" || a == "--help") {
      if (g_rank == 0)
        std::printf("usage: hetcoll-probe [-o FILE] [--budget 60s] [--sequential] [--repeats N] [--threshold 0.2]\n"
                    "                     [--large 256k] [--lambda-k 4] [--lambda-max 4M] [--no-lambda] [--no-progress]\n"
                    "                     [--topology FILE] [--check]\n");
      program::done();
    } else if (a == "--check") {
    } else usage_error("unknown argument '" + a + "' (--help lists them)");
  }
  return o;
}

}  // namespace hetcoll::probe
