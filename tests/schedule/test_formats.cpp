// Text and JSON forms round-trip exactly; malformed input gives a clear error.
#include <gtest/gtest.h>

#include "plan/build_schedule.hpp"
#include "algorithms/registry.hpp"
#include "model/machine_model.hpp"
#include "schedule/builder.hpp"
#include "schedule/validator.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {
void expect_same(const Schedule& a, const Schedule& b) {
  ASSERT_EQ(a.nranks(), b.nranks());
  EXPECT_EQ(a.algorithm, b.algorithm);
  EXPECT_EQ(a.coll.to_json().dump(), b.coll.to_json().dump());
  for (int r = 0; r < a.nranks(); ++r) {
    ASSERT_EQ(a.num_ops(r), b.num_ops(r));
    EXPECT_EQ(a.tmp_bytes(r), b.tmp_bytes(r));
    for (size_t i = 0; i < a.num_ops(r); ++i) {
      const Op &x = a.op(r, i), &y = b.op(r, i);
      EXPECT_EQ(x.kind, y.kind);
      EXPECT_EQ(x.peer, y.peer);
      EXPECT_EQ(x.slice().str(), y.slice().str());
      if (x.kind == OpKind::reduce || x.kind == OpKind::copy) {
        EXPECT_EQ(x.src().str(), y.src().str());
      }
      std::vector<uint32_t> dx(a.deps_begin(r, i), a.deps_end(r, i)), dy(b.deps_begin(r, i), b.deps_end(r, i));
      EXPECT_EQ(dx, dy);
    }
  }
}
}  // namespace

TEST(Formats, RoundTripEveryRegisteredAlgorithm) {
  auto model = parse_model("postal:lambda=2.5");
  for (auto& a : registry())
    for (CollOp op : a.ops)
      for (int n : {1, 5, 13}) {
        Collective c = Collective::make(op, n, 12, n > 1 ? 1 : 0, 4);
        Schedule s = build_schedule(a.name, c, *model);
        std::string text = to_text(s);
        Schedule t = from_text(text);
        expect_same(s, t);
        EXPECT_EQ(to_text(t), text);
        Schedule j = from_json(to_json(s));
        expect_same(s, j);
        EXPECT_EQ(to_json(j), to_json(s));
        EXPECT_TRUE(validate(t).ok);
      }
}

TEST(Formats, TextIsReadable) {
  Builder b(Collective::make(CollOp::bcast, 2, 16), "demo");
  b.send(0, 1, {Buf::out, 0, 16});
  b.recv(1, 0, {Buf::out, 0, 16});
  std::string t = to_text(b.finish());
  EXPECT_NE(t.find("0: send to 1 out[0:16]"), std::string::npos) << t;
  EXPECT_NE(t.find("0: recv from 0 out[0:16]"), std::string::npos) << t;
}

TEST(Formats, MalformedTextNamesTheLine) {
  std::string base =
      "algorithm x\ncollective {\"op\":\"bcast\",\"nranks\":2,\"root\":0,\"count\":4}\nrank 0 tmp=0\n";
  auto expect_error = [](const std::string& text, const std::string& what) {
    try {
      from_text(text);
      FAIL() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_error(base + "  0: teleport to 1 out[0:4]\nrank 1 tmp=0\n", "line 4: unknown op 'teleport'");
  expect_error(base + "  0: send to 1 out[0:x]\nrank 1 tmp=0\n", "line 4");
  expect_error(base + "  0: send to 1 out[0:4]\n", "lists 1 ranks");
  expect_error(base + "  1: send to 1 out[0:4]\nrank 1 tmp=0\n", "expected op index 0");
  expect_error("rank 0 tmp=0\n", "'rank' before 'collective'");
}

TEST(Formats, MalformedJson) {
  EXPECT_THROW(from_json("{"), InputError);
  EXPECT_THROW(from_json("{\"format\":\"other\"}"), InputError);
  try {
    from_json("{\"format\":\"hetcoll-schedule\",\"version\":1,\"algorithm\":\"x\",\"collective\":"
              "{\"op\":\"bcast\",\"nranks\":1,\"count\":1},\"ranks\":[{\"tmp\":0,\"ops\":[{\"op\":\"fly\"}]}]}");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op 'fly'"), std::string::npos) << e.what();
  }
}

TEST(Builder, AppendOnASubGroupMapsRanksAndBuffers) {
  // A 2-rank broadcast appended on ranks {3, 1} of a 4-rank group.
  Builder sub(Collective::make(CollOp::bcast, 2, 8), "sub");
  sub.send(0, 1, {Buf::out, 0, 8});
  sub.recv(1, 0, {Buf::out, 0, 8});
  Schedule small = sub.finish();
  Builder b(Collective::make(CollOp::bcast, 4, 16), "big");
  b.append(small, {3, 1}, [](int, const Slice& s) { return Slice{s.buf, s.off + 8, s.len}; });
  Schedule s = b.finish();
  ASSERT_EQ(s.num_ops(3), 1u);
  EXPECT_EQ(s.op(3, 0).peer, 1);
  EXPECT_EQ(s.op(3, 0).slice().str(), "out[8:16]");
  ASSERT_EQ(s.num_ops(1), 1u);
  EXPECT_EQ(s.op(1, 0).peer, 3);
}

TEST(Builder, SendsAppendedWhileSerialAreSerialAndKeepTheirOwn) {
  // A sub-schedule with one serial send and one that is not, appended
  // twice: with serial_sends off each keeps its own, with it on both are
  // serial; receives never are.
  Builder sub(Collective::make(CollOp::bcast, 3, 8), "sub");
  sub.serial_sends(true);
  sub.send(0, 1, {Buf::out, 0, 8});
  sub.serial_sends(false);
  sub.send(0, 2, {Buf::out, 0, 8});
  sub.recv(1, 0, {Buf::out, 0, 8});
  sub.recv(2, 0, {Buf::out, 0, 8});
  Schedule small = sub.finish();
  Builder b(Collective::make(CollOp::bcast, 3, 8), "big");
  b.append(small, {0, 1, 2});
  b.serial_sends(true);
  b.append(small, {0, 1, 2});
  b.serial_sends(false);
  Schedule s = b.finish();
  ASSERT_EQ(s.num_ops(0), 4u);
  EXPECT_TRUE(s.op(0, 0).serial);
  EXPECT_FALSE(s.op(0, 1).serial);
  EXPECT_TRUE(s.op(0, 2).serial);
  EXPECT_TRUE(s.op(0, 3).serial);
  EXPECT_FALSE(s.op(1, 1).serial);
}
