#include "interpose/runtime_config.hpp"

#include <cctype>
#include <cerrno>
#include <optional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <mpi.h>

#include "config/settings.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll::mpi {

namespace {
// A yes/no setting: 1/0, true/false, yes/no, on/off (any case); nullopt
// for anything else.
std::optional<bool> yes_no(std::string v) {
  for (auto& ch : v) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v.empty() || v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

std::string default_source(const Config& c, const std::string& why = "") {
  return cat(c.default_model, " (the default", why.empty() ? "" : ": " + why, ")");
}
}  // namespace

Config& config() {
  static Config* cfg = [] {
    auto* c = new Config;  // lives until exit: MPI may call us from atexit-time code
    auto note = [&](const SettingValue& v) {
      if (!v.problem.empty()) c->problems.push_back(v.problem);
    };
    SettingValue dis = setting("HETCOLL_DISABLE"), dbg = setting("HETCOLL_DEBUG"), prof = setting("HETCOLL_PROFILE"),
                 algo = setting("HETCOLL_ALGO"), hang = setting("HETCOLL_HANG_TIMEOUT"),
                 table = setting("HETCOLL_TABLE");
    for (auto* v : {&dis, &dbg, &prof, &algo, &hang, &table}) note(*v);
    if (auto d = yes_no(dis.value)) c->disabled = *d;
    else c->problems.push_back(cat("HETCOLL_DISABLE='", dis.value, "' is not 1 or 0: ignored (hetcoll runs)"));
    c->explain = dbg.value == "explain" || dbg.value == "1";
    if (!dbg.value.empty() && !c->explain && dbg.value != "0")
      c->problems.push_back(cat("HETCOLL_DEBUG='", dbg.value, "' is not 'explain': ignored"));
    {
      char* end = nullptr;
      errno = 0;
      double t = std::strtod(hang.value.c_str(), &end);
      if (hang.value.empty() || *end || errno || !std::isfinite(t) || t < 0) {
        c->problems.push_back(cat("HETCOLL_HANG_TIMEOUT='", hang.value, "' is not a number of seconds: using ",
                                  setting_default("HETCOLL_HANG_TIMEOUT")));
        t = std::strtod(setting_default("HETCOLL_HANG_TIMEOUT"), nullptr);
      }
      c->hang_timeout = t;
    }
    c->default_model = setting_default("HETCOLL_PROFILE");
    ModelPtr model = parse_model(c->default_model);
    c->model_source = default_source(*c);
    if (prof.from_env && !prof.value.empty()) {
      try {
        model = load_model(prof.value);
        c->model_source = prof.value;
      } catch (const std::exception& e) {
        c->problems.push_back(cat("HETCOLL_PROFILE ignored (", e.what(), "); using ", c->default_model));
        c->model_source = default_source(*c, cat(prof.value, " did not load"));
      }
    }
    Overrides overrides;
    if (!algo.value.empty()) {
      try {
        overrides = Overrides::parse(algo.value);
      } catch (const std::exception& e) {
        c->problems.push_back(cat("HETCOLL_ALGO ignored: ", e.what()));
      }
    }
    for (const UnknownSetting& u : unknown_settings())
      c->problems.push_back(cat("unknown variable ", u.name, " ignored",
                                u.suggestion.empty() ? std::string() : " (did you mean " + u.suggestion + "?)",
                                "; 'hetcoll config' lists the variables"));
    if (!table.value.empty()) {
      try {
        c->table = std::make_shared<const DecisionTable>(load_decision_table(table.value));
        c->table_digest = fnv1a(c->table->to_json().dump());
        const std::string why = table_mismatch(*c->table, *model, overrides.rules().size());
        if (!why.empty()) c->problems.push_back(cat("HETCOLL_TABLE not used: ", why));
      } catch (const std::exception& e) {
        c->problems.push_back(cat("HETCOLL_TABLE ignored: ", e.what()));
      }
    }
    c->planner = std::make_shared<Planner>(model, overrides, c->table);
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
  c.model_source = spec.empty() ? default_source(c) : spec;
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
  c.model_source = default_source(c, cat(c.model_source, " describes ", ranks, " ranks"));
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
