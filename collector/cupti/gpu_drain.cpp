// See gpu_drain.h.
#include "collector/cupti/gpu_drain.h"

#include "collector/cupti/api_filter.h"
#include "collector/cupti/gpu_collector.h"
#include "model/gpu_checks.h"

#include <cupti.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

namespace gprof::collector {
namespace {

// Re-interns one parsed batch into `profile`.
using ConfigIndex = std::unordered_map<LaunchConfig, uint32_t, LaunchConfigHash, LaunchConfigEqual>;

void MergeBatch(GpuBatch& batch, Profile* profile, ConfigIndex* config_index,
                KnownDevices* devices) {
  std::vector<StringId> names(batch.strings.size());
  for (size_t i = 0; i < names.size(); ++i) {
    names[i] = profile->strings.Intern(batch.strings.Get(static_cast<StringId>(i)));
  }
  std::vector<uint32_t> configs(batch.launch_configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    const LaunchConfig& c = batch.launch_configs[i];
    auto [it, inserted] =
        config_index->try_emplace(c, static_cast<uint32_t>(profile->launch_configs.size()));
    if (inserted) profile->launch_configs.push_back(c);
    configs[i] = it->second;
  }
  ForEachGpuKind(batch, [&](GpuKind, auto& records) {
    auto& into = RecordsOf<typename std::decay_t<decltype(records)>::value_type>(*profile);
    for (auto r : records) {
      if constexpr (std::is_same_v<decltype(r), Kernel>) {
        r.name = names[r.name];
        r.launch_config = configs[r.launch_config];
      }
      into.push_back(r);
    }
  });
  for (const DeviceInfo& d : batch.devices) {
    bool seen = false;
    for (const auto& old : *devices) seen = seen || old.first.id == d.id;
    if (!seen) devices->emplace_back(d, std::string(batch.strings.Get(d.name)));
  }
  profile->counters.records_unknown_kind += batch.records_unknown_kind;
}

// Every device seen so far, in every profile (a window after the first still names its GPU).
void AddDevices(const KnownDevices& devices, Profile* profile) {
  for (const auto& [info, name] : devices) {
    bool seen = false;
    for (const DeviceInfo& old : profile->devices) seen = seen || old.id == info.id;
    if (seen) continue;
    DeviceInfo d = info;
    d.name = profile->strings.Intern(name);
    profile->devices.push_back(d);
  }
}

}  // namespace

MergeTotals MergeGpuBatches(std::vector<GpuBatch>* batches, KnownDevices* devices,
                            Profile* profile) {
  MergeTotals totals;
  const size_t first_kernel = profile->kernels.size();
  const size_t first_memcpy = profile->memcpys.size();
  const size_t first_memset = profile->memsets.size();
  uint64_t uncorrelated_ids_zero = 0;
  ConfigIndex config_index;
  for (size_t i = 0; i < profile->launch_configs.size(); ++i) {
    config_index.try_emplace(profile->launch_configs[i], static_cast<uint32_t>(i));
  }
  for (GpuBatch& batch : *batches) {
    uncorrelated_ids_zero += batch.records_uncorrelated;
    totals.broken_records += batch.records_broken;
    profile->counters.gpu_records_incomplete += batch.records_incomplete;
    MergeBatch(batch, profile, &config_index, devices);
  }
  batches->clear();
  AddDevices(*devices, profile);
  // API calls are host records: when the profile builder already placed them, check against
  // them; else only a zero id is known to be unlinked.
  if (!profile->api_calls.empty()) {
    const CallStarts starts(profile->api_calls);
    uint64_t& unlinked = profile->counters.gpu_records_uncorrelated;
    CountAgainstCalls(profile->kernels, first_kernel, starts, &unlinked, nullptr);
    CountAgainstCalls(profile->memcpys, first_memcpy, starts, &unlinked, nullptr);
    CountAgainstCalls(profile->memsets, first_memset, starts, &unlinked, nullptr);
  } else {
    profile->counters.gpu_records_uncorrelated += uncorrelated_ids_zero;
  }
  return totals;
}

}  // namespace gprof::collector

namespace gprof::collector {

bool IsLaunchCall(const ApiCall& c) {
  const bool launch = c.domain == ApiDomain::kRuntime ? IsRuntimeLaunchCbid(c.cbid)
                                                      : IsDriverLaunchCbid(c.cbid);
  return launch && c.return_code == 0;
}

bool IsGraphLaunchCall(const ApiCall& c) {
  if (c.domain == ApiDomain::kRuntime) {
    return c.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 ||
           c.cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000;
  }
  return c.cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
         c.cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

std::vector<bool> CapturedCalls(const Profile& p) {
  std::vector<bool> captured(p.api_calls.size(), false);
  for (size_t i = 0; i < p.api_calls.size(); ++i) {
    captured[i] = (p.api_calls[i].flags & kApiCallCaptured) != 0;
  }
  return captured;
}

void MarkLaunchCalls(Profile* p, bool (*handed_over)(uint64_t start_ns)) {
  const std::vector<bool> captured = CapturedCalls(*p);
  for (size_t i = 0; i < p->api_calls.size(); ++i) {
    ApiCall& c = p->api_calls[i];
    // A launch made while the program's own profiler held CUPTI has its records there; one made
    // during a stream capture makes none (the graph's replays do).
    if (IsLaunchCall(c) && !captured[i] && (handed_over == nullptr || !handed_over(c.start_ns))) {
      c.flags = static_cast<uint8_t>(c.flags | kApiCallLaunch);
    }
  }
}

}  // namespace gprof::collector
