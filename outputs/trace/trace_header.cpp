// The trace JSON's header (see trace_header.h).
#include "outputs/trace/trace_header.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/tables/stats.h"
#include "analysis/tables/stats_memory.h"

namespace gprof {
namespace {

// "memory": the device-memory peak of the profile and of each step (stats_memory.h), times
// relative to the trace origin as the events'.
void WriteMemoryPeaks(const Profile& p, uint64_t base_ns, JsonWriter* out) {
  JsonWriter& o = *out;
  std::vector<Step> found = ProfileSteps(p);
  std::sort(found.begin(), found.end(), [](const Step& a, const Step& b) {
    return std::make_pair(a.number, a.start_ns) < std::make_pair(b.number, b.start_ns);
  });
  std::vector<std::tuple<uint32_t, uint64_t, uint64_t>> steps;
  for (const Step& s : found) steps.emplace_back(s.number, s.start_ns, s.end_ns);
  const MemoryPeaks m = DeviceMemoryPeaks(p, steps);
  o.Raw(",\n    \"memory\": {\"peak_bytes\": ").Uint(m.peak_bytes);
  o.Raw(", \"peak_ts\": ").Micros(m.peak_ns > base_ns ? m.peak_ns - base_ns : 0);
  o.Raw(", \"steps\": [");
  for (size_t k = 0; k < m.steps.size(); ++k) {
    o.Raw(k ? ", " : "").Raw("{\"step\": ").Uint(m.steps[k].step);
    o.Raw(", \"peak_bytes\": ").Uint(m.steps[k].peak_bytes).Char('}');
  }
  o.Raw("]}");
}

}  // namespace

void WriteTraceHeader(const Profile& p, uint64_t base_ns, bool memory_peaks, JsonWriter* out) {
  JsonWriter& o = *out;
  o.Raw("{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [");
  for (size_t i = 0; i < p.devices.size(); ++i) {
    const DeviceInfo& d = p.devices[i];
    o.Raw(i ? ",\n    {" : "\n    {");
    o.Raw("\"id\": ").Uint(d.id).Raw(", \"name\": ").String(p.strings.Get(d.name));
    o.Raw(", \"totalGlobalMem\": ").Uint(d.total_global_mem);
    o.Raw(", \"computeMajor\": ").Uint(d.compute_major);
    o.Raw(", \"computeMinor\": ").Uint(d.compute_minor);
    o.Raw(", \"maxThreadsPerBlock\": ").Uint(d.max_threads_per_block);
    o.Raw(", \"maxThreadsPerMultiprocessor\": ").Uint(d.max_threads_per_sm);
    o.Raw(", \"regsPerBlock\": ").Uint(d.max_registers_per_block);
    o.Raw(", \"regsPerMultiprocessor\": ").Uint(d.max_registers_per_sm);
    o.Raw(", \"warpSize\": ").Uint(d.warp_size);
    o.Raw(", \"sharedMemPerBlock\": ").Uint(d.max_shared_memory_per_block);
    o.Raw(", \"sharedMemPerMultiprocessor\": ").Uint(d.max_shared_memory_per_sm);
    o.Raw(", \"numSms\": ").Uint(d.num_sms).Char('}');
  }
  o.Raw(p.devices.empty() ? "],\n" : "\n  ],\n");
  if (p.info.rank >= 0) {
    // HTA finds the rank with the regex "rank":\s+(\d+): keep the space after the colon.
    o.Raw("  \"distributedInfo\": {\"backend\": \"unknown\", \"rank\": ").Int(p.info.rank);
    o.Raw(", \"world_size\": ").Int(p.info.world_size).Raw("},\n");
  }
  o.Raw("  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": ").Uint(base_ns);
  o.Raw(",\n");
  const ProfileInfo& i = p.info;
  const Counters& c = p.counters;
  o.Raw("  \"gprof\": {\"program\": ").String(i.program);
  o.Raw(", \"command_line\": ").String(i.command_line);
  o.Raw(", \"pid\": ").Uint(i.pid).Raw(", \"parent_pid\": ").Uint(i.parent_pid);
  o.Raw(", \"hostname\": ").String(i.hostname);
  o.Raw(", \"rank\": ").Int(i.rank).Raw(", \"world_size\": ").Int(i.world_size);
  o.Raw(", \"start_ns\": ").Uint(i.start_ns).Raw(", \"end_ns\": ").Uint(i.end_ns);
  o.Raw(", \"cycle\": ").Uint(i.cycle).Raw(", \"first_step\": ").Uint(i.first_step);
  o.Raw(", \"last_step\": ").Uint(i.last_step);
  o.Raw(", \"partial\": ").Raw(i.partial_window ? "true" : "false");
  o.Raw(", \"gpu_status\": ").String(i.gpu_status);
  o.Raw(", \"cupti_library\": ").String(i.cupti_library);
  // The clock check at GPU start (ProfileInfo): CUPTI's clock against the host's.
  o.Raw(", \"cupti_clock\": {\"check\": \"")
      .Raw(i.cupti_clock_window_ns == 0 ? "not checked"
           : CuptiClockAgrees(i)        ? "agrees"
                                        : "differs")
      .Raw("\", \"offset_ns\": ")
      .Int(i.cupti_clock_offset_ns)
      .Raw(", \"window_ns\": ")
      .Uint(i.cupti_clock_window_ns)
      .Raw("}");
  if (memory_peaks && !p.memory_ops.empty()) WriteMemoryPeaks(p, base_ns, out);
  o.Raw(",\n    \"counters\": {");
  const char* sep = "";
  ForEachCounter(c, [&](const char* name, uint64_t value, const char*) {
    o.Raw(sep).Raw("\"").Raw(name).Raw("\": ").Uint(value);
    sep = ", ";
  });
  o.Raw("}},\n");
}

}  // namespace gprof
