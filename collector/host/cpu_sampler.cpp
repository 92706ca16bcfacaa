// --cpu-sampling: backend choice and the hand-over of samples to profile builds (cpu_sampler.h).
#include "collector/host/cpu_sampler.h"

#include <dlfcn.h>

#include <atomic>
#include <string>

#include "collector/host/cpu_sample_queue.h"
#include "collector/host/cpu_sampler_process.h"
#include "support/log.h"

namespace gprof::collector {
namespace cpu_sampling_internal {

CpuSampleQueue& Queue() {
  static auto* queue = new CpuSampleQueue;  // leaked on purpose: signal handlers may still push
  return *queue;
}

}  // namespace cpu_sampling_internal

namespace {

using namespace cpu_sampling_internal;

// gprof-cpu-sampler beside the library this code is in (libgprof_inject.so), "" if unknown.
std::string SamplerExePath() {
  Dl_info self{};
  if (::dladdr(reinterpret_cast<void*>(&StartCpuSampling), &self) == 0 ||
      self.dli_fname == nullptr) {
    return "";
  }
  std::string path = self.dli_fname;
  const size_t slash = path.rfind('/');
  return (slash == std::string::npos ? std::string(".") : path.substr(0, slash)) + "/" +
         kCpuSamplerExe;
}

std::atomic<uint32_t> g_backend{kCpuSamplesOff};
uint32_t g_backend_used = kCpuSamplesOff;  // what Start chose, kept after Stop for the last build
uint32_t g_hz = 0;
uint64_t g_dropped_reported = 0;  // TakeCpuSamples's own (builds are serialized)

}  // namespace

void StartCpuSampling(const Config& config) noexcept {
  if (config.cpu_sampling_hz == 0) return;
  if (!Queue().Init(kCpuSampleQueueSlots)) {
    log::Warn("--cpu-sampling: cannot reserve the sample queue; no CPU samples in this profile");
    return;
  }
  g_hz = config.cpu_sampling_hz;
  const CpuSamplingBackend asked = config.cpu_sampling_backend;
  std::string why;
  if (asked == CpuSamplingBackend::kAuto || asked == CpuSamplingBackend::kProcess) {
    if (StartProcessSampler(config.cpu_sampling_hz, config.cpu_sampler_process_refused,
                            SamplerExePath(), &why)) {
      g_backend_used = kCpuSamplesPerfProcess;
      g_backend.store(kCpuSamplesPerfProcess, std::memory_order_release);
      log::Debug("--cpu-sampling: perf_event_open from a sampler process at " +
                 std::to_string(g_hz) + " Hz");
      return;
    }
    if (asked == CpuSamplingBackend::kProcess) {
      log::Warn("--cpu-sampling: the sampler process cannot sample this program (" + why +
                "); no CPU samples (GPROF_CPU_SAMPLING_BACKEND=process)");
      return;
    }
    log::Info("--cpu-sampling: the sampler process cannot sample this program (" + why +
              "); sampling in process");
    why.clear();
  }
  if (asked != CpuSamplingBackend::kTimer) {
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
    case kCpuSamplesPerfProcess: StopProcessSampler(); break;
    case kCpuSamplesPerf: StopPerfSampler(); break;
    case kCpuSamplesTimer: StopTimerSampler(); break;
    default: break;
  }
}

void ForgetCpuSamplingInForkChild() noexcept {
  if (g_backend.load(std::memory_order_relaxed) == kCpuSamplesPerfProcess) {
    ForgetProcessSamplerInForkChild();
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
