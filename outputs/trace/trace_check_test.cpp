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
