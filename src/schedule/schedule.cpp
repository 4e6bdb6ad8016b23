#include "schedule/schedule.hpp"

#include <sstream>

#include "util/error.hpp"

namespace hetcoll {

const char* buf_name(Buf b) {
  switch (b) {
    case Buf::in: return "in";
    case Buf::out: return "out";
    case Buf::tmp: return "tmp";
  }
  return "?";
}

Buf buf_from_name(const std::string& name) {
  if (name == "in") return Buf::in;
  if (name == "out") return Buf::out;
  if (name == "tmp") return Buf::tmp;
  throw InputError(cat("unknown buffer '", name, "' (in, out, tmp)"));
}

std::string Slice::str() const { return cat(buf_name(buf), "[", off, ":", off + len, "]"); }

const char* op_kind_name(OpKind k) {
  switch (k) {
    case OpKind::send: return "send";
    case OpKind::recv: return "recv";
    case OpKind::reduce: return "reduce";
    case OpKind::copy: return "copy";
  }
  return "?";
}

uint64_t Schedule::buffer_bytes(int r, Buf b) const {
  switch (b) {
    case Buf::in: return coll.in_bytes(r);
    case Buf::out: return coll.out_bytes(r);
    case Buf::tmp: return tmp_bytes(r);
  }
  return 0;
}

uint64_t Schedule::message_count() const {
  uint64_t n = 0;
  for (auto& o : ops_) n += o.kind == OpKind::send;
  return n;
}

uint64_t Schedule::bytes_sent() const {
  uint64_t n = 0;
  for (auto& o : ops_)
    if (o.kind == OpKind::send) n += o.len;
  return n;
}

Dependents build_dependents(const Schedule& s) {
  Dependents d;
  const uint64_t N = s.total_ops();
  d.begin.assign(N + 1, 0);
  for (int r = 0; r < s.nranks(); ++r)
    for (size_t i = 0; i < s.num_ops(r); ++i)
      for (auto* x = s.deps_begin(r, i); x != s.deps_end(r, i); ++x) ++d.begin[s.first_op(r) + *x + 1];
  for (uint64_t g = 0; g < N; ++g) d.begin[g + 1] += d.begin[g];
  d.list.resize(d.begin[N]);
  std::vector<uint64_t> fill(d.begin.begin(), d.begin.end() - 1);
  for (int r = 0; r < s.nranks(); ++r)
    for (size_t i = 0; i < s.num_ops(r); ++i)
      for (auto* x = s.deps_begin(r, i); x != s.deps_end(r, i); ++x)
        d.list[fill[s.first_op(r) + *x]++] = s.first_op(r) + i;
  return d;
}

Schedule schedule_from_parts(Collective coll, std::string algorithm, std::vector<std::vector<Op>> ops,
                             std::vector<std::vector<std::vector<uint32_t>>> deps, std::vector<uint64_t> tmp) {
  coll.check();
  const size_t n = size_t(coll.nranks);
  if (ops.size() != n || deps.size() != n || tmp.size() != n)
    throw InputError(cat("schedule lists ", ops.size(), " ranks for a group of ", n));
  Schedule s;
  s.coll = std::move(coll);
  s.algorithm = std::move(algorithm);
  s.rank_begin_.assign(n + 1, 0);
  for (size_t r = 0; r < n; ++r) {
    if (deps[r].size() != ops[r].size()) throw InputError(cat("rank ", r, ": dependency lists do not match ops"));
    for (size_t i = 0; i < ops[r].size(); ++i) {
      Op o = ops[r][i];
      o.dep_begin = uint32_t(s.deps_.size());
      o.dep_count = uint32_t(deps[r][i].size());
      for (uint32_t d : deps[r][i])
        if (d >= i) throw InputError(cat("rank ", r, " op ", i, " depends on op ", d, ", which is not earlier"));
      s.deps_.insert(s.deps_.end(), deps[r][i].begin(), deps[r][i].end());
      s.ops_.push_back(o);
    }
    s.rank_begin_[r + 1] = s.ops_.size();
  }
  s.tmp_bytes_ = std::move(tmp);
  return s;
}

// ---------------------------------------------------------------- text form

std::string to_text(const Schedule& s) {
  std::ostringstream os;
  os << "# hetcoll schedule v1\n";
  os << "algorithm " << (s.algorithm.empty() ? "-" : s.algorithm) << "\n";
  os << "collective " << s.coll.to_json().dump() << "\n";
  for (int r = 0; r < s.nranks(); ++r) {
    os << "rank " << r << " tmp=" << s.tmp_bytes(r) << "\n";
    for (size_t i = 0; i < s.num_ops(r); ++i) {
      const Op& o = s.op(r, i);
      os << "  " << i << ": " << op_kind_name(o.kind) << ' ';
      switch (o.kind) {
        case OpKind::send: os << "to " << o.peer << ' ' << o.slice().str() << (o.serial ? " serial" : ""); break;
        case OpKind::recv: os << "from " << o.peer << ' ' << o.slice().str(); break;
        case OpKind::reduce: os << o.slice().str() << " += " << o.src().str(); break;
        case OpKind::copy: os << o.slice().str() << " = " << o.src().str(); break;
      }
      if (o.dep_count) {
        os << " after ";
        for (auto* d = s.deps_begin(r, i); d != s.deps_end(r, i); ++d) os << (d == s.deps_begin(r, i) ? "" : ",") << *d;
      }
      os << '\n';
    }
  }
  return os.str();
}

namespace {

[[noreturn]] void text_error(size_t line, const std::string& msg) {
  throw InputError(cat("schedule text, line ", line, ": ", msg));
}

uint64_t to_u64(const std::string& t, size_t line) {
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos)
    text_error(line, cat("'", t, "' is not a non-negative integer"));
  return std::stoull(t);
}

Slice parse_slice(const std::string& t, size_t line) {
  auto lb = t.find('['), colon = t.find(':'), rb = t.find(']');
  if (lb == std::string::npos || colon == std::string::npos || rb != t.size() - 1 || colon < lb)
    text_error(line, cat("'", t, "' is not a slice like out[0:64]"));
  Slice s;
  try {
    s.buf = buf_from_name(t.substr(0, lb));
  } catch (const InputError& e) {
    text_error(line, e.what());
  }
  uint64_t a = to_u64(t.substr(lb + 1, colon - lb - 1), line), b = to_u64(t.substr(colon + 1, rb - colon - 1), line);
  if (b < a) text_error(line, cat("slice '", t, "' ends before it starts"));
  s.off = a;
  s.len = b - a;
  return s;
}

}  // namespace

Schedule from_text(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  size_t lineno = 0;
  std::string algorithm;
  Collective coll;
  bool have_coll = false;
  std::vector<std::vector<Op>> ops;
  std::vector<std::vector<std::vector<uint32_t>>> deps;
  std::vector<uint64_t> tmp;
  int current = -1;
  while (std::getline(in, line)) {
    ++lineno;
    auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream ls(line.substr(first));
    std::string word;
    ls >> word;
    if (word == "algorithm") {
      ls >> algorithm;
      if (algorithm == "-") algorithm.clear();
    } else if (word == "collective") {
      std::string rest;
      std::getline(ls, rest);
      try {
        coll = Collective::from_json(json::parse(rest));
      } catch (const InputError& e) {
        text_error(lineno, e.what());
      }
      have_coll = true;
      ops.assign(size_t(coll.nranks), {});
      deps.assign(size_t(coll.nranks), {});
      tmp.assign(size_t(coll.nranks), 0);
    } else if (word == "rank") {
      if (!have_coll) text_error(lineno, "'rank' before 'collective'");
      std::string r, t;
      ls >> r >> t;
      uint64_t rr = to_u64(r, lineno);
      if (rr >= ops.size()) text_error(lineno, cat("rank ", rr, " outside the group of ", ops.size()));
      if (int(rr) != current + 1) text_error(lineno, cat("expected rank ", current + 1, ", got ", rr));
      current = int(rr);
      if (t.rfind("tmp=", 0) != 0) text_error(lineno, "expected tmp=BYTES after the rank");
      tmp[rr] = to_u64(t.substr(4), lineno);
    } else {
      if (current < 0) text_error(lineno, cat("op before any 'rank' line: '", line, "'"));
      if (word.empty() || word.back() != ':') text_error(lineno, cat("expected 'INDEX:', got '", word, "'"));
      uint64_t idx = to_u64(word.substr(0, word.size() - 1), lineno);
      auto& rank_ops = ops[size_t(current)];
      if (idx != rank_ops.size()) text_error(lineno, cat("expected op index ", rank_ops.size(), ", got ", idx));
      std::string kind;
      ls >> kind;
      Op o;
      if (kind == "send" || kind == "recv") {
        std::string dir, peer, sl;
        ls >> dir >> peer >> sl;
        if (dir != (kind == "send" ? "to" : "from"))
          text_error(lineno, cat("expected '", kind == "send" ? "to" : "from", "' after ", kind));
        o.kind = kind == "send" ? OpKind::send : OpKind::recv;
        o.peer = int32_t(to_u64(peer, lineno));
        Slice s = parse_slice(sl, lineno);
        o.buf = s.buf;
        o.off = s.off;
        o.len = s.len;
      } else if (kind == "reduce" || kind == "copy") {
        std::string dst, sym, src;
        ls >> dst >> sym >> src;
        if (sym != (kind == "reduce" ? "+=" : "="))
          text_error(lineno, cat("expected '", kind == "reduce" ? "+=" : "=", "' in ", kind));
        Slice d = parse_slice(dst, lineno), s = parse_slice(src, lineno);
        if (d.len != s.len) text_error(lineno, "source and destination differ in length");
        o.kind = kind == "reduce" ? OpKind::reduce : OpKind::copy;
        o.buf = d.buf;
        o.off = d.off;
        o.len = d.len;
        o.src_buf = s.buf;
        o.src_off = s.off;
      } else {
        text_error(lineno, cat("unknown op '", kind, "' (send, recv, reduce, copy)"));
      }
      std::vector<uint32_t> d;
      std::string kw;
      if (o.kind == OpKind::send && ls >> kw) {
        if (kw == "serial") {
          o.serial = true;
          kw.clear();
          ls >> kw;
        }
      } else {
        ls >> kw;
      }
      if (!kw.empty()) {
        if (kw != "after") text_error(lineno, cat("unexpected '", kw, "'"));
        std::string list;
        ls >> list;
        std::stringstream ds(list);
        std::string item;
        while (std::getline(ds, item, ',')) d.push_back(uint32_t(to_u64(item, lineno)));
      }
      std::string extra;
      if (ls >> extra) text_error(lineno, cat("unexpected '", extra, "'"));
      rank_ops.push_back(o);
      deps[size_t(current)].push_back(std::move(d));
    }
  }
  if (!have_coll) throw InputError("schedule text has no 'collective' line");
  if (current + 1 != coll.nranks)
    throw InputError(cat("schedule text lists ", current + 1, " ranks for a group of ", coll.nranks));
  return schedule_from_parts(coll, algorithm, std::move(ops), std::move(deps), std::move(tmp));
}

// ---------------------------------------------------------------- JSON form

namespace {
json::Value slice_json(const Slice& s) {
  json::Value a = json::Value::array();
  a.push_back(buf_name(s.buf));
  a.push_back(json::Value(s.off));
  a.push_back(json::Value(s.len));
  return a;
}

Slice slice_from(const json::Value& v, const char* what) {
  if (!v.is_array() || v.size() != 3) throw InputError(cat(what, ": a slice is [buffer, offset, length]"));
  return {buf_from_name(json::as_string(v[0], what)), json::as_uint(v[1], what), json::as_uint(v[2], what)};
}
}  // namespace

std::string to_json(const Schedule& s, int indent) {
  json::Value v = json::Value::object();
  v["format"] = "hetcoll-schedule";
  v["version"] = 1;
  v["algorithm"] = s.algorithm;
  v["collective"] = s.coll.to_json();
  json::Value ranks = json::Value::array();
  for (int r = 0; r < s.nranks(); ++r) {
    json::Value rv = json::Value::object();
    rv["tmp"] = json::Value(s.tmp_bytes(r));
    json::Value ops = json::Value::array();
    for (size_t i = 0; i < s.num_ops(r); ++i) {
      const Op& o = s.op(r, i);
      json::Value ov = json::Value::object();
      ov["op"] = op_kind_name(o.kind);
      switch (o.kind) {
        case OpKind::send:
          ov["to"] = o.peer;
          if (o.serial) ov["serial"] = true;
          ov["src"] = slice_json(o.slice());
          break;
        case OpKind::recv:
          ov["from"] = o.peer;
          ov["dst"] = slice_json(o.slice());
          break;
        case OpKind::reduce:
        case OpKind::copy:
          ov["dst"] = slice_json(o.slice());
          ov["src"] = slice_json(o.src());
          break;
      }
      if (o.dep_count) {
        json::Value d = json::Value::array();
        for (auto* p = s.deps_begin(r, i); p != s.deps_end(r, i); ++p) d.push_back(json::Value(*p));
        ov["after"] = d;
      }
      ops.push_back(ov);
    }
    rv["ops"] = ops;
    ranks.push_back(rv);
  }
  v["ranks"] = ranks;
  return json::write(v, indent);
}

Schedule from_json(const std::string& text) {
  json::Value v = json::parse(text);
  if (!json::find(v, "format") || json::as_string(json::at(v, "format"), "format") != "hetcoll-schedule")
    throw InputError("not a hetcoll schedule (missing \"format\": \"hetcoll-schedule\")");
  if (json::as_int(json::at(v, "version"), "version") != 1)
    throw InputError(cat("unsupported schedule version ", json::as_int(json::at(v, "version"), "version")));
  Collective coll = Collective::from_json(json::at(v, "collective"));
  auto& ranks = json::as_array(json::at(v, "ranks"), "ranks");
  if (int(ranks.size()) != coll.nranks)
    throw InputError(cat("schedule lists ", ranks.size(), " ranks for a group of ", coll.nranks));
  std::vector<std::vector<Op>> ops(ranks.size());
  std::vector<std::vector<std::vector<uint32_t>>> deps(ranks.size());
  std::vector<uint64_t> tmp(ranks.size());
  for (size_t r = 0; r < ranks.size(); ++r) {
    tmp[r] = json::as_uint(json::at(ranks[r], "tmp"), "tmp");
    for (auto& ov : json::as_array(json::at(ranks[r], "ops"), "ops")) {
      Op o;
      const std::string& kind = json::as_string(json::at(ov, "op"), "op");
      if (kind == "send") {
        o.kind = OpKind::send;
        o.peer = int32_t(json::as_int(json::at(ov, "to"), "to"));
        if (auto* sr = json::find(ov, "serial")) o.serial = json::as_bool(*sr, "serial");
        Slice s = slice_from(json::at(ov, "src"), "src");
        o.buf = s.buf; o.off = s.off; o.len = s.len;
      } else if (kind == "recv") {
        o.kind = OpKind::recv;
        o.peer = int32_t(json::as_int(json::at(ov, "from"), "from"));
        Slice s = slice_from(json::at(ov, "dst"), "dst");
        o.buf = s.buf; o.off = s.off; o.len = s.len;
      } else if (kind == "reduce" || kind == "copy") {
        o.kind = kind == "reduce" ? OpKind::reduce : OpKind::copy;
        Slice d = slice_from(json::at(ov, "dst"), "dst"), s = slice_from(json::at(ov, "src"), "src");
        if (d.len != s.len) throw InputError(cat("rank ", r, ": ", kind, " source and destination differ in length"));
        o.buf = d.buf; o.off = d.off; o.len = d.len;
        o.src_buf = s.buf; o.src_off = s.off;
      } else {
        throw InputError(cat("rank ", r, ": unknown op '", kind, "' (send, recv, reduce, copy)"));
      }
      std::vector<uint32_t> d;
      if (auto* a = json::find(ov, "after"))
        for (auto& x : json::as_array(*a, "after")) d.push_back(uint32_t(json::as_uint(x, "after")));
      ops[r].push_back(o);
      deps[r].push_back(std::move(d));
    }
  }
  return schedule_from_parts(coll, json::as_string(json::at(v, "algorithm"), "algorithm"), std::move(ops), std::move(deps),
                             std::move(tmp));
}

}  // namespace hetcoll
