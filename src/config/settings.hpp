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

struct Setting {
  const char* name;
  const char* default_value;
  const char* meaning;
  // It changes what hetcoll decides, so every rank of a communicator must
  // have it alike: its effective value is part of the configuration
  // fingerprint the ranks compare when a communicator is set up
  // (config/agreement.hpp); where they differ, the communicator runs the
  // native collectives.
  bool agreed;
  SettingKind kind = SettingKind::text;
  std::vector<std::string> choices = {};  // kind choice: the values accepted ("" among them: unset)
  const char* units = "";                 // what the value is ("seconds", "1 or 0", ...)
  const char* details = "";               // more for the docs (docs/mpi.md's table), Markdown
};
const std::vector<Setting>& settings();
const Setting& setting_declared(const char* name);  // throws std::logic_error for an undeclared name

// Values longer than this are refused (a hostile environment).
constexpr size_t kMaxSettingLength = 65536;

struct SettingValue {
  std::string value;     // the environment's, or the default
  bool from_env = false;
  std::string problem;   // non-empty: the environment's value was refused (too long); value is the default
};
// The value of a declared setting; throws std::logic_error for an undeclared name.
SettingValue setting(const char* name);
const char* setting_default(const char* name);

// A setting read as its kind says, every refusal one line in `problems` in
// the words the MPI layer says it (and `hetcoll config` prints): the value
// refused, what it is not, what is used instead. Each throws
// std::logic_error when the setting is declared of another kind.
bool flag_setting(const char* name, std::vector<std::string>& problems);
double seconds_setting(const char* name, std::vector<std::string>& problems);
std::string choice_setting(const char* name, std::vector<std::string>& problems);  // "" when unset or refused
std::string text_setting(const char* name, std::vector<std::string>& problems);

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
