// See gpu_drain.h.
#include "collector/cupti/gpu_drain.h"

#include "collector/cupti/api_filter.h"
#include "collector/cupti/gpu_collector.h"

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

// Call start by correlation id, for the API calls of a profile.
using CallStarts = std::unordered_map<uint32_t, uint64_t>;

CallStarts StartsOf(const std::vector<ApiCall>& calls) {
  CallStarts starts;
  starts.reserve(calls.size());
  for (const ApiCall& c : calls) starts.emplace(c.correlation_id, c.start_ns);
  return starts;
}

// Records from `first` on: how many have no recorded call, and how many start more than
// kLaunchSkewSlackNs before theirs.
template <typename Rec>
void CountAgainstCalls(const std::vector<Rec>& records, size_t first, const CallStarts& starts,
                       uint64_t* unlinked, uint64_t* before_launch) {
  for (size_t i = first; i < records.size(); ++i) {
    const auto it = records[i].correlation_id == 0 ? starts.end()
                                                   : starts.find(records[i].correlation_id);
    if (it == starts.end()) {
      ++*unlinked;
    } else if (records[i].start_ns + kLaunchSkewSlackNs < it->second) {
      ++*before_launch;
    }
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
    totals.bad_timestamps += batch.records_bad_timestamps;
    profile->counters.gpu_records_incomplete += batch.records_incomplete;
    MergeBatch(batch, profile, &config_index, devices);
  }
  batches->clear();
  AddDevices(*devices, profile);
  // API calls are host records: when the profile builder already placed them, check against
  // them; else only a zero id is known to be unlinked.
  if (!profile->api_calls.empty()) {
    const CallStarts starts = StartsOf(profile->api_calls);
    uint64_t before_launch = 0;  // counted over the whole profile by CheckGpuAgainstCalls
    Counters& c = profile->counters;
    CountAgainstCalls(profile->kernels, first_kernel, starts, &c.gpu_records_uncorrelated,
                      &before_launch);
    CountAgainstCalls(profile->memcpys, first_memcpy, starts, &c.gpu_records_uncorrelated,
                      &before_launch);
    CountAgainstCalls(profile->memsets, first_memset, starts, &c.gpu_records_uncorrelated,
                      &before_launch);
  } else {
    profile->counters.gpu_records_uncorrelated += uncorrelated_ids_zero;
  }
  return totals;
}

}  // namespace gprof::collector

namespace gprof::collector {

void CheckGpuAgainstCalls(Profile* p) {
  const CallStarts starts = StartsOf(p->api_calls);
  uint64_t unlinked = 0, before = 0;
  std::unordered_set<uint32_t> arrived;
  ForEachGpuKind(*p, [&](GpuKind, const auto& records) {
    using T = typename std::decay_t<decltype(records)>::value_type;
    if constexpr (kGpuRecordHasCorrelation<T>) {
      for (const T& r : records) arrived.insert(r.correlation_id);
    }
  });
  CountAgainstCalls(p->kernels, 0, starts, &unlinked, &before);
  CountAgainstCalls(p->memcpys, 0, starts, &unlinked, &before);
  CountAgainstCalls(p->memsets, 0, starts, &unlinked, &before);
  uint64_t without = 0;
  for (const ApiCall& c : p->api_calls) {
    if (IsLaunchCall(c) && arrived.count(c.correlation_id) == 0) ++without;
  }
  p->counters.gpu_records_before_launch = before;
  p->counters.gpu_launches_without_records = without;
}

bool IsLaunchCall(const ApiCall& c) {
  const bool launch = c.domain == ApiDomain::kRuntime ? IsRuntimeLaunchCbid(c.cbid)
                                                      : IsDriverLaunchCbid(c.cbid);
  return launch && c.return_code == 0;
}

}  // namespace gprof::collector
