// KeyAverages (see key_averages.h).
//
// Start/end ranges (kRangeStartEnd) may begin on one thread and end on another, so they are not
// part of any thread's push/pop stack: they never become a parent or a child, their CPU total is
// their duration and their Self CPU is 0 (the thread time inside them is already owned by the
// events that ran on the threads; counting it again would make "Self CPU time total" exceed the
// real CPU time).
// Steps are the exception: a start/end ProfilerStep#N range (gprof-run's Python hook makes them
// from optimizer.step(), on the thread that steps) is a step on its starting thread's tree, as
// Step records and the program's own ProfilerStep scopes are: it encloses that thread's ops, and
// its Self CPU is the time no op of that thread covered (the Python between ops), as torch's
// ProfilerStep#N rows have it. So the steps' CPU total never exceeds "Self CPU time total": the
// ProfilerStep* row stays within 100%.
// CUDA totals of ranges and steps (push/pop and start/end alike) are not summed up the thread's
// nesting tree: they are the GPU time each one owns by gpu_attribution.h's rule (ranges: the
// launching call ran on the range's thread and started inside it; steps: the launching call
// started during the step, on any thread). The tree only carries an API call's CUDA total to the
// API calls it is nested in (a runtime call owns the work of its nested driver call).
// Synchronization records are waits that the synchronizing API call already owns: CPU total =
// wait time, Self CPU 0, no CUDA time.
// PyTorch's caching allocator events (Profile::torch_memory, torch_memory.h) are points on their
// thread's tree: an API call's bytes rule applies (the innermost enclosing non-step range owns
// them); one outside every range is torch's "[memory]" row. When they are there, CUPTI's records
// of the allocator's own segments (the cudaMalloc/cudaFree at a segment's address) are left out
// of the columns, as torch.profiler never counts segments.
#include "analysis/tables/key_averages.h"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "analysis/attribution/correlation_index.h"
#include "analysis/attribution/gpu_attribution.h"
#include "analysis/attribution/names.h"
#include "analysis/tables/op_stacks.h"
#include "analysis/timeline/memory_timeline.h"

namespace gprof {
namespace {

constexpr std::string_view kStepGroup = "ProfilerStep*";

uint64_t Dur(uint64_t start, uint64_t end) { return end > start ? end - start : 0; }

struct Mem {
  int64_t cpu = 0;
  int64_t cuda = 0;
  Mem& operator+=(const Mem& o) {
    cpu = AddBytes(cpu, o.cpu);
    cuda = AddBytes(cuda, o.cuda);
    return *this;
  }
};

struct HostNode {
  uint64_t start;
  uint64_t end;
  uint8_t order;  // steps (0) enclose ranges (1) enclose API calls (2) enclose torch memory
                  // events (3, points) at equal times
  uint32_t index;
  const std::string* name;
  int64_t parent = -1;
  uint64_t children_ns = 0;
  uint64_t cuda_ns = 0;      // ranges and steps: what they own (GpuAttribution)
  uint64_t nested_cuda_ns = 0;  // ranges: what the ranges nested in them own
  bool step = false;
  uint64_t launched_ns = 0;  // GPU time of the API calls in this subtree (API calls' CUDA total)
  Mem mem{};         // bytes allocated minus freed by the API calls in this subtree
  Mem nested_mem{};  // ranges: what the ranges nested in them hold (mem's)
};

// Memory bytes (allocated minus freed) of each API call by correlation id (memory_timeline.h
// resolves the frees' sizes), less the caching allocator's segments (see the file comment).
std::unordered_map<uint32_t, Mem> MemoryByCall(const Profile& p) {
  std::unordered_map<uint32_t, Mem> out;
  for (const MemoryEvent& e : MemoryTimeline(p)) {
    const MemoryOp& m = p.memory_ops[e.op];
    if (m.correlation_id == 0 || e.torch_segment) continue;
    Mem& mem = out[m.correlation_id];
    int64_t& bytes = IsDeviceMemory(m) ? mem.cuda : mem.cpu;
    bytes = AddBytes(bytes, e.delta);
  }
  return out;
}

}  // namespace

bool HasMemoryRecords(const Profile& p) {
  return !p.memory_ops.empty() || !p.torch_memory.empty();
}

bool HasInputShapes(const Profile& p) {
  for (const HostRange& r : p.ranges) {
    if (r.shapes != kNoString) return true;
  }
  return false;
}

std::vector<EventStats> KeyAverages(const Profile& p, const KeyAveragesOptions& options) {
  const bool group_by_input_shape = options.group_by_input_shape;
  // Keyed by name + '\0' + shapes (shapes "" unless grouping by them): name order, then shapes.
  std::map<std::string, EventStats, std::less<>> rows;
  std::string key;
  StringId shapes_of_next = kNoString;  // the shapes of the row add() is called for
  uint32_t stack_of_next = kNoStackKey;  // its source location (options.stacks->keys)
  const RangeStacks* stacks = options.stacks;
  const auto stack_key = [&](uint32_t range) {
    return stacks != nullptr && range < stacks->of_range.size() ? stacks->of_range[range]
                                                                : kNoStackKey;
  };
  const auto add = [&](RowKind kind, const std::string& name, uint64_t self_cpu, uint64_t cpu,
                       uint64_t self_cuda, uint64_t cuda, const Mem& mem = {},
                       const Mem& self_mem = {}) {
    const bool device = kind == RowKind::kDevice;
    const std::string_view shapes =
        group_by_input_shape ? p.strings.Get(shapes_of_next) : std::string_view();
    key.assign(name).push_back('\0');
    key.append(shapes);
    const bool has_stack = stacks != nullptr && stack_of_next < stacks->keys.size();
    if (has_stack) {
      for (const std::string& frame : stacks->keys[stack_of_next]) {
        key.append("\0", 1).append(frame);
      }
    }
    auto it = rows.find(key);
    if (it == rows.end()) {
      EventStats fresh{name, std::string(shapes), {}, kind, device, {}};
      if (has_stack) fresh.stack = stacks->keys[stack_of_next];
      it = rows.emplace(key, std::move(fresh)).first;
    }
    EventStats& e = it->second;
    e.count += 1;
    if (options.instances) e.instances_ns.push_back(device ? cuda : cpu);
    e.self_cpu_ns += self_cpu;
    e.cpu_total_ns += cpu;
    e.self_cuda_ns += self_cuda;
    e.cuda_total_ns += cuda;
    e.cpu_mem = AddBytes(e.cpu_mem, mem.cpu);
    e.cuda_mem = AddBytes(e.cuda_mem, mem.cuda);
    e.self_cpu_mem = AddBytes(e.self_cpu_mem, self_mem.cpu);
    e.self_cuda_mem = AddBytes(e.self_cuda_mem, self_mem.cuda);
  };

  const CorrelationIndex corr(p);
  const GpuAttribution owners(p, corr);
  const std::unordered_map<uint32_t, Mem> call_mem = MemoryByCall(p);
  NameCache names(p);

  // Names of host nodes live here so that HostNode stays small.
  std::vector<std::string> range_names(p.ranges.size());
  const std::string step_name(kStepGroup);

  std::unordered_map<uint32_t, std::vector<HostNode>> by_thread;
  for (uint32_t i = 0; i < p.steps.size(); ++i) {
    const Step& s = p.steps[i];
    HostNode n{s.start_ns, s.end_ns, 0, i, &step_name};
    n.cuda_ns = owners.StepGpuNs(i);
    n.step = true;
    by_thread[s.tid].push_back(n);
  }
  for (uint32_t i = 0; i < p.ranges.size(); ++i) {
    const HostRange& r = p.ranges[i];
    const bool step = IsStepRange(p, r);
    range_names[i] = step ? step_name : std::string(p.strings.Get(r.name));
    if ((r.flags & kRangeStartEnd) && !step) continue;
    // A start/end step encloses the ranges of equal times, as Step records do (order 0).
    HostNode n{r.start_ns, r.end_ns, static_cast<uint8_t>((r.flags & kRangeStartEnd) ? 0 : 1), i,
               &range_names[i]};
    n.cuda_ns = owners.RangeGpuNs(i);
    n.step = step;
    by_thread[r.tid].push_back(n);
  }
  for (uint32_t i = 0; i < p.api_calls.size(); ++i) {
    const ApiCall& c = p.api_calls[i];
    HostNode n{c.start_ns, c.end_ns, 2, i, &names.ApiCallName(c)};
    n.launched_ns = corr.GpuTimeNs(c.correlation_id);
    if (auto it = call_mem.find(c.correlation_id); it != call_mem.end()) n.mem = it->second;
    by_thread[c.tid].push_back(n);
  }
  const std::string memory_name(kTorchMemoryRow);
  for (uint32_t i = 0; i < p.torch_memory.size(); ++i) {
    const TorchMemoryEvent& t = p.torch_memory[i];
    if (t.action != TorchMemAction::kAlloc && t.action != TorchMemAction::kFree) continue;
    HostNode n{t.ts_ns, t.ts_ns, 3, i, &memory_name};
    const int64_t bytes = static_cast<int64_t>(t.bytes);
    n.mem.cuda = t.action == TorchMemAction::kAlloc ? bytes : -bytes;
    by_thread[t.tid].push_back(n);
  }
  Mem outside_mem;  // torch memory events outside every range: the "[memory]" row
  uint64_t outside_count = 0;

  if (options.folded_ranges != nullptr) options.folded_ranges->assign(p.ranges.size(), false);
  for (auto& [tid, nodes] : by_thread) {
    std::sort(nodes.begin(), nodes.end(), [](const HostNode& a, const HostNode& b) {
      return std::make_tuple(a.start, b.end, a.order, a.index) <
             std::make_tuple(b.start, a.end, b.order, b.index);
    });
    std::vector<size_t> stack;
    for (size_t i = 0; i < nodes.size(); ++i) {
      HostNode& n = nodes[i];
      while (!stack.empty() && nodes[stack.back()].end <= n.start) stack.pop_back();
      // A partial overlap (possible only between a step and a range) is not nesting: the event
      // becomes a child of the innermost open event that contains it, or a root. The time the
      // two share is not the step's own (its Self CPU): the hook's steps start and end inside
      // torch's Optimizer.step range.
      uint64_t shared = 0;
      while (!stack.empty() && nodes[stack.back()].end < n.end) {
        HostNode& up = nodes[stack.back()];
        if (up.step && !n.step && up.end > n.start) up.children_ns += up.end - n.start;
        if (n.step && !up.step && up.end > n.start) shared = std::max(shared, up.end - n.start);
        stack.pop_back();
      }
      n.children_ns += shared;
      if (!stack.empty()) {
        n.parent = static_cast<int64_t>(stack.back());
        nodes[stack.back()].children_ns += Dur(n.start, n.end);
      }
      stack.push_back(i);
    }
    const auto is_range = [&](const HostNode& n) { return n.order == 1 && !n.step; };
    // torch's EventList._remove_dup_nodes: a range that is the only child of a range of the same
    // name (an op redispatching to itself, e.g. aten::div_ inside aten::div_) is folded into its
    // parent: not counted, its children become the parent's. Parents come first in this order,
    // so chains fold all the way up, as torch's repeated passes do.
    std::vector<uint32_t> child_count(nodes.size(), 0);
    for (const HostNode& n : nodes) {  // memory points are no children (torch's are not events)
      if (n.parent >= 0 && n.order != 3) ++child_count[static_cast<size_t>(n.parent)];
    }
    std::vector<bool> folded(nodes.size(), false);
    for (size_t i = 0; i < nodes.size(); ++i) {
      HostNode& n = nodes[i];
      if (n.parent >= 0 && folded[static_cast<size_t>(n.parent)]) {
        n.parent = nodes[static_cast<size_t>(n.parent)].parent;
      }
      if (n.parent < 0 || !is_range(n)) continue;
      const size_t up = static_cast<size_t>(n.parent);
      if (is_range(nodes[up]) && child_count[up] == 1 && *nodes[up].name == *n.name) {
        folded[i] = true;
        nodes[up].children_ns = n.children_ns;
        child_count[up] = child_count[i];
      }
    }
    if (options.folded_ranges != nullptr) {
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (folded[i]) (*options.folded_ranges)[nodes[i].index] = true;
      }
    }
    // Children follow their parents in this order, so a reverse pass sees every subtree complete.
    for (size_t i = nodes.size(); i-- > 0;) {
      if (nodes[i].parent >= 0) {
        nodes[static_cast<size_t>(nodes[i].parent)].launched_ns += nodes[i].launched_ns;
        nodes[static_cast<size_t>(nodes[i].parent)].mem += nodes[i].mem;
      }
    }
    // Self CUDA: what a range owns minus what the ranges inside it own. Each non-step range
    // hands its total to the nearest enclosing non-step range (steps in between are skipped:
    // a step nested in a range owns by time, not by nesting).
    for (size_t i = 0; i < nodes.size(); ++i) {
      const HostNode& n = nodes[i];
      if (!is_range(n) || folded[i]) continue;
      int64_t up = n.parent;
      while (up >= 0 && !is_range(nodes[static_cast<size_t>(up)])) {
        up = nodes[static_cast<size_t>(up)].parent;
      }
      if (up >= 0) {
        nodes[static_cast<size_t>(up)].nested_cuda_ns += n.cuda_ns;
        nodes[static_cast<size_t>(up)].nested_mem += n.mem;
      }
    }
    // The non-step range enclosing each node, for an API call's memory Self (see the header).
    // (A plain reference: clang 14 cannot capture the structured binding itself.)
    const std::vector<HostNode>& tree = nodes;
    const auto in_range = [&](const HostNode& n) {
      for (int64_t up = n.parent; up >= 0; up = tree[static_cast<size_t>(up)].parent) {
        if (is_range(tree[static_cast<size_t>(up)])) return true;
      }
      return false;
    };
    for (size_t i = 0; i < nodes.size(); ++i) {
      const HostNode& n = nodes[i];
      if (folded[i]) continue;
      if (n.order == 3) {  // a point: its bytes are its owner's; only "[memory]" is a row
        if (!in_range(n) && (n.parent < 0 || nodes[static_cast<size_t>(n.parent)].order != 2)) {
          outside_mem += n.mem;
          ++outside_count;
        }
        continue;
      }
      const uint64_t d = Dur(n.start, n.end);
      const uint64_t self_cuda =
          is_range(n) && n.cuda_ns > n.nested_cuda_ns ? n.cuda_ns - n.nested_cuda_ns : 0;
      shapes_of_next = n.order == 1 ? p.ranges[n.index].shapes : kNoString;
      stack_of_next = n.order == 1 ? stack_key(n.index) : kNoStackKey;
      Mem self_mem;
      if (is_range(n)) {
        self_mem = {SubBytes(n.mem.cpu, n.nested_mem.cpu), SubBytes(n.mem.cuda, n.nested_mem.cuda)};
      } else if (n.order == 2 && !in_range(n)) {
        // Outside every range: the call owns what it and its nested calls allocated, less what
        // a nested call already owns (none do: calls nest only in calls outside ranges too, so
        // the outermost one owns the subtree).
        if (n.parent < 0 || nodes[static_cast<size_t>(n.parent)].order != 2) self_mem = n.mem;
      }
      add(n.order == 2 || (is_range(n) && (p.ranges[n.index].flags & kRangeCpuOp))
              ? RowKind::kOp
              : RowKind::kRange,
          *n.name, d > n.children_ns ? d - n.children_ns : 0, d, self_cuda,
          n.order == 2 ? n.launched_ns : n.cuda_ns, n.mem, self_mem);
    }
    shapes_of_next = kNoString;
    stack_of_next = kNoStackKey;
  }

  if (outside_count > 0) {
    // torch's "[memory]" row: one instance per event, no time.
    EventStats& e = rows.try_emplace(memory_name + '\0', EventStats{memory_name, "", {},
                                     RowKind::kOp, false, {}}).first->second;
    e.count += outside_count;
    if (options.instances) e.instances_ns.insert(e.instances_ns.end(), outside_count, 0);
    e.cuda_mem = AddBytes(e.cuda_mem, outside_mem.cuda);
    e.self_cuda_mem = AddBytes(e.self_cuda_mem, outside_mem.cuda);
  }

  // Start/end ranges: see the file comment.
  for (uint32_t i = 0; i < p.ranges.size(); ++i) {
    const HostRange& r = p.ranges[i];
    if (!(r.flags & kRangeStartEnd) || IsStepRange(p, r)) continue;  // steps: on the trees
    shapes_of_next = r.shapes;
    stack_of_next = stack_key(i);
    add((r.flags & kRangeCpuOp) && !IsStepRange(p, r) ? RowKind::kOp : RowKind::kRange,
        range_names[i], 0, Dur(r.start_ns, r.end_ns), 0, owners.RangeGpuNs(i));
  }
  shapes_of_next = kNoString;
  stack_of_next = kNoStackKey;

  for (const Sync& s : p.syncs) {
    add(RowKind::kSync, std::string(SyncName(s.kind)), 0, Dur(s.start_ns, s.end_ns), 0, 0);
  }
  for (const Kernel& k : p.kernels) {
    const uint64_t d = Dur(k.start_ns, k.end_ns);
    add(RowKind::kDevice, names.KernelName(k.name), 0, 0, d, d);
  }
  for (const Memcpy& m : p.memcpys) {
    const uint64_t d = Dur(m.start_ns, m.end_ns);
    add(RowKind::kDevice, MemcpyName(m), 0, 0, d, d);
  }
  for (const Memset& m : p.memsets) {
    const uint64_t d = Dur(m.start_ns, m.end_ns);
    add(RowKind::kDevice, MemsetName(m), 0, 0, d, d);
  }

  std::vector<EventStats> out;
  out.reserve(rows.size());
  for (auto& [name, e] : rows) out.push_back(std::move(e));
  return out;
}

}  // namespace gprof
