#include "config/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
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
       true, SettingKind::text, {}, "a profile, a spec or a model file",
       "A profile's hosts are matched by `MPI_Get_processor_name`: each communicator's ranks contribute their "
       "host's key once (in the 16-byte-a-rank `MPI_Allgather` made when hetcoll first uses the communicator), and "
       "a communicator with a host the profile lacks runs on the default model (one warning). The profile's "
       "measured decisions (`hetcoll tune`) come first where they cover the call's layout and size class. "
       "Unreadable or malformed (a model file is at most 64 MiB): the default is used and world rank 0 says why. "
       "A per-rank model for a different number of ranks than the job: the default."},
      {"HETCOLL_ALGO", "",
       "algorithm overrides, e.g. 'bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect' (the grammar in "
       "docs/mpi.md)",
       true, SettingKind::text, {}, "override rules",
       "Checked when read (collectives, ranges, algorithms, parameter values); malformed: ignored, and world "
       "rank 0 says why. An override is followed only where the rules every decision keeps allow it."},
      {"HETCOLL_TABLE", "",
       "a decision table written by 'hetcoll plan --table' for this model: first calls of the classes it covers "
       "cost a lookup instead of planning",
       true, SettingKind::text, {}, "a file",
       "Written by `hetcoll plan --table FILE -n 4,16,64 -m MODEL` (every collective at root 0, every size class "
       "up to `--table-max`, element sizes 1, 4, 8). Used only with the model and the hetcoll version that built "
       "it and without `HETCOLL_ALGO` — then its entries are exactly the planner's decisions; otherwise (or "
       "unreadable, malformed) world rank 0 says why once and the planner decides as usual."},
      {"HETCOLL_DEBUG", "",
       "'explain': one line on stderr per new decision (and form it is called in) and per fallback to the native MPI",
       false, SettingKind::choice, {"", "0", "1", "explain"}, "explain, 1 or 0",
       "On rank 0 of each communicator, naming the call as the program made it (`MPI_Allreduce`, "
       "`MPI_Iallreduce`, `MPI_Allreduce_init`), e.g. `hetcoll: MPI_Allreduce p=4 size=80000B: "
       "rabenseifner_allreduce, predicted 30 us; runner-up hybrid_allreduce[mesh=2x2:SSCC] 30 us (+0%)`; one "
       "line per override not followed and why, and one per reason to fall back to the native collective."},
      {"HETCOLL_DISABLE", "0", "'1': every collective goes to the native MPI", true, SettingKind::flag, {}, "1 or 0",
       "Also 'true'/'false', 'yes'/'no', 'on'/'off'."},
      {"HETCOLL_PROGRESS_THREAD", "0",
       "'1': a thread of each rank advances hetcoll's non-blocking and persistent collectives while the "
       "application computes (hetcoll asks MPI_Init for MPI_THREAD_MULTIPLE then); '0': they advance in the "
       "application's MPI calls",
       false, SettingKind::flag, {}, "1 or 0",
       "Without the thread a collective advances whenever the rank is in MPI: every wait and test, the blocking "
       "point-to-point calls, hetcoll's collectives. With it, also while the rank computes, at the cost of a "
       "thread that polls while collectives are in flight (every 20 us while they move, backing off to 640 us "
       "while they wait on the network; asleep otherwise, and aside while the application waits). Where the MPI "
       "library gives MPI_THREAD_MULTIPLE (asked for or by the application), a thread also runs while the rank "
       "is blocked in a collective hetcoll left to the native library. docs/mpi.md says what overlap to expect "
       "with each."},
      {"HETCOLL_HANG_TIMEOUT", "120",
       "seconds a collective may wait before hetcoll reports on stderr what it is waiting for (0: never)", false,
       SettingKind::seconds, {}, "seconds", ""},
  };
  return table;
}

const Setting& setting_declared(const char* name) {
  for (const Setting& s : settings())
    if (std::strcmp(s.name, name) == 0) return s;
  throw std::logic_error(std::string("undeclared setting ") + name);
}

const char* setting_default(const char* name) { return setting_declared(name).default_value; }

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

const Setting& of_kind(const char* name, SettingKind kind) {
  const Setting& s = setting_declared(name);
  if (s.kind != kind) throw std::logic_error(std::string(name) + " is declared of another kind");
  return s;
}

// The environment's value, its refusal (too long) said.
SettingValue value_of(const char* name, std::vector<std::string>& problems) {
  SettingValue v = setting(name);
  if (!v.problem.empty()) problems.push_back(v.problem);
  return v;
}

std::optional<bool> yes_no(std::string v) {
  for (auto& ch : v) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v.empty() || v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

std::optional<double> seconds(const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const double t = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || errno || !std::isfinite(t) || t < 0) return std::nullopt;
  return t;
}

}  // namespace

bool flag_setting(const char* name, std::vector<std::string>& problems) {
  const Setting& s = of_kind(name, SettingKind::flag);
  const SettingValue v = value_of(name, problems);
  if (auto b = yes_no(v.value)) return *b;
  problems.push_back(std::string(name) + "='" + v.value + "' is not 1 or 0: ignored (" + s.default_value + " used)");
  return *yes_no(s.default_value);
}

double seconds_setting(const char* name, std::vector<std::string>& problems) {
  const Setting& s = of_kind(name, SettingKind::seconds);
  const SettingValue v = value_of(name, problems);
  if (auto t = seconds(v.value)) return *t;
  problems.push_back(std::string(name) + "='" + v.value + "' is not a number of seconds: using " + s.default_value);
  return *seconds(s.default_value);
}

std::string choice_setting(const char* name, std::vector<std::string>& problems) {
  const Setting& s = of_kind(name, SettingKind::choice);
  const SettingValue v = value_of(name, problems);
  if (std::find(s.choices.begin(), s.choices.end(), v.value) != s.choices.end()) return v.value;
  problems.push_back(std::string(name) + "='" + v.value + "' is not " + s.units + ": ignored");
  return "";
}

std::string text_setting(const char* name, std::vector<std::string>& problems) {
  of_kind(name, SettingKind::text);
  return value_of(name, problems).value;
}

std::string settings_markdown() {
  std::string out = "| variable | default | meaning | alike on every rank |\n|---|---|---|---|\n";
  for (const Setting& s : settings()) {
    const std::string def = *s.default_value ? std::string("`") + s.default_value + "`" : "(empty)";
    std::string meaning = std::string(s.meaning) + (*s.details ? std::string(". ") + s.details : std::string());
    out += std::string("| `") + s.name + "` | " + def + " | " + meaning + " | " + (s.agreed ? "yes" : "no") + " |\n";
  }
  return out;
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
