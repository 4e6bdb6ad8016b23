#include "model/profile_fields.hpp"

#include <cstdio>
#include <cstdlib>

namespace hetcoll::profile_io {

ojson measure_json(const Measure& m) {
  ojson o;
  o["min"] = m.min;
  o["median"] = m.median;
  return o;
}

double short6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::strtod(buf, nullptr);
}

ojson fit_json(const PostalFit& f) {
  ojson o;
  o["t0"] = f.t0;
  o["lambda"] = f.lambda;
  o["r2"] = f.r2;
  return o;
}

PostalFit read_fit(const Reader& r) {
  PostalFit f;
  f.t0 = r.at("t0").num(-kMaxSeconds, kMaxSeconds);
  f.lambda = r.at("lambda").num(-1e9, 1e9);
  f.r2 = r.at("r2").num(-1e9, 1e9);
  return f;
}

namespace {
// Bounds from what was read before.
double last_host(const Profile& p) { return double(p.hosts.size()) - 1; }
double host_count(const Profile& p) { return double(p.hosts.size()); }
double last_subnet(const Profile& p) { return double(p.subnet_count) - 1; }

}  // namespace

const std::vector<Field<Profile>>& measured_fields() {  // "measured", before its "phases"
  static const std::vector<Field<Profile>> f = {
      text("created", &Profile::created, 1024),       text("tool", &Profile::tool, 1024),
      text("mpi", &Profile::mpi, 4096),               text("mode", &Profile::mode, 1024),
      whole("ranks", &Profile::ranks, 1, double(kMaxProfileRanks)),
      whole("repeats", &Profile::repeats, 0, 1 << 20),
      real("budget_s", &Profile::budget, 0, 1e9),     real("seconds", &Profile::seconds, 0, 1e9),
      flag("budget_exhausted", &Profile::budget_exhausted),
      // Absent in profiles no `hetcoll correct` wrote: as measured.
      text("corrected", &Profile::corrected, 4096, true)};
  return f;
}
const std::vector<Field<Profile>>& message_fields() {  // "measured", after its "phases"
  static const std::vector<Field<Profile>> f = {big("small_bytes", &Profile::small_bytes, 0, double(int64_t(1) << 40)),
                                                big("large_bytes", &Profile::large_bytes, 1, double(int64_t(1) << 40))};
  return f;
}
const std::vector<Field<HostProfile>>& host_fields() {  // after "name" and "ranks"
  static const std::vector<Field<HostProfile>> f = {
      whole("subnet", &HostProfile::subnet, 0, 0, last_host),
      measure("Sc", &HostProfile::Sc, kMaxSeconds),   real("Sm", &HostProfile::Sm, 0, kMaxPerByte),
      measure("Rc", &HostProfile::Rc, kMaxSeconds),   real("Rm", &HostProfile::Rm, 0, kMaxPerByte),
      real("gamma", &HostProfile::gamma, 0, kMaxPerByte), real("copy", &HostProfile::copy, 0, kMaxPerByte),
      // Absent in profiles written before the probe measured them: not measured.
      real("nic_up", &HostProfile::nic_up, 0, kMaxBandwidth, true),
      real("nic_down", &HostProfile::nic_down, 0, kMaxBandwidth, true)};
  return f;
}
const std::vector<Field<Profile>>& subnet_fields() {
  static const std::vector<Field<Profile>> f = {real("threshold", &Profile::subnet_threshold, 0, 10),
                                                whole("count", &Profile::subnet_count, 1, 0, host_count),
                                                real("gap", &Profile::subnet_gap, 0, 1e12)};
  return f;
}
const std::vector<Field<Profile::Backplane>>& backplane_fields() {
  using B = Profile::Backplane;
  static const std::vector<Field<B>> f = {whole("flows", &B::flows, 1, 0, host_count),
                                          real("aggregate", &B::aggregate, 0, kMaxBandwidth),
                                          real("expected", &B::expected, 0, kMaxBandwidth),
                                          real("bandwidth", &B::bandwidth, 0, kMaxBandwidth)};
  return f;
}
const std::vector<Field<Profile::Sharing>>& sharing_fields() {
  using X = Profile::Sharing;
  static const std::vector<Field<X>> f = {whole("measured", &X::measured, 0, 1),
                                          whole("receiver", &X::receiver, -1, 0, last_host),
                                          whole("near", &X::near, -1, 0, last_host),
                                          whole("far", &X::far, -1, 0, last_host),
                                          real("near_latency", &X::near_latency, 0, kMaxSeconds),
                                          real("far_latency", &X::far_latency, 0, kMaxSeconds),
                                          real("near_alone", &X::near_alone, 0, kMaxBandwidth),
                                          real("far_alone", &X::far_alone, 0, kMaxBandwidth),
                                          real("far_shared", &X::far_shared, 0, kMaxBandwidth)};
  return f;
}
const std::vector<Field<PairClass>>& class_fields() {
  static const std::vector<Field<PairClass>> f = {
      text("name", &PairClass::name, 256),
      whole("a", &PairClass::a, -1, 0, last_subnet),
      whole("b", &PairClass::b, -1, 0, last_subnet),
      whole("pairs", &PairClass::pairs, 0, double(int64_t(kMaxProfileRanks) * int64_t(kMaxProfileRanks))),
      real("latency", &PairClass::latency, 0, kMaxSeconds),
      real("bandwidth", &PairClass::bandwidth, 1e-300, kMaxBandwidth),
      real("bandwidth_alone", &PairClass::bandwidth_alone, 0, kMaxBandwidth),
      real("slowdown", &PairClass::slowdown, 0, 1e9),
      // Absent in profiles written before the probe measured them: not measured.
      real("bandwidth_both_ways", &PairClass::bandwidth_both_ways, 0, kMaxBandwidth, true),
      real("bandwidth_same_pair", &PairClass::bandwidth_same_pair, 0, kMaxBandwidth, true),
      real("alpha", &PairClass::alpha, 0, kMaxSeconds),
      real("beta", &PairClass::beta, 0, kMaxPerByte),
      real("Xc", &PairClass::Xc, 0, kMaxSeconds),
      real("Xm", &PairClass::Xm, 0, kMaxPerByte)};
  return f;
}
const std::vector<Field<ReduceRate>>& reduction_fields() {
  static const std::vector<Field<ReduceRate>> f = {text("op", &ReduceRate::op, 32), text("type", &ReduceRate::type, 32),
                                                   measure("gamma", &ReduceRate::gamma, kMaxPerByte)};
  return f;
}
const std::vector<Field<TunedEntry>>& tuned_entry_fields() {  // before "times"
  static const std::vector<Field<TunedEntry>> f = {
      text("op", &TunedEntry::op, 64),
      big("bytes", &TunedEntry::bytes, 0, double(int64_t(1) << 62)),
      whole("class_lo", &TunedEntry::class_lo, 0, 1 << 10),
      whole("class_hi", &TunedEntry::class_hi, 0, 1 << 10),
      text("winner", &TunedEntry::winner, 256),
      // Absent in profiles tuned before it was recorded: Fig. 2.
      text("timing", &TunedEntry::timing, 64, true)};
  return f;
}

const std::vector<Field<LinkProfile>>& link_fields() {
  static const std::vector<Field<LinkProfile>> f = {real("bandwidth", &LinkProfile::bandwidth, 0, kMaxBandwidth),
                                                    real("latency", &LinkProfile::latency, 0, kMaxSeconds),
                                                    text("how", &LinkProfile::how, 512, true)};
  return f;
}

}  // namespace hetcoll::profile_io
