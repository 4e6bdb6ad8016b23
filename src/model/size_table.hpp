// A parameter that depends on the message size: piecewise-linear between the
// given (bytes, value) points, constant beyond the first and last point.
// Bruck et al. §2.2 measure λ(m) this way (Fig. 3).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "util/json.hpp"

namespace hetcoll {

class SizeTable {
 public:
  SizeTable() = default;
  explicit SizeTable(double constant) : points_{{0, constant}} {}
  explicit SizeTable(std::vector<std::pair<uint64_t, double>> points);

  double at(uint64_t bytes) const;
  bool constant() const { return points_.size() == 1; }
  const std::vector<std::pair<uint64_t, double>>& points() const { return points_; }

  // "1.8" or "0:1.2;512:1.8;16384:1.05" (sizes accept k/M/G suffixes);
  // `scale` converts each value (e.g. a duration parser).
  static SizeTable parse(const std::string& text, double (*value)(const std::string&));
  std::string str() const;
  json::Value to_json() const;
  static SizeTable from_json(const json::Value& v, const char* what);

 private:
  std::vector<std::pair<uint64_t, double>> points_;
};

}  // namespace hetcoll
