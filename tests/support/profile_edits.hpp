// Profiles edited for tests: a text the reader must refuse, with the words
// its message must hold; the sample profile's JSON with one thing replaced.
#pragma once
#include <gtest/gtest.h>

#include <string>

#include "model/profile.hpp"
#include "sample_profile.hpp"
#include "util/error.hpp"

namespace hetcoll::testing {

// The reader refuses `text`, saying `fragment`.
inline void expect_refused(const std::string& text, const std::string& fragment) {
  try {
    parse_profile(text);
    ADD_FAILURE() << "accepted: " << text.substr(0, 200);
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

// Replace the first occurrence of `from` in the profile's JSON.
inline std::string edited(const std::string& from, const std::string& to, Profile p = sample_profile()) {
  std::string t = profile_to_json(p);
  size_t k = t.find(from);
  EXPECT_NE(k, std::string::npos) << from;
  if (k != std::string::npos) t.replace(k, from.size(), to);
  return t;
}

}  // namespace hetcoll::testing
