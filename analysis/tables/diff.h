// Diff: compares two profiles (before / after an optimization) for `gprof-run diff A B`
// (launcher process only). Pure: profiles in, rows and text out; no file access.
//
// Rows, one per (kind, name), named as the table (KeyAverages) names them:
//   kernel  GPU work: kernels by demangled name, copies and memsets by their table names
//           ("Memcpy HtoD (Pageable -> Device)", "Memset (Device)")
//   op      host operations: torch operators (kRangeCpuOp ranges) and CUDA API calls
//   range   NVTX ranges, torch annotations (record_function), and steps ("ProfilerStep*")
// Each instance's time is its duration (a range's or call's CPU total, a kernel's GPU time).
// Instances are counted as the table counts them: a push/pop range that is the only child of a
// range of the same name on its thread is folded into it (torch's _remove_dup_nodes), so counts
// and totals of host rows equal KeyAverages' count and CPU total.
//
// Per row: count, total and median in A and in B, delta = total B - total A, ratio = B / A
// (none when A's total is 0). Rows are ordered by kind (kernel, op, range), then by |delta|
// descending, then by name. A row that exists in one profile only has count 0 on the other side.
//
// Several profiles may form one side (the processes of an output directory, or the windows of
// one process, as `gprof-run stats` pools them): their samples are pooled by name.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/profile.h"

namespace gprof {

// A row with fewer instances than this in A or in B (counting only the sides it appears in) is
// marked as noise: with so few samples a single slow instance (a cold start, a page fault, a
// clock tick of preemption) moves the total and the median, so its change says little. Five is
// where one outlier can no longer be the median and contributes at most a fifth of the count.
inline constexpr uint64_t kDiffNoiseMinInstances = 5;

enum class DiffKind : uint8_t { kKernel = 0, kOp = 1, kRange = 2 };
// "kernel", "op", "range" (the values of --by).
std::string_view DiffKindName(DiffKind kind);

struct DiffSide {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  double median_ns = 0;  // the middle sample; the mean of the two middle ones for an even count
};

struct DiffRow {
  DiffKind kind = DiffKind::kKernel;
  std::string name;
  DiffSide a, b;
  bool noisy = false;  // see kDiffNoiseMinInstances

  int64_t DeltaNs() const {
    return static_cast<int64_t>(b.total_ns) - static_cast<int64_t>(a.total_ns);
  }
  std::optional<double> Ratio() const;  // b.total / a.total; none when a.total is 0
  bool OnlyInA() const { return b.count == 0; }
  bool OnlyInB() const { return a.count == 0; }
};

// Whole-profile numbers of one side.
struct DiffTotals {
  int profiles = 0;
  uint64_t wall_ns = 0;      // union of the profiles' [start, end) collection intervals
  uint64_t gpu_busy_ns = 0;  // union of all kernel, memcpy and memset intervals of all devices
  uint64_t kernels = 0;      // kernel executions
  uint64_t self_cpu_ns = 0;  // the table's "Self CPU time total", summed over the profiles
};

// The samples and totals of one side.
class DiffInput {
 public:
  void Add(const Profile& profile);

  DiffTotals Totals() const;
  const std::set<std::string>& findings() const { return findings_; }
  // (kind, name) -> instance durations in ns, in no particular order.
  const std::map<std::pair<DiffKind, std::string>, std::vector<uint64_t>>& samples() const {
    return samples_;
  }

 private:
  std::map<std::pair<DiffKind, std::string>, std::vector<uint64_t>> samples_;
  std::vector<std::pair<uint64_t, uint64_t>> wall_, gpu_;
  std::set<std::string> findings_;  // ids of FindFindings over the profiles added
  int profiles_ = 0;
  uint64_t kernels_ = 0;
  uint64_t self_cpu_ns_ = 0;
};

inline constexpr DiffKind kDiffKinds[] = {DiffKind::kKernel, DiffKind::kOp, DiffKind::kRange};

struct ProfileDiff {
  std::string label_a, label_b;  // what A and B are (paths), for the outputs; set by the caller
  DiffTotals a, b;
  std::vector<DiffKind> kinds{std::begin(kDiffKinds), std::end(kDiffKinds)};  // sections shown
  std::vector<DiffRow> rows;
  // Ids of the findings (findings.h) that B has and A has not, and the other way round, in id
  // order. A finding counts for a side when any of its profiles has it.
  std::vector<std::string> findings_appeared, findings_disappeared;
};

ProfileDiff DiffProfiles(const DiffInput& a, const DiffInput& b);
ProfileDiff DiffProfiles(const Profile& a, const Profile& b);

// Keeps the rows (and the table section) of one kind only: `--by kernel|op|range`.
void KeepOnlyKind(ProfileDiff* diff, DiffKind kind);

// Outputs. Table: fixed-width text, times as the table prints them (format.h FormatDuration),
// a totals block, then one section per kind present in `diff.rows`. CSV: one header line and
// one line per row, times in ns (medians with 1 decimal), ratio empty when there is none. JSON:
// {"a": {...}, "b": {...}, "totals": {...}, "rows": [...]}, times in ns, ratio null when none.
std::string FormatDiffTable(const ProfileDiff& diff);
std::string FormatDiffCsv(const ProfileDiff& diff);
std::string FormatDiffJson(const ProfileDiff& diff);

}  // namespace gprof
