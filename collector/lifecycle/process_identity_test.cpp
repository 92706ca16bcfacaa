#include "collector/lifecycle/process_identity.h"

#include <gtest/gtest.h>

namespace gprof::collector {
namespace {

TEST(ProgramNameFrom, NativeProgramIsTheExecutableBasename) {
  EXPECT_EQ(ProgramNameFrom("/opt/app/bin/trainer", {"./trainer", "--size", "4"}), "trainer");
  EXPECT_EQ(ProgramNameFrom("", {"/x/y/app"}), "app");
  EXPECT_EQ(ProgramNameFrom("", {}), "program");
}

TEST(ProgramNameFrom, PythonIsNamedAfterWhatItRuns) {
  EXPECT_EQ(ProgramNameFrom("/usr/bin/python3.11", {"python3", "train.py", "--lr", "1"}),
            "train.py");
  EXPECT_EQ(ProgramNameFrom("/usr/bin/python3", {"python3", "-u", "/w/scripts/run.py"}), "run.py");
  EXPECT_EQ(ProgramNameFrom("/usr/bin/python3", {"python3", "-m", "torch.distributed.run"}),
            "torch.distributed.run");
  EXPECT_EQ(ProgramNameFrom("/usr/bin/python3", {"python3", "-c", "print(1)"}), "python3");
  EXPECT_EQ(ProgramNameFrom("/usr/bin/python3", {"python3", "-W", "ignore", "t.py"}), "t.py");
  EXPECT_EQ(ProgramNameFrom("/usr/bin/python3", {"python3"}), "python3");
}

TEST(DumpPaths, WholeRunAndWindowNames) {
  ProfileInfo info;
  info.program = "train.py";
  info.pid = 4242;
  EXPECT_EQ(WholeRunDumpPath("out", info), "out/train.py.4242.gpdump");
  EXPECT_EQ(WholeRunDumpPath("", info), "train.py.4242.gpdump");
  info.cycle = 2;
  info.first_step = 5;
  info.last_step = 7;
  EXPECT_EQ(WindowDumpPath("/d", info), "/d/train.py.4242.cycle2.steps5-7.gpdump");
}

}  // namespace
}  // namespace gprof::collector
