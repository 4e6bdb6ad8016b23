// The configuration fingerprint and the words that say where ranks differ
// (config/agreement.hpp): digests, the text form the ranks exchange, the
// one line rank 0 prints — against hand-written expectations.
#include <gtest/gtest.h>

#include <cstring>

#include "config/agreement.hpp"
#include "config/settings.hpp"

using namespace hetcoll;

namespace {

Fingerprint config(const std::string& algo, const std::string& profile = "postal:lambda=2", uint64_t profile_digest = 7,
                   bool disabled = false) {
  Fingerprint f;
  f.parts.push_back({"the hetcoll version", 1, "0.2.0"});
  f.parts.push_back({"HETCOLL_PROFILE", profile_digest, profile});
  f.parts.push_back({"HETCOLL_ALGO", std::hash<std::string>()(algo), algo.empty() ? "none" : algo});
  f.parts.push_back({"HETCOLL_DISABLE", uint64_t(disabled), disabled ? "1" : "0"});
  return f;
}

}  // namespace

TEST(Agreement, RankRanges) {
  EXPECT_EQ(rank_ranges({}), "");
  EXPECT_EQ(rank_ranges({0}), "0");
  EXPECT_EQ(rank_ranges({1, 2}), "1-2");
  EXPECT_EQ(rank_ranges({9, 0, 3, 2, 4, 3}), "0,2-4,9");
  EXPECT_EQ(rank_ranges({5, 7, 9}), "5,7,9");
}

TEST(Agreement, DigestSeesEveryPart) {
  const Fingerprint a = config("");
  EXPECT_EQ(a.digest(), config("").digest());
  EXPECT_NE(a.digest(), config("bcast:0-inf:@star_bcast").digest());
  EXPECT_NE(a.digest(), config("", "postal:lambda=2", 8).digest());
  EXPECT_NE(a.digest(), config("", "postal:lambda=2", 7, true).digest());
  // What is shown is not compared: one content under two names agrees.
  EXPECT_EQ(a.digest(), config("", "/other/path/profile.json").digest());
  // A part's name counts: the same digest under another setting differs.
  Fingerprint b = a;
  b.parts[3].name = "HETCOLL_TABLE";
  EXPECT_NE(a.digest(), b.digest());
}

TEST(Agreement, TextFormRoundTripsAndSurvivesHostileValues) {
  Fingerprint f = config("bcast:0-inf:@star_bcast", "/a path/with\ttab\nand newline.json", 0xfedcba9876543210ull);
  const Fingerprint g = Fingerprint::decode(f.encode());
  ASSERT_EQ(g.parts.size(), f.parts.size());
  for (size_t i = 0; i < f.parts.size(); ++i) {
    EXPECT_EQ(g.parts[i].name, f.parts[i].name);
    EXPECT_EQ(g.parts[i].digest, f.parts[i].digest);
  }
  EXPECT_EQ(g.parts[1].shown, "/a path/with tab and newline.json");
  EXPECT_EQ(g.digest(), f.digest());
  // Long values are cut; lines that do not parse are skipped.
  f.parts[2].shown = std::string(1000, 'x');
  EXPECT_EQ(Fingerprint::decode(f.encode()).parts[2].shown.size(), kShownChars);
  const Fingerprint junk = Fingerprint::decode("garbage\nA\tnothex\tv\nB\t0123456789abcdef\tok\n\t\t\nC\t12\tshort\n");
  ASSERT_EQ(junk.parts.size(), 1u);
  EXPECT_EQ(junk.parts[0].name, "B");
  EXPECT_EQ(junk.parts[0].digest, 0x0123456789abcdefull);
  EXPECT_TRUE(Fingerprint::decode("").parts.empty());
}

TEST(Agreement, NothingDiffers) {
  EXPECT_EQ(describe_disagreement({config(""), config(""), config("")}), "");
  EXPECT_EQ(describe_disagreement({}), "");
}

TEST(Agreement, OneRankDiffers) {
  const std::string rule = "allreduce:0-inf:@ring_allreduce";
  EXPECT_EQ(describe_disagreement({config(rule), config(""), config("")}),
            "HETCOLL_ALGO is '" + rule + "' on rank 0 but 'none' on ranks 1-2");
  EXPECT_EQ(describe_disagreement({config(""), config(""), config(""), config("", "postal:lambda=2", 7, true)}),
            "HETCOLL_DISABLE is '0' on ranks 0-2 but '1' on rank 3");
}

TEST(Agreement, SeveralSettingsAndSeveralValues) {
  EXPECT_EQ(describe_disagreement({config("a"), config("b", "postal:lambda=10", 9), config("c"), config("b")}),
            "HETCOLL_PROFILE is 'postal:lambda=2' on ranks 0,2-3 but 'postal:lambda=10' on rank 1; "
            "HETCOLL_ALGO is 'a' on rank 0, 'b' on ranks 1,3 and 'c' on rank 2");
  // More than four values: three named, the rest summed up.
  std::vector<Fingerprint> ranks;
  for (int r = 0; r < 8; ++r) ranks.push_back(config("rule" + std::to_string(r % 6)));
  EXPECT_EQ(describe_disagreement(ranks),
            "HETCOLL_ALGO is 'rule0' on ranks 0,6, 'rule1' on ranks 1,7, 'rule2' on rank 2, "
            "and 3 other values on ranks 3-5");
}

TEST(Agreement, OneNameTwoContentsShowsTheDigests) {
  EXPECT_EQ(describe_disagreement({config("", "/shared/p.json", 0xabc), config("", "/shared/p.json", 0xdef)}),
            "HETCOLL_PROFILE is '/shared/p.json' (content 0000000000000abc) on rank 0 "
            "but '/shared/p.json' (content 0000000000000def) on rank 1");
}

TEST(Agreement, RanksOfASubCommunicatorNamedInTheWorldToo) {
  EXPECT_EQ(describe_disagreement({config("x"), config(""), config("")}, {4, 6, 7}),
            "HETCOLL_ALGO is 'x' on rank 0 (world 4) but 'none' on ranks 1-2 (world 6-7)");
  // The world's own ranks are not repeated.
  EXPECT_EQ(describe_disagreement({config("x"), config("")}, {0, 1}), "HETCOLL_ALGO is 'x' on rank 0 but 'none' on rank 1");
}

TEST(Agreement, ARankOfAnotherVersionWithOtherParts) {
  Fingerprint older = config("");
  older.parts[0] = {"the hetcoll version", 2, "0.1.0"};
  older.parts.pop_back();  // knows no HETCOLL_DISABLE
  EXPECT_EQ(describe_disagreement({config(""), older}),
            "the hetcoll version is '0.2.0' on rank 0 but '0.1.0' on rank 1; "
            "HETCOLL_DISABLE is '0' on rank 0 but unknown to that hetcoll version on rank 1");
}

TEST(Agreement, TheSettingsThatDecideAreMarked) {
  // Each of these changes a decision (HETCOLL_LEARN: what runs, and an
  // exchange every rank must make); the others only what is printed.
  for (const Setting& s : settings()) {
    const bool decides = !std::strcmp(s.name, "HETCOLL_PROFILE") || !std::strcmp(s.name, "HETCOLL_ALGO") ||
                         !std::strcmp(s.name, "HETCOLL_TABLE") || !std::strcmp(s.name, "HETCOLL_DISABLE") ||
                         !std::strcmp(s.name, "HETCOLL_LEARN");
    EXPECT_EQ(s.agreed != Agreed::no, decides) << s.name;
    // By content: what the planner makes of a text (a model, rules, a table); a flag by its value.
    // (A text that decides nothing — HETCOLL_LEARN_SAVE, a file only world rank 0 writes — is not compared.)
    if (decides) EXPECT_EQ(s.agreed == Agreed::by_content, s.kind == SettingKind::text) << s.name;
  }
}
