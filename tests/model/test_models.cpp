// Machine models: spec parsing, costs per the papers' formulas, clear errors.
#include <gtest/gtest.h>

#include "model/heterogeneous_model.hpp"
#include "model/hockney_model.hpp"
#include "model/machine_model.hpp"
#include "model/postal_model.hpp"
#include "model/profile_model.hpp"
#include "model/units.hpp"
#include "util/error.hpp"

using namespace hetcoll;

// One writing of a time everywhere: three significant digits and a unit.
TEST(Units, FormatTime) {
  EXPECT_EQ(format_time(0), "0 s");
  EXPECT_EQ(format_time(32.274e-9), "32.3 ns");
  EXPECT_EQ(format_time(64.76e-6), "64.8 us");
  EXPECT_EQ(format_time(999.7e-6), "1 ms");  // not "1e+03 us"
  EXPECT_EQ(format_time(1.955e-3), "1.96 ms");
  EXPECT_EQ(format_time(2.5), "2.5 s");
  EXPECT_EQ(format_time(1234.5), "1234 s");
  EXPECT_EQ(format_time(-3e-6), "-3 us");
}

TEST(Units, Durations) {
  EXPECT_DOUBLE_EQ(parse_duration("20us"), 20e-6);
  EXPECT_DOUBLE_EQ(parse_duration("1.5ms"), 1.5e-3);
  EXPECT_DOUBLE_EQ(parse_duration("1ns"), 1e-9);
  EXPECT_DOUBLE_EQ(parse_duration("2e-6"), 2e-6);
  EXPECT_THROW(parse_duration("20xs"), InputError);
  EXPECT_THROW(parse_duration("us"), InputError);
  EXPECT_EQ(parse_bytes("64k"), 65536u);
  EXPECT_EQ(parse_bytes("1M"), 1048576u);
  EXPECT_THROW(parse_bytes("-1"), InputError);
  EXPECT_THROW(parse_bytes("1.5"), InputError);
  EXPECT_DOUBLE_EQ(parse_bandwidth("10GB/s"), 1e10);
}

TEST(PostalModel, MessageIsUsableLambdaAfterTheSend) {
  auto m = parse_model("postal:lambda=1.8");
  EXPECT_EQ(m->kind(), "postal");
  EXPECT_EQ(m->unit(), "steps");
  MessageCost c = m->message(0, 1, 512);
  EXPECT_DOUBLE_EQ(c.send, 1.0);
  EXPECT_DOUBLE_EQ(c.total(), 1.8);
  EXPECT_DOUBLE_EQ(m->postal_lambda(512), 1.8);
  EXPECT_DOUBLE_EQ(m->reduce_time(0, 100), 0.0);
}

TEST(PostalModel, LambdaAsAFunctionOfSize) {
  // Bruck Fig. 3: λ rises to 1.8 at 512 bytes, then falls towards 1.
  auto m = parse_model("postal:lambda=0:1.2;512:1.8;16k:1.05");
  EXPECT_DOUBLE_EQ(m->postal_lambda(0), 1.2);
  EXPECT_DOUBLE_EQ(m->postal_lambda(256), 1.5);
  EXPECT_DOUBLE_EQ(m->postal_lambda(512), 1.8);
  EXPECT_DOUBLE_EQ(m->postal_lambda(1 << 20), 1.05);
  EXPECT_EQ(parse_model(m->spec())->spec(), m->spec());
}

TEST(PostalModel, SecondsUnitWithT0) {
  auto m = parse_model("postal:lambda=2,t0=10us");
  EXPECT_EQ(m->unit(), "s");
  EXPECT_DOUBLE_EQ(m->message(0, 1, 8).total(), 20e-6);
}

TEST(PostalModel, RejectsLambdaBelowOne) {
  try {
    parse_model("postal:lambda=0.5");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("lambda >= 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_model("postal:lambda=0:1.2;512:0.9"), InputError);
  EXPECT_THROW(parse_model("postal:lambda=abc"), InputError);
  EXPECT_THROW(parse_model("postal:"), InputError);
}

TEST(HockneyModel, AlphaBetaGamma) {
  auto m = parse_model("hockney:alpha=20us,beta=1ns,gamma=0.5ns");
  MessageCost c = m->message(3, 7, 1000);
  EXPECT_DOUBLE_EQ(c.send, 20e-6 + 1000e-9);
  EXPECT_DOUBLE_EQ(c.total(), 20e-6 + 1000e-9);
  EXPECT_DOUBLE_EQ(m->reduce_time(0, 1000), 0.5e-6);
  auto bw = parse_model("hockney:alpha=1us,bw=1GB/s");
  EXPECT_DOUBLE_EQ(bw->message(0, 1, 1000).total(), 1e-6 + 1e-6);
  EXPECT_EQ(parse_model(m->spec())->spec(), m->spec());
  EXPECT_THROW(parse_model("hockney:alpha=1us"), InputError);
  EXPECT_THROW(parse_model("hockney:alpha=1us,beta=1ns,delta=3"), InputError);
}

TEST(LogGPModel, Formula) {
  auto m = parse_model("loggp:L=5us,o=1us,g=2us,G=1ns");
  MessageCost c = m->message(0, 1, 1001);
  EXPECT_DOUBLE_EQ(c.send, 1e-6 + 1000e-9);         // max(o + (m-1)G, g)
  EXPECT_DOUBLE_EQ(c.arrive, 1e-6 + 1000e-9 + 5e-6);
  EXPECT_DOUBLE_EQ(c.recv, 1e-6);
  EXPECT_DOUBLE_EQ(m->message(0, 1, 1).send, 2e-6);  // the gap dominates small messages
  EXPECT_EQ(parse_model(m->spec())->spec(), m->spec());
}

TEST(HeterogeneousModel, BanikazemiTableOneAndEquationsOneToFour) {
  auto m = parse_model("hetero:nodes=FSFS");
  EXPECT_EQ(m->ranks(), 4);
  const double us = 1e-6;
  // One-way time S(i) + X(i,j) + R(j) (eq. 1) for m bytes.
  auto one_way = [&](int i, int j, double bytes) { return m->message(i, j, uint64_t(bytes)).total(); };
  double X = 16 * us;
  EXPECT_NEAR(one_way(0, 2, 0), 60 * us + X + 110 * us, 1e-12);   // fast → fast
  EXPECT_NEAR(one_way(0, 1, 0), 60 * us + X + 140 * us, 1e-12);   // fast → slow
  EXPECT_NEAR(one_way(1, 0, 0), 90 * us + X + 110 * us, 1e-12);   // slow → fast
  EXPECT_NEAR(one_way(1, 3, 1000), (90 + 0.18 * 1000) * us + (16 + 1000 / 12.5) * us + (140 + 0.08 * 1000) * us,
              1e-12);
  // Send overhead occupies the sender (consecutive sends, eq. 7's childrank term).
  EXPECT_NEAR(m->message(1, 0, 1000).send, (90 + 180) * us, 1e-12);
  EXPECT_THROW(m->message(0, 4, 8), InputError);
  EXPECT_THROW(parse_model("hetero:nodes=FXS"), InputError);
}

TEST(HeterogeneousModel, JsonRoundTrip) {
  auto m = parse_model("hetero:nodes=FFS");
  auto back = model_from_json(m->to_json());
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (i != j) {
        EXPECT_DOUBLE_EQ(back->message(i, j, 777).total(), m->message(i, j, 777).total());
      }
}

TEST(ModelSpec, UnknownModelNamesTheKnownOnes) {
  try {
    parse_model("ethernet:speed=1");
    FAIL();
  } catch (const InputError& e) {
    std::string w = e.what();
    EXPECT_NE(w.find("postal"), std::string::npos);
    EXPECT_NE(w.find("hockney"), std::string::npos);
  }
}

TEST(HockneyModel, OverlapZeroPutsReceivesOnTheCpu) {
  auto m = parse_model("hockney:alpha=1us,beta=1ns,gamma=2ns,overlap=0");
  EXPECT_TRUE(m->receive_uses_cpu());
  EXPECT_FALSE(parse_model("hockney:alpha=1us,beta=1ns")->receive_uses_cpu());
  EXPECT_FALSE(parse_model("hockney:alpha=1us,beta=1ns,overlap=1")->receive_uses_cpu());
  // The flag is part of the model's identity: spec and JSON round-trip it.
  EXPECT_NE(m->spec().find("overlap=0"), std::string::npos);
  EXPECT_EQ(parse_model(m->spec())->spec(), m->spec());
  EXPECT_TRUE(model_from_json(m->to_json())->receive_uses_cpu());
  EXPECT_THROW(parse_model("hockney:alpha=1us,beta=1ns,overlap=2"), InputError);
  EXPECT_THROW(parse_model("hockney:alpha=1us,beta=1ns,overlap=yes"), InputError);
}

TEST(ContentDigest, ByContentNotByPathOrSpelling) {
  // The same Hockney model as a spec, spelt otherwise, and as a JSON file's
  // content; the same numbers to the last bit (2000 x 1 ns is not 2 us in
  // binary: another model, if only just).
  const uint64_t d = parse_model("hockney:alpha=2us,beta=1ns")->content_digest();
  EXPECT_EQ(parse_model("hockney:beta=1e-9,alpha=2e-6")->content_digest(), d);
  EXPECT_NE(parse_model("hockney:alpha=2000ns,beta=1ns")->content_digest(), d);
  EXPECT_EQ(model_from_json(json::parse(R"({"model": "hockney", "alpha": 2e-6, "beta": 1e-9})"))->content_digest(), d);
  EXPECT_NE(parse_model("hockney:alpha=2us,beta=1ns,gamma=0.1ns")->content_digest(), d);
  EXPECT_NE(parse_model("postal:lambda=1")->content_digest(), parse_model("postal:lambda=10")->content_digest());
  // A profile: its text, wherever it lies; one byte more is another model.
  const std::string text = read_model_file(HETCOLL_SOURCE_DIR "/tests/python/data/smpi_two_subnets.json");
  const uint64_t p = ProfileModel::from_text(text, "/a/profile.json")->content_digest();
  EXPECT_EQ(ProfileModel::from_text(text, "/b/elsewhere.json")->content_digest(), p);
  EXPECT_NE(ProfileModel::from_text(text + " ", "/a/profile.json")->content_digest(), p);
  EXPECT_NE(p, d);
}
