#include "util/json.hpp"

#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include "util/error.hpp"

namespace hetcoll::json {

namespace {

const char* type_name(const Value& v) {
  switch (v.type()) {
    case Value::value_t::null: return "null";
    case Value::value_t::boolean: return "boolean";
    case Value::value_t::number_integer:
    case Value::value_t::number_unsigned: return "integer";
    case Value::value_t::number_float: return "number";
    case Value::value_t::string: return "string";
    case Value::value_t::array: return "array";
    case Value::value_t::object: return "object";
    default: return "?";
  }
}

[[noreturn]] void type_error(const char* what, const char* want, const Value& got) {
  throw InputError(cat(what, ": expected ", want, ", got ", type_name(got)));
}

// "line 3, column 7" of byte `at` (1-based).
std::string where(const std::string& text, size_t at) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') ++line, col = 1;
    else ++col;
  }
  return cat("line ", line, ", column ", col);
}

// A message safe to print: bytes outside printable ASCII as \xNN (the
// text parsed may be anything, and its bytes end up in nlohmann's words).
std::string printable(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02x", c);
      out += b;
    }
  }
  return out;
}

bool scalar(const Value& v) { return !v.is_array() && !v.is_object(); }

void write_to(std::string& out, const Value& v, int indent, int depth) {
  auto newline = [&](int d) {
    out += '\n';
    out.append(size_t(indent) * size_t(d), ' ');
  };
  if (v.is_object()) {
    out += '{';
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) out += ',';
      first = false;
      newline(depth + 1);
      out += Value(it.key()).dump();
      out += ": ";
      write_to(out, it.value(), indent, depth + 1);
    }
    if (!v.empty()) newline(depth);
    out += '}';
  } else if (v.is_array()) {
    bool scalars = true;
    for (const Value& x : v) scalars = scalars && scalar(x);
    out += '[';
    bool first = true;
    for (const Value& x : v) {
      if (!first) out += scalars ? ", " : ",";
      first = false;
      if (!scalars) newline(depth + 1);
      write_to(out, x, indent, depth + 1);
    }
    if (!scalars && !v.empty()) newline(depth);
    out += ']';
  } else {
    out += v.dump();
  }
}

}  // namespace

Value parse(const std::string& text, size_t max_depth) {
  // Keys seen per open object, to refuse a key given twice; the depth, to
  // refuse nesting no hetcoll file has before it can exhaust the stack.
  std::vector<std::set<std::string>> keys;
  std::string problem;
  Value::parser_callback_t check = [&](int depth, Value::parse_event_t ev, Value& parsed) {
    if (!problem.empty()) return true;
    if (size_t(depth) > max_depth) problem = cat("nesting too deep (more than ", max_depth, " levels)");
    if (ev == Value::parse_event_t::object_start) keys.emplace_back();
    else if (ev == Value::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    else if (ev == Value::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
      problem = cat("duplicate key '", parsed.get<std::string>(), "'");
    return true;
  };
  Value v;
  try {
    v = Value::parse(text, check, true, false);
  } catch (const nlohmann::json::parse_error& e) {
    // The byte nlohmann stopped at, as the earlier reader named it.
    const size_t at = e.byte ? e.byte - 1 : 0;
    std::string what;
    if (at >= text.size()) {
      what = "unexpected end of input";
    } else {
      const unsigned char c = static_cast<unsigned char>(text[at]);
      what = c >= 0x20 && c < 0x7f ? cat("unexpected character '", char(c), "'") : cat("unexpected byte ", int(c));
    }
    std::string detail = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: syntax error ..."
    const size_t colon = detail.find(": ", detail.find("parse error"));
    if (colon != std::string::npos) detail = detail.substr(colon + 2);
    throw InputError(cat("JSON: ", where(text, at), ": ", what, " (", printable(detail), ")"));
  } catch (const nlohmann::json::exception& e) {  // a number out of range, text that is not UTF-8
    std::string detail = e.what();
    const size_t close = detail.find("] ");
    if (close != std::string::npos) detail = detail.substr(close + 2);
    throw InputError(cat("JSON: ", e.id == 406 ? "a number out of range (" : "(", printable(detail), ")"));
  }
  if (!problem.empty()) throw InputError(cat("JSON: ", problem));
  return v;
}

std::string write(const Value& v, int indent) {
  if (indent < 0) return v.dump();
  std::string out;
  write_to(out, v, indent, 0);
  return out;
}

const Value* find(const Value& v, const std::string& key) {
  if (!v.is_object()) return nullptr;
  auto it = v.find(key);
  return it == v.end() ? nullptr : &*it;
}

const Value& at(const Value& v, const std::string& key) {
  if (!v.is_object()) type_error(key.c_str(), "object", v);
  const Value* x = find(v, key);
  if (!x) throw InputError(cat("missing key '", key, "'"));
  return *x;
}

bool as_bool(const Value& v, const char* what) {
  if (!v.is_boolean()) type_error(what, "boolean", v);
  return v.get<bool>();
}

int64_t as_int(const Value& v, const char* what) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > uint64_t(INT64_MAX)) throw InputError(cat(what, ": ", u, " is too large"));
    return int64_t(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::floor(d) == d && std::fabs(d) < 9.2e18) return int64_t(d);
  }
  type_error(what, "integer", v);
}

uint64_t as_uint(const Value& v, const char* what) {
  const int64_t x = as_int(v, what);
  if (x < 0) throw InputError(cat(what, ": expected a non-negative integer, got ", x));
  return uint64_t(x);
}

double as_double(const Value& v, const char* what) {
  if (!v.is_number()) type_error(what, "number", v);
  return v.get<double>();
}

const std::string& as_string(const Value& v, const char* what) {
  if (!v.is_string()) type_error(what, "string", v);
  return v.get_ref<const std::string&>();
}

const Value& as_array(const Value& v, const char* what) {
  if (!v.is_array()) type_error(what, "array", v);
  return v;
}

}  // namespace hetcoll::json
