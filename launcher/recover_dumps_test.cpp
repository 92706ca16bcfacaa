// RecoverPartialDumps and IncompleteDumpText: which left-behind segment files become dumps, and
// what the user is told. Files are made with the real writer (SegmentedDumpWriter), named as the
// collector names them (<program>.<pid>.gpdump.tmp.<pid>).
#include "launcher/recover_dumps.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "model/dump.h"

namespace gprof::launcher {
namespace {

namespace fs = std::filesystem;

std::string FreshDir(const char* tag) {
  const fs::path d = fs::path(::testing::TempDir()) / (std::string(tag) + "." + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

// A pid that has ended (a child that exited and was reaped).
long DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return child;
}

// Writes one segment, not the last, of a run of `pid`, and leaves its temporary file as a killed
// program would; returns the temporary file's name.
std::string LeaveSegmentFile(const std::string& dir, long pid) {
  const std::string dump = dir + "/prog." + std::to_string(pid) + kDumpExtension;
  std::string bytes;
  {
    SegmentedDumpWriter w;
    EXPECT_EQ(w.Open(dump), "");
    Profile p;
    p.info.pid = static_cast<uint32_t>(pid);
    p.info.start_ns = 1'000'000'000;
    p.info.end_ns = 3'500'000'000;
    EXPECT_EQ(w.Append(p, /*last=*/false), "");
    std::ifstream in(w.temp_path(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }  // the writer removes its own temporary file; a killed program's stays, named after it:
  const std::string left = dump + ".tmp." + std::to_string(pid);
  std::ofstream(left, std::ios::binary) << bytes;
  return fs::path(left).filename().string();
}

std::string Captured(const std::string& dir, int* recovered) {
  std::FILE* f = std::tmpfile();
  *recovered = RecoverPartialDumps(dir, f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::fclose(f);
  return text;
}

TEST(RecoverPartialDumps, AnEndedProcessesSegmentFileBecomesItsDumpAndReadsIncomplete) {
  const std::string dir = FreshDir("recover-dead");
  const long pid = DeadPid();
  const std::string left = LeaveSegmentFile(dir, pid);
  int recovered = 0;
  const std::string text = Captured(dir, &recovered);
  EXPECT_EQ(recovered, 1);
  EXPECT_NE(text.find("pid " + std::to_string(pid) + " ended without writing its profile"),
            std::string::npos) << text;
  EXPECT_NE(text.find("from the 1 segment it wrote"), std::string::npos) << text;
  const std::string dump = dir + "/prog." + std::to_string(pid) + kDumpExtension;
  EXPECT_FALSE(fs::exists(dir + "/" + left));
  Profile p;
  std::string error;
  ASSERT_TRUE(ReadDump(dump, &p, &error)) << error;
  EXPECT_FALSE(p.info.complete);
  // 2.5 s of run in its one segment, and no tail cut short.
  EXPECT_EQ(IncompleteDumpText(p, "prog.gpdump"),
            "gprof-run: warning: prog.gpdump is incomplete: the program ended without gprof-run's "
            "exit flush (killed, e.g. by SIGKILL or the OOM killer, or it called _exit), so the "
            "profile holds the 1 segment written during the run, up to 2.5 s after the start. "
            "Ranges still open then are missing.");
}

TEST(RecoverPartialDumps, ALiveProcessesFileIsLeftAloneItMayStillBeWriting) {
  const std::string dir = FreshDir("recover-live");
  const std::string left = LeaveSegmentFile(dir, getpid());
  int recovered = 0;
  const std::string text = Captured(dir, &recovered);
  EXPECT_EQ(recovered, 0);
  EXPECT_EQ(text, "");
  EXPECT_TRUE(fs::exists(dir + "/" + left));
}

TEST(RecoverPartialDumps, AFileWithNoCompleteSegmentStaysAndIsNamed) {
  const std::string dir = FreshDir("recover-none");
  const long pid = DeadPid();
  const std::string left = "prog." + std::to_string(pid) + ".gpdump.tmp." + std::to_string(pid);
  std::ofstream(dir + "/" + left) << "GPROFDMP";  // killed within its first segment's header
  int recovered = 0;
  const std::string text = Captured(dir, &recovered);
  EXPECT_EQ(recovered, 0);
  EXPECT_NE(text.find(left + " was left by pid " + std::to_string(pid) +
                      ", which ended before its profile had one complete segment"),
            std::string::npos) << text;
  EXPECT_TRUE(fs::exists(dir + "/" + left));
}

TEST(RecoverPartialDumps, AnExistingDumpIsNeverReplaced) {
  const std::string dir = FreshDir("recover-exists");
  const long pid = DeadPid();
  const std::string left = LeaveSegmentFile(dir, pid);
  const std::string dump = dir + "/prog." + std::to_string(pid) + kDumpExtension;
  std::ofstream(dump) << "the real one";
  int recovered = 0;
  Captured(dir, &recovered);
  EXPECT_EQ(recovered, 0);
  std::ifstream in(dump);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "the real one");
}

}  // namespace
}  // namespace gprof::launcher
