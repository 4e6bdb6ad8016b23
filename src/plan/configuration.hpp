// What the HETCOLL_* settings (config/settings.hpp) configure, read and
// checked without MPI: the MPI layer starts from it, `hetcoll config`
// prints its problems, and the Python decision point takes its table — one
// reading, one wording of every refusal.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "model/machine_model.hpp"
#include "plan/decision_table.hpp"
#include "plan/overrides.hpp"

namespace hetcoll {

struct Configuration {
  SettingValues settings;     // every HETCOLL_* setting as read (config/settings.hpp)
  bool explain() const { return settings.debug == "explain" || settings.debug == "1"; }
  ModelPtr model;             // HETCOLL_PROFILE's, or the default where it did not load
  // Where the model came from, as a message names it (the HETCOLL_PROFILE
  // value, or the default and why).
  std::string model_source;
  Overrides overrides;                          // HETCOLL_ALGO
  std::shared_ptr<const DecisionTable> table;   // HETCOLL_TABLE, when it loaded
  uint64_t table_digest = 0;                    // of its content
  // Every value refused, one line each ("HETCOLL_ALGO ignored: …"), and
  // every HETCOLL_* variable nothing reads.
  std::vector<std::string> problems;
};

// HETCOLL_PROFILE's default model spec.
inline const std::string& default_model_spec() { return default_settings().profile; }

// From the environment.
Configuration read_configuration();

// "MODEL (the default[: why])": how a message names the default model.
std::string default_model_source(const std::string& default_model, const std::string& why = "");

// The decision table at `path` for planning on `model` with `overrides`:
// nullptr when it does not load; a table built for another model or with
// overrides in effect is returned (the planner then takes none of its
// entries) and said. Each problem one line in `problems`.
std::shared_ptr<const DecisionTable> decision_table_for(const std::string& path, const MachineModel& model,
                                                        const Overrides& overrides,
                                                        std::vector<std::string>& problems,
                                                        uint64_t* digest = nullptr);

}  // namespace hetcoll
