// How a profile's fields are read and written (model/profile.hpp): the
// Reader (typed access with the field's path in every message), and the
// tables of fields — each field once, with its key, member, kind and the
// range a reader accepts — that the writer (profile_writer.cpp) and the reader
// (profile_reader.cpp) both go through. A field is added in one line of its
// table (profile_fields.cpp; docs/architecture.md: a profile field).
// Internal to model/.
#pragma once
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/profile.hpp"
#include "util/error.hpp"
#include "util/json_document.hpp"

namespace hetcoll::profile_io {

using ojson = nlohmann::ordered_json;

// Typed access with the path of the field in every message. The path is
// built only for a message: a reader knows its parent (alive while it is:
// readers are locals and temporaries of the reading functions) and its key
// or index — a 10 000-host profile reads a million fields.
struct Reader {
  json::Node j;
  std::string name;                // a root's path
  const Reader* parent = nullptr;  // else: the parent's, then
  const char* key = nullptr;       // ".key", or
  size_t index = 0;                // "[index]"

  Reader(json::Node v, std::string root) : j(v), name(std::move(root)) {}
  Reader(json::Node v, const Reader* up, const char* k, size_t i) : j(v), parent(up), key(k), index(i) {}

  std::string path() const {
    if (!parent) return name;
    return key ? cat(parent->path(), ".", key) : cat(parent->path(), "[", index, "]");
  }
  Reader at(const char* k) const {
    if (!j.is_object()) throw InputError(cat("profile: ", path(), " is not an object"));
    const json::Node v = j.find(k);
    if (!v.found()) throw InputError(cat("profile: ", path(), " has no \"", k, "\""));
    return Reader(v, this, k, 0);
  }
  bool has(const char* key) const { return j.is_object() && j.find(key).found(); }
  Reader operator[](size_t i) const { return Reader(j[i], this, nullptr, i); }
  size_t size(size_t limit) const {
    if (!j.is_array()) throw InputError(cat("profile: ", path(), " is not an array"));
    if (j.size() > limit) throw InputError(cat("profile: ", path(), " has ", j.size(), " entries (at most ", limit, ")"));
    return j.size();
  }
  double num(double lo = 0, double hi = 1e300) const {
    if (!j.is_number()) throw InputError(cat("profile: ", path(), " is not a number"));
    double v = j.number();
    if (!std::isfinite(v) || v < lo || v > hi)
      throw InputError(cat("profile: ", path(), " = ", v, " is outside [", lo, ", ", hi, "]"));
    return v;
  }
  int64_t integer(int64_t lo, int64_t hi) const {
    if (!j.is_whole()) throw InputError(cat("profile: ", path(), " is not a whole number"));
    int64_t v = j.is_unsigned() ? int64_t(std::min<uint64_t>(j.unsigned_value(), uint64_t(INT64_MAX))) : j.integer();
    if (v < lo || v > hi) throw InputError(cat("profile: ", path(), " = ", v, " is outside [", lo, ", ", hi, "]"));
    return v;
  }
  std::string str(size_t max_len = 1024) const {
    if (!j.is_string()) throw InputError(cat("profile: ", path(), " is not a string"));
    const std::string_view s = j.string();
    if (s.size() > max_len) throw InputError(cat("profile: ", path(), " is longer than ", max_len, " characters"));
    return std::string(s);
  }
  bool boolean() const {
    if (!j.is_boolean()) throw InputError(cat("profile: ", path(), " is not true or false"));
    return j.boolean();
  }
  Measure measure(double hi = 1e6) const { return {at("min").num(0, hi), at("median").num(0, hi)}; }
};

// Times are at most a day, rates at most 1 s per byte, bandwidths positive.
constexpr double kMaxSeconds = 86400, kMaxPerByte = 1, kMaxBandwidth = 1e15;

ojson measure_json(const Measure& m);
// Six significant digits: what the measurements carry, and a third of the file.
double short6(double v);
ojson fit_json(const PostalFit& f);
PostalFit read_fit(const Reader& r);

// The profile's fields, described once: each with its key, where it lives,
// its kind and the range a reader accepts (a bound that depends on what was
// read before — the hosts, the subnets — as a function of the profile).
// write_fields and read_fields go through the same tables, so a field is
// added in one line (docs/architecture.md: a profile field).
template <class T>
struct Field {
  const char* key;
  double T::*real = nullptr;
  int T::*whole = nullptr;
  uint64_t T::*big = nullptr;
  std::string T::*text = nullptr;
  bool T::*flag = nullptr;
  Measure T::*measure = nullptr;
  double lo = 0, hi = 0;                          // numbers: the range; text: the longest
  double (*hi_of)(const Profile&) = nullptr;      // the range's top, from what was read before
  bool optional = false;                          // absent in profiles older than it: left as it is
};
template <class T>
Field<T> real(const char* key, double T::*m, double lo, double hi, bool optional = false) {
  Field<T> f{key};
  f.real = m, f.lo = lo, f.hi = hi, f.optional = optional;
  return f;
}
template <class T>
Field<T> whole(const char* key, int T::*m, double lo, double hi, double (*hi_of)(const Profile&) = nullptr,
               bool optional = false) {
  Field<T> f{key};
  f.whole = m, f.lo = lo, f.hi = hi, f.hi_of = hi_of, f.optional = optional;
  return f;
}
template <class T>
Field<T> big(const char* key, uint64_t T::*m, double lo, double hi, bool optional = false) {
  Field<T> f{key};
  f.big = m, f.lo = lo, f.hi = hi, f.optional = optional;
  return f;
}
template <class T>
Field<T> text(const char* key, std::string T::*m, size_t longest, bool optional = false) {
  Field<T> f{key};
  f.text = m, f.hi = double(longest), f.optional = optional;
  return f;
}
template <class T>
Field<T> flag(const char* key, bool T::*m, bool optional = false) {
  Field<T> f{key};
  f.flag = m, f.optional = optional;
  return f;
}
template <class T>
Field<T> measure(const char* key, Measure T::*m, double hi) {
  Field<T> f{key};
  f.measure = m, f.hi = hi;
  return f;
}

template <class T>
void write_fields(ojson& o, const T& x, const std::vector<Field<T>>& fields) {
  for (const Field<T>& f : fields) {
    if (f.real) o[f.key] = x.*f.real;
    else if (f.whole) o[f.key] = x.*f.whole;
    else if (f.big) o[f.key] = x.*f.big;
    else if (f.text) o[f.key] = x.*f.text;
    else if (f.flag) o[f.key] = x.*f.flag;
    else o[f.key] = measure_json(x.*f.measure);
  }
}

template <class T>
void read_fields(const Reader& r, T& x, const std::vector<Field<T>>& fields, const Profile& p) {
  for (const Field<T>& f : fields) {
    if (f.optional && !r.has(f.key)) continue;
    const Reader v = r.at(f.key);
    const double hi = f.hi_of ? f.hi_of(p) : f.hi;
    if (f.real) x.*f.real = v.num(f.lo, hi);
    else if (f.whole) x.*f.whole = int(v.integer(int64_t(f.lo), int64_t(hi)));
    else if (f.big) x.*f.big = uint64_t(v.integer(int64_t(f.lo), int64_t(hi)));
    else if (f.text) x.*f.text = v.str(size_t(hi));
    else if (f.flag) x.*f.flag = v.boolean();
    else x.*f.measure = v.measure(hi);
  }
}

// The tables (profile_fields.cpp).
const std::vector<Field<Profile>>& measured_fields();  // "measured", before its "phases"
const std::vector<Field<Profile>>& message_fields();   // "measured", after its "phases"
const std::vector<Field<HostProfile>>& host_fields();  // after "name" and "ranks"
const std::vector<Field<Profile>>& subnet_fields();
const std::vector<Field<Profile::Backplane>>& backplane_fields();
const std::vector<Field<Profile::Sharing>>& sharing_fields();
const std::vector<Field<PairClass>>& class_fields();
const std::vector<Field<ReduceRate>>& reduction_fields();
const std::vector<Field<TunedEntry>>& tuned_entry_fields();  // before "times"
const std::vector<Field<LinkProfile>>& link_fields();

}  // namespace hetcoll::profile_io
