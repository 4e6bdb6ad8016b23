// The MPI layer's state for the whole process: its configuration, read
// once from the HETCOLL_* settings (config/settings.hpp; plan/configuration
// checks them): the planner (model and overrides), explain, disable, the
// hang timeout. The C API may replace the model and the
// overrides while the program runs (the generation tells the communicators
// their compiled schedules are stale). Nothing makes it the same on every
// rank — a node's environment or its copy of a file may differ — so what
// decides is summed up in a fingerprint (config/agreement.hpp) that the
// ranks of each communicator compare (comm_state.cpp).
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "config/agreement.hpp"
#include "config/settings.hpp"
#include "plan/planner.hpp"

namespace hetcoll::mpi {

// HETCOLL_LEARN's value (kLearnOff, kLearnExact, kLearnAll), read once:
// every blocking collective asks it.
enum class LearnMode { off, exact, all };

struct Runtime {
  SettingValues settings;  // as read when the layer started (config/settings.hpp)
  bool explain = false;    // HETCOLL_DEBUG asks for explanations (Configuration::explain)
  LearnMode learn = LearnMode::off;  // settings.learn
  std::mutex mu;
  std::shared_ptr<Planner> planner;
  // The default model's planner, for communicators a profile does not
  // describe (made when first needed; reset with the overrides).
  std::shared_ptr<Planner> fallback;
  std::shared_ptr<const DecisionTable> table;  // HETCOLL_TABLE, when it loaded
  uint64_t table_digest = 0;                    // of its content
  // Where the planner's model came from, as a message names it (the
  // HETCOLL_PROFILE value, a hetcoll_set_model argument, the default and why).
  std::string model_source;
  // Agreement after the C API changed the configuration: each
  // hetcoll_set_model / hetcoll_set_algorithm compares the ranks'
  // fingerprints on MPI_COMM_WORLD (they are collective over it) and bumps
  // the epoch; the verdict ("" or what differs) holds for every
  // communicator set up before it (CommState::agreement_epoch).
  std::atomic<uint64_t> agreement_epoch{0};
  std::string world_disagreement;
  // The fingerprint of the configuration as of `generation` (every change
  // of what it holds bumps the generation): made once, not per communicator.
  Fingerprint fingerprint;
  uint64_t fingerprint_generation = 0;
  std::vector<std::string> problems;  // configuration refused: reported once, on world rank 0
  std::set<std::string> reported;     // messages already printed (explain)
  std::atomic<uint64_t> generation{1};
};

Runtime& runtime();
// The planner in effect (model and overrides, consistent with each other).
std::shared_ptr<Planner> current_planner();

// Everything this rank's decisions depend on, by content: the version, and
// one part per setting its row marks agreed (by its value, or by what the
// planner made of it).
Fingerprint fingerprint();

// The C API: replace the model / the overrides ("" restores the default /
// clears them). Throw InputError on bad input, keeping the old setting.
// (hetcoll_set_* then compares the ranks' configurations: runtime.hpp.)
void set_model(const std::string& spec);
void set_overrides(const std::string& rules);
// The default model's planner (with the overrides and table in effect).
std::shared_ptr<Planner> fallback_planner();
// A profile that describes another number of ranks than the job has:
// reported once and replaced by the default model.
void check_profile_fits(int world_size);

// One line on stderr, "hetcoll: ...".
void say(const std::string& line);
// Once per process (explain-style messages; `always` prints without explain).
void say_once(const std::string& line, bool always = false);

}  // namespace hetcoll::mpi
