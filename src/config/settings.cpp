#include "config/settings.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace hetcoll {

namespace {

// The rows' makers: one per kind, each naming the member the value lands in.
Setting text(const char* name, std::string SettingValues::*m, const char* def, Agreed agreed, const char* units,
             const char* meaning, const char* details) {
  Setting s{name, def, meaning, agreed, SettingKind::text, {}, units, details};
  s.text = m;
  return s;
}
Setting choice(const char* name, std::string SettingValues::*m, const char* def, std::vector<std::string> choices,
               Agreed agreed, const char* units, const char* meaning, const char* details) {
  Setting s{name, def, meaning, agreed, SettingKind::choice, std::move(choices), units, details};
  s.text = m;
  return s;
}
Setting flag(const char* name, bool SettingValues::*m, const char* def, Agreed agreed, const char* meaning,
             const char* details) {
  Setting s{name, def, meaning, agreed, SettingKind::flag, {}, "1 or 0", details};
  s.flag = m;
  return s;
}
Setting seconds(const char* name, double SettingValues::*m, const char* def, const char* meaning,
                const char* details) {
  Setting s{name, def, meaning, Agreed::no, SettingKind::seconds, {}, "seconds", details};
  s.seconds = m;
  return s;
}

}  // namespace

const std::vector<Setting>& settings() {
  using V = SettingValues;
  static const std::vector<Setting> table = {
      text("HETCOLL_PROFILE", &V::profile, "hockney:alpha=3us,beta=0.1ns,gamma=0.1ns,overlap=0", Agreed::by_content,
           "a profile, a spec or a model file",
           "the machine model: a profile written by 'hetcoll probe' (ranks mapped to its hosts by name; measured "
           "decisions of 'hetcoll tune' included), a spec (see 'hetcoll models') or a JSON model file; the default "
           "is fitted to shared memory (3 us per message, 10 GB/s, receives keep the CPU busy)",
           "A profile's hosts are matched by `MPI_Get_processor_name`: each communicator's ranks contribute their "
           "host's key once (in the 16-byte-a-rank `MPI_Allgather` made when hetcoll first uses the communicator), "
           "and a communicator with a host the profile lacks runs on the default model (one warning). The "
           "profile's measured decisions (`hetcoll tune`) come first where they cover the call's layout and size "
           "class. Unreadable or malformed (a model file is at most 64 MiB): the default is used and world rank 0 "
           "says why. A per-rank model for a different number of ranks than the job: the default."),
      text("HETCOLL_ALGO", &V::algo, "", Agreed::by_content, "override rules",
           "algorithm overrides, e.g. 'bcast:0-64k:@lambda_tree#64k-inf:@scatter_collect' (the grammar in "
           "docs/mpi.md)",
           "Checked when read (collectives, ranges, algorithms, parameter values); malformed: ignored, and world "
           "rank 0 says why. An override is followed only where the rules every decision keeps allow it."),
      text("HETCOLL_TABLE", &V::table, "", Agreed::by_content, "a file",
           "a decision table written by 'hetcoll plan --table' for this model: first calls of the classes it covers "
           "cost a lookup instead of planning",
           "Written by `hetcoll plan --table FILE -n 4,16,64 -m MODEL` (every collective at root 0, every size "
           "class up to `--table-max`, element sizes 1, 4, 8). Used only with the model and the hetcoll version "
           "that built it and without `HETCOLL_ALGO` — then its entries are exactly the planner's decisions; "
           "otherwise (or unreadable, malformed) world rank 0 says why once and the planner decides as usual."),
      choice("HETCOLL_DEBUG", &V::debug, "", {"", "0", "1", "explain"}, Agreed::no, "explain, 1 or 0",
             "'explain': one line on stderr per new decision (and form it is called in) and per fallback to the "
             "native MPI",
             "On rank 0 of each communicator, naming the call as the program made it (`MPI_Allreduce`, "
             "`MPI_Iallreduce`, `MPI_Allreduce_init`), e.g. `hetcoll: MPI_Allreduce p=4 size=80000B: "
             "rabenseifner_allreduce, predicted 30 us; runner-up hybrid_allreduce[mesh=2x2:SSCC] 30 us (+0%)`; one "
             "line per override not followed and why, and one per reason to fall back to the native collective."),
      flag("HETCOLL_DISABLE", &V::disable, "0", Agreed::by_value, "'1': every collective goes to the native MPI",
           "Also 'true'/'false', 'yes'/'no', 'on'/'off'."),
      flag("HETCOLL_PROGRESS_THREAD", &V::progress_thread, "0", Agreed::no,
           "'1': a thread of each rank advances hetcoll's non-blocking and persistent collectives while the "
           "application computes (hetcoll asks MPI_Init for MPI_THREAD_MULTIPLE then); '0': they advance in the "
           "application's MPI calls",
           "Without the thread a collective advances whenever the rank is in MPI: every wait and test, the "
           "blocking point-to-point calls, hetcoll's collectives. With it, also while the rank computes, at the "
           "cost of a thread that polls while collectives are in flight (every 20 us while they move, backing off "
           "to 640 us while they wait on the network; asleep otherwise, and aside while the application waits). "
           "Where the MPI library gives MPI_THREAD_MULTIPLE (asked for or by the application), a thread also runs "
           "while the rank is blocked in a collective hetcoll left to the native library. docs/mpi.md says what "
           "overlap to expect with each."),
      choice("HETCOLL_LEARN", &V::learn, kLearnAll, {kLearnAll, kLearnExact, kLearnOff}, Agreed::by_value,
             "1, exact or 0",
             "a blocking collective called often is timed in the job — the planner's choice, the native MPI and "
             "the model's next candidates — and every rank keeps the fastest (the slowest rank's time), at the same "
             "call; followed again when its time drifts. '1': every such call, floating-point reductions too (their "
             "last bits follow the algorithm the job kept, which may differ run to run); 'exact': only where every "
             "candidate gives the same bits (data movement; integer, min/max, logical and bitwise reductions), for "
             "the same bits run after run; '0': never",
             "docs/learning.md: the rule, what exploring may cost (2 % of the call's time), how drift is seen, when "
             "to choose 'exact' (and how to have both: learn once, save, run the saved profile), what non-blocking and persistent calls do (they run what the "
             "blocking calls of the same size learned, and are not timed: overlap hides their time). Ranks must "
             "agree on it (it adds an exchange every so many calls). Also 'true'/'false', 'yes'/'no', 'on'/'off' "
             "for 1 and 0. Not with HETCOLL_ALGO or HETCOLL_TABLE's forced choices, nor gatherv, scatterv and "
             "alltoallv (no rank knows every count). With HETCOLL_DEBUG=explain, rank 0 says what it settled on "
             "and when a choice is opened again."),
      text("HETCOLL_LEARN_SAVE", &V::learn_save, "", Agreed::no, "a file",
           "with HETCOLL_LEARN on and a profile: at MPI_Finalize, world rank 0 writes the profile with what "
           "MPI_COMM_WORLD's collectives settled on, as measured decisions for the job's layout: the next job's "
           "HETCOLL_PROFILE",
           "The profile is HETCOLL_PROFILE's file as the job read it (not written when it changed on disk since, "
           "or when the model is not a profile: said once); its earlier measured decisions for the same layout "
           "stay where the job learned nothing of that collective and size, as `hetcoll tune` keeps them "
           "(docs/learning.md). The same file as HETCOLL_PROFILE replaces it. Only world rank 0's value counts."),
      seconds("HETCOLL_HANG_TIMEOUT", &V::hang_timeout, "120",
              "seconds a collective may wait before hetcoll reports on stderr what it is waiting for (0: never)", ""),
  };
  return table;
}

SettingValue setting_text(const Setting& s) {
  SettingValue v;
  v.value = s.default_value;
  if (const char* env = std::getenv(s.name)) {
    size_t n = strnlen(env, kMaxSettingLength + 1);
    if (n > kMaxSettingLength) {
      v.problem = std::string(s.name) + " is longer than " + std::to_string(kMaxSettingLength) + " characters: ignored";
    } else {
      v.value = env;
      v.from_env = true;
    }
  }
  return v;
}

namespace {

std::optional<bool> yes_no(std::string v) {
  for (auto& ch : v) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v.empty() || v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

std::optional<double> seconds_in(const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const double t = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || errno || !std::isfinite(t) || t < 0) return std::nullopt;
  return t;
}

// `text` read as `s` says into its member of `out`; a refusal said in
// `problems` (nullptr: the defaults, which are never refused).
void land(const Setting& s, const std::string& text, SettingValues& out, std::vector<std::string>* problems) {
  auto refused = [&](const std::string& why) {
    if (!problems) throw std::logic_error(std::string(s.name) + "'s default is refused");
    problems->push_back(std::string(s.name) + "='" + text + "' " + why);
  };
  switch (s.kind) {
    case SettingKind::text:
      out.*s.text = text;
      return;
    case SettingKind::choice: {
      const auto accepted = [&](const std::string& t) {
        return std::find(s.choices.begin(), s.choices.end(), t) != s.choices.end();
      };
      // A choice of "1" and "0" takes a flag's words for them too.
      const std::optional<bool> word = accepted("1") && accepted("0") ? yes_no(text) : std::nullopt;
      if (accepted(text)) {
        out.*s.text = text;
      } else if (text.empty()) {  // set to nothing: as unset
        out.*s.text = s.default_value;
      } else if (word) {
        out.*s.text = *word ? "1" : "0";
      } else {
        refused(std::string("is not ") + s.units + ": ignored" +
                (*s.default_value ? std::string(" (") + s.default_value + " used)" : std::string()));
        out.*s.text = s.default_value;
      }
      return;
    }
    case SettingKind::flag:
      if (auto b = yes_no(text)) {
        out.*s.flag = *b;
      } else {
        refused(std::string("is not 1 or 0: ignored (") + s.default_value + " used)");
        out.*s.flag = *yes_no(s.default_value);
      }
      return;
    case SettingKind::seconds:
      if (auto t = seconds_in(text)) {
        out.*s.seconds = *t;
      } else {
        refused(std::string("is not a number of seconds: using ") + s.default_value);
        out.*s.seconds = *seconds_in(s.default_value);
      }
      return;
  }
}

}  // namespace

SettingValues read_settings(std::vector<std::string>& problems) {
  SettingValues v;
  for (const Setting& s : settings()) {
    const SettingValue t = setting_text(s);
    if (!t.problem.empty()) problems.push_back(t.problem);
    land(s, t.value, v, &problems);
  }
  return v;
}

const SettingValues& default_settings() {
  static const SettingValues v = [] {
    SettingValues d;
    for (const Setting& s : settings()) land(s, s.default_value, d, nullptr);
    return d;
  }();
  return v;
}

std::string value_text(const Setting& s, const SettingValues& v) {
  if (s.text) return v.*s.text;
  if (s.flag) return v.*s.flag ? "1" : "0";
  std::ostringstream o;
  o << v.*s.seconds;
  return o.str();
}

std::string settings_markdown() {
  std::string out = "| variable | default | meaning | alike on every rank |\n|---|---|---|---|\n";
  for (const Setting& s : settings()) {
    const std::string def = *s.default_value ? std::string("`") + s.default_value + "`" : "(empty)";
    std::string meaning = std::string(s.meaning) + (*s.details ? std::string(". ") + s.details : std::string());
    out += std::string("| `") + s.name + "` | " + def + " | " + meaning + " | " + (s.agreed != Agreed::no ? "yes" : "no") + " |\n";
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
