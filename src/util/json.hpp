// A small JSON value with a strict parser and a writer. Used for schedules and
// machine profiles; it keeps integers exact (64-bit) and reports parse errors
// with line and column.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace hetcoll::json {

class Value {
 public:
  enum class Type { Null, Bool, Int, Double, String, Array, Object };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : type_(Type::Bool), b_(b) {}
  Value(int v) : type_(Type::Int), i_(v) {}
  Value(long v) : type_(Type::Int), i_(v) {}
  Value(long long v) : type_(Type::Int), i_(v) {}
  Value(unsigned v) : type_(Type::Int), i_(v) {}
  Value(unsigned long v) : type_(Type::Int), i_(static_cast<int64_t>(v)) {}
  Value(unsigned long long v) : type_(Type::Int), i_(static_cast<int64_t>(v)) {}
  Value(double v) : type_(Type::Double), d_(v) {}
  Value(const char* s) : type_(Type::String), s_(s) {}
  Value(std::string s) : type_(Type::String), s_(std::move(s)) {}

  static Value array() { Value v; v.type_ = Type::Array; return v; }
  static Value object() { Value v; v.type_ = Type::Object; return v; }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool is_number() const { return type_ == Type::Int || type_ == Type::Double; }
  bool is_string() const { return type_ == Type::String; }
  bool is_array() const { return type_ == Type::Array; }
  bool is_object() const { return type_ == Type::Object; }

  // Accessors throw InputError naming `what` when the type does not fit.
  bool as_bool(const char* what = "value") const;
  int64_t as_int(const char* what = "value") const;
  uint64_t as_uint(const char* what = "value") const;
  double as_double(const char* what = "value") const;
  const std::string& as_string(const char* what = "value") const;
  const std::vector<Value>& as_array(const char* what = "value") const;
  const std::vector<std::pair<std::string, Value>>& as_object(const char* what = "value") const;

  // Arrays.
  void push(Value v);
  size_t size() const;
  const Value& operator[](size_t i) const;

  // Objects keep insertion order (readable output).
  Value& operator[](const std::string& key);
  const Value* find(const std::string& key) const;
  const Value& at(const std::string& key) const;  // throws InputError if missing
  bool has(const std::string& key) const { return find(key) != nullptr; }

  std::string dump(int indent = -1) const;

 private:
  void dump_to(std::string& out, int indent, int depth) const;

  Type type_ = Type::Null;
  bool b_ = false;
  int64_t i_ = 0;
  double d_ = 0;
  std::string s_;
  std::vector<Value> a_;
  std::vector<std::pair<std::string, Value>> o_;
};

Value parse(const std::string& text);

}  // namespace hetcoll::json
