// Process trees under gprof-run (docs/LAUNCHER.md, Processes): a torchrun-style launcher that
// starts N CUDA workers with RANK / WORLD_SIZE / LOCAL_RANK (one made slower), Python
// multiprocessing with the spawn and fork start methods (PyPI's nvtx), and the mpirun form with
// one gprof-run per rank. CUDA workers run on the stand-in (verified on the stand-in); each test
// checks the per-rank profiles, the merged view and `gprof-run check` on it, and the exit codes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "model/dump.h"
#include "tests/support/process.h"

namespace gprof::testing {
namespace {

using Json = nlohmann::json;

std::string Script(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string HostName() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

// The ranks of the dumps in `dir` (whole-run dumps only), and how many dumps there were.
std::multiset<int32_t> DumpRanks(const std::string& dir, int* dumps) {
  std::multiset<int32_t> ranks;
  *dumps = 0;
  for (const std::string& f : ListDir(dir)) {
    if (!f.ends_with(kDumpExtension) || f.find(".cycle") != std::string::npos) continue;
    Profile p;
    std::string error;
    if (!ReadDump(dir + "/" + f, &p, &error)) {
      ADD_FAILURE() << f << ": " << error;
      continue;
    }
    ++*dumps;
    ranks.insert(p.info.rank);
  }
  return ranks;
}

// A torchrun-style launcher: starts `n` workers with RANK, WORLD_SIZE, LOCAL_RANK and exits
// with the largest of their exit statuses.
constexpr const char* kLauncherPy =
    "import os, subprocess, sys\n"
    "worker, n = sys.argv[1], int(sys.argv[2])\n"
    "procs = [subprocess.Popen([worker, 'rank'], env=dict(os.environ, RANK=str(r),\n"
    "         WORLD_SIZE=str(n), LOCAL_RANK=str(r))) for r in range(n)]\n"
    "sys.exit(max(p.wait() for p in procs))\n";

// 4 ranks, rank 2 doing 4 ms of extra host work in each of its 8 steps (1 ms kernels), rank 1
// exiting with status 7: the launcher exits 7, every rank leaves a profile with its rank and a
// trace with distributedInfo, the merged view has one process group per rank, and its findings
// name rank 2 the straggler.
TEST(Multiprocess, TorchrunStyleWorkersAreProfiledByRankAndMerged) {
  const std::string dir = MakeTempDir("mp_torchrun");
  const std::string launcher = Script(dir, "launch.py", kLauncherPy);
  ProcessOptions o;
  o.set_env = {{"LD_LIBRARY_PATH", StandInLibDir()},
               {"CUDASIM_KERNEL_NS", "spin_kernel=1000000"},
               {"PATTERNS_SLOW_RANK", "2"},
               {"PATTERNS_EXIT_RANK", "1"},
               {"PATTERNS_EXIT_CODE", "7"}};
  const ProcessResult r = RunProcess({LauncherPath(), "-o", dir + "/out", "--cupti-lib",
                                      StandInLibDir() + "/libcupti.so.13", "--", PythonPath(),
                                      launcher, GPROF_PATTERNS, "4"},
                                     o);
  EXPECT_EQ(r.exit_code, 7) << r.err;  // rank 1's status, through the launcher script
  int dumps = 0;
  const std::multiset<int32_t> ranks = DumpRanks(dir + "/out", &dumps);
  EXPECT_EQ(ranks.count(0) + ranks.count(1) + ranks.count(2) + ranks.count(3), 4u);
  for (int32_t rank = 0; rank < 4; ++rank) EXPECT_EQ(ranks.count(rank), 1u) << rank;
  // Each rank's own trace carries Kineto's distributedInfo, matched by HTA's "rank":\s+(\d+).
  int with_info = 0;
  for (const std::string& f : ListDir(dir + "/out")) {
    if (!f.ends_with(".trace.json") && f != "trace.json") continue;
    const Json t = Json::parse(ReadFile(dir + "/out/" + f));
    if (t.contains("distributedInfo")) {
      ++with_info;
      EXPECT_EQ(t["distributedInfo"].at("world_size"), 4) << f;
    }
  }
  EXPECT_EQ(with_info, 4);
  // The merged view: one group per rank, accepted by the checker.
  const std::string merged = dir + "/out/merged/trace.json";
  const Json t = Json::parse(ReadFile(merged));
  std::set<std::string> groups;
  for (const Json& e : t.at("traceEvents")) {
    if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") {
      const std::string name = e.at("args").at("name");
      if (name.rfind("rank ", 0) == 0 && name.find("GPU") == std::string::npos) groups.insert(name);
    }
  }
  EXPECT_EQ(groups.size(), 4u) << t.dump().substr(0, 2000);
  const ProcessResult check = RunProcess({LauncherPath(), "check", merged});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_NE(r.err.find("merged view"), std::string::npos) << r.err;
  // The straggler: rank 2, by about its 4 ms of extra work per step. Four ranks share this
  // machine's cores, so other ranks' steps stretch too: at least half the steps and 1 ms more
  // than the others' median (seen: 6-8 of 8 steps, 3.4-4.1 ms).
  const Json findings = Json::parse(ReadFile(dir + "/out/merged/findings.json")).at("findings");
  const Json* straggler = nullptr;
  for (const Json& f : findings) {
    if (f.at("id") == "straggler") straggler = &f;
  }
  ASSERT_NE(straggler, nullptr) << findings.dump(2);
  EXPECT_EQ(straggler->at("evidence").at("rank"), 2);
  EXPECT_GE(straggler->at("evidence").at("slow_steps").get<int>(), 4);
  EXPECT_GE(straggler->at("evidence").at("median_excess_us").get<double>(), 1000.0);
}

// multiprocessing: two spawn workers (a fresh interpreter each: profiled) and one fork worker
// (no exec: inert, listed in the closing line by its pid). The parent marks an NVTX range first.
TEST(Multiprocess, SpawnWorkersAreProfiledForkWorkersListedAsInert) {
  const std::string dir = MakeTempDir("mp_spawn");
  const std::string script = Script(
      dir, "workers.py",
      "import multiprocessing as mp, os, sys, time, nvtx\n"
      "def work(i):\n"
      "    for s in range(3):\n"
      "        with nvtx.annotate(f'ProfilerStep#{s}'):\n"
      "            time.sleep(0.005)\n"
      "if __name__ == '__main__':\n"
      "    with nvtx.annotate('parent'):\n"
      "        pass\n"
      "    spawn = [mp.get_context('spawn').Process(target=work, args=(i,)) for i in range(2)]\n"
      "    for p in spawn: p.start()\n"
      "    for p in spawn: p.join()\n"
      "    fork = mp.get_context('fork').Process(target=work, args=(9,))\n"
      "    fork.start(); fork.join()\n"
      "    print('FORK_PID', fork.pid, flush=True)\n"
      "    sys.exit(3)\n");
  const ProcessResult r =
      RunProcess({LauncherPath(), "-o", dir + "/out", "--", PythonPath(), script});
  EXPECT_EQ(r.exit_code, 3) << r.err;  // the program's own status
  int dumps = 0;
  DumpRanks(dir + "/out", &dumps);
  EXPECT_EQ(dumps, 3) << r.err;  // the parent and the two spawn workers
  const size_t at = r.out.find("FORK_PID ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string pid = r.out.substr(at + 9, r.out.find('\n', at) - at - 9);
  EXPECT_NE(r.err.find("1 forked process did not exec and were not profiled (pid " + pid + ";"),
            std::string::npos)
      << r.err;
}

// The mpirun form: a parent (standing in for mpirun) runs one gprof-run per rank with Open MPI's
// variables (rank 2's program exits 5, and so does its gprof-run); the default output template
// puts each under one run directory,
// ./gprof_traces/patterns.<job>/rank<r>.<host>; `gprof-run merge` of the four gives four groups.
TEST(Multiprocess, OneGprofRunPerRankSharesTheRunDirectoryAndMerges) {
  const std::string dir = MakeTempDir("mp_mpirun");
  const std::string script = Script(
      dir, "mpirun.py",
      "import os, subprocess, sys\n"
      "gprof, lib, worker = sys.argv[1:4]\n"
      "procs = [subprocess.Popen([gprof, '-q', '--cupti-lib', lib, '--', worker, 'rank'],\n"
      "         env=dict(os.environ, OMPI_COMM_WORLD_RANK=str(r), OMPI_COMM_WORLD_SIZE='4',\n"
      "         OMPI_MCA_ess_base_jobid='4242')) for r in range(4)]\n"
      "sys.exit(max(p.wait() for p in procs))\n");
  ProcessOptions o;
  o.set_env = {{"LD_LIBRARY_PATH", StandInLibDir()},
               {"CUDASIM_KERNEL_NS", "spin_kernel=1000000"},
               {"PATTERNS_EXIT_RANK", "2"},
               {"PATTERNS_EXIT_CODE", "5"}};
  o.cwd = dir;
  const ProcessResult r = RunProcess({PythonPath(), script, LauncherPath(),
                                      StandInLibDir() + "/libcupti.so.13", GPROF_PATTERNS},
                                     o);
  // Rank 2's program exits 5; its gprof-run passes that on (the parent returns the largest).
  ASSERT_EQ(r.exit_code, 5) << r.err;
  const std::string run = dir + "/gprof_traces/patterns.4242";
  std::vector<std::string> argv = {LauncherPath(), "merge", "-q"};
  for (int rank = 0; rank < 4; ++rank) {
    const std::string rank_dir = run + "/rank" + std::to_string(rank) + "." + HostName();
    int dumps = 0;
    const std::multiset<int32_t> ranks = DumpRanks(rank_dir, &dumps);
    EXPECT_EQ(dumps, 1) << rank_dir;
    EXPECT_EQ(ranks.count(rank), 1u) << rank_dir;
    argv.push_back(rank_dir);
  }
  // No -o: ranks side by side in one run directory merge into its merged/.
  const ProcessResult merge = RunProcess(argv);
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  const ProcessResult check = RunProcess({LauncherPath(), "check", run + "/merged/trace.json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

// --python-sampling over a process tree: a Python launcher starts two Python workers with RANK 0
// and 1 (each samples itself into its own .pysamples, beside its own dump); the run's merged view
// has each worker's python_function slices on that rank's process (rank k's host pid is 1000 *
// (k + 1), analysis/ranks/merge.h; the launcher, without a rank, comes third: 3000), passes `gprof-run
// check`, and the merged page and the closing line say which processes had samples.
TEST(Multiprocess, SampledPythonStacksOfEachRankAreInTheMergedView) {
  const std::string dir = MakeTempDir("mp_pysamples");
  const std::string launcher = Script(
      dir, "launch.py",
      "import os, subprocess, sys\n"
      "procs = [subprocess.Popen([sys.executable, sys.argv[1]], env=dict(os.environ,\n"
      "         RANK=str(r), WORLD_SIZE='2', LOCAL_RANK=str(r))) for r in range(2)]\n"
      "sys.exit(max(p.wait() for p in procs))\n");
  const std::string worker = Script(dir, "worker.py",
                                    "import time\n"
                                    "def work_rank():\n"
                                    "    end = time.time() + 0.4\n"
                                    "    while time.time() < end:\n"
                                    "        sum(range(100))\n"
                                    "work_rank()\n");
  const ProcessResult r = RunProcess({LauncherPath(), "-q", "-o", dir + "/out",
                                      "--python-sampling=200", "--", PythonPath(), launcher,
                                      worker});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int dumps = 0;
  const std::multiset<int32_t> ranks = DumpRanks(dir + "/out", &dumps);
  EXPECT_EQ(ranks, (std::multiset<int32_t>{-1, 0, 1})) << r.err;
  const std::string merged = dir + "/out/merged";
  const ProcessResult check = RunProcess({LauncherPath(), "check", merged + "/trace.json"});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  const Json doc = Json::parse(ReadFile(merged + "/trace.json"));
  std::map<uint32_t, int> work_slices;  // by merged pid
  for (const Json& e : doc["traceEvents"]) {
    if (e.value("cat", "") == "python_function" &&
        e["name"] == worker + "(2): work_rank") {
      ++work_slices[e["pid"].get<uint32_t>()];
    }
  }
  EXPECT_GE(work_slices[1000], 1) << "rank 0";
  EXPECT_GE(work_slices[2000], 1) << "rank 1";
  EXPECT_EQ(work_slices.count(3000), 0u) << "the launcher never ran work_rank";
  const Json& inputs = doc["gprof"]["inputs"];
  ASSERT_EQ(inputs.size(), 3u);
  for (const Json& in : inputs) EXPECT_GT(in["python_samples"].get<uint64_t>(), 0u) << in;
  const std::string page = ReadFile(merged + "/report.html");
  EXPECT_NE(page.find("Python stacks (sampled): 3 of 3 processes had samples (rank 0 ("),
            std::string::npos);
  EXPECT_NE(r.err.find("(sampled Python stacks of rank 0 ("), std::string::npos) << r.err;
}

// The srun form across two hosts: a parent (standing in for srun -N 2 -n 4) runs one gprof-run
// per task with Slurm's variables, tasks 0-1 on host nodeA and 2-3 on nodeB, each host a UTS
// namespace of its own (unshare; skipped where namespaces are not allowed). Each task's default
// output directory names its rank and host, ./gprof_traces/patterns.777/rank<r>.<host>; each dump
// has the task's local rank and node; `gprof-run merge gprof_traces/patterns.777` (one directory,
// a subdirectory per task) merges all four.
TEST(Multiprocess, SrunTasksOnTwoHostsAreNamedByRankAndHostAndMerge) {
  if (RunProcess({"unshare", "-r", "--uts", "true"}).exit_code != 0) {
    GTEST_SKIP() << "unshare -r --uts is not allowed here: one host name only";
  }
  const std::string dir = MakeTempDir("mp_srun");
  const std::string script = Script(
      dir, "srun.py",
      "import os, subprocess, sys\n"
      "gprof, lib, worker = sys.argv[1:4]\n"
      "def task(r):\n"
      "    node = r // 2\n"
      "    host = 'nodeA' if node == 0 else 'nodeB'\n"
      "    env = dict(os.environ, SLURM_PROCID=str(r), SLURM_LOCALID=str(r % 2),\n"
      "               SLURM_NODEID=str(node), SLURM_NTASKS='4', SLURM_JOB_ID='777')\n"
      "    cmd = ['unshare', '-r', '--uts', 'sh', '-c', 'hostname ' + host + ' && exec \"$@\"',\n"
      "           'sh', gprof, '-q', '--cupti-lib', lib, '--', worker, 'rank']\n"
      "    return subprocess.Popen(cmd, env=env)\n"
      "sys.exit(max(p.wait() for p in [task(r) for r in range(4)]))\n");
  ProcessOptions o;
  o.set_env = {{"LD_LIBRARY_PATH", StandInLibDir()},
               {"CUDASIM_KERNEL_NS", "spin_kernel=1000000"}};
  o.cwd = dir;
  const ProcessResult r = RunProcess({PythonPath(), script, LauncherPath(),
                                      StandInLibDir() + "/libcupti.so.13", GPROF_PATTERNS},
                                     o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string run = dir + "/gprof_traces/patterns.777";
  const char* hosts[] = {"nodeA", "nodeA", "nodeB", "nodeB"};
  for (int rank = 0; rank < 4; ++rank) {
    const std::string rank_dir = run + "/rank" + std::to_string(rank) + "." + hosts[rank];
    const std::vector<std::string> files = ListDir(rank_dir);
    Profile p;
    std::string error;
    for (const std::string& f : files) {
      if (f.ends_with(kDumpExtension)) {
        ASSERT_TRUE(ReadDump(rank_dir + "/" + f, &p, &error)) << error;
      }
    }
    EXPECT_EQ(p.info.rank, rank) << rank_dir;
    EXPECT_EQ(p.info.world_size, 4) << rank_dir;
    EXPECT_EQ(p.info.hostname, hosts[rank]) << rank_dir;
    EXPECT_EQ(p.info.placement.local_rank, rank % 2) << rank_dir;
    EXPECT_EQ(p.info.placement.node_rank, rank / 2) << rank_dir;
  }
  const ProcessResult merge = RunProcess({LauncherPath(), "merge", "-q", run});
  ASSERT_EQ(merge.exit_code, 0) << merge.err;
  const Json doc = Json::parse(ReadFile(run + "/merged/trace.json"));
  EXPECT_EQ(doc["gprof"]["hosts"], Json({"nodeA", "nodeB"}));
  ASSERT_EQ(doc["gprof"]["inputs"].size(), 4u);
  for (int rank = 0; rank < 4; ++rank) {
    const Json& in = doc["gprof"]["inputs"][rank];
    EXPECT_EQ(in["label"].get<std::string>(), "rank " + std::to_string(rank) + " (" +
                                                  hosts[rank] + ":" +
                                                  std::to_string(in["pid"].get<int>()) + ")");
    EXPECT_EQ(in["node_rank"], rank / 2);
    EXPECT_EQ(in["local_rank"], rank % 2);
  }
}

}  // namespace
}  // namespace gprof::testing
