#include "config/settings.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace hetcoll {

const std::vector<Setting>& settings() {
  static const std::vector<Setting> table = {
      {"HETCOLL_PROFILE", "hockney:alpha=3us,beta=0.1ns,gamma=0.1ns,overlap=0",
       "the machine model: a profile written by 'hetcoll probe' (ranks mapped to its hosts by name; measured "
       "decisions of 'hetcoll tune' included), a spec (see 'hetcoll models') or a JSON model file; the default is "
       "fitted to shared memory (3 us per message, 10 GB/s, receives keep the CPU busy)",
       true},
      {"HETCOLL_ALGO", "",
       "algorithm overrides, e.g. 'bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect' (the grammar in the README)",
       true},
      {"HETCOLL_TABLE", "",
       "a decision table written by 'hetcoll plan --table' for this model: first calls of the classes it covers "
       "cost a lookup instead of planning",
       true},
      {"HETCOLL_DEBUG", "", "'explain': one line on stderr per new decision and per fallback to the native MPI", false},
      {"HETCOLL_DISABLE", "0", "'1': every collective goes to the native MPI", true},
      {"HETCOLL_HANG_TIMEOUT", "120",
       "seconds a collective may wait before hetcoll reports on stderr what it is waiting for (0: never)", false},
  };
  return table;
}

const char* setting_default(const char* name) {
  for (const Setting& s : settings())
    if (std::strcmp(s.name, name) == 0) return s.default_value;
  throw std::logic_error(std::string("undeclared setting ") + name);
}

SettingValue setting(const char* name) {
  for (const Setting& s : settings()) {
    if (std::strcmp(s.name, name) != 0) continue;
    SettingValue v;
    v.value = s.default_value;
    if (const char* env = std::getenv(name)) {
      size_t n = strnlen(env, kMaxSettingLength + 1);
      if (n > kMaxSettingLength) {
        v.problem = std::string(name) + " is longer than " + std::to_string(kMaxSettingLength) + " characters: ignored";
      } else {
        v.value = env;
        v.from_env = true;
      }
    }
    return v;
  }
  throw std::logic_error(std::string("undeclared setting ") + name);
}

namespace {
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}
}  // namespace

std::vector<UnknownSetting> unknown_settings() {
  std::vector<UnknownSetting> out;
  for (char** e = environ; e && *e; ++e) {
    if (std::strncmp(*e, "HETCOLL_", 8) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    std::string name(*e, eq ? size_t(eq - *e) : std::strlen(*e));
    if (name.size() > 256) name = name.substr(0, 256) + "...";
    bool known = false;
    size_t best = SIZE_MAX;
    std::string nearest;
    for (const Setting& s : settings()) {
      if (name == s.name) known = true;
      size_t d = distance(name, s.name);
      if (d < best) {
        best = d;
        nearest = s.name;
      }
    }
    if (!known) out.push_back({name, best <= 3 ? nearest : ""});
  }
  std::sort(out.begin(), out.end(), [](const UnknownSetting& a, const UnknownSetting& b) { return a.name < b.name; });
  return out;
}

const char* version() { return HETCOLL_VERSION; }

}  // namespace hetcoll
