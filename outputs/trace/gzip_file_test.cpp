// Unit tests: gzip traces round-trip byte for byte, and the checker reads them like plain ones.
#include "outputs/trace/gzip_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "outputs/trace/trace_check.h"
#include "outputs/trace/trace_json.h"

namespace gprof {
namespace {

std::string Temp(const std::string& name) {
  return testing::TempDir() + "/gz_" + std::to_string(::getpid()) + "_" + name;
}

std::string ReadRaw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(GzipFile, LargeTextRoundTripsAndIsSmaller) {
  std::string text;
  for (int i = 0; i < 200000; ++i) text += "{\"ph\":\"X\",\"ts\":" + std::to_string(i) + "},\n";
  const std::string path = Temp("big.gz");
  GzipFile gz(path);
  gz.Write(text.data(), text.size() / 3);
  gz.Write(text.data() + text.size() / 3, text.size() - text.size() / 3);
  const uint64_t bytes = gz.Close();
  EXPECT_EQ(bytes, ReadRaw(path).size());
  EXPECT_LT(bytes * 4, text.size());
  EXPECT_EQ(ReadMaybeGzip(path), text);
}

TEST(GzipFile, PlainFilesAreReadAsTheyAre) {
  const std::string path = Temp("plain.json");
  std::ofstream(path) << "[1, 2]";
  EXPECT_EQ(ReadMaybeGzip(path), "[1, 2]");
}

TEST(GzipFile, TruncatedGzipIsAnErrorNamingTheFile) {
  const std::string path = Temp("cut.gz");
  {
    GzipFile gz(path);
    const std::string text(100000, 'x');
    gz.Write(text.data(), text.size());
    gz.Close();
  }
  const std::string whole = ReadRaw(path);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() / 2);
  try {
    ReadMaybeGzip(path);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("not a complete gzip file"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
  }
  EXPECT_EQ(CheckTrace(path).at(0).rule, "unreadable");
}

TEST(GzipFile, UnclosedFileLeavesNothing) {
  const std::string path = Temp("unclosed.gz");
  { GzipFile gz(path); gz.Write("abc", 3); }
  EXPECT_FALSE(std::ifstream(path).good());
}

TEST(WriteTraceJson, GzPathWritesTheSameTraceCompressed) {
  Profile p;
  p.info.pid = 7;
  p.info.start_ns = 1'000'000;
  const StringId name = p.strings.Intern("step");
  for (uint64_t i = 0; i < 1000; ++i) {
    p.ranges.push_back({1'000'000 + i * 100, 1'000'050 + i * 100, name, 7, 0, 0, 0});
  }
  const std::string plain = Temp("trace.json"), gz = Temp("trace.json.gz");
  const TraceStats a = WriteTraceJson(p, plain);
  const TraceStats b = WriteTraceJson(p, gz);
  EXPECT_EQ(a.events, b.events);
  EXPECT_EQ(b.bytes, ReadRaw(gz).size());
  EXPECT_LT(b.bytes, a.bytes);
  // Byte for byte the same JSON but for the file name the trace carries.
  std::string unpacked = ReadMaybeGzip(gz), expected = ReadRaw(plain);
  const auto drop_name = [](std::string s, const std::string& n) {
    for (size_t at = s.find(n); at != std::string::npos; at = s.find(n)) s.erase(at, n.size());
    return s;
  };
  EXPECT_EQ(drop_name(drop_name(unpacked, "trace.json.gz"), "trace.json"),
            drop_name(expected, "trace.json"));
  EXPECT_TRUE(CheckTrace(gz).empty());
}

}  // namespace
}  // namespace gprof
