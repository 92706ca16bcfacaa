// report.html of real programs under gprof-run: the seeds' matmul + bias at 64 (overhead-bound)
// and 4096 (compute-bound) and the multi-stream example on the CUDA/CUPTI stand-in, and the
// NVTX-only training loop. Each asserts the page's verdict, step count, kernel names and the
// numbers the stand-in's knobs fix (tests/cudasim/README.md: a kernel lasts
// CUDASIM_KERNEL_BASE_NS 1500 + threads x CUDASIM_KERNEL_PS_PER_THREAD / 1000 ns, integer ns).
// Verified on the stand-in only.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/support/process.h"

namespace gprof::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Page(const std::string& tag, const std::vector<std::string>& program,
                 const std::map<std::string, std::string>& env = {}) {
  const std::string dir = MakeTempDir("html_pages_" + tag) + "/out";
  std::vector<std::string> argv = {LauncherPath(), "-q", "-o", dir, "--cupti-lib",
                                   StandInLibDir() + "/libcupti.so.13", "--"};
  argv.insert(argv.end(), program.begin(), program.end());
  ProcessOptions o;
  o.set_env = env;
  o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
  const ProcessResult r = RunProcess(argv, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr(", report " + dir + "/report.html"));
  const std::string page = ReadFile(dir + "/report.html");
  EXPECT_THAT(page, Not(HasSubstr("<script")));
  EXPECT_LT(page.size(), 1u << 20);
  return page;
}

// The distribution row of a kernel: instances, total, min, median, p95, max.
std::string Row(const std::string& kernel, const std::vector<std::string>& cells) {
  std::string s = "<td class=\"name\" title=\"" + kernel + "\">" + kernel + "</td>";
  for (const std::string& c : cells) s += "<td>" + c + "</td>";
  return s;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

constexpr const char* kMatmul = "matmul_kernel(float const*, float const*, float*, int)";
constexpr const char* kBias = "bias_add_kernel(float*, float const*, int)";

// 64: each kernel runs 4096 threads (4 x 4 blocks of 16 x 16; 16 blocks of 256):
// 1500 + 4096 x 50 / 1000 = 1704 ns, 2,000 of each (3,408.000 us). The GPU idles between them
// (findings_patterns_test: busy about a quarter of the window, and why 2,000 steps): overhead-bound. Memory: x, w, y
// of 64 x 64 floats and b of 64: 3 x 16384 + 256 = 49,408 B = 48.25 KiB at the peak, 4
// cudaMalloc and 4 cudaFree.
TEST(HtmlPages, MatmulAt64IsOverheadBound) {
  const std::string page = Page("m64", {GPROF_MATMUL_BIAS, "64", "2000"});
  EXPECT_THAT(page, HasSubstr("<b>Overhead-bound</b>: GPU 0 is busy "));
  EXPECT_THAT(page, HasSubstr("<b>2000 steps</b>"));
  EXPECT_THAT(page, HasSubstr("4000 kernels"));
  EXPECT_THAT(page, HasSubstr("<code>overhead_bound</code>"));
  EXPECT_THAT(page, Not(HasSubstr("<code>compute_bound</code>")));
  for (const char* k : {kMatmul, kBias}) {
    EXPECT_THAT(page, HasSubstr(Row(k, {"2,000", "3.408ms", "1.704us", "1.704us", "1.704us",
                                        "1.704us"})));
  }
  EXPECT_THAT(page, HasSubstr("8 memory operations"));
  EXPECT_THAT(page, HasSubstr("peak <b>48.2 KiB</b>"));
}

// 4096 with 2,000 ps per thread (findings_patterns_test's knob): 16,777,216 threads per kernel,
// 1500 + 16,777,216 x 2 = 33,555,932 ns each, 335.559 ms for 10; compute-bound. Memory: 3 x
// 4096^2 x 4 B + 16 KiB = 201,342,976 B = 192.02 MiB.
TEST(HtmlPages, MatmulAt4096IsComputeBound) {
  const std::string page = Page("m4096", {GPROF_MATMUL_BIAS, "4096", "10"},
                                {{"CUDASIM_KERNEL_PS_PER_THREAD", "2000"}});
  EXPECT_THAT(page, HasSubstr("<b>Compute-bound</b>: GPU 0 is busy "));
  EXPECT_THAT(page, HasSubstr("<b>10 steps</b>"));
  EXPECT_THAT(page, Not(HasSubstr("<code>overhead_bound</code>")));
  for (const char* k : {kMatmul, kBias}) {
    EXPECT_THAT(page, HasSubstr(Row(k, {"10", "335.559ms", "33.556ms", "33.556ms", "33.556ms",
                                        "33.556ms"})));
  }
  EXPECT_THAT(page, HasSubstr("peak <b>192.0 MiB</b>"));
}

// Four streams, each a pinned 4 MiB HtoD copy, scale_kernel over 1 Mi floats (4096 blocks of
// 256: 1500 + 1,048,576 x 50 / 1000 = 53,928 ns) and the copy back; no steps. The timeline has
// GPU 0's row and one row per stream. Memory: 16 MiB pinned + 16 MiB device + 4 MiB
// stream-ordered = 36 MiB at the peak.
TEST(HtmlPages, MultistreamHasARowPerStream) {
  const std::string page = Page("multistream", {GPROF_MULTISTREAM});
  EXPECT_THAT(page, HasSubstr("No steps in this profile"));
  EXPECT_THAT(page, HasSubstr("(the active part: first to last GPU work and launch)"));
  EXPECT_THAT(page, HasSubstr(Row("scale_kernel(float*, int, float)",
                                  {"4", "215.712us", "53.928us", "53.928us", "53.928us",
                                   "53.928us"})));
  EXPECT_EQ(Count(page, "<text class=\"label device\""), 1);
  EXPECT_EQ(Count(page, "<text class=\"label stream\""), 4);
  EXPECT_THAT(page, HasSubstr(">GPU 0 (all streams)<"));
  EXPECT_THAT(page, HasSubstr("4 kernels, 9 copies, 1 memset, 6 memory operations"));
  EXPECT_THAT(page, HasSubstr("peak <b>36.0 MiB</b>"));
}

// examples/nvtx/nvtx_training 8: NVTX only, 8 ProfilerStep#N ranges with forward, backward and
// optimizer.step inside on thread "main", load_batch on "data-loader"; no CUDA at all.
TEST(HtmlPages, NvtxOnlyProgramHasStepsAndNoGpu) {
  const std::string page = Page("nvtx", {GPROF_NVTX_TRAINING, "8"});
  EXPECT_THAT(page, HasSubstr("<b>No GPU work recorded</b>"));
  EXPECT_THAT(page, HasSubstr("<b>8 steps</b>"));
  EXPECT_THAT(page, HasSubstr("(no GPU work was recorded)"));
  EXPECT_THAT(page, HasSubstr("No memory data"));
  EXPECT_THAT(page, HasSubstr("<h3>Host threads</h3>"));
  EXPECT_THAT(page, HasSubstr(" (main)"));
  // The card lists the threads busy inside the steps' window; the loader's 8 x 300 us may all
  // run before step 0 on a loaded machine (the fresh-clone CI saw it), so its name is checked
  // through the recorded facts: main, data-loader and logger are named.
  EXPECT_THAT(page, HasSubstr("3 named threads"));
  for (const char* range : {">forward<", ">backward<", ">load_batch<", ">optimizer.step<"}) {
    EXPECT_THAT(page, HasSubstr(range));
  }
  EXPECT_THAT(page, Not(HasSubstr("Kernel duration distributions")));
}

}  // namespace
}  // namespace gprof::testing
