// The output rules of output_file.h, on real directories, links and owners. The tests that need
// a file owned by somebody else make one with lchown, which needs root; without root they skip
// (saying so) except where a root-owned path stands in for "somebody else".
#include "model/output_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace gprof {
namespace {

namespace fs = std::filesystem;
constexpr uid_t kNobody = 65534;

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::path(testing::TempDir()) /
            ("output-file." + std::to_string(::getpid()) + "." +
             testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "out");
    std::ofstream(root_ / "victim") << "precious";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  fs::path root_;
};

TEST_F(OutputFileTest, WritesTheWholeFileAndLeavesNoTemporary) {
  const fs::path path = root_ / "out" / "table.txt";
  ASSERT_EQ(WriteOutputFile(path.string(), "hello\n", false), "");
  EXPECT_EQ(Read(path), "hello\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(root_ / "out"), fs::directory_iterator()), 1);
}

TEST_F(OutputFileTest, UncommittedFileLeavesNothing) {
  {
    OutputFile f;
    ASSERT_EQ(f.Open((root_ / "out" / "trace.json").string(), false), "");
    f.Write("partial");
  }
  EXPECT_TRUE(fs::is_empty(root_ / "out"));
}

TEST_F(OutputFileTest, ALinkAtTheFinalNameIsReplacedNeverWrittenThrough) {
  fs::create_symlink(root_ / "victim", root_ / "out" / "trace.json");
  ASSERT_EQ(WriteOutputFile((root_ / "out" / "trace.json").string(), "new", false), "");
  EXPECT_EQ(Read(root_ / "victim"), "precious");
  EXPECT_FALSE(fs::is_symlink(root_ / "out" / "trace.json"));
  EXPECT_EQ(Read(root_ / "out" / "trace.json"), "new");
}

TEST_F(OutputFileTest, ALinkAtTheTemporaryNameIsNotFollowed) {
  const fs::path planted =
      root_ / "out" / ("x.gpdump.tmp." + std::to_string(::getpid()));
  fs::create_symlink(root_ / "victim", planted);
  ASSERT_EQ(WriteOutputFile((root_ / "out" / "x.gpdump").string(), "dump", false), "");
  EXPECT_EQ(Read(root_ / "victim"), "precious");
  EXPECT_TRUE(fs::is_symlink(planted));  // left as it was: O_EXCL took the next name
  EXPECT_EQ(Read(root_ / "out" / "x.gpdump"), "dump");
}

TEST_F(OutputFileTest, OwnLinkOnTheWayIsFollowed) {
  fs::create_directories(root_ / "real");
  fs::create_symlink(root_ / "real", root_ / "mine");
  ASSERT_EQ(WriteOutputFile((root_ / "mine" / "sub" / "f").string(), "x", true), "");
  EXPECT_EQ(Read(root_ / "real" / "sub" / "f"), "x");
}

TEST_F(OutputFileTest, RelativeLinkTargetsAreWalkedFromTheLinksDirectory) {
  fs::create_directories(root_ / "a" / "real");
  fs::create_symlink("real/../real", root_ / "a" / "rel");
  ASSERT_EQ(WriteOutputFile((root_ / "a" / "rel" / "f").string(), "y", false), "");
  EXPECT_EQ(Read(root_ / "a" / "real" / "f"), "y");
}

TEST_F(OutputFileTest, PlantedLinkOfAnotherUserIsRefusedAndNothingIsWritten) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a link owned by uid 65534";
  fs::create_directories(root_ / "elsewhere");
  fs::create_symlink(root_ / "elsewhere", root_ / "planted");
  ASSERT_EQ(::lchown((root_ / "planted").c_str(), kNobody, kNobody), 0);
  const std::string e = WriteOutputFile((root_ / "planted" / "x.gpdump").string(), "d", true);
  EXPECT_NE(e.find("planted is a symbolic link owned by uid 65534"), std::string::npos) << e;
  EXPECT_TRUE(fs::is_empty(root_ / "elsewhere"));
}

TEST_F(OutputFileTest, PlantedLinkInsideAnOwnLinksTargetIsRefusedToo) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a link owned by uid 65534";
  fs::create_directories(root_ / "shared" / "elsewhere");
  fs::create_symlink(root_ / "shared" / "elsewhere", root_ / "shared" / "planted");
  ASSERT_EQ(::lchown((root_ / "shared" / "planted").c_str(), kNobody, kNobody), 0);
  fs::create_symlink(root_ / "shared" / "planted", root_ / "mine");
  const std::string e = WriteOutputFile((root_ / "mine" / "x").string(), "d", false);
  EXPECT_NE(e.find("owned by uid 65534"), std::string::npos) << e;
  EXPECT_TRUE(fs::is_empty(root_ / "shared" / "elsewhere"));
}

TEST_F(OutputFileTest, DirectoryOfAnotherUserIsRefused) {
  // Root: a directory handed to uid 65534. Otherwise "/" (root's, not sticky) is somebody else's.
  fs::path dir = "/";
  std::string owner = "0";
  if (::geteuid() == 0) {
    dir = root_ / "theirs";
    fs::create_directories(dir);
    ASSERT_EQ(::chown(dir.c_str(), kNobody, kNobody), 0);
    owner = std::to_string(kNobody);
  }
  const std::string e = WriteOutputFile((dir / "x.gpdump").string(), "d", false);
  EXPECT_NE(e.find("belongs to uid " + owner + ", not to you"), std::string::npos) << e;
  EXPECT_FALSE(fs::exists(dir / "x.gpdump"));
}

TEST_F(OutputFileTest, RootOwnedStickyDirectoryIsAccepted) {
  struct stat st;
  if (::stat("/tmp", &st) != 0 || st.st_uid != 0 || (st.st_mode & S_ISVTX) == 0) {
    GTEST_SKIP() << "/tmp is not a root-owned sticky directory here";
  }
  int fd = -1;
  EXPECT_EQ(OpenOutputDir("/tmp", false, &fd), "");
  if (fd >= 0) ::close(fd);
}

TEST_F(OutputFileTest, LinkLoopIsRefused) {
  fs::create_symlink(root_ / "b", root_ / "a");
  fs::create_symlink(root_ / "a", root_ / "b");
  const std::string e = WriteOutputFile((root_ / "a" / "x").string(), "d", true);
  EXPECT_NE(e.find("more than 40 symbolic links"), std::string::npos) << e;
}

TEST_F(OutputFileTest, ARegularFileOnTheWayIsNotADirectory) {
  const std::string e = WriteOutputFile((root_ / "victim" / "x").string(), "d", true);
  EXPECT_NE(e.find("victim is not a directory"), std::string::npos) << e;
  EXPECT_EQ(Read(root_ / "victim"), "precious");
}

TEST_F(OutputFileTest, MissingDirectoryIsCreatedOnlyWhenAsked) {
  const fs::path path = root_ / "new" / "deeper" / "f";
  EXPECT_NE(WriteOutputFile(path.string(), "d", false).find("No such file"), std::string::npos);
  EXPECT_EQ(WriteOutputFile(path.string(), "d", true), "");
  EXPECT_EQ(Read(path), "d");
}

TEST_F(OutputFileTest, CloseThenCommitPublishesOnlyAtCommit) {
  OutputFile f;
  ASSERT_EQ(f.Open((root_ / "out" / "a").string(), false), "");
  f.Write("abc");
  EXPECT_EQ(f.Close(), "");
  EXPECT_FALSE(fs::exists(root_ / "out" / "a"));
  EXPECT_EQ(f.Commit(), "");
  EXPECT_EQ(Read(root_ / "out" / "a"), "abc");
}

TEST_F(OutputFileTest, LargeWritesArriveWhole) {
  std::string big(3 * (1 << 20) + 17, 'z');
  big[12345] = 'q';
  ASSERT_EQ(WriteOutputFile((root_ / "out" / "big").string(), big, false), "");
  EXPECT_EQ(Read(root_ / "out" / "big"), big);
}

}  // namespace
}  // namespace gprof
