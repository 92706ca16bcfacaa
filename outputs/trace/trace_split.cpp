// Cutting a profile by time and writing capped JSON traces (see trace_split.h).
#include "outputs/trace/trace_split.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "outputs/trace/trace_json.h"

namespace gprof {
namespace {

// The JSON bytes of `p`'s trace, formatted and counted, never stored.
uint64_t JsonBytes(const Profile& p, const std::string& name, const CpuSampleNames* cpu) {
  uint64_t bytes = 0;
  FormatTraceJson(p, name,
                  JsonSink{&bytes, [](void* ctx, const char*, size_t n) {
                             *static_cast<uint64_t*>(ctx) += n;
                           }},
                  cpu);
  return bytes;
}

std::string FileName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Each event's time for the cut: its start, or for a GPU record its launching call's start.
struct Keys {
  std::unordered_map<uint32_t, uint64_t> call_start;  // correlation id -> call start

  explicit Keys(const Profile& p) {
    call_start.reserve(p.api_calls.size());
    for (const ApiCall& c : p.api_calls) call_start.emplace(c.correlation_id, c.start_ns);
  }
  template <typename T>
  uint64_t Of(const T& r) const {
    if constexpr (kGpuRecordHasCorrelation<T>) {
      auto it = call_start.find(r.correlation_id);
      if (it != call_start.end()) return it->second;
    }
    return GpuRecordStartNs(r);
  }
};

}  // namespace

std::vector<Profile> SliceProfileByTime(const Profile& p, size_t parts) {
  parts = std::max<size_t>(parts, 1);
  const Keys keys(p);
  std::vector<uint64_t> times;
  for (const HostRange& r : p.ranges) times.push_back(r.start_ns);
  for (const HostMark& m : p.marks) times.push_back(m.ts_ns);
  for (const ApiCall& c : p.api_calls) times.push_back(c.start_ns);
  ForEachGpuKind(p, [&](GpuKind, const auto& v) {
    for (const auto& r : v) times.push_back(keys.Of(r));
  });
  std::sort(times.begin(), times.end());
  // cuts[i]: the first time of part i+1. Equal times stay together, so a part may be empty.
  std::vector<uint64_t> cuts;
  for (size_t i = 1; i < parts && !times.empty(); ++i) {
    cuts.push_back(times[std::min(times.size() - 1, times.size() * i / parts)]);
  }
  const auto part_of = [&](uint64_t t) {
    return static_cast<size_t>(std::upper_bound(cuts.begin(), cuts.end(), t) - cuts.begin());
  };

  std::vector<Profile> out(cuts.size() + 1);
  for (Profile& part : out) {
    part.info = p.info;
    part.counters = p.counters;
    part.collector_cost = p.collector_cost;
    // StringTable does not copy (its views point into its own storage): intern in id order,
    // which gives every string its id again (ids are dense and unique).
    for (StringId id = 0; id < p.strings.size(); ++id) {
      if (part.strings.Intern(p.strings.Get(id)) != id) {
        throw std::logic_error("string ids of the profile are not dense");
      }
    }
    part.domains = p.domains;
    part.threads = p.threads;
    part.devices = p.devices;
    part.api_names = p.api_names;
    part.launch_configs = p.launch_configs;
    // The samples' stacks (by index, as the names the caller made of them) and their modules.
    part.stacks = p.stacks;
    part.stack_pcs = p.stack_pcs;
    part.modules = p.modules;
    part.cpu_sample_counters = p.cpu_sample_counters;
    part.cpu_sample_counters.taken = 0;
  }
  for (const HostRange& r : p.ranges) out[part_of(r.start_ns)].ranges.push_back(r);
  for (const HostMark& m : p.marks) out[part_of(m.ts_ns)].marks.push_back(m);
  for (const ApiCall& c : p.api_calls) out[part_of(c.start_ns)].api_calls.push_back(c);
  for (const Step& s : p.steps) out[part_of(s.start_ns)].steps.push_back(s);
  for (const CpuSample& s : p.cpu_samples) {
    Profile& part = out[part_of(s.time_ns)];
    part.cpu_samples.push_back(s);
    ++part.cpu_sample_counters.taken;
  }
  ForEachGpuKind(p, [&](GpuKind, const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    for (const T& r : v) RecordsOf<T>(out[part_of(keys.Of(r))]).push_back(r);
  });
  // Empty parts (equal times) are dropped: every part written holds something.
  out.erase(std::remove_if(out.begin() + 1, out.end(),
                           [](const Profile& q) {
                             size_t n = q.ranges.size() + q.marks.size() + q.api_calls.size() +
                                        q.steps.size() + q.cpu_samples.size();
                             ForEachGpuKind(q, [&](GpuKind, const auto& v) { n += v.size(); });
                             return n == 0;
                           }),
            out.end());
  return out;
}

std::string TracePartPath(const std::string& path, size_t part) {
  const size_t slash = path.find_last_of('/');
  const size_t at = path.find(".json", slash == std::string::npos ? 0 : slash + 1);
  const std::string tag = ".part" + std::to_string(part);
  return at == std::string::npos ? path + tag : path.substr(0, at) + tag + path.substr(at);
}

std::vector<std::string> WriteTraceJsonCapped(const Profile& p, const std::string& path,
                                              uint64_t max_bytes,
                                              const PythonSliceSet* python,
                                              const CpuSampleNames* cpu) {
  if (max_bytes == 0) {
    WriteTraceJson(p, path, python, cpu);
    return {path};
  }
  const uint64_t whole = JsonBytes(p, FileName(path), cpu);
  if (whole <= max_bytes) {  // the Python slices are not counted: with them it may pass the cap
    WriteTraceJson(p, path, python, cpu);
    return {path};
  }
  // Parts of about equal event counts; more parts until each fits (events differ in size, and
  // every part repeats the process and thread metadata).
  size_t parts = static_cast<size_t>((whole + max_bytes - 1) / max_bytes);
  std::vector<Profile> slices;
  size_t previous = 0;
  for (int attempt = 0; attempt < 8; ++attempt) {
    slices = SliceProfileByTime(p, parts);
    if (slices.size() == previous) break;  // equal times: it cannot be cut finer
    previous = slices.size();
    uint64_t largest = 0;
    for (size_t i = 0; i < slices.size(); ++i) {
      largest =
          std::max(largest, JsonBytes(slices[i], FileName(TracePartPath(path, i + 1)), cpu));
    }
    if (largest <= max_bytes) break;
    parts = std::max(parts + 1, static_cast<size_t>(parts * (largest + max_bytes - 1) / max_bytes));
  }
  std::vector<std::string> written;
  for (size_t i = 0; i < slices.size(); ++i) {
    written.push_back(TracePartPath(path, i + 1));
    WriteTraceJson(slices[i], written.back(), nullptr, cpu);
  }
  return written;
}

}  // namespace gprof
