// CUDA graphs made by stream capture, end to end on the CUDA/CUPTI stand-in: examples/cuda/
// graph_capture captures 3 kernel launches on a stream (graph_add, graph_mul, graph_sub: these
// launches run nothing and make no GPU record) and replays the graph with cudaGraphLaunch. Each
// replay's 3 kernel records carry that cudaGraphLaunch's correlation id and their node's graphId /
// graphNodeId (tests/cudasim/README.md, "Stream capture and graphs", cited from cupti_activity.h).
// These tests prove that the collector agrees with the stand-in: every replayed kernel is kept and
// filed under its cudaGraphLaunch, the captured launches are not counted as launches without
// records, and no schedule window waits for them. Expected counts are derived from the example's
// parameters: R replays give 3R kernels, 3 per cudaGraphLaunch, 3 node ids used R times each.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/collection/collection_util.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

constexpr int kReplays = 5;
constexpr int kPerGraph = 3;

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Correlation ids of the profile's cudaGraphLaunch calls.
std::set<uint32_t> GraphLaunches(const Profile& p) {
  std::set<uint32_t> ids;
  for (const ApiCall& c : p.api_calls) {
    if (StartsWith(ApiNameOf(p, c), "cudaGraphLaunch")) ids.insert(c.correlation_id);
  }
  return ids;
}

// What the replays of one profile look like: kernels per cudaGraphLaunch and per graph node.
struct Replays {
  std::map<uint32_t, std::multiset<std::string>> names_by_launch;  // correlation -> kernel names
  std::map<uint64_t, int> kernels_by_node;                         // graphNodeId -> kernels
  std::set<uint32_t> graph_ids;
  int outside_launches = 0;  // kernels whose correlation id is no cudaGraphLaunch of the profile
};

Replays ReplaysOf(const Profile& p) {
  Replays r;
  const std::set<uint32_t> launches = GraphLaunches(p);
  for (const Kernel& k : p.kernels) {
    std::string name(p.strings.Get(k.name));
    for (const char* base : {"graph_add", "graph_mul", "graph_sub"}) {
      if (name.find(base) != std::string::npos) name = base;
    }
    if (launches.count(k.correlation_id) == 0) ++r.outside_launches;
    r.names_by_launch[k.correlation_id].insert(name);
    const LaunchConfig& config = p.launch_configs.at(k.launch_config);
    ++r.kernels_by_node[config.graph_node_id];
    r.graph_ids.insert(config.graph_id);
  }
  return r;
}

const std::multiset<std::string> kOneReplay = {"graph_add", "graph_mul", "graph_sub"};

// The run's captured launches: calls of a launch API (not cudaGraphLaunch) that no kernel carries.
int CapturedLaunchCalls(const Profile& p) {
  std::set<uint32_t> with_kernels;
  for (const Kernel& k : p.kernels) with_kernels.insert(k.correlation_id);
  int n = 0;
  for (const ApiCall& c : p.api_calls) {
    if (IsLaunchName(ApiNameOf(p, c)) && with_kernels.count(c.correlation_id) == 0) ++n;
  }
  return n;
}

TEST(Graphs, WholeRunKeepsEveryReplayedKernelUnderItsGraphLaunchAndCountsNoCapturedLaunch) {
  const ProfiledRun run =
      RunProfiled({ExamplePath("graph_capture"), std::to_string(kReplays)}, StandInLibDir(),
                  {{"GPROF_CUPTI_LIB", StandInLibDir() + "/libcupti.so.13"}}, "graphs_whole");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  ASSERT_NE(run.process.out.find("GPROF_EXAMPLE_DONE graph_capture"), std::string::npos);
  ASSERT_TRUE(run.has_dump) << run.dump_error;
  const Profile& p = run.profile;
  EXPECT_EQ(p.kernels.size(), static_cast<size_t>(kReplays * kPerGraph));
  EXPECT_EQ(GraphLaunches(p).size(), static_cast<size_t>(kReplays));
  EXPECT_EQ(CapturedLaunchCalls(p), kPerGraph);  // recorded as calls, with no kernel of their own
  const Replays r = ReplaysOf(p);
  EXPECT_EQ(r.outside_launches, 0);
  ASSERT_EQ(r.names_by_launch.size(), static_cast<size_t>(kReplays));
  for (const auto& [corr, names] : r.names_by_launch) EXPECT_EQ(names, kOneReplay) << corr;
  // One graph, three nodes, each node's id the same in every replay.
  ASSERT_EQ(r.graph_ids.size(), 1u);
  EXPECT_NE(*r.graph_ids.begin(), 0u);
  ASSERT_EQ(r.kernels_by_node.size(), static_cast<size_t>(kPerGraph));
  for (const auto& [node, n] : r.kernels_by_node) {
    EXPECT_NE(node, 0u);
    EXPECT_EQ(n, kReplays) << "node " << node;
  }
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  EXPECT_EQ(p.counters.gpu_records_uncorrelated, 0u);
  EXPECT_EQ(p.counters.gpu_records_incomplete, 0u);
}

// gprof-run with `schedule` on graph_capture, the library's info log on (a window that waits for
// records says so there).
LauncherRun RunWindows(const std::vector<std::string>& schedule, const std::string& tag) {
  return RunLauncherWindows(schedule, {ExamplePath("graph_capture"), std::to_string(kReplays)},
                            tag);
}

// Every cudaGraphLaunch ends a step and belongs to it (docs/SCHEDULE.md, `api:NAME`), one step per
// window: window 0 is the program start through the first cudaGraphLaunch (so it holds the 3
// captured launches), windows 0-4 hold one replay each, and the exit during step 5 saves a
// partial window with the synchronize and the destroy calls and no kernel. A window that awaited
// the captured launches would be held until exit (written after the later windows) and logged as
// "never got a GPU record".
TEST(Graphs, OneWindowPerGraphLaunchHoldsItsReplayAndNoWindowWaitsForCapturedLaunches) {
  const LauncherRun r = RunWindows({"--step", "api:cudaGraphLaunch", "--wait", "0", "--warmup",
                                    "0", "--active", "1", "--repeat", "0"},
                                   "graphs_windows");
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  EXPECT_EQ(r.process.err.find("never got a GPU record"), std::string::npos) << r.process.err;
  // Written as each window ends: window 0 before window 1 (a held window 0 comes out at exit).
  const size_t wrote0 = r.process.err.find(".cycle0.steps0-0.gpdump");
  const size_t wrote1 = r.process.err.find(".cycle1.steps1-1.gpdump");
  ASSERT_NE(wrote0, std::string::npos) << r.process.err;
  ASSERT_NE(wrote1, std::string::npos) << r.process.err;
  EXPECT_LT(wrote0, wrote1) << r.process.err;
  ASSERT_EQ(r.windows.size(), static_cast<size_t>(kReplays + 1)) << r.process.err;
  for (size_t i = 0; i < r.windows.size(); ++i) {
    const Profile& p = r.windows[i];
    SCOPED_TRACE("window " + std::to_string(i));
    EXPECT_EQ(p.info.cycle, i);
    EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
    EXPECT_EQ(p.counters.gpu_records_uncorrelated, 0u);
    EXPECT_EQ(p.counters.gpu_records_incomplete, 0u);
    if (i == static_cast<size_t>(kReplays)) {
      EXPECT_TRUE(p.info.partial_window);
      EXPECT_TRUE(p.kernels.empty());
      continue;
    }
    EXPECT_EQ(GraphLaunches(p).size(), 1u);
    EXPECT_EQ(CapturedLaunchCalls(p), i == 0 ? kPerGraph : 0);
    const Replays rep = ReplaysOf(p);
    EXPECT_EQ(rep.outside_launches, 0);
    ASSERT_EQ(rep.names_by_launch.size(), 1u);
    EXPECT_EQ(rep.names_by_launch.begin()->second, kOneReplay);
  }
}

// --wait 1 --warmup 1 --active 2 --repeat 1: step 0 (the capture and replay 1) waits, step 1
// (replay 2) warms up, steps 2-3 (replays 3 and 4) are the one window: 6 kernels, 3 under each
// of its 2 cudaGraphLaunch calls; replay 5 comes after the last window.
TEST(Graphs, WaitWarmupActiveWindowHoldsExactlyItsTwoReplays) {
  const LauncherRun r = RunWindows({"--step", "api:cudaGraphLaunch", "--wait", "1", "--warmup",
                                    "1", "--active", "2", "--repeat", "1"},
                                   "graphs_wait_warmup");
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  ASSERT_EQ(r.windows.size(), 1u) << r.process.err;
  const Profile& p = r.windows[0];
  EXPECT_EQ(p.info.first_step, 2u);
  EXPECT_EQ(p.info.last_step, 3u);
  EXPECT_EQ(p.kernels.size(), 6u);
  EXPECT_EQ(GraphLaunches(p).size(), 2u);
  EXPECT_EQ(CapturedLaunchCalls(p), 0);
  const Replays rep = ReplaysOf(p);
  EXPECT_EQ(rep.outside_launches, 0);
  ASSERT_EQ(rep.names_by_launch.size(), 2u);
  for (const auto& [corr, names] : rep.names_by_launch) EXPECT_EQ(names, kOneReplay) << corr;
  EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
  EXPECT_EQ(p.counters.gpu_records_incomplete, 0u);
}

// A capture that spans windows: every captured launch ends a step (`api:__cudaLaunchKernel`; the
// replays make no launch call), so step 0 is the program start through the graph_add launch (with
// cudaStreamBeginCapture), steps 1 and 2 are the graph_mul and graph_sub launches alone, and the
// exit during step 3 saves the rest: cudaStreamEndCapture and the 5 replays, 15 kernels. Windows
// 1 and 2 hold a captured launch whose cudaStreamBeginCapture is in an earlier window: it still
// makes no record, so it must neither count as a launch without records nor hold its window.
TEST(Graphs, ACaptureSpanningWindowsCountsNoCapturedLaunchInTheLaterWindows) {
  const LauncherRun r = RunWindows({"--step", "api:__cudaLaunchKernel", "--wait", "0", "--warmup",
                                    "0", "--active", "1", "--repeat", "0"},
                                   "graphs_span");
  ASSERT_EQ(r.process.exit_code, 0) << r.process.err;
  EXPECT_EQ(r.process.err.find("never got a GPU record"), std::string::npos) << r.process.err;
  ASSERT_EQ(r.windows.size(), 4u) << r.process.err;
  for (size_t i = 0; i < r.windows.size(); ++i) {
    const Profile& p = r.windows[i];
    SCOPED_TRACE("window " + std::to_string(i));
    EXPECT_EQ(p.counters.gpu_launches_without_records, 0u);
    EXPECT_EQ(p.counters.gpu_records_uncorrelated, 0u);
    if (i < 3) {
      EXPECT_EQ(CapturedLaunchCalls(p), 1);
      EXPECT_TRUE(p.kernels.empty());
      continue;
    }
    EXPECT_TRUE(p.info.partial_window);
    EXPECT_EQ(p.kernels.size(), static_cast<size_t>(kReplays * kPerGraph));
    EXPECT_EQ(GraphLaunches(p).size(), static_cast<size_t>(kReplays));
    EXPECT_EQ(ReplaysOf(p).outside_launches, 0);
  }
}

}  // namespace
}  // namespace gprof::testing
