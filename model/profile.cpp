// Profile's constructor and its consistency check (see profile.h).
#include "model/profile.h"

#include <algorithm>

#include <string>

namespace gprof {

Profile::Profile() { domains.push_back(kNoString); }

void SortRangesAndMarks(Profile* p) {
  std::sort(p->ranges.begin(), p->ranges.end(), [](const HostRange& a, const HostRange& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
    return a.tid < b.tid;
  });
  std::stable_sort(p->marks.begin(), p->marks.end(),
                   [](const HostMark& a, const HostMark& b) { return a.ts_ns < b.ts_ns; });
}

std::string CheckProfile(const Profile& p) {
  const size_t strings = p.strings.size();
  const auto bad_string = [&](StringId id) { return id != kNoString && id >= strings; };
  const auto fail = [](const char* what, size_t i) {
    return std::string(what) + " " + std::to_string(i) + " refers to something the profile does "
           "not have";
  };
  const auto bad_time = [](uint64_t t) { return t >= kMaxProfileTimeNs; };
  const auto late = [](const char* what, size_t i) {
    return std::string(what) + " " + std::to_string(i) + " has a timestamp past the year 2116";
  };
  if (bad_time(p.info.start_ns) || bad_time(p.info.end_ns)) return late("profile", 0);
  for (size_t i = 0; i < p.ranges.size(); ++i) {
    if (bad_time(p.ranges[i].start_ns) || bad_time(p.ranges[i].end_ns)) return late("range", i);
  }
  for (size_t i = 0; i < p.marks.size(); ++i) {
    if (bad_time(p.marks[i].ts_ns)) return late("mark", i);
  }
  for (size_t i = 0; i < p.api_calls.size(); ++i) {
    if (bad_time(p.api_calls[i].start_ns) || bad_time(p.api_calls[i].end_ns)) {
      return late("API call", i);
    }
  }
  for (size_t i = 0; i < p.steps.size(); ++i) {
    if (bad_time(p.steps[i].start_ns) || bad_time(p.steps[i].end_ns)) return late("step", i);
  }
  for (size_t i = 0; i < p.thread_cpu.size(); ++i) {
    if (bad_time(p.thread_cpu[i].ts_ns)) return late("thread CPU sample", i);
  }
  std::string gpu_late;
  ForEachGpuKind(p, [&](GpuKind, const auto& records) {
    for (size_t i = 0; i < records.size() && gpu_late.empty(); ++i) {
      const auto& r = records[i];
      if constexpr (requires { r.start_ns; }) {
        if (bad_time(r.start_ns) || bad_time(r.end_ns)) gpu_late = late("GPU record", i);
      } else {
        if (bad_time(r.ts_ns)) gpu_late = late("GPU record", i);
      }
    }
  });
  if (!gpu_late.empty()) return gpu_late;
  const auto huge = [](const char* what, size_t i) {
    return std::string(what) + " " + std::to_string(i) + " has a size past 256 TiB";
  };
  for (size_t i = 0; i < p.memcpys.size(); ++i) {
    if (p.memcpys[i].bytes >= kMaxRecordBytes) return huge("memcpy", i);
  }
  for (size_t i = 0; i < p.memsets.size(); ++i) {
    if (p.memsets[i].bytes >= kMaxRecordBytes) return huge("memset", i);
  }
  for (size_t i = 0; i < p.memory_ops.size(); ++i) {
    if (p.memory_ops[i].bytes >= kMaxRecordBytes) return huge("memory record", i);
  }
  for (size_t i = 0; i < p.domains.size(); ++i) {
    if (bad_string(p.domains[i])) return fail("domain", i);
  }
  const size_t domains = p.domains.empty() ? 1 : p.domains.size();
  for (size_t i = 0; i < p.ranges.size(); ++i) {
    const HostRange& r = p.ranges[i];
    if (bad_string(r.name) || bad_string(r.shapes) || r.domain >= domains) return fail("range", i);
  }
  for (size_t i = 0; i < p.marks.size(); ++i) {
    if (bad_string(p.marks[i].name) || p.marks[i].domain >= domains) return fail("mark", i);
  }
  for (size_t i = 0; i < p.threads.size(); ++i) {
    if (bad_string(p.threads[i].name)) return fail("thread", i);
  }
  for (size_t i = 0; i < p.devices.size(); ++i) {
    if (bad_string(p.devices[i].name)) return fail("device", i);
  }
  for (size_t i = 0; i < p.api_names.size(); ++i) {
    if (bad_string(p.api_names[i].name)) return fail("API name", i);
  }
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    // An unknown launch config is allowed: the exporters show such a kernel on device 0.
    if (bad_string(p.kernels[i].name)) return fail("kernel", i);
  }
  for (size_t i = 0; i < p.stacks.size(); ++i) {
    const NativeStack& st = p.stacks[i];
    if (st.depth == 0 || st.depth > kMaxStackDepth || st.first_pc > p.stack_pcs.size() ||
        st.depth > p.stack_pcs.size() - st.first_pc) {
      return fail("stack", i);
    }
  }
  for (size_t i = 0; i < p.api_stacks.size(); ++i) {
    if (p.api_stacks[i].stack >= p.stacks.size()) return fail("API stack", i);
  }
  for (size_t i = 0; i < p.cpu_samples.size(); ++i) {
    if (p.cpu_samples[i].stack >= p.stacks.size()) return fail("CPU sample", i);
  }
  for (size_t i = 0; i < p.modules.size(); ++i) {
    const ModuleInfo& m = p.modules[i];
    if (bad_string(m.path) || bad_string(m.build_id) || m.end < m.start) return fail("module", i);
  }
  return "";
}

}  // namespace gprof
