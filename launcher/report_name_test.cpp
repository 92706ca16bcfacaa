// Unit tests for the dump file names the launcher renders (report.h ParseDumpName).
#include <gtest/gtest.h>

#include "launcher/report.h"

namespace gprof::launcher {
namespace {

TEST(DumpName, WholeRun) {
  DumpName n;
  ASSERT_TRUE(ParseDumpName("python3.11.4242.gpdump", &n));
  EXPECT_EQ(n.program, "python3.11");
  EXPECT_EQ(n.pid, 4242);
  EXPECT_FALSE(n.window);
  EXPECT_EQ(n.stem, "python3.11.4242");
}

TEST(DumpName, Window) {
  DumpName n;
  ASSERT_TRUE(ParseDumpName("train.77.cycle2.steps10-14.gpdump", &n));
  EXPECT_EQ(n.program, "train");
  EXPECT_EQ(n.pid, 77);
  EXPECT_TRUE(n.window);
  EXPECT_EQ(n.cycle, 2u);
  EXPECT_EQ(n.first_step, 10u);
  EXPECT_EQ(n.last_step, 14u);
  EXPECT_EQ(n.stem, "train.77.cycle2.steps10-14");
}

// --start-paused captures: capture<K>, numbered from 1, are window K-1.
TEST(DumpName, Capture) {
  DumpName n;
  ASSERT_TRUE(ParseDumpName("svc.9.capture3.gpdump", &n));
  EXPECT_EQ(n.stem, "svc.9.capture3");
  EXPECT_EQ(n.program, "svc");
  EXPECT_EQ(n.pid, 9);
  EXPECT_TRUE(n.window);
  EXPECT_TRUE(n.capture);
  EXPECT_EQ(n.cycle, 2u);
  EXPECT_FALSE(ParseDumpName("svc.9.capture0.gpdump", &n));
  ASSERT_TRUE(ParseDumpName("train.77.cycle2.steps10-14.gpdump", &n));
  EXPECT_FALSE(n.capture);
}

TEST(DumpName, NotDumps) {
  DumpName n;
  for (const char* name : {"table.txt", "train.gpdump", "train.77.gpdump.tmp.77", "gprof-run.json",
                           "train.x.gpdump", "train.99999999999999999999.gpdump"}) {
    EXPECT_FALSE(ParseDumpName(name, &n)) << name;
  }
}

}  // namespace
}  // namespace gprof::launcher
