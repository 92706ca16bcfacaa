// libFuzzer target: the .torchmem reader (analysis/samples/torch_memory.h ParseTorchMemory) and, for
// every file it accepts, its attachment to a profile and the table's memory columns. The file is
// written inside the profiled program, so anyone can hand gprof-run a hostile one. Invariants,
// not only "no crash": every attached event lies in the profile's window and in time order, and
// the Self CUDA Mem column sums to the blocks' net bytes (allocated minus freed), as torch's does.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "analysis/samples/torch_memory.h"
#include "analysis/tables/key_averages.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  gprof::TorchMemoryFile f;
  std::string error;
  if (!gprof::ParseTorchMemory(text, &f, &error)) {
    GPROF_FUZZ_CHECK(!error.empty());
    return 0;
  }
  // A window over the middle of the file's times, and two nested ranges on thread 1 plus one on
  // thread 2 inside it, so that events land inside, beside and outside ops.
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const gprof::TorchMemoryEntry& e : f.entries) {
    lo = std::min(lo, e.time_us * 1000);
    hi = std::max(hi, e.time_us * 1000 + 1000);
  }
  gprof::Profile p;
  p.info.pid = f.pid;
  if (lo < hi) {
    const uint64_t span = hi - lo;
    p.info.start_ns = lo + span / 4;
    p.info.end_ns = hi - span / 4;
    const gprof::StringId outer = p.strings.Intern("outer"), inner = p.strings.Intern("inner");
    p.ranges.push_back({lo, lo + span / 2, outer, 1, 0, 0, 0});
    p.ranges.push_back({lo + span / 8, lo + span / 3, inner, 1, 0, 0, 0});
    p.ranges.push_back({lo + span / 3, hi, inner, 2, 0, 0, 0});
  }
  const gprof::TorchMemoryAttached a = gprof::AttachTorchMemory(f, &p);
  GPROF_FUZZ_CHECK(a.events == p.torch_memory.size());
  int64_t net = 0;
  uint64_t last = 0;
  for (const gprof::TorchMemoryEvent& e : p.torch_memory) {
    GPROF_FUZZ_CHECK(e.ts_ns >= p.info.start_ns && e.ts_ns <= p.info.end_ns && e.ts_ns >= last);
    last = e.ts_ns;
    const int64_t b = static_cast<int64_t>(e.bytes);
    if (e.action == gprof::TorchMemAction::kAlloc) net += b;
    if (e.action == gprof::TorchMemAction::kFree) net -= b;
  }
  int64_t self = 0;
  for (const gprof::EventStats& e : gprof::KeyAverages(p)) self += e.self_cuda_mem;
  GPROF_FUZZ_CHECK(self == net);
  (void)gprof::TorchMemoryNote(a, "fuzz.torchmem");
  return 0;
}
