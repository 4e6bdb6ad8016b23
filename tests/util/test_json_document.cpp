// The flat JSON document (util/json_document.hpp) against nlohmann's parser,
// the reference it replaces in the profile reader: the same values for
// texts nlohmann writes from random trees, and the same verdict (accepted
// or refused) for those texts cut, with a byte changed, and for the
// hostile texts below.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "util/error.hpp"
#include "util/json_document.hpp"

using hetcoll::InputError;
using nlohmann::json;
namespace doc = hetcoll::json;

namespace {

json random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> kind(0, depth > 3 ? 5 : 7);
  switch (kind(rng)) {
    case 0: return nullptr;
    case 1: return bool(rng() & 1);
    case 2: return int64_t(rng()) - int64_t(rng()) * 4096;
    case 3: return uint64_t(rng()) << 32 | rng();
    case 4: return std::ldexp(double(rng()) / 7.0, int(rng() % 200) - 100) * ((rng() & 1) ? -1 : 1);
    case 5: {
      std::string s;
      const char* alphabet[] = {"a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\x01", "\xc3\xa9", "\xe2\x82\xac",
                                "\xf0\x9f\x98\x80"};
      for (int k = int(rng() % 12); k > 0; --k) s += alphabet[rng() % 13];
      return s;
    }
    case 6: {
      json a = json::array();
      for (int k = int(rng() % 5); k > 0; --k) a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (int k = int(rng() % 5); k > 0; --k) o["k" + std::to_string(rng() % 7)] = random_value(rng, depth + 1);
      return o;
    }
  }
}

// The document's value as nlohmann's, to compare.
json to_json(doc::Node n) {
  switch (n.kind()) {
    case doc::Node::Kind::null: return nullptr;
    case doc::Node::Kind::boolean: return n.boolean();
    case doc::Node::Kind::integer: return n.integer();
    case doc::Node::Kind::unsigned_integer: return n.unsigned_value();
    case doc::Node::Kind::real: return n.number();
    case doc::Node::Kind::string: return std::string(n.string());
    case doc::Node::Kind::array: {
      json a = json::array();
      for (size_t i = 0; i < n.size(); ++i) a.push_back(to_json(n[i]));
      return a;
    }
    case doc::Node::Kind::object: {
      json o = json::object();
      for (size_t i = 0; i < n.size(); ++i) o[std::string(n.key(i))] = to_json(n[i]);
      return o;
    }
  }
  return nullptr;
}

bool ours_accepts(const std::string& text) {
  try {
    doc::Document d(text);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

bool theirs_accepts(const std::string& text) { return json::accept(text); }

}  // namespace

TEST(JsonDocument, ReadsWhatNlohmannWritesAlike) {
  std::mt19937 rng(20261127);
  for (int t = 0; t < 2000; ++t) {
    const json v = random_value(rng, 0);
    for (int indent : {-1, 1}) {
      const std::string text = v.dump(indent);
      const doc::Document d(text);
      const json back = to_json(d.root());
      EXPECT_EQ(back, json::parse(text)) << text;
    }
  }
}

TEST(JsonDocument, AcceptsAndRefusesAsNlohmannDoes) {
  std::mt19937 rng(7);
  int refused = 0;
  for (int t = 0; t < 3000; ++t) {
    std::string text = random_value(rng, 0).dump(t % 2 ? 1 : -1);
    switch (rng() % 3) {
      case 0: text.resize(rng() % (text.size() + 1)); break;
      case 1:
        if (!text.empty()) text[rng() % text.size()] = char(rng() % 256);
        break;
      default:
        if (!text.empty()) text.insert(rng() % text.size(), 1, "{}[],:\"\\ 0-.eE+tfn\x7f\x80"[rng() % 22]);
    }
    // nlohmann reads a NUL byte as the end of the text (what follows is
    // never looked at); this document refuses it unless it is in a string's
    // escape. Texts with one are compared on the part before it.
    const bool theirs = theirs_accepts(text.substr(0, text.find('\0')));
    if (text.find('\0') == std::string::npos) {
      EXPECT_EQ(ours_accepts(text), theirs) << "'" << text << "'";
    } else {
      EXPECT_FALSE(ours_accepts(text)) << "a NUL byte accepted";
    }
    refused += !theirs;
  }
  EXPECT_GT(refused, 1000);  // the mutations reach the refusals
  for (const char* text : {"", " ", "nul", "tru", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "[01]", "[1.]", "[.5]", "[1e]",
                           "[-]", "[+1]", "[1 2]", "\"\\x\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
                           "\"\x01\"", "\"\xc0\x80\"", "\"\xed\xa0\x80\"", "\"\xf5\x80\x80\x80\"", "[NaN]", "[Infinity]",
                           "{} {}", "\xEF\xBB\xBF{}", "[1e400]", "[-1e400]", "[1e-400]", "[18446744073709551615]",
                           "[18446744073709551616]", "[-9223372036854775808]", "[-9223372036854775809]", "\"\\u00e9\"",
                           "\"\\ud83d\\ude00\"", "{\"a\":1,\"a\":2}", "[[[[]]]]", "\t\n\r [ ] \t"}) {
    EXPECT_EQ(ours_accepts(text), theirs_accepts(text)) << "'" << text << "'";
    if (theirs_accepts(text)) {
      EXPECT_EQ(to_json(doc::Document(text).root()), json::parse(text)) << text;
    }
  }
}

TEST(JsonDocument, SaysWhereAndRefusesDepth) {
  try {
    doc::Document d("{\n  \"a\": [1, 2,\n  ]\n}");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("line 3, column 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(doc::Document(std::string(50, '[') + std::string(50, ']'), 40), InputError);
  EXPECT_NO_THROW(doc::Document(std::string(40, '[') + std::string(40, ']'), 40));
  const doc::Document d("{\"a\": 1, \"b\": {\"c\": [true, null]}, \"a\": 2}");
  EXPECT_EQ(d.root().find("a").integer(), 2);  // the last of a key given twice, as nlohmann
  EXPECT_FALSE(d.root().find("z").found());
  EXPECT_TRUE(d.root().find("b").find("c")[0].boolean());
  EXPECT_FALSE(d.root().find("b").find("c")[5].found());
  EXPECT_EQ(d.root().size(), 3u);
}
