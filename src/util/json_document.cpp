#include "util/json_document.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "util/error.hpp"

namespace hetcoll::json {

struct Document::Parser {
  Document& d;
  std::string_view s;
  size_t at = 0, depth = 0;
  const size_t max_depth;
  std::vector<uint32_t> stack, key_stack;  // children (and keys) of the open containers

  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s.size(); ++i) {
      if (s[i] == '\n') ++line, col = 1;
      else ++col;
    }
    throw InputError(cat("line ", line, ", column ", col, ": ", what));
  }
  void space() {
    while (at < s.size() && (s[at] == ' ' || s[at] == '\n' || s[at] == '\t' || s[at] == '\r')) ++at;
  }
  uint32_t slot(Node::Kind k) {
    if (d.nodes_.size() >= Node::kNone - 1) fail("more values than a document holds");
    d.nodes_.emplace_back();
    d.nodes_.back().kind = k;
    return uint32_t(d.nodes_.size() - 1);
  }
  void literal(const char* word, size_t n) {
    if (s.compare(at, n, word) != 0) fail("expected a value");
    at += n;
  }
  // One UTF-8 sequence starting at `at` (a lead byte >= 0x80), copied.
  void utf8(std::string& out) {
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[at + k]); };
    const unsigned char c = b(0);
    size_t n = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, cp = c & 0x07;
    else fail("invalid string: ill-formed UTF-8 byte");
    if (at + n > s.size()) fail("invalid string: ill-formed UTF-8 byte");
    for (size_t k = 1; k < n; ++k) {
      if ((b(k) & 0xC0) != 0x80) fail("invalid string: ill-formed UTF-8 byte");
      cp = (cp << 6) | (b(k) & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
      fail("invalid string: ill-formed UTF-8 byte");
    out.append(s.substr(at, n));
    at += n;
  }
  uint32_t hex4() {
    if (at + 4 > s.size()) fail("invalid string: '\\u' must be followed by 4 hex digits");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s[at++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f') v |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= uint32_t(c - 'A' + 10);
      else fail("invalid string: '\\u' must be followed by 4 hex digits");
    }
    return v;
  }
  static void put_utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  // A string at `at` (its opening quote): a string node, its bytes in the pool.
  uint32_t string() {
    ++at;
    std::string& pool = d.pool_;
    const size_t first = pool.size();
    for (;;) {
      // The plain run up to a quote, a backslash, a control or non-ASCII byte.
      size_t run = at;
      while (run < s.size()) {
        const unsigned char c = static_cast<unsigned char>(s[run]);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++run;
      }
      pool.append(s.substr(at, run - at));
      at = run;
      if (at >= s.size()) fail("invalid string: missing closing quote");
      const unsigned char c = static_cast<unsigned char>(s[at]);
      if (c == '"') {
        ++at;
        break;
      }
      if (c < 0x20) fail("invalid string: control character must be escaped");
      if (c >= 0x80) {
        utf8(pool);
        continue;
      }
      if (++at >= s.size()) fail("invalid string: missing closing quote");
      const char e = s[at++];
      switch (e) {
        case '"': pool += '"'; break;
        case '\\': pool += '\\'; break;
        case '/': pool += '/'; break;
        case 'b': pool += '\b'; break;
        case 'f': pool += '\f'; break;
        case 'n': pool += '\n'; break;
        case 'r': pool += '\r'; break;
        case 't': pool += '\t'; break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (at + 2 > s.size() || s[at] != '\\' || s[at + 1] != 'u')
              fail("invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
            at += 2;
            const uint32_t lo = hex4();
            if (lo < 0xDC00 || lo > 0xDFFF) fail("invalid string: surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            fail("invalid string: surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF");
          }
          put_utf8(pool, cp);
          break;
        }
        default: --at, fail("invalid string: forbidden character after backslash");
      }
    }
    if (pool.size() >= Node::kNone) fail("strings longer than a document holds");
    const uint32_t n = slot(Node::Kind::string);
    d.nodes_[n].first = uint32_t(first);
    d.nodes_[n].count = uint32_t(pool.size() - first);
    return n;
  }
  uint32_t number() {
    const size_t start = at;
    auto digits = [&] {
      const size_t from = at;
      while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
      return at > from;
    };
    if (at < s.size() && s[at] == '-') ++at;
    if (at < s.size() && s[at] == '0') ++at;
    else if (!digits()) fail("invalid number; expected digit");
    bool whole = true;
    if (at < s.size() && s[at] == '.') {
      ++at, whole = false;
      if (!digits()) fail("invalid number; expected digit after '.'");
    }
    if (at < s.size() && (s[at] == 'e' || s[at] == 'E')) {
      ++at, whole = false;
      if (at < s.size() && (s[at] == '+' || s[at] == '-')) ++at;
      if (!digits()) fail("invalid number; expected digit after exponent sign");
    }
    const char* a = s.data() + start;
    const char* b = s.data() + at;
    if (whole) {
      int64_t i = 0;
      if (std::from_chars(a, b, i).ec == std::errc()) {
        const uint32_t n = slot(Node::Kind::integer);
        d.nodes_[n].integer = i;
        return n;
      }
      uint64_t u = 0;
      if (*a != '-' && std::from_chars(a, b, u).ec == std::errc()) {
        const uint32_t n = slot(Node::Kind::unsigned_integer);
        d.nodes_[n].unsigned_integer = u;
        return n;
      }
    }
    double v = 0;
    const auto r = std::from_chars(a, b, v);
    if (r.ec == std::errc::result_out_of_range) {
      // Below a double's range: zero (or the nearest denormal); above: refused, as nlohmann does.
      v = std::strtod(std::string(a, b).c_str(), nullptr);
    } else if (r.ec != std::errc() || r.ptr != b) {
      fail("invalid number");
    }
    if (!std::isfinite(v)) fail("number overflow");
    const uint32_t n = slot(Node::Kind::real);
    d.nodes_[n].real = v;
    return n;
  }
  // A container's children, from the stack's `mark` on, in a row.
  void close(uint32_t n, size_t mark, bool object) {
    Slot& x = d.nodes_[n];
    x.first = uint32_t(d.kids_.size());
    x.count = uint32_t(stack.size() - mark);
    d.kids_.insert(d.kids_.end(), stack.begin() + long(mark), stack.end());
    if (object) d.keys_.insert(d.keys_.end(), key_stack.begin() + long(mark), key_stack.end());
    else d.keys_.resize(d.kids_.size(), Node::kNone);
    stack.resize(mark);
    key_stack.resize(mark);
  }
  uint32_t value() {
    space();
    if (at >= s.size()) fail("unexpected end of input; expected a value");
    const char c = s[at];
    if (c == '{' || c == '[') {
      if (++depth > max_depth) fail(cat("nested deeper than ", max_depth, " levels"));
      const bool object = c == '{';
      const uint32_t n = slot(object ? Node::Kind::object : Node::Kind::array);
      const size_t mark = stack.size();
      ++at;
      space();
      const char end = object ? '}' : ']';
      if (at < s.size() && s[at] == end) {
        ++at;
      } else {
        for (;;) {
          uint32_t key = Node::kNone;
          if (object) {
            space();
            if (at >= s.size() || s[at] != '"') fail("expected a string: an object's key");
            key = string();
            space();
            if (at >= s.size() || s[at] != ':') fail("expected ':' after an object's key");
            ++at;
          }
          const uint32_t v = value();
          stack.push_back(v);
          key_stack.push_back(key);
          space();
          if (at < s.size() && s[at] == ',') {
            ++at;
            continue;
          }
          if (at < s.size() && s[at] == end) {
            ++at;
            break;
          }
          fail(object ? "expected ',' or '}'" : "expected ',' or ']'");
        }
      }
      close(n, mark, object);
      --depth;
      return n;
    }
    if (c == '"') return string();
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    if (c == 't' || c == 'f') {
      const bool v = c == 't';
      literal(v ? "true" : "false", v ? 4 : 5);
      const uint32_t n = slot(Node::Kind::boolean);
      d.nodes_[n].boolean = v;
      return n;
    }
    if (c == 'n') {
      literal("null", 4);
      return slot(Node::Kind::null);
    }
    fail("expected a value");
  }
};

Document::Document(std::string_view text, size_t max_depth) {
  Parser p{*this, text, 0, 0, max_depth, {}, {}};
  nodes_.reserve(text.size() / 8 + 16);
  kids_.reserve(text.size() / 8 + 16);
  keys_.reserve(text.size() / 8 + 16);
  pool_.reserve(text.size() / 4 + 16);
  if (text.size() >= 3 && std::memcmp(text.data(), "\xEF\xBB\xBF", 3) == 0) p.at = 3;
  p.space();
  if (p.at >= text.size()) p.fail("unexpected end of input; expected a value");
  p.value();
  p.space();
  if (p.at != text.size()) p.fail("unexpected content after the value");
}

bool Node::boolean() const { return doc_->nodes_[index_].boolean; }

double Node::number() const {
  const Document::Slot& x = doc_->nodes_[index_];
  switch (x.kind) {
    case Kind::integer: return double(x.integer);
    case Kind::unsigned_integer: return double(x.unsigned_integer);
    case Kind::real: return x.real;
    default: return 0;
  }
}

int64_t Node::integer() const { return doc_->nodes_[index_].integer; }
uint64_t Node::unsigned_value() const { return doc_->nodes_[index_].unsigned_integer; }

std::string_view Node::string() const {
  const Document::Slot& x = doc_->nodes_[index_];
  return std::string_view(doc_->pool_).substr(x.first, x.count);
}

size_t Node::size() const {
  if (!is_array() && !is_object()) return 0;
  return doc_->nodes_[index_].count;
}

Node Node::operator[](size_t i) const {
  if (i >= size()) return Node(doc_, kNone);
  return Node(doc_, doc_->kids_[doc_->nodes_[index_].first + i]);
}

std::string_view Node::key(size_t i) const {
  if (!is_object() || i >= size()) return {};
  return Node(doc_, doc_->keys_[doc_->nodes_[index_].first + i]).string();
}

Node Node::find(std::string_view k) const {
  if (!is_object()) return Node(doc_, kNone);
  const Document::Slot& x = doc_->nodes_[index_];
  for (size_t i = x.count; i-- > 0;)  // the last of a key given twice
    if (Node(doc_, doc_->keys_[x.first + i]).string() == k) return Node(doc_, doc_->kids_[x.first + i]);
  return Node(doc_, kNone);
}

}  // namespace hetcoll::json
