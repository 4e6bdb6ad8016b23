#include "util/json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "util/error.hpp"

namespace hetcoll::json {

namespace {
const char* type_name(Value::Type t) {
  switch (t) {
    case Value::Type::Null: return "null";
    case Value::Type::Bool: return "boolean";
    case Value::Type::Int: return "integer";
    case Value::Type::Double: return "number";
    case Value::Type::String: return "string";
    case Value::Type::Array: return "array";
    case Value::Type::Object: return "object";
  }
  return "?";
}

[[noreturn]] void type_error(const char* what, const char* want, Value::Type got) {
  throw InputError(cat(what, ": expected ", want, ", got ", type_name(got)));
}
}  // namespace

bool Value::as_bool(const char* what) const {
  if (type_ != Type::Bool) type_error(what, "boolean", type_);
  return b_;
}

int64_t Value::as_int(const char* what) const {
  if (type_ == Type::Int) return i_;
  if (type_ == Type::Double && std::floor(d_) == d_ && std::fabs(d_) < 9.2e18)
    return static_cast<int64_t>(d_);
  type_error(what, "integer", type_);
}

uint64_t Value::as_uint(const char* what) const {
  int64_t v = as_int(what);
  if (v < 0) throw InputError(cat(what, ": expected a non-negative integer, got ", v));
  return static_cast<uint64_t>(v);
}

double Value::as_double(const char* what) const {
  if (type_ == Type::Int) return static_cast<double>(i_);
  if (type_ == Type::Double) return d_;
  type_error(what, "number", type_);
}

const std::string& Value::as_string(const char* what) const {
  if (type_ != Type::String) type_error(what, "string", type_);
  return s_;
}

const std::vector<Value>& Value::as_array(const char* what) const {
  if (type_ != Type::Array) type_error(what, "array", type_);
  return a_;
}

const std::vector<std::pair<std::string, Value>>& Value::as_object(const char* what) const {
  if (type_ != Type::Object) type_error(what, "object", type_);
  return o_;
}

void Value::push(Value v) {
  if (type_ == Type::Null) type_ = Type::Array;
  if (type_ != Type::Array) type_error("push", "array", type_);
  a_.push_back(std::move(v));
}

size_t Value::size() const {
  if (type_ == Type::Array) return a_.size();
  if (type_ == Type::Object) return o_.size();
  return 0;
}

const Value& Value::operator[](size_t i) const {
  if (type_ != Type::Array) type_error("index", "array", type_);
  if (i >= a_.size()) throw InputError(cat("index ", i, " out of range (size ", a_.size(), ")"));
  return a_[i];
}

Value& Value::operator[](const std::string& key) {
  if (type_ == Type::Null) type_ = Type::Object;
  if (type_ != Type::Object) type_error("key access", "object", type_);
  for (auto& kv : o_)
    if (kv.first == key) return kv.second;
  o_.emplace_back(key, Value());
  return o_.back().second;
}

const Value* Value::find(const std::string& key) const {
  if (type_ != Type::Object) return nullptr;
  for (auto& kv : o_)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

const Value& Value::at(const std::string& key) const {
  if (type_ != Type::Object) type_error(key.c_str(), "object", type_);
  const Value* v = find(key);
  if (!v) throw InputError(cat("missing key '", key, "'"));
  return *v;
}

namespace {
void escape(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void newline(std::string& out, int indent, int depth) {
  if (indent < 0) return;
  out += '\n';
  out.append(static_cast<size_t>(indent * depth), ' ');
}
}  // namespace

void Value::dump_to(std::string& out, int indent, int depth) const {
  switch (type_) {
    case Type::Null: out += "null"; break;
    case Type::Bool: out += b_ ? "true" : "false"; break;
    case Type::Int: out += std::to_string(i_); break;
    case Type::Double: {
      if (!std::isfinite(d_)) { out += "null"; break; }
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", d_);
      // Shortest representation that round-trips.
      for (int prec = 1; prec <= 17; ++prec) {
        char tmp[32];
        std::snprintf(tmp, sizeof tmp, "%.*g", prec, d_);
        if (std::strtod(tmp, nullptr) == d_) { std::snprintf(buf, sizeof buf, "%s", tmp); break; }
      }
      std::string s = buf;
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      out += s;
      break;
    }
    case Type::String: escape(out, s_); break;
    case Type::Array: {
      out += '[';
      bool scalar_only = true;
      for (auto& v : a_) scalar_only &= !(v.is_array() || v.is_object());
      for (size_t i = 0; i < a_.size(); ++i) {
        if (i) out += scalar_only || indent < 0 ? (indent < 0 ? "," : ", ") : ",";
        if (!scalar_only) newline(out, indent, depth + 1);
        a_[i].dump_to(out, indent, depth + 1);
      }
      if (!scalar_only && !a_.empty()) newline(out, indent, depth);
      out += ']';
      break;
    }
    case Type::Object: {
      out += '{';
      for (size_t i = 0; i < o_.size(); ++i) {
        if (i) out += ',';
        newline(out, indent, depth + 1);
        escape(out, o_[i].first);
        out += indent < 0 ? ":" : ": ";
        o_[i].second.dump_to(out, indent, depth + 1);
      }
      if (!o_.empty()) newline(out, indent, depth);
      out += '}';
      break;
    }
  }
}

std::string Value::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

namespace {
class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  Value parse_document() {
    Value v = parse_value(0);
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') { ++line; col = 1; } else { ++col; }
    }
    throw InputError(cat("JSON parse error at line ", line, ", column ", col, ": ", msg));
  }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }

  bool consume(const char* lit) {
    size_t n = std::char_traits<char>::length(lit);
    if (s_.compare(pos_, n, lit) == 0) { pos_ += n; return true; }
    return false;
  }

  Value parse_value(int depth) {
    if (depth > 200) fail("nesting too deep");
    skip_ws();
    if (pos_ >= s_.size()) fail("unexpected end of input");
    char c = s_[pos_];
    if (c == '{') return parse_object(depth);
    if (c == '[') return parse_array(depth);
    if (c == '"') return Value(parse_string());
    if (consume("true")) return Value(true);
    if (consume("false")) return Value(false);
    if (consume("null")) return Value();
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number();
    if (c >= 0x20 && c < 0x7f) fail(cat("unexpected character '", c, "'"));
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", unsigned(static_cast<unsigned char>(c)));
    fail(cat("unexpected byte ", hex, " (not JSON text)"));
  }

  Value parse_object(int depth) {
    ++pos_;
    Value obj = Value::object();
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == '}') { ++pos_; return obj; }
    for (;;) {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key");
      std::string key = parse_string();
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != ':') fail("expected ':'");
      ++pos_;
      if (obj.has(key)) fail(cat("duplicate key '", key, "'"));
      obj[key] = parse_value(depth + 1);
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
      if (pos_ < s_.size() && s_[pos_] == '}') { ++pos_; return obj; }
      fail("expected ',' or '}'");
    }
  }

  Value parse_array(int depth) {
    ++pos_;
    Value arr = Value::array();
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == ']') { ++pos_; return arr; }
    for (;;) {
      arr.push(parse_value(depth + 1));
      skip_ws();
      if (pos_ < s_.size() && s_[pos_] == ',') { ++pos_; continue; }
      if (pos_ < s_.size() && s_[pos_] == ']') { ++pos_; return arr; }
      fail("expected ',' or ']'");
    }
  }

  std::string parse_string() {
    ++pos_;  // opening quote
    std::string out;
    while (pos_ < s_.size()) {
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in string");
      if (c != '\\') { out += c; continue; }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
          unsigned cp = static_cast<unsigned>(std::strtoul(s_.substr(pos_, 4).c_str(), nullptr, 16));
          pos_ += 4;
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: fail(cat("bad escape '\\", e, "'"));
      }
    }
    fail("unterminated string");
  }

  Value parse_number() {
    size_t start = pos_;
    if (s_[pos_] == '-') ++pos_;
    bool is_int = true;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c >= '0' && c <= '9') { ++pos_; continue; }
      if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') { is_int = false; ++pos_; continue; }
      break;
    }
    std::string tok = s_.substr(start, pos_ - start);
    char* end = nullptr;
    if (is_int) {
      errno = 0;
      long long v = std::strtoll(tok.c_str(), &end, 10);
      if (*end == 0 && errno == 0) return Value(v);
    }
    double d = std::strtod(tok.c_str(), &end);
    if (end == tok.c_str() || *end != 0) fail(cat("bad number '", tok, "'"));
    if (!std::isfinite(d)) fail(cat("number '", tok, "' is out of range"));
    return Value(d);
  }

  const std::string& s_;
  size_t pos_ = 0;
};
}  // namespace

Value parse(const std::string& text) { return Parser(text).parse_document(); }

}  // namespace hetcoll::json
