// JSON, with nlohmann/json (the one JSON library): hetcoll's files —
// schedules, models, decision tables, profiles — are read with typed access
// that names the field in every error, and written in one readable layout.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace hetcoll::json {

// Objects keep their members in insertion order (readable output).
using Value = nlohmann::ordered_json;

// The text as JSON: InputError naming the line and column of what is wrong,
// a key given twice in one object, or nesting deeper than max_depth.
Value parse(const std::string& text, size_t max_depth = 200);

// The layout of hetcoll's files: compact for indent < 0; otherwise one
// member of an object a line, an array of numbers and strings on one line.
std::string write(const Value& v, int indent = -1);

// Typed access, each refusal an InputError "WHAT: expected a number, got a
// string" (at: "missing key 'K'"). as_int takes a whole double too.
const Value& at(const Value& v, const std::string& key);
const Value* find(const Value& v, const std::string& key);  // nullptr: not an object or no such key
bool as_bool(const Value& v, const char* what);
int64_t as_int(const Value& v, const char* what);
uint64_t as_uint(const Value& v, const char* what);
double as_double(const Value& v, const char* what);
const std::string& as_string(const Value& v, const char* what);
const Value& as_array(const Value& v, const char* what);  // v itself, checked

}  // namespace hetcoll::json
