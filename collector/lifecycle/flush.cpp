// See flush.h. Rules: cold code; exceptions are caught at each entry point (a failed flush is
// logged, never thrown into the program).
#include "collector/lifecycle/flush.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstring>
#include <thread>
#include <type_traits>
#include <unordered_set>

#include "collector/control/control_server.h"
#include "collector/cupti/gpu_collector.h"
#include "collector/host/cpu_sampler.h"
#include "collector/host/host_collection.h"
#include "collector/host/profile_builder.h"
#include "collector/host/thread_buffer.h"
#include "collector/lifecycle/process_identity.h"
#include "collector/lifecycle/runtime.h"
#include "collector/lifecycle/runtime_state.h"
#include "collector/lifecycle/spill.h"
#include "collector/lifecycle/thread_cpu.h"
#include "collector/lifecycle/window_gpu.h"
#include "collector/windows/window_cut.h"
#include "collector/windows/window_thread.h"
#include "model/dump.h"
#include "model/gpu_checks.h"
#include "model/program_profiler_steps.h"
#include "support/clock.h"
#include "support/log.h"

namespace gprof::collector::lifecycle {
namespace {

std::atomic<int> g_flush_state{kFlushNone};  // read by the signal handler: must be lock-free
static_assert(std::atomic<int>::is_always_lock_free);
std::atomic<bool> g_signal_flush{false};
std::atomic<int64_t> g_signal_deadline_ns{0};  // steady clock; written before g_signal_flush
std::atomic<bool> g_gpu_abandoned{false};

bool GpuStarted() {
  return g_gpu_state.load(std::memory_order_acquire) == kGpuStarted && !g_gpu_abandoned.load();
}

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Builds the profile of what was recorded since the last reset. Caller holds flush_mutex.
void BuildProfile(Runtime& rt, Profile* profile, uint64_t end_ns) {
  profile->info = rt.info;
  profile->info.end_ns = end_ns;
  StampClockEnd(&profile->info);
  BuildHostProfile(profile, end_ns);  // host data first: no CUPTI call before it is built
  TakeThreadCpu(profile, /*consume=*/true);  // with a last round: the end of the run
  MarkLaunchCalls(profile, &HandedOverAt);
  if (g_gpu_state.load(std::memory_order_acquire) == kGpuStarted) {
    SetGpuInfo(rt.gpu, &profile->info);
    AddGpuApiNames(profile);  // the calls' names, should CUPTI not answer
    DrainGpuForExit(profile);  // exit: what finishes within a second, then whatever CUPTI has
    CheckGpuAgainstCalls(profile);
  } else if (!rt.config.cuda) {
    profile->info.gpu_status = "off: GPROF_CUDA=0";
  }
}

// One CUPTI drain on a helper thread, waited for until the signal's deadline (flush.h).
bool TryCuptiUntilDeadline(Profile* profile, bool forced, bool stop_activity) {
  struct Try {
    Profile gpu;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
  };
  auto* job = new Try;  // freed by whoever finishes last: leaked when the helper never returns
  std::thread helper;
  try {
    helper = std::thread([job, forced, stop_activity] {
      if (stop_activity) SetGpuActivityEnabled(false);
      DrainGpu(&job->gpu, forced);
      std::lock_guard<std::mutex> lock(job->mu);
      job->done = true;
      job->cv.notify_all();
    });
  } catch (...) {
    delete job;
    return false;
  }
  bool done = false;
  {
    std::unique_lock<std::mutex> lock(job->mu);
    done = job->cv.wait_for(lock, std::chrono::milliseconds(SignalWaitLeftMs()),
                            [&] { return job->done; });
  }
  if (!done) {
    helper.detach();  // still inside CUPTI; the process is about to die of the signal
    g_gpu_abandoned.store(true, std::memory_order_release);
    AbandonGpuCollection();
    log::Warn("CUPTI did not answer within " + std::to_string(kSignalGpuTryMs / 1000) +
              " s of the signal (a lock held by the interrupted thread?): the profile is written "
              "with its host data and without the GPU records not yet drained");
    return false;
  }
  helper.join();
  MoveGpuRecords(&job->gpu, profile);
  delete job;
  return true;
}

}  // namespace

void NoteSignalFlush() {
  g_signal_deadline_ns.store(SteadyNs() + int64_t{kSignalGpuTryMs} * 1'000'000,
                             std::memory_order_relaxed);
  g_signal_flush.store(true, std::memory_order_release);
}

bool InSignalFlush() { return g_signal_flush.load(std::memory_order_acquire); }


int SignalWaitLeftMs() {
  if (!InSignalFlush()) return -1;
  const int64_t left = g_signal_deadline_ns.load(std::memory_order_relaxed) - SteadyNs();
  return left <= 0 ? 0 : static_cast<int>(left / 1'000'000);
}

bool GpuAbandoned() { return g_gpu_abandoned.load(std::memory_order_acquire); }

bool DrainGpuBounded(Profile* profile, bool forced, bool stop_activity) {
  if (GpuAbandoned()) return false;
  if (!InSignalFlush()) {
    if (stop_activity) SetGpuActivityEnabled(false);
    DrainGpu(profile, forced);
    return true;
  }
  return TryCuptiUntilDeadline(profile, forced, stop_activity);
}

bool DrainGpuForExit(Profile* profile) {
  if (InSignalFlush()) return DrainGpuBounded(profile, /*forced=*/true, /*stop_activity=*/true);
  SetGpuActivityEnabled(false);
  DrainGpuAtExit(profile);  // window_gpu.h: the default flush polled, then one forced
  return true;
}

void SetGpuInfo(const GpuStartResult& gpu, ProfileInfo* info) {
  info->gpu_status = gpu.status;
  info->cupti_library = gpu.cupti_library;
  info->cupti_clock_offset_ns = gpu.clock_offset_ns;
  info->cupti_clock_window_ns = gpu.clock_window_ns;
}

void NoteDumpWritten(const Profile& profile, const std::string& path) {
  const Counters& c = profile.counters;
  // Of this dump's drops, those of threads that found every slot held by a live thread: a larger
  // buffer would not have kept them. Taken here rather than with the dump's own count (a few
  // may fall between the two reads: the message only tells the causes apart).
  static uint64_t no_slot_reported = 0;  // flush_mutex held
  const uint64_t no_slot_total = HostRecordsDroppedNoSlot();
  const uint64_t no_slot = std::min(no_slot_total - no_slot_reported, c.host_events_dropped);
  no_slot_reported = no_slot_total;
  if (c.host_events_dropped != 0) {
    // The count is this dump's own (BuildHostProfile): warn once per process; later windows that
    // lose events say so at info level, and every dump carries its count for the launcher.
    static bool warned = false;  // flush_mutex held
    const std::string threads = "more than " + std::to_string(kMaxHostThreads) +
                                " threads were recording at the same time (each needs a slot of "
                                "its own while it lives; an ended thread's slot is reused)";
    std::string message = std::to_string(c.host_events_dropped) + " NVTX/API events of " + path +
                          " were dropped because ";
    if (no_slot == c.host_events_dropped) {
      message += threads;
    } else {
      message += "the host buffer was full; raise GPROF_HOST_BUFFER_MIB to keep them";
      if (no_slot != 0) {
        message += " (" + std::to_string(no_slot) + " of them because " + threads + ")";
      }
    }
    if (warned) {
      log::Info(message);
    } else {
      log::Warn(message);
      warned = true;
    }
  }
  log::Info("wrote " + path + " (" + std::to_string(profile.ranges.size()) + " ranges, " +
            std::to_string(profile.marks.size()) + " marks, " +
            std::to_string(c.nvtx_unmatched_pops) + " unmatched pops, " +
            std::to_string(c.nvtx_ranges_open_at_end) + " ranges open at end)");
}

namespace {

// Writes `profile` to `path`, creating the directory (again, if it was removed meanwhile) by the
// output rules of model/output_file.h; logs the outcome. Caller holds flush_mutex.
bool WriteProfile(const Profile& profile, const std::string& path) {
  const std::string error = WriteDump(profile, path);
  if (!error.empty()) {
    log::Warn(error + "; no profile was written for pid " + std::to_string(profile.info.pid) +
              " (" + path + "). Set GPROF_OUTPUT_DIR to a writable directory of your own.");
    return false;
  }
  NoteDumpWritten(profile, path);
  return true;
}

// How long the exit flush waits for the window or spill thread: unbounded, or after a signal
// until its deadline (at least 100 ms: a thread that is merely asleep needs a moment to wake).
int ThreadWaitMs() {
  const int left = SignalWaitLeftMs();
  return left < 0 ? -1 : std::max(left, 100);
}

void FlushNow() {
  Runtime& rt = *g_rt;
  // After a signal the window and spill threads are waited for only until the signal's deadline:
  // one stuck inside CUPTI holds flush_mutex too, so nothing more can be written (flush.h).
  if (g_windows_active) {
    // Saves a partly recorded window; takes flush_mutex itself (through WriteWindow). Then the
    // control server (--start-paused) tells the clients still waiting what was saved.
    const bool finished = FinishWindows(NowNs(), ThreadWaitMs());
    StopControlServer();
    if (!finished) return;
  }
  // A segment it is writing ends first (it takes flush_mutex).
  if (!StopSpillThread(ThreadWaitMs())) return;
  std::lock_guard<std::mutex> lock(rt.flush_mutex);
  SetHostCollectionEnabled(false);
  StopCpuSampling();
  if (g_windows_active) {
    StopThreadCpuSampler();  // the last window took its samples
    if (GpuStarted()) StopGpuCollection();
    return;  // windows were written as they completed; there is no whole-run profile
  }
  if (SpillActive()) {  // the whole run, in segments: the last one, then the file in place
    FinishSpill(NowNs());
    StopThreadCpuSampler();
    if (GpuStarted()) StopGpuCollection();
    return;
  }
  Profile profile;
  BuildProfile(rt, &profile, NowNs());
  StopThreadCpuSampler();
  if (GpuStarted()) StopGpuCollection();
  WriteProfile(profile, WholeRunDumpPath(rt.config.output_dir, rt.info));
}

}  // namespace

int FlushState() { return g_flush_state.load(std::memory_order_acquire); }

int CallerTid() { return static_cast<int>(::syscall(SYS_gettid)); }

std::string WriteWindow(const WindowSpan& span, Profile* gpu_pending, bool* held) noexcept {
  try {
    if (!IsInitProcess()) return {};
    Runtime& rt = *g_rt;
    std::lock_guard<std::mutex> lock(rt.flush_mutex);
    Profile profile;
    profile.info = rt.info;
    BuildHostProfile(&profile, span.end_ns, &WindowStartCarry());
    MarkLaunchCalls(&profile, &HandedOverAt);
    const bool gpu = g_gpu_state.load(std::memory_order_acquire) == kGpuStarted;
    if (gpu) {
      SetGpuInfo(rt.gpu, &profile.info);
      AddGpuApiNames(&profile);  // host data first: the calls' names, should CUPTI not answer
      CollectWindowGpu(&profile, gpu_pending);  // window_gpu.h: never a forced flush mid-run
    }
    CutWindow(&profile, span.start_ns, span.end_ns, gpu_pending, /*program_ended=*/span.partial);
    // Steps the program's own torch.profiler had since the previous window: a mark each, at the
    // window's start on its stepping thread, for the closing line (model/program_profiler_steps.h).
    for (const auto& run : span.program_profiler_steps) {
      const uint32_t tid = span.steps.empty() ? 0 : span.steps.front().tid;
      profile.marks.insert(profile.marks.begin(),
                           HostMark{span.start_ns, profile.strings.Intern(
                                                       ProgramProfilerStepsMark(run)),
                                    tid, 0, 0, 0});
    }
    TakeThreadCpu(&profile, /*consume=*/false, span.start_ns);  // a round now: past the end
    // NVTX steps named ProfilerStep#N are already ranges in the profile; other sources get
    // ProfilerStep#N spans so that HTA and the table see iterations.
    const StepSource& step = rt.config.step;
    if (step.kind != StepSource::Kind::kNvtx || step.pattern.rfind("ProfilerStep", 0) != 0) {
      profile.steps = span.steps;
    }
    profile.info.start_ns = span.start_ns;
    profile.info.end_ns = span.end_ns;
    StampClockEnd(&profile.info);
    profile.info.cycle = span.cycle;
    profile.info.first_step = span.first_step;
    profile.info.last_step = span.last_step;
    profile.info.partial_window = span.partial;
    profile.counters.window_events_lost = span.events_lost;
    profile.counters.window_starts_late = span.starts_late;
    const bool control = rt.config.capture.kind == CaptureRange::Kind::kControl;
    const std::string path = WindowDumpPath(rt.config.output_dir, profile.info, control);
    if (!gpu) {
      CheckGpuAgainstCalls(&profile);
      return WriteProfile(profile, path) ? path : std::string();
    }
    // Written now, or held until its late GPU records arrive (the path is the one it gets).
    const WindowSave saved =
        SaveOrHoldWindow(std::move(profile), path, control, gpu_pending, &WriteProfile);
    *held = saved == WindowSave::kHeld;
    return saved == WindowSave::kFailed ? std::string() : path;
  } catch (const std::exception& e) {
    log::Error(std::string("writing a window profile failed: ") + e.what());
    return {};
  } catch (...) {
    log::Error("writing a window profile failed");
    return {};
  }
}

}  // namespace gprof::collector::lifecycle

namespace gprof::collector {

using namespace lifecycle;  // NOLINT: this file's own namespace

void FlushAtExit() noexcept {
  try {
    if (!IsInitProcess()) return;
    const int self = CallerTid();
    int expected = kFlushNone;
    if (!g_flush_state.compare_exchange_strong(expected, self, std::memory_order_acq_rel)) {
      if (expected == self) return;  // re-entered on the flushing thread: waiting would hang
      // Another thread is flushing (e.g. exit() racing a signal): let it finish, bounded.
      for (int i = 0; i < kSignalFlushTimeoutMs / 10 &&
                      g_flush_state.load(std::memory_order_acquire) > 0;
           ++i) {
        ::usleep(10 * 1000);
      }
      return;
    }
    FlushNow();
  } catch (const std::exception& e) {
    log::Error(std::string("writing the profile failed: ") + e.what());
  } catch (...) {
    log::Error("writing the profile failed");
  }
  g_flush_state.store(kFlushDone, std::memory_order_release);
}

}  // namespace gprof::collector
