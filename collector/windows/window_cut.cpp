#include "collector/windows/window_cut.h"

#include <algorithm>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gprof::collector {
namespace {

enum class Fate { kKeep, kCarry, kDrop };

// Re-interns strings and launch configs of one profile into another.
class Transfer {
 public:
  Transfer(const Profile& from, Profile* into) : from_(from), into_(into) {}
  StringId Name(StringId id) { return into_->strings.Intern(from_.strings.Get(id)); }
  uint32_t Config(uint32_t index) {
    auto [it, inserted] = configs_.try_emplace(index, 0);
    if (inserted) {
      it->second = static_cast<uint32_t>(into_->launch_configs.size());
      into_->launch_configs.push_back(index < from_.launch_configs.size()
                                          ? from_.launch_configs[index]
                                          : LaunchConfig{});
    }
    return it->second;
  }
  Kernel Move(Kernel k) {
    k.name = Name(k.name);
    k.launch_config = Config(k.launch_config);
    return k;
  }
  template <typename T>
  T Move(T record) { return record; }  // records without strings or indices

 private:
  const Profile& from_;
  Profile* into_;
  std::unordered_map<uint32_t, uint32_t> configs_;
};

template <typename T, typename FateOf>
void Partition(std::vector<T>* records, FateOf fate_of, Transfer* to_carry,
               std::vector<T>* carry) {
  std::vector<T> kept;
  kept.reserve(records->size());
  for (const T& r : *records) {
    switch (fate_of(r)) {
      case Fate::kKeep: kept.push_back(r); break;
      case Fate::kCarry: carry->push_back(to_carry->Move(r)); break;
      case Fate::kDrop: break;
    }
  }
  *records = std::move(kept);
}

template <typename T>
void MoveAll(std::vector<T>* from, Transfer* transfer, std::vector<T>* into) {
  into->reserve(into->size() + from->size());
  for (const T& r : *from) into->push_back(transfer->Move(r));
  from->clear();
}

}  // namespace

void CutWindow(Profile* p, uint64_t start_ns, uint64_t end_ns, Profile* carry,
               bool program_ended) {
  auto inside = [&](uint64_t ts) { return ts >= start_ns && ts < end_ns; };

  // Host side. A range the build closed at `end_ns` (kRangeOpenAtEnd: still open when the
  // window was built) was cut by the window's end as much as one that closed later.
  std::erase_if(p->ranges, [&](const HostRange& r) { return !inside(r.start_ns); });
  uint64_t open = 0;
  for (HostRange& r : p->ranges) {
    if (r.end_ns > end_ns) {
      r.end_ns = end_ns;
      r.flags |= program_ended ? kRangeOpenAtEnd : kRangeCutAtWindowEnd;
    }
    if (!program_ended && (r.flags & kRangeOpenAtEnd)) {
      r.flags = static_cast<uint16_t>((r.flags & ~kRangeOpenAtEnd) | kRangeCutAtWindowEnd);
    }
    open += (r.flags & kRangeOpenAtEnd) != 0;
  }
  p->counters.nvtx_ranges_open_at_end = open;
  std::erase_if(p->marks, [&](const HostMark& m) { return !inside(m.ts_ns); });
  // --cpu-sampling: the build took every sample queued since the previous window.
  std::erase_if(p->cpu_samples, [&](const CpuSample& s) { return !inside(s.time_ns); });
  p->cpu_sample_counters.taken = p->cpu_samples.size();

  // Which launching calls belong where.
  std::unordered_set<uint32_t> kept_calls, later_calls, earlier_calls;
  for (const ApiCall& c : p->api_calls) {
    (inside(c.start_ns) ? kept_calls : c.start_ns >= end_ns ? later_calls : earlier_calls)
        .insert(c.correlation_id);
  }
  std::erase_if(p->api_calls, [&](const ApiCall& c) { return !inside(c.start_ns); });
  // CUPTI numbers calls in the order they begin, process-wide: a record whose call is not in the
  // profile any more (its host records were trimmed with a wait or warmup step) but whose id is
  // below every call of the window was launched before the window, whenever it ran.
  uint32_t first_kept = UINT32_MAX;
  for (const ApiCall& c : p->api_calls) first_kept = std::min(first_kept, c.correlation_id);

  auto fate_by_time = [&](uint64_t ts) {
    return inside(ts) ? Fate::kKeep : ts >= end_ns ? Fate::kCarry : Fate::kDrop;
  };
  // GPU work follows the call that launched it; records without a known launch go by time.
  auto fate = [&](const auto& r) {
    using T = std::decay_t<decltype(r)>;
    if constexpr (kGpuRecordHasCorrelation<T>) {
      const uint32_t corr = r.correlation_id;
      if (corr != 0) {
        if (kept_calls.count(corr)) return Fate::kKeep;
        if (later_calls.count(corr)) return Fate::kCarry;
        if (earlier_calls.count(corr)) return Fate::kDrop;
        if (first_kept != UINT32_MAX && corr < first_kept) return Fate::kDrop;
      }
    }
    return fate_by_time(GpuRecordStartNs(r));
  };
  Transfer to_carry(*p, carry);
  ForEachGpuKind(*p, [&](GpuKind, auto& records) {
    using T = typename std::decay_t<decltype(records)>::value_type;
    Partition(&records, fate, &to_carry, &RecordsOf<T>(*carry));
  });
}

std::unordered_set<uint32_t> MoveGpuRecordsOf(const std::unordered_set<uint32_t>& calls,
                                              Profile* from, Profile* into) {
  std::unordered_set<uint32_t> moved;
  if (calls.empty()) return moved;
  Transfer transfer(*from, into);
  ForEachGpuKind(*from, [&](GpuKind, auto& records) {
    using T = typename std::decay_t<decltype(records)>::value_type;
    if constexpr (kGpuRecordHasCorrelation<T>) {
      auto fate = [&](const T& r) {
        if (calls.count(r.correlation_id) == 0) return Fate::kKeep;
        moved.insert(r.correlation_id);
        return Fate::kCarry;
      };
      Partition(&records, fate, &transfer, &RecordsOf<T>(*into));
    }
  });
  return moved;
}

void MoveGpuRecords(Profile* from, Profile* into) {
  Transfer transfer(*from, into);
  ForEachGpuKind(*from, [&](GpuKind, auto& records) {
    using T = typename std::decay_t<decltype(records)>::value_type;
    MoveAll(&records, &transfer, &RecordsOf<T>(*into));
  });
  for (DeviceInfo d : from->devices) {
    const bool known = std::any_of(into->devices.begin(), into->devices.end(),
                                   [&](const DeviceInfo& x) { return x.id == d.id; });
    if (!known) {
      d.name = transfer.Name(d.name);
      into->devices.push_back(d);
    }
  }
  for (ApiName n : from->api_names) {
    const bool known = std::any_of(into->api_names.begin(), into->api_names.end(),
                                   [&](const ApiName& x) {
                                     return x.cbid == n.cbid && x.domain == n.domain;
                                   });
    if (!known) {
      n.name = transfer.Name(n.name);
      into->api_names.push_back(n);
    }
  }
  from->devices.clear();
  from->api_names.clear();
  from->launch_configs.clear();
  AddCounters(&into->counters, from->counters);
  from->counters = Counters{};
  AddCollectorCost(&into->collector_cost, from->collector_cost);
  from->collector_cost = CollectorCost{};
}

}  // namespace gprof::collector
