// Unit tests: CheckTrace finds each rule of REFERENCE.md §4 in a small bad trace, and says where.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "outputs/trace/trace_check.h"

namespace gprof {
namespace {

std::vector<TraceViolation> Check(const std::string& events_json) {
  static int n = 0;
  // The pid too: ctest runs each test of this binary as its own process, several at once.
  const std::string path = testing::TempDir() + "/check_" + std::to_string(::getpid()) + "_" +
                           std::to_string(n++) + ".json";
  std::ofstream(path, std::ios::binary) << "{\"traceEvents\": [" << events_json << "]}";
  return CheckTrace(path);
}

// The rules found, in order.
std::vector<std::string> Rules(const std::vector<TraceViolation>& v) {
  std::vector<std::string> r;
  for (const auto& x : v) r.push_back(x.rule);
  return r;
}

const char* kGood =
    R"({"ph":"X","name":"a","pid":1,"tid":2,"ts":0.000,"dur":10.000},)"
    R"({"ph":"X","name":"b","pid":1,"tid":2,"ts":1.000,"dur":2.000},)"
    R"({"ph":"s","id":1,"name":"ac2g","cat":"ac2g","pid":1,"tid":2,"ts":1.000},)"
    R"({"ph":"f","id":1,"bp":"e","name":"ac2g","cat":"ac2g","pid":0,"tid":7,"ts":5.000},)"
    R"({"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}})";

TEST(CheckTrace, CleanTraceHasNoViolations) { EXPECT_TRUE(Check(kGood).empty()); }

TEST(CheckTrace, PartialOverlapOnOneTrackIsNesting) {
  const auto v = Check(R"({"ph":"X","name":"a","pid":1,"tid":2,"ts":0,"dur":10},)"
                       R"({"ph":"X","name":"b","pid":1,"tid":2,"ts":5,"dur":10},)"
                       R"({"ph":"X","name":"c","pid":1,"tid":3,"ts":5,"dur":10})");
  ASSERT_EQ(Rules(v), std::vector<std::string>{"nesting"});
  EXPECT_NE(v[0].message.find("event #1 'b'"), std::string::npos) << v[0].message;
  EXPECT_NE(v[0].message.find("event #0 'a'"), std::string::npos) << v[0].message;
}

TEST(CheckTrace, NegativeOrTooLargePidTid) {
  EXPECT_EQ(Rules(Check(R"({"ph":"X","name":"a","pid":-1,"tid":2,"ts":0,"dur":1})")),
            std::vector<std::string>{"pid-tid-range"});
  EXPECT_EQ(Rules(Check(R"({"ph":"X","name":"a","pid":1,"tid":4294967296,"ts":0,"dur":1})")),
            std::vector<std::string>{"pid-tid-range"});
}

TEST(CheckTrace, NegativeTs) {
  EXPECT_EQ(Rules(Check(R"({"ph":"i","name":"a","pid":1,"tid":2,"ts":-3.5})")),
            std::vector<std::string>{"negative-ts"});
}

TEST(CheckTrace, FlowIdNotANumber) {
  EXPECT_EQ(Rules(Check(R"({"ph":"s","id":"12","name":"f","pid":1,"tid":2,"ts":1})")),
            std::vector<std::string>{"flow-id-not-number"});
}

TEST(CheckTrace, FlowIdReused) {
  const auto v = Check(R"({"ph":"s","id":3,"name":"f","pid":1,"tid":2,"ts":1},)"
                       R"({"ph":"s","id":3,"name":"f","pid":1,"tid":2,"ts":2},)"
                       R"({"ph":"f","id":3,"bp":"e","name":"f","pid":1,"tid":2,"ts":3})");
  ASSERT_EQ(Rules(v), std::vector<std::string>{"flow-id-reused"});
  EXPECT_NE(v[0].message.find("event #1"), std::string::npos);
}

TEST(CheckTrace, FlowEndWithoutStart) {
  EXPECT_EQ(Rules(Check(R"({"ph":"f","id":9,"bp":"e","name":"f","pid":1,"tid":2,"ts":3})")),
            std::vector<std::string>{"flow-without-start"});
}

// Flow v2: the link written on the two slices, "bind_id" with "flow_out" on the launching call
// and "flow_in" on the GPU record (Perfetto's json_trace_parser.cc MaybeAddFlow).
std::string BoundSlice(const char* name, const char* id, const char* dir, double ts) {
  return std::string(R"({"ph":"X","name":")") + name + R"(","pid":1,"tid":2,"ts":)" +
         std::to_string(ts) + R"(,"dur":1,"bind_id":)" + id + dir + "}";
}
const char* kOut = R"(,"flow_out":true)";
const char* kIn = R"(,"flow_in":true)";

TEST(CheckTrace, FlowV2PairIsClean) {
  EXPECT_TRUE(Check(BoundSlice("call", "4294967297", kOut, 1) + "," +
                    BoundSlice("kernel", "4294967297", kIn, 5))
                  .empty());
  // A flow_out nobody ends: no arrow, and nothing Perfetto complains about.
  EXPECT_TRUE(Check(BoundSlice("call", "4294967297", kOut, 1)).empty());
}

TEST(CheckTrace, FlowV2InWithoutOutOrBeforeIt) {
  EXPECT_EQ(Rules(Check(BoundSlice("kernel", "7", kIn, 5))),
            std::vector<std::string>{"flow-without-start"});
  // Perfetto and the trace viewer take events in ts order: an end at 0 comes before its start.
  EXPECT_EQ(Rules(Check(BoundSlice("call", "7", kOut, 1) + "," + BoundSlice("k", "7", kIn, 0))),
            std::vector<std::string>{"flow-without-start"});
}

TEST(CheckTrace, FlowV2SecondOutIsReused) {
  const auto v = Check(BoundSlice("a", "7", kOut, 1) + "," + BoundSlice("b", "7", kOut, 3));
  ASSERT_EQ(Rules(v), std::vector<std::string>{"flow-id-reused"});
  EXPECT_NE(v[0].message.find("event #1 'b'"), std::string::npos) << v[0].message;
}

TEST(CheckTrace, FlowV2BadIdDirectionOrPhase) {
  EXPECT_EQ(Rules(Check(BoundSlice("a", "7", "", 1))),
            std::vector<std::string>{"flow-without-direction"});
  EXPECT_EQ(Rules(Check(BoundSlice("a", "\"7\"", kOut, 1))),
            std::vector<std::string>{"flow-id-not-number"});
  EXPECT_EQ(Rules(Check(R"({"ph":"i","name":"a","pid":1,"tid":2,"ts":1,"bind_id":7,"flow_out":true})")),
            std::vector<std::string>{"flow-bind-ignored"});
}

// One v1 flow (a fwdbwd pair) is Perfetto's flow 0: a bind_id 0 pair meets it, 2^32 + 1 does not.
TEST(CheckTrace, FlowV2IdBelowV1FlowCountClashes) {
  const std::string fwdbwd =
      R"({"ph":"s","id":1099511627777,"cat":"fwdbwd","name":"fwdbwd","pid":1,"tid":2,"ts":1},)"
      R"({"ph":"f","id":1099511627777,"cat":"fwdbwd","name":"fwdbwd","pid":1,"tid":2,"ts":2,"bp":"e"},)";
  EXPECT_EQ(Rules(Check(fwdbwd + BoundSlice("call", "0", kOut, 1) + "," +
                        BoundSlice("kernel", "0", kIn, 5))),
            (std::vector<std::string>{"flow-id-clash", "flow-id-clash"}));
  EXPECT_TRUE(Check(fwdbwd + BoundSlice("call", "4294967297", kOut, 1) + "," +
                    BoundSlice("kernel", "4294967297", kIn, 5))
                  .empty());
}

TEST(CheckTrace, RawControlCharacterSaysWhere) {
  const auto v = Check("{\"ph\":\"i\",\"name\":\"a\x01\",\"pid\":1,\"tid\":2,\"ts\":1}");
  ASSERT_EQ(Rules(v), std::vector<std::string>{"control-character"});
  EXPECT_NE(v[0].message.find("event #0"), std::string::npos) << v[0].message;
}

TEST(CheckTrace, InvalidUtf8SaysWhere) {
  const auto v = Check(std::string(kGood) + ",{\"ph\":\"i\",\"name\":\"a\xff\",\"pid\":1,\"tid\":2,\"ts\":1}");
  ASSERT_EQ(Rules(v), std::vector<std::string>{"invalid-utf8"});
  EXPECT_NE(v[0].message.find("event #5"), std::string::npos) << v[0].message;
}

TEST(CheckTrace, MissingRequiredFields) {
  EXPECT_EQ(Rules(Check(R"({"name":"a","pid":1,"tid":2,"ts":1})")), std::vector<std::string>{"missing-field"});
  EXPECT_EQ(Rules(Check(R"({"ph":"i","pid":1,"tid":2,"ts":1})")), std::vector<std::string>{"missing-field"});
  EXPECT_EQ(Rules(Check(R"({"ph":"i","name":"a","pid":1,"tid":2})")), std::vector<std::string>{"missing-field"});
  EXPECT_EQ(Rules(Check(R"({"ph":"X","name":"a","pid":1,"tid":2,"ts":1})")), std::vector<std::string>{"missing-field"});
  EXPECT_EQ(Rules(Check(R"({"ph":"X","name":"a","tid":2,"ts":1,"dur":1})")), std::vector<std::string>{"missing-field"});
  EXPECT_EQ(Rules(Check(R"({"ph":"X","name":"a","pid":2,"ts":1,"dur":1})")), std::vector<std::string>{"missing-field"});
}

TEST(CheckTrace, PhasesPerfettoDropsSilently) {
  for (const char* ph : {"S", "T", "F", "p", "N", "O", "D", "v", "V"}) {
    const auto v = Check(std::string(R"({"ph":")") + ph + R"(","name":"a","pid":1,"tid":2,"ts":1,"id":1})");
    EXPECT_EQ(Rules(v), std::vector<std::string>{"dropped-phase"}) << ph;
  }
}

TEST(CheckTrace, UnreadableAndUnparsableFiles) {
  EXPECT_EQ(Rules(CheckTrace(testing::TempDir() + "/does_not_exist.json")),
            std::vector<std::string>{"unreadable"});
  const std::string path = testing::TempDir() + "/broken.json";
  std::ofstream(path) << "{\"traceEvents\": [";
  EXPECT_EQ(Rules(CheckTrace(path)), std::vector<std::string>{"parse-error"});
}

}  // namespace
}  // namespace gprof
