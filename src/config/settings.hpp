// Every HETCOLL_* environment variable, declared once — its name, default,
// meaning and whether every rank must have it alike. The MPI layer reads its configuration through here,
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
  // It changes what hetcoll decides, so every rank of a communicator must
  // have it alike: its effective value is part of the configuration
  // fingerprint the ranks compare when a communicator is set up
  // (config/agreement.hpp); where they differ, the communicator runs the
  // native collectives.
  bool agreed;
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
