// PyTorch's CUDA caching allocator, as the Python hook saw it (issue 19 part 2; docs/PYTORCH.md
// "Memory"): the hook's <program>.<pid>.torchmem (python/gprof_run_hook/_gprof_run_memory.py,
// written at the program's exit next to its dump, from torch.cuda.memory._snapshot()'s trace
// entries) read here, and attached to the dump's Profile as Profile::torch_memory, which the
// table's memory columns read (key_averages.h). Launcher process only.
//
// What is exact and what is attributed:
// - Exact: which blocks were allocated and freed, on which device, in which order, and (on a
//   thread the hook tagged with _set_memory_metadata) by which thread.
// - Sizes: torch records the size asked for; torch.profiler's columns count the block, which the
//   allocator rounds up to 512 bytes (kTorchBlockRounding; its default round_size). We round the
//   same way. Where the allocator hands out a larger block it did not split (or rounds by
//   PYTORCH_CUDA_ALLOC_CONF's roundup_power2_divisions), torch.profiler counts more than we do.
// - Times: torch keeps microseconds. An event is placed in the middle of its microsecond
//   (+500 ns), so one within half a microsecond of an op's start or end can land in the op
//   beside it.
// - Threads: an event without our tag (a thread the hook never saw start: torch's autograd
//   device threads, threads started before CUDA was initialized, or a program that sets its own
//   memory metadata) goes to the thread whose innermost range open at that time began last; with
//   no range open anywhere it is outside every op ("[memory]" in the table, as torch's).
//
// The file is untrusted input: every line and number is checked, and a file that fails is refused
// with one message saying where.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/profile.h"

namespace gprof {

inline constexpr char kTorchMemoryExtension[] = ".torchmem";
inline constexpr char kTorchMemoryFormat[] = "gprof-torchmem";
inline constexpr uint32_t kTorchMemoryVersion = 1;
inline constexpr uint64_t kTorchMemoryMaxFileBytes = uint64_t{4} << 30;
inline constexpr uint64_t kTorchBlockRounding = 512;  // c10's kMinBlockSize

enum class TorchMemEntryKind : uint8_t {
  kAlloc, kFreeRequested, kFreeCompleted, kSegmentAlloc, kSegmentFree, kSegmentMap,
  kSegmentUnmap, kOom,
};

struct TorchMemoryEntry {
  uint64_t addr = 0;
  uint64_t size = 0;    // as torch recorded it (the request, for blocks)
  uint64_t stream = 0;
  uint64_t time_us = 0; // CLOCK_REALTIME microseconds
  uint32_t tid = 0;     // the hook's tag; 0: untagged
  uint32_t device = 0;
  TorchMemEntryKind kind = TorchMemEntryKind::kAlloc;
};

struct TorchMemoryFile {
  uint32_t pid = 0;
  uint64_t max_entries = 0;   // torch's ring buffer per device: past it the oldest are lost
  uint64_t started_ns = 0;    // when recording started (CUDA initialization)
  std::vector<TorchMemoryEntry> entries;
};

// Parses a whole file's text: false, with `error` saying what and where ("line 12: ..."), for
// anything but a complete version-1 file (its `end` line last, with the right count).
bool ParseTorchMemory(std::string_view text, TorchMemoryFile* out, std::string* error);
// Reads and parses `path`. `error` names the file.
bool ReadTorchMemory(const std::string& path, TorchMemoryFile* out, std::string* error);

// The block bytes torch.profiler counts for a request of `size` (see the file comment).
uint64_t TorchBlockBytes(uint64_t size);

struct TorchMemoryAttached {
  uint64_t events = 0;        // put in the profile (allocs, frees, segment allocs and frees)
  uint64_t by_time = 0;       // of them: untagged, given a thread by time
  uint64_t outside_ops = 0;   // of them: with no range open anywhere at their time
  uint64_t oom = 0;           // out-of-memory entries in the window
  bool history_full = false;  // a device's history reached max_entries: the oldest were lost
};

// Puts the file's events inside the profile's collection window (info.start_ns..end_ns) into
// `p->torch_memory`, by time, with block sizes and threads as the file comment says. Frees take
// their block's size from the allocation they end when it is in the file.
TorchMemoryAttached AttachTorchMemory(const TorchMemoryFile& file, Profile* p);

// One line for stderr about what was attached ("" when nothing was), naming `path`.
std::string TorchMemoryNote(const TorchMemoryAttached& a, const std::string& path);

}  // namespace gprof
