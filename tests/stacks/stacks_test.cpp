// --backtrace on a real process: tests/stacks/stack_prog.cu on the CUDA/CUPTI stand-in under
// gprof-run. main -> outer() -> middle() syncs 3 times, main -> other() 5 times (the program's
// constants, counted by hand from its source), so:
//   - with --backtrace=sync every cudaDeviceSynchronize event in trace.json carries args.stack;
//     the three from middle name middle, outer, main in that order (innermost first);
//   - cuda_api_stack_sum attributes 3 calls to middle() and 5 to other();
//   - the .pftrace carries the same stacks as "stack" annotations (decoded with protoc) and
//     report.html lists the two stacks with 3 and 5 calls;
//   - with --backtrace=none no event has a stack.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/support/pftrace_decode.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

struct StackRun {
  ProcessResult process;
  std::string dir;
  nlohmann::json trace;
};

StackRun ProfileStackProg(const std::string& backtrace, const std::string& tag,
                          const std::string& formats = "json") {
  StackRun r;
  r.dir = MakeTempDir(tag) + "/out";
  ProcessOptions o;
  o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
  r.process = RunProcess({LauncherPath(), "-o", r.dir, "--cupti-lib",
                          StandInLibDir() + "/libcupti.so.13", "--trace-format", formats,
                          "--backtrace=" + backtrace, "--", GPROF_STACK_PROG},
                         o);
  for (const std::string& f : ListDir(r.dir)) {
    if (f.size() >= 10 && f.substr(f.size() - 10) == "trace.json") {
      r.trace = nlohmann::json::parse(ReadFile(r.dir + "/" + f));
    }
  }
  return r;
}

// The trace's events named cudaDeviceSynchronize (the runtime's name, shown without suffix).
std::vector<nlohmann::json> SyncEvents(const nlohmann::json& trace) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e.value("ph", "") == "X" && e.value("name", "") == "cudaDeviceSynchronize") {
      out.push_back(e);
    }
  }
  return out;
}

// Index of the first frame in `stack` whose text starts with `function`, or -1.
int FrameIndex(const nlohmann::json& stack, const std::string& function) {
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack[i].get<std::string>().rfind(function, 0) == 0) return static_cast<int>(i);
  }
  return -1;
}

TEST(NativeStacks, SyncEventsCarryStacksNamingMiddleOuterMainInnermostFirst) {
#ifndef GPROF_HAVE_LIBDW
  GTEST_SKIP() << "gprof-run built without libdw: frames are module+offset, not names";
#endif
  const StackRun r = ProfileStackProg("sync", "stacks_sync");
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  ASSERT_FALSE(r.trace.is_null()) << r.process.err;
  const std::vector<nlohmann::json> syncs = SyncEvents(r.trace);
  ASSERT_EQ(syncs.size(), 8u) << "3 from middle + 5 from other";
  int from_middle = 0, from_other = 0;
  for (const nlohmann::json& e : syncs) {
    ASSERT_TRUE(e["args"].contains("stack")) << e.dump();
    const nlohmann::json& stack = e["args"]["stack"];
    const int middle = FrameIndex(stack, "middle()");
    const int other = FrameIndex(stack, "other()");
    const int main_frame = FrameIndex(stack, "main");
    ASSERT_GE(main_frame, 0) << stack.dump();
    if (middle >= 0) {
      ++from_middle;
      const int outer = FrameIndex(stack, "outer()");
      EXPECT_LT(middle, outer) << stack.dump();
      EXPECT_LT(outer, main_frame) << stack.dump();
      EXPECT_NE(stack[middle].get<std::string>().find("stack_prog.cu:"), std::string::npos)
          << "line numbers from -g: " << stack.dump();
    } else if (other >= 0) {
      ++from_other;
      EXPECT_LT(other, main_frame) << stack.dump();
      EXPECT_EQ(FrameIndex(stack, "outer()"), -1) << stack.dump();
    }
  }
  EXPECT_EQ(from_middle, 3);
  EXPECT_EQ(from_other, 5);
  // Only sync was selected: the allocation and the launch carry none.
  for (const nlohmann::json& e : r.trace["traceEvents"]) {
    const std::string name = e.value("name", "");
    if (name == "cudaMalloc" || name == "cudaFree" || name == "cudaLaunchKernel") {
      EXPECT_FALSE(e.contains("args") && e["args"].contains("stack")) << e.dump();
    }
  }

  const ProcessResult stats = RunProcess({LauncherPath(), "stats", r.dir, "--report",
                                          "cuda_api_stack_sum", "--format", "json"});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  const nlohmann::json rows = nlohmann::json::parse(stats.out)["cuda_api_stack_sum"];
  uint64_t middle_calls = 0, other_calls = 0, rows_seen = 0;
  for (const nlohmann::json& row : rows) {
    ++rows_seen;
    EXPECT_EQ(row["Name"], "cudaDeviceSynchronize") << row.dump();
    if (row["Caller"] == "middle()") middle_calls = row["Num Calls"].get<uint64_t>();
    if (row["Caller"] == "other()") other_calls = row["Num Calls"].get<uint64_t>();
  }
  EXPECT_EQ(rows_seen, 2u) << rows.dump();
  EXPECT_EQ(middle_calls, 3u) << rows.dump();
  EXPECT_EQ(other_calls, 5u) << rows.dump();
}

// The same run with the .pftrace and report.html: every synchronize's slice carries its stack as
// the "stack" annotation (3 stacks through middle(), 5 through other()), and the page's stacks
// section has one row per stack, from middle() with 3 calls and from other() with 5.
TEST(NativeStacks, PftraceAndReportHtmlCarryTheStacks) {
#ifndef GPROF_HAVE_LIBDW
  GTEST_SKIP() << "gprof-run built without libdw: frames are module+offset, not names";
#endif
  const StackRun r = ProfileStackProg("sync", "stacks_pftrace", "json,pftrace");
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  const std::string page = ReadFile(r.dir + "/report.html");
  EXPECT_NE(page.find("<h2>Native stacks (--backtrace)</h2>"), std::string::npos);
  EXPECT_NE(page.find("8 blocking calls with a native stack"), std::string::npos);
  EXPECT_NE(page.find("from middle()</span></td><td>3</td>"), std::string::npos);
  EXPECT_NE(page.find("from other()</span></td><td>5</td>"), std::string::npos);
  if (!ProtocInstalled()) GTEST_SKIP() << "protoc not installed: the .pftrace was not decoded";
  const ProcessResult decoded = DecodePftrace(r.dir + "/trace.pftrace");
  ASSERT_EQ(decoded.exit_code, 0) << decoded.err;
  const auto count = [&](const std::string& needle) { return CountOf(decoded.out, needle); };
  EXPECT_EQ(count("string_value: \"middle() ("), 3u);
  EXPECT_EQ(count("string_value: \"outer() ("), 3u);
  EXPECT_EQ(count("string_value: \"other() ("), 5u);
  EXPECT_EQ(count("name: \"stack\""), 1u) << "the annotation name is interned once";
}

TEST(NativeStacks, BacktraceNoneLeavesEveryEventWithoutAStack) {
  const StackRun r = ProfileStackProg("none", "stacks_none");
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  ASSERT_FALSE(r.trace.is_null()) << r.process.err;
  EXPECT_EQ(SyncEvents(r.trace).size(), 8u);
  for (const nlohmann::json& e : r.trace["traceEvents"]) {
    EXPECT_FALSE(e.contains("args") && e["args"].contains("stack")) << e.dump();
  }
}

}  // namespace
}  // namespace gprof::testing
