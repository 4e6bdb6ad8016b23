#include "model/size_table.hpp"

#include <algorithm>
#include <sstream>

#include "model/units.hpp"
#include "util/error.hpp"

namespace hetcoll {

SizeTable::SizeTable(std::vector<std::pair<uint64_t, double>> points) : points_(std::move(points)) {
  if (points_.empty()) throw InputError("a size table needs at least one point");
  std::sort(points_.begin(), points_.end());
  for (size_t i = 1; i < points_.size(); ++i)
    if (points_[i].first == points_[i - 1].first)
      throw InputError(cat("size table lists ", points_[i].first, " bytes twice"));
}

double SizeTable::at(uint64_t bytes) const {
  if (bytes <= points_.front().first) return points_.front().second;
  if (bytes >= points_.back().first) return points_.back().second;
  auto hi = std::upper_bound(points_.begin(), points_.end(), bytes,
                             [](uint64_t b, const std::pair<uint64_t, double>& p) { return b < p.first; });
  auto lo = hi - 1;
  double f = double(bytes - lo->first) / double(hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

SizeTable SizeTable::parse(const std::string& text, double (*value)(const std::string&)) {
  if (text.find(':') == std::string::npos) return SizeTable(value(text));
  std::vector<std::pair<uint64_t, double>> pts;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ';')) {
    auto colon = item.find(':');
    if (colon == std::string::npos)
      throw InputError(cat("size table entry '", item, "' is not BYTES:VALUE"));
    pts.emplace_back(parse_bytes(item.substr(0, colon)), value(item.substr(colon + 1)));
  }
  return SizeTable(std::move(pts));
}

std::string SizeTable::str() const {
  std::ostringstream os;
  os.precision(12);
  if (constant()) { os << points_[0].second; return os.str(); }
  for (size_t i = 0; i < points_.size(); ++i) {
    if (i) os << ';';
    os << points_[i].first << ':' << points_[i].second;
  }
  return os.str();
}

json::Value SizeTable::to_json() const {
  if (constant()) return json::Value(points_[0].second);
  json::Value arr = json::Value::array();
  for (auto& p : points_) {
    json::Value pt = json::Value::array();
    pt.push_back(json::Value(p.first));
    pt.push_back(json::Value(p.second));
    arr.push_back(pt);
  }
  return arr;
}

SizeTable SizeTable::from_json(const json::Value& v, const char* what) {
  if (v.is_number()) return SizeTable(json::as_double(v, what));
  std::vector<std::pair<uint64_t, double>> pts;
  for (auto& p : json::as_array(v, what)) {
    if (!p.is_array() || p.size() != 2) throw InputError(cat(what, ": each point is [bytes, value]"));
    pts.emplace_back(json::as_uint(p[0], what), json::as_double(p[1], what));
  }
  return SizeTable(std::move(pts));
}

}  // namespace hetcoll
