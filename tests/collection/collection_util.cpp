// Helpers for the end-to-end collection tests (see collection_util.h).
#include "tests/collection/collection_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "model/dump.h"

namespace gprof::testing {

LauncherRun RunLauncherWindows(const std::vector<std::string>& schedule,
                               const std::vector<std::string>& program, const std::string& tag,
                               const std::map<std::string, std::string>& extra) {
  const std::string out = MakeTempDir(tag);
  ProcessOptions o;
  o.set_env = extra;
  o.set_env["LD_LIBRARY_PATH"] = StandInLibDir();
  o.set_env["GPROF_LOG_LEVEL"] = "info";
  std::vector<std::string> argv = {LauncherPath(), "-q", "-o", out + "/prof", "--cupti-lib",
                                   StandInLibDir() + "/libcupti.so.13"};
  argv.insert(argv.end(), schedule.begin(), schedule.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  LauncherRun r;
  r.process = RunProcess(argv, o);
  for (const std::string& name : ListDir(out + "/prof")) {
    if (name.find(".cycle") == std::string::npos || name.size() < 7 ||
        name.substr(name.size() - 7) != ".gpdump") {
      continue;
    }
    Profile p;
    std::string error;
    EXPECT_TRUE(ReadDump(out + "/prof/" + name, &p, &error)) << error;
    r.windows.push_back(std::move(p));
  }
  std::sort(r.windows.begin(), r.windows.end(),
            [](const Profile& a, const Profile& b) { return a.info.cycle < b.info.cycle; });
  return r;
}

std::string ExamplePath(const std::string& name) { return BinaryDir() + "/bin/" + name; }
std::string InjectLibPath() { return BinaryDir() + "/lib/libgprof_inject.so"; }

namespace {
const std::vector<std::string> kUnset = {
    "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", "GPROF_OUTPUT_DIR", "GPROF_CUPTI_LIB",
    "GPROF_API_FILTER", "GPROF_ACTIVITY_POOL", "GPROF_ACTIVITY_BUFFER_KIB", "GPROF_PENDING_MIB",
    "GPROF_CUDA",
    "GPROF_LOG_LEVEL", "GPROF_SCHEDULE", "CUDASIM_DROP_EVERY", "CUDASIM_MAX_BUFFERS",
    "CUDASIM_CUPTI_VERSION", "CUDASIM_CUPTI_HOLDER"};

void AddLibDir(ProcessOptions* o, const std::string& lib_dir) {
  if (lib_dir.empty()) return;
  const char* old = std::getenv("LD_LIBRARY_PATH");
  o->set_env["LD_LIBRARY_PATH"] = lib_dir + (old && *old ? std::string(":") + old : "");
}
}  // namespace

ProcessOptions ProfiledOptions(const std::string& out_dir, const std::string& lib_dir,
                               const std::map<std::string, std::string>& extra) {
  ProcessOptions o;
  o.unset_env = kUnset;
  AddLibDir(&o, lib_dir);
  o.set_env["CUDA_INJECTION64_PATH"] = InjectLibPath();
  o.set_env["NVTX_INJECTION64_PATH"] = InjectLibPath();
  o.set_env["GPROF_OUTPUT_DIR"] = out_dir;
  for (const auto& [k, v] : extra) o.set_env[k] = v;
  o.timeout = std::chrono::milliseconds(120000);
  return o;
}

ProcessOptions PlainOptions(const std::string& lib_dir,
                            const std::map<std::string, std::string>& extra) {
  ProcessOptions o;
  o.unset_env = kUnset;
  AddLibDir(&o, lib_dir);
  for (const auto& [k, v] : extra) o.set_env[k] = v;
  o.timeout = std::chrono::milliseconds(120000);
  return o;
}

ProfiledRun RunProfiled(const std::vector<std::string>& argv, const std::string& lib_dir,
                        const std::map<std::string, std::string>& extra, const std::string& tag) {
  ProfiledRun run;
  const std::string out = MakeTempDir(tag);
  run.process = RunProcess(argv, ProfiledOptions(out, lib_dir, extra));
  for (const std::string& name : ListDir(out)) {
    if (name.size() > 7 && name.substr(name.size() - 7) == ".gpdump") {
      run.has_dump = ReadDump(out + "/" + name, &run.profile, &run.dump_error);
      return run;
    }
  }
  run.dump_error = "no .gpdump in " + out;
  return run;
}

std::string ApiNameOf(const Profile& p, const ApiCall& call) {
  for (const ApiName& n : p.api_names) {
    if (n.cbid == call.cbid && n.domain == call.domain) return std::string(p.strings.Get(n.name));
  }
  return "";
}

bool IsLaunchName(const std::string& name) {
  for (const char* n : {"__cudaLaunchKernel", "__cudaLaunchKernel_ptsz", "cudaLaunchKernel",
                        "cudaLaunchKernel_ptsz", "cudaLaunchKernelExC", "cudaLaunchKernelExC_ptsz",
                        "cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
                        "cuLaunchKernelEx_ptsz"}) {
    if (name == n) return true;
  }
  return false;
}

int CountLines(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(needle) != std::string::npos ? 1 : 0;
  return n;
}


void ExpectEveryGpuRecordLinkedOnce(const Profile& p) {
  std::unordered_map<uint32_t, const ApiCall*> calls;
  for (const ApiCall& c : p.api_calls) {
    EXPECT_TRUE(calls.emplace(c.correlation_id, &c).second)
        << "two API calls share correlation id " << c.correlation_id;
  }
  std::unordered_map<uint32_t, int> gpu_per_id;
  auto check = [&](uint32_t id, const char* what) {
    EXPECT_NE(id, 0u) << what << " without correlation id";
    EXPECT_TRUE(calls.count(id)) << what << " " << id << " has no API call";
    ++gpu_per_id[id];
  };
  for (const Kernel& k : p.kernels) check(k.correlation_id, "kernel");
  for (const Memcpy& m : p.memcpys) check(m.correlation_id, "memcpy");
  for (const Memset& m : p.memsets) check(m.correlation_id, "memset");
  for (const auto& [id, n] : gpu_per_id) EXPECT_EQ(n, 1) << "correlation id " << id;
  size_t launches = 0;
  for (const ApiCall& c : p.api_calls) {
    if (!IsLaunchName(ApiNameOf(p, c))) continue;
    ++launches;
    EXPECT_EQ(gpu_per_id.count(c.correlation_id), 1u)
        << "launch call " << c.correlation_id << " launched no recorded kernel";
  }
  EXPECT_EQ(launches, p.kernels.size());
  EXPECT_EQ(p.counters.gpu_records_uncorrelated, 0u);
  EXPECT_EQ(p.counters.cupti_dropped_records, 0u);
  EXPECT_EQ(p.counters.cupti_buffers_refused, 0u);
  EXPECT_EQ(p.counters.records_unknown_kind, 0u);
}

uint64_t StepNs(const Profile& p) {
  uint64_t ns = 0;
  for (const HostRange& r : p.ranges) {
    if (p.strings.Get(r.name).rfind("ProfilerStep#", 0) == 0) ns += r.end_ns - r.start_ns;
  }
  return ns;
}

uint64_t KernelNs(const Profile& p) {
  uint64_t ns = 0;
  for (const Kernel& k : p.kernels) ns += k.end_ns - k.start_ns;
  return ns;
}

uint64_t NonKernelWorkRecords(const Profile& p) {
  return p.memcpys.size() + p.memsets.size() + p.syncs.size() + p.memory_ops.size() +
         p.devices.size();
}

}  // namespace gprof::testing
