// Every HETCOLL_* environment variable, declared once — its name, default,
// meaning and whether every rank must have it alike. The MPI layer reads its configuration through here,
// `hetcoll config` lists these with the values in effect, and any other
// HETCOLL_* variable in the environment is reported as unknown with the
// nearest known name (a misspelling would otherwise be silently ignored).
#pragma once
#include <string>
#include <vector>

namespace hetcoll {

// How a setting's value is read. text: as it is (the layer that uses it
// checks it: HETCOLL_PROFILE, HETCOLL_ALGO and HETCOLL_TABLE are checked by
// plan/configuration.hpp); flag: 1/0, true/false, yes/no, on/off, any case;
// seconds: a number >= 0; choice: one of `choices`.
enum class SettingKind { text, flag, seconds, choice };

// Whether every rank of a communicator must have a setting alike (it
// changes what hetcoll decides): its effective value is then part of the
// configuration fingerprint the ranks compare when a communicator is set up
// (config/agreement.hpp); where they differ, the communicator runs the
// native collectives. by_value: the value as read is compared; by_content:
// what the plan layer made of it (the model's content, the rules parsed, the
// table's content: plan/configuration.hpp's `agreed_part`).
enum class Agreed { no, by_value, by_content };

// The settings' values as read, one member per setting (its row below
// says which): what the rest of hetcoll reads, never a setting by name.
struct SettingValues {
  std::string profile;          // HETCOLL_PROFILE
  std::string algo;             // HETCOLL_ALGO
  std::string table;            // HETCOLL_TABLE
  std::string debug;            // HETCOLL_DEBUG
  bool disable = false;         // HETCOLL_DISABLE
  bool progress_thread = false;  // HETCOLL_PROGRESS_THREAD
  std::string learn;            // HETCOLL_LEARN: kLearnAll, kLearnExact or kLearnOff
  std::string learn_save;       // HETCOLL_LEARN_SAVE
  double hang_timeout = 0;      // HETCOLL_HANG_TIMEOUT, seconds (0: never)
};

// HETCOLL_LEARN's values: learn only where every candidate gives the same
// bits (data movement; reductions order_free() says any order of combining
// gives alike), learn floating-point reductions too, never.
inline constexpr const char* kLearnExact = "exact";
inline constexpr const char* kLearnAll = "1";
inline constexpr const char* kLearnOff = "0";

// One row per HETCOLL_* variable: name, kind, default, meaning, who must
// have it alike, and where its value lands in SettingValues (the member of
// its kind; the others null).
struct Setting {
  const char* name;
  const char* default_value;
  const char* meaning;
  Agreed agreed = Agreed::no;
  SettingKind kind = SettingKind::text;
  std::vector<std::string> choices = {};  // kind choice: the values accepted ("" among them: unset)
  const char* units = "";                 // what the value is ("seconds", "1 or 0", ...)
  const char* details = "";               // more for the docs (docs/mpi.md's table), Markdown
  std::string SettingValues::*text = nullptr;  // kinds text and choice
  bool SettingValues::*flag = nullptr;         // kind flag
  double SettingValues::*seconds = nullptr;    // kind seconds
};
const std::vector<Setting>& settings();

// Values longer than this are refused (a hostile environment).
constexpr size_t kMaxSettingLength = 65536;

struct SettingValue {
  std::string value;     // the environment's, or the default
  bool from_env = false;
  std::string problem;   // non-empty: the environment's value was refused (too long); value is the default
};
// A setting's text in this environment (or its default).
SettingValue setting_text(const Setting& s);

// Every setting read as its kind says into its member, each refusal one
// line in `problems` in the words the MPI layer says it (and `hetcoll
// config` prints): the value refused, what it is not, what is used instead.
SettingValues read_settings(std::vector<std::string>& problems);
// Every setting at its default.
const SettingValues& default_settings();
// A setting's value in `v`, as text ("1"/"0" for a flag).
std::string value_text(const Setting& s, const SettingValues& v);

// The settings as a Markdown table (name, default, meaning, alike on every
// rank): what docs/mpi.md shows, produced here (hetcoll config --markdown).
std::string settings_markdown();

struct UnknownSetting {
  std::string name, suggestion;  // suggestion: the nearest declared name ("" if none is close)
};
std::vector<UnknownSetting> unknown_settings();

// The project's version (CMakeLists.txt's project(VERSION), the one place).
const char* version();

}  // namespace hetcoll
