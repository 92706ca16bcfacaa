// KeyAverages: the per-name statistics behind the table, torch's key_averages() (launcher process
// only). Semantics (REFERENCE.md §2 and docs in key_averages.cpp):
//   host events on one thread (push/pop NVTX ranges, steps, API calls) nest by time;
//   Self CPU = duration minus direct children, CPU total = duration;
//   an API call's CUDA total = GPU time of the records with its correlation id;
//   a range's CUDA total = GPU time launched by API calls that started inside it on its thread
//   (by correlation), a step's = GPU time launched during it from any thread (by step time);
//   a range's Self CUDA = its CUDA total minus that of the ranges nested in it (torch's rule: a
//   kernel's time is the Self CUDA of the innermost op that launched it); a step's is 0;
//   the rules are in gpu_attribution.h, shared with the trace's gpu_user_annotation spans;
//   GPU rows (kernels, memcpys, memsets): Self CUDA = CUDA total = duration, no CPU time;
//   a range that is the only child of a range of the same name is folded into it (not counted,
//   its children become the parent's), as torch's EventList._remove_dup_nodes does;
//   memory (torch's profile_memory columns, from CUPTI's allocation and free records): each
//   record belongs to the API call with its correlation id (a free counts its allocation's bytes
//   negative); CUDA Mem = device, managed and array memory, CPU Mem = pinned host memory. A row's
//   total is what the calls in its subtree allocated minus what they freed; its Self is the total
//   minus that of the ranges nested in it, as torch's self_*_memory_usage is. API calls are
//   transparent to Self: the innermost enclosing non-step range owns their bytes (torch owns an
//   allocation by the innermost op, and cudaMalloc is no op there); a call outside every range
//   owns its own. So each column's Self sums to the net bytes over the rows.
//   PyTorch's caching allocator events (Profile::torch_memory, when attached) count the same
//   way by their time on their thread; outside every range they make torch's "[memory]" row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/profile.h"

namespace gprof {

struct RangeStacks;  // op_stacks.h

// What a row is: GPU work (kernel, memcpy, memset), an operator (a CUDA API call, a torch cpu_op),
// a range (an NVTX range, a record_function scope, a step), or a synchronization record.
enum class RowKind : uint8_t { kDevice, kOp, kRange, kSync };

struct EventStats {
  std::string name;
  std::string input_shapes;  // grouped by input shape only: torch's "[[2, 3], []]", else ""
  // Grouped by Python source location only (op_stacks.h): torch's stack entries, innermost
  // first; empty for rows without one (as torch's rows without a stack).
  std::vector<std::string> stack;
  RowKind kind = RowKind::kRange;
  bool device = false;       // kind == kDevice: counts in "Self CUDA time total"
  // With KeyAveragesOptions::instances: each counted instance's total (CPU total for host rows,
  // duration for GPU rows), in the order counted. Empty otherwise.
  std::vector<uint64_t> instances_ns;
  uint64_t count = 0;
  uint64_t self_cpu_ns = 0;
  uint64_t cpu_total_ns = 0;
  uint64_t self_cuda_ns = 0;
  uint64_t cuda_total_ns = 0;
  // Bytes allocated minus freed (see the file comment): CPU = pinned host, CUDA = device.
  int64_t cpu_mem = 0;
  int64_t self_cpu_mem = 0;
  int64_t cuda_mem = 0;
  int64_t self_cuda_mem = 0;
};

// torch's row for memory events outside every op (its key_averages' "[memory]").
inline constexpr char kTorchMemoryRow[] = "[memory]";

// Whether the profile holds allocation or free records (torch shows the memory columns only
// then, and the CUDA ones only when some row has device memory).
bool HasMemoryRecords(const Profile& profile);

// One entry per distinct name — per (name, input shapes) with `group_by_input_shape`, as torch's
// key_averages(group_by_input_shape=True); per (name, shapes, Python source location) with
// `stacks`, as key_averages(group_by_stack_n=N): each range's key is stacks->of_range's (the
// rows' times are summed exactly as without it, only split) — ordered by name, then shapes,
// then source location. Steps
// (Profile::steps, kRangeStep ranges and ranges named ProfilerStep#N) are grouped under
// "ProfilerStep*".
struct KeyAveragesOptions {
  bool group_by_input_shape = false;
  bool instances = false;  // fill EventStats::instances_ns (gprof-run diff's medians)
  const RangeStacks* stacks = nullptr;  // StacksOfRanges of the same profile, or none
  // When set: sized to Profile::ranges, true for each range folded into its parent of the same
  // name (torch's _remove_dup_nodes, above), which no row counts (stats' nvtx_sum skips them too).
  std::vector<bool>* folded_ranges = nullptr;
};
std::vector<EventStats> KeyAverages(const Profile& profile, const KeyAveragesOptions& options);
inline std::vector<EventStats> KeyAverages(const Profile& profile,
                                           bool group_by_input_shape = false) {
  return KeyAverages(profile, KeyAveragesOptions{group_by_input_shape, false});
}

// True when some range carries input shapes (recorded with --record-shapes).
bool HasInputShapes(const Profile& profile);

}  // namespace gprof
