// hetcoll._core: planning and simulation from Python (no MPI needed).
// Errors cross as hetcoll.InputError (a ValueError) and hetcoll.ScheduleError.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "plan/build_schedule.hpp"
#include "plan/phase_choice.hpp"
#include "algorithms/patterns/postal_math.hpp"
#include "config/settings.hpp"
#include "model/bound.hpp"
#include "model/tree_packing.hpp"
#include "model/profile.hpp"
#include "model/profile_model.hpp"
#include "model/tuned_decisions.hpp"
#include "model/subnets.hpp"
#include "algorithms/registry.hpp"
#include "model/machine_model.hpp"
#include "model/units.hpp"
#include "plan/configuration.hpp"
#include "plan/overrides.hpp"
#include "plan/decision_table.hpp"
#include "plan/planner.hpp"
#include "plan/table_builder.hpp"
#include "schedule/validator.hpp"
#include "algorithms/banikazemi.hpp"
#include "sim/simulator.hpp"
#include "algorithms/patterns/broadcast_trees.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

namespace nb = nanobind;
using namespace nb::literals;
using namespace hetcoll;

namespace {

Collective make_collective(const std::string& op, int ranks, uint64_t count, int root, uint32_t elem_size,
                           bool order_free) {
  Collective c = Collective::make(coll_op_from_name(op), ranks, count, root, elem_size);
  c.order_free = order_free;
  return c;
}

nb::dict report_dict(const ValidationReport& r) {
  nb::dict d;
  d["ok"] = r.ok;
  d["errors"] = r.errors;
  d["rank_consistent"] = r.rank_consistent;
  d["messages"] = r.messages;
  d["bytes"] = r.bytes;
  d["summary"] = r.summary();
  return d;
}

std::vector<nb::dict> candidate_dicts(const PlanResult& pr) {
  std::vector<nb::dict> out;
  for (auto& cand : pr.candidates) {
    nb::dict d;
    d["algorithm"] = cand.algorithm;
    d["predicted"] = cand.predicted;
    d["closed_form"] = cand.closed_form;
    d["estimated"] = cand.estimated;
    d["from_parts"] = cand.from_parts;
    d["parts_scale"] = cand.parts_scale;
    d["holds"] = cand.holds;
    d["messages"] = cand.messages;
    d["latency"] = cand.split.latency;
    d["bandwidth"] = cand.split.bandwidth;
    d["compute"] = cand.split.compute;
    if (cand.has_terms) {
      d["alpha_terms"] = cand.terms.alpha;
      d["beta_bytes"] = cand.terms.beta;
      d["gamma_bytes"] = cand.terms.gamma;
    }
    out.push_back(d);
  }
  return out;
}

nb::dict algorithm_dict(const Algorithm& a) {
  nb::dict d;
  d["name"] = a.name;
  std::vector<std::string> ops;
  for (CollOp op : a.ops) ops.push_back(coll_op_name(op));
  d["ops"] = ops;
  d["description"] = a.description;
  d["steps"] = a.steps;
  d["bytes"] = a.bytes;
  d["cost"] = a.cost;
  d["source"] = a.source;
  std::vector<std::string> names, docs;
  for (auto& ps : a.params) {
    names.push_back(ps.name);
    docs.push_back(ps.doc);
  }
  d["params"] = names;
  d["param_docs"] = docs;
  d["local_counts"] = a.local_counts;
  d["rank_consistent"] = a.rank_consistent;
  return d;
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "hetcoll core: machine models, schedules, algorithms, simulator";
  m.attr("__version__") = version();

  m.def("settings", [] {
    static const char* const kinds[] = {"text", "flag", "seconds", "choice"};
    std::vector<std::string> problems;
    const SettingValues read = read_settings(problems);
    std::vector<nb::dict> out;
    for (const Setting& s : settings()) {
      const SettingValue v = setting_text(s);
      nb::dict d;
      d["name"] = s.name;
      d["default"] = s.default_value;
      d["meaning"] = s.meaning;
      d["agreed"] = s.agreed != Agreed::no;
      d["kind"] = kinds[int(s.kind)];
      d["choices"] = s.choices;
      d["units"] = s.units;
      d["value"] = v.value;      // the text in effect
      d["read"] = value_text(s, read);  // as the MPI layer reads it ("1"/"0" for a flag)
      d["from_env"] = v.from_env;
      d["problem"] = v.problem;
      out.push_back(d);
    }
    return out;
  }, "every HETCOLL_* variable the MPI layer reads (its row in config/settings.cpp), with the value in effect in "
     "this environment");
  m.def("configuration", [] {
    const Configuration c = read_configuration();
    nb::dict values;
    for (const Setting& s : settings()) values[s.name] = value_text(s, c.settings);
    nb::dict d;
    d["settings"] = values;  // every setting as read, by name
    d["explain"] = c.explain();
    d["model_source"] = c.model_source;
    d["overrides"] = c.overrides.str();
    d["table_loaded"] = bool(c.table);
    d["problems"] = c.problems;
    return d;
  }, "what the MPI layer makes of the HETCOLL_* variables in this environment: the values it uses and every "
     "problem, in its words");
  m.def("settings_markdown", &settings_markdown, "the settings as the Markdown table docs/mpi.md shows");
  m.def("unknown_settings", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (auto& u : unknown_settings()) out.emplace_back(u.name, u.suggestion);
    return out;
  }, "HETCOLL_* variables in the environment that nothing reads: (name, nearest known name or '')");

  static nb::exception<InputError> input_error(m, "InputError", PyExc_ValueError);
  static nb::exception<ScheduleError> schedule_error(m, "ScheduleError", PyExc_RuntimeError);
  static nb::exception<TooLarge> too_large(m, "TooLarge", PyExc_RuntimeError);
  m.attr("MAX_RANKS") = kMaxRanks;
  m.attr("MAX_BYTES") = kMaxBytes;
  m.def("parse_bytes", &parse_bytes, "text"_a, "a size in hetcoll's one grammar ('4096', '64k', '1M', '2G') in bytes");
  m.def("format_bytes", &format_bytes, "bytes"_a, "a size as hetcoll writes it: '64 KiB', '1 MiB', '12 B'");
  m.def("format_time", &format_time, "seconds"_a, "a time as hetcoll writes it: '64.8 us', '1.96 ms', '0 s'");
  m.attr("MAX_SCHEDULE_OPS") = kMaxScheduleOps;
  m.def("rooted_ops", [] {
    std::vector<std::string> v;
    for (CollOp op : all_coll_ops())
      if (has_root(op)) v.push_back(coll_op_name(op));
    return v;
  });

  nb::class_<MachineModel>(m, "Model")
      .def_prop_ro("kind", &MachineModel::kind)
      .def_prop_ro("spec", &MachineModel::spec)
      .def_prop_ro("unit", &MachineModel::unit)
      .def_prop_ro("ranks", &MachineModel::ranks)
      .def("message",
           [](const MachineModel& mm, int src, int dst, uint64_t bytes) {
             MessageCost c = mm.message(src, dst, bytes);
             return std::make_tuple(c.send, c.arrive, c.recv);
           },
           "src"_a, "dst"_a, "bytes"_a, "(send busy, arrival after send start, receive busy)")
      .def("reduce_time", &MachineModel::reduce_time, "rank"_a, "bytes"_a)
      .def("postal_lambda", &MachineModel::postal_lambda, "bytes"_a, "src"_a = 0, "dst"_a = -1)
      .def("to_json", [](const MachineModel& mm) { return json::write(mm.to_json(), 2); })
      .def("__repr__", [](const MachineModel& mm) {
        return cat("<hetcoll.Model ", mm.spec(), mm.ranks() > 0 ? cat(", ", mm.ranks(), " ranks") : std::string(),
                   ", times in ", mm.unit(), ">");
      });
  m.def("parse_model", &load_model, "spec"_a, "a model spec, or the path of a model file or profile");
  m.def("group_model", &group_model, "model"_a, "rank_map"_a, "ranks"_a,
        "the model a group of `ranks` ranks sees: mapped by rank_map, or laid out as the probe job was");
  m.def("topology",
        [](const MachineModel& mm) -> nb::object {
          TopologyPtr t = mm.topology();
          if (!t) return nb::none();
          nb::dict d;
          d["host_of_rank"] = t->host_of_rank;
          d["node_of_host"] = t->node_of_host;
          std::vector<int> group_of_host;
          for (int h = 0; h < t->hosts(); ++h) group_of_host.push_back(t->group_of_host(h));
          d["group_of_host"] = group_of_host;
          std::vector<nb::dict> nodes;
          for (const NetNode& n : t->nodes) {
            nb::dict x;
            x["name"] = n.name;
            x["parent"] = n.parent;
            x["up"] = n.up;
            x["down"] = n.down;
            x["fabric"] = n.fabric;
            x["depth"] = n.depth;
            x["host"] = n.host;
            nodes.push_back(x);
          }
          d["nodes"] = nodes;
          d["connection"] = t->connection;
          d["latency_sharing"] = t->latency_sharing;
          d["ring_position"] = t->ring_position;
          std::vector<nb::dict> links;
          for (size_t l = 0; l < t->links.size(); ++l) {
            nb::dict x;
            x["name"] = t->links[l].name;
            x["bandwidth"] = t->links[l].bandwidth;
            x["latency"] = t->links[l].latency;
            x["never_limits"] = !t->never_limits.empty() && t->never_limits[l];
            links.push_back(x);
          }
          d["links"] = links;
          return d;
        },
        "model"_a,
        "the model's network tree (ranks on hosts, hosts the leaves, switches above, each edge's links, "
        "fabrics), or None");
  m.def("analytic",
        [](const std::string& op, const MachineModel& mm, int ranks, int root, uint64_t bytes, const std::string& tree) {
          AnalyticResult r;
          {
            nb::gil_scoped_release release;
            if (op == "scatter") r = banikazemi_scatter(mm, ranks, root, bytes);
            else if (op == "gather") r = banikazemi_gather(mm, ranks, root, bytes);
            else if (op == "bcast") {
              Tree t;
              auto k_of = [&](const std::string& s) {
                const int k = std::atoi(s.c_str() + s.find(':') + 1);
                if (k < 2 || k > 1024) throw InputError(cat("tree ", s, ": K must be 2 to 1024"));
                return k;
              };
              if (tree == "binomial") t = binomial_tree(ranks);
              else if (tree == "star" || tree == "sequential") t = star_tree(ranks);
              else if (tree == "chain") t = chain_tree(ranks);
              else if (tree.rfind("kary:", 0) == 0) t = kary_tree(ranks, k_of(tree));
              else if (tree.rfind("knomial:", 0) == 0) t = knomial_tree(ranks, k_of(tree));
              else throw InputError(cat("unknown tree '", tree, "' (binomial, star, chain, kary:K, knomial:K)"));
              r = banikazemi_bcast(mm, t, root, bytes);
            } else {
              throw InputError(cat("Banikazemi's models cover bcast, scatter and gather, not '", op, "'"));
            }
          }
          return std::make_pair(r.time, r.per_rank);
        },
        "op"_a, "model"_a, "ranks"_a, "root"_a, "bytes"_a, "tree"_a = "binomial",
        "Banikazemi et al. eqs. 6-12: (completion time, per-rank times) of bcast over a tree, scatter over a "
        "sequential tree, gather over a reverse sequential tree");
  m.def("model_spec_help", &model_spec_help);

  nb::class_<Collective>(m, "Collective")
      .def_prop_ro("op", [](const Collective& c) { return std::string(coll_op_name(c.op)); })
      .def_ro("nranks", &Collective::nranks)
      .def_ro("root", &Collective::root)
      .def_ro("count", &Collective::count)
      .def_ro("elem_size", &Collective::elem_size)
      .def_ro("order_free", &Collective::order_free)
      .def("describe", &Collective::describe)
      .def("to_json", [](const Collective& c) { return c.to_json().dump(); })
      .def("__repr__", [](const Collective& c) {
        return cat("<hetcoll.Collective ", c.describe(), " (", format_bytes(c.size_bytes()), " a rank)>");
      });
  m.def("collective", &make_collective, "op"_a, "ranks"_a, "count"_a, "root"_a = 0, "elem_size"_a = 1,
        "order_free"_a = false);
  m.def("collective_ops", [] {
    std::vector<std::string> v;
    for (CollOp op : all_coll_ops()) v.push_back(coll_op_name(op));
    return v;
  }, "the collectives, in include/hetcoll_collectives.def's order");
  m.def("regular_collective_ops", [] {
    std::vector<std::string> v;
    for (CollOp op : all_coll_ops())
      if (base_form(op) == op) v.push_back(coll_op_name(op));
    return v;
  }, "the collectives in their regular forms (no v-variant, no exscan): what tune and bench time by default");
  m.def("is_reduction", [](const std::string& op) { return is_reduction(coll_op_from_name(op)); },
        "whether the collective combines contributions with an operator");

  nb::class_<SimResult>(m, "SimResult")
      .def_ro("unit", &SimResult::unit)
      .def_ro("makespan", &SimResult::makespan)
      .def_ro("rank_finish", &SimResult::rank_finish)
      .def_ro("start", &SimResult::start)
      .def_ro("end", &SimResult::end)
      .def("__repr__", [](const SimResult& r) {
        return cat("<hetcoll.SimResult makespan ", r.unit == "s" ? format_time(r.makespan) : cat(r.makespan, " steps"),
                   " on ", r.rank_finish.size(), " ranks>");
      });

  nb::class_<Schedule>(m, "Schedule")
      .def_ro("algorithm", &Schedule::algorithm)
      .def_ro("collective", &Schedule::coll)
      .def_prop_ro("nranks", &Schedule::nranks)
      .def_prop_ro("total_ops", &Schedule::total_ops)
      .def_prop_ro("message_count", &Schedule::message_count)
      .def_prop_ro("bytes_sent", &Schedule::bytes_sent)
      .def("first_op", &Schedule::first_op, "rank"_a)
      .def("ops",
           [](const Schedule& s, int r) {
             if (r < 0 || r >= s.nranks()) throw InputError(cat("rank ", r, " is not in the group"));
             std::vector<nb::dict> out;
             for (size_t i = 0; i < s.num_ops(r); ++i) {
               const Op& o = s.op(r, i);
               nb::dict d;
               d["kind"] = std::string(op_kind_name(o.kind));
               d["peer"] = o.peer;
               d["slice"] = o.slice().str();
               d["bytes"] = o.len;
               if (o.kind == OpKind::reduce || o.kind == OpKind::copy) d["src"] = o.src().str();
               d["after"] = std::vector<uint32_t>(s.deps_begin(r, i), s.deps_end(r, i));
               out.push_back(d);
             }
             return out;
           },
           "rank"_a)
      .def("traffic",
           [](const Schedule& s, int r) {
             // A rank's sends and receives in program order: (is_send, peer, bytes).
             if (r < 0 || r >= s.nranks()) throw InputError(cat("rank ", r, " is not in the group"));
             std::vector<std::tuple<bool, int, uint64_t>> out;
             for (size_t i = 0; i < s.num_ops(r); ++i) {
               const Op& o = s.op(r, i);
               if (o.kind == OpKind::send || o.kind == OpKind::recv) out.emplace_back(o.kind == OpKind::send, o.peer, o.len);
             }
             return out;
           },
           "rank"_a)
      .def("messages",
           [](const Schedule& s) {
             // (sender, send op, receiver, recv op, bytes) for every message.
             Matching mt = match_messages(s, 4);
             if (!mt.errors.empty()) throw ScheduleError(mt.errors.front());
             std::vector<std::tuple<int, uint64_t, int, uint64_t, uint64_t>> out;
             for (int r = 0; r < s.nranks(); ++r)
               for (size_t i = 0; i < s.num_ops(r); ++i) {
                 const Op& o = s.op(r, i);
                 if (o.kind != OpKind::send) continue;
                 uint64_t rg = mt.partner[s.first_op(r) + i];
                 out.emplace_back(r, i, o.peer, rg - s.first_op(o.peer), o.len);
               }
             return out;
           })
      .def("broadcast_tree",
           [](const Schedule& s, const SimResult& sim) -> nb::object {
             // If every rank but one receives exactly one message: the tree,
             // as arrays by rank (parent -1 at the root; when the parent
             // started the send; when the data is usable) and each rank's
             // children in the order they were sent to (CSR). Else None.
             const int n = s.nranks();
             if (s.message_count() != uint64_t(std::max(n - 1, 0))) return nb::none();
             if (sim.start.size() != s.total_ops() || sim.end.size() != s.total_ops())
               throw InputError("broadcast_tree needs the simulation's timeline");
             Matching mt = match_messages(s, 4);
             if (!mt.errors.empty()) throw ScheduleError(mt.errors.front());
             std::vector<int> parent(size_t(n), -1);
             std::vector<double> sent(size_t(n), 0.0), received(size_t(n), 0.0);
             for (int r = 0; r < n; ++r)
               for (size_t i = 0; i < s.num_ops(r); ++i) {
                 const Op& o = s.op(r, i);
                 if (o.kind != OpKind::send) continue;
                 const uint64_t g = s.first_op(r) + i, rg = mt.partner[g];
                 if (parent[size_t(o.peer)] >= 0) return nb::none();
                 parent[size_t(o.peer)] = r;
                 sent[size_t(o.peer)] = sim.start[g];
                 received[size_t(o.peer)] = sim.end[rg];
               }
             int roots = 0;
             for (int r = 0; r < n; ++r) roots += parent[size_t(r)] < 0;
             if (roots != 1) return nb::none();
             std::vector<uint64_t> child_at(size_t(n) + 1, 0);
             for (int r = 0; r < n; ++r)
               if (parent[size_t(r)] >= 0) ++child_at[size_t(parent[size_t(r)]) + 1];
             for (int r = 0; r < n; ++r) child_at[size_t(r) + 1] += child_at[size_t(r)];
             std::vector<int> children(child_at[size_t(n)]);
             std::vector<uint64_t> fill(child_at.begin(), child_at.end() - 1);
             for (int r = 0; r < n; ++r)
               if (parent[size_t(r)] >= 0) children[fill[size_t(parent[size_t(r)])]++] = r;
             for (int r = 0; r < n; ++r)
               std::sort(children.begin() + long(child_at[size_t(r)]), children.begin() + long(child_at[size_t(r) + 1]),
                         [&](int a, int b) { return std::make_pair(sent[size_t(a)], a) < std::make_pair(sent[size_t(b)], b); });
             nb::dict d;
             d["parent"] = parent;
             d["sent"] = sent;
             d["received"] = received;
             d["child_at"] = child_at;
             d["children"] = children;
             return d;
           },
           "sim"_a)
      .def("validate",
           [](const Schedule& s, uint64_t work_limit) {
             ValidationOptions o;
             o.work_limit = work_limit;
             return report_dict(validate(s, o));
           },
           "work_limit"_a = 0,
           "every buffer access and message checked; work_limit > 0 raises TooLarge past that many steps")
      .def("simulate",
           [](const Schedule& s, const MachineModel& mm, bool timeline) {
             nb::gil_scoped_release release;
             SimOptions o;
             o.timeline = timeline;
             return simulate(s, mm, o);
           },
           "model"_a, "timeline"_a = true)
      .def("to_text", [](const Schedule& s) { return to_text(s); })
      .def("to_json", [](const Schedule& s, int indent) { return to_json(s, indent); }, "indent"_a = -1)
      .def("__repr__", [](const Schedule& s) {
        return cat("<hetcoll.Schedule ", s.algorithm, " for ", s.coll.describe(), ": ", s.total_ops(), " ops, ",
                   s.message_count(), " messages, ", format_bytes(s.bytes_sent()), ">");
      });
  m.def("schedule_from_text", &from_text, "text"_a);
  m.def("schedule_from_json", &from_json, "text"_a);

  m.def("algorithms", [] {
    std::vector<nb::dict> v;
    for (auto& a : registry()) v.push_back(algorithm_dict(a));
    return v;
  });
  m.def("algorithm_names_for", [](const std::string& op) {
    std::vector<std::string> v;
    for (auto* a : algorithms_for(coll_op_from_name(op))) v.push_back(a->name);
    return v;
  });
  m.def("generate",
        [](const std::string& spec, const Collective& c, const MachineModel& mm, size_t op_limit, int rank) {
          nb::gil_scoped_release release;
          if (rank < -1 || rank >= c.nranks) throw InputError(cat("rank ", rank, " is not in the group"));
          return build_schedule(spec, c, mm, rank, op_limit);
        },
        "algorithm"_a, "collective"_a, "model"_a, "op_limit"_a = 0, "rank"_a = -1,
        "the schedule; op_limit > 0 raises TooLarge beyond that many ops; rank >= 0 builds only that rank's "
        "program (as the MPI layer does)");

  m.def("rounds_price",
        [](const std::string& spec, const Collective& c, const MachineModel& mm) -> std::optional<double> {
          nb::gil_scoped_release release;
          const AlgorithmChoice ch = choose_algorithm(spec, c.op);
          if (!ch.algorithm->rounds) return std::nullopt;
          c.check();
          check_model_fits(c, mm);
          GenContext ctx{c, mm, ch.params, -1, 0, &planned_phases()};
          const std::vector<Round> rounds = ch.algorithm->rounds(ctx);
          if (rounds.empty()) return std::nullopt;
          return price_rounds(mm, c.nranks, rounds).time;
        },
        "algorithm"_a, "collective"_a, "model"_a,
        "the algorithm's price from its rounds on the model (sim/rounds.hpp), without building the schedule; "
        "None where the algorithm has no rounds for this call");
  m.def("bound",
        [](const Collective& c, const MachineModel& mm) {
          Bound b;
          {
            nb::gil_scoped_release release;
            b = lower_bound(c, mm);
          }
          nb::dict d;
          d["bound"] = b.time;
          d["cut"] = b.cut;
          d["bytes"] = b.bytes;
          d["capacity"] = b.capacity;
          d["overheads"] = b.overheads;
          d["constraints"] = b.constraints;
          d["network"] = b.network;
          return d;
        },
        "collective"_a, "model"_a,
        "the physical bound (model/bound.hpp): the least time any schedule of the call can take on the model, "
        "with the constraint that binds");
  m.def("pack_trees",
        [](const MachineModel& mm, int root_host, bool towards_root, int max_trees) {
          TopologyPtr t = mm.topology();
          if (!t) throw InputError("pack_trees: the model has no topology");
          TreePacking tp;
          {
            nb::gil_scoped_release release;
            tp = pack_trees(*t, root_host, towards_root ? TreeDirection::in : TreeDirection::out, max_trees);
          }
          nb::list trees;
          for (const PackedTree& pt : tp.trees) {
            nb::dict d;
            d["parent"] = pt.parent;
            d["share"] = pt.share;
            d["depth"] = pt.depth;
            trees.append(d);
          }
          nb::dict d;
          d["trees"] = trees;
          d["rate"] = tp.rate;
          d["bottleneck"] = tp.bottleneck;
          return d;
        },
        "model"_a, "root_host"_a = 0, "towards_root"_a = false, "max_trees"_a = 8,
        "spanning trees of the model's hosts packed on its links (model/tree_packing.hpp): per tree the parent "
        "host of each host and its share of the data; the rate they carry together (bytes/s) and the busiest link");
  m.def("plan",
        [](const Collective& c, const MachineModel& mm, bool explain, bool with_unpriced) -> nb::object {
          PlanResult pr;
          {
            nb::gil_scoped_release release;
            PlanOptions opt;
            opt.explain = explain;
            pr = plan(c, mm, opt);
          }
          if (!with_unpriced) return nb::cast(candidate_dicts(pr));
          nb::dict d;
          d["candidates"] = candidate_dicts(pr);
          d["unpriced"] = pr.skipped;
          return d;
        },
        "collective"_a, "model"_a, "explain"_a = false, "with_unpriced"_a = false,
        "all candidates for this very call, best first; with_unpriced: a dict of them and the settings that "
        "could not be priced (too large to simulate within the decision, no estimate, or not fitting the call)");

  m.def("decide",
        [](const Collective& c, std::shared_ptr<MachineModel> mm, const std::string& overrides,
           const std::string& table) {
          Decision d;
          Collective rep;
          std::vector<std::string> problems;
          {
            nb::gil_scoped_release release;
            const Overrides ov = Overrides::parse(overrides);
            std::shared_ptr<const DecisionTable> t;
            if (!table.empty()) {
              t = decision_table_for(table, *mm, ov, problems);
              if (!t) throw InputError(problems.back());
            }
            Planner planner(mm, ov, t);
            d = planner.decide(c);
            rep = representative(c);
          }
          nb::dict out;
          out["algorithm"] = d.algorithm;
          out["predicted"] = d.predicted;
          out["runner_up"] = d.runner_up;
          out["runner_up_predicted"] = d.runner_up_predicted;
          out["forced"] = d.forced;
          out["native"] = d.native();
          out["note"] = d.note;
          out["measured"] = d.measured;
          out["measured_time"] = d.measured_time;
          out["native_time"] = d.native_time;
          out["from_table"] = d.from_table;
          out["problems"] = problems;
          out["representative"] = rep;
          out["size_class"] = counts_known_everywhere(c.op) ? size_class(c.size_bytes()) : -1;
          if (d.weighed) out["candidates"] = candidate_dicts(*d.weighed);
          else out["candidates"] = nb::none();
          return out;
        },
        "collective"_a, "model"_a, "overrides"_a = "", "table"_a = "",
        "the decision the MPI layer makes for this call, by the same decision point: overrides (HETCOLL_ALGO), a "
        "measured decision of a profile, a decision table (HETCOLL_TABLE: 'table'), then the best candidate for the "
        "call's size class (planned on 'representative'); 'problems': what the MPI layer would say of the table");
  m.def("decision_table",
        [](const MachineModel& mm, const std::vector<int>& ranks, const std::vector<std::string>& ops,
           uint64_t max_bytes, const std::vector<uint32_t>& elems) {
          std::vector<CollOp> cops;
          for (auto& o : ops) cops.push_back(coll_op_from_name(o));
          ModelPtr model = parse_model(mm.spec());
          nb::gil_scoped_release release;
          return json::write(build_decision_table(model, ranks, cops, max_bytes, elems).to_json(), 1);
        },
        "model"_a, "ranks"_a, "ops"_a, "max_bytes"_a, "elem_sizes"_a,
        "the planner's decisions for these group sizes, collectives (root 0), element sizes and every size class up "
        "to max_bytes, as the JSON the MPI layer loads (HETCOLL_TABLE)");
  m.def("check_decision_table",
        [](const std::string& path, const MachineModel& mm) {
          DecisionTable t = load_decision_table(path);
          nb::dict d;
          d["entries"] = t.entries.size();
          d["model"] = t.model;
          d["version"] = t.version;
          d["mismatch"] = table_mismatch(t, mm, 0);
          return d;
        },
        "path"_a, "model"_a, "load and check a decision table file; 'mismatch' says why it would not serve this model");
  // Machine profiles: read and checked by the C++ reader (one place), given
  // to Python as the JSON text it would write.
  m.def("load_profile",
        [](const std::string& path, bool with_pairs) { return profile_to_json(load_profile(path, with_pairs)); },
        "path"_a, "with_pairs"_a = true, "a profile, checked, as JSON text (InputError when it is not one)");
  m.def("profile_as_tree",
        [](const std::string& path) {
          Profile p = load_profile(path, false);
          if (p.network.empty()) {
            p.network = network_from_classes(p, {});
            p.version = 2;
          }
          return profile_to_json(p);
        },
        "path"_a,
        "a profile, checked, as JSON text with its network as a tree (version 2): a version 1 profile's classes "
        "drawn as the model draws them (network_from_classes), a version 2 profile as it is");
  // One way to write a profile (tuned_decisions.hpp: through a temporary
  // file, what is written read back first), for hetcoll correct as for tune.
  m.def("check_profile_writable", &check_profile_writable, "path"_a,
        "raises when a profile could not be written to path (said before the work that makes it)");
  m.def("write_profile",
        [](const std::string& text, const std::string& path) { write_profile_file(parse_profile(text), path); },
        "text"_a, "path"_a, "a profile's JSON text, checked, written to path through a temporary file");
  m.def("profile_format", [] { return std::make_pair(std::string(kProfileFormat), kProfileVersion); });
  m.def("partition_subnets",
        [](const std::vector<double>& cost, size_t n, double threshold) {
          SubnetPartition p = partition_subnets(cost, n, threshold);
          nb::dict d;
          d["subnet_of"] = p.subnet_of;
          d["groups"] = p.groups;
          d["threshold"] = p.threshold;
          d["gap"] = p.gap;
          d["max_inside"] = p.max_inside;
          d["min_between"] = p.min_between;
          return d;
        },
        "cost"_a, "n"_a, "threshold"_a = kEcoThreshold, "ECO's subnet partition (Fig. 2) of an n x n cost matrix");
  m.def("ring_order",
        [](const std::vector<double>& cost, size_t n, const std::vector<int>& subnet_of) {
          RingOrder r = ring_order(cost, n, subnet_of);
          return std::make_pair(r.hosts, r.crossings);
        },
        "cost"_a, "n"_a, "subnet_of"_a, "a ring crossing subnet boundaries as few times as possible");
  m.def("size_bytes", [](const Collective& c) { return c.size_bytes(); }, "collective"_a);
  m.def("size_class", &size_class, "bytes"_a, "the planner's size class of a call of this many bytes");
  m.def("size_class_floor", &size_class_floor, "cls"_a, "the smallest size of a class");

  // Postal-model mathematics (Bruck et al.).
  nb::module_ p = m.def_submodule("postal", "postal-model mathematics (Bruck et al. 1996)");
  p.attr("MAX_LAMBDA") = postal::kMaxLambda;
  p.def("N", &postal::N, "lam"_a, "t"_a);
  p.def("T", &postal::T, "lam"_a, "n"_a);
  p.def("gamma", &postal::gamma, "lam"_a);
  p.def("break_even", &postal::break_even, "floor_lambda"_a);
  p.def("prefer_delay_send", &postal::prefer_delay_send, "lam"_a);
  p.def("T_delay_receive", &postal::T_delay_receive, "lam"_a, "n"_a);
  p.def("T_delay_send", &postal::T_delay_send, "lam"_a, "n"_a);
  p.def("alpha_ranges", [](double lam, uint64_t max_n) {
    std::vector<nb::dict> out;
    for (auto& r : postal::alpha_ranges(lam, max_n)) {
      nb::dict d;
      d["n"] = r.n;
      d["t"] = r.t;
      d["n_min"] = r.n_min;
      d["n_max"] = r.n_max;
      d["alpha_lo"] = r.alpha_lo;
      d["alpha_hi"] = r.alpha_hi;
      d["tight"] = r.tight;
      out.push_back(d);
    }
    return out;
  }, "lam"_a, "max_n"_a);
  p.def("alpha_table", [](double lam, uint64_t max_n) {
    postal::AlphaTable t(lam, max_n);
    std::vector<std::tuple<uint64_t, uint64_t, double>> entries;
    for (auto& e : t.entries()) entries.emplace_back(e.n_from, e.n_to, e.alpha);
    return std::make_pair(entries, t.sizes());
  }, "lam"_a, "max_n"_a, "(entries (n_from, n_to, alpha), table size needed for n = 2..max_n)");
}
