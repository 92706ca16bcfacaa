// Unit tests for output template expansion and the never-overwrite rule (output_dir.h).
#include "launcher/output_dir.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace gprof::launcher {
namespace {

namespace fs = std::filesystem;

TemplateValues Values() {
  TemplateValues v;
  v.pid = 4242;
  v.host = "node7";
  v.program = "python3";
  v.env = {{"RANK", "3"}};
  return v;
}

std::string Expand(const std::string& templ) {
  std::string out;
  const std::string error = ExpandOutputTemplate(templ, Values(), &out);
  EXPECT_EQ(error, "") << templ;
  return out;
}

TEST(OutputTemplate, Expands) {
  EXPECT_EQ(Expand(kDefaultOutputTemplate), "./gprof_traces/python3.node7.4242");
  EXPECT_EQ(Expand("r%q{RANK}/%p"), "r3/4242");
  EXPECT_EQ(Expand("a%q{UNSET}b"), "ab");
  EXPECT_EQ(Expand("50%%-%n"), "50%-python3");
}

// RANK=3 without WORLD_SIZE: "3"; with OMPI_COMM_WORLD_SIZE=16 (ranks 0..15): "03".
TEST(OutputTemplate, RankAndJob) {
  TemplateValues v = Values();
  v.parent_pid = 99;
  std::string out;
  ASSERT_EQ(ExpandOutputTemplate("r%r.%j", v, &out), "");
  EXPECT_EQ(out, "r3.ppid99");
  v.env = {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "16"},
           {"OMPI_MCA_ess_base_jobid", "2417"}};
  ASSERT_EQ(ExpandOutputTemplate("r%r.%j", v, &out), "");
  EXPECT_EQ(out, "r03.2417");
  v.env["SLURM_JOB_ID"] = "777";  // Slurm's id wins over Open MPI's
  ASSERT_EQ(ExpandOutputTemplate("%j", v, &out), "");
  EXPECT_EQ(out, "777");
  EXPECT_STREQ(DefaultOutputTemplate(v), kDefaultRankOutputTemplate);
  ASSERT_EQ(ExpandOutputTemplate(DefaultOutputTemplate(v), v, &out), "");
  EXPECT_EQ(out, "./gprof_traces/python3.777/rank03.node7");
  v.env.clear();  // not a rank: %r is empty, the usual default
  ASSERT_EQ(ExpandOutputTemplate("a%rb", v, &out), "");
  EXPECT_EQ(out, "ab");
  EXPECT_STREQ(DefaultOutputTemplate(v), kDefaultOutputTemplate);
}

TEST(OutputTemplate, RejectsBadTemplates) {
  std::string out;
  for (const char* bad : {"out%", "out.%x", "%q", "%qRANK", "%q{RANK", "%q{}", ""}) {
    EXPECT_NE(ExpandOutputTemplate(bad, Values(), &out), "") << bad;
  }
}

class ClaimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("gprof_claim_" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_;
};

TEST_F(ClaimTest, CreatesParentsAndReusesAnEmptyDirectory) {
  std::string chosen;
  ASSERT_EQ(ClaimOutputDir((root_ / "a/b/run").string(), &chosen), "");
  EXPECT_EQ(chosen, (root_ / "a/b/run").string());
  EXPECT_TRUE(fs::is_directory(chosen));
  ASSERT_EQ(ClaimOutputDir((root_ / "a/b/run").string(), &chosen), "");
  EXPECT_EQ(chosen, (root_ / "a/b/run").string());  // still empty: no profile to protect
}

TEST_F(ClaimTest, NeverReusesADirectoryHoldingAProfile) {
  const std::string base = (root_ / "run").string();
  fs::create_directories(base);
  std::ofstream(base + "/prog.1.gpdump") << "x";
  std::string chosen;
  ASSERT_EQ(ClaimOutputDir(base, &chosen), "");
  EXPECT_EQ(chosen, base + "-1");
  std::ofstream(base + "-1/gprof-run.json") << "{}";
  ASSERT_EQ(ClaimOutputDir(base, &chosen), "");
  EXPECT_EQ(chosen, base + "-2");
  EXPECT_TRUE(HoldsProfile(base));
  EXPECT_FALSE(HoldsProfile(base + "-2"));
  std::ofstream(base + "-2/notes.md") << "mine";
  EXPECT_FALSE(HoldsProfile(base + "-2"));
  std::ofstream(base + "-2/trace.json") << "{}";
  EXPECT_TRUE(HoldsProfile(base + "-2"));
}

}  // namespace
}  // namespace gprof::launcher

#include <sys/stat.h>
#include <sys/wait.h>

namespace gprof::launcher {
namespace {

// An existing directory gprof-run cannot write into (mode 0555) is refused before the program
// starts, naming it; before, the program ran and its profile was lost. Root writes through any
// mode, so as root the check runs in a child that has dropped to uid/gid 65534 (nobody).
TEST(OutputDir, ExistingDirectoryThatCannotBeWrittenIsRefusedNamingIt) {
  const auto check = []() -> int {
    char dir[] = "/tmp/gprof_readonly_XXXXXX";
    if (::mkdtemp(dir) == nullptr || ::chmod(dir, 0555) != 0) return 3;
    std::string chosen;
    const std::string e = ClaimOutputDir(dir, &chosen);
    ::chmod(dir, 0755);
    ::rmdir(dir);
    const bool ok = e.find(dir) != std::string::npos && e.find("not writable") != std::string::npos;
    if (!ok) std::fprintf(stderr, "ClaimOutputDir(%s) = \"%s\" (chose \"%s\")\n", dir, e.c_str(),
                          chosen.c_str());
    return ok ? 0 : 1;
  };
  if (::geteuid() != 0) {
    EXPECT_EQ(check(), 0);
    return;
  }
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) ::_exit(4);
    ::_exit(check());
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: no temp dir, 4: could not drop to uid 65534";
}

}  // namespace
}  // namespace gprof::launcher
