// --cpu-sampling: backend choice and the hand-over of samples to profile builds (cpu_sampler.h).
#include "collector/host/cpu_sampler.h"

#include <sys/mman.h>

#include <atomic>
#include <string>

#include "collector/host/cpu_sample_queue.h"
#include "support/log.h"

namespace gprof::collector {
bool CpuSampleQueue::Init(size_t capacity) noexcept {
  if (slots_ != nullptr) return true;
  void* mem = ::mmap(nullptr, capacity * sizeof(Slot), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) return false;
  auto* slots = static_cast<Slot*>(mem);  // zero pages: each seq is set below as it is touched
  for (size_t i = 0; i < capacity; ++i) slots[i].seq.store(i, std::memory_order_relaxed);
  mask_ = capacity - 1;
  slots_ = slots;
  return true;
}

namespace cpu_sampling_internal {

CpuSampleQueue& Queue() {
  static auto* queue = new CpuSampleQueue;  // leaked on purpose: signal handlers may still push
  return *queue;
}

}  // namespace cpu_sampling_internal

namespace {

using namespace cpu_sampling_internal;

// 65536 slots of 288 bytes (18 MiB reserved, touched as they fill): 65 s of one busy thread at
// 1 kHz between two builds; whole runs build a segment every GPROF_SEGMENT_SECONDS.
constexpr size_t kQueueSlots = size_t{1} << 16;

std::atomic<uint32_t> g_backend{kCpuSamplesOff};
uint32_t g_backend_used = kCpuSamplesOff;  // what Start chose, kept after Stop for the last build
uint32_t g_hz = 0;
uint64_t g_dropped_reported = 0;  // TakeCpuSamples's own (builds are serialized)

}  // namespace

void StartCpuSampling(const Config& config) noexcept {
  if (config.cpu_sampling_hz == 0) return;
  if (!Queue().Init(kQueueSlots)) {
    log::Warn("--cpu-sampling: cannot reserve the sample queue; no CPU samples in this profile");
    return;
  }
  g_hz = config.cpu_sampling_hz;
  std::string why;
  if (config.cpu_sampling_backend != CpuSamplingBackend::kTimer) {
    if (StartPerfSampler(config.cpu_sampling_hz, &why)) {
      g_backend_used = kCpuSamplesPerf;
      g_backend.store(kCpuSamplesPerf, std::memory_order_release);
      log::Debug("--cpu-sampling: perf_event_open at " + std::to_string(g_hz) + " Hz");
      return;
    }
    if (config.cpu_sampling_backend == CpuSamplingBackend::kPerf) {
      log::Warn("--cpu-sampling: perf_event_open refused (" + why +
                "); no CPU samples (GPROF_CPU_SAMPLING_BACKEND=perf)");
      return;
    }
    log::Info("--cpu-sampling: perf_event_open refused (" + why + "); using the timer signal");
  }
  if (StartTimerSampler(config.cpu_sampling_hz, &why)) {
    g_backend_used = kCpuSamplesTimer;
    g_backend.store(kCpuSamplesTimer, std::memory_order_release);
    return;
  }
  log::Warn("--cpu-sampling: the timer signal cannot be used (" + why +
            "); no CPU samples in this profile");
}

void StopCpuSampling() noexcept {
  switch (g_backend.exchange(kCpuSamplesOff, std::memory_order_acq_rel)) {
    case kCpuSamplesPerf: StopPerfSampler(); break;
    case kCpuSamplesTimer: StopTimerSampler(); break;
    default: break;
  }
}

void TakeCpuSamples(Profile* profile, const StackInterner& intern) {
  if (g_hz == 0) return;
  CpuSampleCounters& c = profile->cpu_sample_counters;
  c.hz = g_hz;
  c.backend = g_backend_used;
  c.taken += Queue().Drain([&](uint64_t time_ns, uint32_t tid, uint64_t cpu_ns,
                               const uint64_t* pcs, uint32_t depth) {
    profile->cpu_samples.push_back(CpuSample{time_ns, tid, intern(pcs, depth), cpu_ns});
  });
  const uint64_t dropped = Queue().dropped();
  c.dropped += dropped - g_dropped_reported;
  g_dropped_reported = dropped;
}

}  // namespace gprof::collector
