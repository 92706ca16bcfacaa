// Key-averages rows added up segment by segment (see segment_rows.h).
#include "analysis/tables/segment_rows.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace gprof {

// The records KeyAverages reads; the tables stay in the profile.
struct SegmentedKeyAverages::Records {
  std::vector<HostRange> ranges;
  std::vector<HostMark> marks;
  std::vector<ApiCall> api_calls;
  std::vector<Step> steps;
  GpuRecords gpu;

  void CopyFrom(const Profile& p) {
    ranges = p.ranges, marks = p.marks, api_calls = p.api_calls, steps = p.steps;
    gpu = static_cast<const GpuRecords&>(p);
  }
  void MoveFrom(Profile* p) {
    ranges = std::move(p->ranges), marks = std::move(p->marks);
    api_calls = std::move(p->api_calls), steps = std::move(p->steps);
    gpu = std::move(static_cast<GpuRecords&>(*p));
    p->ranges.clear(), p->marks.clear(), p->api_calls.clear(), p->steps.clear();
    ForEachGpuKind(*p, [](GpuKind, auto& v) { v.clear(); });
  }
  void MoveTo(Profile* p) {
    p->ranges = std::move(ranges), p->marks = std::move(marks);
    p->api_calls = std::move(api_calls), p->steps = std::move(steps);
    static_cast<GpuRecords&>(*p) = std::move(gpu);
  }
  void AppendTo(Profile* p) const {
    const auto append = [](const auto& from, auto* to) {
      to->insert(to->end(), from.begin(), from.end());
    };
    append(ranges, &p->ranges), append(marks, &p->marks);
    append(api_calls, &p->api_calls), append(steps, &p->steps);
    ForEachGpuKind(*p, [&](GpuKind, auto& to) {
      using T = typename std::decay_t<decltype(to)>::value_type;
      append(RecordsOf<T>(gpu), &to);
    });
  }
};

void LongRangeFinder::Add(const Profile& segment) {
  uint64_t end = 0;
  for (const HostRange& r : segment.ranges) {
    if (index_ >= 2 && r.start_ns < end_before_) found_.push_back({index_, r});
    end = std::max(end, r.end_ns);
  }
  for (const ApiCall& c : segment.api_calls) end = std::max(end, c.end_ns);
  end_before_ = std::max(end_before_, last_end_);  // segment index-1 joins "up to (index+1)-2"
  last_end_ = end;
  ++index_;
}

SegmentedKeyAverages::SegmentedKeyAverages(const KeyAveragesOptions& options,
                                           std::vector<LongRange> long_ranges)
    : options_(options), long_(std::move(long_ranges)), previous_(new Records) {
  if (options_.instances || options_.folded_ranges != nullptr || options_.stacks != nullptr) {
    throw std::invalid_argument("SegmentedKeyAverages: instances, folded ranges and stacks are "
                                "per profile, not per segment");
  }
}

SegmentedKeyAverages::~SegmentedKeyAverages() { delete previous_; }

void SegmentedKeyAverages::GroupByStack(const PythonSamples* samples, uint32_t depth) {
  samples_ = samples;
  depth_ = depth;
  stack_counts_ = RangeStacks{};
  stack_counts_.depth = std::max<uint32_t>(depth, 1);
  if (samples != nullptr) {
    stack_counts_.hz = samples->hz;
    stack_counts_.period_ns = samples->period_ns;
  }
}

RangeStacks SegmentedKeyAverages::StackCounts() const { return stack_counts_; }

std::vector<EventStats> SegmentedKeyAverages::RowsOf(const Profile& universe, int sign) {
  if (samples_ == nullptr) return KeyAverages(universe, options_);
  const RangeStacks stacks = StacksOfRanges(universe, *samples_, depth_);
  // Counts of ranges, so the difference of two universes counts the segment's own (mod 2^64).
  const uint64_t u = sign < 0 ? ~uint64_t{0} : 1;
  stack_counts_.grouped += stacks.grouped * u, stack_counts_.inside += stacks.inside * u;
  stack_counts_.near_start += stacks.near_start * u;
  stack_counts_.not_sampled += stacks.not_sampled * u;
  KeyAveragesOptions options = options_;
  options.stacks = &stacks;
  return KeyAverages(universe, options);
}

void SegmentedKeyAverages::Add(const Profile& segment, Profile* tables) {
  Records own, kept;
  own.CopyFrom(segment);
  kept.MoveFrom(tables);
  // U without this segment: the one before and the long ranges stored two or more segments on.
  previous_->AppendTo(tables);
  for (const LongRange& l : long_) {
    if (l.segment >= index_ + 2) tables->ranges.push_back(l.range);
  }
  SortRangesAndMarks(tables);
  AddKeyAveragesRows(RowsOf(*tables, -1), -1, &rows_);
  own.AppendTo(tables);
  SortRangesAndMarks(tables);
  AddKeyAveragesRows(RowsOf(*tables, +1), +1, &rows_);
  // The universe dropped, `tables` given its records back, this segment kept for the next one.
  Records universe;
  universe.MoveFrom(tables);
  kept.MoveTo(tables);
  *previous_ = std::move(own);
  ++index_;
}

std::vector<EventStats> SegmentedKeyAverages::Rows() const {
  std::vector<EventStats> rows;
  for (const EventStats& r : rows_) {
    const bool nothing = r.count == 0 && r.self_cpu_ns == 0 && r.cpu_total_ns == 0 &&
                         r.self_cuda_ns == 0 && r.cuda_total_ns == 0 && r.cpu_mem == 0 &&
                         r.self_cpu_mem == 0 && r.cuda_mem == 0 && r.self_cuda_mem == 0;
    if (!nothing) rows.push_back(r);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const EventStats& a, const EventStats& b) {
    return std::tie(a.name, a.input_shapes, a.stack) < std::tie(b.name, b.input_shapes, b.stack);
  });
  return rows;
}

std::vector<EventStats> RowsWithoutStacks(const std::vector<EventStats>& rows) {
  std::vector<EventStats> plain = rows, merged;
  for (EventStats& r : plain) r.stack.clear();
  AddKeyAveragesRows(plain, +1, &merged);
  std::stable_sort(merged.begin(), merged.end(), [](const EventStats& a, const EventStats& b) {
    return std::tie(a.name, a.input_shapes) < std::tie(b.name, b.input_shapes);
  });
  return merged;
}

void AddKeyAveragesRows(const std::vector<EventStats>& from, int sign,
                        std::vector<EventStats>* into) {
  using Key = std::tuple<std::string, std::string, std::vector<std::string>, RowKind, bool>;
  std::map<Key, size_t> at;
  for (size_t i = 0; i < into->size(); ++i) {
    const EventStats& r = (*into)[i];
    at.emplace(Key{r.name, r.input_shapes, r.stack, r.kind, r.device}, i);
  }
  const uint64_t u = sign < 0 ? ~uint64_t{0} : 1;  // x * u: x or -x modulo 2^64
  const int64_t s = sign < 0 ? -1 : 1;
  for (const EventStats& r : from) {
    const auto [it, fresh] =
        at.emplace(Key{r.name, r.input_shapes, r.stack, r.kind, r.device}, into->size());
    if (fresh) {
      EventStats zero = r;
      zero.instances_ns.clear();
      zero.count = zero.self_cpu_ns = zero.cpu_total_ns = zero.self_cuda_ns = 0;
      zero.cuda_total_ns = 0;
      zero.cpu_mem = zero.self_cpu_mem = zero.cuda_mem = zero.self_cuda_mem = 0;
      into->push_back(std::move(zero));
    }
    EventStats& t = (*into)[it->second];
    t.count += r.count * u;
    t.self_cpu_ns += r.self_cpu_ns * u, t.cpu_total_ns += r.cpu_total_ns * u;
    t.self_cuda_ns += r.self_cuda_ns * u, t.cuda_total_ns += r.cuda_total_ns * u;
    t.cpu_mem += r.cpu_mem * s, t.self_cpu_mem += r.self_cpu_mem * s;
    t.cuda_mem += r.cuda_mem * s, t.self_cuda_mem += r.self_cuda_mem * s;
    if (sign > 0) {
      t.instances_ns.insert(t.instances_ns.end(), r.instances_ns.begin(), r.instances_ns.end());
    }
  }
}

}  // namespace gprof
