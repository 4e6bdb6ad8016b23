#include "plan/configuration.hpp"

#include "config/settings.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll {

std::string default_model_source(const std::string& default_model, const std::string& why) {
  return cat(default_model, " (the default", why.empty() ? "" : ": " + why, ")");
}

std::shared_ptr<const DecisionTable> decision_table_for(const std::string& path, const MachineModel& model,
                                                        const Overrides& overrides,
                                                        std::vector<std::string>& problems, uint64_t* digest) {
  try {
    auto table = std::make_shared<const DecisionTable>(load_decision_table(path));
    if (digest) *digest = fnv1a(table->to_json().dump());
    const std::string why = table_mismatch(*table, model, overrides.rules().size());
    if (!why.empty()) problems.push_back(cat("HETCOLL_TABLE not used: ", why));
    return table;
  } catch (const std::exception& e) {
    problems.push_back(cat("HETCOLL_TABLE ignored: ", e.what()));
    return nullptr;
  }
}

Configuration read_configuration() {
  Configuration c;
  std::vector<std::string>& problems = c.problems;
  c.settings = read_settings(problems);
  const std::string& profile = c.settings.profile;
  const std::string& default_model = default_model_spec();
  c.model = parse_model(default_model);
  c.model_source = default_model_source(default_model);
  if (profile != default_model && !profile.empty()) {
    try {
      c.model = load_model(profile);
      c.model_source = profile;
    } catch (const std::exception& e) {
      problems.push_back(cat("HETCOLL_PROFILE ignored (", e.what(), "); using ", default_model));
      c.model_source = default_model_source(default_model, cat(profile, " did not load"));
    }
  }
  if (!c.settings.algo.empty()) {
    try {
      c.overrides = Overrides::parse(c.settings.algo);
    } catch (const std::exception& e) {
      problems.push_back(cat("HETCOLL_ALGO ignored: ", e.what()));
    }
  }
  for (const UnknownSetting& u : unknown_settings())
    problems.push_back(cat("unknown variable ", u.name, " ignored",
                           u.suggestion.empty() ? std::string() : " (did you mean " + u.suggestion + "?)",
                           "; 'hetcoll config' lists the variables"));
  if (!c.settings.table.empty()) c.table = decision_table_for(c.settings.table, *c.model, c.overrides, problems, &c.table_digest);
  return c;
}

}  // namespace hetcoll
