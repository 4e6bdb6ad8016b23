#include "interpose/runtime.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <mpi.h>

#include "config/settings.hpp"
#include "plan/configuration.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll::mpi {

Runtime& runtime() {
  static Runtime* cfg = [] {
    auto* c = new Runtime;  // lives until exit: MPI may call us from atexit-time code
    Configuration read = read_configuration();
    c->settings = read.settings;
    c->explain = read.explain();
    c->learn = c->settings.learn == kLearnOff     ? LearnMode::off
               : c->settings.learn == kLearnExact ? LearnMode::exact
                                                  : LearnMode::all;
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
  Runtime& c = runtime();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.planner;
}

void set_model(const std::string& spec) {
  Runtime& c = runtime();
  ModelPtr m = spec.empty() ? parse_model(default_model_spec()) : load_model(spec);
  int initialized = 0, world = 0;
  if (m->ranks() > 0 && !m->maps_hosts() && PMPI_Initialized(&initialized) == MPI_SUCCESS && initialized &&
      PMPI_Comm_size(MPI_COMM_WORLD, &world) == MPI_SUCCESS && m->ranks() != world)
    throw InputError(cat("the model describes ", m->ranks(), " ranks, the job has ", world));
  std::lock_guard<std::mutex> lock(c.mu);
  c.planner = std::make_shared<Planner>(m, c.planner->overrides(), c.table);
  c.model_source = spec.empty() ? default_model_source(default_model_spec()) : spec;
  c.generation.fetch_add(1, std::memory_order_acq_rel);
}

std::shared_ptr<Planner> fallback_planner() {
  Runtime& c = runtime();
  std::lock_guard<std::mutex> lock(c.mu);
  if (!c.fallback) c.fallback = std::make_shared<Planner>(parse_model(default_model_spec()), c.planner->overrides(), c.table);
  return c.fallback;
}

void set_overrides(const std::string& rules) {
  Runtime& c = runtime();
  Overrides o = Overrides::parse(rules);
  std::lock_guard<std::mutex> lock(c.mu);
  c.fallback.reset();
  c.planner = std::make_shared<Planner>(c.planner->model_ptr(), o, c.table);
  c.generation.fetch_add(1, std::memory_order_acq_rel);
}

void check_profile_fits(int world_size) {
  Runtime& c = runtime();
  std::lock_guard<std::mutex> lock(c.mu);
  const int ranks = c.planner->model().ranks();
  if (ranks == 0 || ranks == world_size || c.planner->model().maps_hosts()) return;
  std::string note = cat("HETCOLL_PROFILE describes ", ranks, " ranks, the job has ", world_size, "; using ",
                         default_model_spec());
  int world_rank = 0;  // said once, by world rank 0 (every rank finds the same)
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  if (c.reported.insert(note).second && world_rank == 0) say(note);
  c.planner = std::make_shared<Planner>(parse_model(default_model_spec()), c.planner->overrides(), c.table);
  c.model_source = default_model_source(default_model_spec(), cat(c.model_source, " describes ", ranks, " ranks"));
  c.generation.fetch_add(1, std::memory_order_acq_rel);
}

namespace {

// What the planner made of a setting its row agrees on by content.
ConfigPart content_part(const Setting& s, const Runtime& c) {
  using V = SettingValues;
  if (s.text == &V::profile) return {s.name, c.planner->model().content_digest(), c.model_source};
  if (s.text == &V::algo) {
    const std::string rules = c.planner->overrides().str();
    return {s.name, fnv1a(rules), rules.empty() ? "none" : rules};
  }
  if (s.text == &V::table) {
    // In effect only when the planner took its entries (table_mismatch).
    const bool used = c.table && c.planner->preloaded() > 0;
    return {s.name, used ? c.table_digest : 0, used ? c.settings.table : std::string("none")};
  }
  // A row agreed by content that the planner makes nothing of.
  throw std::logic_error(cat("the configuration fingerprint has no part for ", s.name));
}

}  // namespace

Fingerprint fingerprint() {
  Runtime& c = runtime();
  std::lock_guard<std::mutex> lock(c.mu);
  const uint64_t gen = c.generation.load(std::memory_order_acquire);
  if (c.fingerprint_generation == gen) return c.fingerprint;
  Fingerprint f;
  f.parts.push_back({"the hetcoll version", fnv1a(version()), version()});
  for (const Setting& s : settings()) {
    if (s.agreed == Agreed::by_value) {
      const std::string v = value_text(s, c.settings);
      f.parts.push_back({s.name, fnv1a(v), v});
    } else if (s.agreed == Agreed::by_content) {
      f.parts.push_back(content_part(s, c));
    }
  }
  c.fingerprint = f;
  c.fingerprint_generation = gen;
  return f;
}

void say(const std::string& line) { std::fprintf(stderr, "hetcoll: %s\n", line.c_str()); }

void say_once(const std::string& line, bool always) {
  Runtime& c = runtime();
  if (!always && !c.explain) return;
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.reported.insert(line).second) say(line);
}

}  // namespace hetcoll::mpi
