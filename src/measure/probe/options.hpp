// hetcoll-probe's command line: its options (Options) and parse_args, which
// ends the program itself on --help and on a bad option (program_args.hpp).
#pragma once
#include <cstdint>
#include <string>

#include "model/subnets.hpp"

namespace hetcoll::probe {

struct Options {
  std::string out = "hetcoll-profile.json";
  double budget = 0;  // s, 0: none
  bool sequential = false;
  int repeats = 5;
  double threshold = kEcoThreshold;
  uint64_t small = 8, large = uint64_t(256) << 10;
  int lambda_k = 4;
  uint64_t lambda_max = uint64_t(4) << 20;
  bool lambda = true;
  bool progress = true;
  std::string topology;  // --topology FILE (topology.conf's form), empty: none
  std::string command;
};

// The options of argv (every rank parses its own copy; only rank 0 prints).
Options parse_args(int argc, char** argv);

}  // namespace hetcoll::probe
