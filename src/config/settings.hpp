// Every HETCOLL_* environment variable, declared once — its name, default
// and meaning. The MPI layer reads its configuration through here,
// `hetcoll config` lists these with the values in effect, and any other
// HETCOLL_* variable in the environment is reported as unknown with the
// nearest known name (a misspelling would otherwise be silently ignored).
#pragma once
#include <string>
#include <vector>

namespace hetcoll {

struct Setting {
  const char* name;
  const char* default_value;
  const char* meaning;
};
const std::vector<Setting>& settings();

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

struct UnknownSetting {
  std::string name, suggestion;  // suggestion: the nearest declared name ("" if none is close)
};
std::vector<UnknownSetting> unknown_settings();

// The project's version (CMakeLists.txt's project(VERSION), the one place).
const char* version();

}  // namespace hetcoll
