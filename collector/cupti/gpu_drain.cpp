// See gpu_drain.h.
#include "collector/cupti/gpu_drain.h"

#include "collector/cupti/api_filter.h"
#include "collector/cupti/gpu_collector.h"

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

// The API calls of a profile by correlation id: their start and whether GPU work arrived for
// them. CUPTI's correlation ids count up from 1 in a process, so the ids of a run or a window are
// dense: a flat array indexed by id - lowest (1M calls: ~20 MB, filled in one pass) instead of a
// hash map (several times slower at exit, bench figure 6c). Sparse ids (hand-made profiles) fall
// back to a map.
class CallStarts {
 public:
  explicit CallStarts(const std::vector<ApiCall>& calls) {
    uint32_t lo = UINT32_MAX, hi = 0;
    for (const ApiCall& c : calls) {
      lo = std::min(lo, c.correlation_id);
      hi = std::max(hi, c.correlation_id);
    }
    if (!calls.empty() && hi - lo < 4 * calls.size() + 4096) {
      base_ = lo;
      flat_.assign(static_cast<size_t>(hi - lo) + 1, kNone);
      for (const ApiCall& c : calls) {
        uint64_t& slot = flat_[c.correlation_id - lo];
        if (slot == kNone) slot = c.start_ns;  // the first call with an id, as emplace keeps
      }
    } else {
      sparse_.reserve(calls.size());
      for (const ApiCall& c : calls) sparse_.emplace(c.correlation_id, c.start_ns);
    }
  }
  // The start of the call with `id`; false when no call has it (id 0 never has one).
  bool Find(uint32_t id, uint64_t* start) const {
    if (id == 0) return false;
    if (!flat_.empty()) {
      if (id < base_ || id - base_ >= flat_.size() || flat_[id - base_] == kNone) return false;
      *start = flat_[id - base_];
      return true;
    }
    const auto it = sparse_.find(id);
    if (it == sparse_.end()) return false;
    *start = it->second;
    return true;
  }

 private:
  static constexpr uint64_t kNone = UINT64_MAX;
  uint32_t base_ = 0;
  std::vector<uint64_t> flat_;
  std::unordered_map<uint32_t, uint64_t> sparse_;
};

// Records from `first` on: how many have no recorded call, and how many start more than
// kLaunchSkewSlackNs before theirs (either count may be skipped with nullptr).
template <typename Rec>
void CountAgainstCalls(const std::vector<Rec>& records, size_t first, const CallStarts& starts,
                       uint64_t* unlinked, uint64_t* before_launch) {
  for (size_t i = first; i < records.size(); ++i) {
    uint64_t call_start = 0;
    if (!starts.Find(records[i].correlation_id, &call_start)) {
      if (unlinked != nullptr) ++*unlinked;
    } else if (before_launch != nullptr && records[i].start_ns + kLaunchSkewSlackNs < call_start) {
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

void CheckGpuAgainstCalls(Profile* p) {
  const CallStarts starts(p->api_calls);
  uint64_t before = 0;
  CountAgainstCalls(p->kernels, 0, starts, nullptr, &before);
  CountAgainstCalls(p->memcpys, 0, starts, nullptr, &before);
  CountAgainstCalls(p->memsets, 0, starts, nullptr, &before);
  // Launches whose work arrived: the record ids, over the calls' id range (dense, as above).
  uint32_t lo = UINT32_MAX, hi = 0;
  size_t launches = 0;
  for (const ApiCall& c : p->api_calls) {
    if (!IsLaunchCall(c)) continue;
    lo = std::min(lo, c.correlation_id);
    hi = std::max(hi, c.correlation_id);
    ++launches;
  }
  uint64_t without = 0;
  if (launches != 0 && hi - lo >= 4 * launches + 4096) {  // sparse ids: a set
    std::unordered_set<uint32_t> arrived;
    ForEachGpuKind(*p, [&](GpuKind, const auto& records) {
      using T = typename std::decay_t<decltype(records)>::value_type;
      if constexpr (kGpuRecordHasCorrelation<T>) {
        for (const T& r : records) arrived.insert(r.correlation_id);
      }
    });
    for (const ApiCall& c : p->api_calls) {
      if (IsLaunchCall(c) && arrived.count(c.correlation_id) == 0) ++without;
    }
  } else if (launches != 0) {
    std::vector<uint8_t> arrived(static_cast<size_t>(hi - lo) + 1, 0);
    ForEachGpuKind(*p, [&](GpuKind, const auto& records) {
      using T = typename std::decay_t<decltype(records)>::value_type;
      if constexpr (kGpuRecordHasCorrelation<T>) {
        for (const T& r : records) {
          if (r.correlation_id >= lo && r.correlation_id <= hi) arrived[r.correlation_id - lo] = 1;
        }
      }
    });
    for (const ApiCall& c : p->api_calls) {
      if (IsLaunchCall(c) && arrived[c.correlation_id - lo] == 0) ++without;
    }
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
