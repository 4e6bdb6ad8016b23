#include "interpose/runtime_config.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <mpi.h>

#include "config/settings.hpp"
#include "plan/configuration.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll::mpi {

Config& config() {
  static Config* cfg = [] {
    auto* c = new Config;  // lives until exit: MPI may call us from atexit-time code
    Configuration read = read_configuration();
    c->disabled = read.disabled;
    c->explain = read.explain;
    c->hang_timeout = read.hang_timeout;
    c->progress_thread = read.progress_thread;
    c->default_model = read.default_model;
    c->model_source = read.model_source;
    c->table = read.table;
    c->table_digest = read.table_digest;
    c->problems = read.problems;
    c->planner = std::make_shared<Planner>(read.model, read.overrides, c->table);
    return c;
  }();
  return *cfg;
}

std::shared_ptr<Planner> current_planner() {
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.planner;
}

void set_model(const std::string& spec) {
  Config& c = config();
  ModelPtr m = spec.empty() ? parse_model(c.default_model) : load_model(spec);
  int initialized = 0, world = 0;
  if (m->ranks() > 0 && !m->maps_hosts() && PMPI_Initialized(&initialized) == MPI_SUCCESS && initialized &&
      PMPI_Comm_size(MPI_COMM_WORLD, &world) == MPI_SUCCESS && m->ranks() != world)
    throw InputError(cat("the model describes ", m->ranks(), " ranks, the job has ", world));
  std::lock_guard<std::mutex> lock(c.mu);
  c.planner = std::make_shared<Planner>(m, c.planner->overrides(), c.table);
  c.model_source = spec.empty() ? default_model_source(c.default_model) : spec;
  c.generation.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<Planner> fallback_planner() {
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.fallback) c.fallback = std::make_shared<Planner>(parse_model(c.default_model), c.planner->overrides(), c.table);
  return c.fallback;
}

void set_overrides(const std::string& rules) {
  Config& c = config();
  Overrides o = Overrides::parse(rules);
  std::lock_guard<std::mutex> lock(c.mu);
  c.fallback.reset();
  c.planner = std::make_shared<Planner>(c.planner->model_ptr(), o, c.table);
  c.generation.fetch_add(1, std::memory_order_acq_rel);
}

void check_profile_fits(int world_size) {
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mu);
  const int ranks = c.planner->model().ranks();
  if (ranks == 0 || ranks == world_size || c.planner->model().maps_hosts()) return;
  std::string note = cat("HETCOLL_PROFILE describes ", ranks, " ranks, the job has ", world_size, "; using ",
                         c.default_model);
  int world_rank = 0;  // said once, by world rank 0 (every rank finds the same)
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (c.reported.insert(note).second && world_rank == 0) say(note);
  c.planner = std::make_shared<Planner>(parse_model(c.default_model), c.planner->overrides(), c.table);
  c.model_source = default_model_source(c.default_model, cat(c.model_source, " describes ", ranks, " ranks"));
  c.generation.fetch_add(1, std::memory_order_acq_rel);
}

Fingerprint fingerprint() {
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mu);
  const uint64_t gen = c.generation.load(std::memory_order_acquire);
  if (c.fingerprint_generation == gen) return c.fingerprint;
  Fingerprint f;
  f.parts.push_back({"the hetcoll version", fnv1a(version()), version()});
  for (const Setting& s : settings()) {
    if (!s.agreed) continue;
    const std::string name = s.name;
    if (name == "HETCOLL_PROFILE") {
      f.parts.push_back({name, c.planner->model().content_digest(), c.model_source});
    } else if (name == "HETCOLL_ALGO") {
      const std::string rules = c.planner->overrides().str();
      f.parts.push_back({name, fnv1a(rules), rules.empty() ? "none" : rules});
    } else if (name == "HETCOLL_TABLE") {
      // In effect only when the planner took its entries (table_mismatch).
      const bool used = c.table && c.planner->preloaded() > 0;
      f.parts.push_back({name, used ? c.table_digest : 0, used ? setting(s.name).value : std::string("none")});
    } else if (name == "HETCOLL_DISABLE") {
      f.parts.push_back({name, uint64_t(c.disabled), c.disabled ? "1" : "0"});
    } else {
      // The settings table marks a setting `agreed` that nothing here folds in.
      throw std::logic_error(cat("the configuration fingerprint has no part for ", name));
    }
  }
  c.fingerprint = f;
  c.fingerprint_generation = gen;
  return f;
}

void say(const std::string& line) { std::fprintf(stderr, "hetcoll: %s\n", line.c_str()); }

void say_once(const std::string& line, bool always) {
  Config& c = config();
  if (!always && !c.explain) return;
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.reported.insert(line).second) say(line);
}

}  // namespace hetcoll::mpi
