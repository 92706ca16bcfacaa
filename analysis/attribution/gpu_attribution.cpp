// GpuAttribution (see gpu_attribution.h for the rules).
//
// Cost, linear apart from the sorts (bench/trace_export_bench.cpp sizes: 1 M launches): the
// launches come from one merge of the correlation index (no lookups); ranges sweep their own
// thread's launches, steps sweep all of them, each launch meeting only the owners open at its
// start (the nesting depth). Threads are grouped with a counting sort; the sorts by start are
// usually no-ops (a thread's calls and correlation ids arrive in time order).
#include "analysis/attribution/gpu_attribution.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

namespace gprof {
namespace {

struct Interval {
  uint64_t start;
  uint64_t end;
  uint32_t tid;    // ranges: the range's thread (dense id); steps: unused
  uint32_t owner;  // step index, or steps + range index
};

struct Launch {
  uint64_t start;  // the launching call's start
  uint32_t tid;    // the launching call's thread (dense id)
  uint32_t id;     // launch id
};

template <typename T>
void SortByStart(T first, T last) {
  const auto by_start = [](const auto& a, const auto& b) { return a.start < b.start; };
  if (!std::is_sorted(first, last, by_start)) std::stable_sort(first, last, by_start);
}

// Stable counting sort by the dense thread id; returns where each thread's block begins
// (threads + 1 entries). Each block is then sorted by start.
template <typename T>
std::vector<size_t> GroupByThread(std::vector<T>* v, size_t threads) {
  std::vector<size_t> begin(threads + 1, 0);
  for (const T& x : *v) ++begin[x.tid + 1];
  for (size_t t = 0; t < threads; ++t) begin[t + 1] += begin[t];
  std::vector<T> out(v->size());
  std::vector<size_t> fill(begin.begin(), begin.end() - 1);
  for (const T& x : *v) out[fill[x.tid]++] = x;
  v->swap(out);
  for (size_t t = 0; t < threads; ++t) {
    SortByStart(v->begin() + begin[t], v->begin() + begin[t + 1]);
  }
  return begin;
}

// For each launch (sorted by start) calls emit(owner, launch) for every interval (sorted by
// start) with start <= launch.start < end.
template <typename Emit>
void Sweep(std::span<const Interval> intervals, std::span<const Launch> launches, Emit&& emit) {
  std::vector<const Interval*> open;
  size_t next = 0;
  for (const Launch& l : launches) {
    while (next < intervals.size() && intervals[next].start <= l.start) {
      open.push_back(&intervals[next++]);
    }
    std::erase_if(open, [&](const Interval* i) { return i->end <= l.start; });
    for (const Interval* i : open) emit(i->owner, l);
  }
}

}  // namespace

bool IsStepRange(const Profile& p, const HostRange& r) {
  return (r.flags & kRangeStep) || p.strings.Get(r.name).rfind("ProfilerStep#", 0) == 0;
}

GpuAttribution::GpuAttribution(const Profile& p, const CorrelationIndex& corr)
    : steps_(p.steps.size()) {
  const size_t owners = p.steps.size() + p.ranges.size();
  offsets_.assign(owners + 1, 0);
  owned_ns_.assign(owners, 0);
  if (owners == 0) return;

  // Threads get dense ids so that grouping by thread is a counting sort.
  std::unordered_map<uint32_t, uint32_t> dense;
  const auto thread = [&](uint32_t tid) {
    return dense.emplace(tid, static_cast<uint32_t>(dense.size())).first->second;
  };

  std::vector<Launch> launches;
  std::vector<uint64_t> launch_ns;
  corr.ForEachLaunch([&](uint32_t api_index, std::span<const GpuRef> records) {
    const ApiCall& c = p.api_calls[api_index];
    uint64_t ns = 0;
    for (const GpuRef& g : records) ns += g.end_ns > g.start_ns ? g.end_ns - g.start_ns : 0;
    launches.push_back({c.start_ns, thread(c.tid), static_cast<uint32_t>(launches_.size())});
    launches_.push_back(records);
    launch_ns.push_back(ns);
  });

  std::vector<Interval> steps;   // rule (b): process-wide
  std::vector<Interval> ranges;  // rule (a): per thread
  for (uint32_t i = 0; i < p.steps.size(); ++i) {
    steps.push_back({p.steps[i].start_ns, p.steps[i].end_ns, 0, i});
  }
  for (uint32_t i = 0; i < p.ranges.size(); ++i) {
    const HostRange& r = p.ranges[i];
    const uint32_t owner = static_cast<uint32_t>(steps_ + i);
    if (IsStepRange(p, r)) {
      steps.push_back({r.start_ns, r.end_ns, 0, owner});
    } else {
      ranges.push_back({r.start_ns, r.end_ns, thread(r.tid), owner});
    }
  }

  std::vector<std::pair<uint32_t, uint32_t>> owned;  // (owner, launch id)
  owned.reserve(launches.size());
  const auto emit = [&](uint32_t owner, const Launch& l) {
    owned.emplace_back(owner, l.id);
    owned_ns_[owner] += launch_ns[l.id];
  };
  if (!steps.empty()) {
    SortByStart(steps.begin(), steps.end());
    SortByStart(launches.begin(), launches.end());
    Sweep(steps, launches, emit);
  }
  if (!ranges.empty()) {
    const std::vector<size_t> r = GroupByThread(&ranges, dense.size());
    const std::vector<size_t> l = GroupByThread(&launches, dense.size());
    for (size_t t = 0; t < dense.size(); ++t) {
      Sweep(std::span<const Interval>(ranges).subspan(r[t], r[t + 1] - r[t]),
            std::span<const Launch>(launches).subspan(l[t], l[t + 1] - l[t]), emit);
    }
  }

  // Grouped by owner; a stable counting sort keeps each owner's launches in sweep order (start).
  for (const auto& [owner, id] : owned) ++offsets_[owner + 1];
  for (size_t o = 0; o < owners; ++o) offsets_[o + 1] += offsets_[o];
  owned_.resize(owned.size());
  std::vector<uint32_t> fill(offsets_.begin(), offsets_.end() - 1);
  for (const auto& [owner, id] : owned) owned_[fill[owner]++] = id;
}

std::span<const uint32_t> GpuAttribution::Owned(uint32_t owner) const {
  if (owner + 1 >= offsets_.size()) return {};
  return std::span<const uint32_t>(owned_).subspan(offsets_[owner],
                                                   offsets_[owner + 1] - offsets_[owner]);
}

uint64_t GpuAttribution::OwnedNs(uint32_t owner) const {
  return owner < owned_ns_.size() ? owned_ns_[owner] : 0;
}

}  // namespace gprof
