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

// This process's placement: the launcher's variables as given, this boot's id as the kernel
// reports it, and a clock pair whose realtime - monotonic is this boot's start (after 2000, and
// before the realtime read itself).
TEST(GatherPlacement, RanksFromTheEnvironmentBootIdAndAStartClockPair) {
  const ProcessPlacement p =
      GatherPlacement({{"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NODEID", "2"}});
  EXPECT_EQ(p.local_rank, 1);
  EXPECT_EQ(p.node_rank, 2);
  EXPECT_EQ(p.boot_id.size(), 36u) << p.boot_id;  // a UUID: 8-4-4-4-12 hex digits
  const uint64_t boot = p.clock_start.realtime_ns - p.clock_start.monotonic_ns;
  EXPECT_GT(boot, 946'684'800ull * 1'000'000'000ull);
  EXPECT_LT(p.clock_start.read_ns, 1'000'000'000u);
  ProfileInfo info;
  StampClockEnd(&info);
  EXPECT_GE(info.placement.clock_end.monotonic_ns, p.clock_start.monotonic_ns);
}

}  // namespace
}  // namespace gprof::collector
