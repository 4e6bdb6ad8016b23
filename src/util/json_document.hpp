// A JSON text as a read-only document, parsed in one pass into flat arrays
// (nodes, the children of each array and object in a row, strings in one
// pool): what the runtime reads a machine profile with on every rank of a
// job — a 10 000-host profile is 5.6 MB, and nlohmann's tree of maps and
// strings took 215 ms to build and free; this takes a tenth of it.
//
// Strict RFC 8259, like nlohmann's parser it replaces there: one value,
// whitespace around it (a UTF-8 byte order mark first is skipped); strings
// valid UTF-8 without control characters, escapes decoded (\uXXXX with
// surrogate pairs); numbers in JSON's grammar, kept as nlohmann keeps them —
// a whole number as int64 (uint64 above it, a double beyond that), any
// other as a double; an object's key given twice: the last one is found.
// Anything else: InputError "line L, column C: what was expected".
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hetcoll::json {

class Document;

// One value of a document (a handle: the document must outlive it).
class Node {
 public:
  enum class Kind : uint8_t { null, boolean, integer, unsigned_integer, real, string, array, object };

  inline Kind kind() const;
  bool is_null() const { return kind() == Kind::null; }
  bool is_boolean() const { return kind() == Kind::boolean; }
  bool is_number() const { return kind() == Kind::integer || kind() == Kind::unsigned_integer || kind() == Kind::real; }
  bool is_whole() const { return kind() == Kind::integer || kind() == Kind::unsigned_integer; }
  bool is_unsigned() const { return kind() == Kind::unsigned_integer; }
  bool is_string() const { return kind() == Kind::string; }
  bool is_array() const { return kind() == Kind::array; }
  bool is_object() const { return kind() == Kind::object; }

  bool boolean() const;          // is_boolean()
  double number() const;         // is_number(): a whole number converted
  int64_t integer() const;       // kind integer
  uint64_t unsigned_value() const;  // kind unsigned_integer
  std::string_view string() const;  // is_string()

  // Arrays and objects: how many elements or members; element i (an
  // object's member i's value); an object's member i's key.
  size_t size() const;
  Node operator[](size_t i) const;
  std::string_view key(size_t i) const;
  // An object's member of this key (the last of that key), or a node
  // whose found() is false.
  Node find(std::string_view key) const;
  bool found() const { return index_ != kNone; }

 private:
  friend class Document;
  static constexpr uint32_t kNone = UINT32_MAX;
  Node(const Document* d, uint32_t i) : doc_(d), index_(i) {}
  const Document* doc_;
  uint32_t index_;
};

class Document {
 public:
  // Parses `text`; nesting deeper than max_depth is refused too.
  explicit Document(std::string_view text, size_t max_depth = 200);
  Node root() const { return Node(this, 0); }

 private:
  friend class Node;
  struct Slot {
    Node::Kind kind = Node::Kind::null;
    uint32_t first = 0, count = 0;  // children in kids_ (and keys_ for objects); a string's bytes in pool_
    union {
      double real;
      int64_t integer;
      uint64_t unsigned_integer;
      bool boolean;
    };
    Slot() : real(0) {}
  };
  struct Parser;
  std::vector<Slot> nodes_;
  std::vector<uint32_t> kids_;   // per container its children's node indices, in a row
  std::vector<uint32_t> keys_;   // per object member (same position as kids_): its key, a string node
  std::string pool_;
};

inline Node::Kind Node::kind() const { return index_ == kNone ? Kind::null : doc_->nodes_[index_].kind; }

}  // namespace hetcoll::json
