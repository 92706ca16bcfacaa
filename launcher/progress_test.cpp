// The progress line (launcher/progress.h): silent before its delay, one plain line per stage off
// a terminal, one line rewritten in place and erased at the end on one.
#include "launcher/progress.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace gprof::launcher {
namespace {

using namespace std::chrono_literals;

std::string Contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
  return s;
}

TEST(Progress, QuietBeforeItsDelay) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(f, /*terminal=*/false, /*delay=*/std::chrono::milliseconds(60'000));
    p.Stage("a.gpdump: table");
    p.Stage("a.gpdump: trace.json");
  }
  EXPECT_EQ(Contents(f), "");
  std::fclose(f);
}

TEST(Progress, OnePlainLinePerStageOffATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(f, /*terminal=*/false, /*delay=*/0ms, /*period=*/5ms);
    p.Stage("a.gpdump: table");
    std::this_thread::sleep_for(30ms);  // several periods: still one line for the stage
    p.Stage("a.gpdump: trace.json");
    p.Done();
  }
  const std::string s = Contents(f);
  EXPECT_EQ(s.find('\r'), std::string::npos) << s;
  EXPECT_EQ(s.find('\033'), std::string::npos) << s;
  const size_t first = s.find("gprof-run: a.gpdump: table (");
  const size_t second = s.find("gprof-run: a.gpdump: trace.json (");
  ASSERT_NE(first, std::string::npos) << s;
  ASSERT_NE(second, std::string::npos) << s;
  EXPECT_LT(first, second);
  EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 2) << s;
  std::fclose(f);
}

TEST(Progress, RewritesOneLineOnATerminalAndErasesIt) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(f, /*terminal=*/true, /*delay=*/0ms, /*period=*/5ms);
    p.Stage("a.gpdump: " + std::string(100, 'x'));  // longer than the line may be
    std::this_thread::sleep_for(30ms);
    p.Done();
  }
  const std::string s = Contents(f);
  EXPECT_EQ(s.find('\n'), std::string::npos) << s;
  EXPECT_EQ(s.rfind("\r\033[K"), s.size() - 4) << "erased at the end";
  EXPECT_NE(s.find("\r\033[Kgprof-run: ..."), std::string::npos) << "cut to its tail";
  EXPECT_EQ(s.find("a.gpdump"), std::string::npos);
  std::fclose(f);
}

// A message while the line is shown: the line is erased first, the message stands on its own.
TEST(Progress, PrintsMessagesOnTheirOwnLine) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p(f, /*terminal=*/true, /*delay=*/0ms, /*period=*/5ms);
    p.Stage("a.gpdump: table");
    p.Print("gprof-run: error: b.gpdump: corrupt\n");
    p.Done();
  }
  const std::string s = Contents(f);
  const size_t line = s.find("gprof-run: a.gpdump: table (");
  const size_t message = s.find("\r\033[Kgprof-run: error: b.gpdump: corrupt\n");
  ASSERT_NE(line, std::string::npos) << s;
  ASSERT_NE(message, std::string::npos) << s;
  EXPECT_LT(line, message);
  std::fclose(f);
}

}  // namespace
}  // namespace gprof::launcher
