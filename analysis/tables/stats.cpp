// nsys-style summary reports (see stats.h): the rows and tables; their text, CSV and JSON are
// stats_format.cpp. Launcher process only.
#include "analysis/tables/stats.h"

#include "analysis/attribution/intervals.h"
#include "text/format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "analysis/attribution/gpu_attribution.h"
#include "analysis/attribution/names.h"
#include "analysis/samples/native_symbols.h"
#include "analysis/tables/key_averages.h"

namespace gprof {
namespace {

constexpr std::string_view kApi = "cuda_api_sum";
constexpr std::string_view kKern = "cuda_gpu_kern_sum";
constexpr std::string_view kMemTime = "cuda_gpu_mem_time_sum";
constexpr std::string_view kMemSize = "cuda_gpu_mem_size_sum";
constexpr std::string_view kNvtx = "nvtx_sum";

uint64_t Duration(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

std::string RangeName(const Profile& p, const HostRange& r) {
  const std::string name(p.strings.Get(r.name));
  // Ranges of a named domain read "domain:name"; the default domain's have no prefix.
  if (r.domain != 0 && r.domain < p.domains.size()) {
    const std::string domain(p.strings.Get(p.domains[r.domain]));
    if (!domain.empty()) return domain + ":" + name;
  }
  return name;
}

// Step number of a ProfilerStep#N range; false when the name carries no number.
bool StepNumber(std::string_view name, uint32_t* number) {
  const size_t hash = name.rfind('#');
  if (hash == std::string_view::npos || hash + 1 >= name.size()) return false;
  uint64_t n = 0;
  for (size_t i = hash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return false;
    n = n * 10 + static_cast<uint64_t>(name[i] - '0');
    if (n > UINT32_MAX) return false;
  }
  *number = static_cast<uint32_t>(n);
  return true;
}

std::vector<StatsRow> RowsOf(const std::map<std::string, std::vector<uint64_t>>& samples,
                             bool with_percent) {
  std::vector<StatsRow> rows;
  uint64_t all = 0;
  for (const auto& [name, values] : samples) {
    std::vector<uint64_t> v = values;
    StatsRow row;
    row.name = name;
    row.s = SummarizeSamples(&v);
    all += row.s.total;
    rows.push_back(std::move(row));
  }
  for (StatsRow& r : rows) {
    r.percent = with_percent && all > 0 ? 100.0 * static_cast<double>(r.s.total) /
                                              static_cast<double>(all)
                                        : 0.0;
  }
  std::stable_sort(rows.begin(), rows.end(), [](const StatsRow& a, const StatsRow& b) {
    if (a.s.total != b.s.total) return a.s.total > b.s.total;
    if (a.name != b.name) return a.name < b.name;
    return a.style < b.style;
  });
  return rows;
}

std::string Title(std::string_view report) {
  if (report == kApi) return "CUDA API Summary";
  if (report == kKern) return "CUDA GPU Kernel Summary";
  if (report == kMemTime) return "CUDA GPU MemOps Summary (by Time)";
  if (report == kMemSize) return "CUDA GPU MemOps Summary (by Size)";
  if (report == kNvtx) return "NVTX Range Summary";
  if (report == kMemoryReportName) return "CUDA Memory Allocations by Owner";
  if (report == kStackReportName) return "CUDA API Calls by Calling Function";
  return "Per-Step Summary";
}

}  // namespace

std::vector<Step> ProfileSteps(const Profile& p) {
  // Profile::steps, then step ranges whose number Profile::steps does not have.
  std::vector<Step> steps = p.steps;
  std::set<uint32_t> numbers;
  for (const Step& s : steps) numbers.insert(s.number);
  for (const HostRange& r : p.ranges) {
    uint32_t number = 0;
    if (!IsStepRange(p, r) || !StepNumber(p.strings.Get(r.name), &number)) continue;
    if (numbers.insert(number).second) steps.push_back({r.start_ns, r.end_ns, number, r.tid});
  }
  return steps;
}

const std::vector<std::string_view>& StatsReportNames() {
  static const std::vector<std::string_view> kNames = {kApi, kKern, kMemTime, kMemSize, kNvtx};
  return kNames;
}

SampleSummary SummarizeSamples(std::vector<uint64_t>* samples) {
  SampleSummary s;
  std::vector<uint64_t>& v = *samples;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.count = v.size();
  for (uint64_t x : v) s.total += x;
  s.min = v.front();
  s.max = v.back();
  s.avg = static_cast<double>(s.total) / static_cast<double>(s.count);
  const size_t mid = v.size() / 2;
  // Even count: the mean of the two middle values (computed without overflowing).
  s.median = v.size() % 2 == 1
                 ? static_cast<double>(v[mid])
                 : static_cast<double>(v[mid - 1]) +
                       static_cast<double>(v[mid] - v[mid - 1]) / 2.0;
  if (v.size() > 1) {
    double sq = 0;
    for (uint64_t x : v) {
      const double d = static_cast<double>(x) - s.avg;
      sq += d * d;
    }
    s.stddev = std::sqrt(sq / static_cast<double>(v.size() - 1));
  }
  return s;
}

std::string MemcpyOperationName(CopyKind kind) {
  const char* label = "Unknown";
  switch (kind) {
    case CopyKind::kHtoD: label = "Host-to-Device"; break;
    case CopyKind::kDtoH: label = "Device-to-Host"; break;
    case CopyKind::kHtoA: label = "Host-to-Array"; break;
    case CopyKind::kAtoH: label = "Array-to-Host"; break;
    case CopyKind::kAtoA: label = "Array-to-Array"; break;
    case CopyKind::kAtoD: label = "Array-to-Device"; break;
    case CopyKind::kDtoA: label = "Device-to-Array"; break;
    case CopyKind::kDtoD: label = "Device-to-Device"; break;
    case CopyKind::kHtoH: label = "Host-to-Host"; break;
    case CopyKind::kPtoP: label = "Peer-to-Peer"; break;
    case CopyKind::kUnknown: break;
  }
  return std::string("[CUDA memcpy ") + label + "]";
}

void StatsCollector::Add(const Profile& p) {
  NameCache names(p);
  for (const ApiCall& c : p.api_calls) {
    api_[names.ApiCallName(c)].push_back(Duration(c.start_ns, c.end_ns));
  }
  for (const Kernel& k : p.kernels) {
    kernels_[names.KernelName(k.name)].push_back(Duration(k.start_ns, k.end_ns));
  }
  for (const Memcpy& m : p.memcpys) {
    const std::string op = MemcpyOperationName(m.kind);
    mem_time_[op].push_back(Duration(m.start_ns, m.end_ns));
    mem_bytes_[op].push_back(m.bytes);
  }
  for (const Memset& m : p.memsets) {
    const std::string op(kMemsetOperationName);
    mem_time_[op].push_back(Duration(m.start_ns, m.end_ns));
    mem_bytes_[op].push_back(m.bytes);
  }
  AddMemoryOwners(p, &memory_);
  if (!p.api_stacks.empty()) {
    const SymbolizedStacks sym = SymbolizeStacks(p);
    const ApiStackIndex index(p);
    for (const ApiCall& c : p.api_calls) {
      const uint32_t stack = index.StackOf(c.correlation_id);
      if (stack == kNoStack || stack >= sym.top_user_function.size()) continue;
      std::string frame = sym.top_user_function[stack];
      if (frame.empty()) frame = "[no frame outside CUDA]";
      api_stack_[{names.ApiCallName(c), frame}].push_back(Duration(c.start_ns, c.end_ns));
    }
  }
  // A torch op range that is the only child of one of the same name (an op redispatching to
  // itself: aten::div_ inside aten::div_) is one op, as the table and torch.profiler count it.
  std::vector<bool> folded;
  if (!p.ranges.empty()) {
    KeyAveragesOptions fold;
    fold.folded_ranges = &folded;
    KeyAverages(p, fold);
  }
  for (size_t i = 0; i < p.ranges.size(); ++i) {
    if (i < folded.size() && folded[i]) continue;
    const HostRange& r = p.ranges[i];
    const std::string style = (r.flags & kRangeStartEnd) ? "StartEnd" : "PushPop";
    nvtx_[{RangeName(p, r), style}].push_back(Duration(r.start_ns, r.end_ns));
  }

  const std::vector<Step> steps = ProfileSteps(p);
  if (steps.empty()) return;
  std::vector<Interval> intervals;
  intervals.reserve(p.kernels.size() + p.memcpys.size() + p.memsets.size());
  for (const Kernel& k : p.kernels) intervals.emplace_back(k.start_ns, k.end_ns);
  for (const Memcpy& m : p.memcpys) intervals.emplace_back(m.start_ns, m.end_ns);
  for (const Memset& m : p.memsets) intervals.emplace_back(m.start_ns, m.end_ns);
  const std::vector<Interval> merged = MergeIntervals(std::move(intervals));
  std::vector<uint64_t> kernel_starts;
  kernel_starts.reserve(p.kernels.size());
  for (const Kernel& k : p.kernels) kernel_starts.push_back(k.start_ns);
  std::sort(kernel_starts.begin(), kernel_starts.end());
  for (const Step& s : steps) {
    StepRow row;
    row.pid = p.info.pid;
    row.number = s.number;
    row.start_ns = s.start_ns;
    row.wall_ns = Duration(s.start_ns, s.end_ns);
    row.gpu_busy_ns = row.wall_ns > 0 ? CoveredIn(merged, s.start_ns, s.end_ns) : 0;
    row.gpu_busy_percent = row.wall_ns > 0 ? 100.0 * static_cast<double>(row.gpu_busy_ns) /
                                                 static_cast<double>(row.wall_ns)
                                           : 0.0;
    row.kernels = static_cast<uint64_t>(
        std::lower_bound(kernel_starts.begin(), kernel_starts.end(), s.end_ns) -
        std::lower_bound(kernel_starts.begin(), kernel_starts.end(), s.start_ns));
    steps_.push_back(row);
  }
}

std::vector<StatsRow> StatsCollector::Rows(std::string_view report) const {
  if (report == kApi) return RowsOf(api_, true);
  if (report == kKern) return RowsOf(kernels_, true);
  if (report == kMemTime) return RowsOf(mem_time_, true);
  if (report == kMemSize) return RowsOf(mem_bytes_, false);
  if (report == kNvtx) {
    // Keyed by "style\0name" so that RowsOf can order and summarize them; split back after.
    std::map<std::string, std::vector<uint64_t>> flat;
    for (const auto& [key, values] : nvtx_) flat[key.first + '\0' + key.second] = values;
    std::vector<StatsRow> rows = RowsOf(flat, true);
    for (StatsRow& r : rows) {
      const size_t zero = r.name.rfind('\0');
      r.style = r.name.substr(zero + 1);
      r.name.resize(zero);
    }
    return rows;
  }
  throw std::invalid_argument("unknown stats report " + std::string(report));
}

std::vector<StepRow> StatsCollector::Steps() const {
  std::vector<StepRow> rows = steps_;
  std::stable_sort(rows.begin(), rows.end(), [](const StepRow& a, const StepRow& b) {
    if (a.pid != b.pid) return a.pid < b.pid;
    if (a.number != b.number) return a.number < b.number;
    return a.start_ns < b.start_ns;
  });
  return rows;
}

StatsTable StatsCollector::Table(std::string_view report) const {
  StatsTable t;
  t.name = std::string(report);
  t.title = Title(report);
  using C = StatsColumn;
  if (report == kStepReportName) {
    t.columns = {{"Step", C::kInt},          {"PID", C::kInt},
                 {"Wall Time (ns)", C::kInt}, {"GPU Busy (ns)", C::kInt},
                 {"GPU Busy (%)", C::kFixed}, {"Kernels", C::kInt}};
    for (const StepRow& s : Steps()) {
      t.rows.push_back({uint64_t{s.number}, uint64_t{s.pid}, s.wall_ns, s.gpu_busy_ns,
                        s.gpu_busy_percent, s.kernels});
    }
    return t;
  }
  if (report == kStackReportName) {
    // Ordered by total time, then API name and frame (the map's order, kept by stable_sort).
    t.columns = {{"Time (%)", C::kFixed}, {"Total Time (ns)", C::kInt}, {"Num Calls", C::kInt},
                 {"Avg (ns)", C::kFixed}, {"Name", C::kText},           {"Caller", C::kText}};
    struct Row {
      const std::pair<std::string, std::string>* key;
      SampleSummary s;
    };
    std::vector<Row> rows;
    uint64_t all = 0;
    for (const auto& [key, samples] : api_stack_) {
      std::vector<uint64_t> copy = samples;
      rows.push_back({&key, SummarizeSamples(&copy)});
      all += rows.back().s.total;
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& a, const Row& b) { return a.s.total > b.s.total; });
    for (const Row& r : rows) {
      const double percent = all == 0 ? 0.0 : 100.0 * static_cast<double>(r.s.total) / all;
      t.rows.push_back({percent, r.s.total, r.s.count, r.s.avg, r.key->first, r.key->second});
    }
    return t;
  }
  if (report == kMemoryReportName) {
    // Ordered by bytes allocated, then name; MB = 1e6 bytes as cuda_gpu_mem_size_sum.
    const C mb{"", C::kFixed, 3, 6};
    auto col = [&](const char* h) { C c = mb; c.header = h; return c; };
    t.columns = {col("Allocated (MB)"), {"Allocs", C::kInt}, {"Frees", C::kInt},
                 {"Net (MB)", C::kText}, col("Largest (MB)"), col("Peak In Use (MB)"),
                 {"Owner", C::kText}};
    std::vector<std::pair<std::string, MemoryOwnerRow>> owners(memory_.begin(), memory_.end());
    std::stable_sort(owners.begin(), owners.end(), [](const auto& a, const auto& b) {
      return a.second.allocated_bytes > b.second.allocated_bytes;
    });
    for (const auto& [owner, r] : owners) {
      t.rows.push_back({static_cast<double>(r.allocated_bytes) / 1e6, r.allocations, r.frees,
                        FormatFixed(static_cast<double>(r.net_bytes) / 1e6, 3),
                        static_cast<double>(r.largest_bytes) / 1e6,
                        static_cast<double>(r.peak_in_use_bytes) / 1e6, owner});
    }
    return t;
  }
  const std::vector<StatsRow> rows = Rows(report);  // throws for an unknown name
  if (report == kMemSize) {
    // MB = 1e6 bytes; 3 decimals in the table as nsys, 6 (= bytes) in CSV.
    const C mb{"", C::kFixed, 3, 6};
    auto col = [&](const char* h) { C c = mb; c.header = h; return c; };
    t.columns = {col("Total (MB)"), {"Count", C::kInt}, col("Avg (MB)"), col("Med (MB)"),
                 col("Min (MB)"),   col("Max (MB)"),    col("StdDev (MB)"),
                 {"Operation", C::kText}};
    for (const StatsRow& r : rows) {
      t.rows.push_back({static_cast<double>(r.s.total) / 1e6, r.s.count, r.s.avg / 1e6,
                        r.s.median / 1e6, static_cast<double>(r.s.min) / 1e6,
                        static_cast<double>(r.s.max) / 1e6, r.s.stddev / 1e6, r.name});
    }
    return t;
  }
  const char* count = report == kApi ? "Num Calls" : report == kMemTime ? "Count" : "Instances";
  t.columns = {{"Time (%)", C::kFixed},   {"Total Time (ns)", C::kInt}, {count, C::kInt},
               {"Avg (ns)", C::kFixed},   {"Med (ns)", C::kFixed},      {"Min (ns)", C::kInt},
               {"Max (ns)", C::kInt},     {"StdDev (ns)", C::kFixed}};
  if (report == kNvtx) t.columns.push_back({"Style", C::kText});
  t.columns.push_back({report == kMemTime ? "Operation" : report == kNvtx ? "Range" : "Name",
                       C::kText});
  for (const StatsRow& r : rows) {
    std::vector<StatsCell> cells = {r.percent, r.s.total, r.s.count, r.s.avg,
                                    r.s.median, r.s.min,  r.s.max,   r.s.stddev};
    if (report == kNvtx) cells.emplace_back(r.style);
    cells.emplace_back(r.name);
    t.rows.push_back(std::move(cells));
  }
  return t;
}

}  // namespace gprof
