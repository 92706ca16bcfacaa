// Unit tests for the link TensorBoard's profiler plugin finds (tensorboard_link.h).
#include "launcher/render/tensorboard_link.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include <gtest/gtest.h>

namespace gprof::launcher {
namespace {

namespace fs = std::filesystem;

// The plugin's pattern, as torch_tb_profiler 0.4.3 writes it (consts.py WORKER_PATTERN):
// worker name, optional ".<digits>" span, ".pt.trace.json", optional ".gz".
const std::regex kPluginPattern(R"(^(.*?)(\.\d+)?\.pt\.trace\.json(?:\.gz)?$)");

class TensorBoardLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gprof_tb_link_test." + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    fs::create_directories((dir_ / name).parent_path());
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  static std::string Read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

// What the plugin does with --logdir: every folder under it (itself included) holding a file
// whose name matches is a run (plugin.py _get_run_dirs); a run's workers are its files that
// match, directories skipped, the worker being the first group (loader.py RunLoader.load).
using Workers = std::vector<std::pair<std::string, fs::path>>;
Workers WorkersIn(const fs::path& dir) {
  Workers workers;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (fs::is_directory(entry.path())) continue;
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, kPluginPattern)) workers.emplace_back(m[1].str(), entry.path());
  }
  return workers;
}
std::map<fs::path, Workers> PluginRuns(const fs::path& logdir) {
  std::map<fs::path, Workers> runs;
  if (Workers w = WorkersIn(logdir); !w.empty()) runs[logdir] = w;
  for (const auto& entry : fs::recursive_directory_iterator(logdir)) {
    if (!entry.is_directory()) continue;
    if (Workers w = WorkersIn(entry.path()); !w.empty()) runs[entry.path()] = w;
  }
  return runs;
}

TEST_F(TensorBoardLinkTest, PluginFindsOneWorkerWhoseFileReadsAsTheTrace) {
  const std::string trace = Write("trace.json", "{\"traceEvents\":[]}");
  Write("table.txt", "t");
  EXPECT_TRUE(PluginRuns(dir_).empty());  // trace.json alone is not listed
  ASSERT_EQ(LinkTraceForTensorBoard("gprof-run", trace), "");
  const auto runs = PluginRuns(dir_);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs.begin()->first, dir_ / "tensorboard");
  const auto& workers = runs.begin()->second;
  ASSERT_EQ(workers.size(), 1u);
  EXPECT_EQ(workers[0].first, "gprof-run");
  EXPECT_EQ(Read(workers[0].second), "{\"traceEvents\":[]}");
  EXPECT_EQ(fs::read_symlink(workers[0].second), fs::path("../trace.json"));  // relative
  // The output folder's own files are as they were: no new *.trace.json there.
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_TRUE(entry.path().filename() == "trace.json" ||
                entry.path().filename() == "table.txt" ||
                entry.path().filename() == "tensorboard") << entry.path();
  }
}

TEST_F(TensorBoardLinkTest, GzipTraceKeepsItsSuffixAndADumpStemIsTheWorker) {
  const std::string trace = Write("rank1.4242.trace.json.gz", "gz");
  ASSERT_EQ(LinkTraceForTensorBoard("rank1.4242", trace), "");
  const auto runs = PluginRuns(dir_);
  ASSERT_EQ(runs.size(), 1u);
  const auto& workers = runs.begin()->second;
  ASSERT_EQ(workers.size(), 1u);
  // The plugin reads ".4242" as a span of worker "rank1", as it does with torch's own
  // <worker>.<time>.pt.trace.json names.
  EXPECT_EQ(workers[0].first, "rank1");
  EXPECT_EQ(workers[0].second.filename(), "rank1.4242.pt.trace.json.gz");
}

TEST_F(TensorBoardLinkTest, EachProcessDumpOfARunIsItsOwnWorkerNamedHostUnderscorePid) {
  // Four ranks' dumps train.py.<pid>: as <program>.<pid> names they would be four spans of one
  // worker "train.py"; named as tensorboard_trace_handler names them (<hostname>_<pid>), four.
  for (const char* pid : {"101", "102", "103", "104"}) {
    const std::string stem = std::string("train.py.") + pid;
    const std::string trace = Write(stem + ".trace.json", pid);
    ASSERT_EQ(LinkTraceForTensorBoard(TensorBoardWorker(stem, "node7"), trace), "");
  }
  const auto runs = PluginRuns(dir_);
  ASSERT_EQ(runs.size(), 1u);
  std::map<std::string, std::string> workers;  // worker -> its trace's text
  for (const auto& [worker, path] : runs.begin()->second) workers[worker] = Read(path);
  EXPECT_EQ(workers, (std::map<std::string, std::string>{
                         {"node7_101", "101"}, {"node7_102", "102"}, {"node7_103", "103"},
                         {"node7_104", "104"}}));
  // No host name: the program stands in for it. A window's stem has no trailing pid: kept.
  EXPECT_EQ(TensorBoardWorker("train.py.101", ""), "train.py_101");
  EXPECT_EQ(TensorBoardWorker("train.py.101.cycle1.steps3-5", "node7"),
            "train.py.101.cycle1.steps3-5");
  EXPECT_EQ(TensorBoardWorker("gprof-run", "node7"), "gprof-run");
}

TEST_F(TensorBoardLinkTest, SecondRunReplacesItsOwnLinkButNeverAFileOfThatName) {
  const std::string trace = Write("trace.json", "new");
  ASSERT_EQ(LinkTraceForTensorBoard("gprof-run", trace), "");
  ASSERT_EQ(LinkTraceForTensorBoard("gprof-run", trace), "");
  EXPECT_EQ(Read(dir_ / "tensorboard/gprof-run.pt.trace.json"), "new");
  Write("tensorboard/mine.pt.trace.json", "user's");
  EXPECT_NE(LinkTraceForTensorBoard("mine", trace), "");
  EXPECT_EQ(Read(dir_ / "tensorboard/mine.pt.trace.json"), "user's");
}

TEST_F(TensorBoardLinkTest, ATensorboardFileThatIsNotAFolderIsLeftAlone) {
  const std::string trace = Write("trace.json", "t");
  Write("tensorboard", "user's");
  EXPECT_NE(LinkTraceForTensorBoard("gprof-run", trace), "");
  EXPECT_EQ(Read(dir_ / "tensorboard"), "user's");
}

TEST_F(TensorBoardLinkTest, UnlinkingARanklessTraceLeavesTheRanksAndAFileOfThatName) {
  const std::string launcher = Write("trace.json", "launcher");
  const std::string rank0 = Write("app.11.trace.json", "rank 0");
  ASSERT_EQ(LinkTraceForTensorBoard("gprof-run", launcher), "");
  ASSERT_EQ(LinkTraceForTensorBoard("app.11", rank0), "");
  UnlinkTraceForTensorBoard("gprof-run", launcher);
  const auto runs = PluginRuns(dir_);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs.begin()->second.size(), 1u);
  EXPECT_EQ(Read(runs.begin()->second[0].second), "rank 0");
  EXPECT_EQ(Read(launcher), "launcher");  // the trace itself stays
  Write("tensorboard/mine.pt.trace.json", "user's");
  UnlinkTraceForTensorBoard("mine", launcher);
  EXPECT_EQ(Read(dir_ / "tensorboard/mine.pt.trace.json"), "user's");
}

}  // namespace
}  // namespace gprof::launcher
